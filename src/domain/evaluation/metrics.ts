/**
 * The figures of an evaluation run (issue 28), computed from its scored items: precision, recall
 * and F1 per category and micro/macro, the multi-label confusion matrix, severity agreement
 * (quadratic-weighted κ), calibration (ECE and the reliability table), latency and tokens; the
 * threshold curve and advice per category; and which items two runs answered differently.
 *
 * Pure: no storage, no I/O, no clock. Every definition is the one documented next to the shapes
 * in src/domain/views/evaluation.ts; this file only computes them.
 *
 * Category names are compared by their key (src/domain/categories/category-key.ts), here rather than
 * only at import: an item's expected labels may come from a CSV written by hand (`spam`, `Spam `)
 * and the model's categories from its answer, and a figure must not depend on which of the two
 * spelled a name how. The figures are keyed by the names as the caller passes them in
 * `categories` (the project's names). Labels or answers naming no category of `categories` count
 * for the verdicts (an expected label is a violation whatever it names) but for no category
 * figure. The import may still store the project's spelling; this makes it not matter.
 */
import { categoryKey } from "../categories/category-key.ts";
import { quadraticWeight, weightedKappa } from "../quality/agreement.ts";
import { SEVERITIES, type Severity } from "../cases/severity.ts";
import type { EvalRunComparison, EvalRunMetrics, Prf, ThresholdAdvice, ThresholdPoint } from "../views/evaluation.ts";

/** One item of a run as the figures see it: its label and the model's answer. */
export interface ScoredItem {
  itemId: string;
  expectedCategories: readonly string[];
  expectedSeverity: Severity | null;
  /** The model's answer; null when the model gave none (error). */
  predicted: { categories: readonly string[]; severity: Severity; confidence: number } | null;
  latencyMs: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
}

/** The row and column of the confusion matrix for "no category". */
export const NO_CATEGORY_LABEL = "(none)";

/** Confidence bins of the reliability table: [0,10), [10,20), …, [90,100] (the last one closed). */
const CALIBRATION_BINS = 10;
const BIN_WIDTH = 100 / CALIBRATION_BINS;

/** Thresholds the curve always has (0, 5, …, 100), the items' confidences are added to them. */
const CURVE_STEP = 5;

type Answered = ScoredItem & { predicted: NonNullable<ScoredItem["predicted"]> };

const answered = (items: readonly ScoredItem[]): Answered[] => items.filter((i): i is Answered => i.predicted !== null);

/** categoryKey, remembered for one computation: a set's labels repeat a few names thousands of times, and the key normalises (NFKC). */
type KeyOf = (name: string) => string;
function keyMemo(): KeyOf {
  const keys = new Map<string, string>();
  return (name) => {
    let key = keys.get(name);
    if (key === undefined) keys.set(name, (key = categoryKey(name)));
    return key;
  };
}

/** The categories of `categories`, first spelling of each key kept, in their order. */
function categoryIndex(categories: readonly string[], keyOf: KeyOf): { names: string[]; byKey: Map<string, number> } {
  const names: string[] = [];
  const byKey = new Map<string, number>();
  for (const name of categories) {
    const key = keyOf(name);
    if (byKey.has(key)) continue;
    byKey.set(key, names.length);
    names.push(name);
  }
  return { names, byKey };
}

/** The indexes (into the category list) of the names that are categories, each once. */
function indexesOf(names: readonly string[], byKey: Map<string, number>, keyOf: KeyOf): Set<number> {
  const out = new Set<number>();
  for (const name of names) {
    const i = byKey.get(keyOf(name));
    if (i !== undefined) out.add(i);
  }
  return out;
}

/** The model's verdict: a violation unless its severity is LOW. */
const predictedViolation = (item: Answered): boolean => item.predicted.severity !== "LOW";
/** The expected verdict: a violation when the label names any category. */
const expectedViolation = (item: ScoredItem): boolean => item.expectedCategories.length > 0;
const verdictRight = (item: Answered): boolean => predictedViolation(item) === expectedViolation(item);

/** The predicted categories: the model's when its verdict is a violation, else none. */
const predictedCategories = (item: Answered): readonly string[] => (predictedViolation(item) ? item.predicted.categories : []);

