/** How a background job looks to operators, and its statuses. */
import { z } from "zod";
import { isoDateTime } from "./common.ts";

/**
 * pending → running → done, or back to pending for a retry, or dead after the last attempt;
 * skipped: optional work (AI enrichment) not run because its lane was over its backlog bound
 * when it was asked for (lastError says so); an operator may retry it like a dead one.
 */
export const JOB_STATUSES = ["pending", "running", "done", "dead", "skipped"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const jobViewSchema = z.object({
  id: z.string(),
  kind: z.string(),
  status: z.enum(JOB_STATUSES),
  attempts: z.number().int(),
  maxAttempts: z.number().int(),
  runAt: isoDateTime,
  lastError: z.string().nullable(),
  payload: z.unknown(),
  createdAt: isoDateTime,
  updatedAt: isoDateTime,
  leaseUntil: isoDateTime.nullable(),
});
export type JobView = z.infer<typeof jobViewSchema>;
