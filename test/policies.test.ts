/**
 * Category policies and shadow analyses through the front door (docs/ai.md, "Policies and shadow
 * runs"): the live policy's text reaches the model, every analysis records its model, prompt and
 * policy versions, a shadow version (or a shadow model) makes a second analysis that acts on
 * nothing, the comparison counts the pairs, and who may do what.
 *
 * The fake Ollama answers by what it is sent: a request whose system prompt holds the shadow
 * policy's marker, or that names the shadow model, finds a CRITICAL harassment (unless the
 * content says "agree"); every other request finds nothing (LOW). So a shadow analysis that
 * acted would move the report, raise its case to the emergency bucket and fire the rule.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeOllama, type FakeOllama, type RecordedChat } from "../scripts/fake-ollama.ts";
import type { OrgClient, SdkClient } from "../clients/typescript/index.ts";
import { demoAdmin, newUser, statusOf, type DashboardUser } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

const SHADOW_MARKER = "SHADOWPOLICYMARK";
const SHADOW_MODEL = "gpt-oss-safeguard:20b";

function answerer(request: RecordedChat) {
  const system = request.messages[0]?.content ?? "";
  const user = request.messages[1]?.content ?? "";
  const shadow = system.includes(SHADOW_MARKER) || request.model.startsWith("gpt-oss-safeguard");
  if (shadow && !user.includes("agree")) return { json: { reasoning: "The shadow sees a threat.", categories: ["harassment"], severity: "CRITICAL", confidence: 99 } };
  return { json: { reasoning: "Nothing wrong.", categories: [], severity: "LOW", confidence: 90 } };
}

let fake: FakeOllama;
let server: TestServer;
let org: OrgClient;
let admin: DashboardUser;
const unique = () => crypto.randomUUID().slice(0, 8);

beforeAll(async () => {
  fake = startFakeOllama({ models: ["llama3.2", SHADOW_MODEL] });
  fake.setDefault(answerer);
  server = await startServer({
    OLLAMA_HOST: fake.url,
    FLAGSTAFF_AI_MODEL: "llama3.2",
    FLAGSTAFF_AI_TIMEOUT_MS: "3000",
    FLAGSTAFF_JOB_POLL_MS: "100",
    FLAGSTAFF_JOB_BACKOFF_MS: "100",
    FLAGSTAFF_JOB_BACKOFF_CAP_MS: "300",
    FLAGSTAFF_REPORT_RATE_LIMIT: "1000",
    FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
  });
  org = await server.orgClient();
  admin = await demoAdmin(server);
}, 30_000);
afterAll(async () => {
  await server?.dispose();
  await fake?.stop();
});

/** A new project of the demo organization with AI on, its secret key's SDK client and its categories by name. */
async function aiProject(on: TestServer, client: OrgClient, name: string) {
  const orgSlug = on.demo.orgSlug;
  const created = await client.POST("/organizations/{orgSlug}/projects", { params: { path: { orgSlug } }, body: { name } });
  expect(created.response.status).toBe(201);
  const projectId = created.data!.project.id;
  const path = { orgSlug, projectId };
  expect((await client.PATCH("/organizations/{orgSlug}/projects/{projectId}/settings", { params: { path }, body: { aiEnabled: true, aiThreshold: 70 } })).response.status).toBe(200);
  const key = await client.POST("/organizations/{orgSlug}/api-keys", { params: { path: { orgSlug } }, body: { projectId, kind: "secret", name } });
  expect(key.response.status).toBe(201);
  const sdk: SdkClient = await on.sdkClient(key.data!.key);
  const categories = (await client.GET("/organizations/{orgSlug}/projects/{projectId}/categories", { params: { path } })).data!.categories;
  const categoryId = (name: string) => categories.find((c) => c.name === name)!.id;
  return { orgSlug, projectId, path, sdk, categoryId };
}
type AiProject = Awaited<ReturnType<typeof aiProject>>;

async function fileReport(p: AiProject, content: string) {
  const r = await p.sdk.POST("/projects/{projectId}/reports", {
    params: { path: { projectId: p.projectId } },
    body: { reason: "harassment", subject: { type: "user", externalId: `s-${unique()}` }, target: { contentExternalId: `post-${unique()}`, contentType: "post", content } },
  });
  expect(r.response.status).toBe(201);
  return r.data!.report;
}
const analyses = async (client: OrgClient, p: AiProject) =>
  (await client.GET("/organizations/{orgSlug}/projects/{projectId}/content-analyses", { params: { path: p.path } })).data!.analyses;