const ratio = (num: number, den: number): number | null => (den === 0 ? null : num / den);

/**
 * Precision, recall and F1 from counts. Precision is null with nothing flagged, recall with
 * nothing expected. F1 = 2·TP / (2·TP + FP + FN): the harmonic mean of precision and recall
 * whenever both exist and are not both 0, 0 when there was something to find or to flag and
 * no true positive (so a category the model never flags, or only wrongly, pulls the macro F1
 * down instead of dropping out of it), null only when nothing was flagged nor expected.
 */
export function prf(truePositives: number, falsePositives: number, falseNegatives: number): Prf {
  return {
    precision: ratio(truePositives, truePositives + falsePositives),
    recall: ratio(truePositives, truePositives + falseNegatives),
    f1: ratio(2 * truePositives, 2 * truePositives + falsePositives + falseNegatives),
    truePositives,
    falsePositives,
    falseNegatives,
  };
}

/** Unweighted mean of the values that are not null; null when none is. */
function meanOfDefined(values: readonly (number | null)[]): number | null {
  const defined = values.filter((v): v is number => v !== null);
  return defined.length === 0 ? null : defined.reduce((a, b) => a + b, 0) / defined.length;
}

/** Nearest-rank percentile (the smallest value with at least p % of the values at or below it). */
function nearestRank(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p * sorted.length) / 100));
  return sorted[rank - 1]!;
}

function sumOrNull(values: readonly (number | null)[]): number | null {
  const defined = values.filter((v): v is number => v !== null);
  return defined.length === 0 ? null : defined.reduce((a, b) => a + b, 0);
}

/** The bin of a confidence (0–100): ⌊c/10⌋, 100 in the last bin; out-of-range values clamp. */
const binOf = (confidence: number): number => Math.min(CALIBRATION_BINS - 1, Math.max(0, Math.floor(confidence / BIN_WIDTH)));

/** The figures of a run over `categories` (the project's category names). */
export function computeRunMetrics(categories: readonly string[], items: readonly ScoredItem[]): EvalRunMetrics {
  const keyOf = keyMemo();
  const { names, byKey } = categoryIndex(categories, keyOf);
  const done = answered(items);
  const none = names.length;

  const tp = names.map(() => 0);
  const fp = names.map(() => 0);
  const fn = names.map(() => 0);
  const confusion = [...names, NO_CATEGORY_LABEL].map(() => [...names, NO_CATEGORY_LABEL].map(() => 0));
  for (const item of done) {
    const expected = indexesOf(item.expectedCategories, byKey, keyOf);
    const predicted = indexesOf(predictedCategories(item), byKey, keyOf);
    const missed = [...expected].filter((c) => !predicted.has(c)).sort((a, b) => a - b);
    const extra = [...predicted].filter((c) => !expected.has(c)).sort((a, b) => a - b);
    for (const c of expected) {
      if (predicted.has(c)) {
        tp[c]!++;
        confusion[c]![c]!++;
      } else fn[c]!++;
    }
    for (const c of extra) fp[c]!++;
    for (const m of missed) {
      if (extra.length === 0) confusion[m]![none]!++;
      for (const x of extra) confusion[m]![x]!++;
    }
    if (missed.length === 0) for (const x of extra) confusion[none]![x]!++;
    if (expected.size === 0 && predicted.size === 0) confusion[none]![none]!++;
  }
  const perCategoryList = names.map((_, c) => prf(tp[c]!, fp[c]!, fn[c]!));
  const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

  const severityMatrix = SEVERITIES.map(() => SEVERITIES.map(() => 0));
  let severityItems = 0;
  for (const item of done) {
    if (item.expectedSeverity === null) continue;
    severityMatrix[SEVERITIES.indexOf(item.expectedSeverity)]![SEVERITIES.indexOf(item.predicted.severity)]!++;
    severityItems++;
  }

  const bins = Array.from({ length: CALIBRATION_BINS }, () => ({ items: 0, confidence: 0, right: 0 }));
  for (const item of done) {
    const bin = bins[binOf(item.predicted.confidence)]!;
    bin.items++;
    bin.confidence += item.predicted.confidence / 100;
    if (verdictRight(item)) bin.right++;
  }
  const ece =
    done.length === 0
      ? null
      : bins.reduce((s, b) => (b.items === 0 ? s : s + (b.items / done.length) * Math.abs(b.right / b.items - b.confidence / b.items)), 0);

  const latencies = done.flatMap((i) => (i.latencyMs === null ? [] : [i.latencyMs])).sort((a, b) => a - b);

  return {
    items: items.length,
    failedItems: items.length - done.length,
    perCategory: Object.fromEntries(names.map((name, c) => [name, perCategoryList[c]!])),
    micro: prf(sum(tp), sum(fp), sum(fn)),
    macro: {
      precision: meanOfDefined(perCategoryList.map((p) => p.precision)),
      recall: meanOfDefined(perCategoryList.map((p) => p.recall)),
      f1: meanOfDefined(perCategoryList.map((p) => p.f1)),
    },
    confusion: { labels: [...names, NO_CATEGORY_LABEL], counts: confusion },
    severity: { items: severityItems, weightedKappa: weightedKappa(severityMatrix, quadraticWeight), matrix: severityMatrix },
    calibration: {
      ece,
      bins: bins.map((b, i) => ({
        from: i * BIN_WIDTH,
        to: (i + 1) * BIN_WIDTH,
        items: b.items,
        meanConfidence: ratio(b.confidence, b.items),
        accuracy: ratio(b.right, b.items),
      })),
    },
    latencyMs: { median: nearestRank(latencies, 50), p95: nearestRank(latencies, 95) },
    tokens: {
      prompt: sumOrNull(done.map((i) => i.promptTokens)),
      completion: sumOrNull(done.map((i) => i.completionTokens)),
    },
  };
}

