/**
 * When a failed webhook delivery is tried again: the example schedule of the Standard Webhooks
 * specification, each delay counted from the failure of the attempt before, with ±10% jitter.
 *
 * | Attempt | Delay before it | Time since the first attempt (no jitter) |
 * |---------|-----------------|------------------------------------------|
 * | 1       | immediately     | 0:00:00                                  |
 * | 2       | 5 seconds       | 0:00:05                                  |
 * | 3       | 5 minutes       | 0:05:05                                  |
 * | 4       | 30 minutes      | 0:35:05                                  |
 * | 5       | 2 hours         | 2:35:05                                  |
 * | 6       | 5 hours         | 7:35:05                                  |
 * | 7       | 10 hours        | 17:35:05                                 |
 * | 8       | 14 hours        | 31:35:05                                 |
 * | 9       | 20 hours        | 51:35:05                                 |
 * | 10      | 24 hours        | 75:35:05                                 |
 *
 * A `Retry-After` on a 429 or 503 answer replaces the delay (at most 24 hours).
 * FLAGSTAFF_WEBHOOK_RETRY_SCALE multiplies every delay (tests run the schedule in seconds).
 */
const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export const RETRY_SCHEDULE_MS: readonly number[] = [0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR];

/** Attempts per delivery: the first plus one per retry of the schedule. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_SCHEDULE_MS.length;

export const JITTER = 0.1;
export const MAX_RETRY_AFTER_MS = 24 * HOUR;

/**
 * The wait after attempt `failedAttempt` (1-based) failed, or null when it was the last one.
 * Jitter: a random factor in [0.9, 1.1), so retries of many failed messages do not march in step.
 */
export function retryDelayMs(failedAttempt: number, scale = 1, random: () => number = Math.random): number | null {
  const base = RETRY_SCHEDULE_MS[failedAttempt];
  if (base === undefined || failedAttempt < 1) return null;
  const factor = 1 - JITTER + 2 * JITTER * random();
  return Math.max(0, Math.round(base * scale * factor));
}

/**
 * A `Retry-After` header as a delay in milliseconds: delta-seconds or an HTTP date; null when
 * absent or unreadable. Capped at 24 hours, never negative.
 */
export function parseRetryAfter(header: string | null, now: number): number | null {
  if (header === null) return null;
  const value = header.trim();
  if (value === "") return null;
  let ms: number;
  if (/^\d+$/.test(value)) ms = Number(value) * SECOND;
  else {
    const at = Date.parse(value);
    if (Number.isNaN(at)) return null;
    ms = at - now;
  }
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}
