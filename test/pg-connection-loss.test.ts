/**
 * A lost PostgreSQL connection fails its queries and transactions; it never kills the process,
 * and the store goes on through new connections (PostgreSQL). Requests that meet the fault are
 * answered 503 with Retry-After (src/db/faults.ts), never 500, and the instance serves again
 * once PostgreSQL is back, without a restart. postgres.js 3.4.9 threw from a
 * timer when a write met a closed connection (porsager/postgres#1208), which no caller can
 * catch, and a connection closed with a write pending never reconnected:
 * scripts/patch-postgres.mjs mends both at install.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import postgres from "postgres";
import { sql, type SQL } from "drizzle-orm";
import { organizations } from "../src/db/schema.ts";
import { openTestStore } from "./helpers/builders.ts";
import { startPgProxy, type PgProxy } from "../scripts/pg-proxy.ts";
import { restRoutes } from "../src/api/rest.ts";
import { contractOf } from "./helpers/contract.ts";
import { createTestDatabase, TEST_ENGINE, TEST_PG_URL } from "./helpers/pg.ts";
import { ROOT, startServer } from "./helpers/server.ts";

// The reproduction of #1208, in a process of its own (the crash would end the test runner).
const SCRIPT = `
import postgres from "postgres";
const url = process.env.PG_URL;
const sql = postgres(url, { max: 2, onnotice: () => {} });
const killer = postgres(url, { max: 1, onnotice: () => {} });
const reserved = await sql.reserve();
const [{ pid }] = await reserved\`select pg_backend_pid() as pid\`;
await killer\`select pg_terminate_backend(\${pid})\`;
const outcomes = [];
for (let i = 0; i < 3; i++) outcomes.push(await reserved\`select 1\`.then(() => "ok", (e) => e.code));
console.log(JSON.stringify({ outcomes }));
process.exit(0);
`;

describe.skipIf(TEST_ENGINE !== "postgres")("a lost connection (PostgreSQL)", () => {
  test("a query on a connection whose backend died fails; the process lives on", async () => {
    const proc = Bun.spawn([process.execPath, "-e", SCRIPT], { cwd: ROOT, env: { ...process.env, PG_URL: TEST_PG_URL! }, stdout: "pipe", stderr: "pipe" });
    const timer = setTimeout(() => proc.kill(), 15_000);
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    clearTimeout(timer);
    expect(err).not.toContain("socket.write");
    expect(code).toBe(0);
    const { outcomes } = JSON.parse(out.trim().split("\n").at(-1)!) as { outcomes: string[] };
    // Each fails (the first with the reset, the next as closed): none waits forever.
    expect(outcomes).toHaveLength(3);
    expect(outcomes.includes("ok")).toBe(false);
  });

  test("the store's transactions and reads go on through new connections after every backend was terminated", async () => {
    const store = await openTestStore();
    const admin = postgres(TEST_PG_URL!, { max: 1, onnotice: () => {} });
    try {
      // The PostgreSQL handle's raw query (the domain's handle is typed as SQLite's).
      const raw = store.db as unknown as { execute(q: SQL): Promise<{ db: string }[]> };
      const [{ db }] = (await raw.execute(sql`select current_database() as db`)) as [{ db: string }];
      const write = (i: number) =>
        store.transaction(async () => {
          await store.db.insert(organizations).values({ id: crypto.randomUUID(), slug: `lost-${i}-${crypto.randomUUID().slice(0, 6)}`, name: "x", createdAt: 1 });
        });
      await Promise.all(Array.from({ length: 8 }, (_, i) => write(i)));
      // Every connection of the store dies at once, some in the middle of a transaction.
      const during = Promise.allSettled(Array.from({ length: 8 }, (_, i) => write(100 + i)));
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${db} and pid <> pg_backend_pid()`;
      const outcomes = await during;
      for (const o of outcomes) if (o.status === "rejected") expect(String((o.reason as Error).message ?? o.reason)).not.toContain("socket.write");
      // Then it serves again: every write and read succeeds within a few seconds.
      const deadline = Date.now() + 10_000;
      let ok = false;
      while (!ok && Date.now() < deadline) {
        const tries = await Promise.allSettled([...Array.from({ length: 8 }, (_, i) => write(200 + i)), store.db.select().from(organizations).limit(1)]);
        ok = tries.every((t) => t.status === "fulfilled");
        if (!ok) await Bun.sleep(200);
      }
      expect(ok).toBe(true);
    } finally {
      await admin.end({ timeout: 1 });
      await store.close();
    }
  });

  test("the mends are in the installed postgres.js (scripts/patch-postgres.mjs ran)", async () => {
    const text = await Bun.file(join(ROOT, "node_modules/postgres/src/connection.js")).text();
    expect(text.split("flagstaff: porsager/postgres#1208").length - 1).toBe(3);
  });
});

describe.skipIf(TEST_ENGINE !== "postgres")("the database gone and back, over HTTP (PostgreSQL)", () => {
  test("while PostgreSQL cannot be reached, requests are answered 503 with Retry-After; once it is back, they succeed", async () => {
    const target = new URL(TEST_PG_URL!);
    const first = await startPgProxy({ target: { host: target.hostname, port: Number(target.port) }, delayMs: 0 });
    const database = await createTestDatabase();
    const server = await startServer({ FLAGSTAFF_DATABASE_URL: first.url(database.url), FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
    const report = () =>
      server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: { reason: "spam", target: { contentType: "post", contentExternalId: `gone-${crypto.randomUUID()}` } } });
    let second: PgProxy | null = null;
    try {
      expect((await report()).status).toBe(201);
      // The network to PostgreSQL fails: every connection reset, nothing listening.
      first.dropAll();
      await first.stop();
      const answers = await Promise.all([report(), report(), server.call("GET", "/reports?limit=5"), server.call("GET", `/projects/${server.demo.projectId}/report-reasons`)]);
      for (const a of answers) {
        expect(a.status).toBe(503);
        expect(a.headers.get("retry-after")).toBe("1");
        expect(String(a.body.error)).toContain("database is unavailable");
      }
      // Every REST route answers the same, as its document says (the contract test counts on it).
      const contract = await contractOf(server.url);
      const problems: string[] = [];
      await Promise.all(restRoutes().map(async (route) => {
        const path = route.openapiPath.replace(/\{(\w+)\}/g, (_, name: string) => (name === "orgSlug" ? server.demo.orgSlug : name === "projectId" ? server.demo.projectId : "01a20000-0000-7000-8000-000000000000"));
        const url = `${server.url}${route.family === "org" ? "/api/v1" : "/sdk/flagstaff/v1"}${path}`;
        const res = await fetch(url, {
          method: route.method,
          headers: { authorization: `Bearer ${server.demo.secretKey}`, "content-type": "application/json" },
          body: route.method === "GET" || route.method === "DELETE" ? undefined : "{}",
        });
        const text = await res.text();
        if (res.status !== 503) problems.push(`${route.method} ${route.openapiPath}: ${res.status} ${text.slice(0, 100)}`);
        problems.push(...contract.check(route.family, route.method, route.openapiPath, res.status, res.headers, text));
      }));
      expect(problems).toEqual([]);
      expect(server.proc?.exitCode).toBeNull();
      // Back, on the same address: the instance serves again without a restart.
      second = await startPgProxy({ target: { host: target.hostname, port: Number(target.port) }, delayMs: 0, listen: { port: first.port } });
      const deadline = Date.now() + 15_000;
      let status = 0;
      while (status !== 201 && Date.now() < deadline) {
        status = (await report()).status;
        if (status !== 201) await Bun.sleep(200);
      }
      expect(status).toBe(201);
      // And ready again, though asked all along (more often than the probe writes): the probe's
      // own write ends the failing state once 5 s passed without a fault (src/api/readiness.ts).
      const readyBy = Date.now() + 15_000;
      let ready = 0;
      while (ready !== 200 && Date.now() < readyBy) {
        ready = (await server.call("GET", `${server.url}/readyz`)).status;
        if (ready !== 200) await Bun.sleep(200);
      }
      expect(ready).toBe(200);
    } finally {
      await server.dispose();
      await second?.stop();
      await database.drop();
    }
  }, 60_000);
});

describe.skipIf(TEST_ENGINE !== "postgres")("a statement that hangs (PostgreSQL)", () => {
  test("a lock held by another client ends at FLAGSTAFF_DB_STATEMENT_TIMEOUT_MS with a 503, and the request after it succeeds", async () => {
    const database = await createTestDatabase();
    const server = await startServer({ FLAGSTAFF_DATABASE_URL: database.url, FLAGSTAFF_DB_STATEMENT_TIMEOUT_MS: "1000", FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
    const other = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      const filed = await server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: { reason: "spam", target: { contentType: "post", contentExternalId: "held" } } });
      expect(filed.status).toBe(201);
      const reportId = filed.body.report.id as string;
      // Another client holds the case's row and does not let go.
      let release!: () => void;
      const held = other.begin(async (tx) => {
        await tx`select id from cases where id = (select case_id from reports where id = ${reportId}) for update`;
        await new Promise<void>((resolve) => (release = resolve));
      });
      await Bun.sleep(100);
      const started = Date.now();
      const decided = await server.call("POST", `/reports/${reportId}/dismiss`, { body: { reason: "other" } });
      const took = Date.now() - started;
      expect(decided.status).toBe(503);
      expect(decided.headers.get("retry-after")).toBe("1");
      expect(took).toBeLessThan(8_000);
      release();
      await held;
      expect((await server.call("POST", `/reports/${reportId}/dismiss`, { body: { reason: "other" } })).status).toBe(200);
    } finally {
      await other.end({ timeout: 1 });
      await server.dispose();
      await database.drop();
    }
  }, 30_000);
});

describe.skipIf(TEST_ENGINE !== "postgres")("the network to PostgreSQL cut (PostgreSQL)", () => {
  test("requests are given up with a 503 soon after the statement limit, /readyz is 503 within 2 s, and all goes on once the network is back", async () => {
    const target = new URL(TEST_PG_URL!);
    const proxy = await startPgProxy({ target: { host: target.hostname, port: Number(target.port) }, delayMs: 0 });
    const database = await createTestDatabase();
    const server = await startServer({ FLAGSTAFF_DATABASE_URL: proxy.url(database.url), FLAGSTAFF_DB_STATEMENT_TIMEOUT_MS: "1000", FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
    const report = () =>
      server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: { reason: "spam", target: { contentType: "post", contentExternalId: `cut-${crypto.randomUUID()}` } } });
    try {
      expect((await report()).status).toBe(201);
      proxy.pause();
      const started = Date.now();
      const [filed, listed, ready] = await Promise.all([report(), server.call("GET", "/reports?limit=5"), server.call("GET", `${server.url}/readyz`)]);
      expect(filed.status).toBe(503);
      expect(listed.status).toBe(503);
      expect(ready.status).toBe(503);
      // Given up: not held for the whole cut (the statement limit is 1 s; the network would hold them as long as it lasts).
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(server.proc?.exitCode).toBeNull();
      proxy.resume();
      const deadline = Date.now() + 15_000;
      let status = 0;
      while (status !== 201 && Date.now() < deadline) {
        status = (await report()).status;
        if (status !== 201) await Bun.sleep(200);
      }
      expect(status).toBe(201);
    } finally {
      proxy.resume();
      await server.dispose();
      await proxy.stop();
      await database.drop();
    }
  }, 45_000);
});
