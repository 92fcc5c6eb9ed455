import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import { until } from "./helpers/wait.ts";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";

let fake: FakeOllama;
let server: TestServer;
let free: InitResult;

const answer = (severity: string, confidence: number, categories: string[] = ["harassment"], reasoning = "insulting language") => ({
  json: { reasoning, categories, severity, confidence },
});

beforeAll(async () => {
  fake = startFakeOllama();
  server = await startServer({
    OLLAMA_HOST: fake.url,
    FLAGSTAFF_AI_MODEL: "llama3.2",
    FLAGSTAFF_AI_TIMEOUT_MS: "3000",
    FLAGSTAFF_JOB_POLL_MS: "100",
    FLAGSTAFF_JOB_BACKOFF_MS: "100",
    FLAGSTAFF_JOB_BACKOFF_CAP_MS: "300",
    FLAGSTAFF_REPORT_RATE_LIMIT: "1000",
  });
  free = await server.initOrg("Free Org", "Free project", "free");
  await setSettings({ aiEnabled: true, aiThreshold: 70 });
});
afterAll(async () => {
  await server.dispose();
  await fake.stop();
});
beforeEach(() => fake.reset());

const org = () => `/api/v1/organizations/${server.demo.orgSlug}/projects/${server.demo.projectId}`;
const analyze = (body: unknown, opts: { key?: string | null; path?: string } = {}) =>
  server.call("POST", opts.path ?? `${org()}/content`, { body, key: opts.key });
async function setSettings(patch: Record<string, unknown>) {
  const r = await server.call("PATCH", `${org()}/settings`, { body: patch });
  expect(r.status).toBe(200);
  return r.body.settings;
}
const report = async (id: string) => (await server.call("GET", `/reports/${id}`)).body.report;
const aiAudit = async (reportId: string) =>
  (await server.call("GET", `/api/v1/organizations/${server.demo.orgSlug}/audit-events?action=AI_ANALYZED&entityId=${reportId}`)).body.events;

describe("project settings", () => {
  test("read and change aiEnabled, aiThreshold and scanLinks", async () => {
    const read = await server.call("GET", `${org()}/settings`);
    expect(read.status).toBe(200);
    expect(read.body.settings).toEqual({ aiEnabled: true, aiThreshold: 70, scanLinks: false });
    expect(await setSettings({ aiThreshold: 55 })).toEqual({ aiEnabled: true, aiThreshold: 55, scanLinks: false });
    expect(await setSettings({ aiThreshold: 70 })).toMatchObject({ aiThreshold: 70 });
  });

  test("a threshold outside 1–100 → 400; a publishable key → 403", async () => {
    for (const t of [0, 101, 50.5, "70"]) {
      const r = await server.call("PATCH", `${org()}/settings`, { body: { aiThreshold: t } });
      expect(r.status).toBe(400);
    }
    const pk = await server.call("GET", `${org()}/settings`, { key: server.demo.publishableKey });
    expect(pk.status).toBe(403);
  });

  test("the free plan cannot turn AI on (403)", async () => {
    const r = await server.call("PATCH", `/api/v1/organizations/${free.orgSlug}/projects/${free.projectId}/settings`, {
      key: free.secretKey,
      body: { aiEnabled: true },
    });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatch(/plan/i);
  });
});

