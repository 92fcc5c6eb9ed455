/**
 * When a failed webhook delivery is tried again: the example schedule of the Standard Webhooks
 * specification read as times since the first attempt, so a message is retried for about a day.
 * Each wait gets ±10% jitter.
 *
 * | Attempt | Time since the first attempt | Wait after the attempt before |
 * |---------|------------------------------|-------------------------------|
 * | 1       | immediately                  | -                             |
 * | 2       | 5 seconds                    | 5 s                           |
 * | 3       | 5 minutes                    | 4 min 55 s                    |
 * | 4       | 30 minutes                   | 25 min                        |
 * | 5       | 2 hours                      | 1 h 30 min                    |
 * | 6       | 5 hours                      | 3 h                           |
 * | 7       | 10 hours                     | 5 h                           |
 * | 8       | 14 hours                     | 4 h                           |
 * | 9       | 20 hours                     | 6 h                           |
 * | 10      | 24 hours                     | 4 h                           |
 *
 * A `Retry-After` on a 429 or 503 answer replaces the wait (at most 24 hours).
 * FLAGSTAFF_WEBHOOK_RETRY_SCALE multiplies every wait (tests run the schedule in seconds).
 */
const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export const RETRY_SCHEDULE_MS: readonly number[] = [0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR];

/** Attempts per delivery: one per time of the schedule. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_SCHEDULE_MS.length;

export const JITTER = 0.1;
export const MAX_RETRY_AFTER_MS = 24 * HOUR;

/**
 * The wait after attempt `failedAttempt` (1-based) failed, or null when it was the last one.
 * Jitter: a random factor in [0.9, 1.1), so retries of many failed messages do not march in step.
 */
export function retryDelayMs(failedAttempt: number, scale = 1, random: () => number = Math.random): number | null {
  const next = RETRY_SCHEDULE_MS[failedAttempt];
  const previous = RETRY_SCHEDULE_MS[failedAttempt - 1];
  if (next === undefined || previous === undefined || failedAttempt < 1) return null;
  const base = next - previous;
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
