import { existsSync } from "node:fs";
import { sql, type SQL } from "drizzle-orm";
import type { Config } from "../config.ts";
import { log } from "../log.ts";
import { driverUnmended } from "./driver-mends.ts";
import { ENGINE } from "./engine.ts";
import { migrateStore, refuseNewerSqliteFile, type AppliedMigration } from "./migrate.ts";
import { openPostgresStore, withMigrationLock } from "./store-pg.ts";
import { openSqliteStore, type Store } from "./store.ts";

/** The database cannot be used: start-up stops with this message. */
export class DatabaseUnavailableError extends Error {}

/** A PostgreSQL start stops here with a driver that lacks our mends (src/db/driver-mends.ts). */
function refuseUnmendedDriver(): void {
  const reason = driverUnmended();
  if (reason) throw new DatabaseUnavailableError(reason);
}

/**
 * Opens the configured engine's store (PostgreSQL when FLAGSTAFF_DATABASE_URL is set, else
 * SQLite at FLAGSTAFF_DB) and migrates it. On PostgreSQL, instances starting together migrate
 * one at a time (an advisory lock), and an unreachable database is a clear error, not a hang.
 * `auditChainLanes`: the lanes its audit chain's appender spreads an organization's events over
 * (the server's FLAGSTAFF_AUDIT_CHAIN_LANES; src/db/audit-append.ts's default otherwise).
 */
export async function openStore(
  config: Pick<Config, "dbPath" | "databaseUrl" | "databasePool"> & Partial<Pick<Config, "databaseStatementTimeoutMs">>,
  opts: { auditChainLanes?: number } = {},
): Promise<OpenedStore> {
  if (!config.databaseUrl) {
    refuseNewerSqliteFile(config.dbPath);
    const store = openSqliteStore(config.dbPath, opts);
    try {
      return { store, ...(await migrateLogged(store)) };
    } catch (err) {
      await store.close();
      throw err;
    }
  }
  if (ENGINE !== "postgres") throw new Error("FLAGSTAFF_DATABASE_URL was set after start-up: the engine is chosen when the program starts");
  refuseUnmendedDriver();
  const url = config.databaseUrl;
  const store = openPostgresStore({ url, poolSize: config.databasePool, statementTimeoutMs: config.databaseStatementTimeoutMs, auditChainLanes: opts.auditChainLanes });
  try {
    await store.ping();
  } catch (err) {
    await store.close().catch(() => {});
    throw new DatabaseUnavailableError(`cannot reach PostgreSQL at ${redact(url)}: ${err instanceof Error ? err.message : String(err)}`);
  }
  await warnUnlessByteWise(store);
  try {
    return { store, ...(await withMigrationLock(url, () => migrateLogged(store))) };
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }
}

/**
 * Opens the configured engine's store without migrating it (`flagstaff migrate --dry-run`):
 * null for a SQLite file that does not exist yet (it is not created).
 */
export async function openUnmigrated(config: Pick<Config, "dbPath" | "databaseUrl" | "databasePool">): Promise<Store | null> {
  if (!config.databaseUrl) {
    if (!existsSync(config.dbPath)) return null;
    refuseNewerSqliteFile(config.dbPath);
    return openSqliteStore(config.dbPath);
  }
  refuseUnmendedDriver();
  const store = openPostgresStore({ url: config.databaseUrl, poolSize: 1 });
  try {
    await store.ping();
  } catch (err) {
    await store.close().catch(() => {});
    throw new DatabaseUnavailableError(`cannot reach PostgreSQL at ${redact(config.databaseUrl)}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return store;
}

export interface OpenedStore {
  store: Store;
  /** The migrations this start applied, in order, with how long each took. */
  applied: AppliedMigration[];
  /** The repairs of the migrations' bookkeeping it made (src/db/migrate.ts, KNOWN_REPAIRS). */
  repaired: string[];
}

/**
 * Migrates, and logs what it did: each migration applied with its duration, then their total
 * (an operator reads in the log what an upgrade ran and how long the start took because of it).
 */
async function migrateLogged(store: Store): Promise<Omit<OpenedStore, "store">> {
  const applied: AppliedMigration[] = [];
  const repaired: string[] = [];
  const started = performance.now();
  await migrateStore(store, {
    onRepaired: (what) => {
      repaired.push(what);
      log.warn("migration bookkeeping repaired", { repair: what });
    },
    onApplied: (m) => {
      applied.push(m);
      log.info("migration applied", { migration: m.tag, ms: Math.round(m.ms) });
    },
  });
  if (applied.length) {
    log.info("migrations applied", { engine: store.engine, count: applied.length, newest: applied.at(-1)!.tag, ms: Math.round(performance.now() - started) });
  }
  return { applied, repaired };
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
