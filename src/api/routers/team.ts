import { z } from "zod";
import { planReassignment, reassignHeldCases } from "../../domain/review/reassignment.ts";
import { teamWorkload } from "../../domain/team/team-workload.ts";
import { MAX_WORKLOAD_DAYS, reassignmentSchema, WORKLOAD_PERIODS, workloadSchema } from "../../domain/views/workload.ts";
import { orgProcedure, router } from "../trpc.ts";

const orgSlug = z.string().min(1).max(64);
const userId = z.string().min(1).max(64);
const DAY = 86_400_000;
/** Whose cases move, and to whom (null: back to the queue, held by nobody). */
const reassignInput = z.object({ orgSlug, fromUserId: userId, toUserId: userId.nullable() });

/**
 * A lead's view of the team (issue 45, docs/dashboard.md "Team"; tRPC only): each moderator's
 * workload, and moving a moderator's held cases in one step (docs/workflow.md). Admins only, over
 * the cases the caller may work (src/domain/team/team-workload.ts, reassignment.ts).
 */
export const teamRouter = router({
  /** Per moderator: cases held now, decisions in the last `days` days, the median time to decision, agreement with second reviewers. */
  workload: orgProcedure(z.object({ orgSlug, days: z.number().int().min(1).max(MAX_WORKLOAD_DAYS).default(WORKLOAD_PERIODS[0]) }))
    .meta({ role: "admin" })
    .output(workloadSchema)
    .query(({ ctx, input }) => {
      const to = ctx.domain.clock.now();
      return teamWorkload(ctx.domain, { from: to - input.days * DAY, to });
    }),

  /** What reassigning a moderator's held cases would do now (which move, which stay and why); changes nothing. */
  reassignPlan: orgProcedure(reassignInput)
    .meta({ role: "admin" })
    .output(reassignmentSchema)
    .query(({ ctx, input }) => planReassignment(ctx.domain, { fromUserId: input.fromUserId, toUserId: input.toUserId })),

  /** Gives a moderator's held cases to another (or back to the queue) in one step, each audited as one assignment. */
  reassign: orgProcedure(reassignInput)
    .meta({ role: "admin" })
    .output(reassignmentSchema)
    .mutation(({ ctx, input }) => reassignHeldCases(ctx.domain, { fromUserId: input.fromUserId, toUserId: input.toUserId })),
});
