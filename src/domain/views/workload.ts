/**
 * The team's workload (issue 45, docs/dashboard.md "Team"): per moderator, the cases they hold,
 * their decisions in a period, how long those took and how often a second reviewer agreed; and
 * moving a departing moderator's cases to someone else in one step. Pure: the routes and the
 * dashboard import it. The figures are computed in src/domain/team/workload.ts (arithmetic)
 * from what src/domain/team/team-workload.ts reads.
 */
import { z } from "zod";
import { isoDateTime } from "./common.ts";
import { ROLES } from "./user.ts";

/** The periods the figures are offered over, in days (the first is the default: this week). */
export const WORKLOAD_PERIODS = [7, 30, 90] as const;
export const MAX_WORKLOAD_DAYS = 365;

const teamMemberSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: z.enum(ROLES),
  /** Disabled users are listed while they hold cases or decided in the period (someone who left). */
  disabled: z.boolean(),
});

export const moderatorWorkloadSchema = z.object({
  user: teamMemberSchema,
  /** Open cases they hold now (assigned, claimed, or in review mode until the claim lapses). */
  held: z.number().int(),
  /** Since when they hold the one they have held longest (null: none). */
  heldSince: isoDateTime.nullable(),
  /**
   * Their decisions in the period: resolutions and dismissals that took a case out of review
   * (one per case decided, however many reports it held; a bulk decision undone is none).
   */
  decisions: z.number().int(),
  /**
   * Time to decision: the median, over their decisions in the period on cases they held, of the
   * time from when the case became theirs (their last claim, assignment or review-mode take of
   * it) to the decision; `n` how many it rests on (a decision on a case they did not hold has no
   * start and is left out).
   */
  timeToDecision: z.object({ medianMs: z.number().nullable(), n: z.number().int() }),
  /**
   * Second reviews committed in the period of their sampled decisions (docs/quality.md): how
   * many, how many agreed, the share agreeing, and Cohen's κ between their labels and the
   * second reviewers' (null when not defined: every decision alike).
   */
  agreement: z.object({ n: z.number().int(), agreed: z.number().int(), share: z.number().nullable(), kappa: z.number().nullable() }),
});
export type ModeratorWorkload = z.infer<typeof moderatorWorkloadSchema>;

export const workloadSchema = z
  .object({
    from: isoDateTime,
    to: isoDateTime,
    /** Moderators and admins who may decide, and anyone else who holds a case or decided in the period; by email. */
    moderators: z.array(moderatorWorkloadSchema),
  })
  .meta({ id: "Workload" });
export type Workload = z.infer<typeof workloadSchema>;

/** At most this many cases move in one reassignment (the rest, in order of holding, in the next). */
export const MAX_REASSIGNED = 500;

/** Why a held case does not move to the chosen moderator (it stays where it is), in words. */
export const REASSIGN_REFUSALS = {
  queue: "may not work the case's queue",
} as const satisfies Record<string, string>;
export type ReassignRefusal = keyof typeof REASSIGN_REFUSALS;

/**
 * A bulk reassignment, planned (before the lead confirms) or done: the cases that move (the
 * open cases the moderator holds that the caller may see, oldest hold first, MAX_REASSIGNED at
 * most) and those that stay, with why.
 */
export const reassignmentSchema = z
  .object({
    from: teamMemberSchema,
    /** Who receives them (null: back to the queue, held by nobody). */
    to: teamMemberSchema.nullable(),
    /** The cases moved (or that would move). */
    moved: z.array(z.string()),
    /** The cases the receiver may not work: they stay with `from`. */
    refused: z.array(z.object({ caseId: z.string(), reason: z.enum(Object.keys(REASSIGN_REFUSALS) as [ReassignRefusal]) })),
    /** Cases `from` holds beyond the MAX_REASSIGNED taken in one step (another reassignment takes them). */
    left: z.number().int(),
  })
  .meta({ id: "Reassignment" });
export type Reassignment = z.infer<typeof reassignmentSchema>;
