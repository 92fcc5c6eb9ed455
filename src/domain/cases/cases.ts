import { and, asc, desc, eq, inArray, isNotNull, lt, ne, or, sql, type SQL } from "drizzle-orm";
import { param, statements } from "../../db/prepared.ts";
import { caseNotes, cases, identities, reports } from "../../db/schema.ts";
import { recordAudit, type Actor } from "../core/audit.ts";
import { iso, isoOrNull } from "../core/clock.ts";
import { lockCase } from "./case-lock.ts";
import { rowLockedTransaction, transaction, type DomainContext } from "../core/context.ts";
import { conflict, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { storedStrings } from "../plumbing/stored-json.ts";
import type { CaseKey } from "./open-case.ts";
import { holderOf } from "./claims.ts";
import { assertMayWorkCase, listableCases, type AccessContext } from "../access/queue-access.ts";
import { BUCKETS, higherBucket, type Bucket } from "./severity.ts";
import type { Status } from "../views/workflow.ts";
import type { CaseDecisionAction, CaseView, NoteView } from "../views/case.ts";

export type { CaseView, NoteView } from "../views/case.ts";

export type CaseRow = typeof cases.$inferSelect;

/**
 * A case as clients see it at `now`: `assigneeId` is who holds it now, so a review-mode claim
 * that lapsed reads as nobody's, as everywhere else (claims.ts).
 */
export const toCaseView = (c: CaseRow, now: number): CaseView => {
  const holder = holderOf(c, now);
  return {
    id: c.id,
    projectId: c.projectId,
    status: c.status as Status,
    bucket: c.bucket,
    contentType: c.contentType || null,
    contentExternalId: c.contentExternalId,
    subjectIdentityId: c.subjectIdentityId,
    reportCount: c.reportCount,
    assigneeId: holder,
    assignedAt: holder === null ? null : isoOrNull(c.assignedAt),
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
    lastReportAt: iso(c.lastReportAt),
    queueId: c.queueId,
    escalation: c.escalatedTeam ? { team: c.escalatedTeam, at: iso(c.escalatedAt ?? c.updatedAt) } : null,
    decision:
      c.decision && c.decidedAt != null
        ? { action: c.decision as CaseDecisionAction, code: c.decisionCode, at: iso(c.decidedAt), by: { type: (c.decidedByType ?? "system") as Actor["type"], id: c.decidedById } }
        : null,
  };
};

/**
 * Every report creation joins or opens a case: kept prepared (src/db/prepared.ts). The open
 * case of a key is found through its partial unique index (cases_open_target_idx,
 * cases_open_subject_idx), which is also what keeps it one: an insert that meets the open case
 * joins it instead (ON CONFLICT … DO UPDATE), in one statement that leaves the case's row
 * locked until the commit. `is_open = 1` is a literal: the conflict target names the index by
 * its condition, which must be the index's own.
 */
const caseStatements = statements((db) => {
  const values = {
    id: param("id"),
    orgId: param("orgId"),
    projectId: param("projectId"),
    status: param("status"),
    bucket: param("bucket"),
    isOpen: param("isOpen"),
    contentType: param("contentType"),
    contentExternalId: param("contentExternalId"),
    subjectIdentityId: param("subjectIdentityId"),
    reportCount: param("reportCount"),
    assigneeId: param("assigneeId"),
    assignedAt: param("assignedAt"),
    createdAt: param("createdAt"),
    updatedAt: param("updatedAt"),
    lastReportAt: param("lastReportAt"),
  };
  // One more report: its time is the last report's and the case's change.
  const joined = { reportCount: sql`${cases.reportCount} + 1`, lastReportAt: sql`excluded.last_report_at`, updatedAt: sql`excluded.updated_at` };
  const joinTarget = (subject: SQL | typeof values.subjectIdentityId) =>
    db
      .insert(cases)
      .values({ ...values, subjectIdentityId: subject })
      .onConflictDoUpdate({
        target: [cases.projectId, cases.contentType, cases.contentExternalId],
        targetWhere: sql`${cases.isOpen} = 1 AND ${cases.contentExternalId} IS NOT NULL`,
        set: joined,
      })
      .returning()
      .prepare();
  return {
    joinTarget: joinTarget(values.subjectIdentityId),
    // A new case names its subject, when the subject's identity is there already (an identity
    // seen for the first time by this report is inserted after the case, and named by settleCase).
    joinTargetOfSubject: joinTarget(
      sql`(${db
        .select({ id: identities.id })
        .from(identities)
        .where(
          and(
            eq(identities.projectId, sql.placeholder("projectId")),
            eq(identities.type, sql.placeholder("subjectType")),
            eq(identities.externalId, sql.placeholder("subjectExternalId")),
          ),
        )})`,
    ),
    joinSubject: db
      .insert(cases)
      .values(values)
      .onConflictDoUpdate({
        target: [cases.projectId, cases.subjectIdentityId],
        targetWhere: sql`${cases.isOpen} = 1 AND ${cases.contentExternalId} IS NULL AND ${cases.subjectIdentityId} IS NOT NULL`,
        set: joined,
      })
      .returning()
      .prepare(),
    insert: db.insert(cases).values(values).returning().prepare(),
    setBucket: db.update(cases).set({ bucket: param("bucket") }).where(eq(cases.id, sql.placeholder("id"))).prepare(),
    setSubject: db.update(cases).set({ subjectIdentityId: param("subjectIdentityId") }).where(eq(cases.id, sql.placeholder("id"))).prepare(),
    // Every decision and every rule's effect on a case reads it first. No `limit`: the key gives
    // one row, and SQLite runs a bound `limit ?` several times slower than the lookup itself.
    byId: db
      .select()
      .from(cases)
      .where(and(eq(cases.id, sql.placeholder("id")), eq(cases.orgId, sql.placeholder("orgId"))))
      .prepare(),
  };
});

/** A case a report just joined (or opened), its row locked until the commit. */
export interface ClaimedCase {
  row: CaseRow;
  /** True when the report opened it. */
  opened: boolean;
}

/**
 * Puts a new report into the open case of its content target (or, with no target, of its
 * subject), or opens a case: one statement (see caseStatements), in the report creation's
 * transaction (the hot path: no savepoint of its own). A case keyed by its target is opened
 * with `bucket` and its subject's identity when that is there already; `settleCase` mends
 * either, with the commit, once the identities are known (a reporter found muted, a subject
 * seen for the first time). Of two reports racing on one new target, one opens the case and
 * the other joins it.
 */
export async function claimCase(
  ctx: DomainContext,
  input: CaseKey & { now: number; bucket: Bucket; subject?: { type: string; externalId: string } | null },
): Promise<ClaimedCase> {
  const fresh: CaseRow = {
    id: newId(),
    orgId: input.orgId,
    projectId: input.projectId,
    status: "OPEN",
    bucket: input.bucket,
    isOpen: 1,
    contentType: input.contentType,
    contentExternalId: input.contentExternalId,
    subjectIdentityId: input.contentExternalId != null ? null : input.subjectIdentityId,
    reportCount: 1,
    assigneeId: null,
    assignedAt: null,
    claimExpiresAt: null,
    createdAt: input.now,
    updatedAt: input.now,
    lastReportAt: input.now,
    escalatedTeam: null,
    escalatedAt: null,
    decision: null,
    decisionCode: null,
    decidedAt: null,
    decidedByType: null,
    decidedById: null,
    trustedFlagged: 0,
    queueId: null,
    priority: 0,
  };
  const q = caseStatements(ctx.db);
  const subject = input.contentExternalId != null ? input.subject : null;
  const [row] = subject
    ? await q.joinTargetOfSubject.execute({ ...fresh, subjectType: subject.type, subjectExternalId: subject.externalId })
    : await (input.contentExternalId != null ? q.joinTarget : input.subjectIdentityId != null ? q.joinSubject : q.insert).execute(fresh);
  if (!row) throw new Error("a case joined or opened is not there");
  return { row, opened: row.id === fresh.id };
}

/**
 * The rest of joining or opening a case, left to the commit (Store.atCommit): a case opened by
 * this report gets its subject, its bucket and CASE_OPENED; a case joined has its bucket raised
 * when the report's is higher (CASE_BUCKET_RAISED). The bucket only ever rises.
 */
export async function settleCase(ctx: DomainContext, claimed: ClaimedCase, input: { bucket: Bucket; subjectIdentityId: string | null }): Promise<CaseRow> {
  const q = caseStatements(ctx.db);
  const { row } = claimed;
  const projectId = row.projectId;
  if (claimed.opened) {
    const theCase: CaseRow = { ...row, bucket: input.bucket, subjectIdentityId: row.subjectIdentityId ?? input.subjectIdentityId };
    await ctx.store.atCommit(
      theCase.bucket !== row.bucket ? q.setBucket.execute({ id: row.id, bucket: theCase.bucket }) : Promise.resolve(),
      theCase.subjectIdentityId !== row.subjectIdentityId ? q.setSubject.execute({ id: row.id, subjectIdentityId: theCase.subjectIdentityId }) : Promise.resolve(),
      recordAudit(ctx, { projectId, action: "CASE_OPENED", entityType: "case", entityId: row.id, after: { status: "OPEN", bucket: theCase.bucket } }),
    );
    return theCase;
  }
  const bucket = higherBucket(row.bucket, input.bucket);
  if (bucket === row.bucket) return row;
  await ctx.store.atCommit(
    q.setBucket.execute({ id: row.id, bucket }),
    recordAudit(ctx, { projectId, action: "CASE_BUCKET_RAISED", entityType: "case", entityId: row.id, before: { bucket: row.bucket }, after: { bucket } }),
  );
  return { ...row, bucket };
}

/** Raises a case's bucket (AI enrichment finding CRITICAL content, for instance). */
export function raiseCaseBucket(ctx: DomainContext, input: { caseId: string; bucket: Bucket }): Promise<void> {
  const { caseId } = input;
  return transaction(ctx, async () => {
    const [c] = await ctx.db.select().from(cases).where(eq(cases.id, caseId)).limit(1);
    if (!c) return;
    const next = higherBucket(c.bucket, input.bucket);
    if (next === c.bucket) return;
    await ctx.db.update(cases).set({ bucket: next, updatedAt: ctx.clock.now() }).where(eq(cases.id, caseId));
    await recordAudit(ctx, {
      projectId: c.projectId, action: "CASE_BUCKET_RAISED",
      entityType: "case", entityId: caseId, before: { bucket: c.bucket }, after: { bucket: next },
    });
  });
}

/**
 * Raises the bucket of a case the caller holds locked in its transaction (lockReportAndCase),
 * as it read it: the write and its audit event are left to the commit (Store.atCommit), so that
 * AI enrichment's transaction costs no round trip for it. Answers the bucket it has now.
 */
export async function raiseLockedCaseBucket(ctx: DomainContext, input: { theCase: CaseRow; bucket: Bucket }): Promise<Bucket> {
  const c = input.theCase;
  const next = higherBucket(c.bucket, input.bucket);
  if (next === c.bucket) return next;
  await ctx.store.atCommit(
    ctx.db.update(cases).set({ bucket: next, updatedAt: ctx.clock.now() }).where(eq(cases.id, c.id)).execute(),
    recordAudit(ctx, { projectId: c.projectId, action: "CASE_BUCKET_RAISED", entityType: "case", entityId: c.id, before: { bucket: c.bucket }, after: { bucket: next } }),
  );
  return next;
}

/**
 * A case of the caller's organization that the caller may work (queue access), else a 404. `held` is a row of the organization the
 * caller already holds (report intake has just written its case): when it is this case's, it is
 * the answer, not read again.
 */
export async function requireCase(ctx: AccessContext, caseId: string, held?: CaseRow, opts: { lock?: boolean } = {}): Promise<CaseRow> {
  const row = held?.id === caseId ? held : opts.lock ? await lockCase(ctx, caseId) : (await caseStatements(ctx.db).byId.execute({ id: caseId, orgId: ctx.orgId }))[0];
  if (!row) throw notFound("Case not found");
  await assertMayWorkCase(ctx, row);
  return row;
}

// ---------------------------------------------------------------------------------------------
// The review queue and the things moderators do with cases.

export interface QueueQuery {
  projectId?: string;
  limit: number;
}

/** Open cases of the queues the caller may work, emergency first, then high, then normal; oldest first within a bucket. */
export async function reviewQueue(ctx: AccessContext & Pick<DomainContext, "clock">, q: QueueQuery): Promise<{ cases: CaseView[]; counts: Record<Bucket, number> }> {
  const counts = { emergency: 0, high: 0, normal: 0 } as Record<Bucket, number>;
  const found: CaseRow[] = [];
  const access = await listableCases(ctx);
  for (const bucket of [...BUCKETS].reverse()) {
    const where = and(
      eq(cases.orgId, ctx.orgId),
      eq(cases.isOpen, 1),
      eq(cases.bucket, bucket),
      q.projectId ? eq(cases.projectId, q.projectId) : undefined,
      access,
    );
    const [count] = await ctx.db.select({ n: sql<number>`count(*)` }).from(cases).where(where);
    counts[bucket] = count?.n ?? 0;
    if (found.length < q.limit) {
      found.push(...(await ctx.db.select().from(cases).where(where).orderBy(asc(cases.createdAt)).limit(q.limit - found.length)));
    }
  }
  return { cases: found.map((c) => toCaseView(c, ctx.clock.now())), counts };
}

/**
 * The notes a case holds at most. The case page and the case file answer every note (up to 5,000
 * characters each): without a bound, 8,000 notes added through one key made each opening of the
 * case a 42 MB answer and 200 MB more of the server's memory.
 */
export const MAX_NOTES_PER_CASE = 500;

export function addCaseNote(ctx: DomainContext, input: { caseId: string; body: string }): Promise<NoteView> {
  return rowLockedTransaction(ctx, async () => {
    const c = await requireCase(ctx, input.caseId);
    // One step of the case's notes index past the bound (case_notes_case_idx).
    const [full] = await ctx.db.select({ id: caseNotes.id }).from(caseNotes).where(eq(caseNotes.caseId, c.id)).orderBy(asc(caseNotes.id)).limit(1).offset(MAX_NOTES_PER_CASE - 1);
    if (full) throw conflict(`A case holds at most ${MAX_NOTES_PER_CASE} notes`);
    const row = {
      id: newId(), caseId: c.id, orgId: ctx.orgId, authorType: ctx.actor.type, authorId: ctx.actor.id, body: input.body, createdAt: ctx.clock.now(),
    };
    await ctx.db.insert(caseNotes).values(row);
    await recordAudit(ctx, {
      projectId: c.projectId, action: "CASE_NOTE_ADDED", entityType: "case", entityId: c.id, data: { noteId: row.id },
    });
    return toNoteView(row);
  });
}

const toNoteView = (n: typeof caseNotes.$inferSelect): NoteView => ({
  id: n.id,
  caseId: n.caseId,
  author: { type: n.authorType as Actor["type"], id: n.authorId },
  body: n.body,
  createdAt: iso(n.createdAt),
});

export async function listCaseNotes(ctx: Pick<DomainContext, "db">, caseId: string): Promise<NoteView[]> {
  const rows = await ctx.db.select().from(caseNotes).where(eq(caseNotes.caseId, caseId)).orderBy(asc(caseNotes.id));
  return rows.map(toNoteView);
}

/** Earlier cases about the same subject that the caller may work: the subject's history with this platform. */
export async function subjectHistory(
  ctx: AccessContext & Pick<DomainContext, "clock">,
  input: {
    subjectIdentityId: string;
    exceptCaseId: string;
    /**
     * Only the cases opened before this one (a case page's "Earlier cases"): an earlier `createdAt`,
     * or the same with a smaller id (ids are UUIDv7, in creation order). Without it, every other case.
     */
    openedBefore?: { createdAt: number; id: string };
    limit?: number;
  },
): Promise<CaseView[]> {
  const before = input.openedBefore;
  const rows = await ctx.db
    .select()
    .from(cases)
    .where(
      and(
        eq(cases.subjectIdentityId, input.subjectIdentityId),
        ne(cases.id, input.exceptCaseId),
        before ? or(lt(cases.createdAt, before.createdAt), and(eq(cases.createdAt, before.createdAt), lt(cases.id, before.id))) : undefined,
        await listableCases(ctx),
      ),
    )
    .orderBy(desc(cases.createdAt), desc(cases.id))
    .limit(input.limit ?? 20);
  return rows.map((c) => toCaseView(c, ctx.clock.now()));
}

/**
 * The most reports of a case its page (and the case file) shows: the newest. A pile-on of 40,000
 * reports on one post was a 30 MB answer that held every request for 320 to 430 ms (SQLite); the page
 * says how many there are (the case's `reportCount`) and shows these, and what it sums up over
 * all of them (the reasons, the warning screen, the reporters' summary) is read apart.
 */
export const CASE_PAGE_REPORTS = 200;

/** The case's newest `limit` reports (CASE_PAGE_REPORTS), oldest first: a range of reports_case_idx. */
export async function reportsOfCase(ctx: Pick<DomainContext, "db">, caseId: string, limit = CASE_PAGE_REPORTS): Promise<(typeof reports.$inferSelect)[]> {
  const newest = await ctx.db.select().from(reports).where(eq(reports.caseId, caseId)).orderBy(desc(reports.createdUs)).limit(limit);
  return newest.reverse();
}

/**
 * What all of a case's reports name, however many there are: their reasons and the categories
 * their AI analyses found, each once, sorted. The warning screen (graphic categories) and the
 * decision dialog's reasons read these, not the reports the page shows.
 */
export async function namesOfCase(ctx: Pick<DomainContext, "db">, caseId: string): Promise<{ reasons: string[]; aiCategories: string[] }> {
  // Each report's names as it holds them (JSON lists, as its view reads them): a pile-on's
  // reports hold a few distinct lists, read in one pass of the case's rows (6 ms at 40,000 reports,
  // where reaching its report_reasons rows took 38).
  const rows = await ctx.db.selectDistinct({ reasons: reports.reasons, ai: reports.aiCategories }).from(reports).where(eq(reports.caseId, caseId));
  const reasons = new Set<string>();
  const aiCategories = new Set<string>();
  for (const r of rows) {
    for (const name of storedStrings(r.reasons)) reasons.add(name);
    for (const name of storedStrings(r.ai)) aiCategories.add(name);
  }
  return { reasons: [...reasons].sort(), aiCategories: [...aiCategories].sort() };
}

/** The identity the case's first report naming a subject is about (a case opened about content alone takes it). */
export async function firstSubjectOfCase(ctx: Pick<DomainContext, "db">, caseId: string): Promise<string | null> {
  const [row] = await ctx.db
    .select({ id: reports.subjectIdentityId })
    .from(reports)
    .where(and(eq(reports.caseId, caseId), isNotNull(reports.subjectIdentityId)))
    .orderBy(asc(reports.createdUs))
    .limit(1);
  return row?.id ?? null;
}

export async function reportsOfCases(ctx: Pick<DomainContext, "db">, input: { caseIds: string[] }): Promise<(typeof reports.$inferSelect)[]> {
  if (!input.caseIds.length) return [];
  return await ctx.db.select().from(reports).where(inArray(reports.caseId, input.caseIds));
}
