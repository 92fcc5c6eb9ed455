/**
 * The workflow engine: the one function through which a report or a case changes status.
 *
 * `applyTransition(ctx, { target, move })` checks the move against the table (`MOVES` in
 * workflow.ts, which stays a pure vocabulary the dashboard and the storage layer import), then,
 * in the caller's transaction: writes the statuses (the report, the other reports of its case
 * that move with it, the case), one audit event per report and one per case moved, and runs the
 * action's further effects (webhook events, jobs). An effect that enqueues a job (a webhook
 * delivery is one) wakes the job workers once the transaction commits (`enqueueJob` tells the
 * store), so no caller has to.
 *
 * What each action does besides its status is declared once, in EFFECTS below. To make
 * something happen "when a report is decided", add it to ON_DECIDED; for one action only, to
 * that action's `then`. docs/workflow.md describes the engine for people.
 */
import { and, asc, eq, inArray, ne } from "drizzle-orm";
import { attachments, caseMedia, cases, mediaMatches, reports, users } from "../../db/schema.ts";
import { recordAudit, type Actor, type AuditAction } from "../core/audit.ts";
import { iso } from "../core/clock.ts";
import { TransactionConflict } from "../../db/store.ts";
import { lockCase, lockReportAndCase } from "../cases/case-lock.ts";
import { ROW_LOCKED, transaction, type DomainContext } from "../core/context.ts";
import { conflict, notFound } from "../core/errors.ts";
import { findOpenCase } from "../cases/open-case.ts";
import { caseRefusal } from "../access/queue-access.ts";
import { recountCaseReporters, TALLIED_STATUSES } from "../identities/reporter-tally.ts";
import { enqueueReportDecided } from "./report-outcomes.ts";
import { addDecisionStrike, removeCaseStrikes, removeUndoneStrikes } from "../strikes/strikes.ts";
import type { Severity } from "../cases/severity.ts";
import { CLAIMED_BY } from "../views/case.ts";
import { holderOf } from "../cases/claims.ts";
import { dropUndoneSamples, sampleDecision } from "./quality-sampling.ts";
import type { ActionKind } from "../views/enforcement.ts";
import type { Team } from "../views/report.ts";
import { asStatus, isOpenStatus, nextStatus, OPEN_STATUSES, type Status, type WorkflowAction } from "../views/workflow.ts";
import { slicer } from "../plumbing/event-loop.ts";

type ReportRow = typeof reports.$inferSelect;
type CaseRow = typeof cases.$inferSelect;

/** The appeal an appeal, uphold or overturn move comes from. */
interface AppealRef {
  appealId: string;
  actionId: string;
}

/** What each action carries: recorded on the report (decisions) and in its audit events. */
export interface ActionData {
  triage: { note?: string | null };
  /** What the AI found (for the audit event). */
  enrich: { severity?: Severity; confidence?: number };
  escalate: { team: Team; note?: string | null };
  /**
   * `followsActionId`: the resolution follows an action already taken on another case (a sweep,
   * src/domain/enforcement/sweep.ts), so it adds no strike of its own (that decision struck already).
   * `actionKind`: the kind of enforcement action applied with it (resolveReportWithAction), which
   * a queue's always-sample condition reads (quality review).
   */
  resolve: { code?: string | null; note?: string | null; followsActionId?: string; actionKind?: ActionKind };
  /** `mutedReporter`: the system dismissing a muted reporter's report on intake (src/domain/identities/reporters.ts). */
  dismiss: { reason: string; note?: string | null; mutedReporter?: true };
  appeal: AppealRef;
  uphold: AppealRef;
  overturn: AppealRef;
  close: { note?: string | null };
  /**
   * A bulk decision undone (src/domain/review/bulk.ts): back to status `to`, with the decision records
   * the report (`record`) or the case (`caseRecord`) had before.
   */
  undo: { to: Status; bulkId: string; record?: ReportRecord; caseRecord?: CaseRecord };
}

/** The decision records of a report, as stored (JSON text). */
export type ReportRecord = Partial<Pick<ReportRow, "escalation" | "resolution" | "dismissal">>;
/** The decision columns of a case. */
export type CaseRecord = Partial<Pick<CaseRow, "escalatedTeam" | "escalatedAt" | "decision" | "decisionCode" | "decidedAt" | "decidedByType" | "decidedById">>;

