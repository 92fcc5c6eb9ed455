/**
 * The rules behind a moderator's day, in process: claims that hold, bulk decisions and their
 * undo, the queue's pages and views, escalations counted once, decision templates and tags.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decideInBulk, undoBulkDecision, UNDO_WINDOW_MS } from "../../src/domain/review/bulk.ts";
import { decideOnReport, triageCase } from "../../src/domain/review/decisions.ts";
import { assignCase } from "../../src/domain/review/assignment.ts";
import type { DomainContext } from "../../src/domain/core/context.ts";
import { countInWindows, overview, queue } from "../../src/domain/dashboard/dashboard.ts";
import { and, count, eq } from "drizzle-orm";
import { cases, reports } from "../../src/db/schema.ts";
import { resolveReport } from "../../src/domain/enforcement/enforcement.ts";
import { setCaseTags, tagsInUse } from "../../src/domain/cases/tags.ts";
import { renderTemplate } from "../../src/domain/review/template-text.ts";
import { createTemplate, deleteTemplate, listTemplates, updateTemplate } from "../../src/domain/review/templates.ts";
import { addUser } from "../../src/domain/accounts/users.ts";
import { normaliseTag } from "../../src/domain/views/tag.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;
/** A second moderator of the same organization. */
let bob: DomainContext;
let bobId: string;

beforeAll(async () => {
  world = await domainWorld();
  const user = await addUser(world.ctx, { email: "bob@example.com", passwordHash: "x", role: "moderator" });
  bobId = user.id;
  bob = world.as({ type: "user", id: bobId });
});
afterAll(async () => {
  await world.close();
});

describe("claims hold", () => {
  test("a decision on a case someone else claimed is refused, naming who holds it, and nothing changes", async () => {
    const r = await world.fileReport();
    await assignCase(bob, { caseId: r.caseId, assigneeId: bobId });
    for (const take of [
      () => decideOnReport(world.ctx, { reportId: r.reportId, decision: { action: "dismiss", reason: "other" } }),
      () => decideOnReport(world.ctx, { reportId: r.reportId, decision: { action: "escalate", team: "legal" } }),
      () => resolveReport(world.ctx, { reportId: r.reportId, resolution: { code: "SPAM_CONFIRMED" } }),
      () => triageCase(world.ctx, r.caseId),
    ]) {
      const error = await refusal(take());
      expect(error.http).toBe(409);
      expect(error.message).toBe("This case is assigned to bob@example.com: take it over to decide on it");
    }
    expect((await world.report(r.reportId)).status).toBe("OPEN");
    expect((await world.caseOf(r.caseId)).assigneeId).toBe(bobId);
  });

  test("taking over decides and moves the claim to the decider, audited with whose it was", async () => {
    const r = await world.fileReport();
    await assignCase(bob, { caseId: r.caseId, assigneeId: bobId });
    await decideOnReport(world.ctx, { reportId: r.reportId, decision: { action: "dismiss", reason: "duplicate" }, takeOver: true });
    expect((await world.report(r.reportId)).status).toBe("DISMISSED");
    const c = await world.caseOf(r.caseId);
    expect(c.assigneeId).toBe(world.ctx.actor.id);
    const { events } = await world.audit(r.caseId);
    expect(events.find((e) => e.action === "CASE_ASSIGNED" && (e.data as { takenOverFrom?: string } | null)?.takenOverFrom)).toMatchObject({
      before: { assigneeId: bobId },
      after: { assigneeId: world.ctx.actor.id },
      data: { takenOverFrom: bobId, by: "dismiss" },
    });
  });

  test("the holder decides freely, and API keys (the platform) are not bound by a moderator's claim", async () => {
    const mine = await world.fileReport();
    await assignCase(bob, { caseId: mine.caseId, assigneeId: bobId });
    await decideOnReport(bob, { reportId: mine.reportId, decision: { action: "resolve", code: "SPAM_CONFIRMED" } });
    expect((await world.report(mine.reportId)).status).toBe("RESOLVED");

    const other = await world.fileReport();
    await assignCase(bob, { caseId: other.caseId, assigneeId: bobId });
    await decideOnReport(world.platform, { reportId: other.reportId, decision: { action: "dismiss", reason: "other" } });
    expect((await world.report(other.reportId)).status).toBe("DISMISSED");
  });
});

