/**
 * The figures of an evaluation run (src/domain/evaluation/metrics.ts, defined in
 * src/domain/views/evaluation.ts): a small set whose every figure is computed by hand below, then
 * the edge cases (empty set, every item failed, a category never predicted, κ undefined, ties in
 * the threshold curve) and two runs compared. Pure functions: no server, no database.
 */
import { describe, expect, test } from "bun:test";
import { adviseThresholds, compareRunItems, computeRunMetrics, thresholdCurve, type ScoredItem } from "../../src/domain/evaluation/metrics.ts";
import type { Severity } from "../../src/domain/views/severity.ts";

type Answer = { categories: string[]; severity: Severity; confidence: number };

function item(
  itemId: string,
  expectedCategories: string[],
  expectedSeverity: Severity | null,
  predicted: Answer | null,
  extra: { latencyMs?: number | null; promptTokens?: number | null; completionTokens?: number | null } = {},
): ScoredItem {
  return {
    itemId,
    expectedCategories,
    expectedSeverity,
    predicted,
    latencyMs: extra.latencyMs ?? null,
    promptTokens: extra.promptTokens ?? null,
    completionTokens: extra.completionTokens ?? null,
  };
}

/** The project's categories, spelled as the project spells them. */
const CATEGORIES = ["Spam", "Harassment", "Violence"];

/**
 * The set: 11 items, 10 answered, 1 failed. Expected labels are spelled as a hand-written CSV
 * would (lower case, "SPAM " with a space); the model answers with the project's names.
 *
 * | item | expected             | exp. sev | answer (categories, severity, confidence) | verdict exp/pred | right |
 * |------|----------------------|----------|-------------------------------------------|------------------|-------|
 * | i1   | spam                 | MEDIUM   | Spam, MEDIUM, 100                         | V / V            | yes   |
 * | i2   | spam                 | HIGH     | Spam, HIGH, 85                            | V / V            | yes   |
 * | i3   | spam                 | MEDIUM   | —, LOW, 30                                | V / –            | no    |
 * | i4   | —                    | LOW      | Spam, MEDIUM, 67                          | – / V            | no    |
 * | i5   | harassment           | HIGH     | Harassment, CRITICAL, 90                  | V / V            | yes   |
 * | i6   | harassment, violence | CRITICAL | Harassment, HIGH, 72                      | V / V            | yes   |
 * | i7   | violence             | HIGH     | Harassment + Spam, HIGH, 60               | V / V            | yes   |
 * | i8   | —                    | (none)   | Spam + Harassment, MEDIUM, 55             | – / V            | no    |
 * | i9   | —                    | LOW      | Violence, LOW, 15 (LOW: predicts nothing) | – / –            | yes   |
 * | i10  | spam                 | MEDIUM   | failed (no answer)                        |                  |       |
 * | i11  | SPAM␠                | MEDIUM   | Spam, MEDIUM, 85                          | V / V            | yes   |
 */
const SET: ScoredItem[] = [
  item("i1", ["spam"], "MEDIUM", { categories: ["Spam"], severity: "MEDIUM", confidence: 100 }, { latencyMs: 100, promptTokens: 50, completionTokens: 10 }),
  item("i2", ["spam"], "HIGH", { categories: ["Spam"], severity: "HIGH", confidence: 85 }, { latencyMs: 120, promptTokens: 60, completionTokens: 12 }),
  item("i3", ["spam"], "MEDIUM", { categories: [], severity: "LOW", confidence: 30 }, { latencyMs: 80, promptTokens: 40, completionTokens: 8 }),
  item("i4", [], "LOW", { categories: ["Spam"], severity: "MEDIUM", confidence: 67 }, { latencyMs: 90, promptTokens: 45, completionTokens: 9 }),
  item("i5", ["harassment"], "HIGH", { categories: ["Harassment"], severity: "CRITICAL", confidence: 90 }, { latencyMs: 200, promptTokens: 70, completionTokens: 15 }),
  item("i6", ["harassment", "violence"], "CRITICAL", { categories: ["Harassment"], severity: "HIGH", confidence: 72 }, { latencyMs: 150, promptTokens: 55, completionTokens: 11 }),
  item("i7", ["violence"], "HIGH", { categories: ["Harassment", "Spam"], severity: "HIGH", confidence: 60 }, { latencyMs: 110, promptTokens: 65, completionTokens: 13 }),
  item("i8", [], null, { categories: ["Spam", "Harassment"], severity: "MEDIUM", confidence: 55 }, { latencyMs: 70, promptTokens: 35, completionTokens: 7 }),
  item("i9", [], "LOW", { categories: ["Violence"], severity: "LOW", confidence: 15 }, { latencyMs: null }),
  item("i10", ["spam"], "MEDIUM", null, { latencyMs: 5000, promptTokens: 999, completionTokens: 999 }),
  item("i11", ["SPAM "], "MEDIUM", { categories: ["Spam"], severity: "MEDIUM", confidence: 85 }, { latencyMs: 130, promptTokens: 50, completionTokens: 10 }),
];

