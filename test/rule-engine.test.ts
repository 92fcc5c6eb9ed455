/**
 * Rules at work, through HTTP (src/domain/rules/rule-engine.ts): a shadow rule records hits and
 * changes nothing; the same rule made live routes the next report into its queue, raises its
 * priority and tags it, and a live dismiss decides on intake, with audit events naming rule,
 * version and automated; a rule never touches another organization's reports; report.enriched
 * rules run after the (fake Ollama) enrichment.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import { fileReport, secondOrganization } from "./helpers/builders.ts";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";

setDefaultTimeout(60_000);

let server: TestServer;
let fake: FakeOllama;
let other: InitResult;
let n = 0;
const uniq = (p: string) => `${p}-${++n}-${Math.random().toString(36).slice(2, 8)}`;
const org = () => `/api/v1/organizations/${server.demo.orgSlug}`;

beforeAll(async () => {
  fake = startFakeOllama();
  server = await startServer({
    OLLAMA_HOST: fake.url,
    FLAGSTAFF_AI_MODEL: "llama3.2",
    FLAGSTAFF_AI_TIMEOUT_MS: "3000",
    FLAGSTAFF_JOB_POLL_MS: "100",
    FLAGSTAFF_JOB_BACKOFF_MS: "100",
    FLAGSTAFF_REPORT_RATE_LIMIT: "100000",
  });
  other = await secondOrganization(server, { name: "Rules Other Org" });
});
afterAll(async () => {
  await server.dispose();
  await fake.stop();
});

async function createRule(body: Record<string, unknown>): Promise<{ id: string; version: number; name: string }> {
  const r = await server.call("POST", `${org()}/rules`, { body: { name: uniq("rule"), trigger: "report.created", ...body } });
  expect(r.status).toBe(201);
  return r.body.rule;
}
const hits = async (ruleId: string) => {
  const r = await server.call("GET", `${org()}/rules/${ruleId}/hits`);
  expect(r.status).toBe(200);
  return r.body as { hits: { ruleId: string; version: number; reportId: string; effects: unknown[]; applied: boolean }[]; counts: { last24h: number } };
};
const report = async (reportId: string, key = server.demo.secretKey) => {
  const r = await server.call("GET", `/reports/${reportId}`, { key });
  expect(r.status).toBe(200);
  return r.body.report;
};
const auditOf = async (entityId: string): Promise<{ action: string; actor: { type: string }; data: Record<string, unknown> | null }[]> => {
  const r = await server.call("GET", `${org()}/audit-events?entityId=${entityId}&limit=100`);
  expect(r.status).toBe(200);
  return r.body.events;
};
const openCasesOf = async (queueId: string): Promise<number> => {
  const r = await server.call("GET", `${org()}/queues/${queueId}`);
  expect(r.status).toBe(200);
  return r.body.queue.openCases;
};

describe("shadow, then live", () => {
  test("a shadow rule records its hit and changes nothing; made live it routes, raises priority and tags, audited as automated with rule and version", async () => {
    const marker = uniq("shadow");
    const q = await server.call("POST", `${org()}/queues`, { body: { name: uniq("Specialists") } });
    expect(q.status).toBe(201);
    const queueId: string = q.body.queue.id;
    const then = [{ type: "route", queueId }, { type: "priority", by: 3 }, { type: "tag", tag: "ruled" }];
    const rule = await createRule({ mode: "shadow", when: { field: "report.text", op: "contains", value: marker }, then });

    const a = await fileReport(server, { description: `first ${marker}` });
    const unrelated = await fileReport(server, { description: "nothing" });
    const shadow = await hits(rule.id);
    expect(shadow.hits).toHaveLength(1);
    expect(shadow.hits[0]).toMatchObject({ ruleId: rule.id, version: 1, reportId: a.reportId, applied: false, effects: then });
    expect(shadow.counts.last24h).toBe(1);
    expect(await openCasesOf(queueId)).toBe(0);
    expect((await auditOf(a.caseId)).map((e) => e.action)).not.toContain("CASE_QUEUE_CHANGED");
    expect((await report(a.reportId)).status).toBe("OPEN");
    expect((await hits(rule.id)).hits.map((h) => h.reportId)).not.toContain(unrelated.reportId);

    const patched = await server.call("PATCH", `${org()}/rules/${rule.id}`, { body: { mode: "live" } });
    expect(patched.status).toBe(200);
    expect(patched.body.rule.version).toBe(2);
    const b = await fileReport(server, { description: `second ${marker}` });
    expect(await openCasesOf(queueId)).toBe(1);
    const live = (await hits(rule.id)).hits.find((h) => h.reportId === b.reportId);
    expect(live).toMatchObject({ version: 2, applied: true });
    const events = await auditOf(b.caseId);
    for (const action of ["CASE_QUEUE_CHANGED", "CASE_PRIORITY_CHANGED", "CASE_TAGS_CHANGED"]) {
      const e = events.find((x) => x.action === action);
      expect(e, action).toBeDefined();
      expect(e!.actor.type).toBe("system");
      expect(e!.data).toMatchObject({ ruleId: rule.id, version: 2, automated: true });
    }
    // The shadow-era report was left where it was.
    expect((await auditOf(a.caseId)).map((e) => e.action)).not.toContain("CASE_QUEUE_CHANGED");
  });

  test("a live dismiss decides on intake, by the system, audited like any decision, naming the rule", async () => {
    const marker = uniq("dismiss");
    const rule = await createRule({ mode: "live", when: { all: [{ field: "report.text", op: "contains", value: marker }, { field: "report.reasons", op: "includes", value: "spam" }] }, then: [{ type: "dismiss", reason: "not_actionable" }] });
    const a = await fileReport(server, { description: marker });
    const r = await report(a.reportId);
    expect(r.status).toBe("DISMISSED");
    expect(r.dismissal).toMatchObject({ reason: "not_actionable", by: { type: "system" } });
    const e = (await auditOf(a.reportId)).find((x) => x.action === "REPORT_DISMISSED");
    expect(e?.data).toMatchObject({ ruleId: rule.id, version: 1, automated: true });
    // Another spam report without the marker is left alone.
    const b = await fileReport(server, { description: "plain" });
    expect((await report(b.reportId)).status).toBe("OPEN");
  });

  test("a rule never touches another organization's reports", async () => {
    const marker = uniq("tenant");
    const rule = await createRule({ mode: "live", when: { field: "report.text", op: "contains", value: marker }, then: [{ type: "escalate", team: "legal" }] });
    const theirs = await fileReport(server, { description: marker, tenant: other });
    expect((await report(theirs.reportId, other.secretKey)).status).toBe("OPEN");
    expect((await hits(rule.id)).hits).toHaveLength(0);
    const ours = await fileReport(server, { description: marker });
    expect((await report(ours.reportId)).status).toBe("IN_REVIEW");
    expect((await hits(rule.id)).hits.map((h) => h.reportId)).toEqual([ours.reportId]);
  });
});

describe("report.enriched", () => {
  test("after the AI enrichment, a rule on its facts tags the case, once", async () => {
    const settings = await server.call("PATCH", `${org()}/projects/${server.demo.projectId}/settings`, { body: { aiEnabled: true, aiThreshold: 99 } });
    expect(settings.status).toBe(200);
    const marker = uniq("enriched");
    const rule = await createRule({
      trigger: "report.enriched",
      mode: "live",
      when: { all: [{ field: "ai.severity", op: "eq", value: "CRITICAL" }, { field: "ai.confidence", op: "gte", value: 95 }, { field: "report.text", op: "contains", value: marker }] },
      then: [{ type: "tag", tag: "ai-critical" }],
    });
    fake.script({ json: { reasoning: "a threat", categories: ["harassment"], severity: "CRITICAL", confidence: 97 } });
    const a = await fileReport(server, { reason: "harassment", description: `I will find you ${marker}` });
    let found: { hits: { reportId: string; applied: boolean }[] } = { hits: [] };
    for (let i = 0; i < 100 && found.hits.length === 0; i++) {
      await Bun.sleep(100);
      found = await hits(rule.id);
    }
    expect(found.hits.map((h) => [h.reportId, h.applied])).toEqual([[a.reportId, true]]);
    expect((await report(a.reportId)).ai).toMatchObject({ severity: "CRITICAL", confidence: 97 });
    const tagged = (await auditOf(a.caseId)).find((e) => e.action === "CASE_TAGS_CHANGED");
    expect(tagged?.data).toMatchObject({ ruleId: rule.id, automated: true });
    await server.call("PATCH", `${org()}/projects/${server.demo.projectId}/settings`, { body: { aiEnabled: false } });
  });
});
