/**
 * Enforcement actions: what a platform does to one of its users (or their content) after a
 * moderation decision — a warning, a mute, a suspension (with an end), a ban or a content
 * removal. Flagstaff records them and announces every creation, change, expiry and revocation
 * through the webhook outbox, in the same transaction as the change, but for the creation of an
 * action a resolution code implies (resolveReport: the record of a restriction the platform made
 * and named in an SDK call, which the specification says emits no event). docs/enforcement.md
 * describes the rules for people.
 */
import { and, asc, desc, eq, gt, gte, inArray, isNotNull, isNull, lt, lte, not, notInArray, or, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { forUpdate } from "../../db/prepared.ts";
import { appeals, enforcementActions, identities, projects, reports } from "../../db/schema.ts";
import { recordAudit, systemActor, type Actor } from "../core/audit.ts";
import { decideOnReport } from "../review/decisions.ts";
import { iso, isoOrNull } from "../core/clock.ts";
import { domainContext, rowLockedTransaction, type DomainContext, type ReadContext } from "../core/context.ts";
import { badRequest, conflict, DomainError, notFound } from "../core/errors.ts";
import { upsertIdentity } from "../identities/identities.ts";
import { newId } from "../core/ids.ts";
import { liveProject, requireProject, type Project } from "../accounts/projects.ts";
import { assertMayWorkCaseId, assertMaySeeSubject, isOfWorkableCase, type AccessContext } from "../access/queue-access.ts";
import { makeStatementForAction } from "./statements.ts";
import { scheduleSubmissionIfEnabled } from "../dsa/transparency-submission.ts";
import { enqueueWebhookEvent, type EventType } from "../webhooks/outbox.ts";
import { applyTransition } from "../review/workflow-engine.ts";
import {
  impliedKindOf,
  isImplyingCode,
  joinWords,
  kindsOfCode,
  kindSpec,
  MAX_ACTION_DELAY_S,
  pluralLabel,
  TIMED_KINDS,
  type ActionKind,
  type ActionStatus,
  type EnforcementActionView,
  type ImpliedBy,
} from "../views/enforcement.ts";
import { ACTION_RESOLUTION_CODES, isResolutionCode } from "../views/report.ts";
import type { IdentityRefView } from "../views/identity.ts";
import { EVENT_TYPE } from "../views/webhook.ts";

export type { ActionKind, ActionStatus, EnforcementActionView } from "../views/enforcement.ts";

export type ActionRow = typeof enforcementActions.$inferSelect;
type ReportRow = typeof reports.$inferSelect;

/**
 * An action's status at `now`. A scheduled action's start is the one the scheduler recorded
 * (takeEffect: its statement of reasons and its announcement, in one transaction), never the
 * clock alone: until then it reads `scheduled` even once its start time passed, so no answer
 * says `active` (and no platform restricts) before its statement exists.
 */
export function actionStatus(row: ActionRow, now: number): ActionStatus {
  // Revoked before its start took effect: it never did (cancelScheduledAction, or any revocation
  // of a scheduled action, its start time passed or not). An action that starts at once is
  // revoked at or after its start.
  if (row.revokedAt !== null) return row.revokedAt < row.startsAt || row.awaitingStart === 1 ? "cancelled" : "revoked";
  // Like its end, its start is judged at the instant asked once recorded: in force from the
  // millisecond it comes.
  if (row.awaitingStart === 1 || row.startsAt > now) return "scheduled";
  if (row.expiredAt !== null || (row.endsAt !== null && row.endsAt <= now)) return "expired";
  return "active";
}

export function toActionView(row: ActionRow, identity: IdentityRefView, now: number): EnforcementActionView {
  const status = actionStatus(row, now);
  return {
    id: row.id,
    projectId: row.projectId,
    identityId: row.identityId,
    identity,
    kind: row.kind,
    reason: row.reason,
    note: row.note,
    reportId: row.reportId,
    caseId: row.caseId,
    content: row.contentExternalId === null ? null : { contentType: row.contentType, contentExternalId: row.contentExternalId },
    startsAt: iso(row.startsAt),
    endsAt: isoOrNull(row.endsAt),
    expiredAt: isoOrNull(row.expiredAt),
    revokedAt: isoOrNull(row.revokedAt),
    revokedBy: row.revokedAt === null ? null : { type: (row.revokedByType ?? "system") as Actor["type"], id: row.revokedById },
    revokeReason: row.revokeReason,
    createdBy: { type: row.createdByType as Actor["type"], id: row.createdById },
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    active: status === "active",
    status,
  };
}

/**
 * Views of many actions, with one query for their identities. `now` (default: the clock's) is
 * the instant their status is judged at.
 */
export async function actionViews(ctx: Pick<DomainContext, "db" | "clock">, input: { rows: ActionRow[]; now?: number }): Promise<EnforcementActionView[]> {
  const { rows } = input;
  const now = input.now ?? ctx.clock.now();
  const ids = [...new Set(rows.map((r) => r.identityId))];
  const found = ids.length
    ? await ctx.db.select({ id: identities.id, type: identities.type, externalId: identities.externalId }).from(identities).where(inArray(identities.id, ids))
    : [];
  const byId = new Map(found.map((i) => [i.id, i]));
  return rows.map((r) => toActionView(r, byId.get(r.identityId) ?? { id: r.identityId, type: "", externalId: "" }, now));
}

const viewOf = async (ctx: Pick<DomainContext, "db" | "clock">, row: ActionRow, now: number): Promise<EnforcementActionView> =>
  (await actionViews(ctx, { rows: [row], now }))[0]!;

/**
 * Writes the webhook deliveries of an event about `view`, for the context's organization (call
 * inside the change's transaction; `now` is the change's time).
 */
async function announce(ctx: DomainContext, now: number, type: EventType, view: EnforcementActionView, extra: Record<string, unknown> = {}): Promise<void> {
  await enqueueWebhookEvent(ctx, { type, data: { action: view, identity: view.identity, ...extra }, now });
}

/**
 * An action of the context's organization (and of `projectId` when given) that the caller may
 * see (one taken outside any case, or one of a case the caller may work), or a 404. `lock`
 * (inside a transaction that changes the action or its appeals): its row stays locked until
 * the transaction ends, the lock of the action and of its appeals, taken before its case's.
 */
export async function requireAction(ctx: AccessContext, input: { actionId: string; projectId?: string; lock?: boolean }): Promise<ActionRow> {
  const select = ctx.db
    .select()
    .from(enforcementActions)
    .where(
      and(
        eq(enforcementActions.id, input.actionId),
        eq(enforcementActions.orgId, ctx.orgId),
        input.projectId ? eq(enforcementActions.projectId, input.projectId) : undefined,
      ),
    );
  const [row] = await (input.lock ? forUpdate(select) : select);
  if (!row) throw notFound("Enforcement action not found");
  await assertMayWorkCaseId(ctx, row.caseId, "Enforcement action", row.identityId);
  return row;
}

// ---------------------------------------------------------------------------------------------
// Creating, changing, revoking

export interface CreateActionInput {
  /** A project of the context's organization. */
  project: Project;
  kind: ActionKind;
  reason: string;
  note?: string | null;
  /** Whom it applies to; defaults to the linked report's subject. Created in the mirror if unknown. */
  identity?: { type: string; externalId: string } | null;
  reportId?: string | null;
  /** The content acted on; defaults to the linked report's target. Required for content_removal. */
  content?: { contentType?: string | null; contentExternalId: string } | null;
  /** The end (ms since the epoch): required for a suspension, optional for a mute, refused otherwise. */
  endsAt?: number | null;
  /**
   * A later start (ms since the epoch; actionStart): the action is `scheduled` until then, and
   * its statement of reasons and the announcement of its start come when it takes effect
   * (startDueActions). Omitted: it starts at once.
   */
  startsAt?: number;
  /**
   * The resolution code that implies the action, when the resolution asked for none
   * (impliedAction): recorded with its statement and audited, not announced.
   */
  impliedBy?: ImpliedBy;
}

/**
 * Records an action by the context's actor and announces it (enforcement_action.created; an
 * implied one is not announced), in one transaction. 400 for a kind/end/content mismatch, 404
 * for a report of another project. An action with a later `startsAt` is announced now as
 * `scheduled` (its statement null); its statement and `enforcement_action.updated` follow when it
 * takes effect (takeEffect).
 */
export function createEnforcementAction(ctx: DomainContext, input: CreateActionInput): Promise<EnforcementActionView> {
  return rowLockedTransaction(ctx, async () => {
    const { project } = input;
    const now = ctx.clock.now();
    const [report] = input.reportId
      ? await ctx.db.select().from(reports).where(and(eq(reports.id, input.reportId), eq(reports.projectId, project.id))).limit(1)
      : [];
    if (input.reportId && !report) throw notFound("Report not found in this project");
    if (report) await assertMayWorkCaseId(ctx, report.caseId, "Report", report.subjectIdentityId);

    const scheduled = input.startsAt !== undefined;
    const startsAt = input.startsAt ?? now;
    if (scheduled) checkStart(startsAt, now);
    checkEnd(input.kind, input.endsAt ?? null, startsAt, now);

    let identityId: string;
    if (input.identity) {
      const [existing] = await ctx.db
        .select({ id: identities.id })
        .from(identities)
        .where(and(eq(identities.projectId, project.id), eq(identities.type, input.identity.type), eq(identities.externalId, input.identity.externalId)))
        .limit(1);
      identityId = existing?.id ?? (await upsertIdentity(ctx, { projectId: project.id, type: input.identity.type, externalId: input.identity.externalId, now })).id;
    } else if (report?.subjectIdentityId) {
      identityId = report.subjectIdentityId;
    } else {
      throw badRequest(
        report
          ? "identity: the report has no subject; say whom the action applies to ({ type, externalId })"
          : "identity: required ({ type, externalId }) unless a report with a subject is linked",
      );
    }
    // An account the caller reviews a case about blind is walled off (queue-access.ts).
    await assertMaySeeSubject(ctx, identityId);

    const content = input.content ?? (report?.contentExternalId ? { contentType: report.contentType || null, contentExternalId: report.contentExternalId } : null);
    if (kindSpec(input.kind).level === "content" && !content) {
      throw badRequest(`content: a ${input.kind} needs the content it removes ({ contentType, contentExternalId }) or a report with a target`);
    }

    const row: ActionRow = {
      id: newId(),
      orgId: project.orgId,
      projectId: project.id,
      identityId,
      kind: input.kind,
      reason: input.reason,
      note: input.note ?? null,
      reportId: report?.id ?? null,
      caseId: report?.caseId ?? null,
      contentType: content?.contentType ?? null,
      contentExternalId: content?.contentExternalId ?? null,
      startsAt,
      endsAt: input.endsAt ?? null,
      expiredAt: null,
      awaitingStart: scheduled ? 1 : 0,
      revokedAt: null,
      revokedByType: null,
      revokedById: null,
      revokeReason: null,
      createdByType: ctx.actor.type,
      createdById: ctx.actor.id,
      createdAt: now,
      updatedAt: now,
    };
    await ctx.db.insert(enforcementActions).values(row);
    const view = await viewOf(ctx, row, now);
    await recordAudit(ctx, {
      projectId: project.id, action: "ENFORCEMENT_ACTION_CREATED",
      entityType: "enforcement_action", entityId: row.id,
      after: { kind: row.kind, reason: row.reason, endsAt: view.endsAt, identityId, reportId: row.reportId, caseId: row.caseId },
      ...(input.impliedBy ? { data: { impliedBy: input.impliedBy, announced: false } } : scheduled ? { data: { startsAt: view.startsAt } } : {}),
    });
    // The platform learns of a scheduled action now (status "scheduled", active false); the
    // restriction, its statement and their announcement come at its start (takeEffect).
    if (scheduled) {
      await announce(ctx, now, EVENT_TYPE.actionCreated, view, { statement: null });
      return view;
    }
    const statement = await makeStatement(ctx, { row, report: report ?? null, project });
    if (!input.impliedBy) await announce(ctx, now, EVENT_TYPE.actionCreated, view, { statement });
    return view;
  });
}

/** The statement of reasons of an action taking effect (DSA Art. 17; null for a warning), queued for the Transparency Database when the organization submits. */
async function makeStatement(ctx: DomainContext, input: { row: ActionRow; report: ReportRow | null; project: Project }) {
  const statement = await makeStatementForAction(ctx, { action: input.row, report: input.report, dsaSettings: input.project.dsaSettings });
  // Submitted to the Transparency Database soon after, when the organization does (docs/dsa.md).
  if (statement) await scheduleSubmissionIfEnabled(ctx);
  return statement;
}

/** A later start: in the future, at most MAX_ACTION_DELAY_S ahead. */
function checkStart(startsAt: number, now: number): void {
  if (startsAt <= now) throw badRequest("startsAt: must be in the future (omit it to start the action now)");
  if (startsAt > now + MAX_ACTION_DELAY_S * 1000) throw badRequest("startsAt: at most a year ahead");
}

/**
 * The end rule of a kind (ActionKindSpec.end): required, allowed or forbidden, and after `from`:
 * now, or the start of a scheduled action.
 */
function checkEnd(kind: ActionKind, endsAt: number | null, from: number, now: number): void {
  const spec = kindSpec(kind);
  if (endsAt === null) {
    if (spec.end === "required") {
      throw badRequest(`endsAt: a ${kind} needs an end (endsAt or durationSeconds)${spec.permanentIs ? `; a permanent one is a ${spec.permanentIs}` : ""}`);
    }
    return;
  }
  if (spec.end === "forbidden") throw badRequest(`endsAt: a ${kind} has no end (only ${joinWords(TIMED_KINDS.map(pluralLabel), "and")} do)`);
  if (endsAt <= now) throw badRequest("endsAt: must be in the future (revoke an action to end it now)");
  if (endsAt <= from) throw badRequest("endsAt: must be after the action's start (startsAt)");
}

export interface ActionPatch {
  reason?: string;
  note?: string | null;
  /** A new end; null makes a mute permanent (a suspension always keeps an end). */
  endsAt?: number | null;
  /** Or: how long, in seconds, from now (from its start, for a scheduled action). */
  durationSeconds?: number;
}

/**
 * Changes the reason, note or end of an action in force and announces it
 * (enforcement_action.updated). 409 once it is revoked or over.
 */
export function updateEnforcementAction(
  ctx: DomainContext,
  input: { projectId: string; actionId: string; patch: ActionPatch },
): Promise<EnforcementActionView> {
  const { patch } = input;
  return rowLockedTransaction(ctx, async () => {
    const now = ctx.clock.now();
    const before = await takeEffectIfDue(ctx, await requireAction(ctx, { actionId: input.actionId, projectId: input.projectId, lock: true }), now);
    const status = actionStatus(before, now);
    if (status !== "active" && status !== "scheduled") throw conflict(`The action is ${status}: only an action in force or scheduled can be changed`);
    const from = Math.max(now, before.startsAt);
    const endsAt = actionEnd(ctx, { endsAt: patch.endsAt, durationSeconds: patch.durationSeconds }, from);
    if (endsAt !== undefined) checkEnd(before.kind, endsAt, from, now);

    const set: Partial<ActionRow> = {};
    if (patch.reason !== undefined && patch.reason !== before.reason) set.reason = patch.reason;
    if (patch.note !== undefined && patch.note !== before.note) set.note = patch.note;
    if (endsAt !== undefined && endsAt !== before.endsAt) set.endsAt = endsAt;
    if (Object.keys(set).length === 0) return viewOf(ctx, before, now);

    const after: ActionRow = { ...before, ...set, updatedAt: now };
    await ctx.db.update(enforcementActions).set({ ...set, updatedAt: now }).where(eq(enforcementActions.id, before.id));
    const view = await viewOf(ctx, after, now);
    await recordAudit(ctx, {
      projectId: before.projectId, action: "ENFORCEMENT_ACTION_UPDATED", entityType: "enforcement_action", entityId: before.id,
      before: auditable(before, set), after: auditable(after, set),
    });
    await announce(ctx, now, EVENT_TYPE.actionUpdated, view);
    return view;
  });
}

/** The changed fields of a row, times as ISO strings, for the audit trail. */
function auditable(row: ActionRow, changed: Partial<ActionRow>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(changed) as (keyof ActionRow)[]) {
    const value = row[key];
    out[key] = key === "endsAt" ? isoOrNull(value as number | null) : value;
  }
  return out;
}

