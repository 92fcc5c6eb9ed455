/**
 * Strikes (docs/enforcement.md, "Strikes"): a project's strike policy, the strikes its decisions
 * add to an identity, and reading them.
 *
 * - A resolution whose code the policy names adds a strike to the decided case's subject, in the
 *   decision's transaction: the workflow engine's ON_DECIDED effect calls addDecisionStrike. An
 *   overturned appeal removes the case's strike (removeCaseStrikes), so does undoing the bulk
 *   decision that added it (removeUndoneStrikes). A strike counts until it expires.
 * - Counting and stepping: the subject identity's row is locked (after the case's, the order
 *   of src/db/store.ts) before its strikes in force are summed, so two decisions on two of its
 *   cases at once count one after the other and a ladder threshold is crossed by exactly one of
 *   them. The step reached is recorded on that strike, and a job (JOB_KIND.strikeStep, in the same
 *   transaction) takes the action through createEnforcementAction, the path of a moderator's
 *   action (src/domain/enforcement/strike-ladder.ts): the workflow engine cannot call it itself,
 *   since the enforcement module imports the engine.
 *
 * This module imports nothing that imports the workflow engine (the engine imports it).
 */
import { and, desc, eq, gt, inArray, isNull, sum } from "drizzle-orm";
import { forUpdate } from "../../db/prepared.ts";
import { bulkDecisions, cases, identities, projects, reportCategories, reports, strikes } from "../../db/schema.ts";
import { requireProject, type Project } from "../accounts/projects.ts";
import { recordAudit } from "../core/audit.ts";
import { iso, isoOrNull } from "../core/clock.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { badRequest, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { enqueueJob } from "../plumbing/jobs.ts";
import { parseStored } from "../plumbing/stored-json.ts";
import { JOB_KIND } from "../views/job.ts";
import { assertMaySeeSubject, isOfWorkableCase, type AccessContext } from "../access/queue-access.ts";
import { SEVERITIES, type Severity } from "../views/severity.ts";
import {
  DEFAULT_STRIKE_POLICY,
  stepCrossed,
  strikePolicySchema,
  type IdentityStrikes,
  type LadderStep,
  type NoStrikeReason,
  type StrikePolicy,
  type StrikeStatus,
  type StrikeView,
} from "../views/strikes.ts";

export type StrikeRow = typeof strikes.$inferSelect;

const DAY_MS = 86_400_000;
/** At most this many strikes in an identity's list. */
const LISTED = 100;

// ---------------------------------------------------------------------------------------------
// The policy

/** A project's policy as stored (off when none was saved, or the stored text no longer parses). */
export const parseStrikePolicy = (text: string | null): StrikePolicy => parseStored(text, strikePolicySchema, DEFAULT_STRIKE_POLICY);

export async function getStrikePolicy(ctx: Pick<DomainContext, "db" | "orgId">, input: { projectId: string }): Promise<StrikePolicy> {
  return parseStrikePolicy((await requireProject(ctx, input.projectId)).strikePolicy);
}

/**
 * Replaces a project's policy (already parsed with strikePolicySchema, which checks the ladder:
 * thresholds increasing, account-level kinds, a duration where the kind needs one). The reasons
 * it weighs must be the project's report categories (400 naming one that is not). Applies to
 * decisions from now on; strikes already added keep their count and expiry. Audited.
 */
export function setStrikePolicy(ctx: DomainContext, input: { projectId: string; policy: StrikePolicy }): Promise<StrikePolicy> {
  return transaction(ctx, async () => {
    const project = await requireProject(ctx, input.projectId);
    const names = new Set(
      (await ctx.db.select({ name: reportCategories.name }).from(reportCategories).where(eq(reportCategories.projectId, project.id))).map((c) => c.name),
    );
    for (const reason of Object.keys(input.policy.strikes.byReason)) {
      if (!names.has(reason)) throw badRequest(`strikes.byReason.${reason}: not a report category of this project`);
    }
    const before = parseStrikePolicy(project.strikePolicy);
    await ctx.db.update(projects).set({ strikePolicy: JSON.stringify(input.policy), updatedAt: ctx.clock.now() }).where(eq(projects.id, project.id));
    await recordAudit(ctx, {
      projectId: project.id, action: "PROJECT_STRIKE_POLICY_CHANGED", entityType: "project", entityId: project.id,
      before, after: input.policy,
    });
    return input.policy;
  });
}

