/**
 * Agreement between moderators (quality review, issue 29): pure arithmetic on labels, no
 * storage. The quality figures (quality-review.ts) feed it the labels of each sampled decision
 * and its blind second review (decisionLabel, views/quality.ts).
 *
 * - percentAgreement: the share of items both gave the same label.
 * - weightedKappa: Cohen's κ of a square matrix with weights for how much each disagreement
 *   counts, the one κ of the project: nominal for moderators' labels (cohensKappa), quadratic
 *   for the classifier's severities against a set's (evaluation/metrics.ts).
 * - cohensKappa: Cohen's κ for one pair of raters, κ = (pₒ − pₑ) / (1 − pₑ), pₑ from each
 *   rater's own label frequencies. Undefined (null) when pₑ = 1: both gave one same label to
 *   every item, so there is no chance agreement to correct.
 * - krippendorffAlpha: Krippendorff's α for nominal data, any number of coders, missing values
 *   allowed (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"): from the
 *   coincidence matrix o (each unit with m ≥ 2 values adds 1/(m − 1) to o[c][k] for every
 *   ordered pair of its values c, k from different coders), nₖ its column sums, n their total:
 *   α = 1 − (n − 1) · Σ_{c≠k} o[c][k] / Σ_{c≠k} n_c·n_k. Undefined (null) when every value is the
 *   same (no expected disagreement) or fewer than two values are pairable.
 *
 * test/domain/agreement.test.ts checks each against figures computed by hand.
 */

/** The share of items (pairs of labels) that agree; null for none. */
export function percentAgreement(items: readonly (readonly [string, string])[]): number | null {
  if (!items.length) return null;
  return items.filter(([a, b]) => a === b).length / items.length;
}

/** How much a disagreement between category i and j of k counts: 0 on the diagonal. */
export type KappaWeight = (i: number, j: number, k: number) => number;
/** Unweighted (nominal) κ: every disagreement counts the same. */
export const nominalWeight: KappaWeight = (i, j) => (i === j ? 0 : 1);
/** Quadratic weights for ordered categories: a disagreement counts by the square of its distance. */
export const quadraticWeight: KappaWeight = (i, j, k) => (k < 2 ? 0 : (i - j) ** 2 / (k - 1) ** 2);

/**
 * Weighted Cohen's κ of a square matrix (rows rater A's category, columns rater B's, cells how
 * many items): κ = 1 − Σ w·observed / Σ w·expected, the expected count of a cell being its row
 * total × column total / n. With nominalWeight this is (pₒ − pₑ) / (1 − pₑ). Null when there are
 * no items or no expected disagreement (both raters gave one same category to every item).
 */
export function weightedKappa(matrix: readonly (readonly number[])[], weight: KappaWeight): number | null {
  const k = matrix.length;
  const rows = matrix.map((row) => row.reduce((a, b) => a + b, 0));
  const n = rows.reduce((a, b) => a + b, 0);
  if (n === 0) return null;
  const cols = matrix.map((_, j) => matrix.reduce((s, row) => s + row[j]!, 0));
  let observed = 0;
  let expected = 0;
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      const w = weight(i, j, k);
      observed += w * matrix[i]![j]!;
      expected += (w * rows[i]! * cols[j]!) / n;
    }
  }
  return expected / n < 1e-12 ? null : 1 - observed / expected;
}

/** Cohen's κ of two raters: each item is [rater A's label, rater B's label]. */
export function cohensKappa(items: readonly (readonly [string, string])[]): number | null {
  const labels = [...new Set(items.flat())];
  const index = new Map(labels.map((l, i) => [l, i]));
  const matrix = labels.map(() => labels.map(() => 0));
  for (const [a, b] of items) matrix[index.get(a)!]![index.get(b)!]!++;
  return weightedKappa(matrix, nominalWeight);
}

/** Krippendorff's α (nominal): each unit is the labels its coders gave it (missing ones left out). */
export function krippendorffAlpha(units: readonly (readonly string[])[]): number | null {
  const o = new Map<string, Map<string, number>>();
  const add = (c: string, k: string, w: number) => {
    const row = o.get(c) ?? new Map<string, number>();
    row.set(k, (row.get(k) ?? 0) + w);
    o.set(c, row);
  };
  for (const u of units) {
    const m = u.length;
    if (m < 2) continue;
    for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) if (i !== j) add(u[i]!, u[j]!, 1 / (m - 1));
  }
  const nc = new Map<string, number>();
  let disagreeing = 0;
  for (const [c, row] of o) {
    for (const [k, w] of row) {
      nc.set(c, (nc.get(c) ?? 0) + w);
      if (c !== k) disagreeing += w;
    }
  }
  const n = [...nc.values()].reduce((s, v) => s + v, 0);
  const expected = n * n - [...nc.values()].reduce((s, v) => s + v * v, 0);
  if (n < 2 || expected < 1e-12) return null;
  return 1 - ((n - 1) * disagreeing) / expected;
}
