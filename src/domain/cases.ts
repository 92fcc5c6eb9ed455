import { and, asc, desc, eq, inArray, isNull, ne, sql } from "drizzle-orm";
import { transaction, type Db } from "../db/client.ts";
import { param, statements } from "../db/prepared.ts";
import { caseNotes, cases, reports, users } from "../db/schema.ts";
import { recordAudit, type Actor } from "./audit.ts";
import { iso, isoOrNull, type Clock } from "./clock.ts";
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
function findOpenCase(db: Db, key: CaseKey): CaseRow | undefined {
  const q = caseStatements(db);
  if (key.contentExternalId != null) {
    return q.openForTarget.get({ projectId: key.projectId, contentType: key.contentType ?? "", contentExternalId: key.contentExternalId });
  }
  if (key.subjectIdentityId != null) {
    return q.openForSubject.get({ projectId: key.projectId, subjectIdentityId: key.subjectIdentityId });
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
 * subject), or opens a case. The bucket only ever rises.
 */
export function joinOrOpenCase(db: Db, clock: Clock, input: CaseKey & { actor: Actor; bucket: Bucket; now: number }): CaseRow {
  const existing = findOpenCase(db, input);
  if (existing) {
    const bucket = higherBucket(existing.bucket, input.bucket);
    const updated = { ...existing, bucket, reportCount: existing.reportCount + 1, lastReportAt: input.now, updatedAt: input.now };
    caseStatements(db).join.run({ id: existing.id, bucket, reportCount: updated.reportCount, now: input.now });
    if (bucket !== existing.bucket) {
      recordAudit(db, clock, {
        orgId: input.orgId, projectId: input.projectId, actor: input.actor, action: "CASE_BUCKET_RAISED",
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
  caseStatements(db).insert.run(row);
  recordAudit(db, clock, {
    orgId: input.orgId, projectId: input.projectId, actor: input.actor, action: "CASE_OPENED",
    entityType: "case", entityId: row.id, after: { status: "OPEN", bucket: row.bucket },
  });
  return row;
}

/** Raises a case's bucket (AI enrichment finding CRITICAL content, for instance). */
export function raiseCaseBucket(db: Db, clock: Clock, actor: Actor, caseId: string, bucket: Bucket): void {
  const c = db.select().from(cases).where(eq(cases.id, caseId)).get();
  if (!c) return;
  const next = higherBucket(c.bucket, bucket);
  if (next === c.bucket) return;
  db.update(cases).set({ bucket: next, updatedAt: clock.now() }).where(eq(cases.id, caseId)).run();
  recordAudit(db, clock, {
    orgId: c.orgId, projectId: c.projectId, actor, action: "CASE_BUCKET_RAISED",
    entityType: "case", entityId: caseId, before: { bucket: c.bucket }, after: { bucket: next },
  });
}

/** An OPEN case goes to IN_REVIEW (AI enrichment found likely violations in one of its reports). */
export function moveOpenCaseToReview(db: Db, clock: Clock, actor: Actor, caseId: string): void {
  const c = db.select().from(cases).where(eq(cases.id, caseId)).get();
  if (c?.status === "OPEN") moveCase(db, clock, actor, c, "IN_REVIEW", { action: "enrich" }, clock.now());
}

export function requireCase(db: Db, orgId: string, caseId: string): CaseRow {
  const row = db
    .select()
    .from(cases)
    .where(and(eq(cases.id, caseId), eq(cases.orgId, orgId)))
    .get();
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
export function decideOnReport(db: Db, clock: Clock, actor: Actor, orgId: string, reportId: string, d: Decision): { changed: boolean } {
  return transaction(db, () => {
    const report = db.select().from(reports).where(and(eq(reports.id, reportId), eq(reports.orgId, orgId))).get();
    if (!report) throw notFound("Report not found");
    const own = nextStatus(asStatus(report.status), d.action);
    if (!own.allowed) throw conflict(`Report is ${report.status}: ${REFUSAL[d.action] ?? "not allowed"}`);
    const now = clock.now();
    let theCase = db.select().from(cases).where(eq(cases.id, report.caseId)).get();
    if (!theCase) throw notFound("Case not found");
    if (d.action === "escalate" && own.changed && theCase.isOpen === 0) theCase = reopenForEscalation(db, clock, actor, report, theCase, now);

    // The report itself, then the other open reports of its case.
    moveReport(db, clock, actor, report, d, own.to, own.changed, now);
    if (own.changed) {
      const others = db
        .select()
        .from(reports)
        .where(and(eq(reports.caseId, theCase.id), ne(reports.id, report.id)))
        .all()
        .filter((r) => isOpenStatus(r.status));
      for (const other of others) {
        const move = nextStatus(asStatus(other.status), d.action);
        if (move.allowed && move.changed) moveReport(db, clock, actor, other, d, move.to, true, now);
      }
      moveCase(db, clock, actor, theCase, own.to, d, now);
    }
    return { changed: own.changed };
  });
}

function moveReport(db: Db, clock: Clock, actor: Actor, r: typeof reports.$inferSelect, d: Decision, to: Status, changed: boolean, now: number): void {
  db.update(reports)
    .set({ status: to, updatedAt: now, ...decisionFields(d, actor, now, changed) })
    .where(eq(reports.id, r.id))
    .run();
  recordAudit(db, clock, {
    orgId: r.orgId, projectId: r.projectId, actor, action: AUDIT_ACTION[d.action],
    entityType: "report", entityId: r.id,
    before: { status: r.status }, after: { status: to },
    data: { ...d, applied: changed, caseId: r.caseId },
  });
}

function moveCase(db: Db, clock: Clock, actor: Actor, c: CaseRow, to: Status, d: Decision, now: number): void {
  if (c.status === to) return;
  const isOpen = isOpenStatus(to) ? 1 : 0;
  db.update(cases).set({ status: to, isOpen, updatedAt: now }).where(eq(cases.id, c.id)).run();
  recordAudit(db, clock, {
    orgId: c.orgId, projectId: c.projectId, actor, action: "CASE_STATUS_CHANGED",
    entityType: "case", entityId: c.id, before: { status: c.status }, after: { status: to }, data: { action: d.action },
  });
}

/**
 * Escalating a report of a closed case reopens that case, unless another case is already open
 * for the same target: then the report moves into that one (two open cases for one target
 * would split the incident).
 */
function reopenForEscalation(db: Db, clock: Clock, actor: Actor, report: typeof reports.$inferSelect, c: CaseRow, now: number): CaseRow {
  const open = findOpenCase(db, c);
  if (open) {
    db.update(reports).set({ caseId: open.id }).where(eq(reports.id, report.id)).run();
    db.update(cases).set({ reportCount: open.reportCount + 1, updatedAt: now }).where(eq(cases.id, open.id)).run();
    db.update(cases).set({ reportCount: c.reportCount - 1, updatedAt: now }).where(eq(cases.id, c.id)).run();
    report.caseId = open.id;
    recordAudit(db, clock, {
      orgId: c.orgId, projectId: c.projectId, actor, action: "REPORT_MOVED", entityType: "report", entityId: report.id,
      before: { caseId: c.id }, after: { caseId: open.id },
    });
    return open;
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// The review queue and the things moderators do with cases.

export interface QueueQuery {
  orgId: string;
  projectId?: string;
  limit: number;
}

/** Open cases, emergency first, then high, then normal; oldest first within a bucket. */
export function reviewQueue(db: Db, q: QueueQuery): { cases: CaseView[]; counts: Record<Bucket, number> } {
  const counts = { emergency: 0, high: 0, normal: 0 } as Record<Bucket, number>;
  const found: CaseRow[] = [];
  for (const bucket of [...BUCKETS].reverse()) {
    const where = and(
      eq(cases.orgId, q.orgId),
      eq(cases.isOpen, 1),
      eq(cases.bucket, bucket),
      q.projectId ? eq(cases.projectId, q.projectId) : undefined,
    );
    counts[bucket] = db.select({ n: sql<number>`count(*)` }).from(cases).where(where).get()?.n ?? 0;
    if (found.length < q.limit) {
      found.push(...db.select().from(cases).where(where).orderBy(asc(cases.createdAt)).limit(q.limit - found.length).all());
    }
  }
  return { cases: found.map(toCaseView), counts };
}

export function triageCase(db: Db, clock: Clock, actor: Actor, orgId: string, caseId: string): void {
  const c = requireCase(db, orgId, caseId);
  const first = db
    .select({ id: reports.id })
    .from(reports)
    .where(and(eq(reports.caseId, c.id), eq(reports.status, "OPEN")))
    .get();
  if (!first) throw conflict(`Case is ${c.status}: only cases with OPEN reports can be triaged`);
  decideOnReport(db, clock, actor, orgId, first.id, { action: "triage" });
}

/** Claims a case for a moderator (or releases it with null), so two people never work it unknowingly. */
export function assignCase(db: Db, clock: Clock, actor: Actor, orgId: string, caseId: string, assigneeId: string | null): CaseView {
  const c = requireCase(db, orgId, caseId);
  if (assigneeId) {
    const user = db.select().from(users).where(and(eq(users.id, assigneeId), eq(users.orgId, orgId))).get();
    if (!user) throw notFound("User not found");
  }
  const now = clock.now();
  const after = { ...c, assigneeId, assignedAt: assigneeId ? now : null, updatedAt: now };
  db.update(cases).set({ assigneeId, assignedAt: after.assignedAt, updatedAt: now }).where(eq(cases.id, c.id)).run();
  recordAudit(db, clock, {
    orgId, projectId: c.projectId, actor, action: assigneeId ? "CASE_ASSIGNED" : "CASE_UNASSIGNED",
    entityType: "case", entityId: c.id, before: { assigneeId: c.assigneeId }, after: { assigneeId },
  });
  return toCaseView(after);
}

export interface NoteView {
  id: string;
  caseId: string;
  author: Actor;
  body: string;
  createdAt: string;
}

export function addCaseNote(db: Db, clock: Clock, actor: Actor, orgId: string, caseId: string, body: string): NoteView {
  const c = requireCase(db, orgId, caseId);
  const row = { id: newId(), caseId: c.id, orgId, authorType: actor.type, authorId: actor.id, body, createdAt: clock.now() };
  db.insert(caseNotes).values(row).run();
  recordAudit(db, clock, {
    orgId, projectId: c.projectId, actor, action: "CASE_NOTE_ADDED", entityType: "case", entityId: c.id, data: { noteId: row.id },
  });
  return toNoteView(row);
}

const toNoteView = (n: typeof caseNotes.$inferSelect): NoteView => ({
  id: n.id,
  caseId: n.caseId,
  author: { type: n.authorType as Actor["type"], id: n.authorId },
  body: n.body,
  createdAt: iso(n.createdAt),
});

export function listCaseNotes(db: Db, caseId: string): NoteView[] {
  return db.select().from(caseNotes).where(eq(caseNotes.caseId, caseId)).orderBy(asc(caseNotes.id)).all().map(toNoteView);
}

/** Earlier cases about the same subject: the subject's history with this platform. */
export function subjectHistory(db: Db, subjectIdentityId: string, exceptCaseId: string, limit = 20): CaseView[] {
  return db
    .select()
    .from(cases)
    .where(and(eq(cases.subjectIdentityId, subjectIdentityId), ne(cases.id, exceptCaseId)))
    .orderBy(desc(cases.createdAt))
    .limit(limit)
    .all()
    .map(toCaseView);
}

export function reportsOfCase(db: Db, caseId: string) {
  return db.select().from(reports).where(eq(reports.caseId, caseId)).orderBy(asc(reports.createdUs)).all();
}

export function reportsOfCases(db: Db, caseIds: string[]) {
  return caseIds.length ? db.select().from(reports).where(inArray(reports.caseId, caseIds)).all() : [];
}