describe("bulk decisions", () => {
  test("skip cases claimed by others unless told to take them over, and say why each was skipped", async () => {
    const free = await world.fileReport();
    const claimed = await world.fileReport();
    const decided = await world.reportIn("RESOLVED");
    await assignCase(bob, { caseId: claimed.caseId, assigneeId: bobId });
    const out = await decideInBulk(world.ctx, {
      caseIds: [free.caseId, claimed.caseId, decided.caseId, "no-such-case"],
      decision: { action: "dismiss", reason: "not_actionable" },
      othersClaims: "skip",
    });
    expect(out.decided).toEqual([free.caseId]);
    expect(out.skipped).toEqual([
      { caseId: claimed.caseId, reason: "assigned to bob@example.com" },
      { caseId: decided.caseId, reason: "the case is RESOLVED" },
      { caseId: "no-such-case", reason: "not found" },
    ]);
    expect((await world.report(claimed.reportId)).status).toBe("OPEN");

    const taken = await decideInBulk(world.ctx, { caseIds: [claimed.caseId], decision: { action: "dismiss", reason: "not_actionable" }, othersClaims: "take_over" });
    expect(taken.decided).toEqual([claimed.caseId]);
    expect((await world.caseOf(claimed.caseId)).assigneeId).toBe(world.ctx.actor.id);
  });

  test("undo puts every report and case back as it was, records and all, and is audited", async () => {
    const a = await world.fileReport();
    const b = await world.reportIn("TRIAGED");
    const joined = await world.fileReport({ target: { contentType: "post", contentExternalId: (await world.report(a.reportId)).contentExternalId } });
    expect(joined.caseId).toBe(a.caseId);
    const out = await decideInBulk(world.ctx, { caseIds: [a.caseId, b.caseId], decision: { action: "dismiss", reason: "false_positive", note: "sweep" }, othersClaims: "skip" });
    expect(out.decided).toEqual([a.caseId, b.caseId]);
    expect(out.undoUntil).toBe(new Date(world.clock.now() + UNDO_WINDOW_MS).toISOString());
    for (const id of [a.reportId, b.reportId, joined.reportId]) expect((await world.report(id)).status).toBe("DISMISSED");
    expect((await world.caseOf(a.caseId)).decision).toBe("dismiss");

    world.clock.advance(30_000);
    const undone = await undoBulkDecision(world.ctx, { bulkId: out.bulkId! });
    expect(undone).toEqual({ restored: [a.caseId, b.caseId], notRestored: [] });
    expect((await world.report(a.reportId)).status).toBe("OPEN");
    expect((await world.report(joined.reportId)).status).toBe("OPEN");
    expect((await world.report(a.reportId)).dismissal).toBeNull();
    expect((await world.report(b.reportId)).status).toBe("TRIAGED");
    expect(await world.caseOf(b.caseId)).toMatchObject({ status: "TRIAGED", isOpen: 1, decision: null, decidedAt: null });
    expect((await world.audit(a.reportId)).actions.slice(-2)).toEqual(["REPORT_DISMISSED", "REPORT_DECISION_UNDONE"]);
    expect((await world.audit(out.bulkId!)).actions).toEqual(["BULK_DECISION_MADE", "BULK_DECISION_UNDONE"]);

    const again = await refusal(undoBulkDecision(world.ctx, { bulkId: out.bulkId! }));
    expect(again.http).toBe(409);
  });

  test("an undone escalation takes the case back to where it was, team and all", async () => {
    const r = await world.fileReport();
    const out = await decideInBulk(world.ctx, { caseIds: [r.caseId], decision: { action: "escalate", team: "legal" }, othersClaims: "skip" });
    expect(await world.caseOf(r.caseId)).toMatchObject({ status: "IN_REVIEW", escalatedTeam: "legal" });
    await undoBulkDecision(world.ctx, { bulkId: out.bulkId! });
    expect(await world.caseOf(r.caseId)).toMatchObject({ status: "OPEN", escalatedTeam: null });
    expect((await world.report(r.reportId)).escalation).toBeNull();
  });

  test("undo is refused after its window and to anyone but who decided; changed cases stay as they are", async () => {
    const late = await world.fileReport();
    const lateOut = await decideInBulk(world.ctx, { caseIds: [late.caseId], decision: { action: "resolve", code: "SPAM_CONFIRMED" }, othersClaims: "skip" });
    const other = await refusal(undoBulkDecision(bob, { bulkId: lateOut.bulkId! }));
    expect(other.http).toBe(403);
    world.clock.advance(UNDO_WINDOW_MS + 1);
    const tooLate = await refusal(undoBulkDecision(world.ctx, { bulkId: lateOut.bulkId! }));
    expect(tooLate.http).toBe(409);
    expect(tooLate.message).toContain("Too late to undo");

    // A newer case opened for the same target: the dismissed one is not reopened beside it.
    const first = await world.fileReport();
    const out = await decideInBulk(world.ctx, { caseIds: [first.caseId], decision: { action: "dismiss", reason: "other" }, othersClaims: "skip" });
    const target = (await world.report(first.reportId)).contentExternalId;
    const newer = await world.fileReport({ target: { contentType: "post", contentExternalId: target } });
    expect(newer.caseId).not.toBe(first.caseId);
    const undone = await undoBulkDecision(world.ctx, { bulkId: out.bulkId! });
    expect(undone).toEqual({ restored: [], notRestored: [{ caseId: first.caseId, reason: "a newer case is open for the same target" }] });
    expect((await world.report(first.reportId)).status).toBe("DISMISSED");
  });
});

