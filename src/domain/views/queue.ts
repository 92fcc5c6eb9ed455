/**
 * The review queue's views: every open case, the unclaimed ones, the caller's, those escalated
 * to each team, and the appealed cases (decided, waiting for their appeal). Pure: the dashboard
 * shows them as tabs with their counts.
 *
 * Below them: the queues themselves (issue 15), their view and input schemas.
 */
import { z } from "zod";
import { isoDateTime } from "./common.ts";
import { ROLES } from "./user.ts";
import { slaTargetMinutesSchema } from "./service-level.ts";
import { ALWAYS_SAMPLE, samplePercentSchema } from "./quality.ts";
import { TEAMS, type Team } from "./report.ts";

export const QUEUE_VIEWS = ["open", "unassigned", "mine", ...TEAMS.map((t) => `escalated_${t}` as const), "appealed"] as const;
export type QueueView = (typeof QUEUE_VIEWS)[number];

/** The team an `escalated_…` view is about, else null. */
export const teamOfView = (view: QueueView): Team | null => {
  const team = view.startsWith("escalated_") ? view.slice("escalated_".length) : null;
  return team !== null && (TEAMS as readonly string[]).includes(team) ? (team as Team) : null;
};

/** Rows per page of the queue. */
export const QUEUE_PAGE_SIZE = 50;

// ---------------------------------------------------------------------------------------------
// Queues (issue 15): the organization's review queues themselves — not the views above, which
// are filters of one queue's page. Every open case is in exactly one queue: `cases.queue_id`
// names it, and null means the organization's default queue (src/domain/review/queues.ts).

/** How a queue orders its open cases: bucket then age (default), rules' priority first, or age alone. */
export const QUEUE_ORDERINGS = ["severity_age", "priority", "age"] as const;
export type QueueOrdering = (typeof QUEUE_ORDERINGS)[number];

export const QUEUE_NAME_MAX = 80;
export const QUEUE_DESCRIPTION_MAX = 500;
export const QUEUE_ACCESS_MAX = 200;

/** Who may work a queue: these users and these roles (both empty = everyone in the organization; admins always). */
export const queueAccessSchema = z.object({
  users: z.array(z.string().min(1).max(100)).max(QUEUE_ACCESS_MAX),
  roles: z.array(z.enum(ROLES)).max(ROLES.length),
});
export type QueueAccess = z.infer<typeof queueAccessSchema>;

export const queueViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  projectId: z.string().nullable(),
  ordering: z.enum(QUEUE_ORDERINGS),
  isDefault: z.boolean(),
  access: queueAccessSchema,
  /** Its open cases now (the default queue counts the cases with no queue). */
  openCases: z.number().int(),
  /** When its oldest open case opened (null: none open). */
  oldestOpenCaseAt: isoDateTime.nullable(),
  /** Service levels (minutes; null: none): time from a case's opening to its first review (a claim or a decision), and to its decision. */
  firstReviewTargetMinutes: z.number().int().nullable(),
  decisionTargetMinutes: z.number().int().nullable(),
  /** Quality review: the share of its moderators' decisions sampled for a blind second review (whole percent), and the decisions always sampled (docs/quality.md). */
  samplePercent: z.number().int(),
  alwaysSample: z.enum(ALWAYS_SAMPLE),
  createdAt: isoDateTime,
  updatedAt: isoDateTime,
}).meta({ id: "Queue" });
export type QueueViewRow = z.infer<typeof queueViewSchema>;

const queueName = z.string().trim().min(1, "name: 1 character at least").max(QUEUE_NAME_MAX);
const queueDescription = z.string().trim().max(QUEUE_DESCRIPTION_MAX).nullable();

export const queueCreateSchema = z.object({
  name: queueName,
  description: queueDescription.optional(),
  projectId: z.string().min(1).max(100).nullable().optional(),
  ordering: z.enum(QUEUE_ORDERINGS).optional(),
  isDefault: z.boolean().optional(),
  access: queueAccessSchema.optional(),
  firstReviewTargetMinutes: slaTargetMinutesSchema.nullable().optional().meta({ description: "Minutes from a case's opening to its first review (claim or decision); null: no target." }),
  decisionTargetMinutes: slaTargetMinutesSchema.nullable().optional().meta({ description: "Minutes from a case's opening to its decision; null: no target." }),
  samplePercent: samplePercentSchema.optional().meta({ description: "Quality review: the whole percent of its moderators' decisions sampled for a blind second review (default 0)." }),
  alwaysSample: z.enum(ALWAYS_SAMPLE).optional().meta({ description: "Quality review: the decisions always sampled, whatever the rate (default none)." }),
});
export type QueueCreateInput = z.infer<typeof queueCreateSchema>;

export const queuePatchSchema = z.object({
  name: queueName.optional(),
  description: queueDescription.optional(),
  projectId: z.string().min(1).max(100).nullable().optional(),
  ordering: z.enum(QUEUE_ORDERINGS).optional(),
  /** Only `true`: another queue becomes default by being made so; the flag moves. */
  isDefault: z.literal(true).optional(),
  access: queueAccessSchema.optional(),
  firstReviewTargetMinutes: slaTargetMinutesSchema.nullable().optional().meta({ description: "Minutes from a case's opening to its first review (claim or decision); null removes the target." }),
  decisionTargetMinutes: slaTargetMinutesSchema.nullable().optional().meta({ description: "Minutes from a case's opening to its decision; null removes the target." }),
  samplePercent: samplePercentSchema.optional().meta({ description: "Quality review: the whole percent of its moderators' decisions sampled for a blind second review." }),
  alwaysSample: z.enum(ALWAYS_SAMPLE).optional().meta({ description: "Quality review: the decisions always sampled, whatever the rate." }),
});
export type QueuePatchInput = z.infer<typeof queuePatchSchema>;
