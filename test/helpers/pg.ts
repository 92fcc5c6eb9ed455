/**
 * The PostgreSQL pass of the suite (scripts/test.sh runs every test file on SQLite, then again
 * against a throwaway cluster started by scripts/pg-cluster.ts, which sets
 * FLAGSTAFF_TEST_POSTGRES_URL). Every test that opens a store or starts a server gets a
 * database of its own, created here.
 */
import { eq } from "drizzle-orm";
import postgres from "postgres";
import { newDatabase } from "../../scripts/pg-cluster.ts";
import { startPgProxy, type PgProxy } from "../../scripts/pg-proxy.ts";
import { initOrganization } from "../../src/commands/init.ts";
import { migrateStore } from "../../src/db/migrate.ts";
import { projects } from "../../src/db/schema.ts";
import { openPostgresStore } from "../../src/db/store-pg.ts";
import type { Store } from "../../src/db/store.ts";
import type { Clock } from "../../src/domain/core/clock.ts";

/** The cluster's admin URL on the PostgreSQL pass; undefined on the SQLite pass. */
export const TEST_PG_URL: string | undefined = process.env.FLAGSTAFF_TEST_POSTGRES_URL || undefined;
export const TEST_ENGINE: "sqlite" | "postgres" = TEST_PG_URL ? "postgres" : "sqlite";

let admin: postgres.Sql | null = null;
const adminSql = (): postgres.Sql => {
  if (!TEST_PG_URL) throw new Error("not on the PostgreSQL pass (FLAGSTAFF_TEST_POSTGRES_URL is not set)");
  admin ??= postgres(TEST_PG_URL, { max: 2, onnotice: () => {} });
  return admin;
};

/** The URL of `database` on the test cluster. */
export function databaseUrl(database: string): string {
  const u = new URL(TEST_PG_URL!);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * A fresh, empty database (byte-wise C collation, as Flagstaff's documentation asks for), and
 * a way to drop it.
 */
export async function createTestDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const sql = adminSql();
  const name = `flagstaff_t_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const url = await newDatabase(TEST_PG_URL!, name, sql);
  return {
    name,
    url,
    async drop() {
      await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * The database standing for a SQLite file path on the PostgreSQL pass: tests name their
 * database by its FLAGSTAFF_DB path (a server restarted on the same path, a CLI command run
 * against it); on PostgreSQL the same path always means the same database.
 */
const byPath = new Map<string, Promise<{ url: string; drop(): Promise<void> }>>();
export function databaseForPath(path: string): Promise<{ url: string; drop(): Promise<void> }> {
  let db = byPath.get(path);
  if (!db) {
    db = createTestDatabase();
    byPath.set(path, db);
  }
  return db;
}

/**
 * The lanes of an organization's audit chain locked in the database and the sessions holding
 * them (the advisory locks on (hashtext(org id), lane), src/db/audit-lanes-pg.ts), by lane.
 */
export async function lockedLanes(sql: postgres.Sql, orgId: string): Promise<{ pid: number; lane: number }[]> {
  return sql<{ pid: number; lane: number }[]>`SELECT pid, objid::int AS lane FROM pg_locks
    WHERE locktype = 'advisory' AND objsubid = 2 AND granted AND classid::bigint = (hashtext(${orgId})::bigint & 4294967295) ORDER BY objid`;
}

/**
 * An organization in a fresh database that the store reaches through scripts/pg-proxy.ts (no
 * delay), so that a test counts the round trips its code makes: migrated, the organization and
 * its project made as `flagstaff init` makes them. `close` closes the store, stops the proxy and
 * drops the database.
 */
export async function organizationThroughProxy(
  org: string,
  clock: Clock,
): Promise<{ store: Store; proxy: PgProxy; projectId: string; orgId: string; close(): Promise<void> }> {
  const database = await createTestDatabase();
  const target = new URL(database.url);
  const proxy = await startPgProxy({ target: { host: target.hostname, port: Number(target.port) }, delayMs: 0 });
  const store = openPostgresStore({ url: proxy.url(database.url), poolSize: 5 });
  await migrateStore(store);
  const init = await initOrganization({ store, db: store.db, clock }, { org });
  const [project] = await store.db.select().from(projects).where(eq(projects.id, init.projectId));
  return {
    store,
    proxy,
    projectId: init.projectId,
    orgId: project!.orgId,
    async close() {
      await store.close();
      await proxy.stop();
      await database.drop();
    },
  };
}
