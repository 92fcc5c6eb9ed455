/**
 * scripts/bench/copy-to-postgres.ts copies a SQLite database made by `flagstaff init` and
 * scripts/bench/seed.ts into a PostgreSQL database the binary migrated: every table holds as
 * many rows on both sides, text that COPY's text format must escape comes over unchanged, and a
 * server on each engine answers GET /reports with the same pages.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { copySqliteToPostgres } from "../scripts/bench/copy-to-postgres.ts";
import { isSqliteSearchTable } from "../src/db/search.ts";
import { seedReports } from "../scripts/bench/seed.ts";
import { createTestDatabase, TEST_ENGINE } from "./helpers/pg.ts";
import { runCli, TestServer, type InitResult } from "./helpers/server.ts";

// Text COPY's text format escapes (backslash, tab, newline, carriage return), and the text of
// its NULL marker, which must stay text.
const TRICKY = "a\\b\tc\nd\re \\N \\. end";

test.skipIf(TEST_ENGINE !== "postgres")(
  "a seeded SQLite database copied into PostgreSQL: same rows per table, same GET /reports pages (PostgreSQL)",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagstaff-copy-"));
    const target = await createTestDatabase();
    const servers: TestServer[] = [];
    try {
      // SQLite: an empty FLAGSTAFF_DATABASE_URL is "unset" (src/config.ts), so this pass's
      // helpers leave the engine to FLAGSTAFF_DB instead of giving the process a PostgreSQL database.
      const sqliteEnv = { FLAGSTAFF_DB: join(dir, "flagstaff.db"), FLAGSTAFF_DATABASE_URL: "", PORT: "0", HOST: "127.0.0.1", FLAGSTAFF_LOG_LEVEL: "warn" };
      const init = await runCli(["init", "--json"], sqliteEnv);
      expect(init.code).toBe(0);
      const demo = JSON.parse(init.stdout) as InitResult;
      const seeded = seedReports(sqliteEnv.FLAGSTAFF_DB, { count: 3000 });

      const lite = new Database(sqliteEnv.FLAGSTAFF_DB);
      const newest = lite.query("SELECT id FROM reports ORDER BY created_us DESC LIMIT 1").get() as { id: string };
      lite.query("UPDATE reports SET description = ?, content = ? WHERE id = ?").run(TRICKY, "\\N", newest.id);
      const tables = (lite.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != '__drizzle_migrations' ORDER BY name").all() as { name: string }[]).map((t) => t.name).filter((t) => !isSqliteSearchTable(t));
      const liteCounts = Object.fromEntries(tables.map((t) => [t, (lite.query(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n]));
      lite.close();
      expect(liteCounts.reports).toBe(3000);

      // PostgreSQL: migrated by the program, then the copy.
      const pgEnv = { ...sqliteEnv, FLAGSTAFF_DATABASE_URL: target.url };
      const migrate = await runCli(["migrate"], pgEnv);
      expect(migrate.code).toBe(0);
      const copied = await copySqliteToPostgres(sqliteEnv.FLAGSTAFF_DB, target.url);
      expect(Object.fromEntries(copied.tables.map((t) => [t.table, t.rows]))).toEqual(liteCounts);

      const sql = postgres(target.url, { max: 1, onnotice: () => {} });
      try {
        const pgCounts: Record<string, number> = {};
        for (const t of tables) pgCounts[t] = (await sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${t}"`))[0]!.n;
        expect(pgCounts).toEqual(liteCounts);
        const [row] = await sql<{ description: string | null; content: string | null }[]>`SELECT description, content FROM reports WHERE id = ${newest.id}`;
        expect(row).toEqual({ description: TRICKY, content: "\\N" });
        // A second copy into a database with rows is refused.
        await expect(copySqliteToPostgres(sqliteEnv.FLAGSTAFF_DB, target.url)).rejects.toThrow(/must be empty/);
      } finally {
        await sql.end({ timeout: 5 });
      }

      // The same pages from a server on each engine, with the same key.
      const onSqlite = new TestServer(dir, sqliteEnv, demo);
      const onPostgres = new TestServer(dir, pgEnv, demo);
      servers.push(onSqlite, onPostgres);
      await onSqlite.start();
      await onPostgres.start();
      const queries = ["", "?limit=100", "?sort=asc", "?status=OPEN", `?subjectExternalId=${seeded.sample.subjectExternalId}`, `?reason=${seeded.sample.reason}&severity=CRITICAL`];
      for (const q of queries) {
        const [a, b] = await Promise.all([onSqlite.call("GET", `/reports${q}`), onPostgres.call("GET", `/reports${q}`)]);
        expect(a.status).toBe(200);
        expect(b.status).toBe(200);
        expect(b.body).toEqual(a.body);
        if (q === "") {
          expect(a.body.reports.length).toBeGreaterThan(0);
          expect(a.body.reports[0].id).toBe(newest.id);
          expect(a.body.reports[0].description).toBe(TRICKY);
          const next = `/reports?cursor=${encodeURIComponent(a.body.nextCursor)}`;
          const [a2, b2] = await Promise.all([onSqlite.call("GET", next), onPostgres.call("GET", next)]);
          expect(a2.status).toBe(200);
          expect(b2.body).toEqual(a2.body);
        }
      }
    } finally {
      for (const s of servers) await s.stop();
      await target.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
  120_000,
);
