/**
 * Evaluating the AI classifier on a project's own content (issue 28): evaluation sets, runs and
 * the figures of a run, as routes, tRPC, the CLI and the dashboard show them. Pure (storage and
 * the dashboard import it). The definitions of the figures are here, next to their shapes, so
 * that every reader computes them the same way; src/domain/evaluation/metrics.ts computes them.
 *
 * Terms used below:
 * - An item's **expected** answer is its label: categories (empty: no violation) and optionally a
 *   severity. Its **predicted** answer is the model's: categories, severity and confidence.
 * - The model's **verdict** is "violation" when its severity is not LOW (what the automatic
 *   report rule acts on, with the threshold); the expected verdict is "violation" when the
 *   expected categories are not empty.
 * - An item's **predicted categories** are the model's categories when its verdict is
 *   "violation", else none (a LOW answer naming a category is never acted on). Every category
 *   figure (precision, recall, F1, the confusion matrix) uses them.
 * - For one category and a threshold t, an item is **flagged** when the category is among the
 *   predicted ones, the severity is not LOW and the confidence ≥ t (the automatic report rule of
 *   the specification applied to one category). Flagged and expected: a true positive; flagged
 *   and not expected: a false positive; expected and not flagged: a false negative.
 * - Category names compare by their key (src/domain/categories/category-key.ts), expected and
 *   predicted alike; figures are keyed by the project's names. A label or answer naming no
 *   category of the project counts for the verdict but for no category figure.
 * - An item the model could not answer (an error after retries) is **failed**: counted in
 *   `failedItems` and left out of every figure (tokens and latency included).
 */
import { z } from "zod";
import { isoDateTime } from "./common.ts";
import { SEVERITIES } from "./severity.ts";

/** Where a set's items came from. */
export const EVAL_SET_SOURCES = ["decisions", "import"] as const;
export type EvalSetSource = (typeof EVAL_SET_SOURCES)[number];

/** At most this many items in one set (a run of them is one background job each). */
export const EVAL_SET_MAX_ITEMS = 20_000;

/** One labelled item as imported (CSV or JSONL: `text`, `categories`, optional `severity`, `id`). */
export const evalItemInputSchema = z.object({
  /** The caller's id of the item (kept to compare runs and to find it again). */
  id: z.string().min(1).max(200).optional(),
  text: z.string().min(1).max(10_000),
  categories: z.array(z.string().min(1).max(100)).max(20),
  severity: z.enum(SEVERITIES).optional(),
});
export type EvalItemInput = z.infer<typeof evalItemInputSchema>;

/**
 * A set. Versioned: editing a set (adding items from new decisions, importing more) makes a new
 * version; a run names the version it ran, which is frozen from then on, so two runs of one
 * version compare like with like.
 */
export const evalSetViewSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    name: z.string(),
    source: z.enum(EVAL_SET_SOURCES),
    version: z.number().int(),
    /** True once a run used this version: it can no longer change. */
    frozen: z.boolean(),
    items: z.number().int(),
    /** Items per expected category (and `""` for items expecting none). */
    itemsPerCategory: z.record(z.string(), z.number().int()),
    createdAt: isoDateTime,
  })
  .meta({ id: "EvalSet" });
export type EvalSetView = z.infer<typeof evalSetViewSchema>;

export const EVAL_RUN_STATUSES = ["queued", "running", "cancelled", "completed", "failed"] as const;
export type EvalRunStatus = (typeof EVAL_RUN_STATUSES)[number];

/**
 * Precision, recall and F1 of one category (or micro over all), with what they rest on.
 * precision = TP / (TP + FP), null when nothing was flagged; recall = TP / (TP + FN), null when
 * nothing was expected; F1 = 2·TP / (2·TP + FP + FN), which is the harmonic mean of the two when
 * both exist, is 0 when there was something to find or flag and no true positive (a category the
 * model never flags but should have has F1 0, not null, so that it pulls the macro F1 down
 * instead of dropping out of it), and null only when nothing was flagged nor expected.
 */
export const prfSchema = z.object({
  precision: z.number().nullable(),
  recall: z.number().nullable(),
  f1: z.number().nullable(),
  truePositives: z.number().int(),
  falsePositives: z.number().int(),
  falseNegatives: z.number().int(),
});
export type Prf = z.infer<typeof prfSchema>;

