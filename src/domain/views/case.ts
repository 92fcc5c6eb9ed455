/** How a case (the reports about one target, reviewed together) and its notes look to clients. */
import { z } from "zod";
import { STATUSES } from "../workflow.ts";
import { actorSchema, isoDateTime } from "./common.ts";
import { BUCKETS } from "./severity.ts";

export const caseViewSchema = z.object({
  id: z.string(),
  projectId: z.string(),
  status: z.enum(STATUSES),
  bucket: z.enum(BUCKETS),
  contentType: z.string().nullable(),
  contentExternalId: z.string().nullable(),
  subjectIdentityId: z.string().nullable(),
  reportCount: z.number().int(),
  assigneeId: z.string().nullable(),
  assignedAt: isoDateTime.nullable(),
  createdAt: isoDateTime,
  updatedAt: isoDateTime,
  lastReportAt: isoDateTime,
});
export type CaseView = z.infer<typeof caseViewSchema>;

/** A moderator's note on a case. */
export const noteViewSchema = z.object({
  id: z.string(),
  caseId: z.string(),
  author: actorSchema,
  body: z.string(),
  createdAt: isoDateTime,
});
export type NoteView = z.infer<typeof noteViewSchema>;