describe("the hand-computed set", () => {
  const m = computeRunMetrics(CATEGORIES, SET);

  test("items and failed items: i10 failed and is left out of every figure below", () => {
    expect(m.items).toBe(11);
    expect(m.failedItems).toBe(1);
  });

  test("precision, recall and F1 per category, micro and macro", () => {
    // Predicted categories are the model's when its severity is not LOW (i3, i9 predict none).
    // Spam:       TP i1 i2 i11 = 3; FP i4 i7 i8 = 3; FN i3 = 1 (i10 failed: not counted).
    //             P = 3/6 = 0.5, R = 3/4 = 0.75, F1 = 2·3/(2·3+3+1) = 6/10 = 0.6 (= 2·0.5·0.75/1.25).
    // Harassment: TP i5 i6 = 2; FP i7 i8 = 2; FN 0.
    //             P = 2/4 = 0.5, R = 2/2 = 1, F1 = 4/(4+2+0) = 2/3.
    // Violence:   TP 0; FP 0 (i9 names it, but LOW); FN i6 i7 = 2.
    //             P = null (nothing flagged), R = 0/2 = 0, F1 = 0/(0+0+2) = 0.
    expect(m.perCategory).toEqual({
      Spam: { precision: 0.5, recall: 0.75, f1: 0.6, truePositives: 3, falsePositives: 3, falseNegatives: 1 },
      Harassment: { precision: 0.5, recall: 1, f1: expect.closeTo(2 / 3, 12), truePositives: 2, falsePositives: 2, falseNegatives: 0 },
      Violence: { precision: null, recall: 0, f1: 0, truePositives: 0, falsePositives: 0, falseNegatives: 2 },
    });
    // Micro: TP 3+2+0 = 5, FP 3+2+0 = 5, FN 1+0+2 = 3.
    //        P = 5/10 = 0.5, R = 5/8 = 0.625, F1 = 10/(10+5+3) = 10/18 = 0.5556.
    expect(m.micro.truePositives).toBe(5);
    expect(m.micro.falsePositives).toBe(5);
    expect(m.micro.falseNegatives).toBe(3);
    expect(m.micro.precision).toBeCloseTo(0.5, 12);
    expect(m.micro.recall).toBeCloseTo(0.625, 12);
    expect(m.micro.f1).toBeCloseTo(10 / 18, 12);
    // Macro, unweighted over the categories with a value:
    //        P = (0.5 + 0.5)/2 = 0.5 (Violence's null left out, not counted as 0),
    //        R = (0.75 + 1 + 0)/3 = 0.5833, F1 = (0.6 + 0.6667 + 0)/3 = 0.4222.
    expect(m.macro.precision).toBeCloseTo(0.5, 12);
    expect(m.macro.recall).toBeCloseTo(1.75 / 3, 12);
    expect(m.macro.f1).toBeCloseTo((0.6 + 2 / 3) / 3, 12);
  });

  test("the confusion matrix, rows expected, columns predicted", () => {
    // i1 i2 i11: (Spam, Spam). i3: Spam missed, nothing extra → (Spam, none).
    // i4: nothing expected, Spam extra → (none, Spam). i5: (Harassment, Harassment).
    // i6: (Harassment, Harassment); Violence missed, nothing extra → (Violence, none).
    // i7: Violence missed, Harassment and Spam extra → (Violence, Harassment), (Violence, Spam).
    // i8: nothing missed, Spam and Harassment extra → (none, Spam), (none, Harassment).
    // i9: nothing expected, nothing predicted (LOW) → (none, none).
    expect(m.confusion.labels).toEqual(["Spam", "Harassment", "Violence", "(none)"]);
    expect(m.confusion.counts).toEqual([
      //  S  H  V  none
      [3, 0, 0, 1], // Spam
      [0, 2, 0, 0], // Harassment
      [1, 1, 0, 1], // Violence
      [2, 1, 0, 1], // (none)
    ]);
  });

  test("severity agreement: quadratic-weighted κ", () => {
    // Items with an expected severity and an answer: i1 i2 i3 i4 i5 i6 i7 i9 i11 (N = 9; i8 has
    // none, i10 failed). Observed, rows expected, columns answered, L M H C:
    //   L: i9 (L), i4 (M)            → [1, 1, 0, 0]   row total 2
    //   M: i3 (L), i1 i11 (M)        → [1, 2, 0, 0]   row total 3
    //   H: i2 i7 (H), i5 (C)         → [0, 0, 2, 1]   row total 3
    //   C: i6 (H)                    → [0, 0, 1, 0]   row total 1
    //   column totals                  [2, 3, 3, 1]
    // Weights w = (i−j)²/9: 1/9 one apart, 4/9 two apart, 1 three apart.
    // Σ w·observed = (1 + 1 + 1 + 1)·1/9 = 4/9 (the four cells one apart).
    // Expected = row·column/9, Σ w·row·column:
    //   one apart:   (2·3 + 3·2 + 3·3 + 3·3 + 3·1 + 1·3) = 36 → 36/9 = 4
    //   two apart:   (2·3 + 3·2 + 3·1 + 1·3) = 18 → 18·4/9 = 8
    //   three apart: (2·1 + 1·2) = 4 → 4·1 = 4
    //   Σ w·expected = (4 + 8 + 4)/9 = 16/9.
    // κ = 1 − (4/9)/(16/9) = 1 − 0.25 = 0.75.
    expect(m.severity.items).toBe(9);
    expect(m.severity.matrix).toEqual([
      [1, 1, 0, 0],
      [1, 2, 0, 0],
      [0, 0, 2, 1],
      [0, 0, 1, 0],
    ]);
    expect(m.severity.weightedKappa).toBeCloseTo(0.75, 12);
  });

  test("calibration: the reliability table and ECE, bin by bin", () => {
    // N = 10 answered items. Bins of 10 points, the last one [90, 100] closed (i1 at 100 is in it).
    //   [10,20): i9 .15 right                  → conf .15,  acc 1   → 1/10·|1 − .15|   = .085
    //   [30,40): i3 .30 wrong                  → conf .30,  acc 0   → 1/10·.30         = .030
    //   [50,60): i8 .55 wrong                  → conf .55,  acc 0   → 1/10·.55         = .055
    //   [60,70): i7 .60 right, i4 .67 wrong    → conf .635, acc .5  → 2/10·.135        = .027
    //   [70,80): i6 .72 right                  → conf .72,  acc 1   → 1/10·.28         = .028
    //   [80,90): i2 .85, i11 .85 right         → conf .85,  acc 1   → 2/10·.15         = .030
    //   [90,100]: i5 .90, i1 1.00 right        → conf .95,  acc 1   → 2/10·.05         = .010
    // ECE = .085 + .030 + .055 + .027 + .028 + .030 + .010 = .265
    const expected: [number, number | null, number | null][] = [
      [0, null, null],
      [1, 0.15, 1],
      [0, null, null],
      [1, 0.3, 0],
      [0, null, null],
      [1, 0.55, 0],
      [2, 0.635, 0.5],
      [1, 0.72, 1],
      [2, 0.85, 1],
      [2, 0.95, 1],
    ];
    expect(m.calibration.bins.map((b) => [b.from, b.to])).toEqual(expected.map((_, i) => [i * 10, i * 10 + 10]));
    m.calibration.bins.forEach((bin, i) => {
      const [items, confidence, accuracy] = expected[i]!;
      expect(bin.items).toBe(items);
      if (confidence === null) expect(bin.meanConfidence).toBeNull();
      else expect(bin.meanConfidence).toBeCloseTo(confidence, 12);
      expect(bin.accuracy).toBe(accuracy);
    });
    expect(m.calibration.ece).toBeCloseTo(0.265, 12);
  });

  test("latency (nearest rank) and tokens, failed items left out", () => {
    // Latencies of the answered items that have one (i9 none; i10's 5000 failed): sorted
    // 70 80 90 100 110 120 130 150 200, n = 9. Median: rank ⌈0.5·9⌉ = 5 → 110.
    // p95: rank ⌈0.95·9⌉ = ⌈8.55⌉ = 9 → 200 (a linear interpolation would give 180).
    expect(m.latencyMs).toEqual({ median: 110, p95: 200 });
    // Prompt: 50+60+40+45+70+55+65+35+50 = 470; completion: 10+12+8+9+15+11+13+7+10 = 95 (i10's 999 left out).
    expect(m.tokens).toEqual({ prompt: 470, completion: 95 });
  });

  test("the threshold curve: 0, 5, …, 100 and the confidences not on that grid (67, 72), each once", () => {
    // Spam is flagged on i1 (100, expected), i2 and i11 (85, expected), i4 (67), i7 (60), i8 (55);
    // i3 is expected and never flagged.
    //   t ≤ 55:       flagged 6, TP 3, FP 3, FN 1 → P .5,  R .75
    //   t = 60:       i8 out → flagged 5, TP 3, FP 2 → P .6,  R .75
    //   t = 65, 67:   i7 out → flagged 4, TP 3, FP 1 → P .75, R .75
    //   t = 70 … 85:  i4 out → flagged 3, TP 3, FP 0 → P 1,   R .75
    //   t = 90 … 100: i2, i11 out → flagged 1, TP 1, FN 3 → P 1, R .25
    const curve = thresholdCurve("spam", SET);
    const grid = Array.from({ length: 21 }, (_, i) => i * 5);
    expect(curve.map((p) => p.threshold)).toEqual([...grid, 67, 72].sort((a, b) => a - b));
    const spamAt = (t: number): [number, number, number, number] =>
      t <= 55 ? [6, 3, 3, 1] : t <= 60 ? [5, 3, 2, 1] : t <= 67 ? [4, 3, 1, 1] : t <= 85 ? [3, 3, 0, 1] : [1, 1, 0, 3];
    for (const point of curve) {
      const [flagged, tp, fp, fn] = spamAt(point.threshold);
      expect([point.threshold, point.flagged, point.truePositives, point.falsePositives, point.falseNegatives]).toEqual([point.threshold, flagged, tp, fp, fn]);
      expect(point.precision).toBeCloseTo(tp / flagged, 12);
      expect(point.recall).toBeCloseTo(tp / 4, 12);
    }
  });

  test("threshold advice at a precision target of 0.9, beside the current threshold", () => {
    // Spam: the curve above first reaches P ≥ 0.9 at 70 (P 1), keeping R = 3/4 = 0.75.
    // Harassment, flagged on i5 (90, expected), i6 (72, expected), i7 (60), i8 (55):
    //   t ≤ 55: TP 2, FP 2 → P .5;  t = 60: FP 1 → P .667;  t = 65 … 72: FP 0 → P 1, R 2/2 = 1
    //   → advised 65, P 1, R 1 (t = 75 … 90: R .5; t = 95, 100: nothing flagged, P null).
    // Violence: never flagged, P null at every threshold → no advice.
    // At the current threshold 62 (not on the curve): Spam flags i1 i2 i11 i4 → TP 3, FP 1, FN 1,
    // P .75, R .75; Harassment flags i5 i6 → P 1, R 1; Violence flags nothing, FN 2.
    const advice = adviseThresholds({ runId: "run-1", categories: CATEGORIES, items: SET, precisionTarget: 0.9, currentThreshold: 62 });
    expect(advice.runId).toBe("run-1");
    expect(advice.precisionTarget).toBe(0.9);
    expect(advice.currentThreshold).toBe(62);
    expect(advice.categories.map((c) => [c.category, c.advisedThreshold, c.precisionAtAdvised, c.recallAtAdvised])).toEqual([
      ["Spam", 70, 1, 0.75],
      ["Harassment", 65, 1, 1],
      ["Violence", null, null, null],
    ]);
    expect(advice.categories.map((c) => c.atCurrent)).toEqual([
      { threshold: 62, flagged: 4, truePositives: 3, falsePositives: 1, falseNegatives: 1, precision: 0.75, recall: 0.75 },
      { threshold: 62, flagged: 2, truePositives: 2, falsePositives: 0, falseNegatives: 0, precision: 1, recall: 1 },
      { threshold: 62, flagged: 0, truePositives: 0, falsePositives: 0, falseNegatives: 2, precision: null, recall: 0 },
    ]);
    expect(advice.categories[0]!.curve).toEqual(thresholdCurve("Spam", SET));
    // A target reached exactly counts (≥): Spam's precision is exactly 0.75 at 65.
    const exact = adviseThresholds({ runId: "run-1", categories: ["Spam"], items: SET, precisionTarget: 0.75, currentThreshold: 62 });
    expect(exact.categories[0]!.advisedThreshold).toBe(65);
    expect(exact.categories[0]!.recallAtAdvised).toBe(0.75);
  });
});

