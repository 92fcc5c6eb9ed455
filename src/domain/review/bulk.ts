/**
 * Decisions on many cases at once (the queue's bulk bar), and undoing one for a while after.
 *
 * `decideInBulk` applies one decision (resolve, dismiss, escalate) to each case, each through the
 * workflow engine like a decision on one case, in one transaction: a case that cannot take it
 * (decided meanwhile, nothing open, claimed by someone else when the caller chose to skip those)
 * is skipped or reported as failed without stopping the others. It keeps what every report and
 * case it changed looked like before (`bulk_decisions.items`), so that `undoBulkDecision` can put
 * them back, through the engine's `undo` move, until `undoUntil` (UNDO_WINDOW_MS).
 *
 * Undo restores only what is still as the bulk decision left it: a case decided or reopened since
 * (or whose target has a newer open case) is left alone and counted as not restored.
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import { forUpdate } from "../../db/prepared.ts";
import { lockCase } from "../cases/case-lock.ts";
import { bulkDecisions, cases, reports } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { iso } from "../core/clock.ts";
import { rowLockedTransaction, type DomainContext } from "../core/context.ts";
import { badRequest, conflict, DomainError, forbidden, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { userEmails } from "../accounts/users.ts";
import { findOpenCase } from "../cases/open-case.ts";
import { caseRefusal } from "../access/queue-access.ts";
import { holderOf } from "../cases/claims.ts";
import { ACTION_RESOLUTION_CODES, type DismissalReason, type ResolutionCode, type Team } from "../views/report.ts";
import { asStatus, isOpenStatus, OPEN_STATUSES, type Status } from "../views/workflow.ts";
import { applyTransition, type CaseRecord, type ReportRecord } from "./workflow-engine.ts";

/** How long a bulk decision can be undone. */
export const UNDO_WINDOW_MS = 60_000;
/** At most this many cases in one bulk decision. */
export const MAX_BULK_CASES = 200;

export type BulkDecision =
  | { action: "resolve"; code?: ResolutionCode; note?: string | null; followsActionId?: string }
  | { action: "dismiss"; reason: DismissalReason; note?: string | null }
  | { action: "escalate"; team: Team; note?: string | null };

/** Cases claimed by another moderator: left as they are, or taken over. */
export type OthersClaims = "skip" | "take_over";

export interface BulkOutcome {
  /** Null when nothing was decided (nothing to undo). */
  bulkId: string | null;
  undoUntil: string | null;
  decided: string[];
  skipped: { caseId: string; reason: string }[];
}

/** What one case looked like before the bulk decision, and what the decision left. */
interface BulkItem {
  caseId: string;
  caseFrom: Status;
  caseTo: Status;
  caseRecord: CaseRecord;
  reports: { id: string; from: Status; to: Status; record: ReportRecord }[];
}

const CASE_RECORD_COLUMNS = ["escalatedTeam", "escalatedAt", "decision", "decisionCode", "decidedAt", "decidedByType", "decidedById"] as const;
const caseRecordOf = (c: typeof cases.$inferSelect): CaseRecord => Object.fromEntries(CASE_RECORD_COLUMNS.map((k) => [k, c[k]])) as CaseRecord;

/** Applies `decision` to each case (of the context's organization), each through the workflow engine. */
export function decideInBulk(
  ctx: DomainContext,
  input: { caseIds: string[]; decision: BulkDecision; othersClaims: OthersClaims },
): Promise<BulkOutcome> {
  const caseIds = [...new Set(input.caseIds)];
  const { decision } = input;
  // These codes say an action was taken: resolving many cases with one, without the action,
  // would record what did not happen. Each case is resolved with its action (reports.resolve).
  if (decision.action === "resolve" && decision.code && ACTION_RESOLUTION_CODES.includes(decision.code)) {
    return Promise.reject(
      badRequest(`decision.code: ${decision.code} takes an enforcement action per case; resolve each case with its action (reports.resolve with action)`),
    );
  }
  return applyBulkDecision(ctx, { ...input, caseIds });
}

