/**
 * Operations: metrics, readiness, request ids in responses and logs, online backup, graceful
 * shutdown with a request in flight and its drain period, one instance per port. Real HTTP against `flagstaff serve` (test/helpers/server.ts).
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../src/config.ts";
import { findPgBinDir } from "../scripts/pg-cluster.ts";
import { createTestDatabase, databaseForPath, TEST_ENGINE, TEST_PG_URL } from "./helpers/pg.ts";
import { rawDb } from "./helpers/raw-db.ts";
import { engineEnv, ROOT, runCli, startServer, TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";
import { upload } from "./helpers/attachments.ts";

const report = (n: number) => ({ subject: { type: "user", externalId: `ops-${n}` }, target: { contentType: "post", contentExternalId: `post-${n % 7}` }, reason: "spam" });

describe("a running server", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({ FLAGSTAFF_LOG_LEVEL: "info", FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  });
  afterAll(async () => {
    await server.dispose();
  });

  test("GET /readyz answers 200 while serving", async () => {
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready" });
  });

  test("GET /metrics answers Prometheus text with requests per route and status, latency, job queue depth", async () => {
    const created = await server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: report(1) });
    expect(created.status).toBe(201);
    await server.call("GET", "/reports/nope");

    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
    const text = await res.text();
    expect(text).toContain("# TYPE flagstaff_http_requests_total counter");
    expect(text).toMatch(/^flagstaff_http_requests_total\{method="POST",route="\/sdk\/flagstaff\/v1\/projects\/:projectId\/reports",status="201"\} [1-9]\d*$/m);
    expect(text).toMatch(/^flagstaff_http_requests_total\{method="GET",route="\/sdk\/flagstaff\/v1\/reports\/:reportId",status="404"\} 1$/m);
    expect(text).toContain("# TYPE flagstaff_http_request_duration_seconds histogram");
    expect(text).toMatch(/^flagstaff_http_request_duration_seconds_bucket\{method="POST",route="\/sdk\/flagstaff\/v1\/projects\/:projectId\/reports",le="\+Inf"\} [1-9]/m);
    expect(text).toMatch(/^flagstaff_jobs\{status="pending"\} \d+$/m);
    expect(text).toMatch(/^flagstaff_jobs\{status="dead"\} \d+$/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d+$/m);
    // Every sample line is `name{labels} value` or `name value`.
    for (const line of text.trim().split("\n")) {
      if (!line.startsWith("#")) expect(line).toMatch(/^[a-z_]+(\{[^}]*\})? [-+0-9.eInfa]+$/);
    }
  });

  test("every answer carries x-request-id: the caller's when it offers a sane one, else a new one", async () => {
    const offered = await fetch(`${server.url}/healthz`, { headers: { "x-request-id": "ops-test-42" } });
    expect(offered.headers.get("x-request-id")).toBe("ops-test-42");
    const generated = await fetch(`${server.sdk}/projects/${server.demo.projectId}/reports`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.demo.secretKey}`, "content-type": "application/json" },
      body: JSON.stringify(report(2)),
    });
    expect(generated.status).toBe(201);
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const refused = await fetch(`${server.url}/nowhere`, { headers: { "x-request-id": "not ok, has spaces" } });
    expect(refused.status).toBe(404);
    expect(refused.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  test.skipIf(TEST_ENGINE !== "postgres")("flagstaff backup on PostgreSQL prints the pg_dump and pg_restore lines of docs/operations.md and writes nothing (PostgreSQL)", async () => {
    const file = join(server.dir, "backup.dump");
    const r = await runCli(["backup", file], server.env);
    expect(r.code).toBe(2);
    expect(existsSync(file)).toBe(false);
    const { dump, restore } = backupLines(r.stderr);
    expect(dump).toBe(`pg_dump --format=custom --exclude-table-data=rate_windows --file=${file} "$FLAGSTAFF_DATABASE_URL"`);
    expect(restore).toBe(`pg_restore --clean --if-exists --no-owner --dbname="$FLAGSTAFF_DATABASE_URL" ${file}`);
    // The lines the documentation gives are the same (but for the file's name).
    const docs = await Bun.file(join(ROOT, "docs", "operations.md")).text();
    const named = (line: string) => line.replace(file, "FILE");
    const documented = (tool: string) => docs.match(new RegExp(`^${tool} .*$`, "m"))![0].replace(/flagstaff-(\$\(date \+%F\)|[\d-]+)\.dump/, "FILE");
    expect(named(dump)).toBe(documented("pg_dump"));
    expect(named(restore)).toBe(documented("pg_restore"));
  });

  test.skipIf(TEST_ENGINE !== "postgres")("those lines, run as printed, restore the database into a new one whose instance is not throttled by the windows of before (PostgreSQL)", async () => {
    // A key allowed one report a minute, its window full.
    const created = await runCli(["keys", "create", "--project", server.demo.projectId, "--rate-limit", "1", "--json"], server.env);
    expect(created.code).toBe(0);
    const key = (JSON.parse(created.stdout) as { key: string }).key;
    expect((await server.call("POST", `/projects/${server.demo.projectId}/reports`, { key, body: report(901) })).status).toBe(201);
    expect((await server.call("POST", `/projects/${server.demo.projectId}/reports`, { key, body: report(902) })).status).toBe(429);
    const reportsBefore = (await server.call("GET", "/reports?limit=100")).body.reports.length as number;

    const dumpFile = join(server.dir, "restore-me.dump");
    const { dump, restore } = backupLines((await runCli(["backup", dumpFile], server.env)).stderr);
    const source = (await engineEnv(server.env)).FLAGSTAFF_DATABASE_URL!;
    const target = await createTestDatabase();
    // As an operator runs them: a shell, the URL in the environment, PostgreSQL's tools on PATH.
    const sh = async (line: string, url: string) => {
      const proc = Bun.spawn(["sh", "-c", line], { env: { PATH: `${findPgBinDir()}:${process.env.PATH}`, FLAGSTAFF_DATABASE_URL: url }, stdout: "pipe", stderr: "pipe" });
      const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
      expect([line, code, err]).toEqual([line, 0, ""]);
    };
    const restored = new TestServer(server.dir, { ...server.env, FLAGSTAFF_DATABASE_URL: target.url }, server.demo);
    try {
      await sh(dump, source);
      await sh(restore, target.url);
      await restored.start();
      expect((await restored.call("GET", "/reports?limit=100")).body.reports.length).toBe(reportsBefore);
      // The full window stayed behind: the key files its report at once on the restored instance.
      expect((await restored.call("POST", `/projects/${server.demo.projectId}/reports`, { key, body: report(903) })).status).toBe(201);
    } finally {
      await restored.stop();
      await target.drop();
    }
  });

  test.skipIf(TEST_ENGINE !== "sqlite")("flagstaff backup <file> makes a consistent copy while the server takes writes (SQLite)", async () => {
    for (let i = 0; i < 20; i++) expect((await server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: report(100 + i) })).status).toBe(201);
    // Keep writing while the backup runs.
    let writing = true;
    const writer = (async () => {
      let n = 1000;
      while (writing) await server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: report(n++) });
    })();
    // Evidence in the local attachment store: the backup copies it beside the database.
    const filed = await server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: report(99) });
    const caseId = (await server.call("GET", `/reports/${filed.body.report.id}`)).body.report.caseId;
    const evidence = new TextEncoder().encode(`evidence for the backup ${crypto.randomUUID()}`);
    const attached = await upload(server, `/organizations/${server.demo.orgSlug}/cases/${caseId}/attachments`, evidence, { fileName: "evidence.txt" });
    expect(attached.status).toBe(201);
    const file = join(server.dir, "backup.db");
    const r = await runCli(["backup", file], server.env);
    writing = false;
    await writer;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("backup written to");
    expect(r.stdout).toContain(`attachments copied to ${file}.attachments`);
    const sha = attached.body.attachment.sha256 as string;
    expect(readFileSync(join(`${file}.attachments`, "blobs", sha.slice(0, 2), sha))).toEqual(Buffer.from(evidence));
    expect(existsSync(join(`${file}.attachments`, "store-id"))).toBe(true);

    const copy = new Database(file, { readonly: true });
    try {
      expect(copy.query("PRAGMA integrity_check").values()).toEqual([["ok"]]);
      expect(copy.query("PRAGMA foreign_key_check").all()).toEqual([]);
      const reports = (copy.query("SELECT count(*) AS n FROM reports").get() as { n: number }).n;
      expect(reports).toBeGreaterThanOrEqual(22);
      // One snapshot: every report in the copy has its audit event and its reasons, and no more.
      const audited = (copy.query("SELECT count(*) AS n FROM audit_events WHERE action = 'REPORT_CREATED'").get() as { n: number }).n;
      expect(audited).toBe(reports);
      const withoutReasons = copy.query("SELECT count(*) AS n FROM reports r WHERE NOT EXISTS (SELECT 1 FROM report_reasons x WHERE x.report_id = r.id)").get() as { n: number };
      expect(withoutReasons.n).toBe(0);
      const caseTotal = (copy.query("SELECT sum(report_count) AS n FROM cases").get() as { n: number }).n;
      expect(caseTotal).toBe(reports);
    } finally {
      copy.close();
    }
    expect(existsSync(`${server.dbPath}-wal`) || existsSync(server.dbPath)).toBe(true);

    // A backup never replaces a file.
    const again = await runCli(["backup", file], server.env);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("already exists");
  });

  test("reports sent together share a commit, and a refused one fails alone", async () => {
    const before = await server.call("GET", `/reports?limit=1`);
    expect(before.status).toBe(200);
    const bodies = Array.from({ length: 24 }, (_, i) => (i % 6 === 3 ? { ...report(500 + i), reason: "no-such-reason" } : report(500 + i)));
    const answers = await Promise.all(bodies.map((body) => server.call("POST", `/projects/${server.demo.projectId}/reports`, { body })));
    expect(answers.map((a) => a.status)).toEqual(bodies.map((b) => (b.reason === "no-such-reason" ? 400 : 201)));
    const db = await rawDb(server.dbPath, { readonly: true });
    try {
      for (const a of answers.filter((x) => x.status === 201)) {
        expect(await db.get("SELECT count(*) AS n FROM reports WHERE id = ?", a.body.report.id)).toEqual({ n: 1 });
      }
      // The refused reports left no identity behind (their savepoints rolled back).
      for (const b of bodies.filter((x) => x.reason === "no-such-reason")) {
        expect(await db.get("SELECT count(*) AS n FROM identities WHERE external_id = ?", b.subject.externalId)).toEqual({ n: 0 });
      }
    } finally {
      await db.close();
    }
  });

  test("each request is one JSON log line on stderr with its request id, route and status", async () => {
    const res = await fetch(`${server.sdk}/projects/${server.demo.projectId}/reports`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.demo.secretKey}`, "content-type": "application/json", "x-request-id": "ops-log-7" },
      body: JSON.stringify(report(3)),
    });
    expect(res.status).toBe(201);
    // The helper collects stderr when the process ends.
    await server.stop();
    const lines = server.output
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const line = lines.find((l) => l.requestId === "ops-log-7");
    expect(line).toMatchObject({
      level: "info",
      msg: "request",
      method: "POST",
      path: `/sdk/flagstaff/v1/projects/${server.demo.projectId}/reports`,
      route: "/sdk/flagstaff/v1/projects/:projectId/reports",
      status: 201,
    });
    expect(typeof line?.durationMs).toBe("number");
    expect(typeof line?.time).toBe("string");
    expect(lines.some((l) => l.msg === "stopped")).toBe(true);
    // Group commit never saw the event loop turn inside a group (src/db/group-commit.ts).
    expect(lines.filter((l) => l.level === "error")).toEqual([]);
  });
});

describe("FLAGSTAFF_METRICS_TOKEN", () => {
  const token = "scrape-0123456789abcdef-token";
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({ FLAGSTAFF_METRICS_TOKEN: token });
  });
  afterAll(async () => {
    await server.dispose();
  });

  test("set, /metrics answers only `Authorization: Bearer <token>`; anyone else gets 401 { error }", async () => {
    const cases: [string, Record<string, string>][] = [
      ["no header", {}],
      ["a wrong token", { authorization: "Bearer scrape-0123456789abcdef-tokeX" }],
      ["a prefix of the token", { authorization: `Bearer ${token.slice(0, -1)}` }],
      ["another scheme", { authorization: `Basic ${btoa(`prometheus:${token}`)}` }],
      ["an API key", { authorization: `Bearer ${server.demo.secretKey}` }],
    ];
    for (const [what, headers] of cases) {
      const res = await fetch(`${server.url}/metrics`, { headers });
      expect([what, res.status]).toEqual([what, 401]);
      expect(res.headers.get("www-authenticate")).toStartWith("Bearer");
      const body = (await res.json()) as { error: string };
      expect(body.error).toContain("FLAGSTAFF_METRICS_TOKEN");
    }
    const ok = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("# TYPE flagstaff_http_requests_total counter");
    // Health and readiness stay open (balancers and orchestrators send no token).
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  test("a token too short, or with characters a header cannot carry, stops the start with a line naming it", () => {
    expect(() => loadConfig({ FLAGSTAFF_METRICS_TOKEN: "short" })).toThrow(/FLAGSTAFF_METRICS_TOKEN="short": .*16/);
    expect(() => loadConfig({ FLAGSTAFF_METRICS_TOKEN: "has spaces in it and is long" })).toThrow("FLAGSTAFF_METRICS_TOKEN");
    expect(loadConfig({ FLAGSTAFF_METRICS_TOKEN: token }).metricsToken).toBe(token);
    expect(loadConfig({}).metricsToken).toBeNull();
  });
});

/**
 * A report whose body arrives in two parts: in flight until the test calls sendRest. Resolves
 * once the server counts it in flight (the metrics scrape itself is the other one).
 */