describe("the queue", () => {
  test("pages through every open case, each once, emergency first, with counts and view counts", async () => {
    const w = await domainWorld();
    try {
      const filed: string[] = [];
      for (let i = 0; i < 23; i++) {
        w.clock.advance(1000);
        filed.push((await w.fileReport({ reasons: [i % 5 === 0 ? "threats" : "spam"] })).caseId);
      }
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await queue(w.ctx, { limit: 5, cursor, userId: w.ctx.actor.id });
        expect(page.counts.total).toBe(23);
        expect(page.counts.high).toBe(5);
        seen.push(...page.items.map((c) => c.id));
        cursor = page.nextCursor ?? undefined;
        pages++;
      } while (cursor);
      expect(pages).toBe(5);
      expect(new Set(seen).size).toBe(23);
      expect(seen.sort()).toEqual([...filed].sort());
      const first = await queue(w.ctx, { limit: 5 });
      expect(first.items.every((c) => c.bucket === "high")).toBe(true);

      await assignCase(w.ctx, { caseId: filed[1]!, assigneeId: w.ctx.actor.id });
      const escalated = filed[2]!;
      await decideOnReport(w.ctx, { reportId: (await queue(w.ctx, { limit: 50 })).items.find((c) => c.id === escalated)!.openReportId!, decision: { action: "escalate", team: "safety" } });
      await w.reportIn("APPEALED");
      const views = (await queue(w.ctx, { limit: 1, userId: w.ctx.actor.id })).views;
      expect(views).toEqual({ open: 23, unassigned: 22, mine: 1, escalated_safety: 1, escalated_legal: 0, escalated_senior_moderator: 0, appealed: 1 });
      const safety = await queue(w.ctx, { limit: 50, view: "escalated_safety" });
      expect(safety.items.map((c) => [c.id, c.escalation?.team])).toEqual([[escalated, "safety"]]);
      const appealed = await queue(w.ctx, { limit: 50, view: "appealed" });
      expect(appealed.items.map((c) => c.status)).toEqual(["APPEALED"]);

      const bad = await refusal(queue(w.ctx, { limit: 5, cursor: "not a cursor" }));
      expect(bad.http).toBe(400);
    } finally {
      await w.close();
    }
  });

  test("tags are normalised, audited, shown on rows and filter the queue", async () => {
    const r = await world.fileReport();
    expect(normaliseTag("  Needs Translation ")).toBe("needs-translation");
    expect(normaliseTag("!!!")).toBeNull();
    expect(await setCaseTags(world.ctx, { caseId: r.caseId, tags: ["Brigading", "needs translation", "brigading"] })).toEqual(["brigading", "needs-translation"]);
    const tagged = await queue(world.ctx, { limit: 50, tag: "brigading" });
    expect(tagged.items.map((c) => c.id)).toEqual([r.caseId]);
    expect(tagged.items[0]!.tags).toEqual(["brigading", "needs-translation"]);
    expect((await tagsInUse(world.ctx)).find((t) => t.tag === "brigading")).toEqual({ tag: "brigading", cases: 1 });
    expect((await world.audit(r.caseId)).events.at(-1)).toMatchObject({ action: "CASE_TAGS_CHANGED", before: { tags: [] }, after: { tags: ["brigading", "needs-translation"] } });
    const tooMany = await refusal(setCaseTags(world.ctx, { caseId: r.caseId, tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }));
    expect(tooMany.http).toBe(400);
  });
});

