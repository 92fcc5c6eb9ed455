/**
 * The contract test: every REST route, SDK and organization, is called through the typed
 * client generated from the published documents (clients/typescript), through its success and
 * each error status it documents, and every answer is validated against the document the
 * server publishes (status documented, body valid JSON Schema 2020-12 by ajv, required headers
 * present: test/helpers/contract.ts). The last test fails when a documented answer was never
 * produced, so the documents can neither miss a status nor list one the server cannot give.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import type { OrgClient, SdkClient } from "../clients/typescript/index.ts";
import { checkedOrgClient, checkedSdkClient, contractOf, type Contract, type Family } from "./helpers/contract.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";
import { flatPng } from "./helpers/attachments.ts";

let server: TestServer;
let fake: FakeOllama;
let receiver: ReturnType<typeof Bun.serve>;
let contract: Contract;
let sdk: SdkClient;
let org: OrgClient;
let orgSlug: string;
let projectId: string;

/** The organization's limits of rules and webhook endpoints here (src/domain/core/holding-limits.ts). */
const MAX_RULES = 12;
const MAX_WEBHOOK_ENDPOINTS = 6;

/**
 * Creates with `create(n)` (201 each) until it is refused, which must be a 409 naming `setting`
 * before `max` were made; answers the ids made, for the caller to delete.
 */
async function fillUntilRefused(setting: string, max: number, create: (n: number) => Promise<{ status: number; id?: string; error?: string }>): Promise<string[]> {
  const made: string[] = [];
  for (;;) {
    const next = await create(made.length);
    if (next.status !== 201) {
      expect(next.status).toBe(409);
      expect(next.error).toContain(setting);
      return made;
    }
    made.push(next.id!);
    expect(made.length).toBeLessThan(max);
  }
}

/** Real values for every path parameter, gathered as the scenarios create things. */
const ids: Record<string, string> = {};
/** A second project of the same organization and its publishable key (a 403 everywhere here). */
let otherPublishableKey = "";

beforeAll(async () => {
  fake = startFakeOllama();
  receiver = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(null, { status: 204 }) });
  server = await startServer({
    OLLAMA_HOST: fake.url,
    FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
    FLAGSTAFF_REPORT_RATE_LIMIT: "1000",
    FLAGSTAFF_JOB_POLL_MS: "100",
    // Small attachment limits, so that each refusal is reached (below the sweep's 300 kB body).
    FLAGSTAFF_ATTACHMENT_MAX_BYTES: "250000",
    FLAGSTAFF_ATTACHMENTS_PER_CASE: "3",
    // Small holding limits, so that the 409 past each is reached.
    FLAGSTAFF_MAX_RULES: String(MAX_RULES),
    FLAGSTAFF_MAX_WEBHOOK_ENDPOINTS: String(MAX_WEBHOOK_ENDPOINTS),
  });
  contract = await contractOf(server.url);
  sdk = await checkedSdkClient(server.url, server.demo.secretKey);
  org = await checkedOrgClient(server.url, server.demo.secretKey);
  orgSlug = server.demo.orgSlug;
  projectId = server.demo.projectId;
  Object.assign(ids, { orgSlug, projectId, typeName: "user", externalId: "u-1" });
});

afterAll(async () => {
  await server.dispose();
  await fake.stop();
  receiver.stop(true);
});

const orgPath = { orgSlug: "" };
const op = () => ({ orgSlug, projectId });

