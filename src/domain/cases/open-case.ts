/**
 * Which open case a report belongs to: the rule shared by report creation (joinOrOpenCase in
 * cases.ts) and the workflow engine (a report escalated out of a closed case goes to the case
 * open for its target by then). Its own module so that the engine, which cases.ts calls, does
 * not import cases.ts back.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import { statements } from "../../db/prepared.ts";
import { cases } from "../../db/schema.ts";
import type { DomainContext } from "../core/context.ts";

/** What decides a report's case: its content target, else its subject. */
export interface CaseKey {
  orgId: string;
  projectId: string;
  contentType: string | null;
  contentExternalId: string | null;
  subjectIdentityId: string | null;
}

/** The open case a report with this target (else this subject) belongs to, if there is one. */
export async function findOpenCase(ctx: Pick<DomainContext, "db">, key: CaseKey): Promise<typeof cases.$inferSelect | undefined> {
  if (key.contentExternalId != null) {
    const rows = await openCaseStatements(ctx.db).openForTarget.execute({
      projectId: key.projectId,
      contentType: key.contentType ?? "",
      contentExternalId: key.contentExternalId,
    });
    return rows[0];
  }
  if (key.subjectIdentityId != null) {
    const rows = await openCaseStatements(ctx.db).openForSubject.execute({ projectId: key.projectId, subjectIdentityId: key.subjectIdentityId });
    return rows[0];
  }
  return undefined;
}

/**
 * Every report creation looks up (and joins or opens) a case: kept prepared (src/db/prepared.ts).
 * `is_open = 1` is written as a literal, not a bound value: SQLite picks a partial index
 * (cases_open_target_idx, cases_open_subject_idx: `WHERE is_open = 1 …`) only when it can see at
 * prepare time that the query implies the index's condition; with `is_open = ?` it scans the table.
 */
export const OPEN_CASE = sql`${cases.isOpen} = 1`;
const openCaseStatements = statements((db) => ({
  openForTarget: db
    .select()
    .from(cases)
    .where(
      and(
        eq(cases.projectId, sql.placeholder("projectId")),
        eq(cases.contentType, sql.placeholder("contentType")),
        eq(cases.contentExternalId, sql.placeholder("contentExternalId")),
        OPEN_CASE,
      ),
    )
    .prepare(),
  openForSubject: db
    .select()
    .from(cases)
    .where(
      and(
        eq(cases.projectId, sql.placeholder("projectId")),
        eq(cases.subjectIdentityId, sql.placeholder("subjectIdentityId")),
        isNull(cases.contentExternalId),
        OPEN_CASE,
      ),
    )
    .prepare(),
}));
