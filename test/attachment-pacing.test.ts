/**
 * Uploads' share of a busy server (docs/attachments.md, "Sharing the CPU";
 * src/domain/attachments/upload-pacing.ts): while the server serves other requests, uploads'
 * bytes are let in at FLAGSTAFF_ATTACHMENT_BUSY_BYTES_PER_S, each upload waiting its turn with
 * its body unread; idle, they go at once. Through the front door, then the rule in process.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { upload } from "./helpers/attachments.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { noteRequestStarted } from "../src/domain/plumbing/serving-load.ts";
import { BUSY_REQUESTS_PER_S, MAX_WAIT_MS, setUploadPacing, uploadTurn } from "../src/domain/attachments/upload-pacing.ts";

const RATE = 1024 * 1024;
/** A PDF of `bytes` bytes, distinct each time. */
function pdf(bytes: number): Uint8Array {
  const head = new TextEncoder().encode(`%PDF-1.4\n% ${crypto.randomUUID()}\n`);
  const out = new Uint8Array(bytes).fill(0x20);
  out.set(head);
  return out;
}

describe("uploads paced while the server is busy", () => {
  let server: TestServer;
  let path: string;
  let busy = false;
  let loop: Promise<void> = Promise.resolve();

  beforeAll(async () => {
    server = await startServer({ FLAGSTAFF_ATTACHMENT_BUSY_BYTES_PER_S: String(RATE), FLAGSTAFF_ATTACHMENT_MAX_BYTES: String(4 * RATE), FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
    const filed = await server.call("POST", `/projects/${server.demo.projectId}/reports`, { key: server.demo.secretKey, body: { reason: "spam", target: { contentType: "post", contentExternalId: "post-pacing", content: "Look" } } });
    const caseId = (await server.call("GET", `/reports/${filed.body.report.id}`, { key: server.demo.secretKey })).body.report.caseId as string;
    path = `/organizations/${server.demo.orgSlug}/cases/${caseId}/attachments`;
  });
  afterAll(async () => {
    busy = false;
    await loop;
    await server?.dispose();
  });

  /** Other requests, about 100 a second, until `busy` is false. */
  function keepBusy(): void {
    busy = true;
    loop = (async () => {
      while (busy) {
        await Promise.all([fetch(`${server.url}/healthz`).then((r) => r.arrayBuffer()), Bun.sleep(10)]);
      }
    })();
  }
  const spools = () => {
    const tmp = join(server.dir, "attachments", "tmp");
    return existsSync(tmp) ? readdirSync(tmp).filter((n) => n.startsWith("upload-")) : [];
  };

  test("idle, uploads go at once; busy, the next waits for the bytes before it, its body unread meanwhile", async () => {
    let started = performance.now();
    for (let i = 0; i < 3; i++) expect((await upload(server, path, pdf(RATE), { fileName: "a.pdf" })).status).toBe(201);
    const idleMs = performance.now() - started;
    expect(idleMs).toBeLessThan(900);

    keepBusy();
    await Bun.sleep(1_200);
    started = performance.now();
    // The first goes at once and reserves a second; the second waits for it, unread (no spool file), then a second more.
    expect((await upload(server, path, pdf(RATE), { fileName: "b.pdf" })).status).toBe(201);
    let answered = false;
    const second = upload(server, path, pdf(RATE), { fileName: "c.pdf" }).finally(() => (answered = true));
    await Bun.sleep(300);
    expect(answered).toBe(false);
    expect(spools()).toEqual([]);
    expect((await second).status).toBe(201);
    expect((await upload(server, path, pdf(RATE), { fileName: "d.pdf" })).status).toBe(201);
    const busyMs = performance.now() - started;
    busy = false;
    await loop;
    expect(busyMs).toBeGreaterThan(1_800);
  }, 30_000);

  test("an upload that waits longer than the connection's idle timeout (10 s) is still served", async () => {
    keepBusy();
    await Bun.sleep(1_200);
    // 4 MiB each at 1 MiB a second: they wait about 0, 4, 8 and 12 s, the last one's connection idle all that time.
    const big = [pdf(4 * RATE), pdf(4 * RATE), pdf(4 * RATE), pdf(4 * RATE)];
    const started = performance.now();
    const answers = await Promise.all(
      big.map(async (bytes, i) => {
        await Bun.sleep(i * 50);
        return upload(server, path, bytes, { fileName: `big-${i}.pdf` });
      }),
    );
    const ms = performance.now() - started;
    busy = false;
    await loop;
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    // The last waited for the three before it: about 12 s.
    expect(ms).toBeGreaterThan(11_000);
  }, 40_000);
});

describe("the pacing rule", () => {
  const busyAt = (now: number) => {
    for (let i = 0; i < BUSY_REQUESTS_PER_S + 5; i++) noteRequestStarted(now);
  };

  test("no wait while idle or with pacing off; in order of arrival while busy; no wait beyond the bound", () => {
    setUploadPacing(RATE);
    const t0 = 1_000_000_000_000;
    expect(uploadTurn(10 * RATE, t0)).toBe(0); // idle: nothing reserved
    expect(uploadTurn(10 * RATE, t0 + 1)).toBe(0);
    busyAt(t0 + 5_000);
    expect(uploadTurn(RATE, t0 + 5_000)).toBe(0);
    expect(uploadTurn(2 * RATE, t0 + 5_000)).toBe(1_000);
    expect(uploadTurn(RATE, t0 + 5_500)).toBe(2_500);
    // A burst: the waits stop at the bound.
    busyAt(t0 + 5_600);
    expect(uploadTurn(100 * RATE, t0 + 5_600)).toBe(3_400);
    expect(uploadTurn(RATE, t0 + 5_600)).toBe(MAX_WAIT_MS);
    // Off: no wait.
    setUploadPacing(0);
    busyAt(t0 + 5_700);
    expect(uploadTurn(RATE, t0 + 5_700)).toBe(0);
  });
});
