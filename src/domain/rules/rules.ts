/**
 * An organization's rules (docs/rules.md): created, listed, changed and deleted by admins; every
 * change makes a new version, kept whole in rule_versions, and is audited. Their hits (the
 * evidence of shadow and live evaluations, src/domain/rules/rule-engine.ts) are read here, and a rule
 * (saved or a draft) is tried on the organization's latest reports without writing anything.
 * A rule never reaches another organization's data: its project and the queues it routes to
 * are the organization's own.
 */
import { and, count, desc, eq, gte, lt } from "drizzle-orm";
import { projects, reports, ruleHits, rules, ruleVersions } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { DAY_MS, iso } from "../core/clock.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { badRequest, notFound } from "../core/errors.ts";
import { requireRoomFor } from "../core/holding-limits.ts";
import { newId } from "../core/ids.ts";
import { fieldsOf, forgetRules, gatherFacts } from "./rule-engine.ts";
import { evaluateOffThread } from "./rule-test-thread.ts";
import { joinWords, kindSpec, pluralLabel, resolutionCodeOf, TIMED_KINDS } from "../views/enforcement.ts";
import { referenceOf, type Condition, type Effect, type Facts, type RuleHitView, type RuleInput, type RuleTestResult, type RuleView } from "../views/rule.ts";
import { isOfWorkableCase, type AccessContext } from "../access/queue-access.ts";
import { liveProject } from "../accounts/projects.ts";
import { checkRouteQueues } from "../review/queues.ts";

type RuleRow = typeof rules.$inferSelect;
type Reader = Pick<DomainContext, "db" | "orgId">;

/** The default and largest number of reports a test evaluates. */
export const RULE_TEST_LIMITS = { default: 100, max: 1000 } as const;

/**
 * The longest a rule's test runs: the reports it has not reached by then are answered as
 * `budgetExceeded` (each report has its own search budget besides, SEARCH_BUDGET_MS).
 */
export const RULE_TEST_BUDGET_MS = 10_000;

/** Reports whose facts go to the test thread at once. */
const TEST_BATCH = 50;

export function toRuleView(r: RuleRow): RuleView {
  return {
    id: r.id,
    version: r.version,
    name: r.name,
    description: r.description,
    projectId: r.projectId,
    trigger: r.trigger as RuleView["trigger"],
    mode: r.mode as RuleView["mode"],
    when: JSON.parse(r.whenJson) as Condition,
    then: JSON.parse(r.thenJson) as Effect[],
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
  };
}

/** The whole rule at its version, as kept in rule_versions and compared by PATCH. */
const bodyOf = (r: RuleRow) => ({
  name: r.name,
  description: r.description,
  projectId: r.projectId,
  trigger: r.trigger,
  mode: r.mode,
  when: JSON.parse(r.whenJson) as unknown,
  then: JSON.parse(r.thenJson) as unknown,
});

/**
 * The parts of a rule that name other data must name the organization's own: its project, and
 * each queue its effects name (RULE_EFFECTS' `references`: a `route` effect's; of the
 * organization, and of the rule's project or of none).
 */
async function checkReferences(ctx: Reader, rule: { projectId: string | null; then: Effect[] }): Promise<void> {
  if (rule.projectId) {
    const [p] = await ctx.db.select({ id: projects.id }).from(projects).where(and(eq(projects.id, rule.projectId), eq(projects.orgId, ctx.orgId), liveProject())).limit(1);
    if (!p) throw badRequest("projectId: no such project in this organization");
  }
  for (const [i, e] of rule.then.entries()) {
    if (e.type !== "resolve" || !e.action) continue;
    // The kind's resolution code and end rule (ACTION_KIND_SPECS), as the resolve route applies them.
    const { kind } = e.action;
    const code = resolutionCodeOf(kind);
    if (e.resolutionCode !== code) throw badRequest(`then[${i}].resolutionCode: an action of kind ${kind} goes with ${code}`);
    const { end } = kindSpec(kind);
    if (end === "required" && e.action.durationSeconds === undefined) throw badRequest(`then[${i}].action.durationSeconds: a ${kind} needs one`);
    if (end === "forbidden" && e.action.durationSeconds !== undefined) {
      throw badRequest(`then[${i}].action.durationSeconds: only ${joinWords(TIMED_KINDS.map(pluralLabel), "and")} have one`);
    }
  }
  // The queues the effects name (RULE_EFFECTS' `references`), each with the path of its field.
  const named = rule.then.flatMap((e, i) => {
    const queue = referenceOf(e, "queue");
    return queue ? [{ path: `then[${i}].${queue.field}`, queueId: queue.value }] : [];
  });
  await checkRouteQueues(ctx, named, rule.projectId, "rule");
}

async function requireRule(ctx: Reader, ruleId: string): Promise<RuleRow> {
  const [row] = await ctx.db.select().from(rules).where(and(eq(rules.id, ruleId), eq(rules.orgId, ctx.orgId))).limit(1);
  if (!row) throw notFound("Rule not found");
  return row;
}