/** One action of the table with its data: `{ action: "resolve", code, note }`. */
export type Move<A extends WorkflowAction = WorkflowAction> = { [K in A]: { action: K } & ActionData[K] }[A];

/** What a transition applies to: a report (and through it its case), or a case alone. */
export type Target = { reportId: string } | { caseId: string };

export interface StatusChange {
  id: string;
  projectId: string;
  from: Status;
  to: Status;
}
export type ReportChange = StatusChange & { caseId: string };

/** What a transition did; effects receive it. */
export interface Transition<A extends WorkflowAction = WorkflowAction> {
  move: Move<A>;
  /** The time of the change (ms since the epoch). */
  at: number;
  /** False only when a `refused: "skip"` transition was not allowed (or its target is gone): nothing was written. */
  allowed: boolean;
  /** Whether the target's status changed (an escalation of a RESOLVED report is recorded without a move). */
  changed: boolean;
  /**
   * Whether the move took effect, status changed or not (an escalation of an IN_REVIEW report
   * is applied; one of a RESOLVED report is only recorded).
   */
  applied: boolean;
  /** The report acted on (its status may be unchanged, see `changed`); null for a case target. */
  report: ReportChange | null;
  /** The other reports of its case that moved with it. */
  fellows: ReportChange[];
  /** The case, when its status changed. */
  case: StatusChange | null;
  /**
   * A silent move (TransitionInput.silent): nobody outside hears of it, so effects announce
   * nothing (announceReportDecided checks it; an effect of its own that tells the platform must too).
   */
  silent: boolean;
}

/** A further effect of an action, run in the transition's transaction after the status writes. */
export type Effect<A extends WorkflowAction = WorkflowAction> = (ctx: DomainContext, t: Transition<A>) => Promise<void>;

/** Every report a transition moved (the target first). */
export const reportsMoved = (t: Transition): ReportChange[] => [t.report, ...t.fellows].filter((r): r is ReportChange => r !== null && r.from !== r.to);

/**
 * An applied escalation marks its case as escalated to the team (the queue's team views) and
 * records the escalation once on the case (`CASE_ESCALATED`: the overview counts these, one per
 * escalation however many reports moved with it).
 */
const markCaseEscalated: Effect<"escalate"> = async (ctx, t) => {
  if (!t.applied || !t.report) return;
  await ctx.db.update(cases).set({ escalatedTeam: t.move.team, escalatedAt: t.at }).where(eq(cases.id, t.report.caseId));
  await recordAudit(ctx, {
    projectId: t.report.projectId, action: "CASE_ESCALATED",
    entityType: "case", entityId: t.report.caseId, data: { team: t.move.team, note: t.move.note ?? null, reportId: t.report.id },
  });
};

/**
 * `report.decided`, one event per report the decision moved (src/domain/review/report-outcomes.ts
 * builds them); none for a silent move.
 */
const announceReportDecided: Effect = async (ctx, t) => {
  if (!t.silent) await enqueueReportDecided(ctx, { moved: reportsMoved(t).map((r) => r.id), action: t.move.action, at: t.at });
};

/**
 * Strikes (src/domain/strikes/strikes.ts): a resolution whose code the project's strike
 * policy names adds a strike to the case's subject (and may reach a ladder step); an overturned
 * appeal removes the case's strike. A sweep's resolutions follow an action already taken and add none.
 */
const countStrikes: Effect = async (ctx, t) => {
  const moved = reportsMoved(t);
  if (!t.report || !t.applied) return;
  const move = t.move as Move;
  if (move.action === "resolve" && moved.length && !move.followsActionId) {
    await addDecisionStrike(ctx, { projectId: t.report.projectId, caseId: t.report.caseId, reportId: t.report.id, code: move.code ?? null, decidedReportIds: moved.map((r) => r.id), at: t.at });
  } else if (move.action === "overturn") {
    await removeCaseStrikes(ctx, { caseId: t.report.caseId, at: t.at });
  }
};

/** Undoing a bulk decision takes back the strikes it added to each case it puts back. */
const takeBackStrikes: Effect<"undo"> = async (ctx, t) => {
  if (t.case && !t.report) await removeUndoneStrikes(ctx, { caseId: t.case.id, bulkId: t.move.bulkId, at: t.at });
};

/**
 * Quality review (src/domain/review/quality-sampling.ts): a moderator's resolution or dismissal
 * that decides the case may be sampled for a blind second review, by its queue's settings. Not a
 * sweep's resolution (it follows a decision on another case), nor a muted reporter's dismissal.
 */
