/**
 * What the moderators' dashboard reads and no other operation answers: the review queue with
 * filters and everything a row shows, a case with its whole context, an identity's profile,
 * the team lead's figures and charts, and the change counter the dashboard polls.
 */
import { and, asc, desc, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { auditEvents, cases, contentAnalyses, enforcementActions, identities, projects, reportCategories, reports, urlScanCache, users } from "../db/schema.ts";
import { toAnalysisView, type AnalysisView } from "./analysis.ts";
import { toAuditEventView, type AuditEventView } from "./audit.ts";
import { categoryKey } from "./category-key.ts";
import { listCaseNotes, reportsOfCase, reportsOfCases, requireCase, subjectHistory, toCaseView, type CaseView, type NoteView } from "./cases.ts";
import { iso, isoOrNull, type Clock } from "./clock.ts";
import { actionViews, type EnforcementActionView } from "./enforcement.ts";
import { notFound } from "./errors.ts";
import { toIdentityView, type IdentityView } from "./identities.ts";
import { toReportViews, type ReportView } from "./reports.ts";
import { BUCKETS, maxSeverity, SEVERITIES, type Bucket, type Severity } from "./severity.ts";
import { userEmails } from "./users.ts";
import { OPEN_STATUSES, type Status } from "./workflow.ts";

// ---------------------------------------------------------------------------------------------
// Change counter: what the dashboard polls.

/**
 * The organization's change version: the id of its newest audit event. Every creation and
 * state change writes one, so when this is unchanged nothing the dashboard shows has changed.
 * One step down the (org_id, id) index.
 */
export function changeVersion(db: Db, orgId: string): string | null {
  return (
    db
      .select({ id: auditEvents.id })
      .from(auditEvents)
      .where(eq(auditEvents.orgId, orgId))
      .orderBy(desc(auditEvents.id))
      .limit(1)
      .get()?.id ?? null
  );
}

// ---------------------------------------------------------------------------------------------
// The review queue.

export interface QueueFilter {
  orgId: string;
  projectId?: string;
  status?: Status;
  /** A category (reason) name: cases with at least one report giving it. */
  category?: string;
  /** Severity bucket: emergency (CRITICAL), high (HIGH), normal (the rest). */
  bucket?: Bucket;
  /** "me": claimed by this user; "unclaimed": nobody's. */
  assigned?: "me" | "unclaimed";
  userId?: string | null;
  limit: number;
}

export interface Person {
  id: string;
  email: string;
}

export interface QueueItem {
  id: string;
  projectId: string;
  projectName: string;
  status: Status;
  bucket: Bucket;
  /** The highest severity among the case's reports. */
  severity: Severity;
  reasons: string[];
  reportCount: number;
  /** An open report of the case: deciding on it decides the case (docs/workflow.md). */
  openReportId: string | null;
  subject: { id: string; displayName: string; handleLabel: string } | null;
  target: { contentType: string | null; contentExternalId: string } | null;
  /** The start of the reported content, or of the newest description. */
  excerpt: string | null;
  ai: { severity: Severity; confidence: number } | null;
  assignee: Person | null;
  assignedAt: string | null;
  createdAt: string;
  lastReportAt: string;
}

const EXCERPT = 180;
const excerptOf = (s: string | null | undefined): string | null => {
  if (!s) return null;
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > EXCERPT ? `${flat.slice(0, EXCERPT)}…` : flat || null;
};

/** Buckets in queue order: emergency, then high, then normal. */
const QUEUE_BUCKETS = [...BUCKETS].reverse() as Bucket[];

/**
 * Open cases, emergency first, then high, then normal, oldest first within a bucket (each
 * bucket is one search of the (org, open, bucket, created) index), with the counts per bucket
 * under the same filters.
 */
/** The names, as the organization's projects spell them, of the category named `name` (any spelling). */
function categorySpellings(db: Db, orgId: string, name: string): string[] {
  const rows = db
    .select({ name: reportCategories.name })
    .from(reportCategories)
    .innerJoin(projects, eq(projects.id, reportCategories.projectId))
    .where(and(eq(projects.orgId, orgId), eq(reportCategories.nameKey, categoryKey(name))))
    .all();
  return [...new Set([name, ...rows.map((r) => r.name)])];
}

export function queue(db: Db, f: QueueFilter): { items: QueueItem[]; counts: Record<Bucket, number> & { total: number } } {
  const counts = { emergency: 0, high: 0, normal: 0, total: 0 };
  const rows: (typeof cases.$inferSelect)[] = [];
  // Reports keep their reasons in their project's spelling of the category: the filter matches
  // every spelling whose key (src/domain/category-key.ts) is the filter's, never SQLite's
  // ASCII-only lower().
  const categoryNames = f.category ? categorySpellings(db, f.orgId, f.category) : null;
  for (const bucket of QUEUE_BUCKETS) {
    if (f.bucket && f.bucket !== bucket) continue;
    const where: (SQL | undefined)[] = [eq(cases.orgId, f.orgId), eq(cases.isOpen, 1), eq(cases.bucket, bucket)];
    if (f.projectId) where.push(eq(cases.projectId, f.projectId));
    if (f.status) where.push(eq(cases.status, f.status));
    if (f.assigned === "me" && f.userId) where.push(eq(cases.assigneeId, f.userId));
    if (f.assigned === "unclaimed") where.push(isNull(cases.assigneeId));
    if (categoryNames) {
      where.push(
        sql`exists (select 1 from ${reports} r join report_reasons rr on rr.report_id = r.id
                    where r.case_id = ${cases.id} and rr.name in ${categoryNames})`,
      );
    }
    const cond = and(...where);
    counts[bucket] = db.select({ n: sql<number>`count(*)` }).from(cases).where(cond).get()?.n ?? 0;
    counts.total += counts[bucket];
    if (rows.length < f.limit) rows.push(...db.select().from(cases).where(cond).orderBy(asc(cases.createdAt)).limit(f.limit - rows.length).all());
  }
  return { items: toQueueItems(db, f.orgId, rows), counts };
}

function toQueueItems(db: Db, orgId: string, rows: (typeof cases.$inferSelect)[]): QueueItem[] {
  if (!rows.length) return [];
  const byCase = new Map<string, (typeof reports.$inferSelect)[]>();
  for (const r of reportsOfCases(db, rows.map((c) => c.id))) {
    const list = byCase.get(r.caseId) ?? [];
    list.push(r);
    byCase.set(r.caseId, list);
  }
  const subjectIds = [...new Set(rows.map((c) => c.subjectIdentityId).filter((x): x is string => !!x))];
  const subjects = new Map(
    subjectIds.length ? db.select().from(identities).where(inArray(identities.id, subjectIds)).all().map((i) => [i.id, toIdentityView(i)] as const) : [],
  );
  const projectNames = new Map(db.select({ id: projects.id, name: projects.name }).from(projects).where(eq(projects.orgId, orgId)).all().map((p) => [p.id, p.name] as const));
  const emails = userEmails(db, orgId, rows.map((c) => c.assigneeId));
  return rows.map((c) => {
    const list = (byCase.get(c.id) ?? []).sort((a, b) => a.createdUs - b.createdUs);
    const newest = list.at(-1);
    const withContent = [...list].reverse().find((r) => r.content);
    const analysed = list.filter((r) => r.aiAnalyzedAt != null);
    const topAi = analysed.sort((a, b) => (b.aiConfidence ?? 0) - (a.aiConfidence ?? 0))[0];
    const subject = c.subjectIdentityId ? subjects.get(c.subjectIdentityId) : undefined;
    return {
      id: c.id,
      projectId: c.projectId,
      projectName: projectNames.get(c.projectId) ?? "",
      status: c.status as Status,
      bucket: c.bucket,
      severity: maxSeverity(list.map((r) => r.severity as Severity)),
      reasons: [...new Set(list.flatMap((r) => JSON.parse(r.reasons) as string[]))],
      reportCount: c.reportCount,
      openReportId: list.find((r) => (OPEN_STATUSES as readonly string[]).includes(r.status))?.id ?? null,
      subject: subject ? { id: subject.id, displayName: subject.displayName, handleLabel: subject.handleLabel } : null,
      target: c.contentExternalId != null ? { contentType: c.contentType || null, contentExternalId: c.contentExternalId } : null,
      excerpt: excerptOf(withContent?.content ?? newest?.description),
      ai: topAi ? { severity: topAi.aiSeverity as Severity, confidence: topAi.aiConfidence ?? 0 } : null,
      assignee: c.assigneeId ? { id: c.assigneeId, email: emails.get(c.assigneeId) ?? "unknown user" } : null,
      assignedAt: isoOrNull(c.assignedAt),
      createdAt: iso(c.createdAt),
      lastReportAt: iso(c.lastReportAt),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// A case with its whole context.

/** Enforcement actions as the case and identity pages show them: the enforcement domain's own view. */
export type EnforcementView = EnforcementActionView;

export function enforcementOf(db: Db, now: number, identityId: string, limit = 50): EnforcementView[] {
  const rows = db
    .select()
    .from(enforcementActions)
    .where(eq(enforcementActions.identityId, identityId))
    .orderBy(desc(enforcementActions.id))
    .limit(limit)
    .all();
  return actionViews(db, rows, now);
}

/** An analysis with, for link scans, what fetching the URL gave. */
export interface AnalysisDetail extends AnalysisView {
  scan: { finalUrl: string | null; statusCode: number | null; kind: string; title: string | null; reason: string | null; fetchedAt: string } | null;
}

function analysesOfReports(db: Db, reportIds: string[]): AnalysisDetail[] {
  if (!reportIds.length) return [];
  const rows = db.select().from(contentAnalyses).where(inArray(contentAnalyses.reportId, reportIds)).orderBy(desc(contentAnalyses.id)).all();
  const urls = [...new Set(rows.map((r) => r.url).filter((u): u is string => !!u))];
  const scans = new Map(urls.length ? db.select().from(urlScanCache).where(inArray(urlScanCache.url, urls)).all().map((s) => [s.url, s] as const) : []);
  return rows.map((a) => {
    const s = a.url ? scans.get(a.url) : undefined;
    return {
      ...toAnalysisView(a),
      scan: s ? { finalUrl: s.finalUrl, statusCode: s.statusCode, kind: s.kind, title: s.title, reason: s.reason, fetchedAt: iso(s.fetchedAt) } : null,
    };
  });
}

export interface ReporterView {
  identity: IdentityView;
  /** Reports this identity filed in the project, by status: how reliable a reporter it is. */
  filed: Partial<Record<Status, number>>;
}

/** How many reports each reporter filed, by status (an index search per reporter). */
function reporterStats(db: Db, reporterIds: string[]): Map<string, Partial<Record<Status, number>>> {
  const out = new Map<string, Partial<Record<Status, number>>>();
  if (!reporterIds.length) return out;
  const rows = db
    .select({ id: reports.reporterIdentityId, status: reports.status, n: sql<number>`count(*)` })
    .from(reports)
    // Identities belong to one project, so the reporter ids alone pick the project's reports
    // (and leave the planner the reporter index rather than a walk of the whole project).
    .where(inArray(reports.reporterIdentityId, reporterIds))
    .groupBy(reports.reporterIdentityId, reports.status)
    .all();
  for (const r of rows) {
    if (!r.id) continue;
    const m = out.get(r.id) ?? {};
    m[r.status as Status] = r.n;
    out.set(r.id, m);
  }
  return out;
}

export interface AuditEntry extends AuditEventView {
  /** The email of a user actor, when the actor is a dashboard user. */
  actorEmail: string | null;
}

function auditOfCase(db: Db, orgId: string, caseId: string, reportIds: string[], limit = 200): AuditEntry[] {
  const caseRows = db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.orgId, orgId), eq(auditEvents.entityType, "case"), eq(auditEvents.entityId, caseId)))
    .orderBy(desc(auditEvents.id))
    .limit(limit)
    .all();
  const reportRows = reportIds.length
    ? db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.orgId, orgId), eq(auditEvents.entityType, "report"), inArray(auditEvents.entityId, reportIds.slice(0, 500))))
        .orderBy(desc(auditEvents.id))
        .limit(limit)
        .all()
    : [];
  const rows = [...caseRows, ...reportRows].sort((a, b) => (a.id < b.id ? 1 : -1)).slice(0, limit);
  return withActorEmails(
    db,
    orgId,
    rows.map(toAuditEventView),
  );
}