/**
 * How many strikes a decision on these reports adds: the largest weight the policy gives their
 * reasons or their highest severity, else its default.
 */
export function strikesFor(policy: StrikePolicy, decided: { reasons: readonly string[]; severities: readonly Severity[] }): number {
  const weights: number[] = [];
  for (const reason of decided.reasons) {
    // Own keys only: a category named "toString" must not read Object.prototype's.
    if (Object.hasOwn(policy.strikes.byReason, reason)) weights.push(policy.strikes.byReason[reason]!);
  }
  const highest = decided.severities.reduce<Severity | null>((a, b) => (a === null || SEVERITIES.indexOf(b) > SEVERITIES.indexOf(a) ? b : a), null);
  const bySeverity = highest === null ? undefined : policy.strikes.bySeverity[highest];
  if (bySeverity !== undefined) weights.push(bySeverity);
  return weights.length ? Math.max(...weights) : policy.strikes.default;
}

// ---------------------------------------------------------------------------------------------
// Adding and removing (the workflow engine's effects, in the decision's transaction)

/** The strikes in force of an identity at `now`: the sum of their counts. */
export async function strikesInForce(ctx: Pick<DomainContext, "db">, input: { identityId: string; now: number }): Promise<number> {
  const [row] = await ctx.db
    .select({ n: sum(strikes.count) })
    .from(strikes)
    .where(and(eq(strikes.identityId, input.identityId), isNull(strikes.removedAt), gt(strikes.expiresAt, input.now)));
  return Number(row?.n ?? 0);
}

/**
 * What a resolution with `code` on these reports of a case adds, by the project's policy: the
 * strikes and the ladder step they reach, or why none. The one rule of a decision's strike:
 * addDecisionStrike writes what it answers, and the resolve dialog's preview
 * (strike-preview.ts) shows it before the decision. With `lock`, the subject's identity row is
 * locked (after the case's, inside the decision's transaction) before its strikes in force are
 * counted, so two decisions at once count one after the other.
 */
export async function decisionStrike(
  ctx: Pick<DomainContext, "db">,
  input: { projectId: string; caseId: string; code: string | null; reportIds: readonly string[]; at: number },
  opts: { lock: boolean },
): Promise<DecisionStrike> {
  const [project] = await ctx.db.select({ policy: projects.strikePolicy }).from(projects).where(eq(projects.id, input.projectId)).limit(1);
  const policy = parseStrikePolicy(project?.policy ?? null);
  if (!policy.enabled) return { adds: false, noStrike: "policy_off", policy, identityId: null };
  if (input.code === null || !(policy.codes as readonly string[]).includes(input.code)) return { adds: false, noStrike: "code_not_counted", policy, identityId: null };
  if (!input.reportIds.length) return { adds: false, noStrike: "nothing_open", policy, identityId: null };
  const decided = await ctx.db.select({ reasons: reports.reasons, severity: reports.severity, subject: reports.subjectIdentityId }).from(reports).where(inArray(reports.id, [...input.reportIds]));
  const [theCase] = await ctx.db.select({ subject: cases.subjectIdentityId }).from(cases).where(eq(cases.id, input.caseId)).limit(1);
  const identityId = theCase?.subject ?? decided.find((r) => r.subject !== null)?.subject ?? null;
  if (identityId === null) return { adds: false, noStrike: "no_subject", policy, identityId: null };
  const count = strikesFor(policy, {
    reasons: [...new Set(decided.flatMap((r) => JSON.parse(r.reasons) as string[]))],
    severities: decided.map((r) => r.severity as Severity),
  });
  if (count === 0) return { adds: false, noStrike: "weighs_nothing", policy, identityId };

  // The identity's row, held until the decision commits: its strikes are counted one decision at a time.
  if (opts.lock) await forUpdate(ctx.db.select({ id: identities.id }).from(identities).where(eq(identities.id, identityId)));
  const before = await strikesInForce(ctx, { identityId, now: input.at });
  const total = before + count;
  return { adds: true, policy, identityId, count, before, total, step: stepCrossed(policy.ladder, before, total) };
}

