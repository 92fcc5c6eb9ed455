/**
 * The case page of a pile-on (src/domain/dashboard/dashboard.ts, caseDetail): it shows the case's
 * newest CASE_PAGE_REPORTS reports, says how many there are, and sums up what all of them name
 * (the reasons, the warning screen's graphic categories), however old the report that names it;
 * and a decision on it takes every report along (src/domain/review/workflow-engine.ts, writeFellows).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addCaseNote, CASE_PAGE_REPORTS, MAX_NOTES_PER_CASE } from "../../src/domain/cases/cases.ts";
import { caseDetail } from "../../src/domain/dashboard/dashboard.ts";
import { reporterSummary } from "../../src/domain/cases/reporter-summary.ts";
import { decideOnReport } from "../../src/domain/review/decisions.ts";
import { and, count, eq, inArray } from "drizzle-orm";
import { auditEvents, jobs, reports, webhookDeliveries } from "../../src/db/schema.ts";
import { createEndpoint } from "../../src/domain/webhooks/endpoints.ts";
import { JOB_KIND } from "../../src/domain/views/job.ts";
import type { ReportDecidedEvent } from "../../src/domain/views/webhook.ts";
import { domainWorld, refusal, type DomainWorld, type FiledReport } from "../helpers/builders.ts";

/**
 * Runs `work`, counting the turns of the event loop meanwhile and the longest wait for one: what
 * another request waiting on this thread would have waited.
 */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; turns: number; worstGapMs: number }> {
  let turns = 0;
  let worstGapMs = 0;
  let last = performance.now();
  let running = true;
  const tick = () => {
    const now = performance.now();
    worstGapMs = Math.max(worstGapMs, now - last);
    last = now;
    turns++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const started = performance.now();
  const result = await work();
  const ms = performance.now() - started;
  running = false;
  worstGapMs = Math.max(worstGapMs, performance.now() - last);
  return { result, ms, turns, worstGapMs };
}

describe("a pile-on", () => {
  let w: DomainWorld;
  beforeAll(async () => {
    w = await domainWorld();
  });
  afterAll(async () => {
    await w.close();
  });

  test("shows the newest reports, counts them all, and sums up the reasons and graphic categories of every report", async () => {
    const target = { contentType: "post", contentExternalId: "pile-on" };
    // The first report alone names violence (graphic in a new project); the rest say spam.
    const first = await w.fileReport({ target, reasons: ["violence"] });
    const filed = [first];
    for (let i = 0; i < CASE_PAGE_REPORTS + 2; i++) {
      w.clock.advance(1);
      filed.push(await w.fileReport({ target, reasons: ["spam"] }));
    }
    expect(new Set(filed.map((f) => f.caseId)).size).toBe(1);

    const detail = await caseDetail(w.ctx, first.caseId);
    expect(detail.case.reportCount).toBe(filed.length);
    expect(detail.reports.map((r) => r.id)).toEqual(filed.slice(-CASE_PAGE_REPORTS).map((f) => f.reportId));
    expect(detail.reports.some((r) => r.reasons.includes("violence"))).toBe(false);
    expect(detail.reasons).toEqual(["spam", "violence"]);
    expect(detail.caution).toMatchObject({ graphicCategories: ["violence"] });
    expect(detail.linkedReport).toBeNull();
    // A link to the first report (older than those shown) gets it too; to one shown, or to
    // another case's report, nothing more.
    expect((await caseDetail(w.ctx, first.caseId, { report: first.reportId })).linkedReport).toMatchObject({ id: first.reportId, reasons: ["violence"] });
    expect((await caseDetail(w.ctx, first.caseId, { report: filed.at(-1)!.reportId })).linkedReport).toBeNull();
    const elsewhere = await w.fileReport();
    expect((await caseDetail(w.ctx, first.caseId, { report: elsewhere.reportId })).linkedReport).toBeNull();
  });

  test("its notes are bounded: the case holds MAX_NOTES_PER_CASE, the next is refused (409), and the page shows them all", async () => {
    const filed = await w.fileReport({ target: { contentType: "post", contentExternalId: "pile-on-notes" } });
    for (let i = 0; i < MAX_NOTES_PER_CASE; i++) await addCaseNote(w.ctx, { caseId: filed.caseId, body: `note ${i}` });
    expect(await refusal(addCaseNote(w.ctx, { caseId: filed.caseId, body: "one more" }))).toMatchObject({ http: 409, message: `A case holds at most ${MAX_NOTES_PER_CASE} notes` });
    const detail = await caseDetail(w.ctx, filed.caseId);
    expect(detail.notes).toHaveLength(MAX_NOTES_PER_CASE);
    expect(detail.notes.at(-1)!.body).toBe(`note ${MAX_NOTES_PER_CASE - 1}`);
  }, 60_000);

  test("its reporter summary counts every report; on SQLite its statements give the event loop back between two", async () => {
    const target = { contentType: "post", contentExternalId: "pile-on-summary" };
    const filed: FiledReport[] = [];
    for (let i = 0; i < 3; i++) filed.push(await w.fileReport({ target, reporter: { type: "user", externalId: `summary-${i}` } }));
    const { result: summary, turns } = await turnsDuring(() => reporterSummary(w.ctx, { caseId: filed[0]!.caseId }));
    expect(summary).toMatchObject({ reports: 3, distinctReporters: 3, newReporters: 3 });
    // One turn before each statement after the first (readsApart); PostgreSQL's are I/O anyway.
    expect(turns).toBeGreaterThanOrEqual(3);
  });

  test("resolving it resolves every report (their updates a statement per thousand), each with its audit event and the same record", async () => {
    const target = { contentType: "post", contentExternalId: "pile-on-decided" };
    const filed = [];
    for (let i = 0; i < 1_003; i++) filed.push(await w.fileReport({ target, reasons: ["spam"] }));
    const caseId = filed[0]!.caseId;
    expect(new Set(filed.map((f) => f.caseId))).toEqual(new Set([caseId]));
    await decideOnReport(w.ctx, { reportId: filed[500]!.reportId, decision: { action: "resolve", code: "SPAM_CONFIRMED" } });
    const rows = await w.ctx.db.select({ id: reports.id, status: reports.status, resolution: reports.resolution }).from(reports).where(eq(reports.caseId, caseId));
    expect(rows.length).toBe(filed.length);
    expect(new Set(rows.map((r) => r.status))).toEqual(new Set(["RESOLVED"]));
    expect(new Set(rows.map((r) => r.resolution)).size).toBe(1);
    const [events] = await w.ctx.db
      .select({ n: count() })
      .from(auditEvents)
      .where(and(eq(auditEvents.orgId, w.orgId), eq(auditEvents.action, "REPORT_RESOLVED"), inArray(auditEvents.entityId, w.ctx.db.select({ id: reports.id }).from(reports).where(eq(reports.caseId, caseId)))));
    expect(Number(events!.n)).toBe(filed.length);
    expect((await w.caseOf(caseId)).status).toBe("RESOLVED");
  }, 60_000);

  test("a decision on 12,000 reports (SQLite) gives the event loop back: nothing else waits for the whole of it", async () => {
    const target = { contentType: "post", contentExternalId: "pile-on-sliced" };
    const filed: FiledReport[] = [];
    // On PostgreSQL the statements run in the database's processes, so the loop turns at each of
    // them anyway: fewer reports (filed there about 3 ms each) check the outcome.
    const n = w.ctx.store.engine === "sqlite" ? 12_000 : 2_000;
    for (let i = 0; i < n; i++) filed.push(await w.fileReport({ target, reasons: ["spam"] }));
    // On SQLite every statement runs on this thread, so without its slices (plumbing/event-loop.ts)
    // the decision ran to its end in one turn. What is left in one piece is mostly its COMMIT
    // (about a third of it here, every page it changed written to the log at once).
    const { ms: decisionMs, turns, worstGapMs } = await turnsDuring(() =>
      decideOnReport(w.ctx, { reportId: filed[0]!.reportId, decision: { action: "resolve", code: "SPAM_CONFIRMED" } }),
    );
    console.log(`decision on ${filed.length} reports (${w.ctx.store.engine}): ${Math.round(decisionMs)} ms, ${turns} turns of the event loop meanwhile, the longest wait for one ${worstGapMs.toFixed(1)} ms`);
    expect(turns).toBeGreaterThan(2);
    expect(worstGapMs).toBeLessThan(decisionMs / 2);
    const open = await w.ctx.db.select({ n: count() }).from(reports).where(and(eq(reports.caseId, filed[0]!.caseId), eq(reports.status, "OPEN")));
    expect(Number(open[0]!.n)).toBe(0);
  }, 120_000);
});

describe("announcing a pile-on's decision (report.decided)", () => {
  let w: DomainWorld;
  beforeAll(async () => {
    w = await domainWorld();
  });
  afterAll(async () => {
    await w.close();
  });

  test("each report is announced once to each endpoint that asked, the target first, its deliveries and jobs written in batches", async () => {
    // Past a page of reports (1,000) and a batch of deliveries (500), with a partial last one of each.
    const asked = [
      await createEndpoint(w.ctx, { url: "https://hooks.example.org/one", eventTypes: ["report.decided"] }),
      await createEndpoint(w.ctx, { url: "https://hooks.example.org/two", eventTypes: ["report.decided", "media.matched"] }),
    ].map((e) => e.endpoint.id);
    // Without a filter: the enforcement action events only.
    const unfiltered = (await createEndpoint(w.ctx, { url: "https://hooks.example.org/all" })).endpoint.id;
    const target = { contentType: "post", contentExternalId: "pile-on-announced" };
    const filed: FiledReport[] = [];
    for (let i = 0; i < 2_301; i++) filed.push(await w.fileReport({ target, reasons: ["spam"], reporter: { type: "user", externalId: `announced-${i % 7}` } }));
    const decided = filed[1_234]!;
    const { turns } = await turnsDuring(() => decideOnReport(w.ctx, { reportId: decided.reportId, decision: { action: "resolve", code: "SPAM_CONFIRMED" } }));
    expect(turns).toBeGreaterThan(0);

    const deliveries = await w.ctx.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventType, "report.decided")).orderBy(webhookDeliveries.id);
    expect(deliveries.filter((d) => d.endpointId === unfiltered)).toEqual([]);
    for (const endpointId of asked) {
      const events = deliveries.filter((d) => d.endpointId === endpointId).map((d) => (JSON.parse(d.payload) as { data: ReportDecidedEvent }).data);
      // Delivery ids are time-ordered, so this is the order they were written in: the target first.
      expect(events[0]!.reportId).toBe(decided.reportId);
      expect(new Set(events.map((e) => e.reportId))).toEqual(new Set(filed.map((f) => f.reportId)));
      expect(events.length).toBe(filed.length);
      expect(new Set(events.map((e) => `${e.outcome} ${e.code} ${e.caseId}`))).toEqual(new Set([`resolved SPAM_CONFIRMED ${decided.caseId}`]));
      // Each carries its own reporter.
      const reporterOf = new Map(events.map((e) => [e.reportId, e.reporter?.externalId]));
      expect(filed.every((f, i) => reporterOf.get(f.reportId) === `announced-${i % 7}`)).toBe(true);
    }
    // One delivery job per delivery.
    const [queued] = await w.ctx.db.select({ n: count() }).from(jobs).where(eq(jobs.kind, JOB_KIND.webhookDelivery));
    expect(Number(queued!.n)).toBe(deliveries.length);
    expect(deliveries.length).toBe(2 * filed.length);
  }, 120_000);
});
