/**
 * Evaluation of rules (docs/rules.md, "Evaluation"): at a trigger (`report.created` inside
 * report intake, `report.enriched` when the AI enrichment of a report completes, `report.media_matched`
 * when a report's media matched a media bank: src/domain/banks/matching.ts), the
 * organization's live and shadow rules for it are evaluated against the report's facts, in the
 * caller's transaction. Every match is recorded in rule_hits (applied 1 for a live rule, 0 for a
 * shadow one), and so is every rule the evaluation's search budget left undecided
 * (budget_exceeded 1, no effect: src/domain/rules/rule-conditions.ts, SEARCH_BUDGET_MS); a live rule's
 * effects are applied at once, by Flagstaff itself (the system
 * actor), through the same domain functions a moderator's decisions go through (the workflow
 * engine, queues, tags, reporters, enforcement), each audit event carrying
 * `{ ruleId, version, automated: true }` (DomainContext.automation). Changes made by rules do not
 * evaluate rules again.
 *
 * Intake is the hot path: the rules of an organization are kept in memory, compiled. A change
 * made through this instance drops them (forgetRules) so the next report sees it; otherwise they
 * are checked once a second against a stamp (count, sum of versions, latest change and greatest
 * id of its rules for the trigger: every edit adds a version, every creation a greater
 * time-ordered id, every deletion changes the count), so a change made through another instance
 * is seen within a second. Only the facts the rules use are queried, all in one statement.
 */