/** One bin of the reliability table: items whose confidence (0–100) falls in [from, to); the last bin, [90, 100], is closed. */
export const reliabilityBinSchema = z.object({
  from: z.number(),
  to: z.number(),
  items: z.number().int(),
  /** Mean confidence of its items, 0–1 (null when empty). */
  meanConfidence: z.number().nullable(),
  /** Share of its items whose verdict was right, 0–1 (null when empty). */
  accuracy: z.number().nullable(),
});

/** The figures of a completed (or cancelled: over the items done) run. */
export const evalRunMetricsSchema = z
  .object({
    /** All the run's items (done, for a cancelled run), failed ones included. */
    items: z.number().int(),
    /** Items the model could not answer (errors after retries): excluded from every figure. */
    failedItems: z.number().int(),
    /** Per category at threshold 0 (the model's own answer), keyed by the project's category names. */
    perCategory: z.record(z.string(), prfSchema),
    /** TP, FP and FN summed over the categories, then precision, recall and F1 of the sums. */
    micro: prfSchema,
    /** Each figure the unweighted mean over the categories where it is not null (null when it is null for all). */
    macro: z.object({ precision: z.number().nullable(), recall: z.number().nullable(), f1: z.number().nullable() }),
    /**
     * Multi-label confusion matrix over `labels` (the categories, then "(none)"): rows expected,
     * columns predicted. Per item: each category both expected and predicted adds 1 on the
     * diagonal; each expected category the model missed adds 1 in its row under every predicted
     * category that was not expected (or under "(none)" if there is none); each predicted
     * category not expected, when no expected category was missed, adds 1 in row "(none)"; an
     * item expecting and predicting nothing adds 1 at ("(none)", "(none)").
     */
    confusion: z.object({ labels: z.array(z.string()), counts: z.array(z.array(z.number().int())) }),
    /**
     * Severity: Cohen's κ with quadratic weights (i − j)² / 9 over LOW < MEDIUM < HIGH < CRITICAL,
     * on the answered items with an expected severity, against the model's severity as answered:
     * κ = 1 − Σ w·observed / Σ w·expected, expected = row total × column total / items. Null when
     * undefined (no item, or an expected weighted disagreement of 0: both sides always gave one
     * and the same severity). `matrix`: rows expected, columns predicted, in that order.
     */
    severity: z.object({ items: z.number().int(), weightedKappa: z.number().nullable(), matrix: z.array(z.array(z.number().int())) }),
    /**
     * Calibration of the confidence (confidence/100 as the probability) against the verdict being
     * right: 10 bins of 10 points, [0, 10), …, [90, 100]; ECE = Σ over the bins that have items of
     * (items/N)·|accuracy − meanConfidence|, N the answered items (null when there is none).
     */
    calibration: z.object({ ece: z.number().nullable(), bins: z.array(reliabilityBinSchema) }),
    /** Over the answered items that have one; nearest rank: the value at rank ⌈p/100 · n⌉ of the sorted n (the median of an even count is the lower middle one). */
    latencyMs: z.object({ median: z.number().nullable(), p95: z.number().nullable() }),
    /** Token counts Ollama reported (prompt_eval_count, eval_count), summed; null when it gave none. */
    tokens: z.object({ prompt: z.number().int().nullable(), completion: z.number().int().nullable() }),
  })
  .meta({ id: "EvalRunMetrics" });
export type EvalRunMetrics = z.infer<typeof evalRunMetricsSchema>;

/** A run: a set version against a model, prompt and policy version. */
export const evalRunViewSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    setId: z.string(),
    setVersion: z.number().int(),
    model: z.string(),
    promptVersion: z.string(),
    /** The policy version of each category the run used (category name → version number); empty: the categories' descriptions. */
    policyVersions: z.record(z.string(), z.number().int()),
    status: z.enum(EVAL_RUN_STATUSES),
    /** Why a failed run failed (the model is not installed, the AI backend kept failing); null otherwise. */
    error: z.string().nullable(),
    itemsDone: z.number().int(),
    itemsTotal: z.number().int(),
    startedAt: isoDateTime.nullable(),
    finishedAt: isoDateTime.nullable(),
    createdAt: isoDateTime,
    /** Null until the run completes or is cancelled. */
    metrics: evalRunMetricsSchema.nullable(),
  })
  .meta({ id: "EvalRun" });
export type EvalRunView = z.infer<typeof evalRunViewSchema>;

