/**
 * The review workflow as a table (docs/workflow.md): every action from every status, first in
 * the pure table (`nextStatus`), then through the domain's entry points on a report alone in its
 * case: decideOnReport (escalate, resolve, dismiss), triageCase, fileAppeal, decideAppeal and
 * enrichReport. In process, on an in-memory store.
 *
 * A cell reads `→ STATUS` (goes there, or stays there applied: an escalation of an IN_REVIEW
 * report), `= (kept)` (accepted, nothing moves; only recorded) or `409` (refused, nothing changes).
 * The `undo` row restores the open status a bulk decision found (here: OPEN).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../../scripts/fake-ollama.ts";
import { loadConfig, type Config } from "../../src/config.ts";
import { enrichReport } from "../../src/domain/analysis/enrichment.ts";
import { appealsInbox, decideAppeal, fileAppeal } from "../../src/domain/enforcement/appeals.ts";
import { decideOnReport, triageCase } from "../../src/domain/review/decisions.ts";
import type { Project } from "../../src/domain/accounts/projects.ts";
import { nextStatus, STATUSES, type Status, type WorkflowAction } from "../../src/domain/views/workflow.ts";
import { domainWorld, refusal, type DomainWorld, type ReportInStatus } from "../helpers/builders.ts";

const REFUSED = "409";
const KEPT = "=";
type Cell = Status | typeof REFUSED | typeof KEPT;
const R = REFUSED;

/**
 * The row of each action, one cell per status, in STATUSES order. Where the interface
 * specification has a row (create, enrich, escalate, resolve, dismiss) the cells are its: escalate
 * moves every status but RESOLVED to IN_REVIEW (RESOLVED: unchanged, recorded). uphold and
 * overturn from IN_REVIEW: an appealed report escalated back into review, its appeal pending.
 */
const TABLE: Record<WorkflowAction, readonly Cell[]> = {
  //          OPEN          TRIAGED       IN_REVIEW     RESOLVED      DISMISSED     APPEALED      CLOSED
  triage:   ["TRIAGED",    R,            R,            R,            R,            R,            R],
  enrich:   ["IN_REVIEW",  R,            R,            R,            R,            R,            R],
  escalate: ["IN_REVIEW",  "IN_REVIEW",  "IN_REVIEW",  KEPT,         "IN_REVIEW",  "IN_REVIEW",  "IN_REVIEW"],
  resolve:  ["RESOLVED",   "RESOLVED",   "RESOLVED",   R,            R,            R,            R],
  dismiss:  ["DISMISSED",  "DISMISSED",  "DISMISSED",  R,            R,            R,            R],
  appeal:   [R,            R,            R,            "APPEALED",   R,            R,            R],
  uphold:   [R,            R,            "CLOSED",     R,            R,            "CLOSED",     R],
  overturn: [R,            R,            "CLOSED",     R,            R,            "CLOSED",     R],
  close:    [R,            R,            R,            "CLOSED",     "CLOSED",     R,            R],
  undo:     [R,            R,            "OPEN",       "OPEN",       "OPEN",       R,            R],
};
const ACTIONS = Object.keys(TABLE) as WorkflowAction[];
const cellOf = (action: WorkflowAction, from: Status): Cell => TABLE[action][STATUSES.indexOf(from)]!;
const show = (cell: Cell): string => (cell === REFUSED ? "409" : cell === KEPT ? "= (kept)" : `→ ${cell}`);
const row = (action: WorkflowAction, from: Status, cell: Cell) => `${action.padEnd(8)} from ${from.padEnd(9)} ${show(cell)}`;

