/**
 * Evaluation of rules (docs/rules.md, "Evaluation"): at a trigger (`report.created` inside
 * report intake, `report.enriched` when the AI enrichment of a report completes), the
 * organization's live and shadow rules for it are evaluated against the report's facts, in the
 * caller's transaction. Every match is recorded in rule_hits (applied 1 for a live rule, 0 for a
 * shadow one); a live rule's effects are applied at once, by Flagstaff itself (the system
 * actor), through the same domain functions a moderator's decisions go through (the workflow
 * engine, queues, tags, reporters, enforcement), each audit event carrying
 * `{ ruleId, version, automated: true }` (DomainContext.automation). Changes made by rules do not
 * evaluate rules again.
 *
 * Intake is the hot path: the rules of an organization are cached in memory, checked against one
 * cheap stamp query per evaluation (count, sum of versions, latest change and greatest id of its
 * rules for the trigger: every edit adds a version, every creation a greater time-ordered id,
 * every deletion changes the count, so an edit on another instance is seen at the next
 * evaluation), and only the
 * facts the rules use are queried, all at once (one round trip on PostgreSQL).
 */
import { and, asc, count, countDistinct, eq, gt, gte, inArray, isNull, max, or, sql, sum } from "drizzle-orm";
import { param, statements } from "../db/prepared.ts";
import { cases, enforcementActions, identities, reports, ruleHits, rules } from "../db/schema.ts";
import { recordAudit, systemActor } from "./audit.ts";
import { together, type DomainContext } from "./context.ts";
import { actionEnd, resolveReportWithAction } from "./enforcement.ts";
import { DomainError } from "./errors.ts";
import { newId } from "./ids.ts";
import { moveCaseToQueue } from "./queues.ts";
import { reporterAccuracy, reporterTallies, updateReporter } from "./reporters.ts";
import { evaluateCondition } from "./rule-conditions.ts";
import { addCaseTag } from "./tags.ts";
import type { Condition, Effect as RuleEffect, Facts, RuleField, RuleTrigger } from "./views/rule.ts";
import { applyTransition } from "./workflow-engine.ts";

type ReportRow = typeof reports.$inferSelect;
type RuleRow = typeof rules.$inferSelect;

/** A rule as evaluated: live or shadow, its condition and effects parsed once. */
export interface LoadedRule {
  id: string;
  projectId: string | null;
  name: string;
  mode: "live" | "shadow";
  version: number;
  when: Condition;
  then: RuleEffect[];
  /** The fields its condition reads that cost a query (subject.*, reporter.*, target.*). */
  queried: Set<RuleField>;
}

/** The effects of a rule row (its `then`), parsed. */
export const effectsOf = (rule: Pick<RuleRow, "thenJson">): RuleEffect[] => JSON.parse(rule.thenJson) as RuleEffect[];

/** The fields a condition reads. */
export function fieldsOf(when: Condition, into = new Set<RuleField>()): Set<RuleField> {
  const c = when as unknown as { all?: Condition[]; any?: Condition[]; not?: Condition; field?: RuleField };
  if (Array.isArray(c.all)) for (const x of c.all) fieldsOf(x, into);
  else if (Array.isArray(c.any)) for (const x of c.any) fieldsOf(x, into);
  else if (c.not) fieldsOf(c.not, into);
  else if (c.field) into.add(c.field);
  return into;
}

// ---------------------------------------------------------------------------------------------
// Statements: evaluation runs inside report intake, so they stay prepared (src/db/prepared.ts).

