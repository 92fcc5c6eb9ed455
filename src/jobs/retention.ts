/**
 * The retention pass (src/domain/plumbing/retention.ts) on a timer: at start and every
 * FLAGSTAFF_RETENTION_TICK_MS, on one instance (Store.singleton). Each batch is its own short
 * transaction, with a pause between two, so intake never waits behind a long delete.
 */
import type { Config } from "../config.ts";
import type { Store } from "../db/store.ts";
import type { Clock } from "../domain/core/clock.ts";
import { runRetention } from "../domain/plumbing/retention.ts";
import { errorFields, log } from "../log.ts";
import { jobRetention } from "./job-specs.ts";

export interface RetentionScheduler {
  stop(): Promise<void>;
}

/** Most batches per log and pass: a pass that cannot finish hands the rest to the next. */
const MAX_BATCHES = 200;
/** Pause between two batches: waiting writes run first. */
const PAUSE_MS = 20;

export function startRetention(deps: { store: Store; clock: Clock; config: Config }): RetentionScheduler {
  const { store, clock } = deps;
  const { tickMs, batch, ...configured } = deps.config.retention;
  // Finished jobs: each kind for as long as its entry of JOB_SPECS says.
  const policy = { ...configured, jobKinds: jobRetention(deps.config) };
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  let pass: Promise<void> | null = null;

  async function tick(): Promise<void> {
    timer = null;
    if (stopped) return;
    try {
      const deleted = await runRetention(
        { store, db: store.db, clock },
        { policy, batch, maxBatches: MAX_BATCHES, pause: () => (stopped ? Promise.reject(new Error("stopped")) : Bun.sleep(PAUSE_MS)) },
      );
      if (Object.values(deleted).some((n) => n > 0)) log.info("retention deleted old rows", deleted);
    } catch (err) {
      if (!stopped) log.error("retention pass failed", errorFields(err));
    }
    if (!stopped) timer = setTimeout(() => (pass = tick()), tickMs);
  }

  pass = tick();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await pass?.catch(() => {});
    },
  };
}
