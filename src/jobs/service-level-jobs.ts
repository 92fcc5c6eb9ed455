/**
 * The service-level pass (src/domain/review/service-levels.ts): every FLAGSTAFF_SLA_TICK_MS,
 * on one instance (Store.singleton), records the breaches that came due and announces each
 * (webhook `queue.sla_breached`, written in the breach's transaction). The first pass after a
 * start catches up on every breach that came due while no instance ran one.
 */
import type { Store } from "../db/store.ts";
import type { Clock } from "../domain/core/clock.ts";
import { recordDueBreaches } from "../domain/review/service-levels.ts";
import { errorFields, log } from "../log.ts";

export interface BreachScheduler {
  stop(): void;
}

export function startBreachScheduler(deps: { store: Store; clock: Clock; config: { slaTickMs: number } }): BreachScheduler {
  const { store, clock, config } = deps;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;

  async function tick(): Promise<void> {
    timer = null;
    if (stopped) return;
    try {
      const recorded = await recordDueBreaches({ store, db: store.db, clock });
      if (recorded > 0) log.info("service-level breaches recorded", { count: recorded });
    } catch (err) {
      log.error("recording service-level breaches failed", errorFields(err));
    }
    if (!stopped) timer = setTimeout(() => void tick(), config.slaTickMs);
  }

  void tick();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
