/**
 * What a reporter's decided reports came to, and the accuracy it makes (DSA Art. 23 weighs
 * reporters by it): what counts as upheld and as decided is stated once, here. Each identity
 * keeps its tally (identities.reports_upheld and reports_decided), recounted from its reports
 * by the workflow engine whenever a transition may change it, so reading a reporter's accuracy
 * (the reporter's page, the case page, a rule on intake) costs no look at its reports.
 */
import { and, asc, eq, inArray, isNotNull, not, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { forUpdate } from "../../db/prepared.ts";
import { cases, identities, reports } from "../../db/schema.ts";
import { together, type DomainContext } from "../core/context.ts";
import { reportNotReviewedBlind, type AccessContext } from "../access/queue-access.ts";
import type { Status } from "../views/workflow.ts";
import { breathe } from "../plumbing/event-loop.ts";

/** What a reporter's decided reports came to. */
export interface ReporterTally {
  /** Reports resolved, or closed with their resolution standing (an appeal upheld it). */
  upheld: number;
  /** Reports resolved, dismissed or closed, leaving out the system's dismissals of a muted reporter's reports. */
  decided: number;
}

/**
 * The accuracy of a reporter: upheld ÷ decided with a uniform prior (Laplace's rule,
 * Beta(1, 1)), (upheld + 1) / (decided + 2), so one report makes 2/3 or 1/3, never 100 % or
 * 0 %, and a reporter with no decided report stands at 1/2.
 */
export const reporterAccuracy = (t: ReporterTally): number => (t.upheld + 1) / (t.decided + 2);

/** The tally an identity holds. */
export const tallyOf = (row: { reportsUpheld: number; reportsDecided: number }): ReporterTally => ({ upheld: row.reportsUpheld, decided: row.reportsDecided });

/**
 * The statuses in which a report counts: a report moving into or out of one (or a case, whose
 * decision says whether its closed reports' resolutions stand) changes its reporters' tallies.
 */
export const TALLIED_STATUSES: ReadonlySet<Status> = new Set<Status>(["RESOLVED", "CLOSED", "DISMISSED"]);

/** Marker of the system's dismissal of a muted reporter's report in its stored record (workflow-engine.ts). */
const MUTED_DISMISSAL = '%"mutedReporter":true%';

// Named with their tables: drizzle leaves a one-table select's columns bare, and the correlated
// lookups below must not resolve to the inner table's columns of the same name.
const qualified = (table: string, column: string) => sql`${sql.identifier(table)}.${sql.identifier(column)}`;
const [caseDecision, caseId, reportCaseId, identityId] = [
  qualified("cases", "decision"), qualified("cases", "id"), qualified("reports", "case_id"), qualified("identities", "id"),
];

/**
 * A reporter's tally as aggregate columns over its reports. A CLOSED report's resolution stands
 * unless its case's appeal overturned it; only then is its case read (a correlated lookup by key).
 */
const tallyColumns = {
  upheld: sql<number>`coalesce(sum(case when ${reports.status} = 'RESOLVED' then 1
      when ${reports.status} = 'CLOSED' and ${reports.resolution} is not null
        then case when coalesce((select ${caseDecision} from ${cases} where ${caseId} = ${reportCaseId}), '') <> 'overturn' then 1 else 0 end
      else 0 end), 0)`,
  decided: sql<number>`coalesce(sum(case when ${reports.status} in ('RESOLVED', 'CLOSED')
      or (${reports.status} = 'DISMISSED' and coalesce(${reports.dismissal}, '') not like ${MUTED_DISMISSAL})
    then 1 else 0 end), 0)`,
};

/**
 * The tallies of some reporters (identity ids) counted from their reports, as the recount
 * writes them: for checking the kept ones (tests), never on a hot path.
 */
export async function countTallies(ctx: Pick<DomainContext, "db">, identityIds: string[]): Promise<Map<string, ReporterTally>> {
  const out = new Map<string, ReporterTally>();
  if (!identityIds.length) return out;
  const rows = await ctx.db
    .select({ id: reports.reporterIdentityId, ...tallyColumns })
    .from(reports)
    .where(inArray(reports.reporterIdentityId, identityIds))
    .groupBy(reports.reporterIdentityId);
  for (const r of rows) if (r.id) out.set(r.id, { upheld: Number(r.upheld), decided: Number(r.decided) });
  return out;
}

/**
 * The reporters among `among` (identity ids, or a subquery of them) who filed a report the
 * blind-review wall hides from the caller (src/domain/access/queue-access.ts), each with its
 * tally as kept and as the caller may see it, recounted without those reports: a reporter's
 * accuracy would tell how the decision the caller reviews blind went. Empty for a caller who
 * reviews nothing blind (no query then).
 */
export async function talliesHiddenFrom(ctx: AccessContext, among: readonly string[] | SQLWrapper): Promise<Map<string, { kept: ReporterTally; seen: ReporterTally }>> {
  const out = new Map<string, { kept: ReporterTally; seen: ReporterTally }>();
  const visible = await reportNotReviewedBlind(ctx);
  if (!visible || (Array.isArray(among) && !among.length)) return out;
  const touched = await ctx.db
    .selectDistinct({ id: identities.id, reportsUpheld: identities.reportsUpheld, reportsDecided: identities.reportsDecided })
    .from(reports)
    .innerJoin(identities, eq(identities.id, reports.reporterIdentityId))
    .where(and(inArray(reports.reporterIdentityId, among as string[] | SQLWrapper), not(visible)));
  if (!touched.length) return out;
  const seen = await ctx.db
    .select({ id: reports.reporterIdentityId, ...tallyColumns })
    .from(reports)
    .where(and(inArray(reports.reporterIdentityId, touched.map((t) => t.id)), visible))
    .groupBy(reports.reporterIdentityId);
  const byId = new Map(seen.map((r) => [r.id, { upheld: Number(r.upheld), decided: Number(r.decided) }] as const));
  for (const t of touched) out.set(t.id, { kept: tallyOf(t), seen: byId.get(t.id) ?? { upheld: 0, decided: 0 } });
  return out;
}

/**
 * Reporters a statement of the recount takes at most. A case of more reports (a pile-on, whose
 * reporters are as many) is recounted that many reporters at a time, the event loop given back
 * between two: its 40,000 reporters in one statement held SQLite, and so every request, 140 ms.
 */
export const RECOUNT_REPORTERS = 1_000;

/**
 * Recounts the tallies of the reporters of a case's reports, in the caller's transaction (the
 * workflow engine's, after a transition that moved a report or the case into or out of
 * TALLIED_STATUSES), each reporter's reports read by its index. `reports`: how many the case
 * holds (its report_count); up to `perStatement` (RECOUNT_REPORTERS), one round trip for the
 * reporters of the case, else their ids read first and recounted `perStatement` at a time.
 */
export async function recountCaseReporters(
  ctx: Pick<DomainContext, "db">,
  input: { caseId: string; reports: number; perStatement?: number },
): Promise<void> {
  const perStatement = input.perStatement ?? RECOUNT_REPORTERS;
  const reportersOfCase = ctx.db
    .select({ id: reports.reporterIdentityId })
    .from(reports)
    .where(and(eq(reports.caseId, input.caseId), isNotNull(reports.reporterIdentityId)));
  if (input.reports <= perStatement) return recount(ctx, reportersOfCase);
  const ids = await ctx.db.selectDistinct({ id: identities.id }).from(identities).where(inArray(identities.id, reportersOfCase)).orderBy(asc(identities.id));
  for (let at = 0; at < ids.length; at += perStatement) {
    if (at > 0) await breathe();
    await recount(ctx, ids.slice(at, at + perStatement).map((r) => r.id));
  }
}

/**
 * Recounts these reporters' tallies. Two decisions on cases of one reporter (PostgreSQL: side by
 * side) take turns on the reporter's row, in the order of ids, so the second counts the first's
 * decision; the recount runs once the rows are held (one round trip for both statements). A
 * recount in parts takes its parts in the order of ids too.
 */
async function recount(ctx: Pick<DomainContext, "db">, among: string[] | SQLWrapper): Promise<void> {
  const counted = (column: SQL) => sql`(${ctx.db.select({ n: column }).from(reports).where(sql`${reports.reporterIdentityId} = ${identityId}`)})`;
  const lock = forUpdate(ctx.db.select({ id: identities.id }).from(identities).where(inArray(identities.id, among)).orderBy(asc(identities.id)));
  await together(
    lock,
    ctx.db
      .update(identities)
      .set({ reportsUpheld: counted(tallyColumns.upheld), reportsDecided: counted(tallyColumns.decided) })
      .where(inArray(identities.id, among)),
  );
}