/** What decisionStrike answers: the strikes a resolution adds and the step they reach, or why none. */
export type DecisionStrike =
  | { adds: false; noStrike: NoStrikeReason; policy: StrikePolicy; identityId: string | null }
  | { adds: true; policy: StrikePolicy; identityId: string; count: number; before: number; total: number; step: LadderStep | null };

/**
 * A resolution the project's policy counts (decisionStrike): one strike row for the case's
 * subject (its count by the decided reports' reasons and severity), audited as STRIKE_ADDED on
 * the identity; when it takes the subject's strikes in force across a ladder threshold, the step
 * is recorded on it and its job enqueued. Call inside the decision's transaction, after the
 * case's row is locked.
 */
export async function addDecisionStrike(
  ctx: DomainContext,
  input: { projectId: string; caseId: string; reportId: string; code: string | null; decidedReportIds: readonly string[]; at: number },
): Promise<StrikeRow | null> {
  const ids = input.decidedReportIds.length ? [...input.decidedReportIds] : [input.reportId];
  const strike = await decisionStrike(ctx, { projectId: input.projectId, caseId: input.caseId, code: input.code, reportIds: ids, at: input.at }, { lock: true });
  if (!strike.adds) return null;
  const { policy, identityId, count, total, step } = strike;
  const row: StrikeRow = {
    id: newId(),
    orgId: ctx.orgId,
    projectId: input.projectId,
    identityId,
    caseId: input.caseId,
    reportId: input.reportId,
    code: input.code,
    count,
    createdAt: input.at,
    expiresAt: input.at + policy.windowDays * DAY_MS,
    removedAt: null,
    removedReason: null,
    step: step ? JSON.stringify(step) : null,
    actionId: null,
  };
  await ctx.db.insert(strikes).values(row);
  await recordAudit(ctx, {
    projectId: input.projectId, action: "STRIKE_ADDED", entityType: "identity", entityId: identityId,
    data: {
      strikeId: row.id, caseId: row.caseId, reportId: row.reportId, code: row.code, count, total, expiresAt: iso(row.expiresAt),
      step: step ? { threshold: step.threshold, kind: step.kind } : null,
    },
  });
  if (step) await enqueueJob(ctx, { orgId: ctx.orgId, kind: JOB_KIND.strikeStep, payload: { strikeId: row.id } });
  return row;
}

/** Removes the strikes in force of a case whose decision was overturned on appeal, each audited. */
export async function removeCaseStrikes(ctx: DomainContext, input: { caseId: string; at: number }): Promise<number> {
  const rows = await ctx.db.select().from(strikes).where(and(eq(strikes.caseId, input.caseId), isNull(strikes.removedAt)));
  return removeStrikes(ctx, rows, "overturned", input.at);
}

/**
 * Removes the strikes a bulk decision added to a case it now puts back (its undo): those of the
 * case made since the bulk decision. The ladder's actions they took stand (revoke them on their own).
 */
export async function removeUndoneStrikes(ctx: DomainContext, input: { caseId: string; bulkId: string; at: number }): Promise<number> {
  const [bulk] = await ctx.db.select({ createdAt: bulkDecisions.createdAt }).from(bulkDecisions).where(eq(bulkDecisions.id, input.bulkId)).limit(1);
  if (!bulk) return 0;
  const rows = (await ctx.db.select().from(strikes).where(and(eq(strikes.caseId, input.caseId), isNull(strikes.removedAt)))).filter((s) => s.createdAt >= bulk.createdAt);
  return removeStrikes(ctx, rows, "undone", input.at);
}