describe("POST …/content errors", () => {
  test("content missing → 400", async () => {
    const r = await analyze({});
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/content/);
  });
  test("content over 10,000 characters → 400", async () => {
    const r = await analyze({ content: "x".repeat(10_001) });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/10,?000/);
  });
  test("unknown organization or project → 404", async () => {
    const a = await analyze({ content: "hi" }, { path: `/api/v1/organizations/nope/projects/${server.demo.projectId}/content` });
    expect(a.status).toBe(404);
    const b = await analyze({ content: "hi" }, { path: `/api/v1/organizations/${server.demo.orgSlug}/projects/00000000-0000-4000-8000-000000000000/content` });
    expect(b.status).toBe(404);
  });
  test("missing or bad key → 401", async () => {
    expect((await analyze({ content: "hi" }, { key: null })).status).toBe(401);
    expect((await analyze({ content: "hi" }, { key: "sk_live_" + "x".repeat(43) })).status).toBe(401);
  });
  test("free plan → 403", async () => {
    const r = await analyze({ content: "hi" }, { key: free.secretKey, path: `/api/v1/organizations/${free.orgSlug}/projects/${free.projectId}/content` });
    expect(r.status).toBe(403);
  });
  test("AI not enabled → 400", async () => {
    const created = await server.call("POST", `/api/v1/organizations/${server.demo.orgSlug}/projects`, { body: { name: "No AI" } });
    const path = `/api/v1/organizations/${server.demo.orgSlug}/projects/${created.body.project.id}/content`;
    const r = await analyze({ content: "hi" }, { path });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/not enabled/);
  });
  test("no categories → 400", async () => {
    const created = await server.call("POST", `/api/v1/organizations/${server.demo.orgSlug}/projects`, { body: { name: "Bare" } });
    const base = `/api/v1/organizations/${server.demo.orgSlug}/projects/${created.body.project.id}`;
    await server.call("PATCH", `${base}/settings`, { body: { aiEnabled: true } });
    const cats = (await server.call("GET", `${base}/categories`)).body.categories;
    for (const c of cats) expect((await server.call("DELETE", `${base}/categories/${c.id}`)).status).toBe(200);
    const r = await analyze({ content: "hi" }, { path: `${base}/content` });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/categor/);
    expect(fake.requests.length).toBe(0);
  });
});