/** Adds the email of each user actor (audit events store the user's id). */
export function withActorEmails(db: Db, orgId: string, events: AuditEventView[]): AuditEntry[] {
  const emails = userEmails(db, orgId, events.filter((e) => e.actor.type === "user").map((e) => e.actor.id));
  return events.map((e) => ({ ...e, actorEmail: e.actor.type === "user" && e.actor.id ? (emails.get(e.actor.id) ?? null) : null }));
}

export interface CaseDetail {
  case: CaseView;
  projectName: string;
  assignee: Person | null;
  reports: ReportView[];
  subject: IdentityView | null;
  subjectCases: CaseView[];
  subjectEnforcement: EnforcementView[];
  /** Enforcement actions taken on this case's reports (on whoever they were against). */
  caseEnforcement: EnforcementView[];
  reporters: ReporterView[];
  analyses: AnalysisDetail[];
  notes: (NoteView & { authorEmail: string | null })[];
  audit: AuditEntry[];
}

export function caseDetail(db: Db, now: number, orgId: string, caseId: string): CaseDetail {
  const c = requireCase(db, orgId, caseId);
  const rows = reportsOfCase(db, c.id);
  const reportViews = toReportViews(db, rows);
  const reportIds = rows.map((r) => r.id);
  const subjectRow = c.subjectIdentityId ? db.select().from(identities).where(eq(identities.id, c.subjectIdentityId)).get() : undefined;
  const project = db.select({ name: projects.name }).from(projects).where(eq(projects.id, c.projectId)).get();

  const reporterIds = [...new Set(rows.map((r) => r.reporterIdentityId).filter((x): x is string => !!x))].slice(0, 20);
  const reporterRows = reporterIds.length ? db.select().from(identities).where(inArray(identities.id, reporterIds)).all() : [];
  const stats = reporterStats(db, reporterIds);

  const notes = listCaseNotes(db, c.id);
  const emails = userEmails(db, orgId, [c.assigneeId, ...notes.filter((n) => n.author.type === "user").map((n) => n.author.id)]);
  const caseEnforcement = reportIds.length
    ? actionViews(
        db,
        db
          .select()
          .from(enforcementActions)
          .where(inArray(enforcementActions.reportId, reportIds.slice(0, 500)))
          .orderBy(desc(enforcementActions.id))
          .all(),
        now,
      )
    : [];
  return {
    case: toCaseView(c),
    projectName: project?.name ?? "",
    assignee: c.assigneeId ? { id: c.assigneeId, email: emails.get(c.assigneeId) ?? "unknown user" } : null,
    reports: reportViews,
    subject: subjectRow ? toIdentityView(subjectRow) : null,
    subjectCases: c.subjectIdentityId ? subjectHistory(db, c.subjectIdentityId, c.id) : [],
    subjectEnforcement: c.subjectIdentityId ? enforcementOf(db, now, c.subjectIdentityId) : [],
    caseEnforcement,
    reporters: reporterRows.map((i) => ({ identity: toIdentityView(i), filed: stats.get(i.id) ?? {} })),
    analyses: analysesOfReports(db, reportIds),
    notes: notes.map((n) => ({ ...n, authorEmail: n.author.type === "user" && n.author.id ? (emails.get(n.author.id) ?? null) : null })),
    audit: auditOfCase(db, orgId, c.id, reportIds),
  };
}