async function removeStrikes(ctx: DomainContext, rows: StrikeRow[], reason: "overturned" | "undone", at: number): Promise<number> {
  for (const row of rows) {
    await forUpdate(ctx.db.select({ id: identities.id }).from(identities).where(eq(identities.id, row.identityId)));
    await ctx.db.update(strikes).set({ removedAt: at, removedReason: reason }).where(and(eq(strikes.id, row.id), isNull(strikes.removedAt)));
    await recordAudit(ctx, {
      projectId: row.projectId, action: "STRIKE_REMOVED", entityType: "identity", entityId: row.identityId,
      data: { strikeId: row.id, caseId: row.caseId, reason, total: await strikesInForce(ctx, { identityId: row.identityId, now: at }) },
    });
  }
  return rows.length;
}

// ---------------------------------------------------------------------------------------------
// Reading

export function strikeStatus(row: StrikeRow, now: number): StrikeStatus {
  if (row.removedAt !== null) return "removed";
  return row.expiresAt <= now ? "expired" : "active";
}

export const stepOf = (row: Pick<StrikeRow, "step">): LadderStep | null => (row.step ? (JSON.parse(row.step) as LadderStep) : null);

export function toStrikeView(row: StrikeRow, identity: { id: string; type: string; externalId: string }, now: number): StrikeView {
  const step = stepOf(row);
  return {
    id: row.id,
    identity,
    caseId: row.caseId,
    reportId: row.reportId,
    code: row.code,
    count: row.count,
    createdAt: iso(row.createdAt),
    expiresAt: iso(row.expiresAt),
    removedAt: isoOrNull(row.removedAt),
    removedReason: row.removedReason,
    status: strikeStatus(row, now),
    step: step ? { threshold: step.threshold, kind: step.kind } : null,
    actionId: row.actionId,
  };
}

/**
 * An identity's strikes (by project, type and external id; 404 when it does not exist): the total
 * in force, the ladder's next step, and its strikes newest first (those of cases the caller may
 * work; the total counts them all, as the ladder does).
 */
export async function identityStrikes(
  ctx: Pick<DomainContext, "db" | "clock"> & AccessContext,
  input: { projectId: string; type: string; externalId: string; project?: Project },
): Promise<IdentityStrikes> {
  const [identity] = await ctx.db
    .select({ id: identities.id, type: identities.type, externalId: identities.externalId })
    .from(identities)
    .where(and(eq(identities.projectId, input.projectId), eq(identities.type, input.type), eq(identities.externalId, input.externalId)))
    .limit(1);
  if (!identity) throw notFound("Identity not found");
  await assertMaySeeSubject(ctx, identity.id);
  return strikesOfIdentity(ctx, { projectId: input.projectId, identity, project: input.project });
}

/** The strikes of an identity row (identityStrikes, for a caller that holds the identity). */
export async function strikesOfIdentity(
  ctx: Pick<DomainContext, "db" | "clock"> & AccessContext,
  input: { projectId: string; identity: { id: string; type: string; externalId: string }; project?: Project },
): Promise<IdentityStrikes> {
  const now = ctx.clock.now();
  const { identity } = input;
  const policy = parseStrikePolicy((input.project ?? (await requireProject(ctx, input.projectId))).strikePolicy);
  const visible = await isOfWorkableCase(ctx, "case", strikes.caseId, { whenNull: "left out", account: strikes.identityId });
  const rows = await ctx.db
    .select()
    .from(strikes)
    .where(and(eq(strikes.identityId, identity.id), visible))
    .orderBy(desc(strikes.createdAt), desc(strikes.id))
    .limit(LISTED);
  const total = await strikesInForce(ctx, { identityId: identity.id, now });
  return {
    total,
    nextStep: policy.enabled ? (policy.ladder.find((s) => s.threshold > total) ?? null) : null,
    strikes: rows.map((r) => toStrikeView(r, identity, now)),
  };
}
