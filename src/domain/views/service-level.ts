/**
 * Service levels (issue 27): the targets a queue sets for its cases and a project for its
 * appeals, the breaches recorded when an open case or a pending appeal passes one, and how the
 * dashboard and webhooks show them. Pure (storage and the dashboard import it).
 *
 * - first_review: a case opened this long ago is still unclaimed and undecided (a claim, or a
 *   decision without one, is its first review; a claim released unreviewed counts as none).
 * - decision: a case opened this long ago is still undecided.
 * - appeal: an appeal filed this long ago is still pending (DSA Art. 20 asks appeals to be
 *   handled in a timely manner); the target is the project's (DSA settings).
 */
import { z } from "zod";
import { isoDateTime } from "./common.ts";

export const SLA_TARGETS = ["first_review", "decision", "appeal"] as const;
export type SlaTarget = (typeof SLA_TARGETS)[number];

/** A target in minutes: one minute to 90 days. */
export const SLA_TARGET_MAX_MINUTES = 90 * 24 * 60;
export const slaTargetMinutesSchema = z
  .number()
  .int("a whole number of minutes")
  .min(1, "at least 1 minute")
  .max(SLA_TARGET_MAX_MINUTES, `at most ${SLA_TARGET_MAX_MINUTES} minutes (90 days)`);

/**
 * The `data` of a `queue.sla_breached` webhook event: one per case and target it passed, or per
 * appeal past its project's target, sent once (docs/enforcement.md).
 */
export const slaBreachedEventSchema = z
  .object({
    target: z.enum(SLA_TARGETS),
    projectId: z.string(),
    /** The queue whose target the case passed; null for an appeal. */
    queueId: z.string().nullable(),
    caseId: z.string().nullable(),
    /** The appeal past its target (target `appeal`), else null. */
    appealId: z.string().nullable(),
    targetMinutes: z.number().int(),
    /** When the case opened or the appeal was filed. */
    startedAt: isoDateTime,
    dueAt: isoDateTime,
    breachedAt: isoDateTime,
  })
  .meta({ id: "SlaBreachedEvent" });
export type SlaBreachedEvent = z.infer<typeof slaBreachedEventSchema>;

/** One queue's service level now, as the dashboard's tile and the queue pages show it. */
export const queueServiceLevelSchema = z.object({
  queueId: z.string(),
  name: z.string(),
  firstReviewTargetMinutes: z.number().int().nullable(),
  decisionTargetMinutes: z.number().int().nullable(),
  openCases: z.number().int(),
  /** The oldest open case of the queue (null: none open). */
  oldestCase: z.object({ id: z.string(), openedAt: isoDateTime }).nullable(),
  /** Open cases past each target now. */
  overdue: z.object({ firstReview: z.number().int(), decision: z.number().int() }),
  /** Breaches recorded in the last `days` days, each case counted once per target. */
  breaches: z.object({ firstReview: z.number().int(), decision: z.number().int() }),
});
export type QueueServiceLevel = z.infer<typeof queueServiceLevelSchema>;

export const serviceLevelsSchema = z.object({
  /** The server's time of the answer: the ages above are measured from it (not the reader's clock). */
  at: isoDateTime,
  days: z.number().int(),
  queues: z.array(queueServiceLevelSchema),
  appeals: z.object({
    /** Pending appeals, and those past their project's target now. */
    pending: z.number().int(),
    overdue: z.number().int(),
    oldestPendingAt: isoDateTime.nullable(),
    breaches: z.number().int(),
  }),
});
export type ServiceLevels = z.infer<typeof serviceLevelsSchema>;