describe("organization routes, success and state errors", () => {
  test("projects: list, create, rename, delete", async () => {
    orgPath.orgSlug = orgSlug;
    const list = await org.GET("/organizations/{orgSlug}/projects", { params: { path: orgPath } });
    expect(list.data?.projects.map((p) => p.id)).toContain(projectId);

    const created = await org.POST("/organizations/{orgSlug}/projects", { params: { path: orgPath }, body: { name: "Second" } });
    expect(created.response.status).toBe(201);
    const second = created.data!.project.id;
    const renamed = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}", { params: { path: { orgSlug, projectId: second } }, body: { name: "Second game" } });
    expect(renamed.data?.project.name).toBe("Second game");

    const third = await org.POST("/organizations/{orgSlug}/projects", { params: { path: orgPath }, body: { name: "Doomed" } });
    const deleted = await org.DELETE("/organizations/{orgSlug}/projects/{projectId}", { params: { path: { orgSlug, projectId: third.data!.project.id } } });
    expect(deleted.response.status).toBe(200);

    const key = await org.POST("/organizations/{orgSlug}/api-keys", { params: { path: orgPath }, body: { projectId: second, kind: "publishable", name: "other project" } });
    expect(key.response.status).toBe(201);
    otherPublishableKey = key.data!.key;
    expect(otherPublishableKey.startsWith("pk_live_")).toBe(true);
  });

  test("API keys: list, create, revoke", async () => {
    const created = await org.POST("/organizations/{orgSlug}/api-keys", { params: { path: orgPath }, body: { projectId, kind: "secret", name: "temporary" } });
    const keyId = created.data!.apiKey.id;
    ids.keyId = keyId;
    const list = await org.GET("/organizations/{orgSlug}/api-keys", { params: { path: orgPath } });
    expect(list.data?.apiKeys.some((k) => k.id === keyId)).toBe(true);
    const revoked = await org.POST("/organizations/{orgSlug}/api-keys/{keyId}/revoke", { params: { path: { orgSlug, keyId } } });
    expect(revoked.data?.apiKey.revokedAt).not.toBeNull();
  });

  test("categories: list, create, a duplicate name is 409, change, delete", async () => {
    const path = op();
    const list = await org.GET("/organizations/{orgSlug}/projects/{projectId}/categories", { params: { path } });
    expect(list.data!.categories.length).toBeGreaterThan(0);
    const created = await org.POST("/organizations/{orgSlug}/projects/{projectId}/categories", { params: { path }, body: { name: "Cheating", severityHint: "HIGH" } });
    expect(created.response.status).toBe(201);
    const categoryId = created.data!.category.id;
    ids.categoryId = categoryId;

    const again = await org.POST("/organizations/{orgSlug}/projects/{projectId}/categories", { params: { path }, body: { name: "cheating" } });
    expect(again.response.status).toBe(409);
    expect(again.error?.error).toContain("already exists");

    const changed = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}", {
      params: { path: { ...path, categoryId } },
      body: { description: "Exploits and aimbots" },
    });
    expect(changed.data?.category.description).toBe("Exploits and aimbots");
    const clash = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}", {
      params: { path: { ...path, categoryId } },
      body: { name: "spam" },
    });
    expect(clash.response.status).toBe(409);

    const doomed = await org.POST("/organizations/{orgSlug}/projects/{projectId}/categories", { params: { path }, body: { name: "Doomed" } });
    const deleted = await org.DELETE("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}", {
      params: { path: { ...path, categoryId: doomed.data!.category.id } },
    });
    expect(deleted.response.status).toBe(200);
  });

  test("policies: write a version, list, set its status, the shadow comparison", async () => {
    const path = { ...op(), categoryId: ids.categoryId! };
    const created = await org.POST("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}/policy-versions", { params: { path }, body: { text: "Definition: cheating.\nViolates: aimbots." } });
    expect(created.response.status).toBe(201);
    expect(created.data!.version).toMatchObject({ version: 1, status: "draft" });
    ids.version = "1";
    const versions = await org.GET("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}/policy-versions", { params: { path } });
    expect(versions.data!.versions.map((v) => v.version)).toEqual([1]);
    const live = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}/policy-versions/{version}", { params: { path: { ...path, version: 1 } }, body: { status: "live" } });
    expect(live.data!.version.status).toBe("live");
    const list = await org.GET("/organizations/{orgSlug}/projects/{projectId}/policies", { params: { path: op() } });
    expect(list.data!.policies.find((p) => p.categoryId === ids.categoryId)?.live?.version).toBe(1);
    const compared = await org.GET("/organizations/{orgSlug}/projects/{projectId}/shadow-comparison", { params: { path: op() } });
    expect(compared.data!.pairs).toBe(0);
  });

  test("settings and AI: read, change, analyze (200, and 503 when the model answers garbage), analyses", async () => {
    const path = op();
    const read = await org.GET("/organizations/{orgSlug}/projects/{projectId}/settings", { params: { path } });
    expect(read.data?.settings.aiEnabled).toBe(false);
    const changed = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/settings", { params: { path }, body: { aiEnabled: true } });
    expect(changed.data?.settings.aiEnabled).toBe(true);

    const analyzed = await org.POST("/organizations/{orgSlug}/projects/{projectId}/content", { params: { path }, body: { content: "buy cheap pills, spam spam" } });
    expect(analyzed.response.status).toBe(200);
    expect(analyzed.data?.analysis.severity).toBeDefined();

    fake.script([{ raw: "not json" }, { raw: "still not json" }]);
    const down = await org.POST("/organizations/{orgSlug}/projects/{projectId}/content", { params: { path }, body: { content: "hello" } });
    expect(down.response.status).toBe(503);
    expect(typeof down.error?.error).toBe("string");

    const analyses = await org.GET("/organizations/{orgSlug}/projects/{projectId}/content-analyses", { params: { path } });
    expect(analyses.data!.analyses.length).toBeGreaterThan(0);
    // Nothing expired here: the bulk retry puts nothing back (test/enrichment-catch-up.test.ts retries some).
    const retried = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enrichments/retry", { params: { path }, body: { reason: "spam" } });
    expect(retried.data).toEqual({ retried: 0 });
    await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/settings", { params: { path }, body: { aiEnabled: false } });
  });

  test("queues: list (the default made on first need), create, a duplicate name is 409, get, change, the default cannot be deleted (409), delete", async () => {
    const list = await org.GET("/organizations/{orgSlug}/queues", { params: { path: { orgSlug } } });
    expect(list.response.status).toBe(200);
    const def = list.data!.queues.find((q) => q.isDefault)!;
    expect(def).toBeDefined();
    const created = await org.POST("/organizations/{orgSlug}/queues", { params: { path: { orgSlug } }, body: { name: "Contract queue", ordering: "priority" } });
    expect(created.response.status).toBe(201);
    const queueId = created.data!.queue.id;
    ids.queueId = queueId;
    const again = await org.POST("/organizations/{orgSlug}/queues", { params: { path: { orgSlug } }, body: { name: "Contract queue" } });
    expect(again.response.status).toBe(409);
    const got = await org.GET("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId } } });
    expect(got.data?.queue.ordering).toBe("priority");
    const changed = await org.PATCH("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId } }, body: { description: "For the contract" } });
    expect(changed.data?.queue.description).toBe("For the contract");
    const clash = await org.PATCH("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId } }, body: { name: def.name } });
    expect(clash.response.status).toBe(409);
    const keepDefault = await org.DELETE("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId: def.id } } });
    expect(keepDefault.response.status).toBe(409);
    const doomed = await org.POST("/organizations/{orgSlug}/queues", { params: { path: { orgSlug } }, body: { name: "Doomed queue" } });
    const deleted = await org.DELETE("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId: doomed.data!.queue.id } } });
    expect(deleted.response.status).toBe(200);
    // Service levels: targets on a queue, a bad one 400, the organization's service levels.
    const timed = await org.PATCH("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId } }, body: { firstReviewTargetMinutes: 30, decisionTargetMinutes: 120 } });
    expect(timed.data?.queue).toMatchObject({ firstReviewTargetMinutes: 30, decisionTargetMinutes: 120 });
    const badTarget = await org.POST("/organizations/{orgSlug}/queues", { params: { path: { orgSlug } }, body: { name: "Bad target", decisionTargetMinutes: 0 } });
    expect(badTarget.response.status).toBe(400);
    const levels = await org.GET("/organizations/{orgSlug}/service-levels", { params: { path: { orgSlug }, query: { days: 7 } } });
    expect(levels.response.status).toBe(200);
    expect(levels.data!.queues.find((q) => q.queueId === queueId)).toMatchObject({ firstReviewTargetMinutes: 30, decisionTargetMinutes: 120 });
    const badDays = await org.GET("/organizations/{orgSlug}/service-levels", { params: { path: { orgSlug }, query: { days: 91 } } });
    expect(badDays.response.status).toBe(400);
    // Quality review: the queue's sampling settings, and the agreement figures (none reviewed yet: n 0, coefficients null).
    const sampled = await org.PATCH("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId } }, body: { samplePercent: 25, alwaysSample: "account_stopped" } });
    expect(sampled.data?.queue).toMatchObject({ samplePercent: 25, alwaysSample: "account_stopped" });
    expect((await org.PATCH("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId } }, body: { samplePercent: 101 } })).response.status).toBe(400);
    const agreement = await org.GET("/organizations/{orgSlug}/quality/agreement", { params: { path: { orgSlug }, query: { days: 30 } } });
    expect(agreement.response.status).toBe(200);
    expect(agreement.data!.overall).toEqual({ n: 0, agreement: null, alpha: null });
    expect((await org.GET("/organizations/{orgSlug}/quality/agreement", { params: { path: { orgSlug }, query: { days: 0 } } })).response.status).toBe(400);
  });

  test("rules: create (201), list, get, change (a new version), hits, test a saved rule and a draft, an invalid rule is 400, delete", async () => {
    const path = { orgSlug };
    const when = { all: [{ field: "report.reasons" as const, op: "includes" as const, value: "spam" }, { field: "ai.confidence" as const, op: "gte" as const, value: 90 }] };
    const then = [{ type: "route" as const, queueId: ids.queueId! }, { type: "priority" as const, by: 5 }];
    const created = await org.POST("/organizations/{orgSlug}/rules", { params: { path }, body: { name: "Contract rule", trigger: "report.enriched", mode: "shadow", when, then } });
    expect(created.response.status).toBe(201);
    const ruleId = created.data!.rule.id;
    ids.ruleId = ruleId;
    expect((await org.GET("/organizations/{orgSlug}/rules", { params: { path } })).data?.rules.map((r) => r.id)).toContain(ruleId);
    expect((await org.GET("/organizations/{orgSlug}/rules/{ruleId}", { params: { path: { orgSlug, ruleId } } })).data?.rule.version).toBe(1);
    const changed = await org.PATCH("/organizations/{orgSlug}/rules/{ruleId}", { params: { path: { orgSlug, ruleId } }, body: { mode: "disabled" } });
    expect(changed.data?.rule.version).toBe(2);
    const invalid = await org.PATCH("/organizations/{orgSlug}/rules/{ruleId}", {
      params: { path: { orgSlug, ruleId } },
      body: { when: { all: [{ field: "report.text", op: "gt", value: 1 }] } as never },
    });
    expect(invalid.response.status).toBe(400);
    expect(invalid.error?.error).toStartWith("when.all[0].op: ");
    const hits = await org.GET("/organizations/{orgSlug}/rules/{ruleId}/hits", { params: { path: { orgSlug, ruleId } } });
    expect(hits.data?.counts).toEqual({ last24h: 0, last7d: 0 });
    const tested = await org.POST("/organizations/{orgSlug}/rules/{ruleId}/test", { params: { path: { orgSlug, ruleId } }, body: { limit: 10 } });
    expect(tested.response.status).toBe(200);
    const drafted = await org.POST("/organizations/{orgSlug}/rules/test", { params: { path }, body: { rule: { when: { all: [] }, then: [{ type: "tag", tag: "x" }] } } });
    expect(drafted.response.status).toBe(200);
    expect(drafted.data!.matches.length).toBe(drafted.data!.evaluated);
    const doomed = await org.POST("/organizations/{orgSlug}/rules", { params: { path }, body: { name: "Doomed rule", trigger: "report.created", mode: "disabled", when, then } });
    const deleted = await org.DELETE("/organizations/{orgSlug}/rules/{ruleId}", { params: { path: { orgSlug, ruleId: doomed.data!.rule.id } } });
    expect(deleted.response.status).toBe(200);
    // The organization's limit (FLAGSTAFF_MAX_RULES, small here): the next one is a 409 naming it; room again once one goes.
    const filled = await fillUntilRefused("FLAGSTAFF_MAX_RULES", MAX_RULES, async (n) => {
      const next = await org.POST("/organizations/{orgSlug}/rules", { params: { path }, body: { name: `Filler ${n}`, trigger: "report.created", mode: "disabled", when, then } });
      return { status: next.response.status, id: next.data?.rule.id, error: next.error?.error };
    });
    for (const id of filled) expect((await org.DELETE("/organizations/{orgSlug}/rules/{ruleId}", { params: { path: { orgSlug, ruleId: id } } })).response.status).toBe(200);
  });

  test("evaluation: import a set (201), build one from decisions (201), list, get, start a run (201), runs, run, items, threshold advice, compare, cancel (then 409)", async () => {
    const base = { orgSlug, projectId };
    const content = "text,categories\nBuy now,spam\nHello,\n";
    const imported = await org.POST("/organizations/{orgSlug}/projects/{projectId}/evaluation-sets/import", { params: { path: base }, body: { name: "Contract", format: "csv", content } });
    expect(imported.response.status).toBe(201);
    const setId = imported.data!.set.id;
    Object.assign(ids, { setId });
    // A decided case for the set from decisions.
    const report = await sdk.POST("/projects/{projectId}/reports", {
      params: { path: { projectId } },
      body: { subject: { type: "user", externalId: "ev-1" }, reason: "spam", target: { contentType: "post", contentExternalId: "ev-post", content: "Cheap pills" } },
    });
    await sdk.POST("/reports/{reportId}/resolve", { params: { path: { reportId: report.data!.report.id } }, body: { resolutionCode: "SPAM_CONFIRMED" } });
    const built = await org.POST("/organizations/{orgSlug}/projects/{projectId}/evaluation-sets/from-decisions", { params: { path: base }, body: { name: "Decisions" } });
    expect(built.response.status).toBe(201);
    expect(built.data!.set.items).toBeGreaterThan(0);
    const list = await org.GET("/organizations/{orgSlug}/projects/{projectId}/evaluation-sets", { params: { path: base } });
    expect(list.data!.sets.map((s) => s.id)).toContain(setId);
    expect((await org.GET("/organizations/{orgSlug}/projects/{projectId}/evaluation-sets/{setId}", { params: { path: { ...base, setId } } })).data!.set.items).toBe(2);

    const started = await org.POST("/organizations/{orgSlug}/projects/{projectId}/evaluation-runs", { params: { path: base }, body: { setId } });
    expect(started.response.status).toBe(201);
    const runId = started.data!.run.id;
    Object.assign(ids, { runId, otherRunId: runId });
    const runPath = { ...base, runId };
    await until("the run to complete", async () => (await org.GET("/organizations/{orgSlug}/projects/{projectId}/evaluation-runs/{runId}", { params: { path: runPath } })).data!.run.status === "completed");
    expect((await org.GET("/organizations/{orgSlug}/projects/{projectId}/evaluation-runs", { params: { path: base } })).data!.runs.map((r) => r.id)).toContain(runId);
    expect((await org.GET("/organizations/{orgSlug}/projects/{projectId}/evaluation-runs/{runId}/items", { params: { path: runPath } })).data!.items).toHaveLength(2);
    const advice = await org.GET("/organizations/{orgSlug}/projects/{projectId}/evaluation-runs/{runId}/threshold-advice", { params: { path: runPath, query: { precisionTarget: 0.8 } } });
    expect(advice.data!.advice.precisionTarget).toBe(0.8);
    const compared = await org.GET("/organizations/{orgSlug}/projects/{projectId}/evaluation-runs/{runId}/compare/{otherRunId}", { params: { path: { ...runPath, otherRunId: runId } } });
    expect(compared.data!.comparison.unchanged).toBe(2);

    // A slow run, cancelled; cancelling it again (or a completed run) is 409.
    fake.script([{ delayMs: 1000 }, { delayMs: 1000 }]);
    const slow = (await org.POST("/organizations/{orgSlug}/projects/{projectId}/evaluation-runs", { params: { path: base }, body: { setId } })).data!.run.id;
    const cancelled = await org.POST("/organizations/{orgSlug}/projects/{projectId}/evaluation-runs/{runId}/cancel", { params: { path: { ...base, runId: slow } } });
    expect(cancelled.data!.run.status).toBe("cancelled");
    const again = await org.POST("/organizations/{orgSlug}/projects/{projectId}/evaluation-runs/{runId}/cancel", { params: { path: { ...base, runId: slow } } });
    expect(again.response.status).toBe(409);
  });

  test("attachments: upload (201) to a case and a report, list, get, download, preview (200; 206 a byte range, 416 one past the end; 409 while made, 404 for a PDF), a type not allowed (400), too large (413), too many (409), delete, erase a case's", async () => {
    const filed = await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { reason: "spam", target: { contentType: "post", contentExternalId: "attachments", content: "Look" } } });
    const reportId = filed.data!.report.id;
    const caseId = (await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } })).data!.report.caseId!;
    const raw = (bytes: Uint8Array) => ({ body: bytes as unknown as string, bodySerializer: (b: unknown) => b as BodyInit, headers: { "content-type": "application/octet-stream" } });
    const toCase = (bytes: Uint8Array, fileName: string) => org.POST("/organizations/{orgSlug}/cases/{caseId}/attachments", { params: { path: { orgSlug, caseId }, query: { fileName } }, ...raw(bytes) });
    const photo = await toCase(flatPng(3000, 2000), "flat.png");
    expect(photo.response.status).toBe(201);
    const attachmentId = photo.data!.attachment.id;
    // The preview of six megapixels takes a while to make (decoding a PNG: about a second): asked at once, it is not there yet.
    const early = await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}/preview", { params: { path: { orgSlug, attachmentId } } });
    expect(early.response.status).toBe(409);
    const onReport = await org.POST("/organizations/{orgSlug}/reports/{reportId}/attachments", { params: { path: { orgSlug, reportId }, query: { fileName: "x.pdf" } }, ...raw(new TextEncoder().encode("%PDF-1.4\n")) });
    expect(onReport.response.status).toBe(201);
    expect((await toCase(new TextEncoder().encode("<html><script></script></html>"), "x.png")).response.status).toBe(400);
    expect((await toCase(new Uint8Array(250_001), "big.bin")).response.status).toBe(413);
    expect((await toCase(new TextEncoder().encode("third"), "third.txt")).response.status).toBe(201);
    expect((await toCase(new TextEncoder().encode("fourth"), "fourth.txt")).response.status).toBe(409);
    // The report's case is the same: full too.
    const full = await org.POST("/organizations/{orgSlug}/reports/{reportId}/attachments", { params: { path: { orgSlug, reportId }, query: { fileName: "fifth.txt" } }, ...raw(new TextEncoder().encode("fifth")) });
    expect(full.response.status).toBe(409);
    const listed = await org.GET("/organizations/{orgSlug}/cases/{caseId}/attachments", { params: { path: { orgSlug, caseId } } });
    expect(listed.data!.attachments).toHaveLength(3);
    expect((await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}", { params: { path: { orgSlug, attachmentId } } })).data!.attachment.id).toBe(attachmentId);
    const download = await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}/content", { params: { path: { orgSlug, attachmentId } }, parseAs: "arrayBuffer" });
    expect(download.response.status).toBe(200);
    await until("the preview", async () => (await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}", { params: { path: { orgSlug, attachmentId } } })).data!.attachment.preview.status === "ready", 30_000);
    const preview = await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}/preview", { params: { path: { orgSlug, attachmentId } }, parseAs: "arrayBuffer" });
    expect(preview.response.status).toBe(200);
    const pdfPreview = await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}/preview", { params: { path: { orgSlug, attachmentId: onReport.data!.attachment.id } } });
    expect(pdfPreview.response.status).toBe(404);
    // A byte range of each (206: the test server's store is a local directory), and one past the end (416).
    const path = { orgSlug, attachmentId };
    expect((await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}/content", { params: { path, header: { Range: "bytes=0-9" } }, parseAs: "arrayBuffer" })).response.status).toBe(206);
    expect((await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}/content", { params: { path, header: { Range: "bytes=999999999-" } } })).response.status).toBe(416);
    expect((await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}/preview", { params: { path, header: { Range: "bytes=-10" } }, parseAs: "arrayBuffer" })).response.status).toBe(206);
    expect((await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}/preview", { params: { path, header: { Range: "bytes=999999999-" } } })).response.status).toBe(416);
    expect((await org.DELETE("/organizations/{orgSlug}/attachments/{attachmentId}", { params: { path: { orgSlug, attachmentId } } })).data).toEqual({ deleted: true });
    expect((await org.DELETE("/organizations/{orgSlug}/cases/{caseId}/attachments", { params: { path: { orgSlug, caseId } } })).data).toEqual({ deleted: 2 });
    // For the sweep of every route's errors: a case with room, the attachment of another.
    const kept = await toCase(new TextEncoder().encode("kept"), "kept.txt");
    Object.assign(ids, { caseId, attachmentId: kept.data!.attachment.id });
  }, 60_000);

  test("media banks: create (201; a taken name 409), list, get, change (409), entries (201; twice 409), import, export, release (409: not quarantined), a case's matches, verdicts (409: twice), banking a case's media and its undo (201, 200; 404, 409), remove, delete", async () => {
    const base = { orgSlug, projectId };
    const created = await org.POST("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: base }, body: { name: "Contract bank", action: { type: "tag", tag: "known" } } });
    expect(created.response.status).toBe(201);
    const bankId = created.data!.bank.id;
    expect((await org.POST("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: base }, body: { name: "Contract bank" } })).response.status).toBe(409);
    const other = (await org.POST("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: base }, body: { name: "Other bank" } })).data!.bank.id;
    expect((await org.PATCH("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId: other } }, body: { name: "Contract bank" } })).response.status).toBe(409);
    expect((await org.PATCH("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId } }, body: { pdqDistance: 25 } })).data!.bank.pdqDistance).toBe(25);
    expect((await org.GET("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: base } })).data!.banks).toHaveLength(2);
    const digest = new Bun.CryptoHasher("sha256").update("contract media").digest("hex");
    const entry = await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId } }, body: { signalType: "sha256", value: digest, origin: "contract" } });
    expect(entry.response.status).toBe(201);
    const entryId = entry.data!.entry.id;
    expect((await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId } }, body: { signalType: "sha256", value: digest } })).response.status).toBe(409);
    const imported = await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/import", { params: { path: { orgSlug, bankId } }, body: { format: "csv", content: `signal_type,signal_value\nmd5,${"ab".repeat(16)}\n` } });
    expect(imported.data).toEqual({ added: 1, unchanged: 0, errors: [] });
    expect((await org.GET("/organizations/{orgSlug}/media-banks/{bankId}/export", { params: { path: { orgSlug, bankId }, query: { format: "json" } } })).data!.entries).toBe(2);
    for (const format of ["csv", "json"] as const) {
      const file = await org.GET("/organizations/{orgSlug}/media-banks/{bankId}/export/download", { params: { path: { orgSlug, bankId }, query: { format } }, parseAs: "text" });
      expect(file.response.status).toBe(200);
      expect(file.data as unknown as string).toContain(digest);
    }
    expect((await org.GET("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId } } })).data!.entries).toHaveLength(2);
    expect((await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries/{entryId}/release", { params: { path: { orgSlug, bankId, entryId } } })).response.status).toBe(409);
    const filed = await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { reason: "spam", target: { contentType: "post", contentExternalId: "media" }, media: [{ sha256: digest }] } });
    expect(filed.response.status).toBe(201);
    const caseId = (await sdk.GET("/reports/{reportId}", { params: { path: { reportId: filed.data!.report.id } } })).data!.report.caseId!;
    const matches = async () => (await org.GET("/organizations/{orgSlug}/cases/{caseId}/media-matches", { params: { path: { orgSlug, caseId } } })).data!.matches;
    const match = await until("the media match", async () => (await matches())[0]);
    const verdict = await org.POST("/organizations/{orgSlug}/media-matches/{matchId}/verdict", { params: { path: { orgSlug, matchId: match.id } }, body: { verdict: "confirmed" } });
    expect(verdict.data!.match.status).toBe("confirmed");
    expect((await org.POST("/organizations/{orgSlug}/media-matches/{matchId}/verdict", { params: { path: { orgSlug, matchId: match.id } }, body: { verdict: "confirmed" } })).response.status).toBe(409);
    expect((await org.GET("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId } } })).data!.bank.precision).toBe(1);
    // The case's media banked from a decision (201; nothing new: 409; an unknown bank: 404), listed, undone (200; twice: 409; unknown: 404).
    const decisions = (await org.POST("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: base }, body: { name: "Decisions" } })).data!.bank.id;
    const bankCase = (bankId: string) => org.POST("/organizations/{orgSlug}/cases/{caseId}/media-bankings", { params: { path: { orgSlug, caseId } }, body: { bankId, reason: "Contract" } });
    const banked = await bankCase(decisions);
    expect(banked.response.status).toBe(201);
    expect((await bankCase(decisions)).response.status).toBe(409);
    expect((await bankCase("no-such-bank")).response.status).toBe(404);
    expect((await org.GET("/organizations/{orgSlug}/cases/{caseId}/media-bankings", { params: { path: { orgSlug, caseId } } })).data!.bankings.map((b) => b.id)).toEqual([banked.data!.banking.id]);
    const undo = (bankingId: string) => org.POST("/organizations/{orgSlug}/media-bankings/{bankingId}/undo", { params: { path: { orgSlug, bankingId } } });
    expect((await undo(banked.data!.banking.id)).data!.banking.undone!.removed).toBe(1);
    expect((await undo(banked.data!.banking.id)).response.status).toBe(409);
    expect((await undo("no-such-banking")).response.status).toBe(404);
    // Quarantined after one match in its window, then released.
    const flood = (await org.POST("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: base }, body: { name: "Flood", quarantine: { count: 1, windowSeconds: 60 } } })).data!.bank.id;
    const floodDigest = new Bun.CryptoHasher("sha256").update("contract flood").digest("hex");
    const floodEntry = (await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId: flood } }, body: { signalType: "sha256", value: floodDigest } })).data!.entry.id;
    await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { reason: "spam", target: { contentType: "post", contentExternalId: "flood" }, media: [{ sha256: floodDigest }, { sha256: floodDigest }] } });
    await until("the entry quarantined", async () => (await org.GET("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId: flood }, query: { quarantined: "true" } } })).data!.entries.length === 1);
    const released = await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries/{entryId}/release", { params: { path: { orgSlug, bankId: flood, entryId: floodEntry } } });
    expect(released.data!.entry.quarantinedAt).toBeNull();
    const spare = (await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId } }, body: { signalType: "md5", value: "cd".repeat(16) } })).data!.entry.id;
    expect((await org.DELETE("/organizations/{orgSlug}/media-banks/{bankId}/entries/{entryId}", { params: { path: { orgSlug, bankId, entryId: spare } } })).data).toEqual({ deleted: true });
    expect((await org.DELETE("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId: other } } })).data).toEqual({ deleted: true });
    Object.assign(ids, { bankId, entryId, matchId: match.id });
  });

  test("audit events", async () => {
    const audit = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: orgPath, query: { limit: 5 } } });
    expect(audit.data!.events.length).toBe(5);
  });
});

describe("SDK routes, success and state errors", () => {
  test("identities: upsert (body optional), list", async () => {
    const path = { projectId, typeName: "user", externalId: "u-1" };
    const bare = await sdk.PUT("/projects/{projectId}/identities/{typeName}/{externalId}", { params: { path } });
    expect(bare.data?.identity.externalId).toBe("u-1");
    const named = await sdk.PUT("/projects/{projectId}/identities/{typeName}/{externalId}", { params: { path }, body: { display: { name: "Ada", username: "ada" } } });
    expect(named.data?.identity.displayName).toBe("Ada");
    const list = await sdk.GET("/projects/{projectId}/identities", { params: { path: { projectId }, query: { search: "ad" } } });
    expect(list.data?.identities.map((i) => i.externalId)).toEqual(["u-1"]);
  });

  test("reporters (organization route): read, mark trusted, mute until a time", async () => {
    const path = { ...op(), typeName: "user", externalId: "u-1" };
    const read = await org.GET("/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}", { params: { path } });
    expect(read.data?.reporter).toMatchObject({ trustedFlagger: false, mutedUntil: null, reportsDecided: 0 });
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const changed = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}", {
      params: { path },
      body: { trustedFlagger: true, mutedUntil: until, muteReason: "Manifestly unfounded notices" },
    });
    expect(changed.data?.reporter).toMatchObject({ trustedFlagger: true, muteReason: "Manifestly unfounded notices" });
    expect(changed.data?.identity.externalId).toBe("u-1");
    // Unmuted again, so the reports this suite files as u-1 are not dismissed.
    const unmuted = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}", {
      params: { path },
      body: { trustedFlagger: false, mutedUntil: null },
    });
    expect(unmuted.data?.reporter).toMatchObject({ trustedFlagger: false, mutedUntil: null });
  });

  test("reports: create (201), reasons, list, get; a key over its rate limit gets 429 with retryAfter", async () => {
    const reasons = await sdk.GET("/projects/{projectId}/report-reasons", { params: { path: { projectId } } });
    expect(reasons.data?.reasons.some((r) => r.name === "spam")).toBe(true);

    const created = await sdk.POST("/projects/{projectId}/reports", {
      params: { path: { projectId } },
      body: { subject: { type: "user", externalId: "u-1" }, reporter: { type: "user", externalId: "r-1" }, reason: "spam" },
    });
    expect(created.response.status).toBe(201);
    expect(created.data?.report.status).toBe("OPEN");
    ids.reportId = created.data!.report.id;

    const list = await sdk.GET("/reports", { params: { query: { projectId, limit: 10 } } });
    expect(list.data?.reports.map((r) => r.id)).toContain(ids.reportId);
    const one = await sdk.GET("/reports/{reportId}", { params: { path: { reportId: ids.reportId } } });
    expect(one.data?.report.id).toBe(ids.reportId);

    const limited = await org.POST("/organizations/{orgSlug}/api-keys", { params: { path: orgPath }, body: { projectId, kind: "secret", reportRateLimit: 1 } });
    const slow = await checkedSdkClient(server.url, limited.data!.key);
    const body = { subject: { type: "user", externalId: "u-9" }, reason: "spam" };
    expect((await slow.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body })).response.status).toBe(201);
    const refused = await slow.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body });
    expect(refused.response.status).toBe(429);
    // Code written to the spec: `error.error` and `retryAfter`, typed, without a cast.
    if (!refused.error || !("retryAfter" in refused.error)) throw new Error("a 429 carries retryAfter");
    expect(refused.error.retryAfter).toBeGreaterThan(0);
    expect(Number(refused.response.headers.get("retry-after"))).toBe(refused.error.retryAfter);
    expect(refused.error.error).toContain("at most 1 a minute");
  });

  test("workflow: escalate (no body), resolve, dismiss; deciding twice is 409", async () => {
    const file = async (externalId: string) =>
      (await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { subject: { type: "user", externalId }, reason: "spam" } })).data!.report.id;
    const a = await file("w-1");
    const escalated = await sdk.POST("/reports/{reportId}/escalate", { params: { path: { reportId: a } } });
    expect(escalated.data).toEqual({ ok: true, reportId: a });
    expect((await sdk.POST("/reports/{reportId}/resolve", { params: { path: { reportId: a } }, body: { resolutionCode: "SPAM_CONFIRMED" } })).data?.ok).toBe(true);
    const twice = await sdk.POST("/reports/{reportId}/resolve", { params: { path: { reportId: a } } });
    expect(twice.response.status).toBe(409);

    const b = await file("w-2");
    expect((await sdk.POST("/reports/{reportId}/dismiss", { params: { path: { reportId: b } }, body: { reason: "false_positive" } })).data?.ok).toBe(true);
    const again = await sdk.POST("/reports/{reportId}/dismiss", { params: { path: { reportId: b } }, body: { reason: "other" } });
    expect(again.response.status).toBe(409);
    expect(again.error?.error).toContain("DISMISSED");
  });

  test("enforcement: resolve with an action, list an identity's actions, appeal (201, then 409), uphold and overturn (then 409)", async () => {
    const resolveWithWarning = async (externalId: string) => {
      const report = await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { subject: { type: "user", externalId }, reason: "harassment" } });
      const resolved = await sdk.POST("/reports/{reportId}/resolve", {
        params: { path: { reportId: report.data!.report.id } },
        body: { resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "warning", reason: "Be kind" } },
      });
      return resolved.data!.enforcementActionId!;
    };
    const actionId = await resolveWithWarning("e-1");
    const actions = await sdk.GET("/projects/{projectId}/identities/{typeName}/{externalId}/enforcement-actions", {
      params: { path: { projectId, typeName: "user", externalId: "e-1" } },
    });
    expect(actions.data?.actions.map((a) => a.id)).toEqual([actionId]);

    const appeal = await sdk.POST("/projects/{projectId}/enforcement-actions/{actionId}/appeal", { params: { path: { projectId, actionId } }, body: { text: "It was a joke" } });
    expect(appeal.response.status).toBe(201);
    ids.appealId = appeal.data!.appeal.id;
    const second = await sdk.POST("/projects/{projectId}/enforcement-actions/{actionId}/appeal", { params: { path: { projectId, actionId } }, body: { text: "Again" } });
    expect(second.response.status).toBe(409);

    const appeals = await org.GET("/organizations/{orgSlug}/appeals", { params: { path: orgPath, query: { status: "pending" } } });
    expect(appeals.data?.appeals.map((a) => a.id)).toContain(ids.appealId);
    const got = await org.GET("/organizations/{orgSlug}/appeals/{appealId}", { params: { path: { orgSlug, appealId: ids.appealId } } });
    expect(got.data?.appeal.text).toBe("It was a joke");
    const upheld = await org.POST("/organizations/{orgSlug}/appeals/{appealId}/uphold", { params: { path: { orgSlug, appealId: ids.appealId } }, body: { note: "Stands" } });
    expect(upheld.data?.appeal.status).toBe("upheld");
    expect((await org.POST("/organizations/{orgSlug}/appeals/{appealId}/uphold", { params: { path: { orgSlug, appealId: ids.appealId } } })).response.status).toBe(409);

    const other = await resolveWithWarning("e-2");
    const appeal2 = await sdk.POST("/projects/{projectId}/enforcement-actions/{actionId}/appeal", { params: { path: { projectId, actionId: other } }, body: { text: "Not me" } });
    const appealId2 = appeal2.data!.appeal.id;
    const overturned = await org.POST("/organizations/{orgSlug}/appeals/{appealId}/overturn", { params: { path: { orgSlug, appealId: appealId2 } } });
    expect(overturned.data?.revoked.map((a) => a.id)).toEqual([other]);
    expect((await org.POST("/organizations/{orgSlug}/appeals/{appealId}/overturn", { params: { path: { orgSlug, appealId: appealId2 } } })).response.status).toBe(409);
  });

  test("enforcement actions (organization routes): create, list, get, change, revoke; changing or revoking a revoked one is 409", async () => {
    const path = op();
    const created = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", {
      params: { path },
      body: { kind: "mute", reason: "Flooding", identity: { type: "user", externalId: "u-1" }, durationSeconds: 3600 },
    });
    expect(created.response.status).toBe(201);
    const actionId = created.data!.action.id;
    ids.actionId = actionId;
    const list = await org.GET("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", { params: { path, query: { kind: "mute" } } });
    expect(list.data?.actions.map((a) => a.id)).toContain(actionId);
    const got = await org.GET("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}", { params: { path: { ...path, actionId } } });
    expect(got.data?.action.kind).toBe("mute");
    const changed = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}", { params: { path: { ...path, actionId } }, body: { note: "second offence" } });
    expect(changed.data?.action.note).toBe("second offence");
    const revoked = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/revoke", { params: { path: { ...path, actionId } }, body: { reason: "Mistake" } });
    expect(revoked.data?.action.revokedAt).not.toBeNull();
    expect((await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/revoke", { params: { path: { ...path, actionId } } })).response.status).toBe(409);
    expect((await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}", { params: { path: { ...path, actionId } }, body: { note: "x" } })).response.status).toBe(409);
  });

  test("scheduled enforcement actions: create one to start later, list it as scheduled, cancel it; cancelling it again is 409", async () => {
    const path = op();
    const created = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", {
      params: { path },
      body: { kind: "suspension", reason: "After the grace period", identity: { type: "user", externalId: "u-1" }, startsInSeconds: 3600, durationSeconds: 86400 },
    });
    expect(created.response.status).toBe(201);
    expect(created.data?.action.status).toBe("scheduled");
    const actionId = created.data!.action.id;
    const list = await org.GET("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", { params: { path, query: { status: "scheduled" } } });
    expect(list.data?.actions.map((a) => a.id)).toContain(actionId);
    const cancel = () => org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/cancel", { params: { path: { ...path, actionId } }, body: { reason: "Paid" } });
    expect((await cancel()).data?.action.status).toBe("cancelled");
    expect((await cancel()).response.status).toBe(409);
  });

  test("sweep: preview an identity's open cases, resolve them with its suspension, undo (then 409); sweeping with a revoked action is 409", async () => {
    const path = op();
    const subject = { type: "user", externalId: "sweep-1" };
    const caseIds: string[] = [];
    for (const n of [1, 2]) {
      const filed = await sdk.POST("/projects/{projectId}/reports", {
        params: { path: { projectId } },
        body: { subject, reason: "spam", target: { contentType: "post", contentExternalId: `sweep-post-${n}` } },
      });
      caseIds.push((await sdk.GET("/reports/{reportId}", { params: { path: { reportId: filed.data!.report.id } } })).data!.report.caseId);
    }
    const suspension = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", {
      params: { path },
      body: { kind: "suspension", reason: "Spam", identity: subject, durationSeconds: 3600 },
    });
    const actionId = suspension.data!.action.id;
    const preview = await org.GET("/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}/sweep", {
      params: { path: { ...path, typeName: subject.type, externalId: subject.externalId } },
    });
    expect(preview.data?.cases.map((c) => c.id)).toEqual(caseIds);
    expect(preview.data?.actions.map((a) => a.id)).toEqual([actionId]);
    const sweep = () => org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/sweep", { params: { path: { ...path, actionId } }, body: { caseIds } });
    const swept = await sweep();
    expect(swept.data?.decided).toEqual(caseIds);
    const bulkId = swept.data!.bulkId!;
    ids.bulkId = bulkId;
    const undo = () => org.POST("/organizations/{orgSlug}/bulk-decisions/{bulkId}/undo", { params: { path: { orgSlug, bulkId } } });
    expect((await undo()).data?.restored.sort()).toEqual([...caseIds].sort());
    expect((await undo()).response.status).toBe(409);
    await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/revoke", { params: { path: { ...path, actionId } } });
    const afterRevoke = await sweep();
    expect(afterRevoke.response.status).toBe(409);
    expect(afterRevoke.error?.error).toContain("revoked");
  });

  test("strikes: the policy (get, put), a resolution adds a strike, the identity's strikes and the SDK identity's actions show it", async () => {
    const path = op();
    const subject = { type: "user", externalId: "strike-1" };
    expect((await org.GET("/organizations/{orgSlug}/projects/{projectId}/strike-policy", { params: { path } })).data?.policy.enabled).toBe(false);
    const put = await org.PUT("/organizations/{orgSlug}/projects/{projectId}/strike-policy", {
      params: { path },
      body: { enabled: true, windowDays: 30, ladder: [{ threshold: 2, kind: "warning" }] },
    });
    expect(put.data?.policy).toMatchObject({ enabled: true, windowDays: 30, strikes: { default: 1 } });
    const filed = await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { subject, reason: "spam", target: { contentType: "post", contentExternalId: "strike-post" } } });
    await sdk.POST("/reports/{reportId}/resolve", { params: { path: { reportId: filed.data!.report.id } }, body: { resolutionCode: "SPAM_CONFIRMED" } });
    const strikes = await org.GET("/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}/strikes", {
      params: { path: { ...path, typeName: subject.type, externalId: subject.externalId } },
    });
    expect(strikes.data).toMatchObject({ total: 1, nextStep: { threshold: 2, kind: "warning" } });
    const pulled = await sdk.GET("/projects/{projectId}/identities/{typeName}/{externalId}/enforcement-actions", {
      params: { path: { projectId, typeName: subject.type, externalId: subject.externalId } },
    });
    expect(pulled.data?.strikes.total).toBe(1);
    await org.PUT("/organizations/{orgSlug}/projects/{projectId}/strike-policy", { params: { path }, body: {} });
  });

  test("webhooks: endpoints, a delivery, replay (200; 409 once the endpoint is disabled), rotate, delete", async () => {
    const url = `http://127.0.0.1:${receiver.port}/hook`;
    const created = await org.POST("/organizations/{orgSlug}/webhook-endpoints", { params: { path: orgPath }, body: { url, description: "contract" } });
    expect(created.response.status).toBe(201);
    const endpointId = created.data!.endpoint.id;
    ids.endpointId = endpointId;
    expect((await org.GET("/organizations/{orgSlug}/webhook-endpoints", { params: { path: orgPath } })).data?.endpoints.map((e) => e.id)).toContain(endpointId);
    expect((await org.GET("/organizations/{orgSlug}/webhook-endpoints/{endpointId}", { params: { path: { orgSlug, endpointId } } })).data?.endpoint.url).toBe(url);

    await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", {
      params: { path: op() },
      body: { kind: "warning", reason: "Spam", identity: { type: "user", externalId: "u-1" } },
    });
    const delivered = await until("a delivered webhook", async () => {
      const r = await org.GET("/organizations/{orgSlug}/webhook-endpoints/{endpointId}/deliveries", { params: { path: { orgSlug, endpointId } } });
      return r.data?.deliveries.find((d) => d.status === "delivered");
    });
    ids.deliveryId = delivered.id;
    const one = await org.GET("/organizations/{orgSlug}/webhook-deliveries/{deliveryId}", { params: { path: { orgSlug, deliveryId: delivered.id } } });
    expect(one.data?.delivery.id).toBe(delivered.id);
    const replayed = await org.POST("/organizations/{orgSlug}/webhook-deliveries/{deliveryId}/replay", { params: { path: { orgSlug, deliveryId: delivered.id } } });
    expect(replayed.response.status).toBe(200);

    const rotated = await org.POST("/organizations/{orgSlug}/webhook-endpoints/{endpointId}/rotate-secret", { params: { path: { orgSlug, endpointId } } });
    expect(rotated.data?.secret.startsWith("whsec_")).toBe(true);
    const disabled = await org.PATCH("/organizations/{orgSlug}/webhook-endpoints/{endpointId}", { params: { path: { orgSlug, endpointId } }, body: { enabled: false } });
    expect(disabled.data?.endpoint.enabled).toBe(false);
    // Wait until the replay above has been delivered, so the refusal is for the disabled endpoint.
    await until("no pending delivery", async () => {
      const r = await org.GET("/organizations/{orgSlug}/webhook-endpoints/{endpointId}/deliveries", { params: { path: { orgSlug, endpointId } } });
      return r.data?.deliveries.every((d) => d.status !== "pending") || undefined;
    });
    const refused = await org.POST("/organizations/{orgSlug}/webhook-deliveries/{deliveryId}/replay", { params: { path: { orgSlug, deliveryId: delivered.id } } });
    expect(refused.response.status).toBe(409);
    expect(refused.error?.error).toContain("disabled");

    const doomed = await org.POST("/organizations/{orgSlug}/webhook-endpoints", { params: { path: orgPath }, body: { url: `${url}/2` } });
    const deleted = await org.DELETE("/organizations/{orgSlug}/webhook-endpoints/{endpointId}", { params: { path: { orgSlug, endpointId: doomed.data!.endpoint.id } } });
    expect(deleted.response.status).toBe(200);
    // The organization's limit (FLAGSTAFF_MAX_WEBHOOK_ENDPOINTS, small here): the next one is a 409 naming it.
    const added = await fillUntilRefused("FLAGSTAFF_MAX_WEBHOOK_ENDPOINTS", MAX_WEBHOOK_ENDPOINTS, async (n) => {
      const next = await org.POST("/organizations/{orgSlug}/webhook-endpoints", { params: { path: orgPath }, body: { url: `${url}/${n}`, enabled: false } });
      return { status: next.response.status, id: next.data?.endpoint.id, error: next.error?.error };
    });
    for (const id of added) expect((await org.DELETE("/organizations/{orgSlug}/webhook-endpoints/{endpointId}", { params: { path: { orgSlug, endpointId: id } } })).response.status).toBe(200);
  });

  test("transparency: submission settings (409 to submit before they are set), attempts, the report", async () => {
    const early = await org.POST("/organizations/{orgSlug}/transparency/submission/run", { params: { path: orgPath } });
    expect(early.response.status).toBe(409);
    const before = await org.GET("/organizations/{orgSlug}/transparency/submission", { params: { path: orgPath } });
    expect(before.data?.submission.tokenSet).toBe(false);
    // A stand-in that accepts everything: the submission's own behaviour is test/transparency-submission.test.ts.
    const url = `http://127.0.0.1:${receiver.port}/tdb`;
    const set = await org.PUT("/organizations/{orgSlug}/transparency/submission", { params: { path: orgPath }, body: { endpointUrl: url, token: "t", enabled: false } });
    expect(set.data?.submission).toMatchObject({ endpointUrl: url, enabled: false, tokenSet: true });
    expect((await org.PUT("/organizations/{orgSlug}/transparency/submission", { params: { path: orgPath }, body: { endpointUrl: url, enabled: true } })).response.status).toBe(200);
    const run = await org.POST("/organizations/{orgSlug}/transparency/submission/run", { params: { path: orgPath } });
    expect(run.data?.queued).toBe(true);
    const attempts = await org.GET("/organizations/{orgSlug}/transparency/submissions", { params: { path: orgPath, query: { limit: 10 } } });
    expect(attempts.response.status).toBe(200);
    const report = await org.GET("/organizations/{orgSlug}/transparency/report", { params: { path: orgPath } });
    expect(report.data?.reports.total).toBeGreaterThan(0);
  });
});

