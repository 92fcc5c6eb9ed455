import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import { until } from "./helpers/wait.ts";
import type { OrgClient, OrgOperations, SdkClient, SdkOperations } from "../clients/typescript/index.ts";
import { withKey } from "./helpers/dashboard.ts";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";

type AnalyzeBody = OrgOperations["ai-analyze"]["requestBody"]["content"]["application/json"];
type SettingsChange = NonNullable<OrgOperations["ai-updateSettings"]["requestBody"]>["content"]["application/json"];
type ReportBody = SdkOperations["reports-create"]["requestBody"]["content"]["application/json"];

let fake: FakeOllama;
let server: TestServer;
let free: InitResult;
/** The demo secret key's clients. */
let sdk: SdkClient;
let org: OrgClient;

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
  sdk = await server.sdkClient();
  org = await server.orgClient();
  await setSettings({ aiEnabled: true, aiThreshold: 70 });
});
afterAll(async () => {
  await server.dispose();
  await fake.stop();
});
beforeEach(() => fake.reset());

const inProject = (orgSlug = server.demo.orgSlug, projectId = server.demo.projectId) => ({ path: { orgSlug, projectId } });
/** Analyzes content: with the demo secret key in the demo project unless told otherwise. */
const analyze = async (body: AnalyzeBody, opts: { client?: OrgClient; orgSlug?: string; projectId?: string } = {}) =>
  (opts.client ?? org).POST("/organizations/{orgSlug}/projects/{projectId}/content", { params: inProject(opts.orgSlug, opts.projectId), body });
async function setSettings(patch: SettingsChange) {
  const r = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/settings", { params: inProject(), body: patch });
  expect(r.response.status).toBe(200);
  return r.data!.settings;
}
const report = async (reportId: string) => {
  const r = await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } });
  expect(r.response.status).toBe(200);
  return r.data!.report;
};
const aiAudit = async (reportId: string) => {
  const r = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug: server.demo.orgSlug }, query: { action: "AI_ANALYZED", entityId: reportId } } });
  expect(r.response.status).toBe(200);
  return r.data!.events;
};
/** A new project of the demo organization. */
const newProject = async (name: string) => {
  const created = await org.POST("/organizations/{orgSlug}/projects", { params: { path: { orgSlug: server.demo.orgSlug } }, body: { name } });
  expect(created.response.status).toBe(201);
  return created.data!.project.id;
};

describe("project settings", () => {
  test("read and change aiEnabled, aiThreshold and scanLinks", async () => {
    const read = await org.GET("/organizations/{orgSlug}/projects/{projectId}/settings", { params: inProject() });
    expect(read.response.status).toBe(200);
    expect(read.data!.settings).toEqual({ aiEnabled: true, aiThreshold: 70, aiPrecisionTarget: 0.9, scanLinks: false });
    expect(await setSettings({ aiThreshold: 55 })).toEqual({ aiEnabled: true, aiThreshold: 55, aiPrecisionTarget: 0.9, scanLinks: false });
    expect(await setSettings({ aiThreshold: 70 })).toMatchObject({ aiThreshold: 70 });
  });

  test("the precision target: 0.5–0.999, kept, audited; anything else → 400", async () => {
    expect(await setSettings({ aiPrecisionTarget: 0.75 })).toMatchObject({ aiThreshold: 70, aiPrecisionTarget: 0.75 });
    expect((await org.GET("/organizations/{orgSlug}/projects/{projectId}/settings", { params: inProject() })).data!.settings.aiPrecisionTarget).toBe(0.75);
    const audit = await org.GET("/organizations/{orgSlug}/audit-events", {
      params: { path: { orgSlug: server.demo.orgSlug }, query: { action: "PROJECT_SETTINGS_CHANGED", entityId: server.demo.projectId } },
    });
    expect(audit.data!.events[0]).toMatchObject({ before: { aiPrecisionTarget: 0.9 }, after: { aiPrecisionTarget: 0.75 } });
    for (const t of [0.3, 1.5, 1, 0.4999]) {
      const r = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/settings", { params: inProject(), body: { aiPrecisionTarget: t } });
      expect(r.response.status).toBe(400);
      expect(JSON.stringify(r.error)).toContain("aiPrecisionTarget must be between 0.5 and 0.999");
    }
    const text = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/settings", {
      params: inProject(),
      body: { aiPrecisionTarget: 0.9 },
      bodySerializer: () => JSON.stringify({ aiPrecisionTarget: "0.9" }),
    });
    expect(text.response.status).toBe(400);
    expect(await setSettings({ aiPrecisionTarget: 0.999 })).toMatchObject({ aiPrecisionTarget: 0.999 });
    expect(await setSettings({ aiPrecisionTarget: 0.9 })).toMatchObject({ aiPrecisionTarget: 0.9 });
  });

  test("a threshold outside 1–100 → 400; a publishable key → 403", async () => {
    for (const t of [0, 101, 50.5]) {
      const r = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/settings", { params: inProject(), body: { aiThreshold: t } });
      expect(r.response.status).toBe(400);
    }
    // A threshold that is a string, which the client's types forbid: this JSON is sent instead
    // of the (valid, so 200) typed body, still through the typed client.
    const text = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/settings", {
      params: inProject(),
      body: { aiThreshold: 70 },
      bodySerializer: () => JSON.stringify({ aiThreshold: "70" }),
    });
    expect(text.response.status).toBe(400);
    const pk = await (await server.orgClient(server.demo.publishableKey)).GET("/organizations/{orgSlug}/projects/{projectId}/settings", { params: inProject() });
    expect(pk.response.status).toBe(403);
  });

  test("the free plan cannot turn AI on (403)", async () => {
    const r = await (await server.orgClient(free.secretKey)).PATCH("/organizations/{orgSlug}/projects/{projectId}/settings", {
      params: inProject(free.orgSlug, free.projectId),
      body: { aiEnabled: true },
    });
    expect(r.response.status).toBe(403);
    expect(r.error?.error).toMatch(/plan/i);
  });
});

