import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "./client.ts";
import { categoryKey } from "../domain/categories/category-key.ts";
import { searchDocument } from "../domain/plumbing/search-text.ts";
import { VERSION } from "../version.ts";
import { embeddedMigrations, type EmbeddedMigration } from "./migrations-index.ts";
import { embeddedPgMigrations } from "./migrations-index-pg.ts";
import { fillSearchTexts } from "./search.ts";
import { chainExistingEventsPg, chainExistingEventsSqlite } from "./audit-hash.ts";
import { WRITE_LOCK } from "./store-pg.ts";
import type { Store } from "./store.ts";

/** The database was migrated by a newer Flagstaff than this one: refuse to run on it. */
export class SchemaTooNewError extends Error {}

/** A migration this run applied, and how long its statements (and backfill) took. */
export interface AppliedMigration {
  tag: string;
  ms: number;
}

export interface MigrateOptions {
  /**
   * Applies only the first `count` migrations: tests build a database as an older version left
   * it, to check a later migration's backfill.
   */
  count?: number;
  /** Told of each migration applied, once they are all committed (`serve` logs them). */
  onApplied?: (m: AppliedMigration) => void;
  /** Told of each repair of the bookkeeping (KNOWN_REPAIRS) made, once committed. */
  onRepaired?: (what: string) => void;
}

/**
 * Applies the migrations embedded in the program to the store's database, with the bookkeeping
 * of drizzle's own migrator (the table `__drizzle_migrations`, on PostgreSQL in the schema
 * `drizzle`; one row per migration, its SHA-256 and its journal time; a migration runs when its
 * journal time is later than the newest recorded), so `drizzle-kit` and this stay
 * interchangeable. Every pending migration runs in one transaction: all of them land, or none.
 * Returns how many were applied.
 *
 * Before it writes anything, it refuses (SchemaTooNewError) a database a newer Flagstaff
 * migrated: more migrations recorded than this binary knows, or a newer one.
 */
export async function migrateStore(store: Store, opts: MigrateOptions = {}): Promise<number> {
  if (store.engine === "postgres") return migratePostgres(store.writer, prefix(embeddedPgMigrations, opts.count), opts);
  return migrateDatabase(store.writer, prefix(embeddedMigrations, opts.count), opts);
}

const prefix = (list: readonly EmbeddedMigration[], count: number | undefined) => (count === undefined ? list : list.slice(0, count));

/** The SHA-256 drizzle records for a migration: of its file's text. */
export const migrationHash = (text: string): string => createHash("sha256").update(text).digest("hex");

const statementsOf = (m: EmbeddedMigration): string[] => m.sql.split("--> statement-breakpoint");

/** What the bookkeeping table holds, read without writing anything. */
interface Recorded {
  count: number;
  /** The newest journal time recorded (null: no migration yet). */
  newest: number | null;
}

/**
 * Refuses a database with more migrations than this binary knows, or one newer than the newest
 * it knows: a newer Flagstaff migrated it, and this one would misread its tables, or write rows
 * that leave its new columns empty. Always against the whole list, whatever a test applies.
 */
function refuseNewer(recorded: Recorded, known: readonly EmbeddedMigration[]): void {
  const newestKnown = known.at(-1);
  const tooMany = recorded.count > known.length;
  const tooRecent = recorded.newest !== null && newestKnown !== undefined && recorded.newest > newestKnown.when;
  if (!tooMany && !tooRecent) return;
  const since = recorded.newest === null ? "" : `, the newest dated ${new Date(recorded.newest).toISOString()}`;
  throw new SchemaTooNewError(
    `the database's schema is newer than this Flagstaff (${VERSION}): it holds ${recorded.count} migrations${since}; ` +
      `this version knows ${known.length}, the newest ${newestKnown?.tag ?? "none"} (dated ${newestKnown ? new Date(newestKnown.when).toISOString() : "-"}). ` +
      "Nothing was written. Run the Flagstaff that migrated it (or newer), or restore the backup taken before the upgrade.",
  );
}

/**
 * Bookkeeping rows that a landed build wrote for a migration whose file was later changed (a
 * mistake: a landed migration is never edited; test/migrations.test.ts holds the hash of every
 * landed one). Each names the build, the row it wrote, and the statements that turn what that
 * build created into what the file creates now; the migrator runs them and rewrites the row to
 * the file's hash and time, in the transaction that applies the migrations after it.
 */
export interface KnownRepair {
  engine: "sqlite" | "postgres";
  tag: string;
  /** The commit that wrote the row, and what changed since. */
  build: string;
  why: string;
  hash: string;
  when: number;
  statements: string[];
}