/**
 * Revokes an action (it stops being in force at once) and announces it
 * (enforcement_action.revoked). An action past its end can still be revoked, which clears it
 * from the identity's record; 409 when it is already revoked. Call inside or outside a transaction.
 *
 * An action whose appeal is pending is revoked through revokeActionSettlingAppeal (appeals.ts),
 * which decides the appeal first (overturned), so its case never waits in APPEALED for an appeal
 * nobody can decide any more; here such an action is refused (409).
 */
export function revokeEnforcementAction(
  ctx: DomainContext,
  input: { actionId: string; projectId?: string; reason?: string | null; data?: Record<string, unknown> },
): Promise<EnforcementActionView> {
  const { actor } = ctx;
  return rowLockedTransaction(ctx, async () => {
    const now = ctx.clock.now();
    // Not started first (unlike a change): an action whose start is not recorded never took
    // effect, so revoking it cancels it, with no statement and no start announced.
    const before = await requireAction(ctx, { actionId: input.actionId, projectId: input.projectId, lock: true });
    if (before.revokedAt !== null) throw conflict(`The action is already ${actionStatus(before, now)}`);
    const [pending] = await ctx.db.select({ id: appeals.id }).from(appeals).where(and(eq(appeals.actionId, before.id), eq(appeals.status, "pending"))).limit(1);
    if (pending) throw conflict(`An appeal of this action is pending (${pending.id}): decide the appeal, or revoke the action through the revoke route, which settles it`);
    const set = { revokedAt: now, revokedByType: actor.type, revokedById: actor.id, revokeReason: input.reason ?? null, updatedAt: now };
    await ctx.db.update(enforcementActions).set(set).where(eq(enforcementActions.id, before.id));
    const after = { ...before, ...set };
    const view = await viewOf(ctx, after, now);
    // A scheduled action revoked before its start is recorded never takes effect: it is cancelled.
    const status = actionStatus(before, now);
    await recordAudit(
      ctx,
      status === "scheduled"
        ? {
            projectId: before.projectId, action: "ENFORCEMENT_ACTION_CANCELLED", entityType: "enforcement_action", entityId: before.id,
            before: { status: "scheduled" }, after: { status: "cancelled" }, data: { reason: input.reason ?? null, startsAt: view.startsAt, ...input.data },
          }
        : {
            projectId: before.projectId, action: "ENFORCEMENT_ACTION_REVOKED", entityType: "enforcement_action", entityId: before.id,
            before: { status }, after: { status: "revoked" }, data: { reason: input.reason ?? null, ...input.data },
          },
    );
    await announce(ctx, now, EVENT_TYPE.actionRevoked, view);
    return view;
  });
}