describe("analysis and automatic reports", () => {
  test("answers exactly { analysis, reportCreated, reportId }", async () => {
    fake.script(answer("MEDIUM", 40));
    const r = await analyze({ content: "you are annoying" });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["analysis", "reportCreated", "reportId"]);
    expect(Object.keys(r.body.analysis).sort()).toEqual(["categories", "confidence", "reasoning", "severity"]);
    expect(r.body).toEqual({
      analysis: { categories: ["harassment"], severity: "MEDIUM", confidence: 40, reasoning: "insulting language" },
      reportCreated: false,
      reportId: null,
    });
  });

  test("confidence equal to the threshold creates a report; one below does not", async () => {
    fake.script([answer("HIGH", 70), answer("HIGH", 69)]);
    const at = await analyze({ content: "threshold text", externalId: "post-at", contentType: "post" });
    expect(at.body.reportCreated).toBe(true);
    expect(at.body.reportId).toBeString();
    const below = await analyze({ content: "threshold text", externalId: "post-below", contentType: "post" });
    expect(below.body.reportCreated).toBe(false);
    expect(below.body.reportId).toBeNull();
  });

  test("LOW never creates a report, whatever the confidence", async () => {
    fake.script(answer("LOW", 100, []));
    const r = await analyze({ content: "nice weather today" });
    expect(r.body.reportCreated).toBe(false);
    expect(r.body.analysis.severity).toBe("LOW");
  });

  test("the automatic report carries reason, description, target and automated", async () => {
    fake.script(answer("CRITICAL", 95, ["threats"], "explicit threat to kill"));
    const r = await analyze({ content: "I will find you and hurt you", externalId: "msg-77", contentType: "message" });
    expect(r.body.reportCreated).toBe(true);
    const rep = await report(r.body.reportId);
    expect(rep.automated).toBe(true);
    expect(rep.reasons).toEqual(["threats"]);
    expect(rep.status).toBe("OPEN");
    expect(rep.target).toEqual({ contentType: "message", contentExternalId: "msg-77", content: "I will find you and hurt you" });
    expect(rep.description).toContain("CRITICAL");
    expect(rep.description).toContain("95");
    expect(rep.description).toContain("explicit threat to kill");
    expect(rep.description).toContain("I will find you and hurt you");

    // It joins cases like any other report.
    const human = await server.call("POST", `/projects/${server.demo.projectId}/reports`, {
      body: { target: { contentExternalId: "msg-77", contentType: "message" }, reason: "harassment" },
    });
    expect((await report(human.body.report.id)).caseId).toBe(rep.caseId);
  });

  test("unknown categories are dropped and confidence clamped before anything is stored", async () => {
    fake.script({ json: { reasoning: "r", categories: ["spam", "made_up", "SPAM"], severity: "HIGH", confidence: 150 } });
    const r = await analyze({ content: "buy cheap pills" });
    expect(r.body.analysis.categories).toEqual(["spam"]);
    expect(r.body.analysis.confidence).toBe(100);
    const list = await server.call("GET", `${org()}/content-analyses`);
    expect(list.body.analyses[0].categories).toEqual(["spam"]);
    expect(list.body.analyses[0].confidence).toBe(100);
    fake.script({ json: { reasoning: "r", categories: [], severity: "MEDIUM", confidence: -5 } });
    expect((await analyze({ content: "meh" })).body.analysis.confidence).toBe(0);
  });

  test("content analyses: the 50 most recent with their fields and linked report ids; AI_ANALYZED audited", async () => {
    fake.setDefault(() => answer("HIGH", 90, ["spam"], "bulk ad"));
    let lastReport = "";
    for (let i = 0; i < 52; i++) {
      const r = await analyze({ content: `ad number ${i}`, externalId: `ad-${i}` });
      lastReport = r.body.reportId;
    }
    const list = await server.call("GET", `${org()}/content-analyses`);
    expect(list.status).toBe(200);
    expect(list.body.analyses.length).toBe(50);
    const newest = list.body.analyses[0];
    expect(newest).toMatchObject({ categories: ["spam"], severity: "HIGH", confidence: 90, reasoning: "bulk ad", reportId: lastReport, externalId: "ad-51" });
    const events = (await server.call("GET", `/api/v1/organizations/${server.demo.orgSlug}/audit-events?action=AI_ANALYZED&limit=1`)).body.events;
    expect(events[0].data).toMatchObject({ severity: "HIGH", confidence: 90, categories: ["spam"], reasoning: "bulk ad", reportId: lastReport });
  });

  test("Ollama down → 503 { error } and nothing stored", async () => {
    const down = startFakeOllama();
    const port = down.port;
    await down.stop();
    const other = await startServer({ OLLAMA_HOST: `http://127.0.0.1:${port}`, FLAGSTAFF_AI_TIMEOUT_MS: "2000" });
    try {
      await other.call("PATCH", `/api/v1/organizations/${other.demo.orgSlug}/projects/${other.demo.projectId}/settings`, { body: { aiEnabled: true } });
      const r = await other.call("POST", `/api/v1/organizations/${other.demo.orgSlug}/projects/${other.demo.projectId}/content`, { body: { content: "hello" } });
      expect(r.status).toBe(503);
      expect(r.body.error).toMatch(/unreachable/);
      expect(r.body.error).not.toContain(String(port)); // the backend's address stays private
      const list = await other.call("GET", `/api/v1/organizations/${other.demo.orgSlug}/projects/${other.demo.projectId}/content-analyses`);
      expect(list.body.analyses).toEqual([]);
    } finally {
      await other.dispose();
    }
  });

  test("a model that is not pulled → 503 saying how to pull it; garbage twice → 503", async () => {
    const r = await startServer({ OLLAMA_HOST: fake.url, FLAGSTAFF_AI_MODEL: "qwen2.5" });
    try {
      await r.call("PATCH", `/api/v1/organizations/${r.demo.orgSlug}/projects/${r.demo.projectId}/settings`, { body: { aiEnabled: true } });
      const a = await r.call("POST", `/api/v1/organizations/${r.demo.orgSlug}/projects/${r.demo.projectId}/content`, { body: { content: "hello" } });
      expect(a.status).toBe(503);
      expect(a.body.error).toContain("ollama pull qwen2.5");
    } finally {
      await r.dispose();
    }
    fake.script([{ raw: "not json at all" }, { raw: "{still not" }]);
    const g = await analyze({ content: "garbage please" });
    expect(g.status).toBe(503);
    expect(g.body.error).toBeString();
  });
});

