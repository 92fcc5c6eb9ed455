import { expect } from "bun:test";

/** How long `/healthz` may take while heavy work runs beside it: no request waits behind that work longer. */
export const HEALTHZ_MS = 250;

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
