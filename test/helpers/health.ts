import { expect } from "bun:test";

/** How long `/healthz` may take while heavy work runs beside it: no request waits behind that work longer. */
export const HEALTHZ_MS = 250;

/**
 * The longest a `/healthz` may wait beside work that took `workMs` in all: HEALTHZ_MS, or a third
 * of the work on a machine so loaded that the work itself took long. Work that holds the event
 * loop makes one `/healthz` wait about all of it, so this still fails where the work does not
 * give the loop back; a work cut in slices keeps every wait to a slice and the scheduling delays.
 */
export const stallBound = (workMs: number): number => Math.max(HEALTHZ_MS, workMs / 3);

/**
 * Runs `during` while `${url}/healthz` is asked every 20 ms; answers its result, the slowest
 * /healthz (ms), each of which answered 200, and how many were asked. A /healthz still waiting
 * when `during` ends counts too.
 */
export async function whileHealthPolled<T>(url: string, during: () => Promise<T>): Promise<{ result: T; worstMs: number; polls: number }> {
  let done = false;
  let worstMs = 0;
  let polls = 0;
  const poller = (async () => {
    while (!done) {
      const start = performance.now();
      const res = await fetch(`${url}/healthz`);
      await res.text();
      expect(res.status).toBe(200);
      const took = performance.now() - start;
      worstMs = Math.max(worstMs, took);
      polls++;
      if (took < 20) await Bun.sleep(20 - took);
    }
  })();
  let result: T;
  try {
    result = await during();
  } finally {
    done = true;
    await poller;
  }
  return { result, worstMs, polls };
}