describe("enrichment", () => {
  const file = (body: Record<string, unknown>) =>
    server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: { reason: "harassment", ...body } });

  test("HIGH at the threshold moves OPEN → IN_REVIEW, attaches the AI fields and writes AI_ANALYZED", async () => {
    fake.script(answer("HIGH", 80, ["harassment"], "targeted insults"));
    const r = await file({ target: { contentExternalId: "enrich-1", contentType: "post", content: "you are worthless" }, description: "insults" });
    const id = r.body.report.id;
    const enriched = await until("enrichment", async () => {
      const rep = await report(id);
      return rep.ai ? rep : null;
    });
    expect(enriched.status).toBe("IN_REVIEW");
    expect(enriched.ai).toMatchObject({ severity: "HIGH", confidence: 80, categories: ["harassment"], reasoning: "targeted insults" });
    const prompt = fake.requests.at(-1)!.messages.map((m) => m.content).join("\n");
    expect(prompt).toContain("insults");
    expect(prompt).toContain("you are worthless");
    const events = await aiAudit(id);
    expect(events.length).toBe(1);
    expect(events[0].data).toMatchObject({ severity: "HIGH", confidence: 80, categories: ["harassment"], reasoning: "targeted insults" });
  });

  test("below the threshold or MEDIUM: AI fields attached, status stays OPEN", async () => {
    fake.script(answer("MEDIUM", 99));
    const r = await file({ subject: { type: "user", externalId: "enrich-medium" }, description: "borderline" });
    const rep = await until("enrichment", async () => {
      const x = await report(r.body.report.id);
      return x.ai ? x : null;
    });
    expect(rep.status).toBe("OPEN");
    expect(rep.ai.severity).toBe("MEDIUM");
  });

  test("CRITICAL raises the case to emergency", async () => {
    fake.script(answer("CRITICAL", 97, ["threats"]));
    const r = await file({ target: { contentExternalId: "enrich-crit", content: "bomb threat" }, reason: "spam" });
    const rep = await until("enrichment", async () => {
      const x = await report(r.body.report.id);
      return x.ai ? x : null;
    });
    const detail = await server.call("GET", `/trpc/cases.detail?input=${encodeURIComponent(JSON.stringify({ caseId: rep.caseId }))}`);
    expect(detail.body.result.data.case.bucket).toBe("emergency");
    expect(detail.body.result.data.case.status).toBe("IN_REVIEW");
  });

  test("with Ollama down the job retries and completes once it is back", async () => {
    const port = fake.port;
    await fake.stop();
    const r = await file({ subject: { type: "user", externalId: "enrich-retry" }, description: "while down" });
    await Bun.sleep(700); // a few failed attempts
    expect((await report(r.body.report.id)).ai).toBeNull();
    fake = startFakeOllama({ port });
    fake.script(answer("HIGH", 88));
    const rep = await until("enrichment after Ollama is back", async () => {
      const x = await report(r.body.report.id);
      return x.ai ? x : null;
    });
    expect(rep.ai.confidence).toBe(88);
    expect(rep.status).toBe("IN_REVIEW");
  });
});

describe("metrics", () => {
  test("every model call is counted with its latency in /metrics", async () => {
    const before = await server.call("GET", `${server.url}/metrics`, { key: null });
    const count = (text: string) => Number(/flagstaff_ai_call_duration_seconds_count\{outcome="ok"\} (\d+)/.exec(text)?.[1] ?? 0);
    fake.script(answer("LOW", 5, []));
    expect((await analyze({ content: "metrics please" })).status).toBe(200);
    const after = await server.call("GET", `${server.url}/metrics`, { key: null });
    expect(after.status).toBe(200);
    expect(count(after.body)).toBe(count(before.body) + 1);
  });
});
