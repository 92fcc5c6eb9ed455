import { z } from "zod";
import { nextCase, skipCase, SKIP_REASON_MAX, stopReviewing } from "../../domain/review/review-mode.ts";
import { router, secretProcedure } from "../trpc.ts";

const id = z.string().min(1).max(64);
/** The queue reviewed (omitted: every queue the caller may work) and the review session the dashboard made. */
const session = { queueId: id.optional(), sessionId: id };

/**
 * Review mode (tRPC only: a dashboard session's work): the next case of a queue, claimed for the
 * caller; a skip with its reason; leaving (src/domain/review/review-mode.ts).
 */
export const reviewRouter = router({
  /** Claims the queue's next case for the caller; `leaving` (the case decided) is released if still open and still the caller's review claim. */
  next: secretProcedure
    .input(z.object({ ...session, leaving: id.optional() }))
    .mutation(({ ctx, input }) => nextCase(ctx.domain, input)),

  /** Skips a case with a reason (audited; not offered again to the caller in this session for a while) and claims the next. */
  skip: secretProcedure
    .input(z.object({ ...session, caseId: id, reason: z.string().trim().min(1, "reason: say why you skip the case").max(SKIP_REASON_MAX) }))
    .mutation(({ ctx, input }) => skipCase(ctx.domain, input)),

  /** Leaves review mode: the caller's review claim on `caseId` is released (if it still holds). */
  stop: secretProcedure.input(z.object({ caseId: id })).mutation(({ ctx, input }) => stopReviewing(ctx.domain, input)),
});
