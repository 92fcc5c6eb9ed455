/**
 * Exponential backoff with full jitter: attempt n (1-based) waits a random time between half
 * and all of base·2^(n-1), capped. Jitter keeps many failing jobs from retrying in lockstep.
 */
export function backoffMs(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