const sampleForQualityReview: Effect = async (ctx, t) => {
  const move = t.move as Move;
  if (!t.case || isOpenStatus(t.case.to) || !isOpenStatus(t.case.from)) return;
  if (move.action === "resolve" && !move.followsActionId) {
    await sampleDecision(ctx, { caseId: t.case.id, action: "resolve", code: move.code ?? null, actionKind: move.actionKind ?? null, at: t.at });
  } else if (move.action === "dismiss" && !move.mutedReporter) {
    await sampleDecision(ctx, { caseId: t.case.id, action: "dismiss", code: move.reason, actionKind: null, at: t.at });
  }
};

/** An undone decision's second review goes with it while nobody did it yet. */
const dropUndoneReview: Effect<"undo"> = async (ctx, t) => {
  if (t.case && !t.report) await dropUndoneSamples(ctx, { caseId: t.case.id });
};

/**
 * What follows every decision on a report: resolve and dismiss, and uphold and overturn (the
 * decision on its appeal). The one place for "when a report is decided, do X": every route,
 * job and domain function that decides a report reaches it through applyTransition.
 */
const ON_DECIDED: readonly Effect[] = [
  // `report.decided` (src/domain/review/report-outcomes.ts), one per report the decision moved; none for a silent move.
  announceReportDecided,
  countStrikes,
  // Quality review: a moderator's decision may be sampled for a blind second review (quality-sampling.ts).
  sampleForQualityReview,
];

/** How the table's move of one report spreads to its case. */
interface Effects<A extends WorkflowAction> {
  /** The audit action of each report the move is applied to. */
  audit: AuditAction;
  /** The `data` of that audit event. */
  auditData: (move: Move<A>, r: { caseId: string; applied: boolean }) => Record<string, unknown>;
  /** Columns written on each report beside its status: the record of a decision. */
  record?: (move: Move<A>, stamp: Stamp) => Partial<typeof reports.$inferInsert>;
  /**
   * Which other reports of the case move with the report (each one only as the table allows):
   * "open" its open ones, "same-status" those in the report's status, "appealed" its APPEALED
   * ones (the reports an appeal decides, whatever the status of the report it names), "none".
   */
  fellows: FellowsRule;
  /**
   * The case: "follows" takes the report's new status; "table" moves as the table allows from
   * its own, but never out of the open statuses while a report of it is still open (an
   * escalated appeal's decision leaves the case in review when new reports joined it); "none"
   * leaves it (undo: the case is restored by a move of its own).
   */
  case: "follows" | "table" | "none";
  /** The 409 message when the table refuses the move from `status`. */
  refusal: (status: Status, entity: "Report" | "Case") => string;
  /** Further effects (webhook events, jobs), run after the status writes. */
  then: readonly Effect<A>[];
}

type FellowsRule = "open" | "same-status" | "appealed" | "none";

/** Who decided and when, written into a decision's record. */
interface Stamp {
  actor: Actor;
  now: number;
  /** Whether the status moved (an escalation of a RESOLVED report is recorded, not applied). */
  applied: boolean;
}
const stamped = (note: string | null | undefined, s: Stamp) => ({ note: note ?? null, at: iso(s.now), by: s.actor });

/** The audit data of a moderator's decision: what was decided, whether it moved the report, and the case. */
const decisionAudit = (move: Move, r: { caseId: string; applied: boolean }) => ({ ...move, applied: r.applied, caseId: r.caseId });
const appealAudit = (move: Move<"appeal" | "uphold" | "overturn">, r: { caseId: string }) => ({ appealId: move.appealId, actionId: move.actionId, caseId: r.caseId });
const refused = (what: string) => (status: Status, entity: "Report" | "Case") => `${entity} is ${status}: ${what}`;