// ---------------------------------------------------------------------------------------------
// An identity's profile.

export interface IdentityProfile {
  identity: IdentityView;
  projectName: string;
  cases: CaseView[];
  reportsAbout: ReportView[];
  reportsFiled: ReportView[];
  enforcement: EnforcementView[];
}

export function identityProfile(db: Db, now: number, orgId: string, identityId: string): IdentityProfile {
  const row = db
    .select({ identity: identities, projectName: projects.name })
    .from(identities)
    .innerJoin(projects, eq(projects.id, identities.projectId))
    .where(and(eq(identities.id, identityId), eq(projects.orgId, orgId)))
    .get();
  if (!row) throw notFound("Identity not found");
  const about = db.select().from(reports).where(eq(reports.subjectIdentityId, identityId)).orderBy(desc(reports.createdUs)).limit(50).all();
  // No index on the reporter: this walks the project's reports from the newest (bounded by the limit).
  const filed = db
    .select()
    .from(reports)
    .where(and(eq(reports.projectId, row.identity.projectId), eq(reports.reporterIdentityId, identityId)))
    .orderBy(desc(reports.createdUs))
    .limit(20)
    .all();
  return {
    identity: toIdentityView(row.identity),
    projectName: row.projectName,
    cases: db.select().from(cases).where(eq(cases.subjectIdentityId, identityId)).orderBy(desc(cases.createdAt)).limit(50).all().map(toCaseView),
    reportsAbout: toReportViews(db, about),
    reportsFiled: toReportViews(db, filed),
    enforcement: enforcementOf(db, now, identityId),
  };
}

