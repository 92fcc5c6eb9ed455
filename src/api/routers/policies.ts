import { z } from "zod";
import { createPolicyVersion, listPolicies, listPolicyVersions, setPolicyStatus } from "../../domain/analysis/policies.ts";
import { shadowComparison } from "../../domain/analysis/shadow.ts";
import { projectIdSchema } from "../../domain/views/validation.ts";
import { clientInstant, limitSchema } from "../../domain/views/common.ts";
import { categoryPolicyViewSchema, MAX_POLICY_CHARS, POLICY_STATUSES, policyTextSchema, policyVersionViewSchema, shadowComparisonSchema } from "../../domain/views/policy.ts";
import { projectProcedure, router } from "../trpc.ts";

const orgProject = { orgSlug: z.string().min(1).max(64), projectId: projectIdSchema };
const categoryId = z.string().min(1).max(64);
const base = "/organizations/{orgSlug}/projects/{projectId}";
const versions = `${base}/categories/{categoryId}/policy-versions`;
const tags = ["policies"];

/**
 * Category policies and shadow comparisons (docs/ai.md, "Policies and shadow runs"): moderators
 * read them, admins write versions and set their status (secret keys act as admins).
 */
export const policiesRouter = router({
  list: projectProcedure(z.object(orgProject))
    .meta({
      role: "moderator",
      family: "org",
      openapi: {
        method: "GET",
        path: `${base}/policies`,
        summary: "List the categories' policies",
        description: "Every report category of the project with its live and shadow policy versions (null: none) and how many versions it has.",
        tags,
      },
    })
    .output(z.object({ policies: z.array(categoryPolicyViewSchema) }))
    .query(async ({ ctx }) => ({ policies: await listPolicies(ctx.domain, { projectId: ctx.project.id }) })),

  versions: projectProcedure(z.object({ ...orgProject, categoryId }))
    .meta({
      role: "moderator",
      family: "org",
      openapi: { method: "GET", path: versions, summary: "List a category's policy versions", description: "Newest first.", tags },
    })
    .output(z.object({ versions: z.array(policyVersionViewSchema) }))
    .query(async ({ ctx, input }) => ({ versions: await listPolicyVersions(ctx.domain, { projectId: ctx.project.id, categoryId: input.categoryId }) })),

  createVersion: projectProcedure(
    z.object({
      ...orgProject,
      categoryId,
      text: policyTextSchema,
      status: z.enum(POLICY_STATUSES).default("draft").meta({ description: "The new version's status: `draft` (the default), `shadow` or `live`, as setting it afterwards would." }),
    }),
  )
    .meta({
      role: "admin",
      family: "org",
      successStatus: 201,
      openapi: {
        method: "POST",
        path: versions,
        summary: "Write a category's next policy version",
        description: `The category's next version (numbered from 1), whose text never changes afterwards: a definition, what violates and what does not, examples, edge cases; at most ${MAX_POLICY_CHARS.toLocaleString("en-US")} characters.`,
        tags,
      },
    })
    .output(z.object({ version: policyVersionViewSchema }))
    .mutation(async ({ ctx, input }) => ({
      version: await createPolicyVersion(ctx.domain, { projectId: ctx.project.id, categoryId: input.categoryId, text: input.text, status: input.status }),
    })),

  setStatus: projectProcedure(z.object({ ...orgProject, categoryId, version: z.coerce.number().int().min(1).max(1_000_000), status: z.enum(POLICY_STATUSES) }))
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "PATCH",
        path: `${versions}/{version}`,
        summary: "Set a policy version's status",
        description:
          "`live`: the classifier reads it (the live version it replaces is retired); `shadow`: tried on live reports without acting (the shadow version it replaces goes back to draft); `draft` or `retired`: used by nothing. Promoting a shadow version is setting it live.",
        tags,
      },
    })
    .output(z.object({ version: policyVersionViewSchema }))
    .mutation(async ({ ctx, input }) => ({
      version: await setPolicyStatus(ctx.domain, { projectId: ctx.project.id, categoryId: input.categoryId, version: input.version, status: input.status }),
    })),

  shadowComparison: projectProcedure(
    z.object({
      ...orgProject,
      from: clientInstant.optional().meta({ description: "Start of the period (default: 7 days before `to`)." }),
      to: clientInstant.optional().meta({ description: "End of the period, excluded (default: now)." }),
      limit: limitSchema(50).meta({ description: "Most differing pairs answered." }),
    }),
  )
    .meta({
      role: "moderator",
      family: "org",
      openapi: {
        method: "GET",
        path: `${base}/shadow-comparison`,
        summary: "Compare shadow analyses with live ones",
        description:
          "The reports enriched in the period that also have a shadow analysis (of the cases the caller may work): how many pairs, how often the two agree on the verdict (severity not LOW), the categories and the severity, the shadow configurations used, and the pairs that differ, newest first.",
        tags,
      },
    })
    .output(shadowComparisonSchema)
    .query(({ ctx, input }) => shadowComparison(ctx.domain, { projectId: ctx.project.id, from: input.from, to: input.to, limit: input.limit })),
});
