import { z } from "zod";
import { undoBulkDecision } from "../../domain/review/bulk.ts";
import { MAX_SWEEP_CASES, previewSweep, sweepCases, sweepOutcomeSchema, sweepPreviewSchema } from "../../domain/enforcement/sweep.ts";
import { externalIdSchema, projectIdSchema, typeNameSchema } from "../../domain/views/validation.ts";
import { orgProcedure, projectProcedure, router } from "../trpc.ts";

const tags = ["enforcement"];
const id = z.string().min(1).max(64);
const orgSlug = z.string().min(1).max(64);

/**
 * The sweep (src/domain/enforcement/sweep.ts): a suspended or banned account's other open cases resolved
 * with that decision, previewed first, as one bulk decision undone like any other.
 */
export const sweepsRouter = router({
  preview: projectProcedure(z.object({ orgSlug, projectId: projectIdSchema, typeName: typeNameSchema, externalId: externalIdSchema, exceptCaseId: id.optional() }))
    .meta({
      family: "org",
      openapi: {
        method: "GET",
        path: "/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}/sweep",
        summary: "Preview a sweep of an identity's open cases",
        description: `The identity's open cases a sweep would resolve (\`cases\`, oldest first, those the caller may work whose open reports name no other account), the ones it would skip (\`skipped\`: by id only, with why: a queue the caller may not work, another account named), and its suspensions and bans in force that a sweep can follow (\`actions\`). At most ${MAX_SWEEP_CASES} cases are listed: \`capped\` says there are more (\`total\`). \`exceptCaseId\` leaves out the case being decided.`,
        tags,
        errorResponses: { 404: "Organization, project or identity not found" },
      },
    })
    .output(sweepPreviewSchema)
    .query(({ ctx, input }) =>
      previewSweep(ctx.domain, { projectId: ctx.project.id, type: input.typeName, externalId: input.externalId, exceptCaseId: input.exceptCaseId }),
    ),

  commit: projectProcedure(
    z.object({
      orgSlug,
      projectId: projectIdSchema,
      actionId: id,
      caseIds: z.array(id).min(1).max(MAX_SWEEP_CASES, `caseIds: at most ${MAX_SWEEP_CASES} cases in one sweep (preview again for the rest)`),
      note: z.string().max(2000).optional(),
      othersClaims: z.enum(["skip", "take_over"]).default("skip"),
    }),
  )
    .meta({
      family: "org",
      openapi: {
        method: "POST",
        path: "/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/sweep",
        summary: "Resolve an account's other open cases with its suspension or ban",
        description: `Resolves the confirmed \`caseIds\` (from the preview; at most ${MAX_SWEEP_CASES}) with ACCOUNT_LEVEL_ACTION, following the action (a suspension or a ban in force), as one bulk decision: audited (BULK_DECISION_MADE), answered with \`bulkId\` and \`undoUntil\`, undone with POST /organizations/{orgSlug}/bulk-decisions/{bulkId}/undo. Cases no longer open, in a queue the caller may not work, also about another account, or claimed by another user (unless \`othersClaims\` is take_over) are skipped, each named with why. The action itself is not changed.`,
        tags,
        errorResponses: {
          400: "Invalid input, more than the cap of cases, or an action that does not sweep (a warning, mute or content removal)",
          404: "Organization, project or action not found",
          409: "The action is no longer in force (revoked or expired)",
        },
      },
    })
    .output(sweepOutcomeSchema)
    .mutation(({ ctx, input }) =>
      sweepCases(ctx.domain, { projectId: ctx.project.id, actionId: input.actionId, caseIds: input.caseIds, note: input.note, othersClaims: input.othersClaims }),
    ),

  undo: orgProcedure(z.object({ orgSlug, bulkId: id }))
    .meta({
      family: "org",
      openapi: {
        method: "POST",
        path: "/organizations/{orgSlug}/bulk-decisions/{bulkId}/undo",
        summary: "Undo a sweep (a bulk decision of the caller's)",
        description:
          "Puts back what the bulk decision changed, within its window (`undoUntil`): each case and report still as the decision left it returns to its status and records from before (`restored`); the others are named (`notRestored`). Audited (BULK_DECISION_UNDONE).",
        tags,
        errorResponses: {
          403: "The bulk decision is someone else's (or a publishable key)",
          404: "Organization or bulk decision not found",
          409: "Already undone, or the window closed",
        },
      },
    })
    .output(z.object({ restored: z.array(z.string()), notRestored: z.array(z.object({ caseId: z.string(), reason: z.string() })) }))
    .mutation(({ ctx, input }) => undoBulkDecision(ctx.domain, { bulkId: input.bulkId })),
});
