import { z } from "zod";
import { analyzeContent, recentAnalyses } from "../../domain/analysis.ts";
import { requireProject } from "../../domain/projects.ts";
import { aiSettingsOf, updateAiSettings } from "../../domain/settings.ts";
import { SEVERITIES } from "../../domain/severity.ts";
import { externalIdSchema, projectIdSchema } from "../../domain/validation.ts";
import { isoDateTime } from "../schemas.ts";
import { organizationFor, router, secretProcedure } from "../trpc.ts";

const orgProject = { orgSlug: z.string().min(1).max(64), projectId: projectIdSchema };
const base = "/organizations/{orgSlug}/projects/{projectId}";
const settingsSchema = z.object({ aiEnabled: z.boolean(), aiThreshold: z.number().int(), scanLinks: z.boolean() }).meta({ id: "ProjectSettings" });
const MAX_CONTENT = 10_000;

export const aiRouter = router({
  settings: secretProcedure
    .meta({ family: "org", openapi: { method: "GET", path: `${base}/settings`, summary: "Read a project's AI settings", tags: ["settings"] } })
    .input(z.object(orgProject))
    .output(z.object({ settings: settingsSchema }))
    .query(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      return { settings: aiSettingsOf(await requireProject(ctx.domain, input.projectId)) };
    }),

  updateSettings: secretProcedure
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "PATCH",
        path: `${base}/settings`,
        summary: "Change a project's AI settings",
        description: "aiEnabled, aiThreshold (1–100) and scanLinks; omitted fields keep their value. Turning AI on needs the Pro or Enterprise plan (403 on free).",
        tags: ["settings"],
      },
    })
    .input(
      z.object({
        ...orgProject,
        aiEnabled: z.boolean().optional(),
        aiThreshold: z.number().int().min(1).max(100).optional(),
        scanLinks: z.boolean().optional(),
      }),
    )
    .output(z.object({ settings: settingsSchema }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const { aiEnabled, aiThreshold, scanLinks } = input;
      return { settings: await updateAiSettings(ctx.domain, { projectId: input.projectId, patch: { aiEnabled, aiThreshold, scanLinks } }) };
    }),

  analyze: secretProcedure
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
    .input(
      z.object({
        ...orgProject,
        content: z.string({ error: "content is required" }).min(1, "content is required").max(MAX_CONTENT, `content must be at most ${MAX_CONTENT} characters`),
        externalId: externalIdSchema.optional(),
        contentType: z.string().min(1).max(64).optional(),
      }),
    )
    .output(
      z.object({
        analysis: z.object({ categories: z.array(z.string()), severity: z.enum(SEVERITIES), confidence: z.number(), reasoning: z.string() }),
        reportCreated: z.boolean(),
        reportId: z.string().nullable(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const result = await analyzeContent(
        { ...ctx.domain, config: ctx.config, onAiCall: ctx.onAiCall },
        { projectId: input.projectId, content: input.content, externalId: input.externalId, contentType: input.contentType },
      );
      return { analysis: result.analysis, reportCreated: result.reportCreated, reportId: result.reportId };
    }),

  analyses: secretProcedure
    .meta({
      family: "org",
      openapi: { method: "GET", path: `${base}/content-analyses`, summary: "The 50 most recent content analyses", tags: ["ai"] },
    })
    .input(z.object(orgProject))
    .output(
      z.object({
        analyses: z.array(
          z.object({
            id: z.string(),
            source: z.string(),
            categories: z.array(z.string()),
            severity: z.enum(SEVERITIES),
            confidence: z.number(),
            reasoning: z.string(),
            reportId: z.string().nullable(),
            externalId: z.string().nullable(),
            contentType: z.string().nullable(),
            url: z.string().nullable(),
            sourceText: z.string(),
            model: z.string(),
            createdAt: isoDateTime,
          }),
        ),
      }),
    )
    .query(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const project = await requireProject(ctx.domain, input.projectId);
      return { analyses: await recentAnalyses(ctx.domain, { projectId: project.id }) };
    }),
});
