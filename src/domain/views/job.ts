/** How a background job looks to operators, and its statuses. */
import { z } from "zod";
import { isoDateTime } from "./common.ts";

export const JOB_STATUSES = ["pending", "running", "done", "dead"] as const;
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
