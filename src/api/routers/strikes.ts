import { z } from "zod";
import { strikePreview } from "../../domain/enforcement/strike-preview.ts";
import { getStrikePolicy, identityStrikes, setStrikePolicy } from "../../domain/strikes/strikes.ts";
import { externalIdSchema, projectIdSchema, typeNameSchema } from "../../domain/views/validation.ts";
import { joinWords } from "../../domain/views/enforcement.ts";
import { RESOLUTION_CODES } from "../../domain/views/report.ts";
import { checkLadder, identityStrikesSchema, LADDER_KINDS, strikePolicyFields, strikePolicySchema, strikePreviewSchema } from "../../domain/views/strikes.ts";
import { projectProcedure, router, secretProcedure } from "../trpc.ts";

const tags = ["enforcement"];
const orgSlug = z.string().min(1).max(64);
const policyPath = "/organizations/{orgSlug}/projects/{projectId}/strike-policy";

/** Strikes (src/domain/strikes/strikes.ts): a project's strike policy, and an identity's strikes. */
export const strikesRouter = router({
  policy: projectProcedure(z.object({ orgSlug, projectId: projectIdSchema }))
    .meta({
      family: "org",
      openapi: {
        method: "GET",
        path: policyPath,
        summary: "Get a project's strike policy",
        description: "Which resolutions add strikes and how many (by reason or severity), how long they count (`windowDays`), and the ladder of actions taken at thresholds. A project that saved none has the defaults, off.",
        tags,
        errorResponses: { 404: "Organization or project not found" },
      },
    })
    .output(z.object({ policy: strikePolicySchema }))
    .query(async ({ ctx }) => ({ policy: await getStrikePolicy(ctx.domain, { projectId: ctx.project.id }) })),

  setPolicy: projectProcedure(z.strictObject({ orgSlug, projectId: projectIdSchema, ...strikePolicyFields }).superRefine(checkLadder))
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "PUT",
        path: policyPath,
        summary: "Replace a project's strike policy",
        description: `Fields left out take their defaults. The ladder's thresholds must increase, its kinds act on the account (${joinWords(LADDER_KINDS, "or")}), a suspension needs \`durationSeconds\` and a kind without an end takes none; \`strikes.byReason\` names the project's report categories. 400 names the field, and any key the policy does not know (at any depth). Applies to decisions from now on: strikes already added keep their count and expiry.`,
        tags,
        errorResponses: { 400: "Invalid policy", 403: "Not an admin (or a publishable key)", 404: "Organization or project not found" },
      },
    })
    .output(z.object({ policy: strikePolicySchema }))
    .mutation(async ({ ctx, input }) => {
      const { orgSlug: _o, projectId: _p, ...policy } = input;
      return { policy: await setStrikePolicy(ctx.domain, { projectId: ctx.project.id, policy }) };
    }),

  ofIdentity: projectProcedure(z.object({ orgSlug, projectId: projectIdSchema, typeName: typeNameSchema, externalId: externalIdSchema }))
    .meta({
      family: "org",
      openapi: {
        method: "GET",
        path: "/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}/strikes",
        summary: "An identity's strikes",
        description:
          "`total`: its strikes in force (the sum of their counts: what the ladder and the rule field `subject.strikes` read); `nextStep`: the ladder's next step above it; `strikes`: newest first, at most 100, in force, expired and removed, of the cases the caller may work.",
        tags,
        errorResponses: { 404: "Organization, project or identity not found" },
      },
    })
    .output(identityStrikesSchema)
    .query(({ ctx, input }) => identityStrikes(ctx.domain, { projectId: ctx.project.id, type: input.typeName, externalId: input.externalId, project: ctx.project })),

  /**
   * What resolving the case with `resolutionCode` now would add to its subject's strikes and the
   * ladder step it would reach, or why it adds none (the resolve dialog; tRPC only). Read-only.
   */
  preview: secretProcedure
    .input(z.object({ caseId: z.string().min(1).max(64), resolutionCode: z.enum(RESOLUTION_CODES) }))
    .output(strikePreviewSchema)
    .query(({ ctx, input }) => strikePreview(ctx.domain, { caseId: input.caseId, code: input.resolutionCode })),
});