/**
 * decideInBulk without its refusal of the codes that carry an action, for a caller that took the
 * action itself: the sweep (src/domain/enforcement/sweep.ts) resolves a subject's open cases with the one
 * suspension or ban it follows. `audit` joins the data of the BULK_DECISION_MADE event.
 */
export function applyBulkDecision(
  ctx: DomainContext,
  input: { caseIds: string[]; decision: BulkDecision; othersClaims: OthersClaims },
  audit: Record<string, unknown> = {},
): Promise<BulkOutcome> {
  const caseIds = [...new Set(input.caseIds)];
  const { decision } = input;
  return rowLockedTransaction(ctx, async () => {
    const now = ctx.clock.now();
    // The cases' rows first, in the order of their ids (two bulk decisions sweeping the same
    // cases take turns, never each holding one the other waits for), then decided as they are.
    const rows = await forUpdate(ctx.db.select().from(cases).where(and(eq(cases.orgId, ctx.orgId), inArray(cases.id, caseIds))).orderBy(asc(cases.id)));
    const byId = new Map(rows.map((c) => [c.id, c] as const));
    const holders = await userEmails(ctx, { ids: rows.map((c) => c.assigneeId) });
    const items: BulkItem[] = [];
    const skipped: BulkOutcome["skipped"] = [];
    for (const caseId of caseIds) {
      const c = byId.get(caseId);
      // A case of a queue the caller may not work is not found, like one that does not exist; one
      // the blind-review wall hides is skipped saying why (before its status, which would tell).
      const refused = c ? await caseRefusal(ctx, c) : notFound("Case not found");
      if (refused || !c) {
        skipped.push({ caseId, reason: refused?.kind === "forbidden" ? refused.message : "not found" });
        continue;
      }
      if (!isOpenStatus(c.status)) {
        skipped.push({ caseId, reason: `the case is ${c.status}` });
        continue;
      }
      // A review-mode claim that lapsed holds nothing (src/domain/cases/claims.ts).
      const holder = holderOf(c, ctx.clock.now());
      const claimedByOther = ctx.actor.type === "user" && holder !== null && holder !== ctx.actor.id;
      if (claimedByOther && input.othersClaims === "skip") {
        skipped.push({ caseId, reason: `assigned to ${holders.get(holder) ?? "another user"}` });
        continue;
      }
      const open = await ctx.db
        .select()
        .from(reports)
        .where(and(eq(reports.caseId, c.id), inArray(reports.status, [...OPEN_STATUSES])))
        .orderBy(reports.createdUs);
      const first = open[0];
      if (!first) {
        skipped.push({ caseId, reason: "no open report" });
        continue;
      }
      try {
        // A savepoint per case: one case refused (decided by someone else a moment ago) leaves the others decided.
        const t = await rowLockedTransaction(ctx, () =>
          applyTransition(ctx, {
            target: { reportId: first.id },
            move: decision.action === "resolve" ? { action: "resolve", code: decision.code, note: decision.note, ...(decision.followsActionId ? { followsActionId: decision.followsActionId } : {}) } : decision.action === "dismiss" ? { action: "dismiss", reason: decision.reason, note: decision.note } : { action: "escalate", team: decision.team, note: decision.note },
            claim: input.othersClaims === "take_over" ? "take_over" : "respect",
          }),
        );
        const changed = [t.report, ...t.fellows].filter((r) => r !== null);
        const before = new Map(open.map((r) => [r.id, r] as const));
        const [after] = await ctx.db.select({ status: cases.status }).from(cases).where(eq(cases.id, c.id)).limit(1);
        items.push({
          caseId: c.id,
          caseFrom: asStatus(c.status),
          caseTo: asStatus(after?.status ?? c.status),
          caseRecord: caseRecordOf(c),
          reports: changed.map((r) => {
            const b = before.get(r.id);
            return { id: r.id, from: r.from, to: r.to, record: { escalation: b?.escalation ?? null, resolution: b?.resolution ?? null, dismissal: b?.dismissal ?? null } };
          }),
        });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        skipped.push({ caseId, reason: err.message });
      }
    }
    if (!items.length) return { bulkId: null, undoUntil: null, decided: [], skipped };
    const id = newId();
    const undoUntil = now + UNDO_WINDOW_MS;
    await ctx.db.insert(bulkDecisions).values({
      id, orgId: ctx.orgId, actorType: ctx.actor.type, actorId: ctx.actor.id, action: decision.action, items: JSON.stringify(items), createdAt: now, undoUntil, undoneAt: null,
    });
    await recordAudit(ctx, {
      projectId: null, action: "BULK_DECISION_MADE", entityType: "bulk_decision", entityId: id,
      data: { action: decision.action, caseIds: items.map((i) => i.caseId), skipped: skipped.length, undoUntil: iso(undoUntil), ...audit },
    });
    return { bulkId: id, undoUntil: iso(undoUntil), decided: items.map((i) => i.caseId), skipped };
  });
}

