/**
 * Who reported a case, in figures (issue 27: a case with many reporters reads as one): how many
 * reports and distinct reporters, how many of those are new, trusted or muted, how their
 * accuracy spreads, and the reasons' counts. Counted in SQL with aggregates, three statements
 * whatever the case holds (a pile-on may bring thousands of reports; on SQLite the event loop is
 * given back between two: readsApart): the case's reports by its
 * index (reports_case_idx), its reporters' identity rows once each (their tallies are kept on
 * them: src/domain/identities/reporter-tally.ts), its reasons grouped (one row per reason).
 */
import { and, asc, count, desc, eq, gte, inArray, isNotNull, lt, ne, sql, type SQL } from "drizzle-orm";
import { identities, reportReasons, reports } from "../../db/schema.ts";
import { HOUR_MS } from "../core/clock.ts";
import type { DomainContext, ReadContext } from "../core/context.ts";
import type { AccessContext } from "../access/queue-access.ts";
import { ACCURACY_MIN_DECIDED, SUMMARY_REASONS, type AccuracyBand, type ReporterSummary } from "../views/case.ts";
import { talliesHiddenFrom, type ReporterTally } from "../identities/reporter-tally.ts";
import { requireCase, type CaseRow } from "./cases.ts";
import { readsApart } from "../plumbing/slices.ts";

export type { ReporterSummary } from "../views/case.ts";

/** 1 when the condition holds, else 0, to be summed. */
const oneIf = (condition: SQL) => sql<number>`coalesce(sum(case when ${condition} then 1 else 0 end), 0)`;

/**
 * The three statements of a case's summary, at the context's clock (exported for the query-plan
 * test: each reads the case's reports by reports_case_idx, never a scan of the reports). Built,
 * not run: the caller awaits them, as reportListQueries' callers do.
 */
export function reporterSummaryQueries(ctx: Pick<ReadContext, "db" | "clock">, c: Pick<CaseRow, "id" | "createdAt">) {
  const { db } = ctx;
  const now = ctx.clock.now();
  const ofCase = eq(reports.caseId, c.id);
  const reportersOfCase = db.select({ id: reports.reporterIdentityId }).from(reports).where(and(ofCase, isNotNull(reports.reporterIdentityId)));
  // A reporter is new when it had filed no report before the case was opened (one probe of
  // reports_reporter_identity_idx per reporter). The identity's id is named with its table:
  // drizzle leaves a one-table select's columns bare, which inside this lookup would name the
  // reports' own id.
  const identityId = sql`${sql.identifier("identities")}.${sql.identifier("id")}`;
  const earlier = db
    .select({ one: sql`1` })
    .from(reports)
    .where(and(sql`${reports.reporterIdentityId} = ${identityId}`, lt(reports.createdUs, c.createdAt * 1000), ne(reports.caseId, c.id)));
  const { reportsUpheld: upheld, reportsDecided: decided } = identities;
  const enough = sql`${decided} >= ${ACCURACY_MIN_DECIDED}`;
  return {
    totals: db
      .select({
        reports: count(),
        withReporter: count(reports.reporterIdentityId),
        lastHour: oneIf(gte(reports.createdUs, (now - HOUR_MS) * 1000)),
      })
      .from(reports)
      .where(ofCase),
    people: db
      .select({
        distinct: count(),
        // drizzle puts a subquery in parentheses itself.
        fresh: oneIf(sql`not exists ${earlier}`),
        trusted: oneIf(eq(identities.trustedFlagger, 1)),
        muted: oneIf(sql`${identities.mutedUntil} > ${now}`),
        noDecided: oneIf(eq(decided, 0)),
        fewDecided: oneIf(sql`${decided} > 0 and ${decided} < ${ACCURACY_MIN_DECIDED}`),
        mostlyUpheld: oneIf(sql`${enough} and ${upheld} * 3 >= ${decided} * 2`),
        mostlyNotUpheld: oneIf(sql`${enough} and ${upheld} * 3 <= ${decided}`),
      })
      .from(identities)
      .where(inArray(identities.id, reportersOfCase)),
    // One row per reason the case's reports give: as many as the project has categories.
    reasons: db
      .select({ reason: reportReasons.name, reports: count() })
      .from(reportReasons)
      .innerJoin(reports, eq(reports.id, reportReasons.reportId))
      .where(ofCase)
      .groupBy(reportReasons.name)
      .orderBy(desc(count()), asc(reportReasons.name)),
  };
}

/** A tally's band, as the `people` statement above counts them in SQL. */
function accuracyBand(t: ReporterTally): AccuracyBand {
  if (t.decided === 0) return "noDecided";
  if (t.decided < ACCURACY_MIN_DECIDED) return "fewDecided";
  if (t.upheld * 3 >= t.decided * 2) return "mostlyUpheld";
  if (t.upheld * 3 <= t.decided) return "mostlyNotUpheld";
  return "mixed";
}

/**
 * The reporter summary of a case the caller may work (requireCase: the one access check; a case
 * in a queue the caller may not work is not found).
 */
export async function reporterSummary(ctx: Pick<DomainContext, "db" | "clock" | "orgId" | "store"> & AccessContext, input: { caseId: string }): Promise<ReporterSummary> {
  const c = await requireCase(ctx, input.caseId);
  const q = reporterSummaryQueries(ctx, c);
  const [[totals], [people], reasons, hidden] = await readsApart(ctx.store.engine, [
    () => q.totals,
    () => q.people,
    () => q.reasons,
    () => talliesHiddenFrom(ctx, ctx.db.select({ id: reports.reporterIdentityId }).from(reports).where(and(eq(reports.caseId, c.id), isNotNull(reports.reporterIdentityId)))),
  ] as const);
  const n = (v: unknown) => Number(v ?? 0);
  const distinct = n(people?.distinct);
  const bands = { mostlyUpheld: n(people?.mostlyUpheld), mostlyNotUpheld: n(people?.mostlyNotUpheld), noDecided: n(people?.noDecided), fewDecided: n(people?.fewDecided), mixed: 0 };
  // A reporter of a report the blind-review wall hides from the caller is counted in the band of
  // its tally as the caller may see it (src/domain/identities/reporter-tally.ts, talliesHiddenFrom).
  for (const { kept, seen } of hidden.values()) {
    bands[accuracyBand(kept)]--;
    bands[accuracyBand(seen)]++;
  }
  const { mostlyUpheld, mostlyNotUpheld, noDecided, fewDecided } = bands;
  return {
    caseId: c.id,
    reports: n(totals?.reports),
    anonymousReports: n(totals?.reports) - n(totals?.withReporter),
    reportsLastHour: n(totals?.lastHour),
    distinctReporters: distinct,
    newReporters: n(people?.fresh),
    trustedReporters: n(people?.trusted),
    mutedReporters: n(people?.muted),
    accuracy: { noDecided, fewDecided, mostlyUpheld, mostlyNotUpheld, mixed: distinct - noDecided - fewDecided - mostlyUpheld - mostlyNotUpheld },
    reasons: reasons.slice(0, SUMMARY_REASONS).map((r) => ({ reason: r.reason, reports: n(r.reports) })),
    moreReasons: Math.max(0, reasons.length - SUMMARY_REASONS),
  };
}
