/**
 * The transparency report (DSA Art. 15, and Art. 24(1) for online platforms): for a period of
 * whole UTC days, what came in and what was decided — reports and notices by category and
 * source, decisions by kind and ground, automated detections and decisions, appeals and their
 * outcomes, and the median time from a report to its decision. A read of the organization's
 * data (optionally one project's; on SQLite a window of time at a time: readWindowMs), answered
 * as JSON (the view in ./views/transparency.ts) or as CSV (`section,key,value` rows).
 */
import { csvText } from "../plumbing/csv.ts";
import { and, asc, count, eq, gt, gte, inArray, isNotNull, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import { appeals, enforcementActions, reportReasons, reports, statements } from "../../db/schema.ts";
import type { Db } from "../../db/client.ts";
import { shapedStatements } from "../../db/prepared.ts";
import { DAY_MS, HOUR_MS, iso } from "../core/clock.ts";
import { breathe } from "../plumbing/event-loop.ts";
import { breatheBetweenReads, readWindowMs, windowsOf } from "../plumbing/slices.ts";
import type { DomainContext } from "../core/context.ts";
import { badRequest } from "../core/errors.ts";
import { REPORT_SOURCES, type KeyedCount, type TransparencyReport } from "../views/transparency.ts";
import { requireEveryCase, type AccessContext } from "../access/queue-access.ts";
import { decidedWithinTarget } from "../service-levels/service-levels.ts";

/** The longest period one report covers: a (leap) year. */
export const MAX_REPORT_DAYS = 366;
/** The default period: the 30 days up to today. */
const DEFAULT_DAYS = 30;

export interface ReportPeriod {
  /** YYYY-MM-DD, first day (UTC). */
  from: string;
  /** YYYY-MM-DD, last day included (UTC). */
  to: string;
  fromMs: number;
  /** Exclusive: the start of the day after `to`. */
  toMs: number;
}

const ymd = (ms: number) => iso(ms).slice(0, 10);

/** A YYYY-MM-DD date as the UTC midnight it starts, or a 400 naming the parameter. */
function parseDay(name: string, value: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  // Date.UTC rolls 2026-02-30 over to March: a date that does not round-trip does not exist.
  if (!m || Number.isNaN(ms) || ymd(ms) !== value) throw badRequest(`${name}: must be a date YYYY-MM-DD (got ${JSON.stringify(value.slice(0, 40))})`);
  return ms;
}

/**
 * The period of `from` … `to` (both included, whole UTC days). Either may be left out: `to`
 * defaults to today, `from` to 29 days before `to`. 400 when a date is not one, when `from` is
 * after `to`, or when the period is longer than MAX_REPORT_DAYS.
 */
export function reportPeriod(input: { from?: string; to?: string }, now: number): ReportPeriod {
  const toDay = input.to === undefined ? parseDay("to", ymd(now)) : parseDay("to", input.to);
  const fromDay = input.from === undefined ? toDay - (DEFAULT_DAYS - 1) * DAY_MS : parseDay("from", input.from);
  if (fromDay > toDay) throw badRequest(`from: ${ymd(fromDay)} is after to (${ymd(toDay)})`);
  const days = (toDay - fromDay) / DAY_MS + 1;
  if (days > MAX_REPORT_DAYS) throw badRequest(`from, to: the period is ${days} days; a report covers at most ${MAX_REPORT_DAYS}`);
  return { from: ymd(fromDay), to: ymd(toDay), fromMs: fromDay, toMs: toDay + DAY_MS };
}

/** The median of some numbers (the mean of the middle two for an even count), null for none. */
export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
}

/** Counts as `{ key, count }`, largest first, then by key (a stable order for tables and CSV). */
function keyed(counts: Map<string, number>): KeyedCount[] {
  return [...counts.entries()].map(([key, n]) => ({ key, count: n })).sort((a, b) => b.count - a.count || a.key.localeCompare(b.key));
}

function bump(counts: Map<string, number>, key: string, by = 1): void {
  counts.set(key, (counts.get(key) ?? 0) + by);
}

