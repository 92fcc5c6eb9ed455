/** How an AI content analysis looks to clients: the analyze route's answer and the stored analyses. */
import { z } from "zod";
import { isoDateTime } from "./common.ts";
import { SEVERITIES } from "./severity.ts";

/** Where an analyzed text came from: the analyze route, a report's enrichment, a linked page. */
export const ANALYSIS_SOURCES = ["content", "enrichment", "link_scan"] as const;
export type AnalysisSource = (typeof ANALYSIS_SOURCES)[number];

/** What an analysis found, as the analyze route answers it. */
export const analysisResultSchema = z.object({ categories: z.array(z.string()), severity: z.enum(SEVERITIES), confidence: z.number(), reasoning: z.string() });
export type AnalysisResult = z.infer<typeof analysisResultSchema>;

/** A stored analysis. */
export const analysisViewSchema = z.object({
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
  /** The prompt template's id (null: an analysis stored before it was recorded). */
  promptVersion: z.string().nullable().meta({ description: "The prompt template the model was sent (its short id); null for analyses stored before it was recorded." }),
  /** Category name → the policy version it used; `{}`: descriptions only; null: not recorded. */
  policyVersions: z
    .record(z.string(), z.number().int())
    .nullable()
    .meta({ description: "The policy version each category used (category name → version); a category absent used its description; null for analyses stored before it was recorded." }),
  /** A report's enrichment that reused an earlier analysis of the same content: which, made when (null: the model answered). */
  reusedFrom: z
    .object({ analysisId: z.string(), analyzedAt: isoDateTime })
    .nullable()
    .optional()
    .meta({
      description:
        "Set on a report's enrichment that reused an earlier analysis of the same content (the same description and target content after normalisation, analysed by the same model, prompt and policy versions within the reuse window) instead of asking the model: that analysis's id and when it was made; its answer fields are that analysis's. Null (or absent) when the model answered for this analysis.",
    }),
  createdAt: isoDateTime,
});
export type AnalysisView = z.infer<typeof analysisViewSchema>;

/**
 * The model's capacity against what arrives, as the overview shows it (src/domain/analysis/capacity.ts;
 * docs/ai.md, "Sizing"). The pace is this instance's measure; the figures of reports are every instance's.
 */
export const aiCapacitySchema = z.object({
  /** Mean time of a model answer lately, in seconds (null before the first). */
  answerSeconds: z.number().nullable(),
  /** Requests the enrichment lane sends the model at once (FLAGSTAFF_AI_CONCURRENCY). */
  slots: z.number().int(),
  /** Model calls waiting for their answer now. */
  inFlight: z.number().int(),
  /** Answers a second the lane gets with every slot busy: slots ÷ answer time (null before the first answer). */
  capacityPerSecond: z.number().nullable(),
  /** Answers a second over the last minute. */
  answersPerSecond: z.number(),
  /** Reports asking for enrichment, per second over the last 5 minutes. */
  arrivalsPerSecond: z.number(),
  /** The reports of the last hour that asked for enrichment (at most the newest 50,000): how many carry an analysis, and of their distinct contents. */
  lastHour: z.object({ reports: z.number().int(), withAnalysis: z.number().int(), contents: z.number().int(), contentsAnalysed: z.number().int(), capped: z.boolean() }),
  /** Skipped enrichments waiting to be caught up, and expired ones (each counted up to 100,000). */
  skipped: z.number().int(),
  expired: z.number().int(),
  /** One line for the overview, or null while nothing was asked. */
  summary: z.string().nullable(),
});
export type AiCapacity = z.infer<typeof aiCapacitySchema>;
