/**
 * The test harness's engines (scripts/test.sh): the PostgreSQL pass runs under
 * scripts/pg-cluster.ts, and each test's database comes from test/helpers/pg.ts. On that pass,
 * a cluster of its own is restarted too (scripts/chaos.ts restarts one under load).
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import postgres from "postgres";
import { startPgCluster } from "../scripts/pg-cluster.ts";
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

describe.skipIf(!TEST_PG_URL)("startPgCluster (PostgreSQL)", () => {
  test("restart('fast') and restart('immediate'): the same port and data, connectable again; stop() removes its folder", async () => {
    const cluster = await startPgCluster();
    const sql = postgres(cluster.url, { max: 1, onnotice: () => {} });
    try {
      await sql`CREATE TABLE kept (x int)`;
      await sql`INSERT INTO kept VALUES (1)`;
      const pid = async () => (await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`)[0]!.pid;
      for (const mode of ["fast", "immediate"] as const) {
        const before = await pid();
        await cluster.restart(mode);
        // The client's old connection is gone: its next query may fail once, then it connects again.
        await sql`SELECT 1`.catch(() => {});
        const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM kept`;
        expect(row!.n).toBe(1);
        expect(await pid()).not.toBe(before);
        expect(new URL(cluster.url).port).toBe(String(cluster.port));
      }
    } finally {
      await sql.end({ timeout: 1 }).catch(() => {});
      await cluster.stop();
    }
    expect(existsSync(cluster.dir)).toBe(false);
  });
});