// ---------------------------------------------------------------------------------------------
// The overview: report volume over time, and the figures a team lead watches.

export interface Overview {
  days: string[];
  bySeverity: Record<Severity, number[]>;
  /** Categories by total volume in the period, largest first. */
  byCategory: { name: string; counts: number[]; total: number }[];
  figures: {
    /** Reports waiting for a decision now (OPEN, TRIAGED, IN_REVIEW). */
    pending: number;
    openCases: Record<Bucket, number>;
    /** Reports filed in the period. */
    received: number;
    /** Decisions in the period. */
    actioned: number;
    dismissed: number;
    escalated: number;
    /** actioned / (actioned + dismissed), null without decisions. */
    actionRate: number | null;
    /** Median time from a report's creation to its resolution or dismissal, in the period. */
    medianDecisionMs: number | null;
  };
}

const DAY_MS = 86_400_000;

/** The smallest UUIDv7 of a millisecond: an id bound for "created since". */
const uuidV7Floor = (ms: number): string => {
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-0000-0000-000000000000`;
};

export function overview(db: Db, clock: Clock, q: { orgId: string; projectId?: string; days: number }): Overview {
  const now = clock.now();
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const since = today - (q.days - 1) * DAY_MS;
  const days = Array.from({ length: q.days }, (_, i) => iso(since + i * DAY_MS).slice(0, 10));
  const dayIndex = new Map(days.map((d, i) => [d, i] as const));
  const scope = q.projectId ? { col: "project_id", val: q.projectId } : { col: "org_id", val: q.orgId };
  const client = db.$client;

  const bySeverity = Object.fromEntries(SEVERITIES.map((s) => [s, days.map(() => 0)])) as Record<Severity, number[]>;
  const sevRows = client
    .query(
      `SELECT date(created_us / 1000000, 'unixepoch') AS day, severity, count(*) AS n FROM reports
       WHERE ${scope.col} = ? AND created_us >= ? GROUP BY day, severity`,
    )
    .all(scope.val, since * 1000) as { day: string; severity: Severity; n: number }[];
  let received = 0;
  for (const r of sevRows) {
    const i = dayIndex.get(r.day);
    if (i === undefined || !bySeverity[r.severity]) continue;
    bySeverity[r.severity][i]! += r.n;
    received += r.n;
  }

  const catRows = client
    .query(
      q.projectId
        ? `SELECT date(rr.created_us / 1000000, 'unixepoch') AS day, rr.name AS name, count(*) AS n
           FROM reports r JOIN report_reasons rr ON rr.report_id = r.id
           WHERE r.project_id = ? AND r.created_us >= ? GROUP BY day, rr.name`
        : `SELECT date(created_us / 1000000, 'unixepoch') AS day, name, count(*) AS n FROM report_reasons
           WHERE org_id = ? AND created_us >= ? GROUP BY day, name`,
    )
    .all(scope.val, since * 1000) as { day: string; name: string; n: number }[];
  const cats = new Map<string, number[]>();
  for (const r of catRows) {
    const i = dayIndex.get(r.day);
    if (i === undefined) continue;
    const counts = cats.get(r.name) ?? days.map(() => 0);
    counts[i]! += r.n;
    cats.set(r.name, counts);
  }
  const byCategory = [...cats.entries()]
    .map(([name, counts]) => ({ name, counts, total: counts.reduce((a, b) => a + b, 0) }))
    .sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));

  let pending = 0;
  for (const status of OPEN_STATUSES) {
    const where = [eq(reports.orgId, q.orgId), eq(reports.status, status), q.projectId ? eq(reports.projectId, q.projectId) : undefined];
    pending += db.select({ n: sql<number>`count(*)` }).from(reports).where(and(...where)).get()?.n ?? 0;
  }
  const openCases = { emergency: 0, high: 0, normal: 0 } as Record<Bucket, number>;
  for (const bucket of BUCKETS) {
    const where = [eq(cases.orgId, q.orgId), eq(cases.isOpen, 1), eq(cases.bucket, bucket), q.projectId ? eq(cases.projectId, q.projectId) : undefined];
    openCases[bucket] = db.select({ n: sql<number>`count(*)` }).from(cases).where(and(...where)).get()?.n ?? 0;
  }

  // Decisions come from the audit trail (each is one event per report, with its time). Audit
  // ids are UUIDv7s of the real time: the id bound (a day early, for a shifted test clock)
  // keeps this a range search of the (org, action, id) index; created_at is the exact filter.
  const idFloor = uuidV7Floor(since - (now - Date.now()) - DAY_MS);
  const decisions = (action: string, extra = "") =>
    client
      .query(
        `SELECT a.entity_id AS id, a.created_at AS at, r.created_us AS createdUs FROM audit_events a JOIN reports r ON r.id = a.entity_id
         WHERE a.org_id = ? AND a.action = ? AND a.id >= ? AND a.created_at >= ? ${q.projectId ? "AND a.project_id = ?" : ""} ${extra}`,
      )
      .all(...[q.orgId, action, idFloor, since, ...(q.projectId ? [q.projectId] : [])]) as { id: string; at: number; createdUs: number }[];
  const resolvedRows = decisions("REPORT_RESOLVED");
  const dismissedRows = decisions("REPORT_DISMISSED");
  const escalatedRows = decisions("REPORT_ESCALATED", "AND json_extract(a.data, '$.applied') = 1");
  const distinct = (rows: { id: string }[]) => new Set(rows.map((r) => r.id)).size;
  const actioned = distinct(resolvedRows);
  const dismissed = distinct(dismissedRows);
  const durations = [...resolvedRows, ...dismissedRows].map((r) => Math.max(0, r.at - Math.floor(r.createdUs / 1000))).sort((a, b) => a - b);
  const mid = Math.floor(durations.length / 2);
  const medianDecisionMs = durations.length ? (durations.length % 2 ? durations[mid]! : Math.round((durations[mid - 1]! + durations[mid]!) / 2)) : null;

  return {
    days,
    bySeverity,
    byCategory,
    figures: {
      pending,
      openCases,
      received,
      actioned,
      dismissed,
      escalated: distinct(escalatedRows),
      actionRate: actioned + dismissed ? actioned / (actioned + dismissed) : null,
      medianDecisionMs,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// People: who is who, for "taken by", notes and the audit log.

export function people(db: Db, orgId: string): (Person & { role: string; disabled: boolean })[] {
  return db
    .select({ id: users.id, email: users.email, role: users.role, disabledAt: users.disabledAt })
    .from(users)
    .where(eq(users.orgId, orgId))
    .orderBy(asc(users.email))
    .all()
    .map((u) => ({ id: u.id, email: u.email, role: u.role, disabled: u.disabledAt != null }));
}
