import { createHash } from "node:crypto";
import type { Db } from "./client.ts";
import { categoryKey } from "../domain/category-key.ts";
import { embeddedMigrations, type EmbeddedMigration } from "./migrations-index.ts";
import { embeddedPgMigrations } from "./migrations-index-pg.ts";
import type { Store } from "./store.ts";

/** The database was migrated by a newer Flagstaff than this one: refuse to run on it. */
export class SchemaTooNewError extends Error {}

/**
 * Applies the migrations embedded in the program to the store's database, exactly as drizzle's
 * own migrator would from the drizzle/ (SQLite) or drizzle-pg/ (PostgreSQL) folder (same
 * bookkeeping table, same hashes), so `drizzle-kit` and this stay interchangeable. Returns how
 * many were applied. Refuses (SchemaTooNewError) a database that has migrations this binary
 * does not know: a newer version migrated it, and this one would misread its tables. `count`
 * applies only the first `count` migrations: tests build a database as an older version left it,
 * to check a later migration's backfill.
 */
export async function migrateStore(store: Store, opts: { count?: number } = {}): Promise<number> {
  if (store.engine === "postgres") return migratePostgres(store.writer, opts.count === undefined ? embeddedPgMigrations : embeddedPgMigrations.slice(0, opts.count));
  return migrateDatabase(store.writer, opts.count === undefined ? embeddedMigrations : embeddedMigrations.slice(0, opts.count));
}

const toDrizzle = (migrations: readonly EmbeddedMigration[]) =>
  migrations.map((m) => ({
    sql: m.sql.split("--> statement-breakpoint"),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: createHash("sha256").update(m.sql).digest("hex"),
  }));

// drizzle keeps its dialect and session off the public type; this is what its migrator calls.
type MigratorInternals = { dialect: { migrate(m: unknown, s: unknown, c: object): unknown }; session: unknown };

function tooNew(applied: number, known: number): SchemaTooNewError {
  return new SchemaTooNewError(
    `the database's schema is newer than this Flagstaff: ${applied} migrations applied, this version knows ${known}. Run the newer version (or restore a backup taken before the upgrade).`,
  );
}

/**
 * SQLite. Synchronous (bun:sqlite). `migrations` is for tests that build a database as an older
 * version left it (a prefix of the list), to check a later migration's backfill.
 */
export function migrateDatabase(db: Db, migrations: readonly EmbeddedMigration[] = embeddedMigrations): number {
  const before = appliedCount(db);
  if (before > embeddedMigrations.length) throw tooNew(before, embeddedMigrations.length);
  // Computations SQLite cannot do that migrations need for backfills (0008: category keys).
  // drizzle-kit's own migrate command does not have them.
  db.$client.function("flagstaff_category_key", (name: string) => categoryKey(name));
  (db as unknown as MigratorInternals).dialect.migrate(toDrizzle(migrations), (db as unknown as MigratorInternals).session, {});
  return appliedCount(db) - before;
}

function appliedCount(db: Db): number {
  const exists = db.$client
    .query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'")
    .get();
  if (!exists) return 0;
  const row = db.$client.query("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number };
  return row.n;
}

/** PostgreSQL: drizzle's migrator (table drizzle.__drizzle_migrations), in one transaction. */
async function migratePostgres(db: Db, migrations: readonly EmbeddedMigration[] = embeddedPgMigrations): Promise<number> {
  const pg = db as unknown as { execute(q: string): Promise<Record<string, unknown>[]> } & MigratorInternals;
  const count = async () => {
    const [row] = await pg.execute("SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS present");
    if (!row?.present) return 0;
    const [n] = await pg.execute("SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations");
    return Number(n?.n ?? 0);
  };
  const before = await count();
  if (before > embeddedPgMigrations.length) throw tooNew(before, embeddedPgMigrations.length);
  await pg.dialect.migrate(toDrizzle(migrations), pg.session, {});
  return (await count()) - before;
}
