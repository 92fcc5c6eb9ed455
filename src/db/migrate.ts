import { createHash } from "node:crypto";
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "./client.ts";
import { categoryKey } from "../domain/category-key.ts";
import { searchDocument } from "../domain/search-text.ts";
import { embeddedMigrations, type EmbeddedMigration } from "./migrations-index.ts";
import { embeddedPgMigrations } from "./migrations-index-pg.ts";
import { fillSearchTexts } from "./search.ts";
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
    tag: m.tag,
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
  // Computations SQLite cannot do that migrations need for backfills (0008: category keys;
  // 0020: the search folding). drizzle-kit's own migrate command does not have them.
  db.$client.function("flagstaff_category_key", (name: string) => categoryKey(name));
  db.$client.function("flagstaff_search_text", (a: string | null, b: string | null, c: string | null) => searchDocument([a, b, c]));
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

/**
 * Backfills PostgreSQL cannot compute in SQL (it cannot run the domain's code), each run after
 * its migration's statements in the same transaction: the migration and its data land together
 * or not at all. SQLite's migrations call the same code as registered functions instead.
 * drizzle-kit's own migrate command does not run them.
 */
const PG_BACKFILLS: Record<string, (tx: { execute(q: SQL): Promise<unknown> }) => Promise<void>> = {
  "0010_search_text": fillSearchTexts,
};

type PgMigrator = { execute(q: SQL): Promise<Record<string, unknown>[]>; transaction<T>(fn: (tx: { execute(q: SQL): Promise<unknown> }) => Promise<T>): Promise<T> };

/**
 * PostgreSQL: drizzle's migrator (table drizzle.__drizzle_migrations, the same bookkeeping as
 * its PgDialect.migrate: the migrations newer than the last one recorded, in one transaction),
 * with the backfills of PG_BACKFILLS after their migrations.
 */
async function migratePostgres(db: Db, migrations: readonly EmbeddedMigration[] = embeddedPgMigrations): Promise<number> {
  const pg = db as unknown as PgMigrator;
  const count = async () => {
    const [row] = await pg.execute(sql`SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS present`);
    if (!row?.present) return 0;
    const [n] = await pg.execute(sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`);
    return Number(n?.n ?? 0);
  };
  const before = await count();
  if (before > embeddedPgMigrations.length) throw tooNew(before, embeddedPgMigrations.length);
  await pg.execute(sql`CREATE SCHEMA IF NOT EXISTS "drizzle"`);
  await pg.execute(sql`CREATE TABLE IF NOT EXISTS "drizzle"."__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
  const [last] = await pg.execute(sql`SELECT created_at FROM "drizzle"."__drizzle_migrations" ORDER BY created_at DESC LIMIT 1`);
  await pg.transaction(async (tx) => {
    for (const m of toDrizzle(migrations)) {
      if (last && Number(last.created_at) >= m.folderMillis) continue;
      for (const statement of m.sql) await tx.execute(sql.raw(statement));
      await PG_BACKFILLS[m.tag]?.(tx);
      await tx.execute(sql`INSERT INTO "drizzle"."__drizzle_migrations" ("hash", "created_at") VALUES (${m.hash}, ${m.folderMillis})`);
    }
  });
  return (await count()) - before;
}
