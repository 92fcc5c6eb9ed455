/**
 * The service-level pass (src/domain/service-levels/service-levels.ts): every FLAGSTAFF_SLA_TICK_MS,
 * on one instance (Store.singleton), records the breaches that came due and announces each
 * (webhook `queue.sla_breached`, written in the breach's transaction). The first pass after a
 * start catches up on every breach that came due while no instance ran one.
 */
import type { Store } from "../db/store.ts";
import type { Clock } from "../domain/core/clock.ts";
import { recordDueBreaches } from "../domain/service-levels/service-levels.ts";
import { errorFields, log } from "../log.ts";
import { startPeriodicPass, type PeriodicPass } from "./periodic.ts";

export type BreachScheduler = PeriodicPass;

export function startBreachScheduler(deps: { store: Store; clock: Clock; config: { slaTickMs: number } }): BreachScheduler {
  const { store, clock, config } = deps;
  return startPeriodicPass(async () => {
    try {
      const recorded = await recordDueBreaches({ store, db: store.db, clock });
      if (recorded > 0) log.info("service-level breaches recorded", { count: recorded });
    } catch (err) {
      log.error("recording service-level breaches failed", errorFields(err));
    }
  }, config.slaTickMs);
}