describe("statements of reasons (DSA)", () => {
  test("an action's statement, the project's DSA settings (read, replace), the export", async () => {
    const created = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", {
      params: { path: op() },
      body: { kind: "ban", reason: "Spam wave", identity: { type: "user", externalId: "u-dsa" } },
    });
    expect(created.response.status).toBe(201);
    const actionId = created.data!.action.id;
    const statement = await sdk.GET("/projects/{projectId}/enforcement-actions/{actionId}/statement", { params: { path: { projectId, actionId } } });
    expect(statement.data?.statement.decision_account).toBe("DECISION_ACCOUNT_TERMINATED");
    const settings = await org.GET("/organizations/{orgSlug}/projects/{projectId}/dsa-settings", { params: { path: op() } });
    expect(settings.data?.settings.territorialScope.length).toBe(30);
    const put = await org.PUT("/organizations/{orgSlug}/projects/{projectId}/dsa-settings", {
      params: { path: op() },
      body: { categories: { spam: { category: "STATEMENT_CATEGORY_SCAMS_AND_FRAUD" } }, territorialScope: ["DE"] },
    });
    expect(put.data?.settings.territorialScope).toEqual(["DE"]);
    const day = new Date().toISOString().slice(0, 10);
    const exported = await org.GET("/organizations/{orgSlug}/transparency/statements", { params: { path: { orgSlug }, query: { from: day, to: day } } });
    expect(exported.data?.statements.map((s) => s.puid)).toContain(`flagstaff-${actionId}`);
  });
});