describe("the overview", () => {
  test("counts every escalation once, including those of cases already in review, as the audit trail has them", async () => {
    const w = await domainWorld();
    try {
      const a = await w.fileReport();
      const twice = await w.fileReport();
      const resolved = await w.reportIn("RESOLVED");
      await decideOnReport(w.ctx, { reportId: a.reportId, decision: { action: "escalate", team: "safety" } });
      await decideOnReport(w.ctx, { reportId: twice.reportId, decision: { action: "escalate", team: "safety" } });
      // Already IN_REVIEW: still an escalation (to another team).
      await decideOnReport(w.ctx, { reportId: twice.reportId, decision: { action: "escalate", team: "legal" } });
      // A RESOLVED report: recorded, but nothing was escalated.
      await decideOnReport(w.ctx, { reportId: resolved.reportId, decision: { action: "escalate", team: "legal" } });
      const o = await overview(w.ctx, { days: 7 });
      expect(o.figures.escalated).toBe(3);
      const { events } = await w.audit(twice.caseId);
      expect(events.filter((e) => e.action === "CASE_ESCALATED").map((e) => (e.data as { team: string }).team)).toEqual(["safety", "legal"]);
    } finally {
      await w.close();
    }
  });
});

describe("the overview's counts by day", () => {
  test("for the whole organization (counted a day at a time on an index) and for one project (its rows grouped six hours at a time on SQLite) they are a count by hand", async () => {
    const w = await domainWorld();
    try {
      const DAY = 24 * 60 * 60 * 1000;
      // Four days back to today, a day left empty, a report on each side of a midnight.
      // Each at its day's first or last millisecond, in time order: a report's time never goes
      // back (report-time.ts), and on PostgreSQL it takes a random microsecond of its
      // millisecond, or a few after the last report's, which a report filed at an earlier clock
      // than the one before could carry past a midnight.
      const filings: { dayAgo: number; reasons: string[]; at: "first" | "last" }[] = [
        { dayAgo: 4, reasons: ["spam"], at: "first" },
        { dayAgo: 4, reasons: ["harassment", "spam"], at: "last" },
        { dayAgo: 3, reasons: ["child_safety"], at: "first" },
        { dayAgo: 1, reasons: ["threats", "spam"], at: "first" },
        { dayAgo: 1, reasons: ["spam"], at: "last" },
        { dayAgo: 0, reasons: ["harassment"], at: "first" },
      ];
      const today = Math.floor(w.clock.now() / DAY) * DAY;
      const start = w.clock.now();
      // The organization's only project picked: the whole organization (nothing filed yet).
      expect((await overview(w.ctx, { days: 7, projectId: w.project.id })).figures.received).toBe(0);
      // Another project's reports, each at a window's edge (six hours from a midnight: the last
      // millisecond before, the first after), count for the organization, not for the first
      // project. Filed in time order, as report times only grow (report-time.ts).
      const other = await w.addProject({ name: "Other" });
      const otherFiled = [];
      for (const f of filings) {
        w.clock.set(today - f.dayAgo * DAY + (f.at === "first" ? 0 : DAY - 1));
        await w.fileReport({ reasons: f.reasons });
        if (f.dayAgo === 3) {
          for (const [i, ms] of [6 * 3_600_000 - 1, 6 * 3_600_000].entries()) {
            w.clock.set(today - 2 * DAY + ms);
            otherFiled.push(await w.fileReport({ project: other, reasons: i ? ["threats"] : ["spam"] }));
          }
        }
      }
      w.clock.set(start);
      const whole = await overview(w.ctx, { days: 7 });
      const byProject = await overview(w.ctx, { days: 7, projectId: w.project.id });
      const ofOther = await overview(w.ctx, { days: 7, projectId: other.id });
      expect(byProject.figures).toMatchObject({ received: filings.length, pending: filings.length });
      expect(ofOther.figures).toMatchObject({ received: 2, pending: 2 });
      expect(Object.values(ofOther.figures.openCases).reduce((a, b) => a + b, 0)).toBe(new Set(otherFiled.map((f) => f.caseId)).size);
      expect(ofOther.byCategory.map((c) => [c.name, c.counts[4]])).toEqual([["spam", 1], ["threats", 1]]);
      expect(ofOther.bySeverity.LOW[4]! + ofOther.bySeverity.HIGH[4]!).toBe(2);
      expect(whole.figures).toMatchObject({ received: filings.length + 2, pending: filings.length + 2 });
      // By hand: the last of the seven days is today.
      const at = (dayAgo: number) => 6 - dayAgo;
      const severity = { LOW: [0, 0, 0, 0, 0, 0, 0], MEDIUM: [0, 0, 0, 0, 0, 0, 0], HIGH: [0, 0, 0, 0, 0, 0, 0], CRITICAL: [0, 0, 0, 0, 0, 0, 0] };
      severity.MEDIUM[at(4)] = 1; // harassment + spam
      severity.LOW[at(4)] = 1;
      severity.CRITICAL[at(3)] = 1;
      severity.HIGH[at(1)] = 1;
      severity.LOW[at(1)] = 1;
      severity.MEDIUM[at(0)] = 1;
      expect(byProject.bySeverity).toEqual(severity);
      const spam = [0, 0, 0, 0, 0, 0, 0];
      spam[at(4)] = 2;
      spam[at(1)] = 2;
      expect(byProject.byCategory.find((c) => c.name === "spam")).toEqual({ name: "spam", counts: spam, total: 4 });
      expect(byProject.byCategory.map((c) => [c.name, c.total])).toEqual([["spam", 4], ["harassment", 2], ["child_safety", 1], ["threats", 1]]);
      // The organization: the first project's and the other's.
      severity.LOW[at(2)] = 1;
      severity.HIGH[at(2)] = 1;
      expect(whole.bySeverity).toEqual(severity);
      spam[at(2)] = 1;
      expect(whole.byCategory.find((c) => c.name === "spam")).toEqual({ name: "spam", counts: spam, total: 5 });
      expect(whole.byCategory.map((c) => [c.name, c.total])).toEqual([["spam", 5], ["harassment", 2], ["threats", 2], ["child_safety", 1]]);
    } finally {
      await w.close();
    }
  });
});

