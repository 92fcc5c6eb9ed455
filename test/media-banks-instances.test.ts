/**
 * Two instances on one PostgreSQL database matching media (docs/media.md, "Several instances"):
 * each holds its own in-memory index of the project's banks and reads the banks' version before
 * every match, so an entry added through one instance is matched by both from their next match.
 * Media jobs are taken by whichever instance claims them: reports are filed through both, before
 * and after the entry is added, so that both instances hold an index built before the change.
 * PostgreSQL only: one SQLite database serves one process.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEST_ENGINE } from "./helpers/pg.ts";
import { startServer, TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

const ENV = { FLAGSTAFF_JOB_POLL_MS: "50", FLAGSTAFF_REPORT_RATE_LIMIT: "1000" };
const sha = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");

let a: TestServer;
let b: TestServer;

describe.skipIf(TEST_ENGINE !== "postgres")("media banks on two instances (PostgreSQL)", () => {
  beforeAll(async () => {
    a = await startServer(ENV);
    b = new TestServer(mkdtempSync(join(tmpdir(), "flagstaff-test-b-")), a.env, a.demo);
    await b.start();
  }, 60_000);
  afterAll(async () => {
    await b?.stop();
    await a?.dispose();
  });

  test("an entry added through one instance is matched through both, from their next match", async () => {
    const { orgSlug, projectId } = a.demo;
    const orgA = await a.orgClient();
    const orgB = await b.orgClient();
    const bank = (await orgA.POST("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: { orgSlug, projectId } }, body: { name: "Shared list" } })).data!.bank;
    const first = sha("first");
    const later = sha("added later");
    await orgA.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId: bank.id } }, body: { signalType: "sha256", value: first } });

    /** Files a report with one digest through `server`; answers its case. */
    const file = async (server: TestServer, digest: string) => {
      const sdk = await server.sdkClient();
      const r = await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { reason: "spam", target: { contentType: "post", contentExternalId: crypto.randomUUID() }, media: [{ sha256: digest }] } });
      expect(r.response.status).toBe(201);
      return (await sdk.GET("/reports/{reportId}", { params: { path: { reportId: r.data!.report.id } } })).data!.report.caseId;
    };
    const matched = (caseId: string) =>
      until(`case ${caseId} matched`, async () => {
        const m = (await orgA.GET("/organizations/{orgSlug}/cases/{caseId}/media-matches", { params: { path: { orgSlug, caseId } } })).data!;
        return m.media.every((x) => x.matchedAt !== null) ? m.matches : null;
      });

    // Both instances build their index (the jobs go to whichever claims them first).
    const warm = await Promise.all([a, b, a, b, a, b].map((s) => file(s, first)));
    for (const caseId of warm) expect(await matched(caseId)).toHaveLength(1);

    // Added through the second instance; reports through both, at once.
    const added = await orgB.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId: bank.id } }, body: { signalType: "sha256", value: later } });
    expect(added.response.status).toBe(201);
    const since = performance.now();
    const after = await Promise.all([a, b, a, b, a, b].map((s) => file(s, later)));
    for (const caseId of after) expect((await matched(caseId)).map((m) => m.entry.id)).toEqual([added.data!.entry.id]);
    console.log(`an entry added on one instance: 6 reports through both matched it within ${Math.round(performance.now() - since)} ms`);
  }, 60_000);
});
