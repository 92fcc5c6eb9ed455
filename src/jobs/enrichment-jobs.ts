/**
 * The enrichment catch-up (src/domain/analysis/enrichment-catch-up.ts), on one instance
 * (Store.singleton): skipped enrichments older than FLAGSTAFF_ENRICH_CATCH_UP_MS expire, and
 * while the enrichment lane has room (fewer than a tenth of FLAGSTAFF_ENRICH_BACKLOG_MAX
 * waiting), skipped ones are queued again, most urgent first. A pass every CATCH_UP_TICK_MS;
 * while it is catching up (its last pass queued some), every CATCH_UP_BUSY_MS, so that a lane
 * that drains is topped up again at once.
 */
import type { Store } from "../db/store.ts";
import type { Clock } from "../domain/core/clock.ts";
import { catchUpEnrichments } from "../domain/analysis/enrichment-catch-up.ts";
import { errorFields, log } from "../log.ts";
import type { PeriodicPass } from "./periodic.ts";

/** How often the pass looks while nothing is being caught up. */
export const CATCH_UP_TICK_MS = 2_000;
/** How often while catching up: a count of the lane's waiting jobs, and some queued again when it drained. */
export const CATCH_UP_BUSY_MS = 200;

export function startEnrichmentCatchUp(deps: { store: Store; clock: Clock; config: { enrichBacklogMax: number; enrichCatchUpMs: number } }): PeriodicPass {
  const { store, clock, config } = deps;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  /** Skipped ones are being caught up: none left is known only once a pass with room found none. */
  let catching = false;
  async function pass(): Promise<void> {
    timer = null;
    if (stopped) return;
    try {
      const done = await catchUpEnrichments({ store, db: store.db, clock }, { bound: config.enrichBacklogMax, maxAgeMs: config.enrichCatchUpMs });
      if (done.expired > 0) log.warn("skipped enrichments expired", { count: done.expired, afterMs: config.enrichCatchUpMs });
      if (done.requeued > 0) log.info("skipped enrichments caught up", { count: done.requeued });
      catching = done.requeued > 0 || (catching && !done.roomLeft);
    } catch (err) {
      log.error("catching up skipped enrichments failed", errorFields(err));
    }
    if (!stopped) timer = setTimeout(() => void pass(), catching ? CATCH_UP_BUSY_MS : CATCH_UP_TICK_MS);
  }
  void pass();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
