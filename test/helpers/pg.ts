/**
 * The PostgreSQL pass of the suite (scripts/test.sh runs every test file on SQLite, then again
 * against a throwaway cluster started by scripts/pg-cluster.ts, which sets
 * FLAGSTAFF_TEST_POSTGRES_URL). Every test that opens a store or starts a server gets a
 * database of its own, created here.
 */
import postgres from "postgres";

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
  await sql.unsafe(`CREATE DATABASE ${name} TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C' ENCODING 'UTF8'`);
  return {
    name,
    url: databaseUrl(name),
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
