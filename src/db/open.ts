import { sql, type SQL } from "drizzle-orm";
import type { Config } from "../config.ts";
import { log } from "../log.ts";
import { ENGINE } from "./engine.ts";
import { migrateStore } from "./migrate.ts";
import { openPostgresStore, withMigrationLock } from "./store-pg.ts";
import { openSqliteStore, type Store } from "./store.ts";

/** The database cannot be used: start-up stops with this message. */
export class DatabaseUnavailableError extends Error {}

/**
 * Opens the configured engine's store (PostgreSQL when FLAGSTAFF_DATABASE_URL is set, else
 * SQLite at FLAGSTAFF_DB) and migrates it. On PostgreSQL, instances starting together migrate
 * one at a time (an advisory lock), and an unreachable database is a clear error, not a hang.
 */
export async function openStore(
  config: Pick<Config, "dbPath" | "databaseUrl" | "databasePool"> & Partial<Pick<Config, "databaseStatementTimeoutMs">>,
): Promise<{ store: Store; applied: number }> {
  if (!config.databaseUrl) {
    const store = openSqliteStore(config.dbPath);
    try {
      return { store, applied: await migrateStore(store) };
    } catch (err) {
      await store.close();
      throw err;
    }
  }
  if (ENGINE !== "postgres") throw new Error("FLAGSTAFF_DATABASE_URL was set after start-up: the engine is chosen when the program starts");
  const url = config.databaseUrl;
  const store = openPostgresStore({ url, poolSize: config.databasePool, statementTimeoutMs: config.databaseStatementTimeoutMs });
  try {
    await store.ping();
  } catch (err) {
    await store.close().catch(() => {});
    throw new DatabaseUnavailableError(`cannot reach PostgreSQL at ${redact(url)}: ${err instanceof Error ? err.message : String(err)}`);
  }
  await warnUnlessByteWise(store);
  try {
    return { store, applied: await withMigrationLock(url, () => migrateStore(store)) };
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }
}

/**
 * Prefix searches compare text byte-wise, as SQLite does: on a database of another collation
 * they still answer, but may miss or add names with letters outside ASCII. Said once at start.
 */
async function warnUnlessByteWise(store: Store): Promise<void> {
  // `writer` is the pool's Drizzle handle (typed as the SQLite one the domain is written for).
  const pg = store.writer as unknown as { execute(q: SQL): Promise<{ c: string }[]> };
  const [row] = await pg.execute(sql`SELECT datcollate AS c FROM pg_database WHERE datname = current_database()`);
  if (row && !["C", "POSIX", "C.UTF-8", "C.utf8"].includes(row.c)) {
    log.warn("the database's collation is not C: create it with LC_COLLATE 'C' (docs/operations.md) for byte-wise prefix search", { collation: row.c });
  }
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(an invalid URL)";
  }
}
