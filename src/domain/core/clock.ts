/** Time as the domain sees it. Tests and the scheduler can shift it without touching Date. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock running `offsetMs` ahead of the system clock (FLAGSTAFF_CLOCK_OFFSET_MS, tests only). */
export function offsetClock(offsetMs: number): Clock {
  return offsetMs === 0 ? systemClock : { now: () => Date.now() + offsetMs };
}

/** A day in milliseconds (the windows of counts and reports are whole days of UTC). */
export const DAY_MS = 86_400_000;
/** An hour in milliseconds. */
export const HOUR_MS = 3_600_000;

export const iso = (ms: number): string => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : iso(ms));
/** A time in microseconds (a report's `created_us`) as ISO 8601, to the millisecond. */
export const isoFromUs = (us: number): string => new Date(Math.floor(us / 1000)).toISOString();