const enriched = (client: OrgClient, p: AiProject, reportId: string) =>
  until(`the enrichment of ${reportId}`, async () => (await analyses(client, p)).find((a) => a.reportId === reportId), 15_000);
const comparison = (user: DashboardUser, p: AiProject) => user.trpc.policies.shadowComparison.query({ orgSlug: p.orgSlug, projectId: p.projectId });

describe("the live policy", () => {
  test("its text reaches the prompt, a draft's does not; every analysis records the model, prompt version and policy versions", async () => {
    const p = await aiProject(server, org, `Live policy ${unique()}`);
    const harassment = p.categoryId("harassment");
    const liveText = `Definition: LIVEPOLICYMARK insults aimed at a person.\n\nViolates: "you idiot".\nDoes not violate: criticism of an idea.`;
    const made = await org.POST("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}/policy-versions", {
      params: { path: { ...p.path, categoryId: harassment } },
      body: { text: liveText, status: "live" },
    });
    expect(made.response.status).toBe(201);
    expect(made.data!.version).toMatchObject({ version: 1, status: "live", category: "harassment" });
    await admin.trpc.policies.createVersion.mutate({ ...p.path, categoryId: harassment, text: "DRAFTPOLICYMARK not used" });

    fake.reset();
    fake.setDefault(answerer);
    const analyzed = await org.POST("/organizations/{orgSlug}/projects/{projectId}/content", { params: { path: p.path }, body: { content: "hello there" } });
    expect(analyzed.response.status).toBe(200);
    const system = fake.requests.at(-1)!.messages[0]!.content;
    expect(system).toContain("    > Definition: LIVEPOLICYMARK insults aimed at a person.");
    expect(system).toContain('    > Violates: "you idiot".');
    expect(system).not.toContain("DRAFTPOLICYMARK");
    // The other categories still read their descriptions.
    expect(system).toContain('- "spam": Unsolicited advertising');

    const [latest] = await analyses(org, p);
    expect(latest).toMatchObject({ source: "content", model: "llama3.2", policyVersions: { harassment: 1 } });
    expect(latest!.promptVersion).toMatch(/^p-[0-9a-f]{12}$/);
    // Enrichment records them too, and the audit event says them.
    const report = await fileReport(p, "a report's content");
    const enrichment = await enriched(org, p, report.id);
    expect(enrichment).toMatchObject({ source: "enrichment", model: "llama3.2", promptVersion: latest!.promptVersion, policyVersions: { harassment: 1 } });
    const audit = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug: p.orgSlug }, query: { action: "AI_ANALYZED", entityId: report.id } } });
    expect(audit.data!.events[0]!.data).toMatchObject({ model: "llama3.2", promptVersion: latest!.promptVersion, policyVersions: { harassment: 1 } });
  });
});

