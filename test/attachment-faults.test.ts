/**
 * Attachments when things fail (issue 42, docs/attachments.md, "What a crash leaves" and
 * "Operations"): a SIGKILL in the middle of an upload, and the states a crash between the store
 * and the database leaves, are cleaned up by the sweep (no row, no orphan); a full disk (a small
 * tmpfs holding the attachment store, mounted for the test: root) and an unreachable object store
 * answer 503 with Retry-After, keep nothing of the upload, lose nothing acknowledged, and
 * /readyz says so until they recover; instances sharing PostgreSQL refuse separate local stores.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startS3, upload, type S3Server } from "./helpers/attachments.ts";
import { TEST_ENGINE } from "./helpers/pg.ts";
import { rawDb } from "./helpers/raw-db.ts";
import { engineEnv, startServer, TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

const isRoot = process.getuid?.() === 0;
const unique = () => crypto.randomUUID().slice(0, 8);
const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

async function newCase(server: TestServer): Promise<string> {
  const filed = await server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: { reason: "spam", target: { contentType: "post", contentExternalId: `post-${unique()}`, content: "Look" } } });
  expect(filed.status).toBe(201);
  return (await server.call("GET", `/reports/${filed.body.report.id}`)).body.report.caseId;
}

const listFiles = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name) : []);

describe("a crash in the middle of an upload: no row, and no orphan once the sweep ran", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ FLAGSTAFF_ATTACHMENT_ORPHAN_MS: "1000", FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  });
  afterAll(async () => {
    await server?.dispose();
  });

  test("SIGKILL while the body streams; a crash's other leftovers (an object leased by an upload that never committed, an object without a row); the sweep at the next start deletes them all", async () => {
    const caseId = await newCase(server);
    const store = join(server.dir, "attachments");
    const kept = new TextEncoder().encode(`acknowledged ${unique()}`);
    const ack = await upload(server, `/organizations/${server.demo.orgSlug}/cases/${caseId}/attachments`, kept, { fileName: "kept.txt" });
    expect(ack.status).toBe(201);

    // A body sent slowly: the server is killed once part of it is in its spool.
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent >= 64) return controller.close();
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x61));
        sent++;
        await Bun.sleep(20);
      },
    });
    const answer = upload(server, `/organizations/${server.demo.orgSlug}/cases/${caseId}/attachments`, body, { fileName: "cut.txt" }).catch((err: unknown) => err);
    await until("part of the upload in the spool", async () => listFiles(join(store, "tmp")).some((n) => n.startsWith("upload-")));
    await server.kill();
    expect(await answer).toBeInstanceOf(Error); // never acknowledged
    expect(listFiles(join(store, "tmp")).filter((n) => n.startsWith("upload-"))).toHaveLength(1);

    // What a crash between the object and its row leaves, written as it would be: an object whose
    // blob row is leased by an upload that never committed, and an object with no row at all.
    const leased = new TextEncoder().encode(`leased ${unique()}`);
    const stray = new TextEncoder().encode(`stray ${unique()}`);
    const old = Date.now() - 60_000;
    const db = await rawDb(server.dbPath);
    try {
      await db.run(
        "INSERT INTO attachment_blobs (id, size_bytes, media_type, pending_uploads, held_until, preview_status, created_at) VALUES (?, ?, 'text', 1, ?, 'none', ?)",
        sha256(leased),
        leased.length,
        old,
        old,
      );
    } finally {
      await db.close();
    }
    for (const bytes of [leased, stray]) {
      const sha = sha256(bytes);
      mkdirSync(join(store, "blobs", sha.slice(0, 2)), { recursive: true });
      writeFileSync(join(store, "blobs", sha.slice(0, 2), sha), bytes);
      utimesSync(join(store, "blobs", sha.slice(0, 2), sha), old / 1000, old / 1000);
    }
    // The spool is older than FLAGSTAFF_ATTACHMENT_ORPHAN_MS (1 s) by the time the sweep sees it.
    for (const name of listFiles(join(store, "tmp"))) utimesSync(join(store, "tmp", name), old / 1000, old / 1000);

    await server.start(); // the sweep runs at start
    await until("the sweep", async () => listFiles(join(store, "tmp")).filter((n) => n.startsWith("upload-")).length === 0 && listFiles(join(store, "blobs")).length === 1, 20_000);
    expect(listFiles(join(store, "blobs"))).toEqual([ack.body.attachment.sha256]);
    const after = await rawDb(server.dbPath);
    try {
      expect(await after.all("SELECT file_name FROM attachments WHERE case_id = ?", caseId)).toEqual([{ file_name: "kept.txt" }]);
      expect((await after.all<{ id: string }>("SELECT id FROM attachment_blobs")).map((r) => r.id)).toEqual([ack.body.attachment.sha256]);
    } finally {
      await after.close();
    }
    // Nothing acknowledged was lost.
    const download = await fetch(`${server.url}${ack.body.attachment.contentUrl}`, { headers: { authorization: `Bearer ${server.demo.secretKey}` } });
    expect(await download.text()).toBe(new TextDecoder().decode(kept));
  }, 60_000);
});

const mountPoint = mkdtempSync(join(tmpdir(), "flagstaff-small-store-"));
let mounted = false;
const fullDiskTitle = isRoot ? "a full disk under the attachment store" : "a full disk under the attachment store (skipped: mounting a small tmpfs needs root)";

describe.skipIf(!isRoot)(fullDiskTitle, () => {
  let server: TestServer;
  beforeAll(async () => {
    const m = spawnSync("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", mountPoint]);
    if (m.status !== 0) throw new Error(`mount failed: ${m.stderr}`);
    mounted = true;
    // The database elsewhere: the store alone fills up.
    server = await startServer({ FLAGSTAFF_ATTACHMENTS_DIR: join(mountPoint, "attachments"), FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  });
  afterAll(async () => {
    await server?.dispose();
    if (mounted) spawnSync("umount", [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  test("an upload answers 503 with Retry-After, keeps nothing, loses nothing acknowledged; /readyz says so; space freed, uploads go through again", async () => {
    const caseId = await newCase(server);
    const path = `/organizations/${server.demo.orgSlug}/cases/${caseId}/attachments`;
    const before = new Uint8Array(1024 * 1024).fill(0x62);
    const ack = await upload(server, path, before, { fileName: "before.txt" });
    expect(ack.status).toBe(201);

    // Fill the disk: a file takes all of it.
    const filler = join(mountPoint, "filler");
    try {
      for (let i = 0; i < 128; i++) appendFileSync(filler, new Uint8Array(128 * 1024));
    } catch {
      // ENOSPC: full
    }

    const refused = await upload(server, path, new Uint8Array(3 * 1024 * 1024).fill(0x63), { fileName: "big.txt" });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBeTruthy();
    expect(String(refused.body.error)).toContain("out of disk space");
    const notReady = await server.call("GET", `${server.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(String(notReady.body.error)).toContain("attachment store out of disk space");
    // Nothing of it kept: no spool, no row.
    expect(listFiles(join(mountPoint, "attachments", "tmp")).filter((n) => n.startsWith("upload-"))).toEqual([]);
    const db = await rawDb(server.dbPath);
    try {
      expect(await db.all("SELECT file_name FROM attachments WHERE case_id = ?", caseId)).toEqual([{ file_name: "before.txt" }]);
    } finally {
      await db.close();
    }
    // The acknowledged one is whole.
    const download = await fetch(`${server.url}${ack.body.attachment.contentUrl}`, { headers: { authorization: `Bearer ${server.demo.secretKey}` } });
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(before))).toBe(true);

    rmSync(filler);
    await until("ready again", async () => (await server.call("GET", `${server.url}/readyz`)).status === 200, 10_000);
    expect((await upload(server, path, new Uint8Array(3 * 1024 * 1024).fill(0x63), { fileName: "big.txt" })).status).toBe(201);
  }, 60_000);
});

describe("an object store that cannot be reached", () => {
  let server: TestServer;
  let s3: S3Server;
  beforeAll(async () => {
    s3 = await startS3();
    server = await startServer({ ...s3.env, FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  });
  afterAll(async () => {
    await server?.dispose();
    await s3?.stop();
  });

  test("an upload and a download answer 503 with Retry-After, nothing kept; /readyz says so; back, both go through", async () => {
    const caseId = await newCase(server);
    const path = `/organizations/${server.demo.orgSlug}/cases/${caseId}/attachments`;
    const kept = new TextEncoder().encode(`kept ${unique()}`);
    const ack = await upload(server, path, kept, { fileName: "kept.txt" });
    expect(ack.status).toBe(201);

    // The store goes away (its objects stay on its disk).
    await s3.close();
    const refused = await upload(server, path, new TextEncoder().encode(`lost ${unique()}`), { fileName: "lost.txt" });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBeTruthy();
    expect(String(refused.body.error)).toContain("object store");
    const download = await fetch(`${server.url}${ack.body.attachment.contentUrl}`, { headers: { authorization: `Bearer ${server.demo.secretKey}` } });
    expect(download.status).toBe(503);
    expect(download.headers.get("retry-after")).toBeTruthy();
    const notReady = await server.call("GET", `${server.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(String(notReady.body.error)).toContain("unreachable");
    expect(listFiles(join(server.dir, "attachments", "tmp")).filter((n) => n.startsWith("upload-"))).toEqual([]);

    // Back on the same port.
    await s3.reopen();
    await until("ready again", async () => (await server.call("GET", `${server.url}/readyz`)).status === 200, 10_000);
    expect((await upload(server, path, new TextEncoder().encode(`after ${unique()}`), { fileName: "after.txt" })).status).toBe(201);
    const db = await rawDb(server.dbPath);
    try {
      expect((await db.all<{ file_name: string }>("SELECT file_name FROM attachments WHERE case_id = ? ORDER BY created_at", caseId)).map((r) => r.file_name)).toEqual(["kept.txt", "after.txt"]);
    } finally {
      await db.close();
    }
  }, 60_000);
});

describe.skipIf(TEST_ENGINE !== "postgres")("instances sharing PostgreSQL share one attachment store (PostgreSQL)", () => {
  let a: TestServer;
  beforeAll(async () => {
    a = await startServer({});
  });
  afterAll(async () => {
    await a?.dispose();
  });

  test("a second instance with a local directory of its own refuses to start, saying what to set; one sharing the directory starts", async () => {
    const other = mkdtempSync(join(tmpdir(), "flagstaff-other-store-"));
    try {
      const proc = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src", "cli.ts"), "serve"], {
        env: await engineEnv({ ...a.env, FLAGSTAFF_ATTACHMENTS_DIR: join(other, "attachments") }),
        stdout: "pipe",
        stderr: "pipe",
      });
      const code = await Promise.race([proc.exited, Bun.sleep(20_000).then(() => "still running")]);
      if (code === "still running") proc.kill("SIGKILL");
      expect(code).toBe(2);
      const stderr = await new Response(proc.stderr).text();
      expect(stderr).toContain("FLAGSTAFF_S3_BUCKET");
      expect(stderr).toContain("another store");
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
    // The same directory (the same FLAGSTAFF_DB's default): it starts.
    const b = new TestServer(mkdtempSync(join(tmpdir(), "flagstaff-test-b-")), a.env, a.demo);
    await b.start();
    expect((await b.call("GET", `${b.url}/readyz`)).status).toBe(200);
    await b.stop();
  }, 60_000);
});
