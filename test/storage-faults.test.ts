/**
 * SQLite on a disk that fills up (issue 30): report creations are answered 503 with Retry-After
 * (never 500), /readyz turns 503 so a load balancer stops sending traffic, and once space is
 * freed the same process serves again by itself; nothing acknowledged is lost and the database
 * stays intact. The disk is a small tmpfs, mounted for the test: that needs root (CI runs as
 * root); elsewhere the test is skipped, and says so in its name.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { TEST_ENGINE } from "./helpers/pg.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

const isRoot = process.getuid?.() === 0;
const mountPoint = mkdtempSync(join(tmpdir(), "flagstaff-small-disk-"));
let mounted = false;
let server: TestServer;

const runs = TEST_ENGINE === "sqlite" && isRoot;
const title = runs ? "a full disk under SQLite (SQLite)" : "a full disk under SQLite (SQLite; skipped: mounting a small tmpfs needs root)";

describe.skipIf(!runs)(title, () => {
  beforeAll(async () => {
    const m = spawnSync("mount", ["-t", "tmpfs", "-o", "size=24m", "tmpfs", mountPoint]);
    if (m.status !== 0) throw new Error(`mount failed: ${m.stderr}`);
    mounted = true;
    server = await startServer({ FLAGSTAFF_DB: join(mountPoint, "flagstaff.db"), FLAGSTAFF_REPORT_RATE_LIMIT: "1000000" });
  });
  afterAll(async () => {
    await server?.dispose();
    if (mounted) spawnSync("umount", [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  test("writes answer 503 and readiness 503 while the disk is full; space freed, the same process serves again, nothing acknowledged lost", async () => {
    const body = (i: number) => ({ reason: "spam", description: "x".repeat(2000), target: { contentType: "post", contentExternalId: `full-${i}`, content: "y".repeat(8000) } });
    const report = (i: number) => server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: body(i) });
    const acknowledged: string[] = [];
    const statuses = new Map<number, number>();
    // Fill the disk: a file takes all but a little of it, then reports take the rest.
    const filler = join(mountPoint, "filler");
    const fd = openSync(filler, "w");
    const chunk = Buffer.alloc(1 << 20);
    try {
      for (;;) writeSync(fd, chunk);
    } catch {
      // ENOSPC: full
    } finally {
      closeSync(fd);
    }
    let refused = null as Awaited<ReturnType<typeof report>> | null;
    for (let i = 0; i < 2000 && !refused; i++) {
      const r = await report(i);
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status === 201) acknowledged.push(r.body.report.id);
      else refused = r;
    }
    expect(refused?.status).toBe(503);
    expect(refused?.headers.get("retry-after")).toBe("1");
    expect(String(refused?.body.error)).toContain("out of disk space");
    // More of them: 503 each time, never a 500.
    for (let i = 0; i < 20; i++) expect((await report(5000 + i)).status).toBe(503);
    const notReady = await server.call("GET", `${server.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(String(notReady.body.error)).toContain("disk space");
    expect((await server.call("GET", "/healthz")).status).toBe(200);
    expect(server.proc?.exitCode).toBeNull();

    // Space freed: ready again within seconds, reports accepted, by the same process.
    unlinkSync(filler);
    await until("ready again", async () => (await server.call("GET", `${server.url}/readyz`)).status === 200, 10_000);
    const after = await report(9000);
    expect(after.status).toBe(201);
    acknowledged.push(after.body.report.id);
    expect(statuses.get(500)).toBeUndefined();

    await server.stop();
    const db = new Database(join(mountPoint, "flagstaff.db"), { readonly: true });
    try {
      expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      const stored = new Set((db.query("SELECT id FROM reports").all() as { id: string }[]).map((r) => r.id));
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    } finally {
      db.close();
    }
  }, 60_000);
});