async function slowReport(server: TestServer): Promise<{ inFlight: Promise<Response>; sendRest: () => void }> {
  const body = JSON.stringify(report(9));
  const half = Math.floor(body.length / 2);
  let sendRest!: () => void;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(body.slice(0, half)));
      sendRest = () => {
        controller.enqueue(new TextEncoder().encode(body.slice(half)));
        controller.close();
      };
    },
  });
  const inFlight = fetch(`${server.sdk}/projects/${server.demo.projectId}/reports`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.demo.secretKey}`, "content-type": "application/json" },
    body: stream,
  });
  await until("the slow request in flight", async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    return Number(/^flagstaff_http_requests_in_flight (\d+)$/m.exec(text)?.[1] ?? 0) >= 2;
  });
  return { inFlight, sendRest };
}

/** The slow report was stored, and no job is left leased to the stopped process. */
async function expectStoppedCleanly(server: TestServer, reportId: string): Promise<void> {
  const db = await rawDb(server.dbPath, { readonly: true });
  try {
    expect(await db.get("SELECT id FROM reports WHERE id = ?", reportId)).toEqual({ id: reportId });
    // Running jobs finished or were given back: none is left leased to the stopped process.
    expect((await db.get<{ n: number }>("SELECT count(*) AS n FROM jobs WHERE status = 'running'"))?.n).toBe(0);
  } finally {
    await db.close();
  }
}

/** The pg_dump and pg_restore lines `flagstaff backup` prints on PostgreSQL. */
function backupLines(stderr: string): { dump: string; restore: string } {
  const line = (tool: string) => stderr.split("\n").find((l) => l.startsWith(`  ${tool} `))?.trim();
  const dump = line("pg_dump");
  const restore = line("pg_restore");
  if (!dump || !restore) throw new Error(`flagstaff backup printed no pg_dump or pg_restore line:\n${stderr}`);
  return { dump, restore };
}

/** A request on a connection of its own (none kept alive from an earlier one). */
const freshFetch = (url: string, init: RequestInit = {}) => fetch(url, { ...init, keepalive: false, headers: { ...init.headers, connection: "close" } });
const listenerClosed = (server: TestServer) => freshFetch(`${server.url}/healthz`).then(() => false, () => true);

describe("SIGTERM", () => {
  test("without a drain period: a request in flight finishes; new connections are refused; the process exits 0", async () => {
    const server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000", FLAGSTAFF_SHUTDOWN_DRAIN_MS: "0" });
    try {
      const { inFlight, sendRest } = await slowReport(server);
      const proc = server.proc!;
      proc.kill("SIGTERM");
      // Shutdown begins: the listener closes, so a new request cannot get in.
      await until("the listener to close", () => listenerClosed(server), 5_000);
      expect(proc.exitCode).toBeNull(); // still finishing the request in flight

      sendRest();
      const res = await inFlight;
      expect(res.status).toBe(201);
      const created = (await res.json()) as { report: { id: string } };
      expect(await proc.exited).toBe(0);
      server.proc = null;
      await expectStoppedCleanly(server, created.report.id);
    } finally {
      await server.dispose();
    }
  });

  test("during the drain /readyz answers 503 while requests are still served, each answer closing its connection; a second signal ends the drain, then the request in flight finishes", async () => {
    // A drain far longer than the test: only the second signal ends it.
    const server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000", FLAGSTAFF_SHUTDOWN_DRAIN_MS: "600000" });
    try {
      const { inFlight, sendRest } = await slowReport(server);
      const ready = await freshFetch(`${server.url}/readyz`);
      expect([ready.status, await ready.json()]).toEqual([200, { status: "ready" }]);
      expect(ready.headers.get("connection")).not.toBe("close");

      const proc = server.proc!;
      proc.kill("SIGTERM");
      const draining = await until("/readyz to answer 503", async () => {
        const r = await freshFetch(`${server.url}/readyz`);
        return r.status === 503 ? r : null;
      });
      expect(await draining.json()).toEqual({ status: "draining" });
      expect(draining.headers.get("connection")).toBe("close");

      // New connections are still accepted and answered: a report, a read, liveness.
      const filed = await freshFetch(`${server.sdk}/projects/${server.demo.projectId}/reports`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.demo.secretKey}`, "content-type": "application/json" },
        body: JSON.stringify(report(77)),
      });
      expect(filed.status).toBe(201);
      expect(filed.headers.get("connection")).toBe("close");
      const during = (await filed.json()) as { report: { id: string } };
      expect((await server.call("GET", `/reports/${during.report.id}`)).status).toBe(200);
      expect((await freshFetch(`${server.url}/healthz`)).status).toBe(200);
      expect(proc.exitCode).toBeNull();

      proc.kill("SIGTERM"); // ends the drain
      await until("the listener to close", () => listenerClosed(server), 5_000);
      expect(proc.exitCode).toBeNull(); // still finishing the request in flight
      sendRest();
      const res = await inFlight;
      expect(res.status).toBe(201);
      const created = (await res.json()) as { report: { id: string } };
      expect(await proc.exited).toBe(0);
      server.proc = null;
      await expectStoppedCleanly(server, created.report.id);
    } finally {
      await server.dispose();
    }
  });

  test("the drain ends by itself after FLAGSTAFF_SHUTDOWN_DRAIN_MS, then the listener closes and the process exits 0", async () => {
    const drainMs = 1_500;
    const server = await startServer({ FLAGSTAFF_SHUTDOWN_DRAIN_MS: String(drainMs), FLAGSTAFF_LOG_LEVEL: "info" });
    try {
      const proc = server.proc!;
      const signalled = performance.now();
      proc.kill("SIGTERM");
      await until("/readyz to answer 503", async () => (await freshFetch(`${server.url}/readyz`)).status === 503);
      expect((await freshFetch(`${server.url}/healthz`)).status).toBe(200);
      await until("the listener to close", () => listenerClosed(server), 20_000);
      expect(performance.now() - signalled).toBeGreaterThanOrEqual(drainMs);
      expect(await proc.exited).toBe(0);
      server.proc = null;
      const lines = server.output.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.find((l) => l.msg === "shutting down")).toMatchObject({ signal: "SIGTERM", drainMs });
    } finally {
      await server.dispose();
    }
  });
});