const EFFECTS: { [A in WorkflowAction]: Effects<A> } = {
  triage: {
    audit: "REPORT_TRIAGED",
    auditData: decisionAudit,
    fellows: "open",
    case: "follows",
    refusal: refused("only OPEN reports can be triaged"),
    then: [],
  },
  enrich: {
    audit: "REPORT_STATUS_CHANGED",
    auditData: (m) => ({ action: m.action, severity: m.severity, confidence: m.confidence }),
    // Only the analyzed report moves; its case goes to IN_REVIEW if it is still OPEN.
    fellows: "none",
    case: "table",
    refusal: refused("only OPEN reports move to IN_REVIEW on enrichment"),
    then: [],
  },
  escalate: {
    audit: "REPORT_ESCALATED",
    auditData: decisionAudit,
    record: (m, s) => ({ escalation: JSON.stringify({ team: m.team, applied: s.applied, ...stamped(m.note, s) }) }),
    fellows: "open",
    case: "follows",
    refusal: refused("not allowed"), // from any status (a no-op on RESOLVED): never refused
    then: [markCaseEscalated],
  },
  resolve: {
    audit: "REPORT_RESOLVED",
    auditData: decisionAudit,
    record: (m, s) => ({ resolution: JSON.stringify({ code: m.code ?? null, ...stamped(m.note, s) }) }),
    fellows: "open",
    case: "follows",
    refusal: refused("only OPEN, TRIAGED or IN_REVIEW reports can be resolved"),
    then: ON_DECIDED,
  },
  dismiss: {
    audit: "REPORT_DISMISSED",
    auditData: decisionAudit,
    record: (m, s) => ({ dismissal: JSON.stringify({ reason: m.reason, ...stamped(m.note, s), ...(m.mutedReporter ? { mutedReporter: true } : {}) }) }),
    fellows: "open",
    case: "follows",
    refusal: refused("only OPEN, TRIAGED or IN_REVIEW reports can be dismissed"),
    then: ON_DECIDED,
  },
  appeal: {
    audit: "REPORT_APPEALED",
    auditData: appealAudit,
    fellows: "same-status",
    case: "table",
    refusal: (status) => `The action's report is ${status}: only an action whose report is RESOLVED can be appealed`,
    then: [],
  },
  // From APPEALED, or IN_REVIEW (escalated while the appeal waited): the case's APPEALED reports
  // are the appeal's too, whichever status the named report is in.
  uphold: {
    audit: "REPORT_UPHELD",
    auditData: appealAudit,
    fellows: "appealed",
    case: "table",
    refusal: refused("only APPEALED reports, or IN_REVIEW ones escalated while their appeal waits, can be upheld"),
    then: ON_DECIDED,
  },
  overturn: {
    audit: "REPORT_OVERTURNED",
    auditData: appealAudit,
    fellows: "appealed",
    case: "table",
    refusal: refused("only APPEALED reports, or IN_REVIEW ones escalated while their appeal waits, can be overturned"),
    then: ON_DECIDED,
  },
  // No route closes yet (archiving is planned); the table has the move, so the engine has its effects.
  close: {
    audit: "REPORT_CLOSED",
    auditData: decisionAudit,
    fellows: "same-status",
    case: "table",
    refusal: refused("only RESOLVED or DISMISSED reports can be closed"),
    then: [],
  },
  // Each report and case of a bulk decision is restored by a move of its own (src/domain/review/bulk.ts).
  undo: {
    audit: "REPORT_DECISION_UNDONE",
    auditData: (m, r) => ({ bulkId: m.bulkId, to: m.to, caseId: r.caseId }),
    record: (m) => ({ ...m.record }),
    fellows: "none",
    case: "none",
    refusal: refused("only a report its bulk decision left RESOLVED, DISMISSED or IN_REVIEW can be restored"),
    then: [takeBackStrikes, dropUndoneReview],
  },
};

const effectsOf = <A extends WorkflowAction>(action: A): Effects<A> => EFFECTS[action];

/**
 * Whether a report's or a case's move changes the tallies of the case's reporters
 * (src/domain/identities/reporter-tally.ts): into or out of a status a report counts in, for a case
 * because its decision says whether its closed reports' resolutions stand.
 */
const movesTally = (c: StatusChange | null): boolean => !!c && c.from !== c.to && (TALLIED_STATUSES.has(c.from) || TALLIED_STATUSES.has(c.to));

