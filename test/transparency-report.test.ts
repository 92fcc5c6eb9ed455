/**
 * The transparency report (DSA Art. 15) through HTTP: for a seeded period, the counts of
 * reports and notices by category and source, decisions by code and reason, automated ones,
 * actions and statements, appeals and their outcomes, and the median time from a report to its
 * decision; the same as CSV; a period with nothing in it; one project; 400 on bad dates.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { rawDb, type RawDb } from "./helpers/raw-db.ts";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";

setDefaultTimeout(60_000);

let server: TestServer;
let db: RawDb;
let other: InitResult;
let base: string;
let n = 0;
const HOUR = 3_600_000;
const today = new Date().toISOString().slice(0, 10);
const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

async function file(reason: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await server.call("POST", `/projects/${server.demo.projectId}/reports`, {
    body: { reason, target: { contentType: "post", contentExternalId: `post-${++n}` }, subject: { type: "user", externalId: `user-${n}` }, ...extra },
  });
  expect(r.status).toBe(201);
  return r.body.report.id;
}
/** Moves a report's creation `hoursAgo` back, so its decision (now) took that long. */
const backdate = (reportId: string, hoursAgo: number) =>
  db.run("UPDATE reports SET created_us = ? WHERE id = ?", (Date.now() - hoursAgo * HOUR) * 1000 + n++, reportId);

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  db = await rawDb(server.dbPath);
  other = await server.initOrg("Other org");
  base = `/api/v1/organizations/${server.demo.orgSlug}/transparency/report`;

  // Notices: one with Art. 16 fields (spam), one from a trusted flagger (spam), one automated (harassment), one plain (harassment).
  const notice = await file("spam", { notice: { explanation: "This is a scam under national law", goodFaith: true } });
  const trusted = await file("spam");
  await db.run("UPDATE reports SET reporter_trusted = 1 WHERE id = ?", trusted);
  const automated = await file("harassment", { automated: true });
  await file("harassment");

  // Decisions: resolved with a ban 2 h after the report, dismissed after 4 h and after 9 h.
  const resolved = await server.call("POST", `/reports/${notice}/resolve`, { body: { resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "ban" } } });
  expect(resolved.status).toBe(200);
  await backdate(notice, 2);
  expect((await server.call("POST", `/reports/${trusted}/dismiss`, { body: { reason: "false_positive" } })).status).toBe(200);
  await backdate(trusted, 4);
  expect((await server.call("POST", `/reports/${automated}/dismiss`, { body: { reason: "not_actionable" } })).status).toBe(200);
  await backdate(automated, 9);

  // An appeal of the ban, upheld.
  const [ban] = await db.all<{ id: string }>("SELECT id FROM enforcement_actions WHERE report_id = ?", notice);
  const appeal = await server.call("POST", `/projects/${server.demo.projectId}/enforcement-actions/${ban!.id}/appeal`, { body: { text: "I did nothing" } });
  expect(appeal.status).toBe(201);
  const upheld = await server.call("POST", `/api/v1/organizations/${server.demo.orgSlug}/appeals/${appeal.body.appeal.id}/uphold`, { body: {} });
  expect(upheld.status).toBe(200);
  // A warning (no statement) and a mute (a statement) of their own.
  for (const kind of ["warning", "mute"]) {
    const r = await server.call("POST", `/api/v1/organizations/${server.demo.orgSlug}/projects/${server.demo.projectId}/enforcement-actions`, {
      body: { kind, reason: "spam", identity: { type: "user", externalId: `user-${++n}` } },
    });
    expect(r.status).toBe(201);
  }
  // Another organization's report never counts here.
  const foreign = await server.call("POST", `/projects/${other.projectId}/reports`, {
    key: other.secretKey,
    body: { reason: "spam", subject: { type: "user", externalId: "x" } },
  });
  expect(foreign.status).toBe(201);
});
afterAll(async () => {
  await db.close();
  await server.dispose();
});

const count = (list: { key: string; count: number }[], key: string) => list.find((c) => c.key === key)?.count ?? 0;