/**
 * The errors every route shares, for every operation of both documents: no key (401), a
 * publishable key of another project (403), an unknown organization, project or resource
 * (404), input that cannot be valid (400), a body over the limit (413). None of these
 * changes anything, so they run over the real IDs gathered above.
 */
describe("errors every route documents", () => {
  /** The operations of a family, as the published document lists them. */
  const operations = (family: Family) =>
    Object.entries(contract.docs[family].paths).flatMap(([path, item]) =>
      (["get", "put", "post", "patch", "delete"] as const).filter((m) => item[m]).map((m) => ({ path, method: m.toUpperCase() as Method })),
    );
  type Method = "GET" | "PUT" | "POST" | "PATCH" | "DELETE";
  const hasBody = (m: Method) => m === "POST" || m === "PUT" || m === "PATCH";
  /** The attachment uploads: their body is raw bytes, not JSON (docs/attachments.md). */
  const isUpload = (m: Method, path: string) => m === "POST" && path.endsWith("/attachments");

  /**
   * Calls one operation with the given path parameters (missing ones from `ids`). The sweep
   * goes through the same typed clients, but over every path at once, so it uses openapi-fetch's
   * `request` without per-path types: the one place in the suite that does.
   */
  async function call(family: Family, key: string | null, method: Method, path: string, opts: { path?: Record<string, string>; query?: Record<string, string>; rawBody?: string } = {}) {
    const client = family === "sdk" ? await checkedSdkClient(server.url, key) : await checkedOrgClient(server.url, key);
    const params = { path: { ...pathParams(path), ...opts.path }, query: opts.query };
    const init = { params, ...(opts.rawBody !== undefined ? { body: {}, bodySerializer: () => opts.rawBody } : {}) };
    const request = client.request as unknown as (m: Method, p: string, i: unknown) => Promise<{ response: Response; error?: { error: string } }>;
    return request(method, path, init);
  }
  /**
   * A body each operation would accept, so that 403 and 404 are about the key and the IDs:
   * input is validated before the procedure looks its project up, so a bad body would be a 400.
   */
  const VALID_BODIES: Record<string, unknown> = {
    "POST /projects/{projectId}/reports": { subject: { type: "user", externalId: "u-1" }, reason: "spam" },
    "POST /reports/{reportId}/dismiss": { reason: "other" },
    "POST /projects/{projectId}/enforcement-actions/{actionId}/appeal": { text: "Please" },
    "POST /organizations/{orgSlug}/projects/{projectId}/categories": { name: "Sweep" },
    "POST /organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}/policy-versions": { text: "Sweep" },
    "PATCH /organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}/policy-versions/{version}": { status: "draft" },
    "POST /organizations/{orgSlug}/api-keys": { projectId: "p", kind: "secret" },
    "POST /organizations/{orgSlug}/projects": { name: "Sweep" },
    "PATCH /organizations/{orgSlug}/projects/{projectId}": { name: "Sweep" },
    "POST /organizations/{orgSlug}/projects/{projectId}/content": { content: "hello" },
    "POST /organizations/{orgSlug}/projects/{projectId}/enforcement-actions": { kind: "warning", reason: "Sweep", identity: { type: "user", externalId: "u-1" } },
    "POST /organizations/{orgSlug}/webhook-endpoints": { url: "http://127.0.0.1:9/sweep" },
    "POST /organizations/{orgSlug}/rules": { name: "Sweep", trigger: "report.created", mode: "disabled", when: { all: [] }, then: [{ type: "tag", tag: "sweep" }] },
    "POST /organizations/{orgSlug}/rules/test": { rule: { when: { all: [] }, then: [{ type: "tag", tag: "sweep" }] } },
    "POST /organizations/{orgSlug}/queues": { name: "Sweep" },
    "POST /organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/sweep": { caseIds: ["c"] },
    "PUT /organizations/{orgSlug}/transparency/submission": { endpointUrl: "http://127.0.0.1:9/sweep", token: "t", enabled: false },
    "POST /organizations/{orgSlug}/projects/{projectId}/evaluation-sets/import": { name: "Sweep", format: "csv", content: "text,categories" },
    "POST /organizations/{orgSlug}/projects/{projectId}/evaluation-sets/from-decisions": { name: "Sweep" },
    "POST /organizations/{orgSlug}/projects/{projectId}/evaluation-runs": { setId: "s" },
    "POST /organizations/{orgSlug}/projects/{projectId}/media-banks": { name: "Sweep" },
    "POST /organizations/{orgSlug}/media-banks/{bankId}/entries": { signalType: "md5", value: "ab".repeat(16) },
    "POST /organizations/{orgSlug}/media-banks/{bankId}/import": { format: "csv", content: "signal_type,signal_value" },
    "POST /organizations/{orgSlug}/media-matches/{matchId}/verdict": { verdict: "rejected" },
    "POST /organizations/{orgSlug}/cases/{caseId}/media-bankings": { bankId: "b", reason: "Sweep" },
  };
  const validBody = (method: Method, path: string) => (hasBody(method) ? { rawBody: JSON.stringify(VALID_BODIES[`${method} ${path}`] ?? {}) } : {});
  /** A query each GET with required parameters would accept (the same reason as VALID_BODIES). */
  const VALID_QUERIES: Record<string, Record<string, string>> = {
    "GET /organizations/{orgSlug}/transparency/statements": { from: "2026-01-01", to: "2026-01-31" },
  };
  const pathParams = (path: string) => Object.fromEntries([...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name!, ids[name!] ?? `missing-${name}`]));

  for (const family of ["sdk", "org"] as const) {
    test(`${family}: 401 without a key, 403 with a publishable key of another project`, async () => {
      for (const { path, method } of operations(family)) {
        const anonymous = await call(family, null, method, path, validBody(method, path));
        expect(`${method} ${path} ${anonymous.response.status}`).toBe(`${method} ${path} 401`);
        expect(anonymous.error?.error).toContain("API key");
        const publishable = await call(family, otherPublishableKey, method, path, validBody(method, path));
        expect(`${method} ${path} ${publishable.response.status}`).toBe(`${method} ${path} 403`);
      }
    });

    test(`${family}: 404 for an unknown organization, project or resource`, async () => {
      for (const { path, method } of operations(family)) {
        const unknown: { path?: Record<string, string>; query?: Record<string, string> } = path.includes("{orgSlug}")
          ? { path: { orgSlug: "no-such-org" } }
          : path.includes("{projectId}")
            ? { path: { projectId: "00000000-0000-4000-8000-000000000000" } }
            : path.includes("{reportId}")
              ? { path: { reportId: "no-such-report" } }
              : { query: { projectId: "00000000-0000-4000-8000-000000000000" } };
        const query = VALID_QUERIES[`${method} ${path}`];
        const r = await call(family, server.demo.secretKey, method, path, { ...unknown, ...(query ? { query: { ...query, ...unknown.query } } : {}), ...validBody(method, path) });
        expect(`${method} ${path} ${r.response.status}`).toBe(`${method} ${path} 404`);
      }
    });

    test(`${family}: 400 for input that cannot be valid, 413 for a body over the limit`, async () => {
      const tooLong = "x".repeat(300);
      for (const { path, method } of operations(family)) {
        // An upload's body is the file: an empty one is the input that cannot be valid.
        const bad = hasBody(method)
          ? { rawBody: isUpload(method, path) ? "" : "{ not json" }
          : path.includes("{")
            ? { path: Object.fromEntries([...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name!, tooLong])) }
            : { query: { limit: "0" } };
        const r = await call(family, server.demo.secretKey, method, path, bad);
        expect(`${method} ${path} ${r.response.status}`).toBe(`${method} ${path} 400`);
        expect(r.error?.error.length).toBeGreaterThan(0);
        if (hasBody(method)) {
          const big = await call(family, server.demo.secretKey, method, path, { rawBody: JSON.stringify({ note: "x".repeat(300_000) }) });
          expect(`${method} ${path} ${big.response.status}`).toBe(`${method} ${path} 413`);
        }
      }
    });
  }
});

