import type { Services } from "./api/context.ts";
import { observeAiCall } from "./api/metrics.ts";
import type { Config } from "./config.ts";
import { migrateDatabase } from "./db/migrate.ts";
import { openSqliteStore } from "./db/store.ts";
import { offsetClock } from "./domain/clock.ts";
import { createRateLimiter } from "./domain/rate-limit.ts";

/** Opens and migrates the database and builds the long-lived services of one process. */
export function createServices(config: Config): Services {
  const store = openSqliteStore(config.dbPath);
  migrateDatabase(store.writer);
  const clock = offsetClock(config.clockOffsetMs);
  return {
    store,
    db: store.db,
    config,
    clock,
    reportRateLimiter: createRateLimiter(() => clock.now()),
    onAiCall: observeAiCall,
  };
}