export interface TransitionInput<A extends WorkflowAction> {
  target: Target;
  move: Move<A>;
  /**
   * When the table refuses the move (or the target is not found): "conflict" (default) throws
   * the action's 409 (404 for a missing target); "skip" writes nothing and answers `allowed: false`.
   */
  refused?: "conflict" | "skip";
  /**
   * A moderator's decision on a case someone else claimed: "respect" (default) refuses it with
   * a 409 naming who holds the claim; "take_over" decides and moves the claim to the actor.
   * Only dashboard users are bound by claims (CLAIM_BOUND): API keys and Flagstaff itself act
   * for the platform, not for a moderator.
   */
  claim?: "respect" | "take_over";
  /**
   * No webhook event for this move (`Transition.silent`): a muted reporter's report dismissed
   * on intake is never announced (src/domain/intake/reports.ts).
   */
  silent?: boolean;
  /**
   * The move applies to the report alone: no other report of its case moves with it, and the
   * case follows only when the report is its only one (a muted reporter's report dismissed on
   * intake must not decide the reports it joined).
   */
  alone?: boolean;
  /**
   * The report (a report target only) and its case as the caller locked them in its own open
   * transaction (lockReportAndCase), and as they are now: the engine neither reads and locks
   * them again nor opens a savepoint, and its writes are left to the commit (Store.atCommit:
   * on PostgreSQL they travel with the COMMIT). A failure then fails the caller's transaction.
   * AI enrichment moves a report so (src/domain/analysis/enrichment.ts).
   */
  locked?: { report: ReportRow; theCase: CaseRow };
}

/** The actions a claim holds against: a moderator's own decisions on an open case. */
const CLAIM_BOUND: ReadonlySet<WorkflowAction> = new Set(["triage", "escalate", "resolve", "dismiss"]);

/**
 * Applies one move of the table to a report (with its case and the case's reports, as the
 * action's effects say) or to a case alone, in the caller's transaction (its own otherwise).
 * Reports and cases of the context's organization only.
 */
export function applyTransition<A extends WorkflowAction>(ctx: DomainContext, input: TransitionInput<A>): Promise<Transition<A>> {
  const { target, move } = input;
  const skip = input.refused === "skip";
  const claim = input.claim ?? "respect";
  const how = { silent: input.silent === true, alone: input.alone === true, deferWrites: false };
  if (input.locked && "reportId" in target && ctx.store.inTransaction()) {
    return onReport(ctx, target.reportId, move, skip, claim, { ...how, deferWrites: true }, input.locked);
  }
  return transaction(
    ctx,
    () => ("reportId" in target ? onReport(ctx, target.reportId, move, skip, claim, how) : onCase(ctx, target.caseId, move, skip, how.silent)),
    ROW_LOCKED,
  );
}

const nothing = <A extends WorkflowAction>(move: Move<A>, at: number): Transition<A> => ({
  move, at, allowed: false, changed: false, applied: false, report: null, fellows: [], case: null, silent: false,
});

/** The status an `undo` goes back to (undefined for every other action). */
const restoreOf = (move: Move): Status | undefined => (move.action === "undo" ? move.to : undefined);

/**
 * Claims hold: a dashboard user's decision on an open case another user claimed is refused,
 * naming the holder, unless it takes the claim over (then the case becomes the actor's, audited).
 */
async function checkClaim(ctx: DomainContext, c: CaseRow, move: Move, claim: "respect" | "take_over", now: number): Promise<void> {
  // A review-mode claim that lapsed holds nothing (src/domain/cases/claims.ts).
  const holder = holderOf(c, now);
  if (!CLAIM_BOUND.has(move.action) || ctx.actor.type !== "user" || !holder || holder === ctx.actor.id || c.isOpen !== 1) return;
  if (claim === "respect") {
    const [who] = await ctx.db.select({ email: users.email }).from(users).where(eq(users.id, holder)).limit(1);
    throw conflict(`${CLAIMED_BY}${who?.email ?? "another user"}: take it over to decide on it`);
  }
  await ctx.db.update(cases).set({ assigneeId: ctx.actor.id, assignedAt: now, claimExpiresAt: null, updatedAt: now }).where(eq(cases.id, c.id));
  await recordAudit(ctx, {
    projectId: c.projectId, action: "CASE_ASSIGNED", entityType: "case", entityId: c.id,
    before: { assigneeId: holder }, after: { assigneeId: ctx.actor.id }, data: { takenOverFrom: holder, by: move.action },
  });
  c.assigneeId = ctx.actor.id;
  c.assignedAt = now;
  c.claimExpiresAt = null;
}


