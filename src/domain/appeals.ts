/**
 * Appeals: a platform forwards its user's appeal against an enforcement action; a moderator
 * upholds it (the decision stands) or overturns it (the decision is reversed and its actions
 * revoked). The linked report and its case move through the workflow engine (workflow-engine.ts):
 * appeal RESOLVED → APPEALED, uphold and overturn APPEALED → CLOSED.
 */
import { and, asc, desc, eq, gt, isNull, lt, type SQL } from "drizzle-orm";
import { appeals, enforcementActions, reports } from "../db/schema.ts";
import { recordAudit, type Actor, type AuditAction } from "./audit.ts";
import { iso, isoOrNull } from "./clock.ts";
import { transaction, type DomainContext } from "./context.ts";
import { conflict, notFound } from "./errors.ts";
import { getActionView, requireAction, revokeEnforcementAction, type EnforcementActionView } from "./enforcement.ts";
import { newId } from "./ids.ts";
import { applyTransition } from "./workflow-engine.ts";
import type { AppealStatus, AppealView } from "./views/appeal.ts";

export type { AppealStatus, AppealView } from "./views/appeal.ts";

export type AppealRow = typeof appeals.$inferSelect;
export type AppealDecision = "uphold" | "overturn";

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

async function viewOf(ctx: Pick<DomainContext, "db">, a: AppealRow): Promise<AppealView> {
  const [action] = await ctx.db.select({ projectId: enforcementActions.projectId }).from(enforcementActions).where(eq(enforcementActions.id, a.actionId)).limit(1);
  return toAppealView(a, action?.projectId ?? "");
}

/** The appeal's own audit actions; the report's and the case's come from the workflow engine. */
const AUDIT: Record<"appeal" | AppealDecision, AuditAction> = {
  appeal: "APPEAL_FILED",
  uphold: "APPEAL_UPHELD",
  overturn: "APPEAL_OVERTURNED",
};

/**
 * Files the appeal of an action (the platform forwarding its user's text). The linked report
 * must be RESOLVED (it and its case become APPEALED); an action without a report can be
 * appealed too. 409: the action is revoked, an appeal is pending, or one was already decided.
 */
export function fileAppeal(ctx: DomainContext, input: { projectId: string; actionId: string; text: string }): Promise<AppealView> {
  return transaction(ctx, async () => {
    const action = await requireAction(ctx, { actionId: input.actionId, projectId: input.projectId });
    if (action.revokedAt !== null) throw conflict("The action was revoked: there is nothing left to appeal");
    const [earlier] = await ctx.db.select().from(appeals).where(eq(appeals.actionId, action.id)).orderBy(desc(appeals.createdAt)).limit(1);
    if (earlier?.status === "pending") throw conflict(`An appeal of this action is already pending (${earlier.id})`);
    if (earlier) throw conflict(`This action was already appealed and the appeal was ${earlier.status}; a decided appeal is final`);

    const [report] = action.reportId ? await ctx.db.select().from(reports).where(eq(reports.id, action.reportId)).limit(1) : [];
    const now = ctx.clock.now();
    const row: AppealRow = {
      id: newId(),
      orgId: ctx.orgId,
      actionId: action.id,
      reportId: report?.id ?? null,
      caseId: report?.caseId ?? action.caseId,
      text: input.text,
      status: "pending",
      decidedByType: null,
      decidedById: null,
      decisionNote: null,
      createdAt: now,
      decidedAt: null,
    };
    await ctx.db.insert(appeals).values(row);
    await recordAudit(ctx, {
      projectId: action.projectId, action: AUDIT.appeal, entityType: "appeal", entityId: row.id,
      after: { status: "pending" }, data: { actionId: action.id, reportId: row.reportId, caseId: row.caseId },
    });
    // RESOLVED → APPEALED, with its case; any other status: 409, and the transaction (the
    // appeal written above with it) is rolled back.
    if (report) await applyTransition(ctx, { target: { reportId: report.id }, move: { action: "appeal", appealId: row.id, actionId: action.id } });
    return toAppealView(row, action.projectId);
  });
}

/** An appeal of the context's organization, or a 404. */
export async function requireAppeal(ctx: Pick<DomainContext, "db" | "orgId">, appealId: string): Promise<AppealRow> {
  const [row] = await ctx.db.select().from(appeals).where(and(eq(appeals.id, appealId), eq(appeals.orgId, ctx.orgId))).limit(1);
  if (!row) throw notFound("Appeal not found");
  return row;
}

/**
 * A moderator's decision on a pending appeal (409 once decided). Uphold: the report and case
 * go APPEALED → CLOSED and the action stands. Overturn: the same moves, and the appealed action
 * and every other action of the same report still unrevoked are revoked and announced.
 */
