/**
 * Appeals: a platform forwards its user's appeal against an enforcement action; a moderator
 * upholds it (the decision stands) or overturns it (the decision is reversed and its actions
 * revoked). The linked report and its case move through the workflow table of workflow.ts:
 * appeal RESOLVED → APPEALED, uphold and overturn APPEALED → CLOSED.
 */
import { and, asc, desc, eq, gt, isNull, lt, ne, type SQL } from "drizzle-orm";
import { transaction, type Db } from "../db/client.ts";
import { appeals, cases, enforcementActions, reports } from "../db/schema.ts";
import { recordAudit, type Actor } from "./audit.ts";
import { iso, isoOrNull, type Clock } from "./clock.ts";
import { conflict, notFound } from "./errors.ts";
import { requireAction, revokeEnforcementAction, type EnforcementActionView } from "./enforcement.ts";
import { newId } from "./ids.ts";
import { asStatus, isOpenStatus, nextStatus, type Status } from "./workflow.ts";

export type AppealRow = typeof appeals.$inferSelect;
export const APPEAL_STATUSES = ["pending", "upheld", "overturned"] as const;
export type AppealStatus = (typeof APPEAL_STATUSES)[number];
export type AppealDecision = "uphold" | "overturn";

export interface AppealView {
  id: string;
  actionId: string;
  projectId: string;
  reportId: string | null;
  caseId: string | null;
  text: string;
  status: AppealStatus;
  decision: { by: Actor; note: string | null; at: string } | null;
  createdAt: string;
  decidedAt: string | null;
}

function toAppealView(a: AppealRow, projectId: string): AppealView {
  return {
    id: a.id,
    actionId: a.actionId,
    projectId,
    reportId: a.reportId,
    caseId: a.caseId,
    text: a.text,
    status: a.status,
    decision: a.decidedAt === null ? null : { by: { type: (a.decidedByType ?? "system") as Actor["type"], id: a.decidedById }, note: a.decisionNote, at: iso(a.decidedAt) },
    createdAt: iso(a.createdAt),
    decidedAt: isoOrNull(a.decidedAt),
  };
}

function viewOf(db: Db, a: AppealRow): AppealView {
  const action = db.select({ projectId: enforcementActions.projectId }).from(enforcementActions).where(eq(enforcementActions.id, a.actionId)).get();
  return toAppealView(a, action?.projectId ?? "");
}

const AUDIT: Record<"appeal" | AppealDecision, { report: string; appeal: string }> = {
  appeal: { report: "REPORT_APPEALED", appeal: "APPEAL_FILED" },
  uphold: { report: "REPORT_UPHELD", appeal: "APPEAL_UPHELD" },
  overturn: { report: "REPORT_OVERTURNED", appeal: "APPEAL_OVERTURNED" },
};

/**
 * Moves the linked report, the other reports of its case that share its status, and the case,
 * with one audit event each. Returns whether the linked report moved.
 */
function moveReportAndCase(
  db: Db,
  clock: Clock,
  actor: Actor,
  reportId: string,
  move: "appeal" | AppealDecision,
  data: Record<string, unknown>,
): boolean {
  const report = db.select().from(reports).where(eq(reports.id, reportId)).get();
  if (!report) return false;
  const own = nextStatus(asStatus(report.status), move);
  if (!own.allowed || !own.changed) return false;
  const now = clock.now();
  const fellow = db
    .select()
    .from(reports)
    .where(and(eq(reports.caseId, report.caseId), ne(reports.id, report.id), eq(reports.status, report.status)))
    .all();
  for (const r of [report, ...fellow]) {
    db.update(reports).set({ status: own.to, updatedAt: now }).where(eq(reports.id, r.id)).run();
    recordAudit(db, clock, {
      orgId: r.orgId, projectId: r.projectId, actor, action: AUDIT[move].report, entityType: "report", entityId: r.id,
      before: { status: r.status }, after: { status: own.to }, data: { ...data, caseId: r.caseId },
    });
  }
  const c = db.select().from(cases).where(eq(cases.id, report.caseId)).get();
  if (c) {
    const caseMove = nextStatus(asStatus(c.status), move);
    if (caseMove.allowed && caseMove.changed) moveCase(db, clock, actor, c, caseMove.to, move, now);
  }
  return true;
}

function moveCase(db: Db, clock: Clock, actor: Actor, c: typeof cases.$inferSelect, to: Status, move: string, now: number): void {
  db.update(cases).set({ status: to, isOpen: isOpenStatus(to) ? 1 : 0, updatedAt: now }).where(eq(cases.id, c.id)).run();
  recordAudit(db, clock, {
    orgId: c.orgId, projectId: c.projectId, actor, action: "CASE_STATUS_CHANGED", entityType: "case", entityId: c.id,
    before: { status: c.status }, after: { status: to }, data: { action: move },
  });
}

/**
 * Files the appeal of an action (the platform forwarding its user's text). The linked report
 * must be RESOLVED (it and its case become APPEALED); an action without a report can be
 * appealed too. 409: the action is revoked, an appeal is pending, or one was already decided.
 */