describe("shadow policy versions", () => {
  test("a shadow version makes a stored shadow analysis that changes nothing; the comparison counts it; promoting makes it live", async () => {
    const shadowed = await aiProject(server, org, `Shadowed ${unique()}`);
    const baseline = await aiProject(server, org, `Baseline ${unique()}`);
    const receiver = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("ok") });
    try {
      const endpoint = await admin.trpc.webhooks.create.mutate({ orgSlug: shadowed.orgSlug, url: `http://127.0.0.1:${receiver.port}/hook` });
      // A rule that would fire on the shadow's answer, for both projects.
      for (const p of [shadowed, baseline]) {
        await admin.trpc.rules.create.mutate({
          orgSlug: p.orgSlug,
          projectId: p.projectId,
          name: `Critical AI ${unique()}`,
          trigger: "report.enriched",
          mode: "live",
          when: { field: "ai.severity", op: "eq", value: "CRITICAL" },
          then: [{ type: "tag", tag: "ai-critical" }, { type: "resolve", resolutionCode: "CONTENT_LEVEL_ACTION", action: { kind: "content_removal", reason: "AI" } }],
        });
      }
      const harassment = shadowed.categoryId("harassment");
      await admin.trpc.policies.createVersion.mutate({ ...shadowed.path, categoryId: harassment, text: "Definition: insults.", status: "live" });
      const shadowVersion = await admin.trpc.policies.createVersion.mutate({ ...shadowed.path, categoryId: harassment, text: `Definition: ${SHADOW_MARKER} insults and threats.`, status: "shadow" });
      expect(shadowVersion.version).toMatchObject({ version: 2, status: "shadow" });

      const differing = await fileReport(shadowed, "you will regret this");
      const agreeing = await fileReport(shadowed, "I agree with you");
      const plain = await fileReport(baseline, "you will regret this");
      await until("two shadow analyses", async () => ((await comparison(admin, shadowed)).pairs === 2 ? true : null), 20_000);
      await enriched(org, baseline, plain.id);

      // The shadow request carried the shadow text; the live one did not.
      const shadowRequests = fake.requests.filter((r) => r.messages[0]!.content.includes(SHADOW_MARKER));
      expect(shadowRequests.length).toBe(2);

      // Nothing acted: the report, its case, its audit trail and the webhooks are as without a shadow.
      const state = async (p: AiProject, reportId: string) => {
        const report = await admin.report(reportId);
        const detail = await admin.caseDetail(report.caseId);
        const audit = async (entityId: string) =>
          (await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug: p.orgSlug }, query: { entityId, limit: 100 } } })).data!.events.map((e) => e.action).sort();
        const tags = (await admin.trpc.dashboard.case.query({ caseId: report.caseId })).tags;
        return { status: report.status, ai: { ...report.ai, analyzedAt: null }, caseStatus: detail.case.status, bucket: detail.case.bucket, tags, reportAudit: await audit(reportId), caseAudit: await audit(report.caseId) };
      };
      const withShadow = await state(shadowed, differing.id);
      const without = await state(baseline, plain.id);
      expect(withShadow).toEqual(without);
      expect(withShadow.status).toBe("OPEN");
      expect(withShadow.bucket).toBe("normal");
      expect(withShadow.ai).toMatchObject({ severity: "LOW" });
      expect((await admin.trpc.webhooks.deliveries.query({ orgSlug: shadowed.orgSlug, endpointId: endpoint.endpoint.id })).deliveries).toEqual([]);
      // The list of analyses (the specification's 50 most recent) shows the live ones only.
      expect((await analyses(org, shadowed)).map((a) => a.reportId).sort()).toEqual([differing.id, agreeing.id].sort());

      const compared = await comparison(admin, shadowed);
      expect(compared).toMatchObject({
        pairs: 2,
        truncated: false,
        verdict: { agree: 1, rate: 0.5, liveOnly: 0, shadowOnly: 1 },
        categories: { agree: 1, rate: 0.5 },
        severity: { agree: 1, rate: 0.5 },
      });
      expect(compared.configurations).toEqual([{ model: "llama3.2", promptVersion: expect.stringMatching(/^p-/), policyVersions: { harassment: 2 }, pairs: 2 }]);
      expect(compared.differences).toHaveLength(1);
      expect(compared.differences[0]).toMatchObject({
        reportId: differing.id,
        live: { severity: "LOW", categories: [], model: "llama3.2", policyVersions: { harassment: 1 } },
        shadow: { severity: "CRITICAL", categories: ["harassment"], model: "llama3.2", policyVersions: { harassment: 2 } },
      });
      // Over REST too, with a period that holds none of them.
      const rest = await org.GET("/organizations/{orgSlug}/projects/{projectId}/shadow-comparison", {
        params: { path: shadowed.path, query: { from: "2020-01-01T00:00:00Z", to: "2020-01-02T00:00:00Z" } },
      });
      expect(rest.response.status).toBe(200);
      expect(rest.data!.pairs).toBe(0);

      // Promoting: the shadow version goes live, the live one is retired, and no shadow is left.
      const promoted = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}/policy-versions/{version}", {
        params: { path: { ...shadowed.path, categoryId: harassment, version: 2 } },
        body: { status: "live" },
      });
      expect(promoted.response.status).toBe(200);
      const versions = await org.GET("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}/policy-versions", { params: { path: { ...shadowed.path, categoryId: harassment } } });
      expect(versions.data!.versions.map((v) => [v.version, v.status])).toEqual([
        [2, "live"],
        [1, "retired"],
      ]);
      const listed = (await org.GET("/organizations/{orgSlug}/projects/{projectId}/policies", { params: { path: shadowed.path } })).data!.policies;
      expect(listed.find((c) => c.category === "harassment")).toMatchObject({ live: { version: 2 }, shadow: null, versions: 2 });
      // Now live: the next report is classified with it, and no shadow job follows.
      const after = await fileReport(shadowed, "you will regret this too");
      const live = await enriched(org, shadowed, after.id);
      expect(live).toMatchObject({ severity: "CRITICAL", policyVersions: { harassment: 2 } });
      await Bun.sleep(500);
      expect((await comparison(admin, shadowed)).pairs).toBe(2);
    } finally {
      receiver.stop(true);
    }
  }, 60_000);
});