async function onReport<A extends WorkflowAction>(
  ctx: DomainContext,
  reportId: string,
  move: Move<A>,
  skip: boolean,
  claim: "respect" | "take_over",
  how: { silent: boolean; alone: boolean; deferWrites: boolean } = { silent: false, alone: false, deferWrites: false },
  given?: { report: ReportRow; theCase: CaseRow },
): Promise<Transition<A>> {
  const effects = effectsOf<A>(move.action);
  const now = ctx.clock.now();
  // The case's row first (src/domain/cases/case-lock.ts), then the report as it is under that
  // lock; or as the caller locked them.
  const locked = given ?? (await lockReportAndCase(ctx, reportId));
  const row = locked.report;
  let theCase = locked.theCase;
  if (!row) {
    if (skip) return nothing(move, now);
    throw notFound("Report not found");
  }
  if (!theCase) throw notFound("Case not found");
  if (theCase.id !== row.caseId) throw new TransactionConflict("the report moved to another case meanwhile");
  // A dashboard user decides only on cases of the queues they may work: others are not found; a
  // case the blind-review wall hides from them is refused (src/domain/access/queue-access.ts).
  // Before the status is checked, whose refusal would name it.
  const refused = await caseRefusal(ctx, theCase, "Report");
  if (refused) {
    if (skip) return nothing(move, now);
    throw refused;
  }
  const from = asStatus(row.status);
  const own = nextStatus(from, move.action, restoreOf(move as Move));
  if (!own.allowed) {
    if (skip) return nothing(move, now);
    throw conflict(effects.refusal(from, "Report"));
  }
  await checkClaim(ctx, theCase, move as Move, claim, now);
  const report = { ...row };
  // Back into review out of a closed case (escalation): reopen it, or join the case open for
  // the same target by then.
  if (own.changed && isOpenStatus(own.to) && theCase.isOpen === 0) theCase = await rehome(ctx, report, theCase, now);

  const applied = !own.noop;
  const t: Transition<A> = { move, at: now, allowed: true, changed: own.changed, applied, report: null, fellows: [], case: null, silent: how.silent };
  t.report = await writeReport(ctx, effects, move, report, own.to, applied, now, how.deferWrites);
  // An applied move spreads to the case and its other reports even when the report itself was
  // already there (escalating an IN_REVIEW report takes its OPEN fellows into review too).
  if (applied) {
    const moving: { row: Fellow; to: Status }[] = [];
    for (const fellow of await fellowsOf(ctx, how.alone ? "none" : effects.fellows, report, from)) {
      const m = nextStatus(asStatus(fellow.status), move.action, restoreOf(move as Move));
      if (m.allowed && m.changed) moving.push({ row: fellow, to: m.to });
    }
    t.fellows = await writeFellows(ctx, effects, move, moving, now, how.deferWrites);
    const caseMove = nextStatus(asStatus(theCase.status), move.action, restoreOf(move as Move));
    const caseRule = how.alone && theCase.reportCount > 1 ? "none" : effects.case;
    let caseTo = caseRule === "follows" ? own.to : caseRule === "table" && caseMove.allowed ? caseMove.to : null;
    // A case leaves review only with all its reports (the table's moves need not take them all).
    if (caseRule === "table" && caseTo !== null && isOpenStatus(theCase.status) && !isOpenStatus(caseTo) && (await holdsOpenReport(ctx, theCase.id))) caseTo = null;
    if (caseTo !== null && caseTo !== theCase.status) t.case = await writeCase(ctx, theCase, caseTo, move as Move, now, how.deferWrites);
  }
  if ([t.report, ...t.fellows, t.case].some(movesTally)) await recountCaseReporters(ctx, { caseId: theCase.id, reports: theCase.reportCount });
  for (const effect of effects.then) await effect(ctx, t);
  return t;
}

async function onCase<A extends WorkflowAction>(ctx: DomainContext, caseId: string, move: Move<A>, skip: boolean, silent = false): Promise<Transition<A>> {
  const effects = effectsOf<A>(move.action);
  const now = ctx.clock.now();
  const c = await lockCase(ctx, caseId);
  const refused = c ? await caseRefusal(ctx, c) : notFound("Case not found");
  if (refused || !c) {
    if (skip) return nothing(move, now);
    throw refused ?? notFound("Case not found");
  }
  const from = asStatus(c.status);
  const m = nextStatus(from, move.action, restoreOf(move as Move));
  if (!m.allowed) {
    if (skip) return nothing(move, now);
    throw conflict(effects.refusal(from, "Case"));
  }
  const t: Transition<A> = { move, at: now, allowed: true, changed: m.changed, applied: !m.noop, report: null, fellows: [], case: null, silent };
  if (m.changed || move.action === "undo") t.case = await writeCase(ctx, c, m.to, move as Move, now);
  if (movesTally(t.case)) await recountCaseReporters(ctx, { caseId: c.id, reports: c.reportCount });
  for (const effect of effects.then) await effect(ctx, t);
  return t;
}

