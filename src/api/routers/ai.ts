import { z } from "zod";
import { identityRefSchema } from "./reports.ts";
import { analyzeContent, recentAnalyses } from "../../domain/analysis/analysis.ts";
import { retryExpiredEnrichments } from "../../domain/analysis/enrichment-catch-up.ts";
import { clientInstant } from "../../domain/views/common.ts";
import { aiSettingsOf, updateAiSettings } from "../../domain/accounts/settings.ts";
import { externalIdSchema, projectIdSchema } from "../../domain/views/validation.ts";
import { analysisResultSchema, analysisViewSchema } from "../../domain/views/analysis.ts";
import { aiSettingsSchema, PRECISION_TARGET_MAX, PRECISION_TARGET_MIN } from "../../domain/views/settings.ts";
import { projectProcedure, router } from "../trpc.ts";

const orgProject = { orgSlug: z.string().min(1).max(64), projectId: projectIdSchema };
const base = "/organizations/{orgSlug}/projects/{projectId}";
const MAX_CONTENT = 10_000;

export const aiRouter = router({
  settings: projectProcedure(z.object(orgProject))
    .meta({ family: "org", openapi: { method: "GET", path: `${base}/settings`, summary: "Read a project's AI settings", tags: ["settings"] } })
    .output(z.object({ settings: aiSettingsSchema }))
    .query(({ ctx }) => ({ settings: aiSettingsOf(ctx.project) })),

  updateSettings: projectProcedure(
    z.object({
      ...orgProject,
      aiEnabled: z.boolean().optional(),
      aiThreshold: z.number().int().min(1).max(100).optional(),
      aiPrecisionTarget: z
        .number()
        .min(PRECISION_TARGET_MIN, `aiPrecisionTarget must be between ${PRECISION_TARGET_MIN} and ${PRECISION_TARGET_MAX}`)
        .max(PRECISION_TARGET_MAX, `aiPrecisionTarget must be between ${PRECISION_TARGET_MIN} and ${PRECISION_TARGET_MAX}`)
        .optional(),
      scanLinks: z.boolean().optional(),
    }),
  )
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "PATCH",
        path: `${base}/settings`,
        summary: "Change a project's AI settings",
        description: "aiEnabled, aiThreshold (1–100), aiPrecisionTarget (0.5–0.999, the precision threshold advice aims at) and scanLinks; omitted fields keep their value. Turning AI on needs the Pro or Enterprise plan (403 on free).",
        tags: ["settings"],
      },
    })
    .output(z.object({ settings: aiSettingsSchema }))
    .mutation(async ({ ctx, input }) => {
      const { aiEnabled, aiThreshold, aiPrecisionTarget, scanLinks } = input;
      return { settings: await updateAiSettings(ctx.domain, { projectId: ctx.project.id, patch: { aiEnabled, aiThreshold, aiPrecisionTarget, scanLinks } }) };
    }),

  analyze: projectProcedure(
    z.object({
      ...orgProject,
      content: z.string({ error: "content is required" }).min(1, "content is required").max(MAX_CONTENT, `content must be at most ${MAX_CONTENT} characters`),
      externalId: externalIdSchema.optional(),
      contentType: z.string().min(1).max(64).optional(),
      author: identityRefSchema.optional().meta({ description: "Who wrote the content: the subject of a report filed for it, or for a link in it (upserted like a report's subject)." }),
    }),
  )
    .meta({
      family: "org",
      openapi: {
        method: "POST",
        path: `${base}/content`,
        summary: "Analyze content",
        description:
          "Classifies a text against the project's report categories. Files an automated report when the confidence reaches the project's threshold and the severity is not LOW. 400: content missing or over 10,000 characters, AI not enabled, no categories; 403: free plan; 503: the AI backend is unavailable.",
        tags: ["ai"],
        errorResponses: { 503: "The AI backend is unavailable or did not answer in time" },
      },
    })
    .output(
      z.object({
        analysis: analysisResultSchema,
        reportCreated: z.boolean(),
        reportId: z.string().nullable(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const result = await analyzeContent(
        { ...ctx.domain, config: ctx.config, onAiCall: ctx.onAiCall },
        { projectId: ctx.project.id, content: input.content, externalId: input.externalId, contentType: input.contentType, author: input.author },
      );
      return { analysis: result.analysis, reportCreated: result.reportCreated, reportId: result.reportId };
    }),

  retryExpiredEnrichments: projectProcedure(
    z.object({
      ...orgProject,
      reason: z.string().min(1).max(100).optional().meta({ description: "Only the reports of this reason (a category name of the project, matched as a report's reason is)." }),
      from: clientInstant.optional().meta({ description: "Only the reports filed at or after this time." }),
      to: clientInstant.optional().meta({ description: "Only the reports filed before this time." }),
    }),
  )
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "POST",
        path: `${base}/enrichments/retry`,
        summary: "Retry expired enrichments in bulk",
        description:
          "Skipped AI enrichments (the enrichment lane was past its backlog bound) are caught up automatically as the model has room, for FLAGSTAFF_ENRICH_CATCH_UP_MS; then they expire. This puts the project's expired enrichments (of `reason`, of reports filed from `from` and before `to`, each optional) back into the catch-up, which takes them most urgent first; `retried` says how many. 400: an unknown reason, `from` not before `to`.",
        tags: ["ai"],
      },
    })
    .output(z.object({ retried: z.number().int() }))
    .mutation(async ({ ctx, input }) => retryExpiredEnrichments(ctx.domain, { projectId: ctx.project.id, reason: input.reason, from: input.from, to: input.to })),

  analyses: projectProcedure(z.object(orgProject))
    .meta({
      family: "org",
      openapi: { method: "GET", path: `${base}/content-analyses`, summary: "The 50 most recent content analyses", tags: ["ai"] },
    })
    .output(
      z.object({ analyses: z.array(analysisViewSchema) }),
    )
    .query(async ({ ctx }) => ({ analyses: await recentAnalyses(ctx.domain, { projectId: ctx.project.id }) })),
});