// ---------------------------------------------------------------------------------------------
// When an action ends

/** How a caller says when an action ends: an instant (null: no end), or a duration from now. */
export interface ActionTiming {
  endsAt?: number | null;
  durationSeconds?: number;
}

/**
 * The end of an action, in ms, from `endsAt` or `durationSeconds` (counted from `from`: the
 * action's later start, else now), never both (400); undefined when neither is given (a change
 * leaves the end as it was).
 */
export function actionEnd(ctx: Pick<DomainContext, "clock">, timing: ActionTiming, from?: number): number | null | undefined {
  if (timing.endsAt !== undefined && timing.durationSeconds !== undefined) throw badRequest("give endsAt or durationSeconds, not both");
  if (timing.durationSeconds !== undefined) return (from ?? ctx.clock.now()) + timing.durationSeconds * 1000;
  return timing.endsAt;
}

/** How a caller says when a new action starts: an instant, or a delay from now; neither: at once. */
export interface ActionStartTiming {
  startsAt?: number;
  startsInSeconds?: number;
}

/** The later start of a new action, in ms, from `startsAt` or `startsInSeconds` (never both: 400); undefined: at once. */
export function actionStart(ctx: Pick<DomainContext, "clock">, timing: ActionStartTiming): number | undefined {
  if (timing.startsAt !== undefined && timing.startsInSeconds !== undefined) throw badRequest("give startsAt or startsInSeconds, not both");
  if (timing.startsInSeconds !== undefined) return ctx.clock.now() + timing.startsInSeconds * 1000;
  return timing.startsAt;
}

