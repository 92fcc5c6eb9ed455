/**
 * Agreement figures (src/domain/quality/agreement.ts) against values computed by hand, the
 * arithmetic written out beside each, and the sampling rule (src/domain/review/quality-sampling.ts).
 */
import { describe, expect, test } from "bun:test";
import { cohensKappa, krippendorffAlpha, percentAgreement } from "../../src/domain/quality/agreement.ts";
import { sampledBy } from "../../src/domain/review/quality-sampling.ts";
import { alwaysSampled, decisionLabel, kindsAlwaysSampled } from "../../src/domain/views/quality.ts";

const pairs = (rows: [string, string, number][]): [string, string][] => rows.flatMap(([a, b, n]) => Array.from({ length: n }, () => [a, b] as [string, string]));

describe("Cohen's κ", () => {
  test("the textbook 2×2 table: 50 items, yes/yes 20, yes/no 5, no/yes 10, no/no 15 → κ = 0.4", () => {
    // pₒ = (20 + 15) / 50 = 0.70
    // A said yes to 20 + 5 = 25 (0.5), B to 20 + 10 = 30 (0.6)
    // pₑ = 0.5·0.6 + 0.5·0.4 = 0.30 + 0.20 = 0.50
    // κ = (0.70 − 0.50) / (1 − 0.50) = 0.20 / 0.50 = 0.4
    const items = pairs([["yes", "yes", 20], ["yes", "no", 5], ["no", "yes", 10], ["no", "no", 15]]);
    expect(percentAgreement(items)).toBeCloseTo(0.7, 12);
    expect(cohensKappa(items)).toBeCloseTo(0.4, 12);
  });

  test("ten decisions of two moderators on three labels → κ = 19/34", () => {
    // item:  1 2 3 4 5 6 7 8 9 10
    // A:     S S S H H H D D D S
    // B:     S S H H H D D D D D      (S spam confirmed, H harassment confirmed, D dismissed)
    // agree on 1, 2, 4, 5, 7, 8, 9: pₒ = 7/10 = 0.7
    // A: S 4, H 3, D 3      B: S 2, H 3, D 5
    // pₑ = (4·2 + 3·3 + 3·5) / 10² = (8 + 9 + 15) / 100 = 0.32
    // κ = (0.70 − 0.32) / (1 − 0.32) = 0.38 / 0.68 = 19/34 ≈ 0.5588
    const items: [string, string][] = [["S", "S"], ["S", "S"], ["S", "H"], ["H", "H"], ["H", "H"], ["H", "D"], ["D", "D"], ["D", "D"], ["D", "D"], ["S", "D"]];
    expect(percentAgreement(items)).toBeCloseTo(0.7, 12);
    expect(cohensKappa(items)).toBeCloseTo(19 / 34, 12);
    // Swapping the raters changes nothing (pₑ is a sum of products).
    expect(cohensKappa(items.map(([a, b]) => [b, a] as [string, string]))).toBeCloseTo(19 / 34, 12);
  });

  test("undefined when both gave one same label to everything (pₑ = 1); none for no items", () => {
    expect(cohensKappa([["S", "S"], ["S", "S"]])).toBeNull();
    expect(cohensKappa([])).toBeNull();
    expect(percentAgreement([])).toBeNull();
  });
});