describe("the overview of an organization's only project", () => {
  test("is the organization's (counted on its indexes, no row read)", async () => {
    const w = await domainWorld();
    try {
      await w.fileReport({ reasons: ["spam"] });
      await w.fileReport({ reasons: ["threats", "harassment"] });
      await w.reportIn("RESOLVED");
      const whole = await overview(w.ctx, { days: 7 });
      const byProject = await overview(w.ctx, { days: 7, projectId: w.project.id });
      expect(byProject).toEqual(whole);
      expect(whole.figures).toMatchObject({ received: 3, pending: 2 });
    } finally {
      await w.close();
    }
  });
});

describe("countInWindows", () => {
  test("counts what one statement counts, however the windows fall (one a microsecond, growing, or one for all)", async () => {
    const w = await domainWorld();
    try {
      const other = await w.addProject({ name: "Other" });
      // Reports 0, 1, 2, 5 and 9 ms apart, several in one millisecond, alternately in each project.
      for (const [k, step] of [0, 0, 1, 2, 0, 5, 9, 1, 0, 2].entries()) {
        w.clock.advance(step);
        await w.fileReport({ project: k % 3 ? w.project : other });
      }
      const inFirst = eq(reports.projectId, w.project.id);
      const range = and(eq(reports.orgId, w.orgId), eq(reports.status, "OPEN"))!;
      const [byStatement] = await w.ctx.db.select({ n: count() }).from(reports).where(and(range, inFirst));
      const caseRange = and(eq(cases.orgId, w.orgId), eq(cases.isOpen, 1))!;
      const [casesByStatement] = await w.ctx.db.select({ n: count() }).from(cases).where(and(caseRange, eq(cases.projectId, other.id)));
      expect(Number(byStatement!.n)).toBe(6);
      expect(Number(casesByStatement!.n)).toBe(4);
      for (const firstWindowMs of [0.001, 1, 3, Number.POSITIVE_INFINITY]) {
        expect(await countInWindows(w.ctx, { table: reports, range, filter: inFirst, key: reports.createdUs, unitsPerMs: 1000 }, firstWindowMs)).toBe(6);
        expect(await countInWindows(w.ctx, { table: cases, range: caseRange, filter: eq(cases.projectId, other.id), key: cases.createdAt, unitsPerMs: 1 }, firstWindowMs)).toBe(4);
      }
      // Nothing in the range: no window read.
      expect(await countInWindows(w.ctx, { table: reports, range: and(eq(reports.orgId, w.orgId), eq(reports.status, "RESOLVED"))!, filter: inFirst, key: reports.createdUs, unitsPerMs: 1000 }, 1)).toBe(0);
    } finally {
      await w.close();
    }
  });
});

