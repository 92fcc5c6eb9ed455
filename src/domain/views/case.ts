/** How a case (the reports about one target, reviewed together) and its notes look to clients. */
import { z } from "zod";
import { STATUSES } from "../review/workflow.ts";
import { actorSchema, isoDateTime } from "./common.ts";
import { TEAMS } from "./report.ts";
import { BUCKETS } from "./severity.ts";

/** How the 409 of a case claimed by someone else begins: the dashboard recognises it and offers to take over. */
export const CLAIMED_BY = "This case is claimed by ";

/** The decisions that take a case out of review (the workflow actions of that name). */
export const CASE_DECISION_ACTIONS = ["resolve", "dismiss", "uphold", "overturn", "close"] as const;
export type CaseDecisionAction = (typeof CASE_DECISION_ACTIONS)[number];

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
  /** The review queue the case is in; null for the organization's default queue. */
  queueId: z.string().nullable(),
  /** The team an open case was last escalated to; null once it is decided. */
  escalation: z.object({ team: z.enum(TEAMS), at: isoDateTime }).nullable(),
  /** The last decision that took the case out of review (resolution code or dismissal reason in `code`). */
  decision: z
    .object({ action: z.enum(CASE_DECISION_ACTIONS), code: z.string().nullable(), at: isoDateTime, by: actorSchema })
    .nullable(),
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