describe("the table (nextStatus)", () => {
  test("undo goes back only to an open status, and only to one it is given", () => {
    expect(nextStatus("DISMISSED", "undo", "TRIAGED")).toEqual({ allowed: true, to: "TRIAGED", changed: true, noop: false });
    expect(nextStatus("RESOLVED", "undo", "IN_REVIEW")).toEqual({ allowed: true, to: "IN_REVIEW", changed: true, noop: false });
    expect(nextStatus("DISMISSED", "undo", "CLOSED")).toEqual({ allowed: false });
    expect(nextStatus("DISMISSED", "undo")).toEqual({ allowed: false });
  });

  test("has a row for every action and a cell for every status", () => {
    for (const action of ACTIONS) expect(TABLE[action].length).toBe(STATUSES.length);
    expect(STATUSES).toEqual(["OPEN", "TRIAGED", "IN_REVIEW", "RESOLVED", "DISMISSED", "APPEALED", "CLOSED"]);
  });

  for (const action of ACTIONS) {
    for (const from of STATUSES) {
      const cell = cellOf(action, from);
      test(row(action, from, cell), () => {
        const move = nextStatus(from, action, action === "undo" ? "OPEN" : undefined);
        if (cell === REFUSED) expect(move).toEqual({ allowed: false });
        else if (cell === KEPT) expect(move).toEqual({ allowed: true, to: from, changed: false, noop: true });
        else expect(move).toEqual({ allowed: true, to: cell, changed: cell !== from, noop: false });
      });
    }
  }
});

// ---------------------------------------------------------------------------------------------
// Through the domain

let world: DomainWorld;
let fake: FakeOllama;
/** A project with AI enrichment on (threshold 70), where enrichReport has something to do. */
let aiProject: Project;
let aiConfig: Config;

beforeAll(async () => {
  world = await domainWorld();
  fake = startFakeOllama();
  // The model finds a likely HIGH violation: enough to move an OPEN report to review.
  fake.setDefault(() => ({ json: { reasoning: "a threat of violence", categories: ["threats"], severity: "HIGH", confidence: 90 } }));
  aiProject = await world.addProject({ name: "With AI", ai: { threshold: 70 } });
  aiConfig = loadConfig({ OLLAMA_HOST: fake.url, FLAGSTAFF_AI_TIMEOUT_MS: "3000" });
});
afterAll(async () => {
  world.close();
  await fake.stop();
});

/** How each action is taken in the domain, on a report alone in its case. */
const ENTRY: Partial<Record<WorkflowAction, { via: string; take: (r: ReportInStatus) => Promise<unknown> }>> = {
  triage: { via: "triageCase", take: (r) => triageCase(world.ctx, r.caseId) },
  escalate: { via: "decideOnReport", take: (r) => decideOnReport(world.ctx, { reportId: r.reportId, decision: { action: "escalate", team: "safety" } }) },
  resolve: { via: "decideOnReport", take: (r) => decideOnReport(world.ctx, { reportId: r.reportId, decision: { action: "resolve", code: "NO_VIOLATION" } }) },
  dismiss: { via: "decideOnReport", take: (r) => decideOnReport(world.ctx, { reportId: r.reportId, decision: { action: "dismiss", reason: "other" } }) },
  appeal: {
    via: "fileAppeal",
    // A fresh action on the report, so the refusal is about the report's status and nothing else.
    take: async (r) => {
      const { actionId } = await world.warn(r.reportId);
      return fileAppeal(world.platform, { projectId: world.project.id, actionId, text: "I did nothing wrong" });
    },
  },
  enrich: {
    via: "enrichReport",
    take: (r) => enrichReport({ ...world.ctx, config: aiConfig }, r.reportId),
  },
};

/**
 * Where the domain answers differently from the bare table, and why. Statuses left out of
 * `only` cannot be reached with what the action needs (no pending appeal can exist there).
 */
const DOMAIN: Partial<Record<WorkflowAction, { only?: Status[]; differs?: Partial<Record<Status, { cell: Cell; why: string }>> }>> = {
  enrich: {
    // A background job never fails on a status: the analysis is attached, the status stays.
    differs: Object.fromEntries(
      STATUSES.filter((s) => s !== "OPEN").map((s) => [s, { cell: KEPT, why: "the analysis is attached, the status stays" }]),
    ),
  },
};

/** A report of `from` for `action` (in the AI project when the action is enrichment). */
const reportFor = (action: WorkflowAction, from: Status) =>
  world.reportIn(from, action === "enrich" ? { project: aiProject, description: "I will find you" } : {});