describe("decision templates", () => {
  test("fill their placeholders; unknown placeholders and duplicate names are refused; changes are audited", async () => {
    expect(renderTemplate("We applied a {action} for {reason} ({category}).", { action: "24-hour suspension", reason: "harassment confirmed", category: "harassment" })).toBe(
      "We applied a 24-hour suspension for harassment confirmed (harassment).",
    );
    expect(renderTemplate("Removed {action} {other}", {})).toBe("Removed {other}");
    const projectId = world.project.id;
    const t = await createTemplate(world.ctx, { projectId, name: "Spam sweep", kind: "dismiss", body: "Not actionable: {reason}" });
    expect((await refusal(createTemplate(world.ctx, { projectId, name: "Spam sweep", kind: "resolve", body: "x" }))).http).toBe(409);
    const typo = await refusal(createTemplate(world.ctx, { projectId, name: "Typo", kind: "resolve", body: "For {categry}" }));
    expect(typo.http).toBe(400);
    expect(typo.message).toContain("{categry}");
    const changed = await updateTemplate(world.ctx, { projectId, templateId: t.id, patch: { body: "Dismissed ({reason})" } });
    expect(changed).toMatchObject({ name: "Spam sweep", kind: "dismiss", body: "Dismissed ({reason})" });
    expect((await listTemplates(world.ctx, { projectId, kind: "dismiss" })).map((x) => x.name)).toContain("Spam sweep");
    await deleteTemplate(world.ctx, { projectId, templateId: t.id });
    expect((await world.audit(t.id)).actions).toEqual(["DECISION_TEMPLATE_CREATED", "DECISION_TEMPLATE_UPDATED", "DECISION_TEMPLATE_DELETED"]);
    expect((await refusal(deleteTemplate(world.ctx, { projectId, templateId: t.id }))).http).toBe(404);
  });
});
