import { z } from "zod";
import {
  acknowledgeDisagreement,
  agreementFigures,
  blindCase,
  listDisagreements,
  myQualityTasks,
  nextQualityTask,
  submitSecondReview,
} from "../../domain/quality/quality-review.ts";
import { acknowledgeInputSchema, agreementSchema, blindCaseSchema, qualityReviewSchema, qualityTaskSchema, secondDecisionInputSchema } from "../../domain/views/quality.ts";
import { orgProcedure, router } from "../trpc.ts";

const orgSlug = z.string().min(1).max(64);
const reviewId = z.string().min(1).max(64);
const DAY = 86_400_000;

/**
 * Quality review (src/domain/quality/quality-review.ts, docs/quality.md): a moderator's blind
 * second reviews, the leads' disagreements and the agreement figures. Sampling is set on the
 * queues (`samplePercent`, `alwaysSample`). Only the figures are a REST route.
 */
export const qualityRouter = router({
  /** The caller's next second review (taking the oldest offered when none is theirs yet); null when none waits. */
  next: orgProcedure(z.object({ orgSlug }))
    .meta({ role: "moderator" })
    .output(z.object({ task: qualityTaskSchema.nullable() }))
    .mutation(async ({ ctx }) => ({ task: await nextQualityTask(ctx.domain) })),

  /** The caller's second reviews not committed yet, and how many more are offered to them. */
  mine: orgProcedure(z.object({ orgSlug }))
    .meta({ role: "moderator" })
    .output(z.object({ tasks: z.array(qualityTaskSchema), offered: z.number().int() }))
    .query(({ ctx }) => myQualityTasks(ctx.domain)),

  /** The case of one of the caller's tasks as its first moderator saw it, without their decision. */
  blind: orgProcedure(z.object({ orgSlug, reviewId }))
    .meta({ role: "moderator" })
    .output(blindCaseSchema)
    .query(({ ctx, input }) => blindCase(ctx.domain, { reviewId: input.reviewId })),

  /** Commits the caller's blind decision; answers both decisions. Changes nothing on the case. */
  submit: orgProcedure(z.object({ orgSlug, reviewId, decision: secondDecisionInputSchema, note: z.string().max(2000).optional() }))
    .meta({ role: "moderator" })
    .output(z.object({ review: qualityReviewSchema }))
    .mutation(async ({ ctx, input }) => ({ review: await submitSecondReview(ctx.domain, { reviewId: input.reviewId, decision: input.decision, note: input.note }) })),

  /** Second reviews that disagree with their first decision, side by side (leads). */
  disagreements: orgProcedure(z.object({ orgSlug, acknowledged: z.boolean().optional(), limit: z.number().int().min(1).max(200).optional() }))
    .meta({ role: "admin" })
    .output(z.object({ reviews: z.array(qualityReviewSchema) }))
    .query(async ({ ctx, input }) => ({ reviews: await listDisagreements(ctx.domain, { acknowledged: input.acknowledged, limit: input.limit }) })),

  /** A lead acknowledges a disagreement, optionally reopening a dismissed case (through the workflow engine); audited. */
  acknowledge: orgProcedure(acknowledgeInputSchema.extend({ orgSlug }))
    .meta({ role: "admin" })
    .output(z.object({ review: qualityReviewSchema }))
    .mutation(async ({ ctx, input }) => ({ review: await acknowledgeDisagreement(ctx.domain, { reviewId: input.reviewId, note: input.note, reopen: input.reopen }) })),

  agreement: orgProcedure(z.object({ orgSlug, days: z.coerce.number().int().min(1).max(365).default(30) }))
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "GET",
        path: "/organizations/{orgSlug}/quality/agreement",
        summary: "Agreement between moderators (quality review)",
        description:
          "Over the second reviews committed in the last `days` days (default 30) of cases the caller may work: overall, per queue and per report category, the number of items, the share on which both decisions agree and Krippendorff's α (nominal); per pair of moderators, Cohen's κ. A coefficient is null when it is not defined on its items (every decision alike). Decisions compare by their resolution code with the kind of action applied, every dismissal alike (docs/quality.md).",
        tags: ["quality"],
      },
    })
    .output(agreementSchema)
    .query(({ ctx, input }) => {
      const to = ctx.domain.clock.now();
      return agreementFigures(ctx.domain, { from: to - input.days * DAY, to });
    }),
});