export const KNOWN_REPAIRS: readonly KnownRepair[] = [
  {
    engine: "postgres",
    tag: "0000_foundation",
    build: "a211d7f",
    why: "the next commit regenerated drizzle-pg/0000_foundation.sql: its journal time moved, and two indexes lost COLLATE \"C\" (the database's own collation is C)",
    hash: "3f54382523f143b53d9669ac287701cacedad020feffd1c0698cb9515c478b0c",
    when: 1795437564606,
    statements: [
      `DROP INDEX "identities_name_idx"`,
      `CREATE INDEX "identities_name_idx" ON "identities" USING btree ("project_id",lower("name"))`,
      `DROP INDEX "identities_username_idx"`,
      `CREATE INDEX "identities_username_idx" ON "identities" USING btree ("project_id",lower("username"))`,
    ],
  },
];

const repairsOf = (engine: KnownRepair["engine"]) => KNOWN_REPAIRS.filter((r) => r.engine === engine);

/**
 * SQLite. Synchronous (bun:sqlite). `migrations` is for tests that build a database as an older
 * version left it (a prefix of the list), to check a later migration's backfill.
 */
export function migrateDatabase(db: Db, migrations: readonly EmbeddedMigration[] = embeddedMigrations, opts: Omit<MigrateOptions, "count"> = {}): number {
  const client = db.$client;
  const recorded = sqliteRecorded(db);
  refuseNewer(recorded, embeddedMigrations);

  // Computations SQLite cannot do that migrations need for backfills (0008: category keys;
  // 0020: the search folding). drizzle-kit's own migrate command does not have them.
  client.function("flagstaff_category_key", (name: string) => categoryKey(name));
  client.function("flagstaff_search_text", (a: string | null, b: string | null, c: string | null) => searchDocument([a, b, c]));

  const last = recorded.newest === null ? null : Number(recorded.newest);
  const pending = migrations.filter((m) => last === null || last < m.when);
  if (!pending.length) return 0;
  // drizzle's table, as its migrator creates it.
  db.run(sql`CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`);
  const applied: AppliedMigration[] = [];
  db.run(sql`BEGIN`);
  try {
    for (const m of pending) {
      const started = performance.now();
      for (const statement of statementsOf(m)) db.run(sql.raw(statement));
      SQLITE_BACKFILLS[m.tag]?.(db);
      db.run(sql`INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES (${migrationHash(m.sql)}, ${m.when})`);
      applied.push({ tag: m.tag, ms: performance.now() - started });
    }
    db.run(sql`COMMIT`);
  } catch (err) {
    db.run(sql`ROLLBACK`);
    throw err;
  }
  for (const a of applied) opts.onApplied?.(a);
  return applied.length;
}

/**
 * Refuses a SQLite database file a newer Flagstaff migrated, read through a read-only connection
 * before the store opens it (opening sets WAL mode, which rewrites the header of a file restored
 * in another journal mode). A file that does not exist is not created.
 */
export function refuseNewerSqliteFile(path: string): void {
  if (path === ":memory:" || !existsSync(path)) return;
  const client = new Database(path, { readonly: true });
  try {
    refuseNewer(sqliteRecorded(drizzle(client) as unknown as Db), embeddedMigrations);
  } finally {
    client.close();
  }
}

/** SQLite's bookkeeping, read only. */
function sqliteRecorded(db: Db): Recorded {
  const client = db.$client;
  const hasTable = client.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get() !== null;
  if (!hasTable) return { count: 0, newest: null };
  const row = client.query("SELECT count(*) AS count, max(created_at) AS newest FROM __drizzle_migrations").get() as Recorded;
  return { count: row.count, newest: row.newest === null ? null : Number(row.newest) };
}

/** What migrating the store would do, read without writing anything (`flagstaff migrate --dry-run`). */
export interface MigrationPlan {
  /** The migrations it would apply, in order. */
  pending: string[];
  /** The repairs of the bookkeeping it would make (KNOWN_REPAIRS). */
  repairs: string[];
}

/**
 * What migrateStore would apply to the store's database, without writing anything; refuses a
 * database a newer Flagstaff migrated (SchemaTooNewError) as migrating would.
 */
export async function planMigrations(store: Store): Promise<MigrationPlan> {
  if (store.engine === "postgres") {
    const pg = store.writer as unknown as PgMigrator;
    const recorded = await pgRecorded(pg);
    refuseNewer(recorded, embeddedPgMigrations);
    const repairs = await pgRepairsNeeded(pg, recorded);
    // A repair rewrites the bookkeeping row of the migration it repairs: the file's time.
    const repairedNewest = repairs.reduce((n, r) => Math.max(n ?? 0, embeddedPgMigrations.find((m) => m.tag === r.tag)?.when ?? 0), recorded.newest);
    return { pending: pendingOf(embeddedPgMigrations, repairedNewest), repairs: repairs.map(describeRepair) };
  }
  const recorded = sqliteRecorded(store.writer);
  refuseNewer(recorded, embeddedMigrations);
  return { pending: pendingOf(embeddedMigrations, recorded.newest), repairs: [] };
}

const pendingOf = (list: readonly EmbeddedMigration[], newest: number | null) => list.filter((m) => newest === null || newest < m.when).map((m) => m.tag);
const describeRepair = (r: KnownRepair) => `${r.tag} as recorded by ${r.build}: ${r.why}`;