describe("edge cases", () => {
  const emptyPrf = { precision: null, recall: null, f1: null, truePositives: 0, falsePositives: 0, falseNegatives: 0 };

  function expectNoFigures(m: ReturnType<typeof computeRunMetrics>): void {
    expect(m.perCategory).toEqual({ Spam: emptyPrf, Harassment: emptyPrf, Violence: emptyPrf });
    expect(m.micro).toEqual(emptyPrf);
    expect(m.macro).toEqual({ precision: null, recall: null, f1: null });
    expect(m.confusion.counts).toEqual([0, 0, 0, 0].map(() => [0, 0, 0, 0]));
    expect(m.severity).toEqual({ items: 0, weightedKappa: null, matrix: [0, 0, 0, 0].map(() => [0, 0, 0, 0]) });
    expect(m.calibration.ece).toBeNull();
    expect(m.calibration.bins.every((b) => b.items === 0 && b.meanConfidence === null && b.accuracy === null)).toBe(true);
    expect(m.latencyMs).toEqual({ median: null, p95: null });
    expect(m.tokens).toEqual({ prompt: null, completion: null });
  }

  test("an empty set: every figure null (never NaN), every count 0", () => {
    const m = computeRunMetrics(CATEGORIES, []);
    expect(m.items).toBe(0);
    expect(m.failedItems).toBe(0);
    expectNoFigures(m);
    const advice = adviseThresholds({ runId: "r", categories: CATEGORIES, items: [], precisionTarget: 0.9, currentThreshold: 70 });
    expect(advice.categories.every((c) => c.advisedThreshold === null && c.curve.length === 21 && c.curve.every((p) => p.precision === null && p.recall === null))).toBe(true);
  });

  test("every item failed: counted, and no figure rests on them (not even their tokens or latency)", () => {
    const failed = [
      item("f1", ["spam"], "HIGH", null, { latencyMs: 900, promptTokens: 10, completionTokens: 2 }),
      item("f2", [], "LOW", null, { latencyMs: 800, promptTokens: 10, completionTokens: 2 }),
    ];
    const m = computeRunMetrics(CATEGORIES, failed);
    expect(m.items).toBe(2);
    expect(m.failedItems).toBe(2);
    expectNoFigures(m);
    expect(thresholdCurve("Spam", failed).every((p) => p.falseNegatives === 0 && p.flagged === 0)).toBe(true);
  });

  test("a category never predicted: precision null, recall 0, F1 0, and macro precision over the others only", () => {
    // a: TP 1 (x1), FP 1 (x2) → P .5, R 1, F1 2/3. b: FN 1 (x3), never flagged → P null, R 0, F1 0.
    // Macro P = .5 (b left out), R = (1 + 0)/2 = .5, F1 = (2/3 + 0)/2 = 1/3.
    const items = [
      item("x1", ["a"], null, { categories: ["a"], severity: "HIGH", confidence: 80 }),
      item("x2", [], null, { categories: ["a"], severity: "MEDIUM", confidence: 40 }),
      item("x3", ["b"], null, { categories: [], severity: "LOW", confidence: 20 }),
    ];
    const m = computeRunMetrics(["a", "b"], items);
    expect(m.perCategory.b).toEqual({ precision: null, recall: 0, f1: 0, truePositives: 0, falsePositives: 0, falseNegatives: 1 });
    expect(m.perCategory.a!.f1).toBeCloseTo(2 / 3, 12);
    expect(m.macro.precision).toBe(0.5);
    expect(m.macro.recall).toBe(0.5);
    expect(m.macro.f1).toBeCloseTo(1 / 3, 12);
    // Only wrong flags and only misses: P = R = 0, F1 0 (not NaN).
    const wrong = computeRunMetrics(["a", "b"], [item("y1", ["b"], null, { categories: ["a"], severity: "HIGH", confidence: 80 }), item("y2", ["a"], null, { categories: ["b"], severity: "HIGH", confidence: 80 })]);
    expect(wrong.perCategory.a).toEqual({ precision: 0, recall: 0, f1: 0, truePositives: 0, falsePositives: 1, falseNegatives: 1 });
  });

  test("κ undefined when both sides always give one and the same severity; 0 when only the model varies", () => {
    const same = [1, 2, 3].map((n) => item(`s${n}`, ["a"], "MEDIUM", { categories: ["a"], severity: "MEDIUM", confidence: 50 }));
    const m = computeRunMetrics(["a"], same);
    expect(m.severity.items).toBe(3);
    expect(m.severity.weightedKappa).toBeNull();
    // Expected all MEDIUM, answered LOW, MEDIUM, HIGH: Σ w·observed = 1/9 + 1/9 = 2/9;
    // expected = row (0,3,0,0) × column (1,1,1,0) / 3 → Σ w·expected = (1/9·1 + 0 + 1/9·1) = 2/9 → κ = 0.
    const varied = (["LOW", "MEDIUM", "HIGH"] as const).map((s, n) => item(`v${n}`, ["a"], "MEDIUM", { categories: ["a"], severity: s, confidence: 50 }));
    expect(computeRunMetrics(["a"], varied).severity.weightedKappa).toBeCloseTo(0, 12);
    // Perfect agreement over different severities: κ = 1.
    const perfect = (["LOW", "HIGH", "CRITICAL"] as const).map((s, n) => item(`p${n}`, ["a"], s, { categories: ["a"], severity: s, confidence: 50 }));
    expect(computeRunMetrics(["a"], perfect).severity.weightedKappa).toBe(1);
  });

  test("ties in the curve: one point per distinct confidence; a null precision reaches no target", () => {
    // Two items at 42, one expected: at t ≤ 42 both are flagged (P .5), from 43 neither is
    // (P null, R 0). 42 appears once. The target 0.9 is never reached: no advice, even though
    // "nothing flagged" has no false positive.
    const items = [
      item("t1", ["a"], null, { categories: ["a"], severity: "HIGH", confidence: 42 }),
      item("t2", [], null, { categories: ["a"], severity: "HIGH", confidence: 42 }),
    ];
    const curve = thresholdCurve("a", items);
    expect(curve.filter((p) => p.threshold === 42)).toHaveLength(1);
    expect(curve).toHaveLength(22);
    const at = (t: number) => curve.find((p) => p.threshold === t)!;
    expect(at(42)).toEqual({ threshold: 42, flagged: 2, truePositives: 1, falsePositives: 1, falseNegatives: 0, precision: 0.5, recall: 1 });
    expect(at(45)).toEqual({ threshold: 45, flagged: 0, truePositives: 0, falsePositives: 0, falseNegatives: 1, precision: null, recall: 0 });
    const advice = adviseThresholds({ runId: "r", categories: ["a"], items, precisionTarget: 0.9, currentThreshold: 70 });
    expect(advice.categories[0]!.advisedThreshold).toBeNull();
  });

  test("latency by nearest rank on an even count: the median is the lower middle value", () => {
    // 10 20 30 40: median rank ⌈0.5·4⌉ = 2 → 20 (not 25); p95 rank ⌈3.8⌉ = 4 → 40.
    const items = [40, 10, 30, 20].map((ms, n) => item(`l${n}`, [], null, { categories: [], severity: "LOW", confidence: 90 }, { latencyMs: ms }));
    expect(computeRunMetrics([], items).latencyMs).toEqual({ median: 20, p95: 40 });
  });

  test("category names compare by key: a project list with two spellings of one name counts it once", () => {
    const m = computeRunMetrics(["Spam", " spam"], [item("k1", ["SPAM"], null, { categories: ["spam"], severity: "HIGH", confidence: 90 })]);
    expect(Object.keys(m.perCategory)).toEqual(["Spam"]);
    expect(m.perCategory.Spam!.truePositives).toBe(1);
  });
});

