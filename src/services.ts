import type { Services } from "./api/context.ts";
import { observeAiCall } from "./api/metrics.ts";
import type { Config } from "./config.ts";
import { openStore } from "./db/open.ts";
import { offsetClock } from "./domain/core/clock.ts";
import { createRateLimiter, createSharedRateLimiter } from "./domain/plumbing/rate-limit.ts";

/**
 * Opens and migrates the database (SQLite, or PostgreSQL when FLAGSTAFF_DATABASE_URL is set)
 * and builds the long-lived services of one process.
 */
export async function createServices(config: Config): Promise<Services> {
  const { store } = await openStore(config, { auditChainLanes: config.auditChainLanes });
  const clock = offsetClock(config.clockOffsetMs);
  return {
    store,
    db: store.db,
    config,
    clock,
    // The database's only writer counts report creations in memory; instances sharing one (PostgreSQL) count together.
    reportRateLimiter: store.soleWriter ? createRateLimiter(() => clock.now()) : createSharedRateLimiter({ store, clock }),
    onAiCall: observeAiCall,
  };
}