describe("a shadow model (FLAGSTAFF_AI_SHADOW_MODEL)", () => {
  test("classifies every enriched report again with that model, stored as shadow, acting on nothing", async () => {
    const other = await startServer({ OLLAMA_HOST: fake.url, FLAGSTAFF_AI_SHADOW_MODEL: SHADOW_MODEL, FLAGSTAFF_JOB_POLL_MS: "100", FLAGSTAFF_REPORT_RATE_LIMIT: "1000" });
    try {
      const theirs = await other.orgClient();
      const theirAdmin = await demoAdmin(other);
      const p = await aiProject(other, theirs, "Shadow model");
      const report = await fileReport(p, "you will regret this");
      await until("the shadow analysis", async () => ((await comparison(theirAdmin, p)).pairs === 1 ? true : null), 20_000);
      expect(fake.requests.some((r) => r.model === SHADOW_MODEL)).toBe(true);
      const compared = await comparison(theirAdmin, p);
      expect(compared.configurations).toEqual([{ model: SHADOW_MODEL, promptVersion: expect.stringMatching(/^p-/), policyVersions: {}, pairs: 1 }]);
      expect(compared.differences[0]).toMatchObject({ reportId: report.id, live: { model: "llama3.2", severity: "LOW" }, shadow: { model: SHADOW_MODEL, severity: "CRITICAL" } });
      const stored = await theirAdmin.report(report.id);
      expect(stored.status).toBe("OPEN");
      expect(stored.ai).toMatchObject({ severity: "LOW" });
    } finally {
      await other.dispose();
    }
  }, 60_000);
});

describe("who may do what", () => {
  test("viewers read nothing, moderators read, admins write; another organization's project is a 404; a text too long is a 400", async () => {
    const p = await aiProject(server, org, `Refusals ${unique()}`);
    const categoryId = p.categoryId("spam");
    const viewer = await newUser(server, "viewer", `viewer-${unique()}`);
    const moderator = await newUser(server, "moderator", `moderator-${unique()}`);
    const input = { ...p.path, categoryId, text: "Definition: spam." };
    expect(await statusOf(viewer.trpc.policies.list.query(p.path))).toBe(403);
    expect(await statusOf(viewer.trpc.policies.createVersion.mutate(input))).toBe(403);
    expect(await statusOf(moderator.trpc.policies.createVersion.mutate(input))).toBe(403);
    expect((await moderator.trpc.policies.list.query(p.path)).policies.length).toBeGreaterThan(0);
    await admin.trpc.policies.createVersion.mutate(input);
    expect(await statusOf(moderator.trpc.policies.setStatus.mutate({ ...p.path, categoryId, version: 1, status: "live" }))).toBe(403);

    const tooLong = await org.POST("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}/policy-versions", {
      params: { path: { ...p.path, categoryId } },
      body: { text: "x".repeat(4_001) },
    });
    expect(tooLong.response.status).toBe(400);
    expect(tooLong.error?.error).toContain("4,000");

    // Another organization's key, on our project: 404, nothing written.
    const stranger = await server.initOrg(`Stranger ${unique()}`, "Theirs", "enterprise");
    const theirs = await server.orgClient(stranger.secretKey);
    const foreign = await theirs.POST("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}/policy-versions", {
      params: { path: { orgSlug: stranger.orgSlug, projectId: p.projectId, categoryId } },
      body: { text: "theirs" },
    });
    expect(foreign.response.status).toBe(404);
    const theirProject = await theirs.GET("/organizations/{orgSlug}/projects/{projectId}/policies", { params: { path: { orgSlug: stranger.orgSlug, projectId: stranger.projectId } } });
    const theirCategory = theirProject.data!.policies[0]!.categoryId;
    // Our project, their category: 404.
    expect(await statusOf(admin.trpc.policies.createVersion.mutate({ ...p.path, categoryId: theirCategory, text: "ours" }))).toBe(404);
    expect((await admin.trpc.policies.versions.query({ ...p.path, categoryId })).versions.map((v) => v.text)).toEqual(["Definition: spam."]);

    // Two live versions are impossible: the second retires the first.
    await admin.trpc.policies.createVersion.mutate({ ...input, text: "Definition: spam, v2." });
    await admin.trpc.policies.setStatus.mutate({ ...p.path, categoryId, version: 1, status: "live" });
    await admin.trpc.policies.setStatus.mutate({ ...p.path, categoryId, version: 2, status: "live" });
    const statuses = (await admin.trpc.policies.versions.query({ ...p.path, categoryId })).versions.map((v) => v.status);
    expect(statuses).toEqual(["live", "retired"]);
  });
});