// ---------------------------------------------------------------------------------------------
// Resolving a report with an action

export interface ResolveActionInput {
  kind?: ActionKind;
  reason?: string;
  note?: string | null;
  identity?: { type: string; externalId: string } | null;
  content?: { contentType?: string | null; contentExternalId: string } | null;
  endsAt?: number | null;
  /** A later start (ms since the epoch), as createEnforcementAction takes it: the action is `scheduled` until then. */
  startsAt?: number;
}

/**
 * Resolves a report (and its case) and applies the enforcement action the resolution calls
 * for, in one transaction: ACCOUNT_LEVEL_ACTION takes an account-level kind (a warning, mute,
 * suspension or ban) of the report's subject; CONTENT_LEVEL_ACTION a content-level one (a
 * content_removal, the default) of its target: ACTION_KIND_SPECS says which is which.
 * The action's reason defaults to the report's reasons.
 */
export async function resolveReportWithAction(
  ctx: DomainContext,
  input: {
    reportId: string;
    resolution: { code?: string | null; note?: string | null };
    action: ResolveActionInput;
    takeOver?: boolean;
    /** The action is the one the code implies (impliedAction), not one the caller asked for. */
    impliedBy?: ImpliedBy;
  },
): Promise<EnforcementActionView> {
  const { reportId, resolution, action } = input;
  // The code says which kinds it takes (RESOLUTION_CODE_SPECS, ACTION_KIND_SPECS), and which one it means without a kind.
  const code = isResolutionCode(resolution.code) ? resolution.code : null;
  const kinds = code ? kindsOfCode(code) : [];
  if (!code || kinds.length === 0) {
    throw badRequest(`action: only a resolution with resolutionCode ${joinWords(ACTION_RESOLUTION_CODES, "or")} carries an enforcement action`);
  }
  const kind = action.kind ?? impliedKindOf(code);
  if (!kind) throw badRequest(`action.kind: required with ${code} (${kinds.join(", ")})`);
  if (!kinds.includes(kind)) throw badRequest(`action.kind: ${code} takes ${kinds.join(", ")}, not ${kind}`);
  return rowLockedTransaction(ctx, async () => {
    // The resolution goes through the workflow engine like any other (409 unless the report is open).
    await applyTransition(ctx, {
      target: { reportId },
      move: { action: "resolve", code: resolution.code, note: resolution.note, actionKind: kind },
      claim: input.takeOver ? "take_over" : "respect",
    });
    const [report] = await ctx.db.select().from(reports).where(eq(reports.id, reportId)).limit(1);
    const project = await requireProject(ctx, report!.projectId);
    const reasons = JSON.parse(report!.reasons) as string[];
    return createEnforcementAction(ctx, {
      project,
      kind,
      reason: action.reason ?? (reasons.join(", ") || resolution.code!),
      note: action.note ?? resolution.note ?? null,
      identity: action.identity,
      reportId,
      content: action.content,
      endsAt: action.endsAt,
      startsAt: action.startsAt,
      impliedBy: input.impliedBy,
    });
  });
}

