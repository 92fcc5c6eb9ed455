/**
 * The scheduler of enforcement: it starts scheduled actions when their start comes and ends
 * suspensions and mutes when their end comes. (Enforcement's jobs, webhook deliveries and the
 * strike policy's ladder steps, are entries of JOB_SPECS, src/jobs/job-specs.ts.)
 */
import type { Store } from "../db/store.ts";
import type { Clock } from "../domain/core/clock.ts";
import type { ReadContext } from "../domain/core/context.ts";
import { expireDueActions, nextActionEnd, nextActionStart, startDueActions } from "../domain/enforcement/enforcement.ts";
import { errorFields, log } from "../log.ts";

export interface ExpiryScheduler {
  stop(): void;
}

/**
 * Every FLAGSTAFF_ENFORCEMENT_TICK_MS at the latest — and exactly at the next known start or
 * end — records the scheduled actions whose start has come (their statements of reasons and
 * announcements), then marks the actions whose end has come as expired and announces them (the outbox rows are
 * written in the same transaction, whose commit wakes the job workers). Nothing is lost across
 * restarts: the first run after start catches up on every end that passed while the server was
 * down.
 */
export function startExpiryScheduler(deps: { store: Store; clock: Clock; config: { enforcementTickMs: number } }): ExpiryScheduler {
  const { store, clock, config } = deps;
  const ctx: ReadContext = { store, db: store.db, clock };
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;

  async function tick(): Promise<void> {
    timer = null;
    if (stopped) return;
    try {
      // Starts first: an action whose start and end both passed (downtime) starts, then expires.
      let started = 0;
      for (let n = await startDueActions(ctx); n > 0; n = await startDueActions(ctx)) {
        started += n;
        if (n < 100) break;
      }
      if (started > 0) log.info("scheduled enforcement actions took effect", { count: started });
    } catch (err) {
      log.error("starting scheduled enforcement actions failed", errorFields(err));
    }
    try {
      let marked = 0;
      for (let n = await expireDueActions(ctx); n > 0; n = await expireDueActions(ctx)) {
        marked += n;
        if (n < 100) break;
      }
      if (marked > 0) log.info("enforcement actions expired", { count: marked });
    } catch (err) {
      log.error("expiring enforcement actions failed", errorFields(err));
    }
    await schedule();
  }

  async function schedule(): Promise<void> {
    if (stopped) return;
    let wait = config.enforcementTickMs;
    try {
      for (const next of [await nextActionStart(ctx), await nextActionEnd(ctx)]) {
        if (next !== null) wait = Math.min(wait, next - clock.now());
      }
    } catch (err) {
      log.error("reading the next enforcement end failed", errorFields(err));
    }
    if (stopped) return;
    timer = setTimeout(() => void tick(), Math.max(wait, 10));
  }

  void tick();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
