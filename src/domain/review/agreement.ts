/**
 * Agreement between moderators (quality review, issue 29): pure arithmetic on labels, no
 * storage. The quality figures (quality-review.ts) feed it the labels of each sampled decision
 * and its blind second review (decisionLabel, views/quality.ts).
 *
 * - percentAgreement: the share of items both gave the same label.
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

/** Cohen's κ of two raters: each item is [rater A's label, rater B's label]. */
export function cohensKappa(items: readonly (readonly [string, string])[]): number | null {
  const n = items.length;
  if (!n) return null;
  const a = new Map<string, number>();
  const b = new Map<string, number>();
  let agreed = 0;
  for (const [x, y] of items) {
    a.set(x, (a.get(x) ?? 0) + 1);
    b.set(y, (b.get(y) ?? 0) + 1);
    if (x === y) agreed++;
  }
  const po = agreed / n;
  let pe = 0;
  for (const [label, count] of a) pe += (count / n) * ((b.get(label) ?? 0) / n);
  if (1 - pe < 1e-12) return null;
  return (po - pe) / (1 - pe);
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