async function keepVersion(ctx: DomainContext, row: RuleRow): Promise<void> {
  await ctx.db.insert(ruleVersions).values({
    ruleId: row.id,
    orgId: ctx.orgId,
    version: row.version,
    body: JSON.stringify({ ...bodyOf(row), version: row.version }),
    createdByType: ctx.actor.type,
    createdById: ctx.actor.id,
    createdAt: row.updatedAt,
  });
}

/** The organization's rules, optionally of one project (with the organization-wide ones), oldest first (the order they are evaluated in). */
export async function listRules(ctx: Reader, input: { projectId?: string } = {}): Promise<RuleView[]> {
  const rows = await ctx.db.select().from(rules).where(eq(rules.orgId, ctx.orgId)).orderBy(rules.createdAt, rules.id);
  return rows.filter((r) => !input.projectId || r.projectId === null || r.projectId === input.projectId).map(toRuleView);
}

export async function getRule(ctx: Reader, input: { ruleId: string }): Promise<RuleView> {
  return toRuleView(await requireRule(ctx, input.ruleId));
}

export async function createRule(ctx: DomainContext, input: RuleInput): Promise<RuleView> {
  return transaction(ctx, async () => {
    const projectId = input.projectId ?? null;
    const [held] = await ctx.db.select({ n: count() }).from(rules).where(eq(rules.orgId, ctx.orgId));
    requireRoomFor(ctx, "rules", Number(held?.n ?? 0));
    await checkReferences(ctx, { projectId, then: input.then });
    const now = ctx.clock.now();
    const row: RuleRow = {
      id: newId(),
      orgId: ctx.orgId,
      projectId,
      name: input.name,
      description: input.description ?? null,
      trigger: input.trigger,
      mode: input.mode,
      whenJson: JSON.stringify(input.when),
      thenJson: JSON.stringify(input.then),
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    await ctx.db.insert(rules).values(row);
    await keepVersion(ctx, row);
    await recordAudit(ctx, {
      projectId,
      action: "RULE_CREATED",
      entityType: "rule",
      entityId: row.id,
      after: { ...bodyOf(row), version: row.version },
    });
    forgetRules(ctx);
    return toRuleView(row);
  });
}

/** Changes any part of a rule: a change makes version + 1 (kept, audited with both versions); a patch that changes nothing answers the rule as it is. */
export async function updateRule(ctx: DomainContext, input: { ruleId: string; patch: Partial<RuleInput> }): Promise<RuleView> {
  return transaction(ctx, async () => {
    const before = await requireRule(ctx, input.ruleId);
    const p = input.patch;
    const after: RuleRow = {
      ...before,
      name: p.name ?? before.name,
      description: p.description !== undefined ? p.description : before.description,
      projectId: p.projectId !== undefined ? p.projectId : before.projectId,
      trigger: p.trigger ?? before.trigger,
      mode: p.mode ?? before.mode,
      whenJson: p.when !== undefined ? JSON.stringify(p.when) : before.whenJson,
      thenJson: p.then !== undefined ? JSON.stringify(p.then) : before.thenJson,
    };
    if (JSON.stringify(bodyOf(after)) === JSON.stringify(bodyOf(before))) return toRuleView(before);
    await checkReferences(ctx, { projectId: after.projectId, then: JSON.parse(after.thenJson) as Effect[] });
    after.version = before.version + 1;
    after.updatedAt = Math.max(ctx.clock.now(), before.updatedAt + 1);
    const { id: _id, orgId: _org, createdAt: _created, ...changes } = after;
    await ctx.db.update(rules).set(changes).where(and(eq(rules.id, before.id), eq(rules.orgId, ctx.orgId)));
    await keepVersion(ctx, after);
    await recordAudit(ctx, {
      projectId: after.projectId,
      action: "RULE_UPDATED",
      entityType: "rule",
      entityId: before.id,
      before: { ...bodyOf(before), version: before.version },
      after: { ...bodyOf(after), version: after.version },
    });
    forgetRules(ctx);
    return toRuleView(after);
  });
}

/** Deletes a rule; its versions and hits stay, as the evidence its audit events and decisions point to. */
export async function deleteRule(ctx: DomainContext, input: { ruleId: string }): Promise<void> {
  await transaction(ctx, async () => {
    const before = await requireRule(ctx, input.ruleId);
    await ctx.db.delete(rules).where(and(eq(rules.id, before.id), eq(rules.orgId, ctx.orgId)));
    await recordAudit(ctx, {
      projectId: before.projectId,
      action: "RULE_DELETED",
      entityType: "rule",
      entityId: before.id,
      before: { ...bodyOf(before), version: before.version },
    });
    forgetRules(ctx);
  });
}

/** A rule version as kept (the whole rule then), or 404. */
export async function getRuleVersion(ctx: Reader, input: { ruleId: string; version: number }): Promise<Record<string, unknown>> {
  const [row] = await ctx.db
    .select()
    .from(ruleVersions)
    .where(and(eq(ruleVersions.ruleId, input.ruleId), eq(ruleVersions.orgId, ctx.orgId), eq(ruleVersions.version, input.version)))
    .limit(1);
  if (!row) throw notFound("Rule version not found");
  return JSON.parse(row.body) as Record<string, unknown>;
}

/**
 * A rule's hits, newest first (pass `nextCursor` back as `cursor`), with its counts of the last
 * 24 hours and 7 days: the hits on reports of cases the caller may work (queue access).
 */
export async function listRuleHits(
  ctx: Pick<DomainContext, "clock"> & AccessContext,
  input: { ruleId: string; cursor?: string; limit: number },
): Promise<{ hits: RuleHitView[]; counts: { last24h: number; last7d: number }; nextCursor: string | null }> {
  await requireRule(ctx, input.ruleId);
  const now = ctx.clock.now();
  const mine = and(eq(ruleHits.ruleId, input.ruleId), eq(ruleHits.orgId, ctx.orgId), await isOfWorkableCase(ctx, "report", ruleHits.reportId, { whenNull: "left out" }));
  // The counts say how often the rule fires: not the evaluations its budget cut short.
  const fired = and(mine, eq(ruleHits.budgetExceeded, 0));
  const rows = await ctx.db
    .select()
    .from(ruleHits)
    .where(and(mine, input.cursor ? lt(ruleHits.id, input.cursor) : undefined))
    .orderBy(desc(ruleHits.id))
    .limit(input.limit + 1);
  const [day] = await ctx.db.select({ n: count() }).from(ruleHits).where(and(fired, gte(ruleHits.at, now - DAY_MS)));
  const [week] = await ctx.db.select({ n: count() }).from(ruleHits).where(and(fired, gte(ruleHits.at, now - 7 * DAY_MS)));
  const page = rows.slice(0, input.limit);
  return {
    hits: page.map((h) => ({
      id: h.id,
      ruleId: h.ruleId,
      version: h.version,
      reportId: h.reportId,
      effects: JSON.parse(h.effects) as Effect[],
      applied: h.applied === 1,
      budgetExceeded: h.budgetExceeded === 1,
      at: iso(h.at),
    })),
    counts: { last24h: Number(day?.n ?? 0), last7d: Number(week?.n ?? 0) },
    nextCursor: rows.length > input.limit ? (page.at(-1)?.id ?? null) : null,
  };
}

/**
 * Evaluates a rule (saved, whatever its mode, or a draft) against the organization's latest
 * `limit` reports (of the rule's project when it has one; of the cases the caller may work),
 * newest first, and answers which matched with the effects it would take, and which the budget
 * left undecided (each report's search budget, as on intake, or the test's own,
 * RULE_TEST_BUDGET_MS). Reads only: nothing is recorded or applied. The facts are read here;
 * the condition is evaluated on the test thread (src/domain/rules/rule-test-thread.ts), off the
 * serving one.
 */
export async function testRule(
  ctx: Pick<DomainContext, "clock"> & AccessContext,
  input: { ruleId?: string; rule?: Pick<RuleInput, "when" | "then" | "projectId">; limit?: number },
): Promise<RuleTestResult> {
  let rule: { when: Condition; then: Effect[]; projectId: string | null };
  if (input.ruleId) {
    const row = await requireRule(ctx, input.ruleId);
    rule = { when: JSON.parse(row.whenJson) as Condition, then: JSON.parse(row.thenJson) as Effect[], projectId: row.projectId };
  } else if (input.rule) {
    rule = { when: input.rule.when, then: input.rule.then, projectId: input.rule.projectId ?? null };
    await checkReferences(ctx, { projectId: rule.projectId, then: rule.then });
  } else {
    throw badRequest("rule: required");
  }
  const limit = Math.min(Math.max(1, input.limit ?? RULE_TEST_LIMITS.default), RULE_TEST_LIMITS.max);
  const latest = await ctx.db
    .select()
    .from(reports)
    .where(
      and(
        eq(reports.orgId, ctx.orgId),
        rule.projectId ? eq(reports.projectId, rule.projectId) : undefined,
        await isOfWorkableCase(ctx, "case", reports.caseId, { whenNull: "left out" }),
      ),
    )
    .orderBy(desc(reports.createdUs))
    .limit(limit);
  const fields = fieldsOf(rule.when);
  const until = Date.now() + RULE_TEST_BUDGET_MS;
  const matches: RuleTestResult["matches"] = [];
  const budgetExceeded: string[] = [];
  for (let i = 0; i < latest.length; i += TEST_BATCH) {
    const batch = latest.slice(i, i + TEST_BATCH);
    if (Date.now() > until) {
      budgetExceeded.push(...batch.map((r) => r.id));
      continue;
    }
    const facts: Facts[] = [];
    for (const report of batch) facts.push(await gatherFacts(ctx, { reportId: report.id, report, fields }));
    const outcomes = await evaluateOffThread(rule.when, facts, until);
    batch.forEach((report, j) => {
      if (outcomes[j] === true) matches.push({ reportId: report.id, effects: rule.then });
      else if (outcomes[j] === null) budgetExceeded.push(report.id);
    });
  }
  return { evaluated: latest.length, matches, budgetExceeded };
}
