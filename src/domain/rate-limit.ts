/**
 * A fixed-window counter per key: at most `limit` hits per window of `windowMs`, the window
 * starting at the first hit. Kept in memory: one Flagstaff process serves an installation,
 * and a restart forgiving the current minute is acceptable.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number;
}

export interface RateLimiter {
  hit(key: string, limit: number): RateDecision;
}

export function createRateLimiter(now: () => number, windowMs = 60_000): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  let lastSweep = now();

  // Forget finished windows now and then so idle keys do not accumulate.
  function sweep(t: number): void {
    if (t - lastSweep < windowMs) return;
    lastSweep = t;
    for (const [key, w] of windows) if (t - w.start >= windowMs) windows.delete(key);
  }

  return {
    hit(key, limit) {
      const t = now();
      sweep(t);
      let w = windows.get(key);
      if (!w || t - w.start >= windowMs) {
        w = { start: t, count: 0 };
        windows.set(key, w);
      }
      const resetSeconds = Math.max(1, Math.ceil((w.start + windowMs - t) / 1000));
      if (w.count >= limit) return { allowed: false, limit, remaining: 0, resetSeconds };
      w.count++;
      return { allowed: true, limit, remaining: limit - w.count, resetSeconds };
    },
  };
}