/**
 * Backfills PostgreSQL cannot compute in SQL (it cannot run the domain's code), each run after
 * its migration's statements in the same transaction: the migration and its data land together
 * or not at all. SQLite's migrations call the same code as registered functions instead.
 * drizzle-kit's own migrate command does not run them.
 */
const PG_BACKFILLS: Record<string, (tx: { execute(q: SQL): Promise<unknown> }) => Promise<void>> = {
  "0010_search_text": fillSearchTexts,
  // The audit chain: SHA-256 in SQL would need the canonical form written twice (and SQLite has none).
  "0023_audit_chain": chainExistingEventsPg,
};

/** Data steps of SQLite's migrations run after their statements, in the same transaction. */
const SQLITE_BACKFILLS: Record<string, (db: Db) => unknown> = {
  "0033_audit_chain": chainExistingEventsSqlite,
};

type PgTx = { execute(q: SQL): Promise<Record<string, unknown>[]> };
type PgMigrator = PgTx & { transaction<T>(fn: (tx: PgTx) => Promise<T>): Promise<T> };

/**
 * PostgreSQL: drizzle's bookkeeping (drizzle.__drizzle_migrations, as its PgDialect.migrate
 * keeps it), with the backfills of PG_BACKFILLS after their migrations and the repairs of
 * KNOWN_REPAIRS first. The transaction holds the database's write lock (the one every write
 * transaction of Flagstaff takes first, src/db/store-pg.ts): an instance of the previous version
 * still serving during a rolling upgrade writes before the migration or after it, never while a
 * backfill reads what it is changing.
 */
const readRecorded = async (q: PgTx): Promise<Recorded> => {
  const [row] = await q.execute(sql`SELECT count(*)::int AS count, max(created_at) AS newest FROM "drizzle"."__drizzle_migrations"`);
  return { count: Number(row?.count ?? 0), newest: row?.newest == null ? null : Number(row.newest) };
};

/** PostgreSQL's bookkeeping, read only. */
async function pgRecorded(pg: PgTx): Promise<Recorded> {
  const [present] = await pg.execute(sql`SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS present`);
  return present?.present ? await readRecorded(pg) : { count: 0, newest: null };
}

/** Which known repairs this database needs, read only. */
async function pgRepairsNeeded(pg: PgTx, recorded: Recorded): Promise<KnownRepair[]> {
  const repairs: KnownRepair[] = [];
  if (recorded.count === 0) return repairs;
  for (const r of repairsOf("postgres")) {
    const rows = await pg.execute(sql`SELECT 1 FROM "drizzle"."__drizzle_migrations" WHERE hash = ${r.hash} AND created_at = ${r.when}`);
    if (rows.length) repairs.push(r);
  }
  return repairs;
}

async function migratePostgres(db: Db, migrations: readonly EmbeddedMigration[], opts: Omit<MigrateOptions, "count">): Promise<number> {
  const pg = db as unknown as PgMigrator;
  const before = await pgRecorded(pg);
  refuseNewer(before, embeddedPgMigrations);
  // Read before anything is written.
  const repairs = await pgRepairsNeeded(pg, before);
  if (!repairs.length && before.newest !== null && !migrations.some((m) => before.newest! < m.when)) return 0;

  await pg.execute(sql`CREATE SCHEMA IF NOT EXISTS "drizzle"`);
  await pg.execute(sql`CREATE TABLE IF NOT EXISTS "drizzle"."__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
  const applied: AppliedMigration[] = [];
  const repaired: string[] = [];
  await pg.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${WRITE_LOCK})`);
    for (const r of repairs) {
      // Again under the lock: an instance that started beside this one may have repaired it.
      const rows = await tx.execute(sql`SELECT id FROM "drizzle"."__drizzle_migrations" WHERE hash = ${r.hash} AND created_at = ${r.when}`);
      if (!rows.length) continue;
      const now = embeddedPgMigrations.find((m) => m.tag === r.tag);
      if (!now) throw new Error(`repair of ${r.tag}: no such migration`);
      for (const statement of r.statements) await tx.execute(sql.raw(statement));
      await tx.execute(sql`UPDATE "drizzle"."__drizzle_migrations" SET hash = ${migrationHash(now.sql)}, created_at = ${now.when} WHERE hash = ${r.hash} AND created_at = ${r.when}`);
      repaired.push(describeRepair(r));
    }
    const { newest: last } = await readRecorded(tx);
    for (const m of migrations) {
      if (last !== null && last >= m.when) continue;
      const started = performance.now();
      for (const statement of statementsOf(m)) await tx.execute(sql.raw(statement));
      await PG_BACKFILLS[m.tag]?.(tx);
      await tx.execute(sql`INSERT INTO "drizzle"."__drizzle_migrations" ("hash", "created_at") VALUES (${migrationHash(m.sql)}, ${m.when})`);
      applied.push({ tag: m.tag, ms: performance.now() - started });
    }
  });
  for (const r of repaired) opts.onRepaired?.(r);
  for (const a of applied) opts.onApplied?.(a);
  return applied.length;
}
