import { and, asc, desc, eq, inArray, isNull, ne, sql } from "drizzle-orm";
import { param, statements } from "../db/prepared.ts";
import { caseNotes, cases, reports, users } from "../db/schema.ts";
import { recordAudit, type Actor } from "./audit.ts";
import { iso, isoOrNull } from "./clock.ts";
import { transaction, type DomainContext } from "./context.ts";
import { conflict, notFound } from "./errors.ts";
import { newId } from "./ids.ts";
import { BUCKETS, higherBucket, type Bucket } from "./severity.ts";
import { asStatus, isOpenStatus, nextStatus, type Status, type WorkflowAction } from "./workflow.ts";

export type CaseRow = typeof cases.$inferSelect;

export interface CaseView {
  id: string;
  projectId: string;
  status: Status;
  bucket: Bucket;
  contentType: string | null;
  contentExternalId: string | null;
  subjectIdentityId: string | null;
  reportCount: number;
  assigneeId: string | null;
  assignedAt: string | null;
  createdAt: string;
  updatedAt: string;
  lastReportAt: string;
}

export const toCaseView = (c: CaseRow): CaseView => ({
  id: c.id,
  projectId: c.projectId,
  status: c.status as Status,
  bucket: c.bucket,
  contentType: c.contentType || null,
  contentExternalId: c.contentExternalId,
  subjectIdentityId: c.subjectIdentityId,
  reportCount: c.reportCount,
  assigneeId: c.assigneeId,
  assignedAt: isoOrNull(c.assignedAt),
  createdAt: iso(c.createdAt),
  updatedAt: iso(c.updatedAt),
  lastReportAt: iso(c.lastReportAt),
});

interface CaseKey {
  orgId: string;
  projectId: string;
  contentType: string | null;
  contentExternalId: string | null;
  subjectIdentityId: string | null;
}