describe("POST …/content errors", () => {
  test("content missing → 400", async () => {
    // No content, which the client's types forbid: `{}` is sent instead of the typed body.
    const r = await org.POST("/organizations/{orgSlug}/projects/{projectId}/content", { params: inProject(), body: { content: "hi" }, bodySerializer: () => "{}" });
    expect(r.response.status).toBe(400);
    expect(r.error?.error).toMatch(/content/);
  });
  test("content over 10,000 characters → 400", async () => {
    const r = await analyze({ content: "x".repeat(10_001) });
    expect(r.response.status).toBe(400);
    expect(r.error?.error).toMatch(/10,?000/);
  });
  test("unknown organization or project → 404", async () => {
    const a = await analyze({ content: "hi" }, { orgSlug: "nope" });
    expect(a.response.status).toBe(404);
    const b = await analyze({ content: "hi" }, { projectId: "00000000-0000-4000-8000-000000000000" });
    expect(b.response.status).toBe(404);
  });
  test("missing or bad key → 401", async () => {
    expect((await analyze({ content: "hi" }, { client: await server.orgClient(null) })).response.status).toBe(401);
    expect((await analyze({ content: "hi" }, { client: await server.orgClient("sk_live_" + "x".repeat(43)) })).response.status).toBe(401);
  });
  test("free plan → 403", async () => {
    const r = await analyze({ content: "hi" }, { client: await server.orgClient(free.secretKey), orgSlug: free.orgSlug, projectId: free.projectId });
    expect(r.response.status).toBe(403);
  });
  test("AI not enabled → 400", async () => {
    const projectId = await newProject("No AI");
    const r = await analyze({ content: "hi" }, { projectId });
    expect(r.response.status).toBe(400);
    expect(r.error?.error).toMatch(/not enabled/);
  });
  test("no categories → 400", async () => {
    const projectId = await newProject("Bare");
    const path = inProject(server.demo.orgSlug, projectId);
    expect((await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/settings", { params: path, body: { aiEnabled: true } })).response.status).toBe(200);
    const cats = (await org.GET("/organizations/{orgSlug}/projects/{projectId}/categories", { params: path })).data!.categories;
    for (const c of cats) {
      const deleted = await org.DELETE("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}", { params: { path: { ...path.path, categoryId: c.id } } });
      expect(deleted.response.status).toBe(200);
    }
    const r = await analyze({ content: "hi" }, { projectId });
    expect(r.response.status).toBe(400);
    expect(r.error?.error).toMatch(/categor/);
    expect(fake.requests.length).toBe(0);
  });
});

describe("analysis and automatic reports", () => {
  test("answers exactly { analysis, reportCreated, reportId }", async () => {
    fake.script(answer("MEDIUM", 40));
    const r = await analyze({ content: "you are annoying" });
    expect(r.response.status).toBe(200);
    expect(Object.keys(r.data!).sort()).toEqual(["analysis", "reportCreated", "reportId"]);
    expect(Object.keys(r.data!.analysis).sort()).toEqual(["categories", "confidence", "reasoning", "severity"]);
    expect(r.data).toEqual({
      analysis: { categories: ["harassment"], severity: "MEDIUM", confidence: 40, reasoning: "insulting language" },
      reportCreated: false,
      reportId: null,
    });
  });

  test("confidence equal to the threshold creates a report; one below does not", async () => {
    fake.script([answer("HIGH", 70), answer("HIGH", 69)]);
    const at = await analyze({ content: "threshold text", externalId: "post-at", contentType: "post" });
    expect(at.data?.reportCreated).toBe(true);
    expect(at.data?.reportId).toBeString();
    const below = await analyze({ content: "threshold text", externalId: "post-below", contentType: "post" });
    expect(below.data?.reportCreated).toBe(false);
    expect(below.data?.reportId).toBeNull();
  });

  test("LOW never creates a report, whatever the confidence", async () => {
    fake.script(answer("LOW", 100, []));
    const r = await analyze({ content: "nice weather today" });
    expect(r.data?.reportCreated).toBe(false);
    expect(r.data?.analysis.severity).toBe("LOW");
  });

  test("the automatic report carries reason, description, target and automated", async () => {
    fake.script(answer("CRITICAL", 95, ["threats"], "explicit threat to kill"));
    const r = await analyze({ content: "I will find you and hurt you", externalId: "msg-77", contentType: "message" });
    expect(r.data?.reportCreated).toBe(true);
    const rep = await report(r.data!.reportId!);
    expect(rep.automated).toBe(true);
    expect(rep.reasons).toEqual(["threats"]);
    expect(rep.status).toBe("OPEN");
    expect(rep.target).toEqual({ contentType: "message", contentExternalId: "msg-77", content: "I will find you and hurt you" });
    expect(rep.description).toContain("CRITICAL");
    expect(rep.description).toContain("95");
    expect(rep.description).toContain("explicit threat to kill");
    expect(rep.description).toContain("I will find you and hurt you");

    // It joins cases like any other report.
    const human = await sdk.POST("/projects/{projectId}/reports", {
      params: { path: { projectId: server.demo.projectId } },
      body: { target: { contentExternalId: "msg-77", contentType: "message" }, reason: "harassment" },
    });
    expect(human.response.status).toBe(201);
    expect((await report(human.data!.report.id)).caseId).toBe(rep.caseId);
  });

  test("unknown categories are dropped and confidence clamped before anything is stored", async () => {
    fake.script({ json: { reasoning: "r", categories: ["spam", "made_up", "SPAM"], severity: "HIGH", confidence: 150 } });
    const r = await analyze({ content: "buy cheap pills" });
    expect(r.data?.analysis.categories).toEqual(["spam"]);
    expect(r.data?.analysis.confidence).toBe(100);
    const list = await org.GET("/organizations/{orgSlug}/projects/{projectId}/content-analyses", { params: inProject() });
    expect(list.data!.analyses[0]?.categories).toEqual(["spam"]);
    expect(list.data!.analyses[0]?.confidence).toBe(100);
    fake.script({ json: { reasoning: "r", categories: [], severity: "MEDIUM", confidence: -5 } });
    expect((await analyze({ content: "meh" })).data?.analysis.confidence).toBe(0);
  });

  test("content analyses: the 50 most recent with their fields and linked report ids; AI_ANALYZED audited", async () => {
    fake.setDefault(() => answer("HIGH", 90, ["spam"], "bulk ad"));
    let lastReport: string | null = "";
    for (let i = 0; i < 52; i++) {
      const r = await analyze({ content: `ad number ${i}`, externalId: `ad-${i}` });
      lastReport = r.data!.reportId;
    }
    const list = await org.GET("/organizations/{orgSlug}/projects/{projectId}/content-analyses", { params: inProject() });
    expect(list.response.status).toBe(200);
    expect(list.data!.analyses.length).toBe(50);
    const newest = list.data!.analyses[0];
    expect(newest).toMatchObject({ categories: ["spam"], severity: "HIGH", confidence: 90, reasoning: "bulk ad", reportId: lastReport, externalId: "ad-51" });
    const events = (await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug: server.demo.orgSlug }, query: { action: "AI_ANALYZED", limit: 1 } } })).data!.events;
    expect(events[0]!.data).toMatchObject({ severity: "HIGH", confidence: 90, categories: ["spam"], reasoning: "bulk ad", reportId: lastReport });
  });

  test("Ollama down → 503 { error } and nothing stored", async () => {
    const down = startFakeOllama();
    const port = down.port;
    await down.stop();
    const other = await startServer({ OLLAMA_HOST: `http://127.0.0.1:${port}`, FLAGSTAFF_AI_TIMEOUT_MS: "2000" });
    try {
      const theirs = await other.orgClient();
      const path = inProject(other.demo.orgSlug, other.demo.projectId);
      expect((await theirs.PATCH("/organizations/{orgSlug}/projects/{projectId}/settings", { params: path, body: { aiEnabled: true } })).response.status).toBe(200);
      const r = await analyze({ content: "hello" }, { client: theirs, orgSlug: other.demo.orgSlug, projectId: other.demo.projectId });
      expect(r.response.status).toBe(503);
      expect(r.error?.error).toMatch(/unreachable/);
      expect(r.error?.error).not.toContain(String(port)); // the backend's address stays private
      const list = await theirs.GET("/organizations/{orgSlug}/projects/{projectId}/content-analyses", { params: path });
      expect(list.data!.analyses).toEqual([]);
    } finally {
      await other.dispose();
    }
  });

  test("a model that is not pulled → 503 saying how to pull it; garbage twice → 503", async () => {
    const r = await startServer({ OLLAMA_HOST: fake.url, FLAGSTAFF_AI_MODEL: "qwen2.5" });
    try {
      const theirs = await r.orgClient();
      const path = inProject(r.demo.orgSlug, r.demo.projectId);
      expect((await theirs.PATCH("/organizations/{orgSlug}/projects/{projectId}/settings", { params: path, body: { aiEnabled: true } })).response.status).toBe(200);
      const a = await analyze({ content: "hello" }, { client: theirs, orgSlug: r.demo.orgSlug, projectId: r.demo.projectId });
      expect(a.response.status).toBe(503);
      expect(a.error?.error).toContain("ollama pull qwen2.5");
    } finally {
      await r.dispose();
    }
    fake.script([{ raw: "not json at all" }, { raw: "{still not" }]);
    const g = await analyze({ content: "garbage please" });
    expect(g.response.status).toBe(503);
    expect(g.error?.error).toBeString();
  });
});