/**
 * One category over the answered items, as its curve needs it: the confidences of the items that
 * predict it and expect it (true positives at any threshold up to their confidence), of those
 * that predict it without expecting it (false positives likewise), each sorted, and how many
 * items expect it. Every threshold is then two binary searches, not a pass over the set.
 */
interface CategoryOutcomes {
  expectedConfidences: number[];
  unexpectedConfidences: number[];
  expected: number;
}

function categoryOutcomes(key: string, done: readonly Answered[], keyOf: KeyOf): CategoryOutcomes {
  const outcomes: CategoryOutcomes = { expectedConfidences: [], unexpectedConfidences: [], expected: 0 };
  for (const item of done) {
    const expected = item.expectedCategories.some((c) => keyOf(c) === key);
    if (expected) outcomes.expected++;
    if (predictedCategories(item).some((c) => keyOf(c) === key)) {
      (expected ? outcomes.expectedConfidences : outcomes.unexpectedConfidences).push(item.predicted.confidence);
    }
  }
  outcomes.expectedConfidences.sort((a, b) => a - b);
  outcomes.unexpectedConfidences.sort((a, b) => a - b);
  return outcomes;
}

/** How many of the sorted values are ≥ t. */
function countAtLeast(sorted: readonly number[], t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return sorted.length - lo;
}

/** One category at one threshold: an item is flagged when it predicts the category (severity not LOW) with confidence ≥ threshold. */
function pointAt(outcomes: CategoryOutcomes, threshold: number): ThresholdPoint {
  const truePositives = countAtLeast(outcomes.expectedConfidences, threshold);
  const falsePositives = countAtLeast(outcomes.unexpectedConfidences, threshold);
  const falseNegatives = outcomes.expected - truePositives;
  return {
    threshold,
    flagged: truePositives + falsePositives,
    truePositives,
    falsePositives,
    falseNegatives,
    precision: ratio(truePositives, truePositives + falsePositives),
    recall: ratio(truePositives, truePositives + falseNegatives),
  };
}

/**
 * What would have happened on the set for one category at each threshold: 0, 5, …, 100 and each
 * distinct confidence of the answered items (rounded up to a whole point, as thresholds are
 * whole points and an item at 72.4 is first dropped at 73), sorted, each once.
 */