describe("one instance per port", () => {
  test("a second instance on a port in use stops with exit code 1 and a line naming the port; the first serves alone", async () => {
    const first = await startServer();
    const otherDb = join(first.dir, "second.db");
    try {
      const port = new URL(first.url).port;
      // Another database behind the same port: before the fix, both served and answers alternated 200 and 401.
      const second = Bun.spawn([process.execPath, join(ROOT, "src", "cli.ts"), "serve"], {
        env: await engineEnv({ FLAGSTAFF_DB: otherDb, PORT: port, HOST: "127.0.0.1", FLAGSTAFF_LOG_LEVEL: "warn" }),
        stdout: "pipe",
        stderr: "pipe",
      });
      const exited = await Promise.race([second.exited, Bun.sleep(20_000).then(() => null)]);
      if (exited === null) second.kill("SIGKILL");
      const [stdout, stderr] = await Promise.all([new Response(second.stdout).text(), new Response(second.stderr).text()]);
      expect([exited, stdout]).toEqual([1, ""]);
      expect(stderr).toContain(`flagstaff: port ${port} on 127.0.0.1 is already in use`);
      expect(stderr).toContain("FLAGSTAFF_REUSE_PORT");
      // Every answer is the first instance's (its key is known to its database only).
      for (let i = 0; i < 20; i++) {
        const r = await freshFetch(`${first.sdk}/reports?limit=1`, { headers: { authorization: `Bearer ${first.demo.secretKey}` } });
        expect(r.status).toBe(200);
      }
    } finally {
      await first.dispose();
      if (TEST_PG_URL) await (await databaseForPath(otherDb)).drop();
    }
  });

  test("FLAGSTAFF_REUSE_PORT is refused on SQLite (two processes would both write its file)", () => {
    expect(() => loadConfig({ FLAGSTAFF_REUSE_PORT: "1" })).toThrow(/FLAGSTAFF_REUSE_PORT.*FLAGSTAFF_DATABASE_URL/s);
    expect(loadConfig({ FLAGSTAFF_REUSE_PORT: "1", FLAGSTAFF_DATABASE_URL: "postgres://x@localhost/db" }).reusePort).toBe(true);
    expect(loadConfig({}).reusePort).toBe(false);
  });

  test.skipIf(TEST_ENGINE !== "postgres")("with FLAGSTAFF_REUSE_PORT=1 on each, two instances of one database share a port (PostgreSQL)", async () => {
    const first = await startServer({ FLAGSTAFF_REUSE_PORT: "1" });
    const second = new TestServer(first.dir, { ...first.env, PORT: new URL(first.url).port }, first.demo);
    try {
      await second.start();
      expect(second.url).toBe(first.url);
      for (let i = 0; i < 20; i++) expect((await freshFetch(`${first.url}/readyz`)).status).toBe(200);
    } finally {
      await second.stop();
      await first.dispose();
    }
  });
});