describe("enrichment", () => {
  const file = async (body: Partial<ReportBody>) => {
    const r = await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId: server.demo.projectId } }, body: { reason: "harassment", ...body } });
    expect(r.response.status).toBe(201);
    return r.data!.report;
  };

  test("HIGH at the threshold moves OPEN → IN_REVIEW, attaches the AI fields and writes AI_ANALYZED", async () => {
    fake.script(answer("HIGH", 80, ["harassment"], "targeted insults"));
    const r = await file({ target: { contentExternalId: "enrich-1", contentType: "post", content: "you are worthless" }, description: "insults" });
    const id = r.id;
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
    expect(events[0]!.data).toMatchObject({ severity: "HIGH", confidence: 80, categories: ["harassment"], reasoning: "targeted insults" });
  });

  test("below the threshold or MEDIUM: AI fields attached, status stays OPEN", async () => {
    fake.script(answer("MEDIUM", 99));
    const r = await file({ subject: { type: "user", externalId: "enrich-medium" }, description: "borderline" });
    const rep = await until("enrichment", async () => {
      const x = await report(r.id);
      return x.ai ? x : null;
    });
    expect(rep.status).toBe("OPEN");
    expect(rep.ai?.severity).toBe("MEDIUM");
  });

  test("CRITICAL raises the case to emergency", async () => {
    fake.script(answer("CRITICAL", 97, ["threats"]));
    const r = await file({ target: { contentExternalId: "enrich-crit", content: "bomb threat" }, reason: "spam" });
    const rep = await until("enrichment", async () => {
      const x = await report(r.id);
      return x.ai ? x : null;
    });
    // The case's bucket is only on the case detail, a dashboard procedure (tRPC).
    const detail = await withKey(server).caseDetail(rep.caseId);
    expect(detail.case.bucket).toBe("emergency");
    expect(detail.case.status).toBe("IN_REVIEW");
  });

  /** The audit events of one action about an entity, newest first. */
  const auditOf = async (entityType: "report" | "case", entityId: string, action: "REPORT_STATUS_CHANGED" | "CASE_STATUS_CHANGED") => {
    const r = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug: server.demo.orgSlug }, query: { entityType, entityId, action } } });
    expect(r.response.status).toBe(200);
    return r.data!.events;
  };

  test("the move goes through the workflow table (action enrich), audited for the report and its case by Flagstaff", async () => {
    fake.script(answer("HIGH", 90, ["harassment"]));
    const r = await file({ target: { contentExternalId: "enrich-table", contentType: "post", content: "you will regret this" } });
    const rep = await until("enrichment", async () => {
      const x = await report(r.id);
      return x.ai ? x : null;
    });
    expect(rep.status).toBe("IN_REVIEW");
    const moved = await auditOf("report", r.id, "REPORT_STATUS_CHANGED");
    expect(moved.length).toBe(1);
    expect(moved[0]).toMatchObject({
      actor: { type: "system" }, before: { status: "OPEN" }, after: { status: "IN_REVIEW" }, data: { action: "enrich", severity: "HIGH", confidence: 90 },
    });
    const caseMoved = await auditOf("case", rep.caseId, "CASE_STATUS_CHANGED");
    expect(caseMoved.length).toBe(1);
    expect(caseMoved[0]).toMatchObject({ actor: { type: "system" }, before: { status: "OPEN" }, after: { status: "IN_REVIEW" }, data: { action: "enrich" } });
  });

  test("a report decided before its enrichment ends keeps its status (the table has no enrich from RESOLVED) and gets the AI fields", async () => {
    fake.script({ ...answer("HIGH", 95), delayMs: 1500 });
    const r = await file({ target: { contentExternalId: "enrich-late", contentType: "post", content: "see you outside" } });
    const resolved = await sdk.POST("/reports/{reportId}/resolve", { params: { path: { reportId: r.id } }, body: { resolutionCode: "NO_VIOLATION" } });
    expect(resolved.response.status).toBe(200);
    const rep = await until("enrichment", async () => {
      const x = await report(r.id);
      return x.ai ? x : null;
    });
    expect(rep.status).toBe("RESOLVED");
    expect(rep.ai).toMatchObject({ severity: "HIGH", confidence: 95 });
    expect(await auditOf("report", r.id, "REPORT_STATUS_CHANGED")).toEqual([]);
    expect((await auditOf("case", rep.caseId, "CASE_STATUS_CHANGED")).map((e) => e.after)).toEqual([{ status: "RESOLVED" }]);
  });

  test("with Ollama down the job retries and completes once it is back", async () => {
    const port = fake.port;
    await fake.stop();
    const r = await file({ subject: { type: "user", externalId: "enrich-retry" }, description: "while down" });
    await Bun.sleep(700); // a few failed attempts
    expect((await report(r.id)).ai).toBeNull();
    fake = startFakeOllama({ port });
    fake.script(answer("HIGH", 88));
    const rep = await until("enrichment after Ollama is back", async () => {
      const x = await report(r.id);
      return x.ai ? x : null;
    });
    expect(rep.ai?.confidence).toBe(88);
    expect(rep.status).toBe("IN_REVIEW");
  });
});

describe("metrics", () => {
  test("every model call is counted with its latency in /metrics", async () => {
    // Hand-built: /metrics is outside both documents.
    const before = await server.call("GET", `${server.url}/metrics`, { key: null });
    const count = (text: string) => Number(/flagstaff_ai_call_duration_seconds_count\{outcome="ok"\} (\d+)/.exec(text)?.[1] ?? 0);
    fake.script(answer("LOW", 5, []));
    expect((await analyze({ content: "metrics please" })).response.status).toBe(200);
    const after = await server.call("GET", `${server.url}/metrics`, { key: null });
    expect(after.status).toBe(200);
    expect(count(after.body)).toBe(count(before.body) + 1);
  });
});