/** Whether a report of the case is in an open status. */
async function holdsOpenReport(ctx: DomainContext, caseId: string): Promise<boolean> {
  const [open] = await ctx.db
    .select({ id: reports.id })
    .from(reports)
    .where(and(eq(reports.caseId, caseId), inArray(reports.status, [...OPEN_STATUSES])))
    .limit(1);
  return open !== undefined;
}

/**
 * What a move needs of the other reports it takes along: their ids, where they are and their
 * status. Not whole rows: a pile-on's 40,000 reports read whole (their texts and search
 * documents) took about 150 ms of a decision on SQLite, every request waiting.
 */
const FELLOW_COLUMNS = { id: reports.id, projectId: reports.projectId, caseId: reports.caseId, status: reports.status };
type Fellow = Pick<ReportRow, keyof typeof FELLOW_COLUMNS>;

/** The other reports of the report's case that the action's `fellows` rule names. */
async function fellowsOf(ctx: DomainContext, rule: FellowsRule, report: ReportRow, from: Status): Promise<Fellow[]> {
  if (rule === "none") return [];
  const statuses: readonly Status[] = rule === "open" ? OPEN_STATUSES : rule === "appealed" ? ["APPEALED"] : [from];
  return await ctx.db
    .select(FELLOW_COLUMNS)
    .from(reports)
    .where(and(eq(reports.caseId, report.caseId), ne(reports.id, report.id), inArray(reports.status, [...statuses])))
    .orderBy(asc(reports.createdUs));
}

async function writeReport<A extends WorkflowAction>(
  ctx: DomainContext,
  effects: Effects<A>,
  move: Move<A>,
  r: ReportRow,
  to: Status,
  applied: boolean,
  now: number,
  deferred = false,
): Promise<ReportChange> {
  const update = ctx.db
    .update(reports)
    .set({ status: to, updatedAt: now, ...effects.record?.(move, { actor: ctx.actor, now, applied }) })
    .where(eq(reports.id, r.id));
  await (deferred ? ctx.store.atCommit(update.execute()) : update);
  return reportMoved(ctx, effects, move, r, to, applied);
}

/** A report's move written: its audit event, and the change it is. */
async function reportMoved<A extends WorkflowAction>(ctx: DomainContext, effects: Effects<A>, move: Move<A>, r: Fellow, to: Status, applied: boolean): Promise<ReportChange> {
  await recordAudit(ctx, {
    projectId: r.projectId, action: effects.audit,
    entityType: "report", entityId: r.id,
    before: { status: r.status }, after: { status: to },
    data: effects.auditData(move, { caseId: r.caseId, applied }),
  });
  return { id: r.id, projectId: r.projectId, caseId: r.caseId, from: asStatus(r.status), to };
}

/**
 * Reports a statement of writeFellows names at most (well under either engine's limit on a
 * statement's parameters).
 */
const FELLOWS_A_STATEMENT = 1_000;

/**
 * The other reports a move takes along (fellowsOf), written as writeReport writes one, but one
 * UPDATE for each status they go to and FELLOWS_A_STATEMENT of them (each gets the same record:
 * the move's), then each its audit event. A statement a report, built and prepared each time,
 * cost about 50 µs a report: resolving a pile-on of 40,000 reports held SQLite's thread, and so
 * every request, for 2.1 s. The event loop is given back between statements once a slice has run
 * its time (plumbing/event-loop.ts): still one transaction, so writers wait for it, but reads and
 * health probes go on.
 */
async function writeFellows<A extends WorkflowAction>(
  ctx: DomainContext,
  effects: Effects<A>,
  move: Move<A>,
  moving: readonly { row: Fellow; to: Status }[],
  now: number,
  deferred = false,
): Promise<ReportChange[]> {
  const byStatus = new Map<Status, string[]>();
  for (const { row, to } of moving) {
    const ids = byStatus.get(to);
    if (ids) ids.push(row.id);
    else byStatus.set(to, [row.id]);
  }
  const record = effects.record?.(move, { actor: ctx.actor, now, applied: true });
  const slices = slicer();
  for (const [to, ids] of byStatus) {
    for (let i = 0; i < ids.length; i += FELLOWS_A_STATEMENT) {
      if (slices.due()) await slices.breathe();
      const update = ctx.db
        .update(reports)
        .set({ status: to, updatedAt: now, ...record })
        .where(inArray(reports.id, ids.slice(i, i + FELLOWS_A_STATEMENT)));
      await (deferred ? ctx.store.atCommit(update.execute()) : update);
    }
  }
  const changes: ReportChange[] = [];
  for (const { row, to } of moving) {
    if (slices.due()) await slices.breathe();
    changes.push(await reportMoved(ctx, effects, move, row, to, true));
  }
  return changes;
}