describe("through the domain's entry points (a report alone in its case)", () => {
  for (const action of ACTIONS) {
    const entry = ENTRY[action];
    if (!entry) continue;
    for (const from of DOMAIN[action]?.only ?? STATUSES) {
      const differs = DOMAIN[action]?.differs?.[from];
      const cell = differs?.cell ?? cellOf(action, from);
      test(`${entry.via.padEnd(14)} ${row(action, from, cell)}${differs ? `  (${differs.why})` : ""}`, async () => {
        const r = await reportFor(action, from);
        const before = (await world.audit(r.reportId)).actions;
        if (cell === REFUSED) {
          const error = await refusal(entry.take(r));
          expect(error.kind).toBe("conflict");
          expect(error.http).toBe(409);
          expect((await world.report(r.reportId)).status).toBe(from);
          expect((await world.caseOf(r.caseId)).status).toBe(from);
          expect((await world.audit(r.reportId)).actions).toEqual(before);
          return;
        }
        await entry.take(r);
        const to = cell === KEPT ? from : cell;
        expect((await world.report(r.reportId)).status).toBe(to);
        // Reports and cases share the table: the case of a lone report moves with it.
        expect((await world.caseOf(r.caseId)).status).toBe(to);
        if (action === "enrich") expect((await world.report(r.reportId)).aiAnalyzedAt).toBe(world.clock.now());
      });
    }
  }

  // uphold and overturn need a pending appeal, which an APPEALED report has, and an IN_REVIEW
  // one escalated out of APPEALED; once decided, an appeal is final.
  for (const decision of ["uphold", "overturn"] as const) {
    test(`decideAppeal    ${row(decision, "APPEALED", "CLOSED")}`, async () => {
      const r = await world.reportIn("APPEALED");
      const { appeal } = await decideAppeal(world.ctx, { appealId: r.appealId!, decision });
      expect(appeal.status).toBe(decision === "uphold" ? "upheld" : "overturned");
      expect((await world.report(r.reportId)).status).toBe("CLOSED");
      expect((await world.caseOf(r.caseId)).status).toBe("CLOSED");
    });
    test(`decideAppeal    ${row(decision, "IN_REVIEW", "CLOSED")}  (an appealed report escalated back into review)`, async () => {
      const r = await world.reportIn("APPEALED");
      await decideOnReport(world.ctx, { reportId: r.reportId, decision: { action: "escalate", team: "legal" } });
      expect((await world.report(r.reportId)).status).toBe("IN_REVIEW");
      const { appeal } = await decideAppeal(world.ctx, { appealId: r.appealId!, decision });
      expect(appeal.status).toBe(decision === "uphold" ? "upheld" : "overturned");
      expect((await world.report(r.reportId)).status).toBe("CLOSED");
      expect((await world.caseOf(r.caseId)).status).toBe("CLOSED");
    });
    test(`decideAppeal    ${row(decision, "CLOSED", REFUSED)}  (its appeal was decided: final)`, async () => {
      const r = await world.reportIn("CLOSED");
      const error = await refusal(decideAppeal(world.ctx, { appealId: r.appealId!, decision }));
      expect(error.http).toBe(409);
      expect((await world.report(r.reportId)).status).toBe("CLOSED");
    });
  }
});