/** The open case a report with this target (else this subject) belongs to, if there is one. */
async function findOpenCase(ctx: Pick<DomainContext, "db">, key: CaseKey): Promise<CaseRow | undefined> {
  if (key.contentExternalId != null) {
    const rows = await caseStatements(ctx.db).openForTarget.execute({
      projectId: key.projectId,
      contentType: key.contentType ?? "",
      contentExternalId: key.contentExternalId,
    });
    return rows[0];
  }
  if (key.subjectIdentityId != null) {
    const rows = await caseStatements(ctx.db).openForSubject.execute({ projectId: key.projectId, subjectIdentityId: key.subjectIdentityId });
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
const OPEN_CASE = sql`${cases.isOpen} = 1`;
const caseStatements = statements((db) => ({
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
  join: db
    .update(cases)
    .set({ bucket: param("bucket"), reportCount: param("reportCount"), lastReportAt: param("now"), updatedAt: param("now") })
    .where(eq(cases.id, sql.placeholder("id")))
    .prepare(),
  insert: db
    .insert(cases)
    .values({
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
    })
    .prepare(),
}));

/**
 * Puts a new report into the open case of its content target (or, with no target, of its
 * subject), or opens a case. The bucket only ever rises. Call inside the report creation's
 * transaction (report creation is the hot path: no savepoint of its own).
 */
export async function joinOrOpenCase(ctx: DomainContext, input: CaseKey & { bucket: Bucket; now: number }): Promise<CaseRow> {
  const existing = await findOpenCase(ctx, input);
  if (existing) {
    const bucket = higherBucket(existing.bucket, input.bucket);
    const updated = { ...existing, bucket, reportCount: existing.reportCount + 1, lastReportAt: input.now, updatedAt: input.now };
    await caseStatements(ctx.db).join.execute({ id: existing.id, bucket, reportCount: updated.reportCount, now: input.now });
    if (bucket !== existing.bucket) {
      await recordAudit(ctx, {
        projectId: input.projectId, action: "CASE_BUCKET_RAISED",
        entityType: "case", entityId: existing.id, before: { bucket: existing.bucket }, after: { bucket },
      });
    }
    return updated;
  }
  const row: CaseRow = {
    id: newId(),
    orgId: input.orgId,
    projectId: input.projectId,
    status: "OPEN",
    bucket: input.bucket,
    isOpen: 1,
    contentType: input.contentType,
    contentExternalId: input.contentExternalId,
    subjectIdentityId: input.subjectIdentityId,
    reportCount: 1,
    assigneeId: null,
    assignedAt: null,
    createdAt: input.now,
    updatedAt: input.now,
    lastReportAt: input.now,
  };
  await caseStatements(ctx.db).insert.execute(row);
  await recordAudit(ctx, {
    projectId: input.projectId, action: "CASE_OPENED",
    entityType: "case", entityId: row.id, after: { status: "OPEN", bucket: row.bucket },
  });
  return row;
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

/** An OPEN case goes to IN_REVIEW (AI enrichment found likely violations in one of its reports). */
export function moveOpenCaseToReview(ctx: DomainContext, caseId: string): Promise<void> {
  return transaction(ctx, async () => {
    const [c] = await ctx.db.select().from(cases).where(eq(cases.id, caseId)).limit(1);
    if (c?.status === "OPEN") await moveCase(ctx, c, "IN_REVIEW", { action: "enrich" }, ctx.clock.now());
  });
}

export async function requireCase(ctx: Pick<DomainContext, "db" | "orgId">, caseId: string): Promise<CaseRow> {
  const [row] = await ctx.db
    .select()
    .from(cases)
    .where(and(eq(cases.id, caseId), eq(cases.orgId, ctx.orgId)))
    .limit(1);
  if (!row) throw notFound("Case not found");
  return row;
}

// ---------------------------------------------------------------------------------------------
// Decisions on a report apply to its case and to every open report in it.

export type Decision =
  | { action: "escalate"; team: "safety" | "legal" | "senior_moderator"; note?: string | null }
  | { action: "resolve"; code?: string | null; note?: string | null }
  | { action: "dismiss"; reason: string; note?: string | null }
  | { action: "triage"; note?: string | null }
  | { action: "enrich" };

const AUDIT_ACTION: Record<Decision["action"], string> = {
  escalate: "REPORT_ESCALATED",
  resolve: "REPORT_RESOLVED",
  dismiss: "REPORT_DISMISSED",
  triage: "REPORT_TRIAGED",
  enrich: "REPORT_STATUS_CHANGED",
};

/** What a decision writes onto each report it moves. */
function decisionFields(d: Decision, actor: Actor, now: number, applied: boolean): Partial<typeof reports.$inferInsert> {
  const base = { note: "note" in d ? (d.note ?? null) : null, at: iso(now), by: actor };
  switch (d.action) {
    case "escalate":
      return { escalation: JSON.stringify({ team: d.team, applied, ...base }) };
    case "resolve":
      return { resolution: JSON.stringify({ code: d.code ?? null, ...base }) };
    case "dismiss":
      return { dismissal: JSON.stringify({ reason: d.reason, ...base }) };
    default:
      return {};
  }
}

const REFUSAL: Partial<Record<WorkflowAction, string>> = {
  resolve: "only OPEN, TRIAGED or IN_REVIEW reports can be resolved",
  dismiss: "only OPEN, TRIAGED or IN_REVIEW reports can be dismissed",
  triage: "only OPEN reports can be triaged",
  enrich: "only OPEN reports move to IN_REVIEW on enrichment",
};

/**
 * Applies a decision to a report, its case and every other open report of that case.
 * Refused (409) when the report's own status does not allow it. Escalating a RESOLVED report
 * changes no status but is still recorded.
 */
export function decideOnReport(ctx: DomainContext, input: { reportId: string; decision: Decision }): Promise<{ changed: boolean }> {
  const { reportId, decision: d } = input;
  return transaction(ctx, async () => {
    const [report] = await ctx.db.select().from(reports).where(and(eq(reports.id, reportId), eq(reports.orgId, ctx.orgId))).limit(1);
    if (!report) throw notFound("Report not found");
    const own = nextStatus(asStatus(report.status), d.action);
    if (!own.allowed) throw conflict(`Report is ${report.status}: ${REFUSAL[d.action] ?? "not allowed"}`);
    const now = ctx.clock.now();
    let [theCase] = await ctx.db.select().from(cases).where(eq(cases.id, report.caseId)).limit(1);
    if (!theCase) throw notFound("Case not found");
    if (d.action === "escalate" && own.changed && theCase.isOpen === 0) theCase = await reopenForEscalation(ctx, report, theCase, now);

    // The report itself, then the other open reports of its case.
    await moveReport(ctx, report, d, own.to, own.changed, now);
    if (own.changed) {
      const others = (
        await ctx.db
          .select()
          .from(reports)
          .where(and(eq(reports.caseId, theCase.id), ne(reports.id, report.id)))
      ).filter((r) => isOpenStatus(r.status));
      for (const other of others) {
        const move = nextStatus(asStatus(other.status), d.action);
        if (move.allowed && move.changed) await moveReport(ctx, other, d, move.to, true, now);
      }
      await moveCase(ctx, theCase, own.to, d, now);
    }
    return { changed: own.changed };
  });
}

async function moveReport(ctx: DomainContext, r: typeof reports.$inferSelect, d: Decision, to: Status, changed: boolean, now: number): Promise<void> {
  await ctx.db
    .update(reports)
    .set({ status: to, updatedAt: now, ...decisionFields(d, ctx.actor, now, changed) })
    .where(eq(reports.id, r.id));
  await recordAudit(ctx, {
    projectId: r.projectId, action: AUDIT_ACTION[d.action],
    entityType: "report", entityId: r.id,
    before: { status: r.status }, after: { status: to },
    data: { ...d, applied: changed, caseId: r.caseId },
  });
}

async function moveCase(ctx: DomainContext, c: CaseRow, to: Status, d: Decision, now: number): Promise<void> {
  if (c.status === to) return;
  const isOpen = isOpenStatus(to) ? 1 : 0;
  await ctx.db.update(cases).set({ status: to, isOpen, updatedAt: now }).where(eq(cases.id, c.id));
  await recordAudit(ctx, {
    projectId: c.projectId, action: "CASE_STATUS_CHANGED",
    entityType: "case", entityId: c.id, before: { status: c.status }, after: { status: to }, data: { action: d.action },
  });
}

/**
 * Escalating a report of a closed case reopens that case, unless another case is already open
 * for the same target: then the report moves into that one (two open cases for one target
 * would split the incident).
 */
async function reopenForEscalation(ctx: DomainContext, report: typeof reports.$inferSelect, c: CaseRow, now: number): Promise<CaseRow> {
  const open = await findOpenCase(ctx, c);
  if (open) {
    await ctx.db.update(reports).set({ caseId: open.id }).where(eq(reports.id, report.id));
    await ctx.db.update(cases).set({ reportCount: open.reportCount + 1, updatedAt: now }).where(eq(cases.id, open.id));
    await ctx.db.update(cases).set({ reportCount: c.reportCount - 1, updatedAt: now }).where(eq(cases.id, c.id));
    report.caseId = open.id;
    await recordAudit(ctx, {
      projectId: c.projectId, action: "REPORT_MOVED", entityType: "report", entityId: report.id,
      before: { caseId: c.id }, after: { caseId: open.id },
    });
    return open;
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// The review queue and the things moderators do with cases.

export interface QueueQuery {
  projectId?: string;
  limit: number;
}

/** Open cases, emergency first, then high, then normal; oldest first within a bucket. */
export async function reviewQueue(ctx: Pick<DomainContext, "db" | "orgId">, q: QueueQuery): Promise<{ cases: CaseView[]; counts: Record<Bucket, number> }> {
  const counts = { emergency: 0, high: 0, normal: 0 } as Record<Bucket, number>;
  const found: CaseRow[] = [];
  for (const bucket of [...BUCKETS].reverse()) {
    const where = and(
      eq(cases.orgId, ctx.orgId),
      eq(cases.isOpen, 1),
      eq(cases.bucket, bucket),
      q.projectId ? eq(cases.projectId, q.projectId) : undefined,
    );
    const [count] = await ctx.db.select({ n: sql<number>`count(*)` }).from(cases).where(where);
    counts[bucket] = count?.n ?? 0;
    if (found.length < q.limit) {
      found.push(...(await ctx.db.select().from(cases).where(where).orderBy(asc(cases.createdAt)).limit(q.limit - found.length)));
    }
  }
  return { cases: found.map(toCaseView), counts };
}

/** Triages a case: its first OPEN report is triaged, and with it the case and its other open reports. */
export function triageCase(ctx: DomainContext, caseId: string): Promise<void> {
  return transaction(ctx, async () => {
    const c = await requireCase(ctx, caseId);
    const [first] = await ctx.db
      .select({ id: reports.id })
      .from(reports)
      .where(and(eq(reports.caseId, c.id), eq(reports.status, "OPEN")))
      .limit(1);
    if (!first) throw conflict(`Case is ${c.status}: only cases with OPEN reports can be triaged`);
    await decideOnReport(ctx, { reportId: first.id, decision: { action: "triage" } });
  });
}

/** Claims a case for a moderator (or releases it with null), so two people never work it unknowingly. */
export function assignCase(ctx: DomainContext, input: { caseId: string; assigneeId: string | null }): Promise<CaseView> {
  const { assigneeId } = input;
  return transaction(ctx, async () => {
    const c = await requireCase(ctx, input.caseId);
    if (assigneeId) {
      const [user] = await ctx.db.select().from(users).where(and(eq(users.id, assigneeId), eq(users.orgId, ctx.orgId))).limit(1);
      if (!user) throw notFound("User not found");
    }
    const now = ctx.clock.now();
    const after = { ...c, assigneeId, assignedAt: assigneeId ? now : null, updatedAt: now };
    await ctx.db.update(cases).set({ assigneeId, assignedAt: after.assignedAt, updatedAt: now }).where(eq(cases.id, c.id));
    await recordAudit(ctx, {
      projectId: c.projectId, action: assigneeId ? "CASE_ASSIGNED" : "CASE_UNASSIGNED",
      entityType: "case", entityId: c.id, before: { assigneeId: c.assigneeId }, after: { assigneeId },
    });
    return toCaseView(after);
  });
}

export interface NoteView {
  id: string;
  caseId: string;
  author: Actor;
  body: string;
  createdAt: string;
}

export function addCaseNote(ctx: DomainContext, input: { caseId: string; body: string }): Promise<NoteView> {
  return transaction(ctx, async () => {
    const c = await requireCase(ctx, input.caseId);
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

/** Earlier cases about the same subject: the subject's history with this platform. */
export async function subjectHistory(
  ctx: Pick<DomainContext, "db">,
  input: { subjectIdentityId: string; exceptCaseId: string; limit?: number },
): Promise<CaseView[]> {
  const rows = await ctx.db
    .select()
    .from(cases)
    .where(and(eq(cases.subjectIdentityId, input.subjectIdentityId), ne(cases.id, input.exceptCaseId)))
    .orderBy(desc(cases.createdAt))
    .limit(input.limit ?? 20);
  return rows.map(toCaseView);
}

export function reportsOfCase(ctx: Pick<DomainContext, "db">, caseId: string): Promise<(typeof reports.$inferSelect)[]> {
  return ctx.db.select().from(reports).where(eq(reports.caseId, caseId)).orderBy(asc(reports.createdUs));
}

export async function reportsOfCases(ctx: Pick<DomainContext, "db">, input: { caseIds: string[] }): Promise<(typeof reports.$inferSelect)[]> {
  if (!input.caseIds.length) return [];
  return await ctx.db.select().from(reports).where(inArray(reports.caseId, input.caseIds));
}
