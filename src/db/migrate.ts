import { createHash } from "node:crypto";
import type { Db } from "./client.ts";
import { categoryKey } from "../domain/category-key.ts";
import { embeddedMigrations, type EmbeddedMigration } from "./migrations-index.ts";

/**
 * Applies the migrations embedded in the program, exactly as drizzle's own migrator would
 * from the drizzle/ folder (same bookkeeping table, same hashes), so `drizzle-kit` and this
 * stay interchangeable, except that migrations may call the SQL functions registered here.
 * Returns how many migrations were applied. `migrations` is for tests that build a database as
 * an older version left it (a prefix of the list), to check a later migration's backfill.
 */
export function migrateDatabase(db: Db, migrations: readonly EmbeddedMigration[] = embeddedMigrations): number {
  const before = appliedCount(db);
  const list = migrations.map((m) => ({
    sql: m.sql.split("--> statement-breakpoint"),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: createHash("sha256").update(m.sql).digest("hex"),
  }));
  // Computations SQLite cannot do that migrations need for backfills (0008: category keys).
  // drizzle-kit's own migrate command does not have them.
  db.$client.function("flagstaff_category_key", (name: string) => categoryKey(name));
  // drizzle keeps its dialect and session off the public type; this is what its migrator calls.
  const internals = db as unknown as { dialect: { migrate(m: unknown, s: unknown, c: object): void }; session: unknown };
  internals.dialect.migrate(list, internals.session, {});
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