describe("what each move leaves behind", () => {
  test("an escalation of a RESOLVED report is only recorded (applied: false), on the report only", async () => {
    for (const from of ["RESOLVED"] as const) {
      const r = await world.reportIn(from);
      const caseBefore = (await world.audit(r.caseId)).actions;
      expect(await decideOnReport(world.ctx, { reportId: r.reportId, decision: { action: "escalate", team: "legal", note: "counsel asked" } })).toEqual({ changed: false });
      const { events } = await world.audit(r.reportId);
      expect(events.at(-1)).toMatchObject({
        action: "REPORT_ESCALATED",
        actor: world.ctx.actor,
        before: { status: from },
        after: { status: from },
        data: { team: "legal", note: "counsel asked", applied: false },
      });
      expect((await world.report(r.reportId)).escalation).toContain('"applied":false');
      expect((await world.audit(r.caseId)).actions).toEqual(caseBefore);
    }
  });

  test("an escalation of an IN_REVIEW report is applied: the case is marked with the team and records it once", async () => {
    const r = await world.reportIn("IN_REVIEW");
    expect(await decideOnReport(world.ctx, { reportId: r.reportId, decision: { action: "escalate", team: "legal", note: "counsel asked" } })).toEqual({ changed: false });
    const { events } = await world.audit(r.reportId);
    expect(events.at(-1)).toMatchObject({ action: "REPORT_ESCALATED", before: { status: "IN_REVIEW" }, after: { status: "IN_REVIEW" }, data: { team: "legal", applied: true } });
    const onCase = await world.audit(r.caseId);
    expect(onCase.events.at(-1)).toMatchObject({ action: "CASE_ESCALATED", actor: world.ctx.actor, data: { team: "legal", note: "counsel asked", reportId: r.reportId } });
    const c = await world.caseOf(r.caseId);
    expect(c.escalatedTeam).toBe("legal");
    expect(c.escalatedAt).toBe(world.clock.now());
    // Deciding the case ends its escalation and records the decision on it.
    await decideOnReport(world.ctx, { reportId: r.reportId, decision: { action: "resolve", code: "THREATS_CONFIRMED" } });
    const decided = await world.caseOf(r.caseId);
    expect(decided).toMatchObject({ escalatedTeam: null, decision: "resolve", decisionCode: "THREATS_CONFIRMED", decidedAt: world.clock.now(), decidedById: world.ctx.actor.id });
  });

  test("a move writes one event on the report and one on its case, by the deciding actor", async () => {
    const r = await world.reportIn("OPEN");
    await decideOnReport(world.ctx, { reportId: r.reportId, decision: { action: "dismiss", reason: "duplicate", note: "seen before" } });
    const onReport = await world.audit(r.reportId);
    expect(onReport.actions).toEqual(["REPORT_CREATED", "REPORT_DISMISSED"]);
    expect(onReport.events[1]).toMatchObject({ actor: world.ctx.actor, before: { status: "OPEN" }, after: { status: "DISMISSED" }, data: { reason: "duplicate", applied: true } });
    const onCase = await world.audit(r.caseId);
    expect(onCase.actions).toEqual(["CASE_OPENED", "CASE_STATUS_CHANGED"]);
    expect(onCase.events[1]).toMatchObject({ before: { status: "OPEN" }, after: { status: "DISMISSED" }, data: { action: "dismiss" } });
  });

  test("a refused move names the status and what would be allowed", async () => {
    const r = await world.reportIn("DISMISSED");
    const error = await refusal(decideOnReport(world.ctx, { reportId: r.reportId, decision: { action: "resolve" } }));
    expect(error.message).toBe("Report is DISMISSED: only OPEN, TRIAGED or IN_REVIEW reports can be resolved");
    const triage = await refusal(triageCase(world.ctx, r.caseId));
    expect(triage.message).toBe("Case is DISMISSED: only cases with OPEN reports can be triaged");
  });

  test("escalating an APPEALED report moves it and its case to IN_REVIEW (the specification); its pending appeal still decides it", async () => {
    const r = await world.reportIn("APPEALED");
    expect(await decideOnReport(world.ctx, { reportId: r.reportId, decision: { action: "escalate", team: "senior_moderator" } })).toEqual({ changed: true });
    expect((await world.report(r.reportId)).status).toBe("IN_REVIEW");
    expect((await world.caseOf(r.caseId)).status).toBe("IN_REVIEW");
    expect((await world.audit(r.reportId)).events.at(-1)).toMatchObject({
      action: "REPORT_ESCALATED", before: { status: "APPEALED" }, after: { status: "IN_REVIEW" }, data: { applied: true },
    });
    const pending = await appealsInbox(world.ctx, { status: "pending", caseId: r.caseId, limit: 10 });
    expect(pending.items.map((i) => [i.appeal.id, i.case?.status])).toEqual([[r.appealId!, "IN_REVIEW"]]);
    const { appeal } = await decideAppeal(world.ctx, { appealId: r.appealId!, decision: "uphold" });
    expect(appeal.status).toBe("upheld");
    expect((await world.report(r.reportId)).status).toBe("CLOSED");
    const c = await world.caseOf(r.caseId);
    expect(c).toMatchObject({ status: "CLOSED", decision: "uphold", escalatedTeam: null });
  });

});
