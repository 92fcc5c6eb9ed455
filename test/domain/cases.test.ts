/**
 * Case grouping (docs/workflow.md, "Cases"), in process: which case a new report joins, when a
 * report opens a new case, how the bucket follows the reasons' severity hints, how a
 * decision on one report carries to its case and the case's other open reports, and which of its
 * subject's cases a case page calls earlier.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decideOnReport, triageCase } from "../../src/domain/review/decisions.ts";
import { caseDetail } from "../../src/domain/dashboard/dashboard.ts";
import { domainWorld, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;
beforeAll(async () => {
  world = await domainWorld();
});
afterAll(() => world.close());

let n = 0;
/** A content target of its own, for the reports of one test. */
const post = (contentType = "post") => ({ contentType, contentExternalId: `grouping-${++n}` });
/** A subject of its own, for the reports of one test. */
const someone = () => ({ type: "user", externalId: `grouped-user-${++n}` });

describe("which case a report joins", () => {
  test("reports about the same content target share one case, whoever they name", async () => {
    const target = post();
    const first = await world.fileReport({ target, subject: someone() });
    world.clock.advance(60_000);
    const second = await world.fileReport({ target, subject: someone() });
    expect(second.caseId).toBe(first.caseId);
    const theCase = await world.caseOf(first.caseId);
    expect(theCase).toMatchObject({ reportCount: 2, contentType: "post", contentExternalId: target.contentExternalId, lastReportAt: world.clock.now() });
    expect(theCase.createdAt).toBe(world.clock.now() - 60_000);
  });

  test("the same id under another content type is another target: a post and a comment do not share", async () => {
    const onPost = await world.fileReport({ target: { contentType: "post", contentExternalId: "shared-id" } });
    const onComment = await world.fileReport({ target: { contentType: "comment", contentExternalId: "shared-id" } });
    expect(onComment.caseId).not.toBe(onPost.caseId);
  });

  test("the same target in another project is another case", async () => {
    const target = post();
    const here = await world.fileReport({ target });
    const there = await world.fileReport({ target, project: await world.addProject() });
    expect(there.caseId).not.toBe(here.caseId);
  });

  test("without a content target, reports about the same subject share one case", async () => {
    const subject = someone();
    const first = await world.fileReport({ subject, target: null });
    const second = await world.fileReport({ subject, target: null, reasons: ["harassment"] });
    expect(second.caseId).toBe(first.caseId);
    expect(await world.caseOf(first.caseId)).toMatchObject({ reportCount: 2, contentExternalId: null });
  });

  test("a report with a target does not join its subject's target-less case, nor the reverse", async () => {
    const subject = someone();
    const aboutThePerson = await world.fileReport({ subject, target: null });
    const aboutAPost = await world.fileReport({ subject, target: post() });
    const aboutThePersonAgain = await world.fileReport({ subject, target: null });
    expect(aboutAPost.caseId).not.toBe(aboutThePerson.caseId);
    expect(aboutThePersonAgain.caseId).toBe(aboutThePerson.caseId);
  });

  test("a report with neither target nor subject opens a case of its own", async () => {
    const a = await world.fileReport({ subject: null, target: null });
    const b = await world.fileReport({ subject: null, target: null });
    expect(b.caseId).not.toBe(a.caseId);
  });

  test("a case still being worked is joined: TRIAGED and IN_REVIEW are open", async () => {
    for (const status of ["TRIAGED", "IN_REVIEW"] as const) {
      const target = post();
      const first = await world.reportIn(status, { target });
      const next = await world.fileReport({ target });
      expect(next.caseId).toBe(first.caseId);
      // The newcomer starts OPEN, in a case that stays where it was.
      expect((await world.report(next.reportId)).status).toBe("OPEN");
      expect((await world.caseOf(first.caseId)).status).toBe(status);
    }
  });

  test("a decided case is not joined: the next report about the target opens a new case", async () => {
    for (const status of ["RESOLVED", "DISMISSED", "APPEALED", "CLOSED"] as const) {
      const target = post();
      // About content alone (no subject): the target is the whole key.
      const decided = await world.reportIn(status, { target, subject: null });
      const next = await world.fileReport({ target, subject: null });
      expect(`${status}: ${next.caseId === decided.caseId ? "joined" : "new case"}`).toBe(`${status}: new case`);
      expect(await world.caseOf(decided.caseId)).toMatchObject({ status, reportCount: 1 });
      expect(await world.caseOf(next.caseId)).toMatchObject({ status: "OPEN", reportCount: 1 });
    }
  });

  test("the same holds for a subject's case", async () => {
    const subject = someone();
    const decided = await world.reportIn("DISMISSED", { subject, target: null });
    const next = await world.fileReport({ subject, target: null });
    expect(next.caseId).not.toBe(decided.caseId);
  });

  test("opening and joining are audited: CASE_OPENED once, joins only when they raise the bucket", async () => {
    const target = post();
    const first = await world.fileReport({ target });
    await world.fileReport({ target });
    expect((await world.audit(first.caseId)).actions).toEqual(["CASE_OPENED"]);
  });
});