export function fileAppeal(db: Db, clock: Clock, actor: Actor, orgId: string, projectId: string, actionId: string, text: string): AppealView {
  return transaction(db, () => {
    const action = requireAction(db, orgId, actionId, projectId);
    if (action.revokedAt !== null) throw conflict("The action was revoked: there is nothing left to appeal");
    const earlier = db.select().from(appeals).where(eq(appeals.actionId, action.id)).orderBy(desc(appeals.createdAt)).get();
    if (earlier?.status === "pending") throw conflict(`An appeal of this action is already pending (${earlier.id})`);
    if (earlier) throw conflict(`This action was already appealed and the appeal was ${earlier.status}; a decided appeal is final`);

    const report = action.reportId ? db.select().from(reports).where(eq(reports.id, action.reportId)).get() : undefined;
    if (report) {
      const move = nextStatus(asStatus(report.status), "appeal");
      if (!move.allowed) throw conflict(`The action's report is ${report.status}: only an action whose report is RESOLVED can be appealed`);
    }
    const now = clock.now();
    const row: AppealRow = {
      id: newId(),
      orgId,
      actionId: action.id,
      reportId: report?.id ?? null,
      caseId: report?.caseId ?? action.caseId,
      text,
      status: "pending",
      decidedByType: null,
      decidedById: null,
      decisionNote: null,
      createdAt: now,
      decidedAt: null,
    };
    db.insert(appeals).values(row).run();
    recordAudit(db, clock, {
      orgId, projectId: action.projectId, actor, action: AUDIT.appeal.appeal, entityType: "appeal", entityId: row.id,
      after: { status: "pending" }, data: { actionId: action.id, reportId: row.reportId, caseId: row.caseId },
    });
    if (report) moveReportAndCase(db, clock, actor, report.id, "appeal", { appealId: row.id, actionId: action.id });
    return toAppealView(row, action.projectId);
  });
}

export function requireAppeal(db: Db, orgId: string, appealId: string): AppealRow {
  const row = db.select().from(appeals).where(and(eq(appeals.id, appealId), eq(appeals.orgId, orgId))).get();
  if (!row) throw notFound("Appeal not found");
  return row;
}

/**
 * A moderator's decision on a pending appeal (409 once decided). Uphold: the report and case
 * go APPEALED → CLOSED and the action stands. Overturn: the same moves, and the appealed action
 * and every other action of the same report still unrevoked are revoked and announced.
 */
export function decideAppeal(
  db: Db,
  clock: Clock,
  actor: Actor,
  orgId: string,
  appealId: string,
  decision: AppealDecision,
  note?: string | null,
): { appeal: AppealView; revoked: EnforcementActionView[] } {
  return transaction(db, () => {
    const appeal = requireAppeal(db, orgId, appealId);
    if (appeal.status !== "pending") throw conflict(`The appeal was already ${appeal.status}`);
    const action = requireAction(db, orgId, appeal.actionId);
    const now = clock.now();
    const status: AppealStatus = decision === "uphold" ? "upheld" : "overturned";
    const decided: AppealRow = { ...appeal, status, decidedByType: actor.type, decidedById: actor.id, decisionNote: note ?? null, decidedAt: now };
    db.update(appeals)
      .set({ status, decidedByType: actor.type, decidedById: actor.id, decisionNote: note ?? null, decidedAt: now })
      .where(eq(appeals.id, appeal.id))
      .run();
    const reportMoved = appeal.reportId ? moveReportAndCase(db, clock, actor, appeal.reportId, decision, { appealId: appeal.id, actionId: action.id }) : false;

    const revoked: EnforcementActionView[] = [];
    if (decision === "overturn") {
      const reason = `Appeal overturned${note ? `: ${note}` : ""}`;
      const toRevoke = appeal.reportId
        ? db
            .select({ id: enforcementActions.id })
            .from(enforcementActions)
            .where(and(eq(enforcementActions.reportId, appeal.reportId), isNull(enforcementActions.revokedAt)))
            .all()
            .map((a) => a.id)
        : [];
      if (action.revokedAt === null && !toRevoke.includes(action.id)) toRevoke.unshift(action.id);
      for (const id of toRevoke) {
        revoked.push(revokeEnforcementAction(db, clock, actor, orgId, id, { reason, data: { appealId: appeal.id } }));
      }
    }
    recordAudit(db, clock, {
      orgId, projectId: action.projectId, actor, action: AUDIT[decision].appeal, entityType: "appeal", entityId: appeal.id,
      before: { status: "pending" }, after: { status },
      data: { note: note ?? null, actionId: action.id, reportId: appeal.reportId, reportMoved, revokedActionIds: revoked.map((a) => a.id) },
    });
    return { appeal: toAppealView(decided, action.projectId), revoked };
  });
}

export interface AppealQuery {
  orgId: string;
  status?: AppealStatus;
  projectId?: string;
  actionId?: string;
  /** The id of the last appeal of the previous page. */
  cursor?: string;
  limit: number;
}

/**
 * Appeals of an organization. Pending ones come oldest first (the review order); decided ones
 * and unfiltered lists newest first.
 */
export function listAppeals(db: Db, q: AppealQuery): { appeals: AppealView[]; nextCursor: string | null } {
  const oldestFirst = q.status === "pending";
  const where: SQL[] = [eq(appeals.orgId, q.orgId)];
  if (q.status) where.push(eq(appeals.status, q.status));
  if (q.actionId) where.push(eq(appeals.actionId, q.actionId));
  if (q.projectId) where.push(eq(enforcementActions.projectId, q.projectId));
  if (q.cursor) where.push(oldestFirst ? gt(appeals.id, q.cursor) : lt(appeals.id, q.cursor));
  const rows = db
    .select({ appeal: appeals, projectId: enforcementActions.projectId })
    .from(appeals)
    .innerJoin(enforcementActions, eq(enforcementActions.id, appeals.actionId))
    .where(and(...where))
    .orderBy(oldestFirst ? asc(appeals.id) : desc(appeals.id))
    .limit(q.limit + 1)
    .all();
  const page = rows.slice(0, q.limit);
  return {
    appeals: page.map((r) => toAppealView(r.appeal, r.projectId)),
    nextCursor: rows.length > q.limit ? (page.at(-1)?.appeal.id ?? null) : null,
  };
}

export function getAppeal(db: Db, orgId: string, appealId: string): AppealView {
  return viewOf(db, requireAppeal(db, orgId, appealId));
}