import { and, asc, count, countDistinct, eq, gt, gte, inArray, isNotNull, isNull, lte, max, min, or, sql, sum, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { param, shapedStatements, statements } from "../../db/prepared.ts";
import { cases, enforcementActions, identities, mediaBanks, mediaMatches, organizations, reports, ruleHits, rules, strikes } from "../../db/schema.ts";
import { recordAudit, systemActor } from "../core/audit.ts";
import { DAY_MS, HOUR_MS } from "../core/clock.ts";
import { together, type DomainContext } from "../core/context.ts";
import { resolveReport } from "../enforcement/enforcement.ts";
import { unlessRefused } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { OPEN_CASE } from "../cases/open-case.ts";
import { moveCaseToQueue } from "../review/queues.ts";
import { accountAgeDays, type IdentityRow } from "../identities/identities.ts";
import { reporterAccuracy, tallyOf } from "../identities/reporter-tally.ts";
import { updateReporter } from "../identities/reporters.ts";
import { compileCondition, searchBudget, slotTable, type CompiledCondition } from "./rule-conditions.ts";
import { addCaseTag } from "../cases/tags.ts";
import type { Condition, Effect as RuleEffect, EffectOf, EffectType, Facts, RuleField, RuleTrigger } from "../views/rule.ts";
import { RULE_FIELD_NAMES, RULE_TRIGGERS } from "../views/rule-vocabulary.ts";
import { applyTransition } from "../review/workflow-engine.ts";

type ReportRow = typeof reports.$inferSelect;
type CaseRow = typeof cases.$inferSelect;
type RuleRow = typeof rules.$inferSelect;

/** A rule as evaluated: live or shadow, its condition and effects parsed once. */
export interface LoadedRule {
  id: string;
  projectId: string | null;
  name: string;
  mode: "live" | "shadow";
  version: number;
  when: Condition;
  /** `when`, compiled; its comparisons' slots are in the rule set's memo. */
  condition: CompiledCondition;
  then: RuleEffect[];
  /** `then` as stored (what a hit records). */
  thenJson: string;
  /** The fields its condition reads that cost a query (subject.*, reporter.*, target.*): bit i is QUERIED_FIELDS[i]. */
  queried: number;
  /** A reason the report must have for the condition to hold (its top `all` requires `report.reasons includes` it), else null. */
  requiredReason: string | null;
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
  // A scheduled action is not in force before its start is recorded (actionStatus).
  lte(enforcementActions.startsAt, ph("now")),
  eq(enforcementActions.awaitingStart, 0),
  isNull(enforcementActions.expiredAt),
  or(isNull(enforcementActions.endsAt), gt(enforcementActions.endsAt, ph("now"))),
);
/** The reports of the same content target in the window (placeholders orgId, projectId, contentType, contentExternalId, sinceUs). */
const sameTarget = and(
  eq(reports.orgId, ph("orgId")),
  eq(reports.contentExternalId, ph("contentExternalId")),
  gte(reports.createdUs, ph("sinceUs")),
  eq(reports.projectId, ph("projectId")),
  eq(reports.contentType, ph("contentType")),
);

const engineStatements = statements((db) => ({
  stamp: db
    .select({ n: count(), v: sum(rules.version), at: max(rules.updatedAt), last: max(rules.id) })
    .from(rules)
    .where(and(eq(rules.orgId, ph("orgId")), eq(rules.trigger, ph("trigger"))))
    .prepare(),
  report: db.select().from(reports).where(and(eq(reports.id, ph("id")), eq(reports.orgId, ph("orgId")))).prepare(),
  distinctReporters: db.select({ n: countDistinct(reports.reporterIdentityId) }).from(reports).where(sameTarget).prepare(),
  targetReporters: db.select({ id: reports.reporterIdentityId }).from(reports).where(and(sameTarget, isNotNull(reports.reporterIdentityId))).prepare(),
  caseDistinctReporters: db.select({ n: countDistinct(reports.reporterIdentityId) }).from(reports).where(eq(reports.caseId, ph("caseId"))).prepare(),
  caseMediaBanks: db
    .selectDistinct({ name: mediaBanks.name })
    .from(mediaMatches)
    .innerJoin(mediaBanks, eq(mediaBanks.id, mediaMatches.bankId))
    .where(and(eq(mediaMatches.caseId, ph("caseId")), eq(mediaMatches.suppressed, 0), eq(mediaMatches.quarantined, 0), actingBank()))
    .prepare(),
  caseReporters: db.select({ id: reports.reporterIdentityId }).from(reports).where(and(eq(reports.caseId, ph("caseId")), isNotNull(reports.reporterIdentityId))).prepare(),
  raisePriority: db
    .update(cases)
    .set({ priority: sql`${cases.priority} + ${ph("by")}` })
    .where(and(eq(cases.id, ph("id")), eq(cases.orgId, ph("orgId"))))
    .returning({ priority: cases.priority, projectId: cases.projectId })
    .prepare(),
  hit: db
    .insert(ruleHits)
    .values({
      id: param("id"),
      orgId: param("orgId"),
      ruleId: param("ruleId"),
      version: param("version"),
      reportId: param("reportId"),
      effects: param("effects"),
      applied: param("applied"),
      budgetExceeded: param("budgetExceeded"),
      at: param("at"),
    })
    .prepare(),
}));

/** The facts read from the report's row itself: they cost no query. */
const FREE_FIELD_NAMES = [
  "report.reasons", "report.severity", "report.automated", "report.contentType", "report.text", "ai.severity", "ai.confidence", "ai.categories",
] as const satisfies readonly RuleField[];
const FREE_FIELDS: ReadonlySet<RuleField> = new Set<RuleField>(FREE_FIELD_NAMES);

/** The facts that cost a query, each a column of one statement (factsStatement). */
type QueriedFact = Exclude<RuleField, (typeof FREE_FIELD_NAMES)[number]>;

/** The facts that cost a query, in the vocabulary's order (the shape of the facts statement, the bits of a rule's mask). */
const QUERIED_FIELDS = RULE_FIELD_NAMES.filter((f): f is QueriedFact => !FREE_FIELDS.has(f));

/**
 * The facts read from the rows of the report's subject and reporter: free when the caller holds
 * those rows (report intake has just written them), else read by the facts statement.
 */
const IDENTITY_FIELD_NAMES = ["subject.reportCount", "reporter.trusted", "reporter.accuracy", "reporter.accountAgeDays"] as const satisfies readonly QueriedFact[];
const IDENTITY_FIELDS: ReadonlySet<RuleField> = new Set<RuleField>(IDENTITY_FIELD_NAMES);
const FREE_WITH_IDENTITIES: ReadonlySet<RuleField> = new Set<RuleField>([...FREE_FIELD_NAMES, ...IDENTITY_FIELD_NAMES]);

/** The report's subject and reporter identities as the caller holds them (null: the report has none). */
export interface HeldIdentities {
  subject: IdentityRow | null;
  reporter: IdentityRow | null;
}

/**
 * The columns that count each queried fact, as scalar subqueries over the placeholders subjectId,
 * reporterId, caseId, now, since (ms), sinceUs, hourAgoUs, orgId, projectId, contentType and
 * contentExternalId. A null id matches no row, so its count is 0 (or null, read as 0).
 */
function factColumns(db: Db): Record<QueriedFact, Record<string, SQL>> {
  const one = (query: { getSQL(): SQL }) => sql`${query}`;
  return {
    "subject.reportCount": {
      subjectReportCount: one(db.select({ n: identities.reportCount }).from(identities).where(eq(identities.id, ph("subjectId")))),
    },
    "reporter.trusted": {
      reporterTrusted: one(db.select({ t: identities.trustedFlagger }).from(identities).where(eq(identities.id, ph("reporterId")))),
    },
    "reporter.accuracy": {
      upheld: one(db.select({ n: identities.reportsUpheld }).from(identities).where(eq(identities.id, ph("reporterId")))),
      decided: one(db.select({ n: identities.reportsDecided }).from(identities).where(eq(identities.id, ph("reporterId")))),
    },
    "subject.openCases": {
      // OPEN_CASE is a literal: a bound `is_open = ?` makes SQLite compile the whole statement again at every run (partial indexes).
      openCases: one(db.select({ n: count() }).from(cases).where(and(eq(cases.subjectIdentityId, ph("subjectId")), OPEN_CASE))),
    },
    "subject.activeActions": {
      activeActions: one(db.select({ n: count() }).from(enforcementActions).where(and(eq(enforcementActions.identityId, ph("subjectId")), activeAction))),
    },
    "subject.actionsLast30d": {
      actionsLast30d: one(db.select({ n: count() }).from(enforcementActions).where(and(eq(enforcementActions.identityId, ph("subjectId")), gte(enforcementActions.createdAt, ph("since"))))),
    },
    "subject.strikes": {
      // strikes_identity_idx (identity_id, expires_at): the subject's strikes not expired yet.
      subjectStrikes: one(db.select({ n: sum(strikes.count) }).from(strikes).where(and(eq(strikes.identityId, ph("subjectId")), gt(strikes.expiresAt, ph("now")), isNull(strikes.removedAt)))),
    },
    "reporter.accountAgeDays": {
      // The platform's word, in the metadata it mirrors (accountAgeDays reads it).
      reporterMetadata: one(db.select({ m: identities.metadata }).from(identities).where(eq(identities.id, ph("reporterId")))),
    },
    "reporter.reportsLast24h": {
      reporterRecent: one(db.select({ n: count() }).from(reports).where(and(eq(reports.reporterIdentityId, ph("reporterId")), gte(reports.createdUs, ph("sinceUs"))))),
    },
    "target.distinctReportersLast24h": {
      // The reports of the target with a reporter; when more than one, their distinct reporters
      // are counted by a second statement: count(distinct) opens a temporary b-tree whenever its
      // statement runs, which costs more than all the other facts together, and most content is
      // reported once. Up to DISTINCT_IN_JS reports, their reporters are read and counted in
      // JavaScript instead (targetReporters), cheaper than that b-tree. (Their count, least and
      // greatest reporter from a subquery joined here cost more still: SQLite materializes it.)
      targetReports: one(db.select({ n: count(reports.reporterIdentityId) }).from(reports).where(sameTarget)),
    },
    "case.distinctReporters": {
      // As the target's: the case's reports with a reporter here, their distinct reporters by a
      // second statement when more than one (read and counted up to DISTINCT_IN_JS).
      caseReports: one(db.select({ n: count(reports.reporterIdentityId) }).from(reports).where(eq(reports.caseId, ph("caseId")))),
    },
    "case.reportsLastHour": {
      // reports_case_idx (case_id, created_us): a range of the case's newest entries.
      caseRecent: one(db.select({ n: count() }).from(reports).where(and(eq(reports.caseId, ph("caseId")), gte(reports.createdUs, ph("hourAgoUs"))))),
    },
    // The case's media matches that act (docs/media.md): not suppressed by a negative bank, not
    // quarantined, not a negative bank's own (media_matches_case_idx).
    "media.matches": { mediaMatches: one(db.select({ n: count() }).from(mediaMatches).where(actingMatchOfCase(db))) },
    "media.banks": { mediaBankMatches: one(db.select({ n: count() }).from(mediaMatches).where(actingMatchOfCase(db))) },
    "media.distance": { mediaDistance: one(db.select({ d: min(mediaMatches.distance) }).from(mediaMatches).where(actingMatchOfCase(db))) },
  };
}

/**
 * A bank whose matches act: not a negative one, nor a deleted one (its matches' rows going a
 * slice at a time: bank-deletion.ts; `liveBank` of banks.ts said here, as banks/ imports rules/).
 */
const actingBank = () => and(eq(mediaBanks.negative, 0), isNull(mediaBanks.deletedAt));

/** A match of the report's case that acts: the media facts' condition. */
const actingMatchOfCase = (db: Db) =>
  and(
    eq(mediaMatches.caseId, ph("caseId")),
    eq(mediaMatches.suppressed, 0),
    eq(mediaMatches.quarantined, 0),
    inArray(mediaMatches.bankId, db.select({ id: mediaBanks.id }).from(mediaBanks).where(actingBank())),
  );

/**
 * The queried facts a set of rules needs, in one statement (one round trip, one statement to
 * run: intake is the hot path), prepared once per set of fields: a scalar subquery per fact,
 * over the organization's row.
 */
const factsStatement = shapedStatements((db, fields: readonly QueriedFact[]) => {
  const all = factColumns(db);
  const columns: Record<string, SQL> = {};
  for (const f of fields) Object.assign(columns, all[f]);
  return db.select(columns).from(organizations).where(eq(organizations.id, ph("orgId"))).prepare();
});

// ---------------------------------------------------------------------------------------------
// The rules of an organization, cached

interface RuleSet {
  stamp: string;
  /** When the stamp was last read (performance.now()). */
  checkedAt: number;
  rules: LoadedRule[];
  /** How many distinct comparisons the rules hold (the memo of an evaluation). */
  slots: number;
  /** The rules that apply to a project's reports (its own and the organization's), by project, as asked for. */
  byProject: Map<string, LoadedRule[]>;
}

/** The rules of the set that apply to a project's reports: its own and the organization's, in order. */
function rulesOfProject(set: RuleSet, projectId: string): LoadedRule[] {
  let out = set.byProject.get(projectId);
  if (out === undefined) {
    out = set.rules.filter((r) => r.projectId === null || r.projectId === projectId);
    set.byProject.set(projectId, out);
  }
  return out;
}

/** By organization and trigger. */
const cache = new Map<string, RuleSet>();
const MAX_CACHED = 10_000;

/**
 * How long a cached rule set is used before its stamp is read again. Rules changed through this
 * instance are seen by the next report (forgetRules); rules changed through another instance
 * (several instances on one PostgreSQL database) within this time.
 */
export const RULES_RECHECK_MS = 1000;

/** Counts forgetRules calls: a rule set read while one happened is used once, not kept. */
let generation = 0;

/**
 * Rules of the organization were created, edited or deleted in the caller's transaction: once it
 * commits, this instance reads them again at the next evaluation.
 */
export function forgetRules(ctx: Pick<DomainContext, "store" | "orgId">): void {
  const orgId = ctx.orgId;
  ctx.store.afterCommit(() => {
    generation++;
    for (const trigger of RULE_TRIGGERS) cache.delete(`${orgId}\u0000${trigger}`);
  });
}

/** What changes whenever a rule of the organization for the trigger is created, edited or deleted. */
async function ruleStamp(ctx: Pick<DomainContext, "db" | "orgId">, trigger: RuleTrigger): Promise<string> {
  const [row] = await engineStatements(ctx.db).stamp.execute({ orgId: ctx.orgId, trigger });
  return `${row?.n ?? 0}:${row?.v ?? 0}:${row?.at ?? 0}:${row?.last ?? ""}`;
}

/**
 * The organization's live and shadow rules for a trigger, oldest first: from the cache while it
 * is fresh (RULES_RECHECK_MS), then as long as its stamp still holds (one small query), else
 * read again.
 */
export async function rulesFor(ctx: Pick<DomainContext, "db" | "orgId">, trigger: RuleTrigger): Promise<RuleSet> {
  const key = `${ctx.orgId}\u0000${trigger}`;
  const cached = cache.get(key);
  const now = performance.now();
  if (cached && now - cached.checkedAt < RULES_RECHECK_MS) return cached;
  const seen = generation;
  const stamp = await ruleStamp(ctx, trigger);
  if (cached && cached.stamp === stamp) {
    if (seen === generation) cached.checkedAt = now;
    return cached;
  }
  const rows = stamp.startsWith("0:")
    ? []
    : await ctx.db
        .select()
        .from(rules)
        .where(and(eq(rules.orgId, ctx.orgId), eq(rules.trigger, trigger), inArray(rules.mode, ["live", "shadow"])))
        .orderBy(asc(rules.createdAt), asc(rules.id));
  const slots = slotTable();
  const loaded: LoadedRule[] = rows.map((r) => {
    const when = JSON.parse(r.whenJson) as Condition;
    const condition = compileCondition(when, slots);
    return {
      id: r.id,
      projectId: r.projectId,
      name: r.name,
      mode: r.mode as "live" | "shadow",
      version: r.version,
      when,
      condition,
      then: effectsOf(r),
      thenJson: r.thenJson,
      queried: queriedMask(fieldsOf(when)),
      requiredReason: requiredReason(when),
    };
  });
  const set: RuleSet = { stamp, checkedAt: now, rules: loaded, slots: slots.next, byProject: new Map() };
  if (seen !== generation) return set; // a change committed meanwhile: read again next time
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(key, set);
  return set;
}

// ---------------------------------------------------------------------------------------------
// Facts

/** The identity facts' bits in a rule's mask. */
const IDENTITY_MASK = queriedMask(IDENTITY_FIELDS);
const ALL_QUERIED_MASK = queriedMask(new Set(QUERIED_FIELDS));

/** Of the queried facts in `mask`, those the facts statement must count: not the identities' when their rows are held. */
const toQuery = (mask: number, held: HeldIdentities | undefined): number => (held ? mask & ~IDENTITY_MASK : mask);

/** Up to this many reports of a target, its distinct reporters are counted in JavaScript (targetReporters). */
const DISTINCT_IN_JS = 200;

/** The queried fields among `fields`, as a mask over QUERIED_FIELDS. */
function queriedMask(fields: ReadonlySet<RuleField>): number {
  let mask = 0;
  QUERIED_FIELDS.forEach((f, i) => {
    if (fields.has(f)) mask |= 1 << i;
  });
  return mask;
}

/**
 * A reason without which a condition cannot hold: the value of a `report.reasons includes`
 * comparison that is the condition, or one of its top `all`. Most rules start so (route child
 * safety reports…); a report without that reason skips the rule without evaluating it.
 */
function requiredReason(when: Condition): string | null {
  const isReasonTest = (c: Condition): c is Condition & { field: "report.reasons"; op: "includes"; value: string } =>
    "field" in c && c.field === "report.reasons" && c.op === "includes" && typeof c.value === "string";
  if (isReasonTest(when)) return when.value;
  if ("all" in when) for (const c of when.all) if (isReasonTest(c)) return c.value;
  return null;
}

/**
 * The facts of a report, every field of RULE_FIELDS unless `fields` names the ones wanted (the
 * others are left out, and so are their queries). The report's own fields cost nothing, and so
 * do its subject's and reporter's when the caller holds their rows (`held`); the others are
 * counted in one statement. A report of another organization has no facts (an empty object).
 */
export async function gatherFacts(
  ctx: Pick<DomainContext, "db" | "orgId" | "clock">,
  input: { reportId: string; report?: ReportRow; fields?: ReadonlySet<RuleField>; held?: HeldIdentities },
): Promise<Facts> {
  const report = input.report ?? (await engineStatements(ctx.db).report.execute({ id: input.reportId, orgId: ctx.orgId }))[0];
  if (!report || report.orgId !== ctx.orgId) return {};
  const want = (f: RuleField) => !input.fields || input.fields.has(f);
  const facts: Facts = {};
  if (want("report.reasons")) facts["report.reasons"] = JSON.parse(report.reasons) as string[];
  if (want("report.severity")) facts["report.severity"] = report.severity;
  if (want("report.automated")) facts["report.automated"] = report.automated === 1;
  if (want("report.contentType")) facts["report.contentType"] = report.contentType || null;
  if (want("report.text")) facts["report.text"] = [report.description, report.content].filter((t): t is string => !!t).join("\n\n");
  if (want("ai.severity")) facts["ai.severity"] = report.aiAnalyzedAt != null ? report.aiSeverity : null;
  if (want("ai.confidence")) facts["ai.confidence"] = report.aiAnalyzedAt != null ? report.aiConfidence : null;
  if (want("ai.categories")) facts["ai.categories"] = report.aiAnalyzedAt != null ? (JSON.parse(report.aiCategories ?? "[]") as string[]) : [];

  const { held } = input;
  if (held) {
    if (want("subject.reportCount")) facts["subject.reportCount"] = held.subject?.reportCount ?? 0;
    if (want("reporter.trusted")) facts["reporter.trusted"] = held.reporter?.trustedFlagger === 1;
    if (want("reporter.accuracy")) facts["reporter.accuracy"] = held.reporter ? reporterAccuracy(tallyOf(held.reporter)) : null;
    if (want("reporter.accountAgeDays")) facts["reporter.accountAgeDays"] = accountAgeDays(held.reporter?.metadata ?? null, ctx.clock.now());
  }
  const mask = toQuery(input.fields ? queriedMask(input.fields) : ALL_QUERIED_MASK, held);
  if (mask !== 0) Object.assign(facts, await queriedFacts(ctx, report, mask));
  return facts;
}

/** The queried facts of a report, those of `mask` (bits of QUERIED_FIELDS), counted by the facts statement. */
async function queriedFacts(ctx: Pick<DomainContext, "db" | "orgId" | "clock">, report: ReportRow, mask: number): Promise<Facts> {
  const facts: Facts = {};
  const asked = (f: QueriedFact) => (mask & (1 << QUERIED_FIELDS.indexOf(f))) !== 0;
  const now = ctx.clock.now();
  const target = { orgId: ctx.orgId, sinceUs: (now - DAY_MS) * 1000, projectId: report.projectId, contentType: report.contentType ?? "", contentExternalId: report.contentExternalId };
  const [row] = (await factsStatement(ctx.db, String(mask), QUERIED_FIELDS.filter((_, i) => mask & (1 << i))).execute({
    ...target,
    subjectId: report.subjectIdentityId,
    reporterId: report.reporterIdentityId,
    caseId: report.caseId,
    now,
    since: now - 30 * DAY_MS,
    hourAgoUs: (now - HOUR_MS) * 1000,
  })) as Record<string, unknown>[];
  const n = (v: unknown) => Number(v ?? 0);
  const reporterId = report.reporterIdentityId;
  if (asked("subject.reportCount")) facts["subject.reportCount"] = n(row?.subjectReportCount);
  if (asked("subject.openCases")) facts["subject.openCases"] = n(row?.openCases);
  if (asked("subject.activeActions")) facts["subject.activeActions"] = n(row?.activeActions);
  if (asked("subject.actionsLast30d")) facts["subject.actionsLast30d"] = n(row?.actionsLast30d);
  if (asked("subject.strikes")) facts["subject.strikes"] = n(row?.subjectStrikes);
  if (asked("reporter.trusted")) facts["reporter.trusted"] = n(row?.reporterTrusted) === 1;
  if (asked("reporter.accuracy")) facts["reporter.accuracy"] = reporterId ? reporterAccuracy({ upheld: n(row?.upheld), decided: n(row?.decided) }) : null;
  if (asked("reporter.reportsLast24h")) facts["reporter.reportsLast24h"] = n(row?.reporterRecent);
  if (asked("reporter.accountAgeDays")) facts["reporter.accountAgeDays"] = accountAgeDays((row?.reporterMetadata as string | null | undefined) ?? null, now);
  if (asked("case.reportsLastHour")) facts["case.reportsLastHour"] = n(row?.caseRecent);
  if (asked("case.distinctReporters")) {
    const reportsOfCase = n(row?.caseReports);
    const q = engineStatements(ctx.db);
    const key = { caseId: report.caseId };
    facts["case.distinctReporters"] =
      reportsOfCase <= 1
        ? reportsOfCase
        : reportsOfCase <= DISTINCT_IN_JS
          ? new Set((await q.caseReporters.execute(key)).map((r) => r.id)).size
          : n((await q.caseDistinctReporters.execute(key))[0]?.n);
  }
  if (asked("media.matches")) facts["media.matches"] = n(row?.mediaMatches);
  if (asked("media.distance")) facts["media.distance"] = row?.mediaDistance == null ? null : Number(row.mediaDistance);
  if (asked("media.banks")) facts["media.banks"] = n(row?.mediaBankMatches) === 0 ? [] : (await engineStatements(ctx.db).caseMediaBanks.execute({ caseId: report.caseId })).map((b) => b.name).sort();
  if (asked("target.distinctReportersLast24h")) {
    const reportsOfTarget = report.contentExternalId == null ? 0 : n(row?.targetReports);
    const q = engineStatements(ctx.db);
    facts["target.distinctReportersLast24h"] =
      reportsOfTarget <= 1
        ? reportsOfTarget
        : reportsOfTarget <= DISTINCT_IN_JS
          ? new Set((await q.targetReporters.execute(target)).map((r) => r.id)).size
          : n((await q.distinctReporters.execute(target))[0]?.n);
  }
  return facts;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

export interface RunRulesInput {
  trigger: RuleTrigger;
  reportId: string;
  /** The report's row when the caller holds it (report intake): saves reading it again. */
  report?: ReportRow;
  /** Its subject's and reporter's rows when the caller holds them (report intake): their facts cost no query. */
  identities?: HeldIdentities;
  /** Its case as the caller holds it (report intake, which has just written it): the route and tag effects do not read it again. */
  caseRow?: CaseRow;
}

/** What an evaluation did (for tests and callers that care). */
export interface RulesRun {
  evaluated: number;
  hits: { ruleId: string; version: number; applied: boolean }[];
  /** The rules the search budget left undecided: recorded as hits with `budgetExceeded`, no effect taken. */
  budgetExceeded: { ruleId: string; version: number }[];
}

/**
 * Evaluates the organization's live and shadow rules for the trigger against the report, in the
 * caller's transaction: records a hit for each match and applies the live ones' effects. Does
 * nothing while a rule's effects are being applied (no rule re-triggers itself or another).
 */
export async function runRules(ctx: DomainContext, input: RunRulesInput): Promise<RulesRun> {
  const none: RulesRun = { evaluated: 0, hits: [], budgetExceeded: [] };
  if (ctx.automation) return none;
  const set = await rulesFor(ctx, input.trigger);
  if (!set.rules.length) return none;
  const report = input.report ?? (await engineStatements(ctx.db).report.execute({ id: input.reportId, orgId: ctx.orgId }))[0];
  if (!report || report.orgId !== ctx.orgId) return none;
  const applicable = rulesOfProject(set, report.projectId);
  if (!applicable.length) return none;
  // The report's own facts first (and its identities' when held); the queried ones only for the rules those leave undecided.
  const held = input.identities;
  const facts = await gatherFacts(ctx, { reportId: report.id, report, fields: held ? FREE_WITH_IDENTITIES : FREE_FIELDS, held });
  const reasons = facts["report.reasons"] as string[];
  const memo = new Uint8Array(set.slots);
  // The searches of both passes share one budget (SEARCH_BUDGET_MS): what the rules may cost a report.
  const budget = searchBudget();
  const candidates: LoadedRule[] = [];
  let wanted = 0;
  for (const r of applicable) {
    // A rule whose required reason the report lacks is false: not evaluated at all.
    if (r.requiredReason !== null && !reasons.includes(r.requiredReason)) continue;
    candidates.push(r);
    // Whether the report's own facts leave the rule undecided matters only when it reads a
    // field not queried yet: the rules of a set mostly read the same few.
    if ((r.queried & ~wanted) !== 0 && r.condition.test(facts, memo, true, budget) === undefined) wanted |= r.queried;
  }
  wanted = toQuery(wanted, held);
  if (wanted !== 0) Object.assign(facts, await queriedFacts(ctx, report, wanted));
  const matched: LoadedRule[] = [];
  const undecided: LoadedRule[] = [];
  for (const r of candidates) {
    const v = r.condition.test(facts, memo, false, budget);
    if (v === true) matched.push(r);
    else if (v === undefined) undecided.push(r); // every fact is gathered: only the budget leaves a rule undecided
  }
  const budgetExceeded = undecided.map((r) => ({ ruleId: r.id, version: r.version }));
  if (!matched.length && !undecided.length) return { evaluated: applicable.length, hits: [], budgetExceeded };
  const now = ctx.clock.now();
  const insertHit = engineStatements(ctx.db).hit;
  const hit = (r: LoadedRule, effects: string, applied: 0 | 1, overBudget: 0 | 1) =>
    insertHit.execute({ id: newId(), orgId: ctx.orgId, ruleId: r.id, version: r.version, reportId: report.id, effects, applied, budgetExceeded: overBudget, at: now });
  await together(...matched.map((r) => hit(r, r.thenJson, r.mode === "live" ? 1 : 0, 0)), ...undecided.map((r) => hit(r, "[]", 0, 1)));
  if (!matched.length) return { evaluated: applicable.length, hits: [], budgetExceeded };
  // The effect types taken once per report (APPLY's `firstOnly`: the first matching route wins), once taken.
  const taken = new Set<EffectType>();
  // The case as the caller gave it, while no effect has changed what the route and tag effects read of it.
  let caseRow = input.caseRow;
  for (const rule of matched) {
    if (rule.mode !== "live") continue;
    const auto: DomainContext = { ...ctx, actor: systemActor, automation: { ruleId: rule.id, version: rule.version } };
    for (const effect of rule.then) {
      const how = applierOf(effect.type);
      if (how.firstOnly) {
        if (taken.has(effect.type)) continue;
        taken.add(effect.type);
      }
      await applyEffect(auto, { report, caseRow, rule }, effect);
      if (!how.keepsHeldCase) caseRow = undefined;
    }
  }
  return { evaluated: applicable.length, hits: matched.map((r) => ({ ruleId: r.id, version: r.version, applied: r.mode === "live" })), budgetExceeded };
}

/**
 * One effect of a live rule: an effect the state no longer allows (dismissing a report a
 * moderator already decided, a queue deleted since) is skipped, and the others stand. No
 * refused effect leaves a write behind: the workflow engine, enforcement and reporters run in
 * a savepoint of their own (`transaction`), rolled back when they refuse; the route and tag
 * effects (moveCaseToQueue, addCaseTag) refuse before they write, and take no savepoint, since
 * intake is the hot path.
 */
async function applyEffect(ctx: DomainContext, on: EffectTarget, effect: RuleEffect): Promise<void> {
  await unlessRefused(applierOf(effect.type).apply(ctx, effect, on));
}

/** What an effect applies to: the report, and its case when held; and the rule that takes it. */
interface EffectTarget {
  report: ReportRow;
  caseRow: CaseRow | undefined;
  rule: LoadedRule;
}

/** How the engine takes an effect of type T. */
interface EffectApplier<T extends EffectType> {
  /** Takes it, by the system actor (`ctx`), through the domain function a moderator's decision goes through; throws a DomainError when the state refuses it. */
  apply: (ctx: DomainContext, effect: EffectOf<T>, on: EffectTarget) => Promise<void>;
  /** Only the first effect of this type among the matching live rules' is taken (the first matching route wins). */
  firstOnly?: true;
  /** The case row the caller held still serves the route and tag effects after this one (it changes nothing they read of it). */
  keepsHeldCase?: true;
}

/** How a decision, and a mute, an effect takes names its rule. */
const ruleNamed = (rule: LoadedRule) => `"${rule.name}" (v${rule.version})`;
const ruleNote = (rule: LoadedRule) => `Rule ${ruleNamed(rule)}`;

/**
 * How each effect type of the rule language (RULE_EFFECTS, src/domain/views/rule-effects.ts) is
 * taken: keyed by every EffectType, so a new effect type does not compile until it is here.
 */
const APPLY: { [T in EffectType]: EffectApplier<T> } = {
  route: {
    apply: async (ctx, effect, { report, caseRow }) => {
      await moveCaseToQueue(ctx, { caseId: report.caseId, queueId: effect.queueId, caseRow });
    },
    firstOnly: true,
  },
  priority: {
    apply: async (ctx, effect, { report }) => {
      const [c] = await engineStatements(ctx.db).raisePriority.execute({ id: report.caseId, orgId: ctx.orgId, by: effect.by });
      if (!c) return;
      await recordAudit(ctx, { projectId: c.projectId, action: "CASE_PRIORITY_CHANGED", entityType: "case", entityId: report.caseId, before: { priority: c.priority - effect.by }, after: { priority: c.priority } });
    },
    keepsHeldCase: true,
  },
  tag: {
    apply: async (ctx, effect, { report, caseRow }) => {
      await addCaseTag(ctx, { caseId: report.caseId, tag: effect.tag, caseRow });
    },
    keepsHeldCase: true,
  },
  escalate: {
    apply: async (ctx, effect, { report, rule }) => {
      await applyTransition(ctx, { target: { reportId: report.id }, move: { action: "escalate", team: effect.team, note: ruleNote(rule) }, refused: "skip" });
    },
  },
  dismiss: {
    apply: async (ctx, effect, { report, rule }) => {
      await applyTransition(ctx, { target: { reportId: report.id }, move: { action: "dismiss", reason: effect.reason, note: ruleNote(rule) }, refused: "skip" });
    },
  },
  resolve: {
    // The resolve route's own rule (resolveReport): the action given, else the one the code
    // implies (CONTENT_LEVEL_ACTION: a content removal with its statement of reasons); a
    // report no longer open is a 409, skipped like every refused effect.
    apply: async (ctx, effect, { report, rule }) => {
      await resolveReport(ctx, { reportId: report.id, resolution: { code: effect.resolutionCode, note: ruleNote(rule) }, action: effect.action });
    },
  },
  mute_reporter: {
    apply: async (ctx, effect, { report, rule }) => {
      if (!report.reporterIdentityId) return;
      const [who] = await ctx.db.select({ projectId: identities.projectId, type: identities.type, externalId: identities.externalId }).from(identities).where(eq(identities.id, report.reporterIdentityId)).limit(1);
      if (!who) return;
      await updateReporter(ctx, {
        ...who,
        patch: { mutedUntil: ctx.clock.now() + effect.durationSeconds * 1000, muteReason: `Muted by rule ${ruleNamed(rule)}`.slice(0, 500) },
      });
    },
  },
};

/** The applier of an effect's type, taking any effect: APPLY gives each type's applier the effects of that type only. */
const applierOf = (type: EffectType) => APPLY[type] as EffectApplier<EffectType>;
