/**
 * An ascending reader never skips a report (issue 25). `GET /reports?sort=asc` pages by
 * creation time; where instances write side by side (PostgreSQL, no cluster-wide write lock),
 * a report may commit a moment after a later-timed one, so ascending pages stop
 * LISTING_HORIZON_MS back (src/domain/intake/report-time.ts) and a report commits within half of it
 * of its time or runs again. The guarantee, tested here: a reader that follows `nextCursor`,
 * and polls again from its last cursor when it has caught up, sees every report exactly once
 * in order of time, while both instances write. On SQLite one process writes and commits in
 * the order of the times: the same reader, one instance, no horizon.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LISTING_HORIZON_MS } from "../src/domain/intake/report-time.ts";
import { TEST_ENGINE } from "./helpers/pg.ts";
import { startServer, TestServer } from "./helpers/server.ts";

let a: TestServer;
let b: TestServer | null = null;

beforeAll(async () => {
  a = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "1000000" });
  if (TEST_ENGINE === "postgres") {
    // A second instance on the same database (the same FLAGSTAFF_DB names it on this pass).
    b = new TestServer(mkdtempSync(join(tmpdir(), "flagstaff-test-b-")), a.env, a.demo);
    await b.start();
  }
});
afterAll(async () => {
  await b?.stop();
  await a.dispose();
});

type Page = { reports: { id: string; createdAt: string }[]; nextCursor: string | null };

describe("an ascending reader while instances write", () => {
  test("sees every report exactly once, in order of time, never skipping one", async () => {
    const servers = b ? [a, b] : [a];
    const created = new Set<string>();
    let writing = true;
    const writer = async (w: number) => {
      for (let i = 0; writing; i++) {
        const server = servers[(w + i) % servers.length]!;
        const r = await server.call("POST", `/projects/${a.demo.projectId}/reports`, {
          body: { reason: "spam", target: { contentType: "post", contentExternalId: `h-${w}-${i % 7}` }, subject: { type: "user", externalId: `hs-${i % 5}` } },
        });
        expect(r.status).toBe(201);
        created.add(r.body.report.id);
      }
    };

    const seen: string[] = [];
    let cursor: string | null = null;
    let lastTime = "";
    const readOnce = async (): Promise<boolean> => {
      const server = servers[seen.length % servers.length]!;
      const r = await server.call("GET", `/reports?sort=asc&limit=25${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(r.status).toBe(200);
      const page = r.body as Page;
      for (const report of page.reports) {
        if (seen.includes(report.id)) continue; // the page re-read from the same cursor
        // Never a report older than one already seen: that one would have been skipped by a
        // reader that had moved on.
        expect(report.createdAt >= lastTime).toBe(true);
        lastTime = report.createdAt;
        seen.push(report.id);
      }
      if (page.nextCursor) cursor = page.nextCursor;
      return page.nextCursor !== null;
    };

    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    const until = Date.now() + 3_000;
    while (Date.now() < until) if (!(await readOnce())) await Bun.sleep(20);
    writing = false;
    await Promise.all(writers);
    // Once the horizon has passed the last report, the reader catches up with all of them.
    if (TEST_ENGINE === "postgres") await Bun.sleep(LISTING_HORIZON_MS + 200);
    while (await readOnce());
    await readOnce();

    expect(created.size).toBeGreaterThan(100);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...created].filter((id) => !seen.includes(id))).toEqual([]);
    expect(seen.length).toBe(created.size);
  }, 30_000);
});
