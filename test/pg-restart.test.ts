/**
 * PostgreSQL restarted under load (issue 30): two instances on one database keep serving without
 * being restarted, answer 503 (never 500) while it is down, and lose nothing they acknowledged.
 * On a throwaway cluster of its own (scripts/pg-cluster.ts), so the suite's shared cluster is not
 * restarted under the other tests. And the fault that killed an instance in that run: a report and
 * its case read side by side (src/domain/cases/case-lock.ts) on a connection that is lost. PostgreSQL
 * only: a restart of PostgreSQL means nothing to SQLite (its faults: test/storage-faults.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { startPgCluster, type PgCluster } from "../scripts/pg-cluster.ts";
import { startPgProxy } from "../scripts/pg-proxy.ts";
import { migrateStore } from "../src/db/migrate.ts";
import { openPostgresStore } from "../src/db/store-pg.ts";
import { lockReportAndCase } from "../src/domain/cases/case-lock.ts";
import { createTestDatabase, TEST_ENGINE, TEST_PG_URL } from "./helpers/pg.ts";
import { startServer, TestServer } from "./helpers/server.ts";

const onPostgres = TEST_ENGINE === "postgres";

describe.skipIf(!onPostgres)("PostgreSQL restarted under load, two instances (PostgreSQL)", () => {
  let cluster: PgCluster;
  let url: string;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    cluster = await startPgCluster();
    const admin = postgres(cluster.url, { max: 1, onnotice: () => {} });
    await admin.unsafe("CREATE DATABASE flagstaff_restart TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C' ENCODING 'UTF8'");
    await admin.end();
    const u = new URL(cluster.url);
    u.pathname = "/flagstaff_restart";
    url = u.toString();
    a = await startServer({ FLAGSTAFF_DATABASE_URL: url, FLAGSTAFF_REPORT_RATE_LIMIT: "100000000" });
    // The second instance: the same database, a process of its own.
    b = new TestServer(mkdtempSync(join(tmpdir(), "flagstaff-test-b-")), a.env, a.demo);
    await b.start();
  }, 60_000);
  afterAll(async () => {
    await b?.dispose();
    await a?.dispose();
    await cluster?.stop();
  });

  test("pg_ctl restart -m immediate in the middle: both serve again without a restart, no 500, nothing acknowledged lost", async () => {
    const answers = new Map<string, number>();
    const reports: string[] = [];
    const dismissed: string[] = [];
    let stopped = false;
    const count = (outcome: string) => answers.set(outcome, (answers.get(outcome) ?? 0) + 1);
    const headers = { authorization: `Bearer ${a.demo.secretKey}`, "content-type": "application/json" };
    const send = async (server: TestServer, path: string, body: unknown): Promise<{ status: number; body: any } | null> => {
      try {
        const res = await fetch(`${server.sdk}${path}`, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(15_000) });
        const parsed = await res.json().catch(() => null);
        count(String(res.status));
        return { status: res.status, body: parsed };
      } catch (err) {
        count((err as Error).name === "TimeoutError" ? "timed out" : "no answer");
        return null;
      }
    };
    const report = (server: TestServer, marker: string) =>
      send(server, `/projects/${a.demo.projectId}/reports`, {
        subject: { type: "user", externalId: `u-${marker}` },
        target: { contentType: "post", contentExternalId: `p-${marker}` },
        reason: "spam",
        description: marker,
      });
    // Four clients filing reports (two through each instance), and one deciding on them through each.
    const reporter = async (server: TestServer, n: number) => {
      for (let i = 0; !stopped; i++) {
        const r = await report(server, `restart-${n}-${i}`);
        if (r?.status === 201) reports.push(r.body.report.id);
        else await Bun.sleep(50);
      }
    };
    const decider = async (server: TestServer, offset: number) => {
      for (let next = offset; !stopped; ) {
        const id = reports[next];
        if (!id) {
          await Bun.sleep(20);
          continue;
        }
        next += 5;
        const r = await send(server, `/reports/${id}/dismiss`, { reason: "not_actionable" });
        if (r?.status === 200) dismissed.push(id);
      }
    };
    const clients = [reporter(a, 0), reporter(b, 1), reporter(a, 2), reporter(b, 3), decider(a, 0), decider(b, 2)];

    await Bun.sleep(2_000);
    await cluster.restart("immediate");
    const back = Date.now();
    // Each instance, left alone, answers a report 201 again within 10 s.
    const servesAgain = await Promise.all(
      [a, b].map(async (server, i) => {
        for (let k = 0; Date.now() - back < 10_000; k++) {
          const r = await report(server, `probe-${i}-${k}`);
          if (r?.status === 201) {
            reports.push(r.body.report.id);
            return Date.now() - back;
          }
          await Bun.sleep(100);
        }
        return null;
      }),
    );
    const untilSixSeconds = 4_000 - (Date.now() - back);
    if (untilSixSeconds > 0) await Bun.sleep(untilSixSeconds);
    stopped = true;
    await Promise.all(clients);

    // Neither exited (an exit code, and the end of its output, otherwise), and each served again.
    const exited = [a, b].filter((s) => s.proc?.exitCode !== null).map((s) => `exit ${s.proc?.exitCode}: ${s.output.slice(-600)}`);
    expect(exited).toEqual([]);
    expect(servesAgain.map((ms) => ms !== null)).toEqual([true, true]);
    // Every request answered, 201 or 200 or 503: no 500, none left hanging or cut off.
    const outcomes = [...answers.keys()].sort();
    expect(outcomes.filter((o) => !["200", "201", "503"].includes(o))).toEqual([]);
    expect(answers.get("201") ?? 0).toBeGreaterThan(20);

    const db = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const found = new Set((await db<{ id: string }[]>`SELECT id FROM reports WHERE id IN ${db(reports)}`).map((r) => r.id));
      expect(reports.filter((id) => !found.has(id))).toEqual([]);
      if (dismissed.length) {
        const decided = new Set((await db<{ id: string }[]>`SELECT id FROM reports WHERE status = 'DISMISSED' AND id IN ${db(dismissed)}`).map((r) => r.id));
        expect(dismissed.filter((id) => !decided.has(id))).toEqual([]);
      }
    } finally {
      await db.end({ timeout: 1 });
    }
  }, 60_000);
});

describe.skipIf(!onPostgres)("a report and its case read on a connection that is lost (PostgreSQL)", () => {
  test("both reads fail with the transaction; neither failure is left unhandled (which ends the process)", async () => {
    const target = new URL(TEST_PG_URL!);
    const proxy = await startPgProxy({ target: { host: target.hostname, port: Number(target.port) }, delayMs: 0 });
    const database = await createTestDatabase();
    const store = openPostgresStore({ url: proxy.url(database.url), poolSize: 2 });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      await migrateStore(store);
      const ctx = { db: store.db, orgId: crypto.randomUUID() };
      const outcome = await store
        .transaction(async () => {
          // Both statements once, so that they are prepared on the transaction's connection and
          // travel together the next time (as they do on a connection in use for a while).
          await lockReportAndCase(ctx, crypto.randomUUID());
          // Then the connection is lost (PostgreSQL restarted) while both are on their way.
          proxy.pause();
          const reads = lockReportAndCase(ctx, crypto.randomUUID());
          await Bun.sleep(50);
          proxy.dropAll("close");
          return reads;
        })
        .then(() => "read", (err: unknown) => `failed: ${String((err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code)}`);
      proxy.resume();
      expect(outcome).toStartWith("failed");
      await Bun.sleep(200);
      expect(unhandled.map(String)).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      await proxy.stop();
      await store.close();
      await database.drop();
    }
  }, 30_000);
});
