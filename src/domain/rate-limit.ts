/**
 * A fixed-window counter per key: at most `limit` hits per window of `windowMs`, the window
 * starting at the first hit. Kept in memory: one Flagstaff process serves an installation,
 * and a restart forgiving the current minute is acceptable.
 */
import { DomainError } from "./errors.ts";

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

// ---------------------------------------------------------------------------------------------
// Report creation

/** What report creation's limit needs of the caller: its API key, when it has one. */
export interface ReportRateInput {
  key: { id: string; reportRateLimit: number | null } | null;
}

export interface ReportAdmission {
  /** The count after this creation, for the RateLimit headers; null when the caller is not limited. */
  decision: RateDecision | null;
  /** Set when the creation is refused: a 429 carrying `retryAfter`. */
  refusal: DomainError | null;
}

/**
 * Counts one report creation. Creations are limited per API key, at the key's own limit or else
 * the installation's (FLAGSTAFF_REPORT_RATE_LIMIT a minute); dashboard users (no key) are not
 * limited. Counted before the report is even read, so a flood of invalid ones is limited too.
 */
export async function admitReportCreation(ctx: { limiter: RateLimiter; defaultLimit: number }, input: ReportRateInput): Promise<ReportAdmission> {
  const key = input.key;
  if (!key) return { decision: null, refusal: null };
  const d = ctx.limiter.hit(key.id, key.reportRateLimit ?? ctx.defaultLimit);
  const refusal = d.allowed
    ? null
    : new DomainError("rate_limited", `Reports were sent too often: at most ${d.limit} a minute per API key. Retry in ${d.resetSeconds} s.`, {
        retryAfter: d.resetSeconds,
      });
  return { decision: d, refusal };
}