export function decideAppeal(
  ctx: DomainContext,
  input: { appealId: string; decision: AppealDecision; note?: string | null },
): Promise<{ appeal: AppealView; revoked: EnforcementActionView[] }> {
  const { decision, note } = input;
  const { actor } = ctx;
  return transaction(ctx, async () => {
    const appeal = await requireAppeal(ctx, input.appealId);
    if (appeal.status !== "pending") throw conflict(`The appeal was already ${appeal.status}`);
    const action = await requireAction(ctx, { actionId: appeal.actionId });
    const now = ctx.clock.now();
    const status: AppealStatus = decision === "uphold" ? "upheld" : "overturned";
    const decided: AppealRow = { ...appeal, status, decidedByType: actor.type, decidedById: actor.id, decisionNote: note ?? null, decidedAt: now };
    await ctx.db
      .update(appeals)
      .set({ status, decidedByType: actor.type, decidedById: actor.id, decisionNote: note ?? null, decidedAt: now })
      .where(eq(appeals.id, appeal.id));
    // APPEALED → CLOSED, with its case; a report no longer APPEALED stays as it is (reportMoved: false).
    const reportMoved = appeal.reportId
      ? (await applyTransition(ctx, { target: { reportId: appeal.reportId }, move: { action: decision, appealId: appeal.id, actionId: action.id }, refused: "skip" })).changed
      : false;

    const revoked: EnforcementActionView[] = [];
    if (decision === "overturn") {
      const reason = `Appeal overturned${note ? `: ${note}` : ""}`;
      const toRevoke = appeal.reportId
        ? (
            await ctx.db
              .select({ id: enforcementActions.id })
              .from(enforcementActions)
              .where(and(eq(enforcementActions.reportId, appeal.reportId), isNull(enforcementActions.revokedAt)))
          ).map((a) => a.id)
        : [];
      if (action.revokedAt === null && !toRevoke.includes(action.id)) toRevoke.unshift(action.id);
      for (const id of toRevoke) {
        revoked.push(await revokeEnforcementAction(ctx, { actionId: id, reason, data: { appealId: appeal.id } }));
      }
    }
    await recordAudit(ctx, {
      projectId: action.projectId, action: AUDIT[decision], entityType: "appeal", entityId: appeal.id,
      before: { status: "pending" }, after: { status },
      data: { note: note ?? null, actionId: action.id, reportId: appeal.reportId, reportMoved, revokedActionIds: revoked.map((a) => a.id) },
    });
    return { appeal: toAppealView(decided, action.projectId), revoked };
  });
}

export interface AppealQuery {
  status?: AppealStatus;
  projectId?: string;
  actionId?: string;
  /** The id of the last appeal of the previous page. */
  cursor?: string;
  limit: number;
}

/**
 * Appeals of the context's organization. Pending ones come oldest first (the review order);
 * decided ones and unfiltered lists newest first.
 */
export async function listAppeals(ctx: Pick<DomainContext, "db" | "orgId">, q: AppealQuery): Promise<{ appeals: AppealView[]; nextCursor: string | null }> {
  const oldestFirst = q.status === "pending";
  const where: SQL[] = [eq(appeals.orgId, ctx.orgId)];
  if (q.status) where.push(eq(appeals.status, q.status));
  if (q.actionId) where.push(eq(appeals.actionId, q.actionId));
  if (q.projectId) where.push(eq(enforcementActions.projectId, q.projectId));
  if (q.cursor) where.push(oldestFirst ? gt(appeals.id, q.cursor) : lt(appeals.id, q.cursor));
  const rows = await ctx.db
    .select({ appeal: appeals, projectId: enforcementActions.projectId })
    .from(appeals)
    .innerJoin(enforcementActions, eq(enforcementActions.id, appeals.actionId))
    .where(and(...where))
    .orderBy(oldestFirst ? asc(appeals.id) : desc(appeals.id))
    .limit(q.limit + 1);
  const page = rows.slice(0, q.limit);
  return {
    appeals: page.map((r) => toAppealView(r.appeal, r.projectId)),
    nextCursor: rows.length > q.limit ? (page.at(-1)?.appeal.id ?? null) : null,
  };
}

export async function getAppeal(ctx: Pick<DomainContext, "db" | "orgId">, appealId: string): Promise<AppealView> {
  return viewOf(ctx, await requireAppeal(ctx, appealId));
}

/** An action of a project with its appeals (at most 100, newest first): the action's page. */
export async function actionWithAppeals(
  ctx: Pick<DomainContext, "db" | "orgId" | "clock">,
  input: { projectId: string; actionId: string },
): Promise<{ action: EnforcementActionView; appeals: AppealView[] }> {
  const row = await requireAction(ctx, { actionId: input.actionId, projectId: input.projectId });
  return {
    action: await getActionView(ctx, row),
    appeals: (await listAppeals(ctx, { actionId: row.id, limit: 100 })).appeals,
  };
}

/** An appeal with the action it is against: the appeal's page. */
export async function appealWithAction(
  ctx: Pick<DomainContext, "db" | "orgId" | "clock">,
  appealId: string,
): Promise<{ appeal: AppealView; action: EnforcementActionView }> {
  const appeal = await getAppeal(ctx, appealId);
  return { appeal, action: await getActionView(ctx, await requireAction(ctx, { actionId: appeal.actionId })) };
}