describe("two runs compared", () => {
  test("fixed, broken, otherwise changed and unchanged, matched by itemId, in A's order", () => {
    const a = SET;
    const byId = new Map(SET.map((i) => [i.itemId, i]));
    const answer = (id: string, predicted: Answer | null): ScoredItem => ({ ...byId.get(id)!, predicted });
    const b: ScoredItem[] = [
      answer("i11", { categories: ["spam"], severity: "MEDIUM", confidence: 85 }), // the same answer spelled otherwise: unchanged
      answer("i1", { categories: [], severity: "LOW", confidence: 80 }), // right → wrong: broken
      answer("i2", { categories: ["Spam"], severity: "HIGH", confidence: 50 }), // only the confidence moved: unchanged
      answer("i3", { categories: ["Spam"], severity: "MEDIUM", confidence: 70 }), // wrong → right: fixed
      answer("i4", { categories: ["Harassment"], severity: "HIGH", confidence: 67 }), // wrong in both, another answer: changed
      answer("i5", { categories: ["Harassment"], severity: "HIGH", confidence: 90 }), // right in both, severity moved: changed
      byId.get("i6")!, // unchanged
      answer("i7", { categories: ["Violence"], severity: "HIGH", confidence: 60 }), // right in both, categories moved: changed
      byId.get("i8")!, // unchanged
      answer("i9", null), // right → no answer: broken
      answer("i10", { categories: ["Spam"], severity: "MEDIUM", confidence: 80 }), // no answer → right: fixed
      item("i12", ["spam"], null, { categories: ["Spam"], severity: "HIGH", confidence: 99 }), // only in B: left out
    ];
    const result = compareRunItems(a, b);
    expect({ fixed: result.fixed, broken: result.broken, otherwiseChanged: result.otherwiseChanged, unchanged: result.unchanged }).toEqual({
      fixed: 2,
      broken: 2,
      otherwiseChanged: 3,
      unchanged: 4,
    });
    expect(result.changes).toEqual([
      { itemId: "i1", direction: "broken" },
      { itemId: "i3", direction: "fixed" },
      { itemId: "i4", direction: "changed" },
      { itemId: "i5", direction: "changed" },
      { itemId: "i7", direction: "changed" },
      { itemId: "i9", direction: "broken" },
      { itemId: "i10", direction: "fixed" },
    ]);
    // Swapping the runs swaps fixed and broken.
    const reversed = compareRunItems(b, a);
    expect([reversed.fixed, reversed.broken, reversed.otherwiseChanged, reversed.unchanged]).toEqual([2, 2, 3, 4]);
    expect(reversed.changes.find((c) => c.itemId === "i1")!.direction).toBe("fixed");
  });
});