/**
 * The enforcement action a resolution code implies when the resolution comes without `action`
 * (the specification's resolve body: an optional code, nothing more), so that a restriction
 * never goes without its statement of reasons (DSA Art. 17; docs/enforcement.md, "What a
 * resolution records"):
 *
 * - CONTENT_LEVEL_ACTION says the platform acted on the reported content: a content_removal of
 *   the report's target, applied to its subject (the author), exactly as `action: {}` records
 *   it. A report that names no content, or no author, gives nothing to record: null.
 * - ACCOUNT_LEVEL_ACTION does not say which action (a warning restricts nothing, a suspension
 *   needs its end): null. Every other code is a finding, not a restriction: null.
 */
export function impliedAction(code: string | null | undefined, report: Pick<ReportRow, "contentExternalId" | "subjectIdentityId">): { impliedBy: ImpliedBy; action: ResolveActionInput } | null {
  if (!isImplyingCode(code) || report.contentExternalId === null || report.subjectIdentityId === null) return null;
  return { impliedBy: code, action: { kind: impliedKindOf(code) } };
}

/**
 * Resolves a report: with `action`, together with the enforcement action the resolution calls
 * for (resolveReportWithAction, whose `endsAt` may be given as a duration: actionEnd); without
 * one, with the action its code implies, if any (impliedAction: recorded with its statement, not
 * announced), else as a plain decision on the report (decideOnReport). Answers the id of the
 * action applied or implied. The one entry point of every resolution that may carry an action
 * (the resolve route, rules).
 */