/** One item's answer in a run. */
export const evalRunItemViewSchema = z.object({
  itemId: z.string(),
  externalId: z.string().nullable(),
  text: z.string(),
  expectedCategories: z.array(z.string()),
  expectedSeverity: z.enum(SEVERITIES).nullable(),
  categories: z.array(z.string()),
  severity: z.enum(SEVERITIES).nullable(),
  confidence: z.number().int().nullable(),
  /** Why the model gave no answer (then categories are empty and severity/confidence null). */
  error: z.string().nullable(),
  latencyMs: z.number().nullable(),
});
export type EvalRunItemView = z.infer<typeof evalRunItemViewSchema>;

/** What would have happened on the set at one threshold, for one category. */
export const thresholdPointSchema = z.object({
  threshold: z.number().int(),
  flagged: z.number().int(),
  truePositives: z.number().int(),
  falsePositives: z.number().int(),
  falseNegatives: z.number().int(),
  precision: z.number().nullable(),
  recall: z.number().nullable(),
});
export type ThresholdPoint = z.infer<typeof thresholdPointSchema>;

/**
 * Threshold advice of one category from one run: the lowest threshold of the curve at which the
 * precision reaches the target (≥; a null precision, nothing flagged, reaches none; null: no
 * threshold does), the precision and recall there, the point at the project's current threshold,
 * and the curve: every threshold from 0 to 100 in steps of 5 plus each distinct confidence of the
 * run's answered items (rounded up to a whole point), sorted, each once. The confidences make
 * every operating point appear (at a threshold equal to an item's confidence that item is the
 * least confident one still flagged), so no better threshold lies between two points of the curve
 * but a lower one with the same outcome may: the advice is the lowest point of the curve.
 */
export const thresholdAdviceSchema = z
  .object({
    runId: z.string(),
    precisionTarget: z.number(),
    currentThreshold: z.number().int(),
    categories: z.array(
      z.object({
        category: z.string(),
        advisedThreshold: z.number().int().nullable(),
        precisionAtAdvised: z.number().nullable(),
        recallAtAdvised: z.number().nullable(),
        atCurrent: thresholdPointSchema,
        curve: z.array(thresholdPointSchema),
      }),
    ),
  })
  .meta({ id: "ThresholdAdvice" });
export type ThresholdAdvice = z.infer<typeof thresholdAdviceSchema>;

/** Two runs of one set version side by side: the items whose answer changed, and which way. */
export const evalRunComparisonSchema = z.object({
  a: evalRunViewSchema,
  b: evalRunViewSchema,
  /**
   * Items matched by itemId (an item in one run only is left out). fixed: the verdict wrong in A
   * (or no answer) and right in B; broken: right in A and wrong (or no answer) in B; otherwise
   * changed: as right or as wrong in both but a different answer (categories compared by key,
   * severity, or an answer in one run only); the confidence alone is no change.
   */
  fixed: z.number().int(),
  broken: z.number().int(),
  otherwiseChanged: z.number().int(),
  unchanged: z.number().int(),
  changes: z.array(
    z.object({
      itemId: z.string(),
      externalId: z.string().nullable(),
      text: z.string(),
      expectedCategories: z.array(z.string()),
      a: z.object({ categories: z.array(z.string()), severity: z.enum(SEVERITIES).nullable(), confidence: z.number().int().nullable() }),
      b: z.object({ categories: z.array(z.string()), severity: z.enum(SEVERITIES).nullable(), confidence: z.number().int().nullable() }),
      direction: z.enum(["fixed", "broken", "changed"]),
    }),
  ),
});
export type EvalRunComparison = z.infer<typeof evalRunComparisonSchema>;

/**
 * The models the AI backend (Ollama) has installed, as evaluation.models answers them: what the
 * "Start a run" dialog offers (a model not installed would only make a failed run).
 */
export const installedModelsSchema = z.object({
  /** The configured model (FLAGSTAFF_AI_MODEL): what a run that names none uses. */
  defaultModel: z.string(),
  /** Whether the configured model is among the installed ones (a name without a tag is its `:latest`). */
  defaultInstalled: z.boolean(),
  /** By name, with their tags ("llama3.2:latest"). */
  models: z.array(
    z.object({
      name: z.string(),
      sizeBytes: z.number().nullable(),
      /** "3.2B", when Ollama says. */
      parameterSize: z.string().nullable(),
      modifiedAt: z.string().nullable(),
    }),
  ),
});
export type InstalledModels = z.infer<typeof installedModelsSchema>;

/** A model's name with its tag: Ollama reads a name without one as `:latest`. */
export const modelWithTag = (name: string): string => (name.includes(":") ? name : `${name}:latest`);
