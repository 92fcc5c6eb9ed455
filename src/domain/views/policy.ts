/**
 * Category policies (issue 28): the longer text a report category gives the AI classifier (a
 * definition, what violates and what does not, examples, edge cases), in numbered versions whose
 * text never changes once written. A version's status says what it does: `draft` nothing,
 * `shadow` is tried on live reports beside the live one without acting, `live` is what the
 * classifier uses, `retired` was live once. Pure: storage, the routes and the dashboard import it.
 */
import { z } from "zod";
import { actorSchema, isoDateTime } from "./common.ts";
import { SEVERITIES } from "./severity.ts";

export const POLICY_STATUSES = ["draft", "shadow", "live", "retired"] as const;
export type PolicyStatus = (typeof POLICY_STATUSES)[number];

/** Longest policy text: about 1,000 tokens; policy-following models do best with 400–600. */
export const MAX_POLICY_CHARS = 4_000;

export const policyTextSchema = z
  .string()
  .trim()
  .min(1, "text is required")
  .max(MAX_POLICY_CHARS, `text must be at most ${MAX_POLICY_CHARS.toLocaleString("en-US")} characters`);

/** One version of a category's policy. */
export const policyVersionViewSchema = z
  .object({
    categoryId: z.string(),
    category: z.string(),
    version: z.number().int(),
    text: z.string(),
    status: z.enum(POLICY_STATUSES),
    createdBy: actorSchema,
    createdAt: isoDateTime,
    /** When its status last changed (its creation until then). */
    statusChangedAt: isoDateTime,
  })
  .meta({ id: "PolicyVersion" });
export type PolicyVersionView = z.infer<typeof policyVersionViewSchema>;

/** A category with the versions of its policy that act: what the policies page lists. */
export const categoryPolicyViewSchema = z
  .object({
    categoryId: z.string(),
    category: z.string(),
    /** The category's description: what the classifier reads when no version is live. */
    description: z.string().nullable(),
    live: policyVersionViewSchema.nullable(),
    shadow: policyVersionViewSchema.nullable(),
    /** Versions written so far (the next one is this + 1). */
    versions: z.number().int(),
  })
  .meta({ id: "CategoryPolicy" });
export type CategoryPolicyView = z.infer<typeof categoryPolicyViewSchema>;

/**
 * Which policy text each category gives the classifier: `live` (the live version, else the
 * description), `shadow` (the shadow version, else as `live`), `descriptions` (no policy at
 * all), or named versions by category name (the categories not named: as `live`).
 */
export const policySelectionSchema = z.union([
  z.enum(["live", "shadow", "descriptions"]),
  z.record(z.string().min(1).max(100), z.number().int().min(1)),
]);
export type PolicySelection = z.infer<typeof policySelectionSchema>;

/** What one side of a live/shadow pair answered. */
export const pairAnswerSchema = z.object({
  categories: z.array(z.string()),
  severity: z.enum(SEVERITIES),
  confidence: z.number(),
  reasoning: z.string(),
  model: z.string(),
  promptVersion: z.string().nullable(),
  policyVersions: z.record(z.string(), z.number().int()),
});
export type PairAnswer = z.infer<typeof pairAnswerSchema>;

/**
 * Live and shadow analyses of the same reports over a period. The verdict is "violation" when the
 * severity is not LOW; categories agree when both name the same set.
 */
export const shadowComparisonSchema = z
  .object({
    from: isoDateTime,
    to: isoDateTime,
    pairs: z.number().int(),
    /** True when the period held more pairs than one comparison reads: the figures are of the newest ones. */
    truncated: z.boolean(),
    verdict: z.object({ agree: z.number().int(), rate: z.number().nullable(), liveOnly: z.number().int(), shadowOnly: z.number().int() }),
    categories: z.object({ agree: z.number().int(), rate: z.number().nullable() }),
    severity: z.object({ agree: z.number().int(), rate: z.number().nullable() }),
    /** The shadow configurations the pairs were made with (model, prompt and policy versions), each with its count. */
    configurations: z.array(z.object({ model: z.string(), promptVersion: z.string().nullable(), policyVersions: z.record(z.string(), z.number().int()), pairs: z.number().int() })),
    /** The pairs that differ (verdict, categories or severity), newest first, at most `limit`. */
    differences: z.array(
      z.object({
        reportId: z.string(),
        at: isoDateTime,
        live: pairAnswerSchema,
        shadow: pairAnswerSchema,
      }),
    ),
  })
  .meta({ id: "ShadowComparison" });
export type ShadowComparison = z.infer<typeof shadowComparisonSchema>;