describe("Krippendorff's α (nominal)", () => {
  test("the same ten decisions as units of two coders → α = 25/44", () => {
    // Each unit has m = 2 values, so each adds 1/(m−1) = 1 to o[c][k] for both ordered pairs.
    // Agreeing units: S 1, 2 → o[S][S] = 4; H 4, 5 → o[H][H] = 4; D 7, 8, 9 → o[D][D] = 6.
    // Disagreeing units: 3 (S,H), 6 (H,D), 10 (S,D): o[S][H] = o[H][S] = o[H][D] = o[D][H] = o[S][D] = o[D][S] = 1.
    // n_S = 4 + 1 + 1 = 6, n_H = 4 + 1 + 1 = 6, n_D = 6 + 1 + 1 = 8, n = 20 (= 2 × 10 units).
    // Σ_{c≠k} o = 6;  Σ_{c≠k} n_c·n_k = n² − Σ n_c² = 400 − (36 + 36 + 64) = 264.
    // α = 1 − (n − 1)·6 / 264 = 1 − 19·6/264 = 1 − 114/264 = 150/264 = 25/44 ≈ 0.5682
    const units = [["S", "S"], ["S", "S"], ["S", "H"], ["H", "H"], ["H", "H"], ["H", "D"], ["D", "D"], ["D", "D"], ["D", "D"], ["S", "D"]];
    expect(krippendorffAlpha(units)).toBeCloseTo(25 / 44, 12);
  });

  test("Krippendorff's own example (2011): 4 observers, 12 units, missing values → α = 0.743", () => {
    // Units (A B C D, "." missing):
    //  1: 1 1 . 1   2: 2 2 3 2   3: 3 3 3 3   4: 3 3 3 3   5: 2 2 2 2   6: 1 2 3 4
    //  7: 4 4 4 4   8: 1 1 2 1   9: 2 2 2 2  10: . 5 5 5  11: . . 1 1  12: . 3 . .
    // Unit 12 has one value: not pairable. A unit of m values adds 1/(m−1) per ordered pair:
    //  unit 1 (m=3): o11 += 3·2·½ = 3.        units 3, 4 (m=4): o33 += 4 each → 8.
    //  unit 2: 2,2,2,3: o22 += 3·2·⅓ = 2, o23 = o32 += 3·⅓ = 1.
    //  unit 5, 9: o22 += 4 each → 8.           unit 7: o44 += 4.
    //  unit 6: 1,2,3,4: each o[c][k] (c≠k) += ⅓.
    //  unit 8: 1,1,1,2: o11 += 2, o12 = o21 += 1.   unit 10 (m=3): o55 += 3.   unit 11 (m=2): o11 += 2.
    // Coincidence matrix (rows c, columns k = 1..5):
    //   1: 7    4/3  1/3  1/3  0
    //   2: 4/3  10   4/3  1/3  0
    //   3: 1/3  4/3  8    1/3  0
    //   4: 1/3  1/3  1/3  4    0
    //   5: 0    0    0    0    3
    // n₁ = 9, n₂ = 13, n₃ = 10, n₄ = 5, n₅ = 3, n = 40.
    // Σ_{c≠k} o = 2·(4/3 + 1/3 + 1/3 + 4/3 + 1/3 + 1/3) = 2·4 = 8.
    // Σ_{c≠k} n_c·n_k = 40² − (81 + 169 + 100 + 25 + 9) = 1600 − 384 = 1216.
    // α = 1 − 39·8/1216 = 1 − 312/1216 = 904/1216 = 113/152 ≈ 0.7434 (the paper: 0.743).
    const units = [["1", "1", "1"], ["2", "2", "3", "2"], ["3", "3", "3", "3"], ["3", "3", "3", "3"], ["2", "2", "2", "2"], ["1", "2", "3", "4"], ["4", "4", "4", "4"], ["1", "1", "2", "1"], ["2", "2", "2", "2"], ["5", "5", "5"], ["1", "1"], ["3"]];
    expect(krippendorffAlpha(units)).toBeCloseTo(113 / 152, 12);
    expect(Number(krippendorffAlpha(units)!.toFixed(3))).toBe(0.743);
  });

  test("undefined when every value is the same, or nothing is pairable", () => {
    expect(krippendorffAlpha([["S", "S"], ["S", "S"]])).toBeNull();
    expect(krippendorffAlpha([["S"], []])).toBeNull();
  });
});

describe("sampling", () => {
  test("the rate: 0 % never, 100 % always, otherwise the same answer for a case every time, near the rate over many", () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `case-${i}`);
    expect(ids.every((id) => !sampledBy(id, 0))).toBe(true);
    expect(ids.every((id) => sampledBy(id, 100))).toBe(true);
    expect(ids.map((id) => sampledBy(id, 30))).toEqual(ids.map((id) => sampledBy(id, 30)));
    const share = ids.filter((id) => sampledBy(id, 30)).length / ids.length;
    expect(share).toBeGreaterThan(0.25);
    expect(share).toBeLessThan(0.35);
    // A case sampled at a rate is sampled at every higher rate.
    expect(ids.every((id) => !sampledBy(id, 10) || sampledBy(id, 50))).toBe(true);
  });

  test("the always-sample conditions read the kinds' record", () => {
    expect(kindsAlwaysSampled("none")).toEqual([]);
    expect(kindsAlwaysSampled("account_stopped")).toEqual(["suspension", "ban"]);
    expect(kindsAlwaysSampled("account_action")).toEqual(["warning", "mute", "suspension", "ban"]);
    expect(kindsAlwaysSampled("any_action")).toEqual(["warning", "mute", "suspension", "ban", "content_removal"]);
    expect(alwaysSampled("account_action", null)).toBe(false);
    expect(alwaysSampled("account_stopped", "ban")).toBe(true);
    expect(alwaysSampled("account_stopped", "warning")).toBe(false);
  });

  test("labels: a resolution's code with its action's kind; every dismissal alike", () => {
    expect(decisionLabel({ action: "resolve", code: "ACCOUNT_LEVEL_ACTION", actionKind: "ban" })).toBe("ACCOUNT_LEVEL_ACTION/ban");
    expect(decisionLabel({ action: "resolve", code: "SPAM_CONFIRMED", actionKind: null })).toBe("SPAM_CONFIRMED");
    expect(decisionLabel({ action: "dismiss", code: "duplicate", actionKind: null })).toBe("DISMISSED");
  });
});