describe("the bucket", () => {
  const cases = [
    [["spam"], "LOW", "normal"],
    [["harassment"], "MEDIUM", "normal"],
    [["threats"], "HIGH", "high"],
    [["self_harm"], "CRITICAL", "emergency"],
    [["spam", "threats", "harassment"], "HIGH", "high"],
    [["child_safety", "spam"], "CRITICAL", "emergency"],
  ] as const;
  for (const [reasons, severity, bucket] of cases) {
    test(`reasons ${reasons.join(" + ")}: severity ${severity} → bucket ${bucket}`, async () => {
      const r = await world.fileReport({ reasons: [...reasons] });
      expect((await world.report(r.reportId)).severity).toBe(severity);
      expect((await world.caseOf(r.caseId)).bucket).toBe(bucket);
    });
  }

  test("a more severe report raises its case's bucket, audited", async () => {
    const target = post();
    const first = await world.fileReport({ target, reasons: ["spam"] });
    await world.fileReport({ target, reasons: ["threats"] });
    expect((await world.caseOf(first.caseId)).bucket).toBe("high");
    await world.fileReport({ target, reasons: ["child_safety"] });
    expect((await world.caseOf(first.caseId)).bucket).toBe("emergency");
    const { actions, events } = await world.audit(first.caseId);
    expect(actions).toEqual(["CASE_OPENED", "CASE_BUCKET_RAISED", "CASE_BUCKET_RAISED"]);
    expect(events.slice(1).map((e) => [e.before, e.after])).toEqual([
      [{ bucket: "normal" }, { bucket: "high" }],
      [{ bucket: "high" }, { bucket: "emergency" }],
    ]);
  });

  test("only rises: a milder report leaves it where it is", async () => {
    const target = post();
    const first = await world.fileReport({ target, reasons: ["self_harm"] });
    await world.fileReport({ target, reasons: ["spam"] });
    await world.fileReport({ target, reasons: ["threats"] });
    expect(await world.caseOf(first.caseId)).toMatchObject({ bucket: "emergency", reportCount: 3 });
    expect((await world.audit(first.caseId)).actions).toEqual(["CASE_OPENED"]);
  });
});

describe("a decision carries to the case", () => {
  test("resolving one report resolves the case and its other open reports, and only those", async () => {
    const target = post();
    const a = await world.fileReport({ target });
    const b = await world.fileReport({ target });
    const c = await world.fileReport({ target });
    await decideOnReport(world.ctx, { reportId: b.reportId, decision: { action: "escalate", team: "safety" } });
    // The escalation moved the whole case: every report is IN_REVIEW now.
    expect((await world.report(a.reportId)).status).toBe("IN_REVIEW");
    await decideOnReport(world.ctx, { reportId: a.reportId, decision: { action: "resolve", code: "SPAM_CONFIRMED" } });
    for (const r of [a, b, c]) expect((await world.report(r.reportId)).status).toBe("RESOLVED");
    expect(await world.caseOf(a.caseId)).toMatchObject({ status: "RESOLVED", isOpen: 0 });
    // Each report moved records its own event, the case one.
    expect((await world.audit(c.reportId)).actions).toEqual(["REPORT_CREATED", "REPORT_ESCALATED", "REPORT_RESOLVED"]);
  });

  test("triaging a case triages its OPEN reports", async () => {
    const target = post();
    const a = await world.fileReport({ target });
    const b = await world.fileReport({ target });
    await triageCase(world.ctx, a.caseId);
    expect((await world.report(a.reportId)).status).toBe("TRIAGED");
    expect((await world.report(b.reportId)).status).toBe("TRIAGED");
    expect((await world.caseOf(a.caseId)).status).toBe("TRIAGED");
  });

  test("escalating a report of a closed case reopens that case", async () => {
    const target = post();
    const dismissed = await world.reportIn("DISMISSED", { target });
    await decideOnReport(world.ctx, { reportId: dismissed.reportId, decision: { action: "escalate", team: "legal" } });
    expect(await world.caseOf(dismissed.caseId)).toMatchObject({ status: "IN_REVIEW", isOpen: 1 });
    // Reopened, it is joined again.
    expect((await world.fileReport({ target })).caseId).toBe(dismissed.caseId);
  });

  test("…unless another case is open for the target by then: the report moves into that one", async () => {
    const target = post();
    const dismissed = await world.reportIn("DISMISSED", { target });
    const newer = await world.fileReport({ target });
    expect(newer.caseId).not.toBe(dismissed.caseId);
    await decideOnReport(world.ctx, { reportId: dismissed.reportId, decision: { action: "escalate", team: "legal" } });
    expect((await world.report(dismissed.reportId)).caseId).toBe(newer.caseId);
    expect(await world.caseOf(newer.caseId)).toMatchObject({ status: "IN_REVIEW", reportCount: 2 });
    expect(await world.caseOf(dismissed.caseId)).toMatchObject({ status: "DISMISSED", reportCount: 0 });
    expect((await world.audit(dismissed.reportId)).events.find((e) => e.action === "REPORT_MOVED")).toMatchObject({
      before: { caseId: dismissed.caseId },
      after: { caseId: newer.caseId },
    });
  });
});

describe("a case's earlier cases (the case page's subject history)", () => {
  test("are the subject's cases opened before it, the latest first: never one opened after it", async () => {
    const subject = someone();
    const opened: string[] = [];
    for (let i = 0; i < 3; i++) {
      opened.push((await world.fileReport({ subject, target: post() })).caseId);
      world.clock.advance(60_000);
    }
    // Two more in the same millisecond: the one opened first (the smaller UUIDv7) is the earlier.
    opened.push((await world.fileReport({ subject, target: post() })).caseId);
    opened.push((await world.fileReport({ subject, target: post() })).caseId);
    const earlier = async (caseId: string) => (await caseDetail(world.ctx, caseId)).subjectCases.map((c) => c.id);
    const [first, second, third, fourth, fifth] = opened as [string, string, string, string, string];
    expect(await earlier(first)).toEqual([]);
    expect(await earlier(second)).toEqual([first]);
    expect(await earlier(third)).toEqual([second, first]);
    expect(await earlier(fourth)).toEqual([third, second, first]);
    expect(await earlier(fifth)).toEqual([fourth, third, second, first]);
  });
});
