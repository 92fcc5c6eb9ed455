/**
 * Review mode (issue 27): a moderator works a queue case after case, the way Coop's manual
 * review tool and Ozone's queue do. "Next" takes the queue's first case in its order (the order
 * the queue page shows, `queueOrder`) that nobody holds, claims it for the moderator for
 * REVIEW_CLAIM_MS and answers it; after a decision, or a skip with a reason, the dashboard asks
 * for the next one, handing back the case it leaves (released if still open and still the
 * moderator's review claim: an escalation leaves it to its team).
 *
 * Two moderators never get the same case: the take is one row-locked statement pair in one
 * transaction. On PostgreSQL the candidate is chosen `FOR UPDATE SKIP LOCKED` (`store.skipLocked`),
 * so a concurrent take, and a decision holding the case's row, make it pass to the next case
 * instead of waiting; the row is then written while locked, and the write checks again that
 * nobody holds it. On SQLite transactions run one at a time (the single writer).
 *
 * Which cases: open, not escalated (an escalated case waits for its team), in the queue (or, with
 * no queue named, in every queue the caller may work), held by nobody (a lapsed review claim is
 * nobody's: src/domain/cases/claims.ts), and not skipped by this moderator in this review session
 * within SKIP_HOLD_MS. A skip is an audit event (CASE_SKIPPED, with the reason and the session),
 * and that event is what keeps the case from being offered again: no table of its own.
 */
import { and, eq, inArray, isNull, notInArray, sql, gte } from "drizzle-orm";
import { auditEvents, cases } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { iso } from "../core/clock.ts";
import { rowLockedTransaction, type DomainContext } from "../core/context.ts";
import { badRequest } from "../core/errors.ts";
import { requireCase, toCaseView, type CaseRow, type CaseView } from "../cases/cases.ts";
import { isUnclaimed } from "../cases/claims.ts";
import { queueOrder, queueScope } from "./queues.ts";

/** How long a claim taken in review mode holds (then another moderator's review may take the case). */
export const REVIEW_CLAIM_MS = 15 * 60_000;
/** How long a case a moderator skipped is not offered to them again in the same review session. */
export const SKIP_HOLD_MS = 30 * 60_000;
/** A skip's reason, as the moderator wrote or chose it. */
export const SKIP_REASON_MAX = 500;

export interface ReviewTurn {
  /** The case now claimed for the caller, or null: nothing left to review in the queue. */
  case: CaseView | null;
  /** Until when the claim holds (null with no case). */
  claimUntil: string | null;
  /** Cases still waiting after this one (held by nobody, not skipped in this session). */
  waiting: number;
}

export interface ReviewInput {
  /** The queue reviewed (undefined: every queue the caller may work, in the default order). */
  queueId?: string;
  /** The review session: the dashboard makes one when "Start reviewing" is pressed. */
  sessionId: string;
}

function reviewer(ctx: DomainContext): string {
  if (ctx.actor.type !== "user" || !ctx.actor.id) throw badRequest("Review mode is for dashboard users: an API key holds no cases");
  return ctx.actor.id;
}

/** Releases the caller's review claim on a case it leaves, if the case is still open and still that claim. */
async function leave(ctx: DomainContext, caseId: string, why: "next" | "skipped" | "stopped", now: number): Promise<CaseRow> {
  const c = await requireCase(ctx, caseId, undefined, { lock: true });
  const mine = c.assigneeId === ctx.actor.id && c.claimExpiresAt !== null;
  if (mine && c.isOpen === 1) {
    await ctx.db.update(cases).set({ assigneeId: null, assignedAt: null, claimExpiresAt: null, updatedAt: now }).where(eq(cases.id, c.id));
    await recordAudit(ctx, {
      projectId: c.projectId, action: "CASE_UNASSIGNED", entityType: "case", entityId: c.id,
      before: { assigneeId: c.assigneeId }, after: { assigneeId: null }, data: { review: true, why },
    });
  }
  return c;
}

/** The cases this moderator skipped in this review session within SKIP_HOLD_MS (their audit events). */
async function skippedInSession(ctx: DomainContext, me: string, sessionId: string, now: number): Promise<string[]> {
  const rows = await ctx.db
    .select({ entityId: auditEvents.entityId, data: auditEvents.data })
    .from(auditEvents)
    .where(and(eq(auditEvents.orgId, ctx.orgId), eq(auditEvents.action, "CASE_SKIPPED"), eq(auditEvents.actorId, me), gte(auditEvents.createdAt, now - SKIP_HOLD_MS)));
  const out = new Set<string>();
  for (const r of rows) {
    try {
      if ((JSON.parse(r.data ?? "{}") as { sessionId?: unknown }).sessionId === sessionId) out.add(r.entityId);
    } catch {
      // a malformed event skips nothing
    }
  }
  return [...out];
}