export async function resolveReport(
  ctx: DomainContext,
  input: {
    reportId: string;
    resolution: { code?: string | null; note?: string | null };
    action?: (Omit<ResolveActionInput, "endsAt" | "startsAt"> & ActionTiming & ActionStartTiming) | null;
    /** Decide on a case another moderator claimed, taking the claim over (claims: workflow-engine.ts). */
    takeOver?: boolean;
  },
): Promise<{ enforcementActionId?: string }> {
  const { reportId, resolution, takeOver } = input;
  if (input.action) {
    const { endsAt, durationSeconds, startsAt: at, startsInSeconds, ...action } = input.action;
    // A later start (a grace period) is taken as a created action's is; a duration counts from it.
    const startsAt = actionStart(ctx, { startsAt: at, startsInSeconds });
    const applied = await resolveReportWithAction(ctx, {
      reportId,
      resolution,
      takeOver,
      action: { ...action, startsAt, endsAt: actionEnd(ctx, { endsAt, durationSeconds }, startsAt) },
    });
    return { enforcementActionId: applied.id };
  }
  const [report] = await ctx.db
    .select({ contentExternalId: reports.contentExternalId, subjectIdentityId: reports.subjectIdentityId })
    .from(reports)
    .where(and(eq(reports.id, reportId), eq(reports.orgId, ctx.orgId)))
    .limit(1);
  const implied = report ? impliedAction(resolution.code, report) : null;
  if (implied) {
    const applied = await resolveReportWithAction(ctx, { reportId, resolution, takeOver, ...implied });
    return { enforcementActionId: applied.id };
  }
  await decideOnReport(ctx, { reportId, decision: { action: "resolve", code: resolution.code, note: resolution.note }, takeOver });
  return {};
}

// ---------------------------------------------------------------------------------------------
// Reading

export interface ActionQuery {
  projectId: string;
  identityId?: string;
  kind?: ActionKind;
  status?: ActionStatus;
  /** In force (true) or not (false: expired or revoked). */
  active?: boolean;
  reportId?: string;
  /** The id of the last action of the previous page (newest first). */
  cursor?: string;
  limit: number;
}

/** The condition of actionStatus(row, now) === status, in SQL. */
function statusFilter(status: ActionStatus, now: number): SQL {
  const t = enforcementActions;
  const started = and(eq(t.awaitingStart, 0), lte(t.startsAt, now))!;
  if (status === "revoked") return and(isNotNull(t.revokedAt), gte(t.revokedAt, t.startsAt), eq(t.awaitingStart, 0))!;
  if (status === "cancelled") return and(isNotNull(t.revokedAt), or(lt(t.revokedAt, t.startsAt), eq(t.awaitingStart, 1)))!;
  if (status === "scheduled") return and(isNull(t.revokedAt), or(gt(t.startsAt, now), eq(t.awaitingStart, 1)))!;
  if (status === "expired") return and(isNull(t.revokedAt), started, or(isNotNull(t.expiredAt), lte(t.endsAt, now)))!;
  return and(isNull(t.revokedAt), started, isNull(t.expiredAt), or(isNull(t.endsAt), gt(t.endsAt, now)))!;
}

/** Actions of a project (or of one identity), newest first: those the caller may see (requireAction). */
export async function listEnforcementActions(
  ctx: Pick<DomainContext, "db" | "clock"> & AccessContext,
  q: ActionQuery,
): Promise<{ actions: EnforcementActionView[]; nextCursor: string | null }> {
  const now = ctx.clock.now();
  const t = enforcementActions;
  const where: SQL[] = [q.identityId ? eq(t.identityId, q.identityId) : eq(t.projectId, q.projectId)];
  if (q.identityId) where.push(eq(t.projectId, q.projectId));
  if (q.kind) where.push(eq(t.kind, q.kind));
  if (q.reportId) where.push(eq(t.reportId, q.reportId));
  if (q.status) where.push(statusFilter(q.status, now));
  if (q.active !== undefined) where.push(q.active ? statusFilter("active", now) : not(statusFilter("active", now)));
  if (q.cursor) where.push(lt(t.id, q.cursor));
  const visible = await isOfWorkableCase(ctx, "case", t.caseId, { whenNull: "kept", account: t.identityId });
  if (visible) where.push(visible);
  const rows = await ctx.db.select().from(t).where(and(...where)).orderBy(desc(t.id)).limit(q.limit + 1);
  const page = rows.slice(0, q.limit);
  return { actions: await actionViews(ctx, { rows: page, now }), nextCursor: rows.length > q.limit ? (page.at(-1)?.id ?? null) : null };
}

/** An identity's key: project + type + external ID. */
interface IdentityKey {
  projectId: string;
  type: string;
  externalId: string;
}

/** The id of the identity keyed by project + type + external ID, or null. */
async function identityIdOf(ctx: Pick<DomainContext, "db">, input: IdentityKey): Promise<string | null> {
  const [row] = await ctx.db
    .select({ id: identities.id })
    .from(identities)
    .where(and(eq(identities.projectId, input.projectId), eq(identities.type, input.type), eq(identities.externalId, input.externalId)))
    .limit(1);
  return row?.id ?? null;
}

/** The identity keyed by project + type + external ID, or a 404; a 403 for an account the caller reviews a case about blind. */
export async function requireIdentityId(ctx: AccessContext, input: IdentityKey): Promise<string> {
  const id = await identityIdOf(ctx, input);
  if (!id) throw notFound("Identity not found");
  await assertMaySeeSubject(ctx, id);
  return id;
}