export interface UndoOutcome {
  restored: string[];
  notRestored: { caseId: string; reason: string }[];
}

/**
 * Puts back the cases of a bulk decision (the caller's own, within its window): each case and
 * each report it changed returns to its status and records from before, through the workflow
 * engine's `undo` move. 409 once undone or after the window; 403 for someone else's decision.
 */
export function undoBulkDecision(ctx: DomainContext, input: { bulkId: string }): Promise<UndoOutcome> {
  return rowLockedTransaction(ctx, async () => {
    // Its row held: an undo sent twice at once is undone once.
    const [row] = await forUpdate(ctx.db.select().from(bulkDecisions).where(and(eq(bulkDecisions.id, input.bulkId), eq(bulkDecisions.orgId, ctx.orgId))));
    if (!row) throw notFound("Bulk decision not found");
    if (row.actorType !== ctx.actor.type || row.actorId !== ctx.actor.id) throw forbidden("Only whoever made a bulk decision can undo it");
    if (row.undoneAt !== null) throw conflict("This bulk decision was already undone");
    const now = ctx.clock.now();
    if (now > row.undoUntil) throw conflict(`Too late to undo: the window closed at ${iso(row.undoUntil)}`);
    const items = JSON.parse(row.items) as BulkItem[];
    const restored: string[] = [];
    const notRestored: UndoOutcome["notRestored"] = [];
    for (const item of items) {
      const reason = await whyNotRestorable(ctx, item);
      if (reason) {
        notRestored.push({ caseId: item.caseId, reason });
        continue;
      }
      for (const r of item.reports) {
        await applyTransition(ctx, { target: { reportId: r.id }, move: { action: "undo", to: r.from, bulkId: row.id, record: r.record } });
      }
      await applyTransition(ctx, { target: { caseId: item.caseId }, move: { action: "undo", to: item.caseFrom, bulkId: row.id, caseRecord: item.caseRecord } });
      restored.push(item.caseId);
    }
    await ctx.db.update(bulkDecisions).set({ undoneAt: now }).where(eq(bulkDecisions.id, row.id));
    await recordAudit(ctx, {
      projectId: null, action: "BULK_DECISION_UNDONE", entityType: "bulk_decision", entityId: row.id,
      data: { action: row.action, restoredCaseIds: restored, notRestored: notRestored.length },
    });
    return { restored, notRestored };
  });
}

/** Why a case of a bulk decision cannot be put back now, or null when it can. */
async function whyNotRestorable(ctx: DomainContext, item: BulkItem): Promise<string | null> {
  const c = await lockCase(ctx, item.caseId);
  if (!c) return "the case is gone";
  if (c.status !== item.caseTo) return `the case is ${c.status} now`;
  const ids = item.reports.map((r) => r.id);
  const now = ids.length ? await ctx.db.select({ id: reports.id, status: reports.status, caseId: reports.caseId }).from(reports).where(inArray(reports.id, ids)) : [];
  const current = new Map(now.map((r) => [r.id, r] as const));
  for (const r of item.reports) {
    const cur = current.get(r.id);
    if (!cur || cur.status !== r.to || cur.caseId !== item.caseId) return "its reports changed since";
  }
  // Reopening a decided case: not while a newer case is open for the same target.
  if (!isOpenStatus(c.status) && isOpenStatus(item.caseFrom)) {
    const open = await findOpenCase(ctx, c);
    if (open && open.id !== c.id) return "a newer case is open for the same target";
  }
  return null;
}
