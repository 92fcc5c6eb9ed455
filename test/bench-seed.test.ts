/**
 * scripts/bench/seed.ts adds to whatever a database holds: run on a database with identities
 * and reports of its own, then again on the same database (at the very same instant, so every
 * planned created_us collides with the previous run's), it must neither hit a UNIQUE constraint
 * nor break the invariants the server relies on.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, setSystemTime, test } from "bun:test";
import { seedReports } from "../scripts/bench/seed.ts";
import { TEST_ENGINE } from "./helpers/pg.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  setSystemTime();
  await server?.dispose();
});

// The benchmark's seeder writes SQLite files directly (scripts/bench/seed.ts).
test.skipIf(TEST_ENGINE !== "sqlite")(
  "seeding three times on a database that already holds r-… identities and reports (SQLite)",
  async () => {
    // The platform's own data: identities named like the seed's, and a report.
    for (const id of ["r-0", "r-1", "s-0"]) {
      expect((await server.call("PUT", `/projects/${server.demo.projectId}/identities/user/${id}`, { body: { display: { name: id } } })).status).toBe(200);
    }
    const own = await server.call("POST", `/projects/${server.demo.projectId}/reports`, {
      body: { subject: { type: "user", externalId: "r-1" }, target: { contentType: "post", contentExternalId: "post-0" }, reason: "spam" },
    });
    expect(own.status).toBe(201);
    await server.stop();

    const frozen = new Date();
    setSystemTime(frozen);
    const first = seedReports(server.dbPath, { count: 3000 });
    const second = seedReports(server.dbPath, { count: 3000 }); // the same instant: the same planned times
    setSystemTime();
    const third = seedReports(server.dbPath, { count: 2000 });
    const samples = [first, second, third].map((r) => r.sample.subjectExternalId);
    expect(new Set(samples).size).toBe(3);
    expect(samples[0]).toMatch(/^s-\d+-\d+$/); // s-0 was taken: even the first run has a tag

    const db = new Database(server.dbPath, { readonly: true });
    try {
      const count = (sql: string) => (db.query(sql).get() as { n: number }).n;
      expect(count("SELECT count(*) AS n FROM reports")).toBe(8001);
      expect(count("SELECT count(DISTINCT created_us) AS n FROM reports")).toBe(8001);
      expect(count("SELECT count(*) AS n FROM cases c WHERE report_count != (SELECT count(*) FROM reports r WHERE r.case_id = c.id)")).toBe(0);
      expect(count("SELECT count(*) AS n FROM identities i WHERE report_count != (SELECT count(*) FROM reports r WHERE r.subject_identity_id = i.id)")).toBe(0);
      // Reporters' kept tallies: every report the seed decided (none is a muted reporter's) counts once.
      expect(count("SELECT sum(reports_decided) AS n FROM identities")).toBe(count("SELECT count(*) AS n FROM reports WHERE status IN ('RESOLVED', 'DISMISSED', 'CLOSED')"));
      expect(count("SELECT sum(reports_decided) AS n FROM identities")).toBeGreaterThan(1000);
      expect(db.query("PRAGMA foreign_key_check").all()).toEqual([]);
      expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    } finally {
      db.close();
    }

    // The server reads the result: the platform's report and each run's are found.
    await server.start();
    for (const [query, n] of [["contentExternalId=post-0", 1], [`subjectExternalId=${second.sample.subjectExternalId}`, null]] as const) {
      const r = await server.call("GET", `/reports?${query}&limit=100`);
      expect(r.status).toBe(200);
      if (n !== null) expect(r.body.reports.length).toBe(n);
      else expect(r.body.reports.length).toBeGreaterThan(0);
    }
  },
  60_000,
);
