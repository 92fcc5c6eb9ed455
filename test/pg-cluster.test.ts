/**
 * The test harness's engines (scripts/test.sh): the PostgreSQL pass runs under
 * scripts/pg-cluster.ts, and each test's database comes from test/helpers/pg.ts.
 */
import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase, TEST_ENGINE, TEST_PG_URL } from "./helpers/pg.ts";

describe("test engines", () => {
  test("TEST_ENGINE says which pass this is", () => {
    expect(TEST_ENGINE).toBe(process.env.FLAGSTAFF_TEST_POSTGRES_URL ? "postgres" : "sqlite");
    expect(TEST_PG_URL === undefined).toBe(TEST_ENGINE === "sqlite");
  });

  test.skipIf(!TEST_PG_URL)("createTestDatabase: a fresh C-collated UTF8 database, connectable, then dropped (PostgreSQL)", async () => {
    const db = await createTestDatabase();
    const other = await createTestDatabase();
    const admin = postgres(TEST_PG_URL!, { max: 1, onnotice: () => {} });
    try {
      expect(db.name).toMatch(/^flagstaff_t_[0-9a-z]+$/);
      expect(other.name).not.toBe(db.name);
      expect(new URL(db.url).pathname).toBe(`/${db.name}`);

      const [info] = await admin<{ datcollate: string; datctype: string; encoding: string }[]>`
        SELECT datcollate, datctype, pg_encoding_to_char(encoding) AS encoding FROM pg_database WHERE datname = ${db.name}`;
      expect(info).toEqual({ datcollate: "C", datctype: "C", encoding: "UTF8" });

      // Connectable, empty, and byte-wise ordered.
      const sql = postgres(db.url, { max: 1, onnotice: () => {} });
      try {
        const [current] = await sql<{ database: string }[]>`SELECT current_database() AS database`;
        expect(current?.database).toBe(db.name);
        const [count] = await sql<{ tables: number }[]>`SELECT count(*)::int AS tables FROM pg_tables WHERE schemaname = 'public'`;
        expect(count?.tables).toBe(0);
        const rows = await sql<{ s: string }[]>`SELECT s FROM (VALUES ('b'), ('B'), ('a'), ('_'), ('A')) AS v(s) ORDER BY s`;
        expect(rows.map((r) => r.s)).toEqual(["A", "B", "_", "a", "b"]);
        // Dropped even while a connection to it is still open (WITH (FORCE)).
        await db.drop();
      } finally {
        await sql.end({ timeout: 1 }).catch(() => {});
      }
      const left = await admin`SELECT 1 FROM pg_database WHERE datname = ${db.name}`;
      expect(left.length).toBe(0);
    } finally {
      await db.drop().catch(() => {});
      await other.drop();
      await admin.end({ timeout: 1 });
    }
  });
});