/** A report's source, as the statements say it (src/domain/enforcement/statements.ts follows the same rule). */
function sourceOf(trusted: number, hasNotice: number): (typeof REPORT_SOURCES)[number] {
  if (trusted === 1) return "SOURCE_TRUSTED_FLAGGER";
  if (hasNotice === 1) return "SOURCE_ARTICLE_16";
  return "SOURCE_VOLUNTARY";
}

/** Every source with its count (zeros included, so a table always has the three rows). */
const allSources = (counts: Map<string, number>): KeyedCount[] => REPORT_SOURCES.map((key) => ({ key, count: counts.get(key) ?? 0 }));

function parseJson(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/**
 * The reads repeated for each window of time, every value a placeholder, prepared once per
 * connection and shape (with a project or without: src/db/prepared.ts). On SQLite a year is
 * about 1,460 six-hour windows, each of them four statements: building and compiling each anew
 * cost more than running it (255 to 580 ms a year on a database of a few hundred reports).
 */
const windowReads = shapedStatements((db: Db, q: { project: boolean }) => {
  const hasNotice = sql<number>`case when ${reports.notice} is null then 0 else 1 end`;
  const ofProject = (column: typeof reports.projectId | typeof statements.projectId) => (q.project ? eq(column, sql.placeholder("projectId")) : undefined);
  const reportWhere = and(eq(reports.orgId, sql.placeholder("orgId")), gte(reports.createdUs, sql.placeholder("loUs")), lt(reports.createdUs, sql.placeholder("hiUs")), ofProject(reports.projectId));
  return {
    /** Reports received in the window, by source and automation. */
    received: db
      .select({ trusted: reports.reporterTrusted, notice: hasNotice, automated: reports.automated, n: count() })
      .from(reports)
      .where(reportWhere)
      .groupBy(reports.reporterTrusted, hasNotice, reports.automated)
      .prepare(),
    // From the window's reports (a range of their (org, created) index) to their reasons: the
    // reasons' own index leads with the name, so a time range of it reads every reason.
    byReason: db
      .select({ name: reportReasons.name, trusted: reports.reporterTrusted, notice: hasNotice, n: count() })
      .from(reports)
      .innerJoin(reportReasons, eq(reportReasons.reportId, reports.id))
      .where(reportWhere)
      .groupBy(reportReasons.name, reports.reporterTrusted, hasNotice)
      .prepare(),
    /** A page of the reports created in the window after `afterUs`, decided and changed since the period's start. */
    decided: db
      .select({ createdUs: reports.createdUs, resolution: reports.resolution, dismissal: reports.dismissal })
      .from(reports)
      .where(
        and(
          eq(reports.orgId, sql.placeholder("orgId")),
          gt(reports.createdUs, sql.placeholder("afterUs")),
          lt(reports.createdUs, sql.placeholder("hiUs")),
          gte(reports.updatedAt, sql.placeholder("fromMs")),
          or(isNotNull(reports.resolution), isNotNull(reports.dismissal)),
          ofProject(reports.projectId),
        ),
      )
      .orderBy(asc(reports.createdUs))
      .limit(sql.placeholder("limit"))
      .prepare(),
    /** Statements of reasons made in the window. */
    statements: db
      .select({ body: statements.body })
      .from(statements)
      .where(and(eq(statements.orgId, sql.placeholder("orgId")), gte(statements.createdAt, sql.placeholder("lo")), lt(statements.createdAt, sql.placeholder("hi")), ofProject(statements.projectId)))
      .prepare(),
  };
});

/** Decided reports the transparency report reads a statement (transparencyReport's `decidedPageRows` in tests). */
export const DECIDED_PAGE_ROWS = 2_000;

/**
 * The report of the context's organization for the period `from` … `to` (reportPeriod: 400 for
 * a bad one), of one project when `projectId` is given (the caller checked it belongs to the
 * organization).
 */
export async function transparencyReport(
  ctx: Pick<DomainContext, "clock" | "store"> & AccessContext,
  input: { from?: string; to?: string; projectId?: string | null },
  decidedPageRows = DECIDED_PAGE_ROWS,
): Promise<TransparencyReport> {
  // The organization's figures over every queue (DSA Art. 15/24), not a queue's.
  await requireEveryCase(ctx);
  const period = reportPeriod(input, ctx.clock.now());
  const projectId = input.projectId ?? null;
  const { fromMs, toMs } = period;
  const windowMs = readWindowMs(ctx.store.engine);
  // Nothing is filed, decided or stated after now: the windowed reads stop there (an hour on, for
  // a report time handed out a little ahead of the clock). A period ending in the year 9999 had
  // them walk six-hour windows up to it: minutes of one core, the request never answered.
  const readToMs = Math.min(toMs, ctx.clock.now() + HOUR_MS);

  // Reports received in the period, by source and automation, and by category (their reasons)
  // with the source of each: counts, added up window by window.
  const bySource = new Map<string, number>();
  let reportTotal = 0;
  let automatedReports = 0;
  const categories = new Map<string, Map<string, number>>();
  const reads = windowReads(ctx.db, projectId ? "project" : "organization", { project: projectId !== null });
  const scope = { orgId: ctx.orgId, ...(projectId ? { projectId } : {}) };
  for (const [lo, hi] of windowsOf(fromMs, readToMs, windowMs)) {
    const window = { ...scope, loUs: lo * 1000, hiUs: hi * 1000 };
    for (const r of await reads.received.execute(window)) {
      const n = Number(r.n);
      reportTotal += n;
      if (Number(r.automated) === 1) automatedReports += n;
      bump(bySource, sourceOf(Number(r.trusted), Number(r.notice)), n);
    }
    for (const r of await reads.byReason.execute(window)) {
      const sources = categories.get(r.name) ?? new Map<string, number>();
      bump(sources, sourceOf(Number(r.trusted), Number(r.notice)), Number(r.n));
      categories.set(r.name, sources);
    }
    await breatheBetweenReads(windowMs);
  }
  const byCategory = [...categories.entries()]
    .map(([category, sources]) => ({ category, count: [...sources.values()].reduce((a, b) => a + b, 0), bySource: allSources(sources) }))
    .sort((a, b) => b.count - a.count || a.category.localeCompare(b.category));

  // Decisions taken in the period: a report's resolution or dismissal records when (`at`). A
  // report decided in the period was created before its end and updated since its start: read by
  // windows of creation from the organization's first report (no index serves `updated_at`).
  const [first] = await ctx.db.select({ us: sql<number | string | null>`min(${reports.createdUs})` }).from(reports).where(eq(reports.orgId, ctx.orgId));
  const firstMs = first?.us === null || first?.us === undefined ? toMs : Math.floor(Number(first.us) / 1000);
  const resolved = new Map<string, number>();
  const dismissed = new Map<string, number>();
  let decisionTotal = 0;
  let automatedDecisions = 0;
  let mutedDismissals = 0;
  const waits: number[] = [];
  for (const [lo, hi] of windowsOf(Math.min(firstMs, readToMs), readToMs, windowMs)) {
    // A page at a time in creation order (unique in an organization), each page's decisions
    // read and the event loop given back before the next: on PostgreSQL, where the period is one
    // window, 30 days of decided reports in one answer held every request for 60 to 110 ms
    // while they were read here.
    for (let afterUs = lo * 1000 - 1; ; ) {
      const decidedRows = await reads.decided.execute({ ...scope, afterUs, hiUs: hi * 1000, fromMs, limit: decidedPageRows });
      for (const r of decidedRows) {
        const resolution = parseJson(r.resolution);
        const dismissal = parseJson(r.dismissal);
        const decision = resolution ?? dismissal;
        const at = decision ? Date.parse(String(decision.at)) : NaN;
        if (!decision || Number.isNaN(at) || at < fromMs || at >= toMs) continue;
        decisionTotal++;
        if (resolution) bump(resolved, str(resolution.code) ?? "unspecified");
        else bump(dismissed, str(dismissal!.reason) ?? "unspecified");
        const by = decision.by as { type?: unknown } | undefined;
        if (by?.type === "system") automatedDecisions++;
        if (!resolution && dismissal?.mutedReporter === true) {
          mutedDismissals++;
          continue;
        }
        waits.push(Math.max(0, at - Math.floor(Number(r.createdUs) / 1000)));
      }
      if (decidedRows.length < decidedPageRows) break;
      afterUs = Number(decidedRows[decidedRows.length - 1]!.createdUs);
      await breathe();
    }
    await breatheBetweenReads(windowMs);
  }

  // Enforcement actions taken in the period: those that took effect in it (a scheduled one at its
  // start, once the scheduler recorded it; one cancelled before that never did). For any other,
  // startsAt is its creation.
  const t = enforcementActions;
  const actionWhere: SQL[] = [
    eq(t.orgId, ctx.orgId),
    gte(t.startsAt, fromMs),
    lt(t.startsAt, Math.min(toMs, ctx.clock.now() + 1)),
    eq(t.awaitingStart, 0),
    or(isNull(t.revokedAt), gte(t.revokedAt, t.startsAt))!,
  ];
  if (projectId) actionWhere.push(eq(enforcementActions.projectId, projectId));
  const actionRows = await ctx.db
    .select({ kind: enforcementActions.kind, n: count() })
    .from(enforcementActions)
    .where(and(...actionWhere))
    .groupBy(enforcementActions.kind);
  const byKind = new Map<string, number>();
  for (const r of actionRows) bump(byKind, r.kind, Number(r.n));

  // Statements of reasons made in the period, by their fields.
  const byGround = new Map<string, number>();
  const byStatementCategory = new Map<string, number>();
  const byStatementSource = new Map<string, number>();
  const detection = new Map<string, number>();
  const automation = new Map<string, number>();
  let statementTotal = 0;
  for (const [lo, hi] of windowsOf(fromMs, readToMs, windowMs)) {
    const statementRows = await reads.statements.execute({ ...scope, lo, hi });
    statementTotal += statementRows.length;
    for (const r of statementRows) {
      const body = parseJson(r.body);
      if (!body) continue;
      bump(byGround, str(body.decision_ground) ?? "unspecified");
      bump(byStatementCategory, str(body.category) ?? "unspecified");
      bump(byStatementSource, str(body.source_type) ?? "unspecified");
      bump(detection, str(body.automated_detection) ?? "unspecified");
      bump(automation, str(body.automated_decision) ?? "unspecified");
    }
    await breatheBetweenReads(windowMs);
  }

  // Appeals: received in the period (and how many of those still wait), decided in the period.
  const projectAppeals = projectId
    ? inArray(appeals.actionId, ctx.db.select({ id: enforcementActions.id }).from(enforcementActions).where(eq(enforcementActions.projectId, projectId)))
    : undefined;
  const receivedAppeals = await ctx.db
    .select({ status: appeals.status, n: count() })
    .from(appeals)
    .where(and(eq(appeals.orgId, ctx.orgId), gte(appeals.createdAt, fromMs), lt(appeals.createdAt, toMs), projectAppeals))
    .groupBy(appeals.status);
  let appealsReceived = 0;
  let appealsPending = 0;
  for (const r of receivedAppeals) {
    appealsReceived += Number(r.n);
    if (r.status === "pending") appealsPending += Number(r.n);
  }
  const decidedAppeals = await ctx.db
    .select({ status: appeals.status, createdAt: appeals.createdAt, decidedAt: appeals.decidedAt })
    .from(appeals)
    .where(and(eq(appeals.orgId, ctx.orgId), isNotNull(appeals.decidedAt), gte(appeals.decidedAt, fromMs), lt(appeals.decidedAt, toMs), projectAppeals));
  let upheld = 0;
  let overturned = 0;
  const appealWaits: number[] = [];
  for (const a of decidedAppeals) {
    if (a.status === "upheld") upheld++;
    else if (a.status === "overturned") overturned++;
    if (a.decidedAt !== null) appealWaits.push(Math.max(0, a.decidedAt - a.createdAt));
  }

  const levels = await decidedWithinTarget(ctx, { fromMs, toMs, projectId });
  const share = (within: number, of: number) => (of ? within / of : null);

  const article16 = bySource.get("SOURCE_ARTICLE_16") ?? 0;
  const trustedFlagger = bySource.get("SOURCE_TRUSTED_FLAGGER") ?? 0;
  return {
    period: { from: period.from, to: period.to, projectId },
    generatedAt: iso(ctx.clock.now()),
    reports: { total: reportTotal, bySource: allSources(bySource), byCategory, automated: automatedReports },
    notices: { total: article16 + trustedFlagger, article16, trustedFlagger },
    decisions: {
      total: decisionTotal,
      resolved: keyed(resolved),
      dismissed: keyed(dismissed),
      automated: automatedDecisions,
      mutedReporterDismissals: mutedDismissals,
      medianMsToDecision: median(waits),
    },
    actions: { total: [...byKind.values()].reduce((a, b) => a + b, 0), byKind: keyed(byKind) },
    statements: {
      total: statementTotal,
      byGround: keyed(byGround),
      byCategory: keyed(byStatementCategory),
      bySource: keyed(byStatementSource),
      automatedDetection: keyed(detection),
      automatedDecision: keyed(automation),
    },
    appeals: { received: appealsReceived, pending: appealsPending, upheld, overturned, medianMsToDecision: median(appealWaits) },
    serviceLevels: {
      ...levels,
      casesShareWithinTarget: share(levels.casesWithinTarget, levels.casesDecided),
      appealsShareWithinTarget: share(levels.appealsWithinTarget, levels.appealsDecided),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// CSV

/** The CSV's header row. */
export const REPORT_CSV_HEADER = ["section", "key", "value"] as const;

/**
 * The report as CSV, one `section,key,value` row per number (RFC 4180, CRLF line ends), the
 * same numbers as the JSON: `reports.category.<source>` rows carry a category's count per source.
 */
export function transparencyReportCsv(r: TransparencyReport): string {
  const rows: (string | number | null)[][] = [[...REPORT_CSV_HEADER]];
  const add = (section: string, key: string, value: string | number | null) => rows.push([section, key, value]);
  const addAll = (section: string, counts: KeyedCount[]) => counts.forEach((c) => add(section, c.key, c.count));
  add("period", "from", r.period.from);
  add("period", "to", r.period.to);
  add("period", "project_id", r.period.projectId);
  add("period", "generated_at", r.generatedAt);
  add("reports", "total", r.reports.total);
  add("reports", "automated", r.reports.automated);
  addAll("reports.source", r.reports.bySource);
  for (const c of r.reports.byCategory) {
    add("reports.category", c.category, c.count);
    for (const s of c.bySource) add(`reports.category.${s.key}`, c.category, s.count);
  }
  add("notices", "total", r.notices.total);
  add("notices", "article_16", r.notices.article16);
  add("notices", "trusted_flagger", r.notices.trustedFlagger);
  add("decisions", "total", r.decisions.total);
  add("decisions", "automated", r.decisions.automated);
  add("decisions", "muted_reporter_dismissals", r.decisions.mutedReporterDismissals);
  add("decisions", "median_ms_to_decision", r.decisions.medianMsToDecision);
  addAll("decisions.resolved", r.decisions.resolved);
  addAll("decisions.dismissed", r.decisions.dismissed);
  add("actions", "total", r.actions.total);
  addAll("actions.kind", r.actions.byKind);
  add("statements", "total", r.statements.total);
  addAll("statements.decision_ground", r.statements.byGround);
  addAll("statements.category", r.statements.byCategory);
  addAll("statements.source_type", r.statements.bySource);
  addAll("statements.automated_detection", r.statements.automatedDetection);
  addAll("statements.automated_decision", r.statements.automatedDecision);
  add("appeals", "received", r.appeals.received);
  add("appeals", "pending", r.appeals.pending);
  add("appeals", "upheld", r.appeals.upheld);
  add("appeals", "overturned", r.appeals.overturned);
  add("appeals", "median_ms_to_decision", r.appeals.medianMsToDecision);
  add("service_levels", "cases_decided", r.serviceLevels.casesDecided);
  add("service_levels", "cases_within_target", r.serviceLevels.casesWithinTarget);
  add("service_levels", "cases_share_within_target", r.serviceLevels.casesShareWithinTarget);
  add("service_levels", "appeals_decided", r.serviceLevels.appealsDecided);
  add("service_levels", "appeals_within_target", r.serviceLevels.appealsWithinTarget);
  add("service_levels", "appeals_share_within_target", r.serviceLevels.appealsShareWithinTarget);
  return csvText(rows);
}