/** An identity's actions, newest first (the SDK's pull): an identity that does not exist is a 404. */
export async function listIdentityActions(
  ctx: Pick<DomainContext, "db" | "clock"> & AccessContext,
  q: Omit<ActionQuery, "identityId"> & IdentityKey,
): Promise<{ actions: EnforcementActionView[]; nextCursor: string | null }> {
  const identityId = await requireIdentityId(ctx, q);
  return listEnforcementActions(ctx, { ...q, identityId });
}

/**
 * A project's actions, newest first, optionally of one identity named by `identityType` and
 * `externalId` (both or neither: 400). An identity that does not exist has no actions: an
 * empty page, not a 404.
 */
export async function findEnforcementActions(
  ctx: Pick<DomainContext, "db" | "clock"> & AccessContext,
  q: Omit<ActionQuery, "identityId"> & { identityType?: string; externalId?: string },
): Promise<{ actions: EnforcementActionView[]; nextCursor: string | null }> {
  if ((q.identityType === undefined) !== (q.externalId === undefined)) throw badRequest("identityType and externalId go together");
  let identityId: string | undefined;
  if (q.identityType !== undefined && q.externalId !== undefined) {
    const id = await identityIdOf(ctx, { projectId: q.projectId, type: q.identityType, externalId: q.externalId });
    if (!id) return { actions: [], nextCursor: null };
    identityId = id;
  }
  return listEnforcementActions(ctx, { ...q, identityId });
}

export function getActionView(ctx: Pick<DomainContext, "db" | "clock">, row: ActionRow): Promise<EnforcementActionView> {
  return viewOf(ctx, row, ctx.clock.now());
}

// ---------------------------------------------------------------------------------------------
// Expiry

/**
 * An action of a live project: a deleted project's actions neither start nor expire (nor are
 * announced) while its slices delete them (project-deletion.ts), and the scheduler does not wake
 * for them.
 */
const ofLiveProject = (db: Db) => inArray(enforcementActions.projectId, db.select({ id: projects.id }).from(projects).where(liveProject()));

/**
 * Marks the actions whose end has come as expired, each with its audit event and an
 * enforcement_action.updated announcement (active: false), as Flagstaff itself and for each
 * action's organization, in one transaction per batch. Returns how many it marked; a full batch
 * means more may be due.
 */
export function expireDueActions(ctx: ReadContext, input: { batch?: number; heldBack?: ReadonlySet<string> } = {}): Promise<SchedulerPass> {
  const batch = input.batch ?? 100;
  return rowLockedTransaction(ctx, async () => {
    const now = ctx.clock.now();
    const t = enforcementActions;
    const due = await ctx.db
      .select()
      .from(t)
      // One whose start is still to be recorded expires after it (startDueActions runs first).
      .where(and(isNull(t.revokedAt), isNull(t.expiredAt), isNotNull(t.endsAt), lte(t.endsAt, now), eq(t.awaitingStart, 0), ofLiveProject(ctx.db), notHeldBack(input.heldBack)))
      .orderBy(asc(t.endsAt))
      .limit(batch);
    const failed = await eachApart(ctx, due, async (row) => {
      const org = domainContext(ctx.store, ctx.clock, systemActor, row.orgId);
      const after: ActionRow = { ...row, expiredAt: now, updatedAt: now };
      await org.db.update(t).set({ expiredAt: now, updatedAt: now }).where(and(eq(t.id, row.id), isNull(t.expiredAt), isNull(t.revokedAt)));
      const view = await viewOf(org, after, now);
      await recordAudit(org, {
        projectId: row.projectId, action: "ENFORCEMENT_ACTION_EXPIRED",
        entityType: "enforcement_action", entityId: row.id,
        before: { status: "active" }, after: { status: "expired" }, data: { endsAt: view.endsAt },
      });
      await announce(org, now, EVENT_TYPE.actionUpdated, view);
    });
    return { found: due.length, failed };
  });
}

/** An action a scheduler's pass could not start or expire (the domain refused: `error`): rolled back alone, left for a later pass. */
export interface ActionFailure {
  id: string;
  orgId: string;
  error: DomainError;
}

/** What a scheduler's pass found due (a full batch: more may be), and those of them it could not take. */
export interface SchedulerPass {
  found: number;
  failed: ActionFailure[];
}

/**
 * Each due action of a scheduler's pass in a savepoint of its own: one the domain refuses (a
 * statement of reasons its data cannot make, say) is rolled back alone and reported, and the
 * others go on. Before, one such action rolled its whole batch back at every pass, every 10 ms as
 * its time had passed, and no scheduled action of any organization started again. Any other
 * failure (a conflict to run again, the database gone) still fails the pass, as before.
 */
async function eachApart(ctx: ReadContext, rows: readonly ActionRow[], work: (row: ActionRow) => Promise<void>): Promise<ActionFailure[]> {
  const failed: ActionFailure[] = [];
  for (const row of rows) {
    try {
      await ctx.store.transaction(() => work(row));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      failed.push({ id: row.id, orgId: row.orgId, error });
    }
  }
  return failed;
}