/** The decisions that take a case out of review, and the code each records on it. */
const DECISION_CODE: Partial<{ [A in WorkflowAction]: (m: Move<A>, c: CaseRow) => string | null }> = {
  resolve: (m) => m.code ?? null,
  dismiss: (m) => m.reason,
  // A decided appeal keeps the decision's code: upheld or overturned, it is about that decision.
  uphold: (_m, c) => c.decisionCode,
  overturn: (_m, c) => c.decisionCode,
  close: (_m, c) => c.decisionCode,
};

/**
 * Writes a case's status. A decision that takes it out of review records itself on the case
 * (who, when, which code: the closed cases' list) and ends its escalation; an undo restores the
 * columns the case had before. A decision's decidedAt is the updatedAt written with it: that is
 * how the database's trigger cases_decision_fill (migration case_decisions) tells these writes
 * from an older release's, whose decisions it fills in (test/case-decisions.test.ts).
 */
async function writeCase(ctx: DomainContext, c: CaseRow, to: Status, move: Move, now: number, deferred = false): Promise<StatusChange> {
  const { action } = move;
  const codeOf = DECISION_CODE[action] as ((m: Move, c: CaseRow) => string | null) | undefined;
  const decided: CaseRecord =
    codeOf && !isOpenStatus(to)
      ? { decision: action, decisionCode: codeOf(move, c), decidedAt: now, decidedByType: ctx.actor.type, decidedById: ctx.actor.id, escalatedTeam: null, escalatedAt: null }
      : move.action === "undo"
        ? { ...move.caseRecord }
        : {};
  const update = ctx.db.update(cases).set({ status: to, isOpen: isOpenStatus(to) ? 1 : 0, updatedAt: now, ...decided }).where(eq(cases.id, c.id));
  await (deferred ? ctx.store.atCommit(update.execute()) : update);
  if (to !== c.status) {
    await recordAudit(ctx, {
      projectId: c.projectId, action: "CASE_STATUS_CHANGED",
      entityType: "case", entityId: c.id, before: { status: c.status }, after: { status: to }, data: { action },
    });
  }
  return { id: c.id, projectId: c.projectId, from: asStatus(c.status), to };
}

/**
 * A report leaving a closed case for an open status reopens that case, unless another case is
 * open for the same target by then: the report then moves into that one (two open cases for
 * one target would split the incident). Updates `report.caseId`; returns the report's case.
 */
async function rehome(ctx: DomainContext, report: ReportRow, c: CaseRow, now: number): Promise<CaseRow> {
  const found = await findOpenCase(ctx, c);
  // The case it joins is locked too (after its own: whoever holds both took them in this order,
  // or took the open one by intake, which a report reopening never waits behind for long).
  const open = found && (await lockCase(ctx, found.id));
  if (!open || open.isOpen !== 1) return c;
  await ctx.db.update(reports).set({ caseId: open.id }).where(eq(reports.id, report.id));
  // Its attachments, media items and their matches go with it: an attachment of a report is in
  // the report's case, the media job acts on the case a row names, a case page lists its matches
  // by case.
  await ctx.db.update(attachments).set({ caseId: open.id }).where(eq(attachments.reportId, report.id));
  await ctx.db.update(caseMedia).set({ caseId: open.id }).where(eq(caseMedia.reportId, report.id));
  await ctx.db.update(mediaMatches).set({ caseId: open.id }).where(eq(mediaMatches.reportId, report.id));
  await ctx.db.update(cases).set({ reportCount: open.reportCount + 1, updatedAt: now }).where(eq(cases.id, open.id));
  await ctx.db.update(cases).set({ reportCount: c.reportCount - 1, updatedAt: now }).where(eq(cases.id, c.id));
  report.caseId = open.id;
  await recordAudit(ctx, {
    projectId: c.projectId, action: "REPORT_MOVED", entityType: "report", entityId: report.id,
    before: { caseId: c.id }, after: { caseId: open.id },
  });
  return open;
}