const ph = sql.placeholder;
const activeAction = and(
  isNull(enforcementActions.revokedAt),
  isNull(enforcementActions.expiredAt),
  or(isNull(enforcementActions.endsAt), gt(enforcementActions.endsAt, ph("now"))),
);
const engineStatements = statements((db) => ({
  stamp: db
    .select({ n: count(), v: sum(rules.version), at: max(rules.updatedAt), last: max(rules.id) })
    .from(rules)
    .where(and(eq(rules.orgId, ph("orgId")), eq(rules.trigger, ph("trigger"))))
    .prepare(),
  report: db.select().from(reports).where(and(eq(reports.id, ph("id")), eq(reports.orgId, ph("orgId")))).limit(1).prepare(),
  identity: db.select({ reportCount: identities.reportCount, trusted: identities.trustedFlagger }).from(identities).where(eq(identities.id, ph("id"))).limit(1).prepare(),
  openCases: db.select({ n: count() }).from(cases).where(and(eq(cases.subjectIdentityId, ph("id")), eq(cases.isOpen, 1))).prepare(),
  actions: db
    .select({
      active: sum(sql<number>`case when ${activeAction} then 1 else 0 end`),
      recent: sum(sql<number>`case when ${enforcementActions.createdAt} >= ${ph("since")} then 1 else 0 end`),
    })
    .from(enforcementActions)
    .where(eq(enforcementActions.identityId, ph("id")))
    .prepare(),
  reporterRecent: db.select({ n: count() }).from(reports).where(and(eq(reports.reporterIdentityId, ph("id")), gte(reports.createdUs, ph("sinceUs")))).prepare(),
  distinctReporters: db
    .select({ n: countDistinct(reports.reporterIdentityId) })
    .from(reports)
    .where(
      and(
        eq(reports.orgId, ph("orgId")),
        eq(reports.contentExternalId, ph("contentExternalId")),
        gte(reports.createdUs, ph("sinceUs")),
        eq(reports.projectId, ph("projectId")),
        eq(reports.contentType, ph("contentType")),
      ),
    )
    .prepare(),
  raisePriority: db
    .update(cases)
    .set({ priority: sql`${cases.priority} + ${ph("by")}` })
    .where(and(eq(cases.id, ph("id")), eq(cases.orgId, ph("orgId"))))
    .returning({ priority: cases.priority, projectId: cases.projectId })
    .prepare(),
  hit: db
    .insert(ruleHits)
    .values({ id: param("id"), orgId: param("orgId"), ruleId: param("ruleId"), version: param("version"), reportId: param("reportId"), effects: param("effects"), applied: param("applied"), at: param("at") })
    .prepare(),
}));

// ---------------------------------------------------------------------------------------------
// The rules of an organization, cached

interface RuleSet {
  stamp: string;
  rules: LoadedRule[];
  /** Every field the rules read: the facts to gather. */
  fields: Set<RuleField>;
}

/** By organization and trigger; checked against the stamp at every evaluation. */
const cache = new Map<string, RuleSet>();
const MAX_CACHED = 10_000;

/** What changes whenever a rule of the organization for the trigger is created, edited or deleted. */
async function ruleStamp(ctx: Pick<DomainContext, "db" | "orgId">, trigger: RuleTrigger): Promise<string> {
  const [row] = await engineStatements(ctx.db).stamp.execute({ orgId: ctx.orgId, trigger });
  return `${row?.n ?? 0}:${row?.v ?? 0}:${row?.at ?? 0}:${row?.last ?? ""}`;
}

/**
 * The organization's live and shadow rules for a trigger, oldest first, from the cache when its
 * stamp still holds (one small query), else read again.
 */
export async function rulesFor(ctx: Pick<DomainContext, "db" | "orgId">, trigger: RuleTrigger): Promise<RuleSet> {
  const key = `${ctx.orgId}\u0000${trigger}`;
  const stamp = await ruleStamp(ctx, trigger);
  const cached = cache.get(key);
  if (cached && cached.stamp === stamp) return cached;
  const rows = stamp.startsWith("0:")
    ? []
    : await ctx.db
        .select()
        .from(rules)
        .where(and(eq(rules.orgId, ctx.orgId), eq(rules.trigger, trigger), inArray(rules.mode, ["live", "shadow"])))
        .orderBy(asc(rules.createdAt), asc(rules.id));
  const loaded: LoadedRule[] = rows.map((r) => ({
    id: r.id,
    projectId: r.projectId,
    name: r.name,
    mode: r.mode as "live" | "shadow",
    version: r.version,
    when: JSON.parse(r.whenJson) as Condition,
    then: effectsOf(r),
    queried: new Set([...fieldsOf(JSON.parse(r.whenJson) as Condition)].filter((f) => !FREE_FIELDS.has(f))),
  }));
  const fields = new Set<RuleField>();
  for (const r of loaded) fieldsOf(r.when, fields);
  const set: RuleSet = { stamp, rules: loaded, fields };
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(key, set);
  return set;
}