describe("the report of a seeded period", () => {
  test("counts by source and category, decisions, actions, statements, appeals, and the median time to decision", async () => {
    const r = await server.call("GET", `${base}?from=${yesterday}&to=${today}`);
    expect(r.status).toBe(200);
    const rep = r.body;
    expect(rep.period).toEqual({ from: yesterday, to: today, projectId: null });

    expect(rep.reports.total).toBe(4);
    expect(rep.reports.automated).toBe(1);
    expect(rep.reports.bySource).toEqual([
      { key: "SOURCE_ARTICLE_16", count: 1 },
      { key: "SOURCE_TRUSTED_FLAGGER", count: 1 },
      { key: "SOURCE_VOLUNTARY", count: 2 },
    ]);
    const spam = rep.reports.byCategory.find((c: { category: string }) => c.category === "spam");
    expect(spam.count).toBe(2);
    expect(count(spam.bySource, "SOURCE_ARTICLE_16")).toBe(1);
    expect(count(spam.bySource, "SOURCE_TRUSTED_FLAGGER")).toBe(1);
    const harassment = rep.reports.byCategory.find((c: { category: string }) => c.category === "harassment");
    expect(harassment.count).toBe(2);
    expect(count(harassment.bySource, "SOURCE_VOLUNTARY")).toBe(2);
    expect(rep.notices).toEqual({ total: 2, article16: 1, trustedFlagger: 1 });

    expect(rep.decisions.total).toBe(3);
    expect(rep.decisions.resolved).toEqual([{ key: "ACCOUNT_LEVEL_ACTION", count: 1 }]);
    expect(rep.decisions.dismissed).toEqual([
      { key: "false_positive", count: 1 },
      { key: "not_actionable", count: 1 },
    ]);
    expect(rep.decisions.automated).toBe(0);
    // Waits of 2, 4 and 9 hours: the median is 4 hours (within the seconds the test took).
    expect(Math.abs(rep.decisions.medianMsToDecision - 4 * HOUR)).toBeLessThan(60_000);

    expect(rep.actions.total).toBe(3);
    expect(rep.actions.byKind).toEqual([
      { key: "ban", count: 1 },
      { key: "mute", count: 1 },
      { key: "warning", count: 1 },
    ]);
    expect(rep.statements.total).toBe(2);
    expect(count(rep.statements.byGround, "DECISION_GROUND_INCOMPATIBLE_CONTENT")).toBe(2);
    expect(count(rep.statements.bySource, "SOURCE_ARTICLE_16")).toBe(1);
    expect(count(rep.statements.bySource, "SOURCE_VOLUNTARY")).toBe(1);
    expect(count(rep.statements.automatedDetection, "No")).toBe(2);

    expect(rep.appeals).toMatchObject({ received: 1, pending: 0, upheld: 1, overturned: 0 });
    expect(rep.appeals.medianMsToDecision).toBeGreaterThanOrEqual(0);
    expect(rep.appeals.medianMsToDecision).toBeLessThan(60_000);
  });

  test("the same numbers as CSV: header section,key,value, one row per number", async () => {
    const res = await fetch(`${server.url}${base}?from=${yesterday}&to=${today}&format=csv`, { headers: { authorization: `Bearer ${server.demo.secretKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/csv");
    const text = await res.text();
    const lines = text.trimEnd().split("\r\n");
    expect(lines[0]).toBe("section,key,value");
    expect(lines).toContain(`period,from,${yesterday}`);
    expect(lines).toContain("reports,total,4");
    expect(lines).toContain("reports.source,SOURCE_TRUSTED_FLAGGER,1");
    expect(lines).toContain("reports.category,spam,2");
    expect(lines).toContain("reports.category.SOURCE_ARTICLE_16,spam,1");
    expect(lines).toContain("notices,total,2");
    expect(lines).toContain("decisions.dismissed,false_positive,1");
    expect(lines).toContain("actions.kind,ban,1");
    expect(lines).toContain("appeals,upheld,1");
    expect(lines.every((l) => l.split(",").length === 3)).toBe(true);
  });

  test("a period before any of it is all zeros; one project's report; another organization's project is a 404", async () => {
    const empty = await server.call("GET", `${base}?from=2021-01-01&to=2021-12-31`);
    expect(empty.status).toBe(200);
    expect(empty.body.reports.total).toBe(0);
    expect(empty.body.decisions).toMatchObject({ total: 0, medianMsToDecision: null });
    expect(empty.body.appeals).toMatchObject({ received: 0, medianMsToDecision: null });

    const project = await server.call("GET", `${base}?from=${yesterday}&to=${today}&projectId=${server.demo.projectId}`);
    expect(project.status).toBe(200);
    expect(project.body.period.projectId).toBe(server.demo.projectId);
    expect(project.body.reports.total).toBe(4);
    expect(project.body.appeals.upheld).toBe(1);
    expect((await server.call("GET", `${base}?projectId=${other.projectId}`)).status).toBe(404);

    // Without dates: the 30 days up to today.
    const dflt = await server.call("GET", base);
    expect(dflt.status).toBe(200);
    expect(dflt.body.period.to).toBe(today);
    expect(dflt.body.reports.total).toBe(4);
  });

  test("400 on bad dates: not a date, a day that does not exist, from after to, more than 366 days, a bad format", async () => {
    for (const q of ["from=yesterday&to=2026-01-01", "from=2026-02-30&to=2026-03-31", "from=2026-03-02&to=2026-03-01", "from=2024-01-01&to=2025-12-31", "format=xml"]) {
      const r = await server.call("GET", `${base}?${q}`);
      expect(`${q} ${r.status}`).toBe(`${q} 400`);
      expect(typeof r.body.error).toBe("string");
    }
  });

  test("a publishable key may not read the report (403)", async () => {
    const r = await server.call("GET", base, { key: server.demo.publishableKey });
    expect(r.status).toBe(403);
  });
});