/**
 * Documented answers a client of a healthy test server cannot provoke, each with the test that
 * produces it where it can be: keep this list short, and never put a status here to hide it.
 */
const PROVOKED_ELSEWHERE: Record<string, string> = {
  // DNS that does not answer: test/webhook-url.test.ts, with a resolver that fails.
  "org POST /organizations/{orgSlug}/webhook-endpoints 503": "test/webhook-url.test.ts",
  "org PATCH /organizations/{orgSlug}/webhook-endpoints/{endpointId} 503": "test/webhook-url.test.ts",
  "org PUT /organizations/{orgSlug}/transparency/submission 503": "test/transparency-submission.test.ts",
};

/**
 * Every route answers 503 while the database cannot answer: test/pg-connection-loss.test.ts
 * calls every REST route while PostgreSQL is unreachable and checks each 503 against the
 * documents (on the PostgreSQL pass).
 */
const databaseFault = (answer: string) => answer.endsWith(" 503");

test("every documented answer of every route was produced and matched its document", () => {
  const documented = contract.documented();
  const missing = documented.filter((answer) => !contract.seen.has(answer) && !(answer in PROVOKED_ELSEWHERE) && !databaseFault(answer));
  expect(missing).toEqual([]);
  // The exemptions name answers that are documented and were not seen here.
  for (const answer of Object.keys(PROVOKED_ELSEWHERE)) {
    expect(documented).toContain(answer);
    expect(contract.seen.has(answer)).toBe(false);
  }
});