/** Takes the next case of the queue for the caller (see the module's comment). */
async function take(ctx: DomainContext, input: ReviewInput, me: string, now: number, left?: string): Promise<ReviewTurn> {
  const scope = await queueScope(ctx, input.queueId);
  // The case just left is not offered straight back (undecided, it waits for someone else).
  const skipped = [...(await skippedInSession(ctx, me, input.sessionId, now)), ...(left ? [left] : [])];
  const waiting = and(
    eq(cases.orgId, ctx.orgId),
    eq(cases.isOpen, 1),
    isNull(cases.escalatedTeam),
    scope.where,
    isUnclaimed(now),
    skipped.length ? notInArray(cases.id, skipped) : undefined,
  );
  const order = queueOrder(scope.ordering);
  // On PostgreSQL, a row another transaction locked is passed over; one whose lock ends as the
  // statement meets it is read again and may no longer be waiting, leaving the statement empty
  // though others wait: then it runs again (a few times at most, each time past a taken case).
  for (let attempt = 0; attempt < 5; attempt++) {
    const first = ctx.db.select({ id: cases.id }).from(cases).where(waiting).orderBy(...order).limit(1);
    const [row] = await ctx.db.select().from(cases).where(inArray(cases.id, ctx.store.skipLocked(first)));
    if (!row) {
      const [any] = await ctx.db.select({ id: cases.id }).from(cases).where(waiting).limit(1);
      if (any) continue;
      return { case: null, claimUntil: null, waiting: 0 };
    }
    const until = now + REVIEW_CLAIM_MS;
    const taken = await ctx.db
      .update(cases)
      .set({ assigneeId: me, assignedAt: now, claimExpiresAt: until, updatedAt: now })
      .where(and(eq(cases.id, row.id), isUnclaimed(now)))
      .returning({ id: cases.id });
    if (!taken.length) continue;
    await recordAudit(ctx, {
      projectId: row.projectId, action: "CASE_ASSIGNED", entityType: "case", entityId: row.id,
      before: { assigneeId: row.assigneeId }, after: { assigneeId: me }, data: { review: true, claimUntil: iso(until), sessionId: input.sessionId },
    });
    const [left] = await ctx.db.select({ n: sql<number>`count(*)` }).from(cases).where(waiting);
    return {
      case: toCaseView({ ...row, assigneeId: me, assignedAt: now, claimExpiresAt: until, updatedAt: now }, now),
      claimUntil: iso(until),
      waiting: Number(left?.n ?? 0),
    };
  }
  return { case: null, claimUntil: null, waiting: 0 };
}

/**
 * The next case of the queue for the caller, claimed; `leaving` is the case the moderator was on
 * (decided, or escalated and so left to its team): its review claim is released if it still holds.
 */
export function nextCase(ctx: DomainContext, input: ReviewInput & { leaving?: string }): Promise<ReviewTurn> {
  const me = reviewer(ctx);
  return rowLockedTransaction(ctx, async () => {
    const now = ctx.clock.now();
    if (input.leaving) await leave(ctx, input.leaving, "next", now);
    return take(ctx, input, me, now, input.leaving);
  });
}

/**
 * Skips a case with a reason: recorded (CASE_SKIPPED), the caller's review claim on it released,
 * the case not offered to the caller again in this session for SKIP_HOLD_MS; answers the next case.
 */
export function skipCase(ctx: DomainContext, input: ReviewInput & { caseId: string; reason: string }): Promise<ReviewTurn> {
  const me = reviewer(ctx);
  return rowLockedTransaction(ctx, async () => {
    const now = ctx.clock.now();
    const c = await leave(ctx, input.caseId, "skipped", now);
    await recordAudit(ctx, {
      projectId: c.projectId, action: "CASE_SKIPPED", entityType: "case", entityId: c.id,
      data: { reason: input.reason, sessionId: input.sessionId, queueId: input.queueId ?? null },
    });
    return take(ctx, input, me, now, c.id);
  });
}

/** Leaves review mode: the caller's review claim on the case it was on is released (if it still holds). */
export function stopReviewing(ctx: DomainContext, input: { caseId: string }): Promise<{ ok: true }> {
  reviewer(ctx);
  return rowLockedTransaction(ctx, async () => {
    await leave(ctx, input.caseId, "stopped", ctx.clock.now());
    return { ok: true as const };
  });
}
