/**
 * Appeals: a platform forwards its user's appeal against an enforcement action; a moderator
 * upholds it (the decision stands) or overturns it (the decision is reversed and its actions
 * revoked). The linked report and its case move through the workflow engine (workflow-engine.ts):
 * appeal RESOLVED → APPEALED, uphold and overturn APPEALED (or IN_REVIEW: escalated while the
 * appeal waits) → CLOSED. Revoking an action whose
 * appeal is pending settles that appeal as overturned (revokeActionSettlingAppeal), so no case
 * waits in APPEALED for an appeal nobody can decide any more. docs/enforcement.md describes the
 * rules for people.
 */
import { and, asc, desc, eq, gt, inArray, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import { appeals, cases, enforcementActions, identities, reports } from "../../db/schema.ts";
import { recordAudit, type Actor, type AuditAction } from "../core/audit.ts";
import { iso, isoOrNull } from "../core/clock.ts";
import { rowLockedTransaction, type DomainContext } from "../core/context.ts";
import { badRequest, conflict, notFound } from "../core/errors.ts";
import { getActionView, requireAction, revokeEnforcementAction, toActionView, type ActionRow, type EnforcementActionView } from "./enforcement.ts";
import { toIdentityView } from "../identities/identities.ts";
import { newId } from "../core/ids.ts";
import { assertMayWorkCaseId, isOfWorkableCase, type AccessContext } from "../access/queue-access.ts";
import { userEmails } from "../accounts/users.ts";
import { applyTransition } from "../review/workflow-engine.ts";
import type { AppealDecision, AppealFilter, AppealInbox, AppealItem, AppealStatus, AppealView } from "../views/appeal.ts";
import type { Status } from "../views/workflow.ts";

export type { AppealDecision, AppealFilter, AppealInbox, AppealItem, AppealStatus, AppealView } from "../views/appeal.ts";

export type AppealRow = typeof appeals.$inferSelect;

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
  return rowLockedTransaction(ctx, async () => {
    // The action's row holds its appeals: two appeals filed at once take turns, the second sees the first.
    const action = await requireAction(ctx, { actionId: input.actionId, projectId: input.projectId, lock: true });
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

/**
 * An appeal of the context's organization that the caller may see (its case's queue access), or a
 * 404; a 403 when the blind-review wall hides its case or the account its action is about.
 */
export async function requireAppeal(ctx: AccessContext, appealId: string): Promise<AppealRow> {
  const [found] = await ctx.db
    .select({ appeal: appeals, identityId: enforcementActions.identityId })
    .from(appeals)
    .innerJoin(enforcementActions, eq(enforcementActions.id, appeals.actionId))
    .where(and(eq(appeals.id, appealId), eq(appeals.orgId, ctx.orgId)))
    .limit(1);
  if (!found) throw notFound("Appeal not found");
  await assertMayWorkCaseId(ctx, found.appeal.caseId, "Appeal", found.identityId);
  return found.appeal;
}

/**
 * Writes the decision on a pending appeal (who, when, the note) and closes, through the workflow
 * engine, what the appeal decides: its report (APPEALED, or IN_REVIEW when it was escalated while
 * the appeal waited) with the case's other APPEALED reports and the case; a report decided anew
 * meanwhile (RESOLVED, DISMISSED) keeps that decision (`reportMoved: false`). Then the case the
 * appeal was filed from, when its report left it (escalated into the case open for its target by
 * then) or was decided anew: its reports still APPEALED, or the case alone, close too. Inside the
 * caller's transaction; the caller writes the audit event.
 */
async function recordDecision(
  ctx: DomainContext,
  input: { appeal: AppealRow; action: ActionRow; decision: AppealDecision; note: string | null },
): Promise<{ decided: AppealRow; reportMoved: boolean }> {
  const { appeal, action, decision, note } = input;
  const { actor } = ctx;
  const now = ctx.clock.now();
  const status: AppealStatus = decision === "uphold" ? "upheld" : "overturned";
  const set = { status, decidedByType: actor.type, decidedById: actor.id, decisionNote: note, decidedAt: now };
  await ctx.db.update(appeals).set(set).where(eq(appeals.id, appeal.id));
  const move = { action: decision, appealId: appeal.id, actionId: action.id } as const;
  const reportMoved = appeal.reportId ? (await applyTransition(ctx, { target: { reportId: appeal.reportId }, move, refused: "skip" })).changed : false;
  if (appeal.caseId) await closeWhatStillWaits(ctx, appeal.caseId, move);
  return { decided: { ...appeal, ...set }, reportMoved };
}

/**
 * The appeal's case, when the report the appeal names no longer carries it there: its first
 * report still APPEALED (the engine takes the others and the case along), else the case alone
 * when it is still APPEALED. Nothing when the report's own move already closed them.
 */
async function closeWhatStillWaits(ctx: DomainContext, caseId: string, move: { action: AppealDecision; appealId: string; actionId: string }): Promise<void> {
  const [waiting] = await ctx.db
    .select({ id: reports.id })
    .from(reports)
    .where(and(eq(reports.caseId, caseId), eq(reports.status, "APPEALED")))
    .limit(1);
  if (waiting) {
    await applyTransition(ctx, { target: { reportId: waiting.id }, move, refused: "skip" });
    return;
  }
  const [c] = await ctx.db.select({ status: cases.status }).from(cases).where(eq(cases.id, caseId)).limit(1);
  if (c?.status === "APPEALED") await applyTransition(ctx, { target: { caseId }, move, refused: "skip" });
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
  const { decision } = input;
  const note = input.note ?? null;
  return rowLockedTransaction(ctx, async () => {
    // The action's row first (it holds its appeals), then the appeal as it is under that lock.
    const action = await requireAction(ctx, { actionId: (await requireAppeal(ctx, input.appealId)).actionId, lock: true });
    const appeal = await requireAppeal(ctx, input.appealId);
    if (appeal.status !== "pending") throw conflict(`The appeal was already ${appeal.status}`);
    // Decided first: the revocations below then find no pending appeal to settle.
    const { decided, reportMoved } = await recordDecision(ctx, { appeal, action, decision, note });

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
      // Another action of the report with an appeal of its own still pending (possible for a
      // report escalated back into review, decided anew and appealed again) has that appeal settled too.
      for (const id of toRevoke) {
        revoked.push((await revokeActionSettlingAppeal(ctx, { actionId: id, reason, data: { appealId: appeal.id } })).action);
      }
    }
    await recordAudit(ctx, {
      projectId: action.projectId, action: AUDIT[decision], entityType: "appeal", entityId: appeal.id,
      before: { status: "pending" }, after: { status: decided.status },
      data: { note, actionId: action.id, reportId: appeal.reportId, reportMoved, revokedActionIds: revoked.map((a) => a.id) },
    });
    return { appeal: toAppealView(decided, action.projectId), revoked };
  });
}

/** How the note of an appeal settled by revoking its action begins (the revocation's reason follows). */
export const SETTLED_BY_REVOCATION = "Overturned by revoking the action";

/**
 * Revokes an enforcement action (the revoke route), settling its pending appeal first: the
 * appeal is decided as overturned by whoever revokes, with the note "Overturned by revoking the
 * action" (and the revocation's reason), and its report and case go APPEALED → CLOSED through
 * the workflow engine, as on any overturn. Only the revoked action is revoked: the report's
 * other actions stand (overturning the appeal itself revokes them all). Audit:
 * `APPEAL_OVERTURNED` with `settledByRevocation: true`, then `ENFORCEMENT_ACTION_REVOKED` with
 * the appeal's id. Without a pending appeal this is a plain revocation (`data` goes into its
 * audit event). 409 when the action is already revoked (nothing is settled then).
 */
export function revokeActionSettlingAppeal(
  ctx: DomainContext,
  input: { actionId: string; projectId?: string; reason?: string | null; data?: Record<string, unknown> },
): Promise<{ action: EnforcementActionView; appeal: AppealView | null }> {
  return rowLockedTransaction(ctx, async () => {
    const action = await requireAction(ctx, { actionId: input.actionId, projectId: input.projectId, lock: true });
    if (action.revokedAt !== null) throw conflict("The action is already revoked");
    const [pending] = await ctx.db
      .select()
      .from(appeals)
      .where(and(eq(appeals.actionId, action.id), eq(appeals.status, "pending")))
      .limit(1);
    let settled: AppealView | null = null;
    if (pending) {
      const note = input.reason ? `${SETTLED_BY_REVOCATION}: ${input.reason}` : SETTLED_BY_REVOCATION;
      const { decided, reportMoved } = await recordDecision(ctx, { appeal: pending, action, decision: "overturn", note });
      await recordAudit(ctx, {
        projectId: action.projectId, action: AUDIT.overturn, entityType: "appeal", entityId: pending.id,
        before: { status: "pending" }, after: { status: decided.status },
        data: { note, actionId: action.id, reportId: pending.reportId, reportMoved, revokedActionIds: [action.id], settledByRevocation: true },
      });
      settled = toAppealView(decided, action.projectId);
    }
    const revoked = await revokeEnforcementAction(ctx, {
      actionId: action.id,
      reason: input.reason,
      data: pending ? { ...input.data, appealId: pending.id } : input.data,
    });
    return { action: revoked, appeal: settled };
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
export async function listAppeals(ctx: AccessContext, q: AppealQuery): Promise<{ appeals: AppealView[]; nextCursor: string | null }> {
  const oldestFirst = q.status === "pending";
  const where: SQL[] = [eq(appeals.orgId, ctx.orgId)];
  const visible = await isOfWorkableCase(ctx, "case", appeals.caseId, { whenNull: "kept", account: enforcementActions.identityId });
  if (visible) where.push(visible);
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

export async function getAppeal(ctx: AccessContext, appealId: string): Promise<AppealView> {
  return viewOf(ctx, await requireAppeal(ctx, appealId));
}

/** An action of a project with its appeals (at most 100, newest first): the action's page. */
export async function actionWithAppeals(
  ctx: Pick<DomainContext, "clock"> & AccessContext,
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
  ctx: Pick<DomainContext, "clock"> & AccessContext,
  appealId: string,
): Promise<{ appeal: AppealView; action: EnforcementActionView }> {
  const appeal = await getAppeal(ctx, appealId);
  return { appeal, action: await getActionView(ctx, await requireAction(ctx, { actionId: appeal.actionId })) };
}

// ---------------------------------------------------------------------------------------------
// The dashboard's appeals: the inbox, and the appeals of a case or of an identity.

export interface AppealInboxQuery {
  /** Default: every appeal, newest first. */
  status?: AppealFilter;
  projectId?: string;
  /**
   * The appeals of one case (the case page): filed from it, or against an action on a report
   * that is in it now (escalated out of its appealed case into this one).
   */
  caseId?: string;
  /** The appeals against actions applied to one identity (the identity page). */
  identityId?: string;
  /** `nextCursor` of the previous page. */
  cursor?: string;
  limit: number;
}

const DECIDED: readonly AppealStatus[] = ["upheld", "overturned"];

function statusWhere(filter: AppealFilter): SQL {
  return filter === "decided" ? inArray(appeals.status, [...DECIDED]) : eq(appeals.status, filter);
}

/** The actions taken on the reports that are in a case now (each found through its report: enforcement_report_idx). */
const actionsOnReportsOf = (ctx: Pick<DomainContext, "db">, caseId: string) =>
  ctx.db
    .select({ id: enforcementActions.id })
    .from(enforcementActions)
    .where(inArray(enforcementActions.reportId, ctx.db.select({ id: reports.id }).from(reports).where(eq(reports.caseId, caseId))));

/** A page boundary: the sort key (ms) and the id of the last appeal shown. */
function parseCursor(cursor: string): { at: number; id: string } {
  const m = /^(\d{1,16})_(.{1,64})$/.exec(cursor);
  if (!m) throw badRequest("cursor: pass back the nextCursor of the previous page");
  return { at: Number(m[1]), id: m[2]! };
}

/**
 * Appeals as the dashboard shows them, each with its action, the identity the action applies
 * to, its case and the email of whoever decided it, with the counts of pending and decided
 * appeals (of the project when one is given). Order: pending oldest first (the review order:
 * filed first, answered first); decided (`decided`, `upheld`, `overturned`) by their decision,
 * newest first; unfiltered newest first.
 */
export async function appealsInbox(ctx: Pick<DomainContext, "clock"> & AccessContext, q: AppealInboxQuery): Promise<AppealInbox> {
  const now = ctx.clock.now();
  const byDecision = q.status !== undefined && q.status !== "pending";
  const ascending = q.status === "pending";
  const key = byDecision ? appeals.decidedAt : appeals.createdAt;

  const scope: SQL[] = [eq(appeals.orgId, ctx.orgId)];
  const visible = await isOfWorkableCase(ctx, "case", appeals.caseId, { whenNull: "kept", account: enforcementActions.identityId });
  if (visible) scope.push(visible);
  if (q.projectId) scope.push(eq(enforcementActions.projectId, q.projectId));
  const where: SQL[] = [...scope];
  if (q.status) where.push(statusWhere(q.status));
  if (q.caseId) where.push(or(eq(appeals.caseId, q.caseId), inArray(appeals.actionId, actionsOnReportsOf(ctx, q.caseId)))!);
  if (q.identityId) where.push(eq(enforcementActions.identityId, q.identityId));
  if (q.cursor) {
    const c = parseCursor(q.cursor);
    where.push(
      ascending
        ? or(gt(key, c.at), and(eq(key, c.at), gt(appeals.id, c.id)))!
        : or(lt(key, c.at), and(eq(key, c.at), lt(appeals.id, c.id)))!,
    );
  }
  const order = ascending ? [asc(key), asc(appeals.id)] : [desc(key), desc(appeals.id)];
  const rows = await ctx.db
    .select({
      appeal: appeals,
      action: enforcementActions,
      identity: identities,
      caseId: cases.id,
      caseStatus: cases.status,
      caseContentType: cases.contentType,
      caseContentExternalId: cases.contentExternalId,
    })
    .from(appeals)
    .innerJoin(enforcementActions, eq(enforcementActions.id, appeals.actionId))
    .innerJoin(identities, eq(identities.id, enforcementActions.identityId))
    .leftJoin(cases, eq(cases.id, appeals.caseId))
    .where(and(...where))
    .orderBy(...order)
    .limit(q.limit + 1);
  const page = rows.slice(0, q.limit);

  const emails = await userEmails(ctx, { ids: page.filter((r) => r.appeal.decidedByType === "user").map((r) => r.appeal.decidedById) });
  const items: AppealItem[] = page.map((r) => {
    const i = r.identity;
    const who = toIdentityView(i);
    return {
      appeal: toAppealView(r.appeal, r.action.projectId),
      action: toActionView(r.action, { id: i.id, type: i.type, externalId: i.externalId }, now),
      identity: { id: i.id, type: i.type, externalId: i.externalId, displayName: who.displayName, handleLabel: who.handleLabel },
      case: r.caseId === null ? null : { id: r.caseId, status: r.caseStatus as Status, contentType: r.caseContentType, contentExternalId: r.caseContentExternalId },
      decidedByEmail: r.appeal.decidedByType === "user" && r.appeal.decidedById ? (emails.get(r.appeal.decidedById) ?? null) : null,
    };
  });
  const last = page.at(-1);
  const lastKey = last ? (byDecision ? last.appeal.decidedAt : last.appeal.createdAt) : null;

  const counted = q.projectId
    ? ctx.db
        .select({ status: appeals.status, n: sql<number>`count(*)` })
        .from(appeals)
        .innerJoin(enforcementActions, eq(enforcementActions.id, appeals.actionId))
        .where(and(...scope))
        .groupBy(appeals.status)
    : ctx.db.select({ status: appeals.status, n: sql<number>`count(*)` }).from(appeals).where(and(...scope)).groupBy(appeals.status);
  const counts = { pending: 0, decided: 0 };
  for (const c of await counted) {
    if (c.status === "pending") counts.pending += Number(c.n);
    else counts.decided += Number(c.n);
  }
  return {
    items,
    nextCursor: rows.length > q.limit && last && lastKey !== null ? `${lastKey}_${last.appeal.id}` : null,
    counts,
  };
}