test("the checker itself fails on a field the document does not have, a missing field and an undocumented status", async () => {
  const reportId = ids.reportId!;
  const res = await fetch(`${server.sdk}/reports/${reportId}`, { headers: { authorization: `Bearer ${server.demo.secretKey}` } });
  const body = (await res.json()) as { report: Record<string, unknown> };
  const check = (status: number, value: unknown) => contract.check("sdk", "GET", "/reports/{reportId}", status, res.headers, JSON.stringify(value));
  expect(check(200, body)).toEqual([]);
  expect(check(200, { report: { ...body.report, surprise: 1 } }).join()).toContain("must NOT have additional properties");
  const { status: _status, ...withoutStatus } = body.report;
  expect(check(200, { report: withoutStatus }).join()).toContain("must have required property 'status'");
  expect(check(418, { error: "teapot" }).join()).toContain("status not documented");
  expect(check(404, { error: "Not found", code: "NOT_FOUND" }).join()).toContain("additional properties");
});

test("the documents say what generated clients need: servers, Bearer scheme, tags, 201s, optional bodies", () => {
  for (const family of ["sdk", "org"] as const) {
    const doc = contract.docs[family] as unknown as {
      openapi: string;
      info: { version: string };
      servers: { url: string; variables?: Record<string, { default: string }> }[];
      tags: { name: string }[];
      components: { securitySchemes: Record<string, { type: string; scheme?: string }>; schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("1.0.0");
    expect(doc.servers[0]!.url).toBe(family === "sdk" ? "http://localhost:3001/sdk/flagstaff/v1" : "http://localhost:3001/api/v1");
    expect(doc.servers[1]!.url).toStartWith("{base_url}");
    expect(doc.servers[1]!.variables?.base_url?.default).toBeDefined();
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.tags.length).toBeGreaterThan(0);
    expect(JSON.stringify(doc)).not.toContain("error.BAD_REQUEST");
  }
  const sdkDoc = contract.docs.sdk.paths as Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: { required: boolean }; parameters?: { name: string; schema: { format?: string } }[] }>>;
  expect(Object.keys(sdkDoc["/projects/{projectId}/reports"]!.post!.responses)).toContain("201");
  expect(Object.keys(sdkDoc["/projects/{projectId}/enforcement-actions/{actionId}/appeal"]!.post!.responses)).toContain("201");
  expect(sdkDoc["/projects/{projectId}/identities/{typeName}/{externalId}"]!.put!.requestBody!.required).toBe(false);
  expect(sdkDoc["/reports/{reportId}/escalate"]!.post!.requestBody!.required).toBe(false);
  expect(sdkDoc["/reports"]!.get!.parameters!.find((p) => p.name === "cursor")!.schema.format).toBe("date-time");
  expect(Object.keys(sdkDoc["/reports"]!.get!.responses)).toContain("404");
});
