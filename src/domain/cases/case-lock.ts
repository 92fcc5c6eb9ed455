/**
 * The case row is the lock of everything in a case (PostgreSQL, where instances write side by
 * side; on SQLite, one writer at a time, these are plain reads). A transaction that reads a
 * case's reports or status and writes from what it read takes its case's row first (FOR
 * UPDATE), and report intake holds it from its join (claimCase's upsert): so a decision and a
 * new report on one case take turns, and no report is left open in a case a decision closed.
 * Whoever locks a case and reporters' identities takes the case first (src/db/store.ts).
 */
import { and, eq, sql } from "drizzle-orm";
import { forUpdate, statements } from "../../db/prepared.ts";
import { cases, reports } from "../../db/schema.ts";
import { together, type DomainContext } from "../core/context.ts";

type CaseRow = typeof cases.$inferSelect;
type ReportRow = typeof reports.$inferSelect;

const lockStatements = statements((db) => ({
  caseById: forUpdate(
    db
      .select()
      .from(cases)
      .where(and(eq(cases.id, sql.placeholder("id")), eq(cases.orgId, sql.placeholder("orgId")))),
  ).prepare(),
  caseOfReport: forUpdate(
    db
      .select()
      .from(cases)
      .where(
        and(
          sql`${cases.id} = (${db.select({ caseId: reports.caseId }).from(reports).where(eq(reports.id, sql.placeholder("reportId")))})`,
          eq(cases.orgId, sql.placeholder("orgId")),
        ),
      ),
  ).prepare(),
  reportById: db
    .select()
    .from(reports)
    .where(and(eq(reports.id, sql.placeholder("reportId")), eq(reports.orgId, sql.placeholder("orgId"))))
    .prepare(),
}));

/** The case of the context's organization, its row locked until the transaction ends (undefined when there is none). */
export async function lockCase(ctx: Pick<DomainContext, "db" | "orgId">, caseId: string): Promise<CaseRow | undefined> {
  const [row] = await lockStatements(ctx.db).caseById.execute({ id: caseId, orgId: ctx.orgId });
  return row;
}

/**
 * A report and its case, the case's row locked, in one round trip: the case is locked first,
 * then the report read as it is once the lock is held. A report that moved to another case in
 * between (an escalation out of a closed case) comes back with its new case id: the caller
 * sees `report.caseId !== theCase.id` and runs again (TransactionConflict).
 */
export async function lockReportAndCase(
  ctx: Pick<DomainContext, "db" | "orgId">,
  reportId: string,
): Promise<{ report: ReportRow | undefined; theCase: CaseRow | undefined }> {
  const q = lockStatements(ctx.db);
  const locked = q.caseOfReport.execute({ reportId, orgId: ctx.orgId });
  const read = q.reportById.execute({ reportId, orgId: ctx.orgId });
  // Both awaited together: awaited one after the other, a failure of the first (a lost
  // connection fails both) would leave the second's unhandled, which ends the process.
  const [[theCase], [report]] = await together(Promise.resolve(locked), Promise.resolve(read));
  return { report, theCase };
}