export function thresholdCurve(category: string, items: readonly ScoredItem[]): ThresholdPoint[] {
  const done = answered(items);
  return curveOf(categoryOutcomes(categoryKey(category), done, keyMemo()), done);
}

/** The curve of one category's outcomes; the answered items' confidences add thresholds. */
function curveOf(outcomes: CategoryOutcomes, done: readonly Answered[]): ThresholdPoint[] {
  const thresholds = new Set<number>();
  for (let t = 0; t <= 100; t += CURVE_STEP) thresholds.add(t);
  for (const item of done) thresholds.add(Math.min(100, Math.max(0, Math.ceil(item.predicted.confidence))));
  return [...thresholds].sort((a, b) => a - b).map((t) => pointAt(outcomes, t));
}

/**
 * Per category: the lowest threshold of its curve whose precision reaches the target (a null
 * precision, nothing flagged, reaches no target), the precision and recall there, the point at
 * the project's current threshold and the whole curve.
 */
export function adviseThresholds(input: {
  runId: string;
  categories: readonly string[];
  items: readonly ScoredItem[];
  precisionTarget: number;
  currentThreshold: number;
}): ThresholdAdvice {
  const keyOf = keyMemo();
  const { names } = categoryIndex(input.categories, keyOf);
  const done = answered(input.items);
  return {
    runId: input.runId,
    precisionTarget: input.precisionTarget,
    currentThreshold: input.currentThreshold,
    categories: names.map((category) => {
      const outcomes = categoryOutcomes(keyOf(category), done, keyOf);
      const curve = curveOf(outcomes, done);
      const advised = curve.find((p) => p.precision !== null && p.precision >= input.precisionTarget) ?? null;
      return {
        category,
        advisedThreshold: advised?.threshold ?? null,
        precisionAtAdvised: advised?.precision ?? null,
        recallAtAdvised: advised?.recall ?? null,
        atCurrent: pointAt(outcomes, input.currentThreshold),
        curve,
      };
    }),
  };
}

/** The model's answer as a comparable value: its categories (keys, sorted, each once) and severity. */
const answerSignature = (item: ScoredItem): string =>
  item.predicted === null
    ? "error"
    : JSON.stringify([[...new Set(item.predicted.categories.map(categoryKey))].sort(), item.predicted.severity]);

/** Whether the verdict was right; an item the model did not answer has no right verdict. */
const rightVerdict = (item: ScoredItem): boolean => item.predicted !== null && verdictRight(item as Answered);

/**
 * Which items two runs answered differently, matched by itemId (items in only one run are left
 * out: a cancelled run has fewer). "fixed": the verdict was wrong in A (or A gave no answer) and
 * is right in B; "broken": the reverse; "changed": the verdict is as right or as wrong in both but
 * the answer differs (its categories, compared by key, its severity, or one run gave none);
 * anything else is unchanged. The changes come in A's order.
 */
export function compareRunItems(
  a: readonly ScoredItem[],
  b: readonly ScoredItem[],
): Pick<EvalRunComparison, "fixed" | "broken" | "otherwiseChanged" | "unchanged"> & {
  changes: { itemId: string; direction: "fixed" | "broken" | "changed" }[];
} {
  const inB = new Map(b.map((item) => [item.itemId, item]));
  const result = { fixed: 0, broken: 0, otherwiseChanged: 0, unchanged: 0, changes: [] as { itemId: string; direction: "fixed" | "broken" | "changed" }[] };
  for (const itemA of a) {
    const itemB = inB.get(itemA.itemId);
    if (itemB === undefined) continue;
    const rightA = rightVerdict(itemA);
    const rightB = rightVerdict(itemB);
    if (!rightA && rightB) {
      result.fixed++;
      result.changes.push({ itemId: itemA.itemId, direction: "fixed" });
    } else if (rightA && !rightB) {
      result.broken++;
      result.changes.push({ itemId: itemA.itemId, direction: "broken" });
    } else if (answerSignature(itemA) !== answerSignature(itemB)) {
      result.otherwiseChanged++;
      result.changes.push({ itemId: itemA.itemId, direction: "changed" });
    } else result.unchanged++;
  }
  return result;
}
