/**
 * The enrichment catch-up (src/domain/analysis/enrichment-catch-up.ts): every
 * CATCH_UP_TICK_MS, on one instance (Store.singleton), skipped enrichments older than
 * FLAGSTAFF_ENRICH_CATCH_UP_MS expire, and while the enrichment lane has room (fewer than a tenth
 * of FLAGSTAFF_ENRICH_BACKLOG_MAX waiting), skipped ones are queued again, most urgent first.
 */
import type { Store } from "../db/store.ts";
import type { Clock } from "../domain/core/clock.ts";
import { catchUpEnrichments } from "../domain/analysis/enrichment-catch-up.ts";
import { errorFields, log } from "../log.ts";
import { startPeriodicPass, type PeriodicPass } from "./periodic.ts";

/** How often the pass looks: a lane with room is topped up within a couple of seconds. */
export const CATCH_UP_TICK_MS = 2_000;

export function startEnrichmentCatchUp(deps: { store: Store; clock: Clock; config: { enrichBacklogMax: number; enrichCatchUpMs: number } }): PeriodicPass {
  const { store, clock, config } = deps;
  return startPeriodicPass(async () => {
    try {
      const done = await catchUpEnrichments({ store, db: store.db, clock }, { bound: config.enrichBacklogMax, maxAgeMs: config.enrichCatchUpMs });
      if (done.expired > 0) log.warn("skipped enrichments expired", { count: done.expired, afterMs: config.enrichCatchUpMs });
      if (done.requeued > 0) log.info("skipped enrichments caught up", { count: done.requeued });
    } catch (err) {
      log.error("catching up skipped enrichments failed", errorFields(err));
    }
  }, CATCH_UP_TICK_MS);
}