// ---------------------------------------------------------------------------------------------
// Facts


const DAY_MS = 24 * 3600 * 1000;

/** The facts read from the report's row itself: they cost no query. */
const FREE_FIELDS: ReadonlySet<RuleField> = new Set<RuleField>([
  "report.reasons", "report.severity", "report.automated", "report.contentType", "report.text", "ai.severity", "ai.confidence", "ai.categories",
]);

/**
 * A condition evaluated over the facts known so far: true or false when they decide it, undefined
 * when it depends on a fact not gathered yet (`{ all: [reasons includes "child_safety", subject…] }`
 * is false for any other reason without a query).
 */
function decide(when: Condition, facts: Facts): boolean | undefined {
  if ("all" in when) {
    let open = false;
    for (const c of when.all) {
      const v = decide(c, facts);
      if (v === false) return false;
      if (v === undefined) open = true;
    }
    return open ? undefined : true;
  }
  if ("any" in when) {
    let open = false;
    for (const c of when.any) {
      const v = decide(c, facts);
      if (v === true) return true;
      if (v === undefined) open = true;
    }
    return open ? undefined : false;
  }
  if ("not" in when) {
    const v = decide(when.not, facts);
    return v === undefined ? undefined : !v;
  }
  return when.field in facts ? evaluateCondition(when, facts) : undefined;
}

/**
 * The facts of a report, every field of RULE_FIELDS unless `fields` names the ones wanted (the
 * others are left out, and so are their queries). The report's own fields cost nothing; the
 * subject's, reporter's and target's are counted in one batch of queries. A report of another
 * organization has no facts (an empty object).
 */
