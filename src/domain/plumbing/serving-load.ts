/**
 * How busy this process is serving requests: requests started per second, counted by the
 * request log (src/api/request-log.ts) for every request. Work that can wait (uploads' bytes:
 * src/domain/attachments/upload-pacing.ts) reads it to step aside while requests are being served.
 */

/** Requests started in the current second and in the one before it (by whole seconds of `now`). */
let second = 0;
let thisSecond = 0;
let lastSecond = 0;

function roll(now: number): void {
  const s = Math.floor(now / 1000);
  if (s === second) return;
  lastSecond = s === second + 1 ? thisSecond : 0;
  thisSecond = 0;
  second = s;
}

/** A request started (any request: an upload counts itself out, see requestsLastSecond). */
export function noteRequestStarted(now: number = Date.now()): void {
  roll(now);
  thisSecond++;
}

/** Requests started over about the last second: the larger of the second before and the one under way. */
export function requestsLastSecond(now: number = Date.now()): number {
  roll(now);
  return Math.max(thisSecond, lastSecond);
}