/** Leaves out the actions the scheduler holds back (their last pass failed: src/jobs/enforcement-jobs.ts). */
const notHeldBack = (heldBack: ReadonlySet<string> | undefined): SQL | undefined =>
  heldBack?.size ? notInArray(enforcementActions.id, [...heldBack]) : undefined;

/** The earliest end among actions still waiting to expire, or null. */
export async function nextActionEnd(ctx: Pick<ReadContext, "db">, heldBack?: ReadonlySet<string>): Promise<number | null> {
  const t = enforcementActions;
  const [row] = await ctx.db
    .select({ endsAt: t.endsAt })
    .from(t)
    .where(and(isNull(t.revokedAt), isNull(t.expiredAt), isNotNull(t.endsAt), ofLiveProject(ctx.db), notHeldBack(heldBack)))
    .orderBy(asc(t.endsAt))
    .limit(1);
  return row?.endsAt ?? null;
}

// ---------------------------------------------------------------------------------------------
// Scheduled starts

/**
 * Records that a scheduled action took effect, once: the guarded UPDATE (awaiting_start = 1,
 * not revoked) is what makes it once, whichever instance or transaction gets there first (on
 * PostgreSQL the row lock makes a second writer wait for the first's commit, then find nothing
 * to update). The one that updated makes its statement of reasons (DSA Art. 17), writes
 * ENFORCEMENT_ACTION_STARTED and announces `enforcement_action.updated` (status active, with
 * `data.statement`), in the caller's transaction. Answers the row as it is now, or null when
 * another got there first (or it was revoked meanwhile).
 */
async function takeEffect(caller: ReadContext, row: ActionRow, now: number): Promise<ActionRow | null> {
  // Flagstaff itself starts it, whoever's transaction it runs in (the audit event's actor).
  const ctx = domainContext(caller.store, caller.clock, systemActor, row.orgId);
  const t = enforcementActions;
  const won = await ctx.db
    .update(t)
    .set({ awaitingStart: 0, updatedAt: now })
    .where(and(eq(t.id, row.id), eq(t.awaitingStart, 1), isNull(t.revokedAt)))
    .returning({ id: t.id });
  if (won.length === 0) return null;
  const after: ActionRow = { ...row, awaitingStart: 0, updatedAt: now };
  const [report] = after.reportId ? await ctx.db.select().from(reports).where(eq(reports.id, after.reportId)).limit(1) : [];
  const project = await requireProject(ctx, after.projectId);
  const statement = await makeStatement(ctx, { row: after, report: report ?? null, project });
  const view = await viewOf(ctx, after, now);
  await recordAudit(ctx, {
    projectId: after.projectId, action: "ENFORCEMENT_ACTION_STARTED", entityType: "enforcement_action", entityId: after.id,
    before: { status: "scheduled" }, after: { status: view.status }, data: { startsAt: view.startsAt, statement: statement !== null },
  });
  await announce(ctx, now, EVENT_TYPE.actionUpdated, view, { statement });
  return after;
}

/**
 * A locked action whose start has come but is not recorded yet takes effect first (takeEffect),
 * so that a change never overtakes the announcement of its start; any other row is answered as
 * it is. (A revocation does not: it cancels an action whose start is not recorded.)
 */
async function takeEffectIfDue(ctx: DomainContext, row: ActionRow, now: number): Promise<ActionRow> {
  if (row.awaitingStart !== 1 || row.revokedAt !== null || row.startsAt > now) return row;
  return (await takeEffect(ctx, row, now)) ?? row;
}

/**
 * The scheduled actions whose start has come take effect (takeEffect), as Flagstaff itself and
 * for each action's organization, in one transaction per batch; rows another instance holds
 * are skipped (it is taking them). Returns how many it found; a full batch means more may be due.
 */
export function startDueActions(ctx: ReadContext, input: { batch?: number; heldBack?: ReadonlySet<string> } = {}): Promise<SchedulerPass> {
  const batch = input.batch ?? 100;
  return rowLockedTransaction(ctx, async () => {
    const now = ctx.clock.now();
    const t = enforcementActions;
    const dueIds = ctx.db
      .select({ id: t.id })
      .from(t)
      .where(and(eq(t.awaitingStart, 1), isNull(t.revokedAt), lte(t.startsAt, now), ofLiveProject(ctx.db), notHeldBack(input.heldBack)))
      .orderBy(asc(t.startsAt))
      .limit(batch);
    const due = await ctx.db.select().from(t).where(inArray(t.id, ctx.store.skipLocked(dueIds))).orderBy(asc(t.startsAt));
    const failed = await eachApart(ctx, due, async (row) => {
      await takeEffect(ctx, row, now);
    });
    return { found: due.length, failed };
  });
}

/** The earliest start among scheduled actions still waiting for it, or null. */
export async function nextActionStart(ctx: Pick<ReadContext, "db">, heldBack?: ReadonlySet<string>): Promise<number | null> {
  const t = enforcementActions;
  const [row] = await ctx.db
    .select({ startsAt: t.startsAt })
    .from(t)
    .where(and(eq(t.awaitingStart, 1), isNull(t.revokedAt), ofLiveProject(ctx.db), notHeldBack(heldBack)))
    .orderBy(asc(t.startsAt))
    .limit(1);
  return row?.startsAt ?? null;
}