export async function gatherFacts(
  ctx: Pick<DomainContext, "db" | "orgId" | "clock">,
  input: { reportId: string; report?: ReportRow; fields?: ReadonlySet<RuleField> },
): Promise<Facts> {
  const report = input.report ?? (await engineStatements(ctx.db).report.execute({ id: input.reportId, orgId: ctx.orgId }))[0];
  if (!report || report.orgId !== ctx.orgId) return {};
  const want = (f: RuleField) => !input.fields || input.fields.has(f);
  const now = ctx.clock.now();
  const facts: Facts = {};
  const reasons = JSON.parse(report.reasons) as string[];
  if (want("report.reasons")) facts["report.reasons"] = reasons;
  if (want("report.severity")) facts["report.severity"] = report.severity;
  if (want("report.automated")) facts["report.automated"] = report.automated === 1;
  if (want("report.contentType")) facts["report.contentType"] = report.contentType || null;
  if (want("report.text")) facts["report.text"] = [report.description, report.content].filter((t): t is string => !!t).join("\n\n");
  if (want("ai.severity")) facts["ai.severity"] = report.aiAnalyzedAt != null ? report.aiSeverity : null;
  if (want("ai.confidence")) facts["ai.confidence"] = report.aiAnalyzedAt != null ? report.aiConfidence : null;
  if (want("ai.categories")) facts["ai.categories"] = report.aiAnalyzedAt != null ? (JSON.parse(report.aiCategories ?? "[]") as string[]) : [];

  const subjectId = report.subjectIdentityId;
  const reporterId = report.reporterIdentityId;
  const q = engineStatements(ctx.db);
  const sinceUs = (now - DAY_MS) * 1000;
  const first = async <T>(rows: Promise<T[]>): Promise<T | undefined> => (await rows)[0];
  const [subject, reporter, openCases, actions, tallies, reporterRecent, distinct] = await together(
    subjectId && want("subject.reportCount") ? first(q.identity.execute({ id: subjectId })) : undefined,
    reporterId && want("reporter.trusted") ? first(q.identity.execute({ id: reporterId })) : undefined,
    subjectId && want("subject.openCases") ? first(q.openCases.execute({ id: subjectId })) : undefined,
    subjectId && (want("subject.activeActions") || want("subject.actionsLast30d")) ? first(q.actions.execute({ id: subjectId, now, since: now - 30 * DAY_MS })) : undefined,
    reporterId && want("reporter.accuracy") ? reporterTallies(ctx, [reporterId]) : undefined,
    reporterId && want("reporter.reportsLast24h") ? first(q.reporterRecent.execute({ id: reporterId, sinceUs })) : undefined,
    report.contentExternalId != null && want("target.distinctReportersLast24h")
      ? first(
          q.distinctReporters.execute({
            orgId: ctx.orgId,
            contentExternalId: report.contentExternalId,
            sinceUs,
            projectId: report.projectId,
            contentType: report.contentType ?? "",
          }),
        )
      : undefined,
  );
  if (want("subject.reportCount")) facts["subject.reportCount"] = subject?.reportCount ?? 0;
  if (want("subject.openCases")) facts["subject.openCases"] = Number(openCases?.n ?? 0);
  if (want("subject.activeActions")) facts["subject.activeActions"] = Number(actions?.active ?? 0);
  if (want("subject.actionsLast30d")) facts["subject.actionsLast30d"] = Number(actions?.recent ?? 0);
  if (want("reporter.trusted")) facts["reporter.trusted"] = reporter?.trusted === 1;
  if (want("reporter.accuracy")) facts["reporter.accuracy"] = reporterId ? reporterAccuracy(tallies?.get(reporterId) ?? { upheld: 0, decided: 0 }) : null;
  if (want("reporter.reportsLast24h")) facts["reporter.reportsLast24h"] = Number(reporterRecent?.n ?? 0);
  if (want("target.distinctReportersLast24h")) facts["target.distinctReportersLast24h"] = Number(distinct?.n ?? 0);
  return facts;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

export interface RunRulesInput {
  trigger: RuleTrigger;
  reportId: string;
  /** The report's row when the caller holds it (report intake): saves reading it again. */
  report?: ReportRow;
}

/** What an evaluation did (for tests and callers that care). */
export interface RulesRun {
  evaluated: number;
  hits: { ruleId: string; version: number; applied: boolean }[];
}

/**
 * Evaluates the organization's live and shadow rules for the trigger against the report, in the
 * caller's transaction: records a hit for each match and applies the live ones' effects. Does
 * nothing while a rule's effects are being applied (no rule re-triggers itself or another).
 */
export async function runRules(ctx: DomainContext, input: RunRulesInput): Promise<RulesRun> {
  const none: RulesRun = { evaluated: 0, hits: [] };
  if (ctx.automation) return none;
  const set = await rulesFor(ctx, input.trigger);
  if (!set.rules.length) return none;
  const report = input.report ?? (await engineStatements(ctx.db).report.execute({ id: input.reportId, orgId: ctx.orgId }))[0];
  if (!report || report.orgId !== ctx.orgId) return none;
  const applicable = set.rules.filter((r) => r.projectId === null || r.projectId === report.projectId);
  if (!applicable.length) return none;
  // The report's own facts first; the queried ones only for the rules those leave undecided.
  const facts = await gatherFacts(ctx, { reportId: report.id, report, fields: FREE_FIELDS });
  const undecided = applicable.filter((r) => r.queried.size > 0 && decide(r.when, facts) === undefined);
  if (undecided.length) {
    const wanted = new Set<RuleField>();
    for (const r of undecided) for (const f of r.queried) wanted.add(f);
    const more = await gatherFacts(ctx, { reportId: report.id, report, fields: wanted });
    Object.assign(facts, more);
  }
  const matched = applicable.filter((r) => evaluateCondition(r.when, facts));
  if (!matched.length) return { evaluated: applicable.length, hits: [] };
  const now = ctx.clock.now();
  const insertHit = engineStatements(ctx.db).hit;
  await together(
    ...matched.map((r) =>
      insertHit.execute({ id: newId(), orgId: ctx.orgId, ruleId: r.id, version: r.version, reportId: report.id, effects: JSON.stringify(r.then), applied: r.mode === "live" ? 1 : 0, at: now }),
    ),
  );
  let routed = false;
  for (const rule of matched) {
    if (rule.mode !== "live") continue;
    const auto: DomainContext = { ...ctx, actor: systemActor, automation: { ruleId: rule.id, version: rule.version } };
    for (const effect of rule.then) {
      if (effect.type === "route") {
        if (routed) continue; // the first matching route wins
        routed = true;
      }
      await applyEffect(auto, rule, report, effect);
    }
  }
  return { evaluated: applicable.length, hits: matched.map((r) => ({ ruleId: r.id, version: r.version, applied: r.mode === "live" })) };
}

/**
 * One effect of a live rule: an effect the state no longer allows (dismissing a report a
 * moderator already decided, a queue deleted since) is skipped, and the others stand. Every
 * domain function an effect calls runs in a savepoint of its own (`transaction`), rolled back
 * when it refuses, so no savepoint is added here (intake is the hot path).
 */
async function applyEffect(ctx: DomainContext, rule: LoadedRule, report: ReportRow, effect: RuleEffect): Promise<void> {
  try {
    await applyOne(ctx, rule, report, effect);
  } catch (e) {
    if (e instanceof DomainError) return;
    throw e;
  }
}

async function applyOne(ctx: DomainContext, rule: LoadedRule, report: ReportRow, effect: RuleEffect): Promise<void> {
  const target = { reportId: report.id };
  switch (effect.type) {
    case "route":
      await moveCaseToQueue(ctx, { caseId: report.caseId, queueId: effect.queueId, automated: { ruleId: rule.id, version: rule.version } });
      return;
    case "priority": {
      const [c] = await engineStatements(ctx.db).raisePriority.execute({ id: report.caseId, orgId: ctx.orgId, by: effect.by });
      if (!c) return;
      await recordAudit(ctx, { projectId: c.projectId, action: "CASE_PRIORITY_CHANGED", entityType: "case", entityId: report.caseId, before: { priority: c.priority - effect.by }, after: { priority: c.priority } });
      return;
    }
    case "tag":
      await addCaseTag(ctx, { caseId: report.caseId, tag: effect.tag });
      return;
    case "escalate":
      await applyTransition(ctx, { target, move: { action: "escalate", team: effect.team, note: `Rule "${rule.name}" (v${rule.version})` }, refused: "skip" });
      return;
    case "dismiss":
      await applyTransition(ctx, { target, move: { action: "dismiss", reason: effect.reason, note: `Rule "${rule.name}" (v${rule.version})` }, refused: "skip" });
      return;
    case "resolve": {
      const note = `Rule "${rule.name}" (v${rule.version})`;
      if (effect.action) {
        const { durationSeconds, ...action } = effect.action;
        await resolveReportWithAction(ctx, {
          reportId: report.id,
          resolution: { code: effect.resolutionCode, note },
          action: { ...action, endsAt: actionEnd(ctx, { durationSeconds }) },
        });
      } else {
        await applyTransition(ctx, { target, move: { action: "resolve", code: effect.resolutionCode, note }, refused: "skip" });
      }
      return;
    }
    case "mute_reporter": {
      if (!report.reporterIdentityId) return;
      const [who] = await ctx.db.select({ projectId: identities.projectId, type: identities.type, externalId: identities.externalId }).from(identities).where(eq(identities.id, report.reporterIdentityId)).limit(1);
      if (!who) return;
      await updateReporter(ctx, {
        ...who,
        patch: { mutedUntil: ctx.clock.now() + effect.durationSeconds * 1000, muteReason: `Muted by rule "${rule.name}" (v${rule.version})`.slice(0, 500) },
      });
      return;
    }
  }
}
