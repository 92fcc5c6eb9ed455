/**
 * What the moderators' dashboard reads and no other operation answers: the review queue with
 * filters and everything a row shows, a case with its whole context, an identity's profile,
 * the team lead's figures and charts, and the change counter the dashboard polls.
 */
import { and, asc, desc, eq, gt, gte, inArray, lt, or, sql, type AnyColumn, type SQL, type SQLWrapper } from "drizzle-orm";
import { auditEvents, caseTags, cases, contentAnalyses, enforcementActions, identities, projects, reportCategories, reportReasons, reports, urlScanCache, users } from "../../db/schema.ts";
import { toAnalysisView, type AnalysisView } from "../analysis/analysis.ts";
import { toAuditEventView, type AuditEventView } from "../core/audit.ts";
import { categoryKey } from "../categories/category-key.ts";
import { caseCaution } from "../categories/graphic.ts";
import { firstSubjectOfCase, listCaseNotes, namesOfCase, reportsOfCase, reportsOfCases, requireCase, subjectHistory, toCaseView, type CaseView, type NoteView } from "../cases/cases.ts";
import { DAY_MS, iso, isoOrNull } from "../core/clock.ts";
import type { DomainContext, ReadContext } from "../core/context.ts";
import { actionViews, type EnforcementActionView } from "../enforcement/enforcement.ts";
import { badRequest, notFound } from "../core/errors.ts";
import { uuidV7Floor } from "../core/ids.ts";
import { getIdentity, toIdentityView, type IdentityView } from "../identities/identities.ts";
import { backgroundBacklog, type Backlog } from "../plumbing/job-backlog.ts";
import { breathe } from "../plumbing/event-loop.ts";
import { breatheBetweenReads, readWindowMs, windowsOf } from "../plumbing/slices.ts";
import { holderOf, isClaimedBy, isUnclaimed } from "../cases/claims.ts";
import { assertMaySeeSubject, isCountedFor, isOfWorkableCase, listableCases, reportNotReviewedBlind, workableCases, type AccessContext } from "../access/queue-access.ts";
import { defaultQueue, pickableQueues, queueIdOfCase, queueOrder, queueScope, requireQueue, segmentSql, type QueuePick } from "../review/queues.ts";
import { countUpTo } from "../../db/count-up-to.ts";
import { aiCapacity, type AiCapacity } from "../analysis/capacity.ts";
import { toReportViews, type ReportView } from "../intake/reports.ts";
import { BUCKETS, maxSeverity, SEVERITIES, type Bucket, type Severity } from "../cases/severity.ts";
import { tagsOfCases } from "../cases/tags.ts";
import { userEmails } from "../accounts/users.ts";
import { liveProject } from "../accounts/projects.ts";
import { QUEUE_VIEWS, teamOfView, type QueueOrdering, type QueueView } from "../views/queue.ts";
import type { Team } from "../views/report.ts";
import type { CaseCaution } from "../views/viewing.ts";
import { OPEN_STATUSES, type Status } from "../views/workflow.ts";

/** The dashboard reads one organization's data, the context's. */
type TenantRead = ReadContext & Pick<DomainContext, "orgId">;

// ---------------------------------------------------------------------------------------------
// Change counter: what the dashboard polls.

/**
 * The organization's change version: the id of its newest audit event. Every creation and
 * state change writes one, so when this is unchanged nothing the dashboard shows has changed.
 * One step down the (org_id, id) index.
 */
export async function changeVersion(ctx: Pick<DomainContext, "db" | "orgId">): Promise<string | null> {
  const [newest] = await ctx.db
    .select({ id: auditEvents.id })
    .from(auditEvents)
    .where(eq(auditEvents.orgId, ctx.orgId))
    .orderBy(desc(auditEvents.id))
    .limit(1);
  return newest?.id ?? null;
}

// ---------------------------------------------------------------------------------------------
// The review queue.

/** The queue's filters; the organization is the context's. */
export interface QueueFilter {
  projectId?: string;
  /** Which cases: every open one (default), unclaimed, mine, escalated to a team, appealed. */
  view?: QueueView;
  status?: Status;
  /** A category (reason) name: cases with at least one report giving it. */
  category?: string;
  /** Severity bucket: emergency (CRITICAL), high (HIGH), normal (the rest). */
  bucket?: Bucket;
  /** "me": claimed by this user; "unclaimed": nobody's (the views "mine" and "unassigned" say the same). */
  assigned?: "me" | "unclaimed";
  /** A case tag. */
  tag?: string;
  /** One review queue (issue 15); absent: every queue the caller may work, by severity then age. */
  queueId?: string;
  userId?: string | null;
  /** Where the previous page ended (its `nextCursor`). */
  cursor?: string;
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
  /** Until when a claim taken in review mode holds (null: an assignment, held until released or decided). */
  claimUntil: string | null;
  /** The team the case is escalated to (open cases), and when. */
  escalation: { team: Team; at: string } | null;
  tags: string[];
  /** A trusted flagger (DSA Art. 22) reported into the case: it goes first in its bucket. */
  trustedFlagged: boolean;
  createdAt: string;
  lastReportAt: string;
}

/**
 * The queue page counts cases up to this many (each count of the page: `countCap`); a count of
 * QUEUE_COUNT_CAP + 1 means "more than" (src/db/count-up-to.ts). Why: the page asks for about
 * ten counts at every poll (every 2 s while cases change), and an exact count is a scan of every
 * open case, on SQLite in the serving thread: at 60,000 open cases that held every other request
 * for about 20 ms at each poll, and intake's p99 grew with the backlog (issue 44's soak). Capped,
 * a poll costs the same at any backlog; a moderator needs "more than 1,000", not the figure.
 */
export const QUEUE_COUNT_CAP = 1_000;

export interface QueuePage {
  items: QueueItem[];
  /** Cases under every filter, by bucket, and in all (the "N" of "showing … of N"), each counted up to `countCap`. */
  counts: Record<Bucket, number> & { total: number };
  /** Each view's count under the project filter alone (the tabs), counted up to `countCap`. */
  views: Record<QueueView, number>;
  /** Every count of the page is exact up to this; countCap + 1 means more than countCap. */
  countCap: number;
  /** The cursor of the next page, null on the last one. */
  nextCursor: string | null;
  /** The queues the caller may work with their open cases counted up to `countCap` (the picker), and the one shown (null: all of them). */
  queues: QueuePick[];
  queueId: string | null;
  ordering: QueueOrdering;
}

const EXCERPT = 180;
const excerptOf = (s: string | null | undefined): string | null => {
  if (!s) return null;
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > EXCERPT ? `${flat.slice(0, EXCERPT)}…` : flat || null;
};

/** Buckets in queue order: emergency, then high, then normal. */
const QUEUE_BUCKETS = [...BUCKETS].reverse() as Bucket[];

/** The names, as the organization's projects spell them, of the category named `name` (any spelling). */
async function categorySpellings(ctx: Pick<DomainContext, "db" | "orgId">, name: string): Promise<string[]> {
  const rows = await ctx.db
    .select({ name: reportCategories.name })
    .from(reportCategories)
    .innerJoin(projects, eq(projects.id, reportCategories.projectId))
    .where(and(eq(projects.orgId, ctx.orgId), eq(reportCategories.nameKey, categoryKey(name))));
  return [...new Set([name, ...rows.map((r) => r.name)])];
}

/**
 * The queue's segments, in order: each bucket (emergency, high, normal), within it first the
 * cases a trusted flagger reported into (DSA Art. 22), then the others.
 */
const QUEUE_SEGMENTS = QUEUE_BUCKETS.flatMap((bucket) => [
  { bucket, trusted: 1 as const },
  { bucket, trusted: 0 as const },
]);

/**
 * A position in the queue: the segment's place in queue order (QUEUE_SEGMENTS), the case's
 * creation time and its id (the order within a segment), as `<segment>.<created ms>.<id>`.
 */
interface QueueCursor {
  segment: number;
  createdAt: number;
  id: string;
}
const encodeCursor = (c: QueueCursor): string => `${c.segment}.${c.createdAt}.${c.id}`;
const CURSOR_REFUSED = "cursor: not a cursor of this queue (pass back nextCursor as it came)";
function decodeCursor(s: string): QueueCursor {
  const m = /^([0-5])\.(\d{1,16})\.([0-9a-zA-Z-]{1,64})$/.exec(s);
  if (!m) throw badRequest(CURSOR_REFUSED);
  return { segment: Number(m[1]), createdAt: Number(m[2]), id: m[3]! };
}

/**
 * A position in a queue ordered by "priority" (priority desc, then segment, then age) or "age"
 * (age alone): `p.<priority>.<segment>.<created ms>.<id>` or `a.<created ms>.<id>`.
 */
interface OrderedCursor {
  priority: number;
  segment: number;
  createdAt: number;
  id: string;
}
function decodeOrderedCursor(s: string, ordering: "priority" | "age"): OrderedCursor {
  if (ordering === "age") {
    const m = /^a\.(\d{1,16})\.([0-9a-zA-Z-]{1,64})$/.exec(s);
    if (!m) throw badRequest(CURSOR_REFUSED);
    return { priority: 0, segment: 0, createdAt: Number(m[1]), id: m[2]! };
  }
  const m = /^p\.(-?\d{1,12})\.([0-5])\.(\d{1,16})\.([0-9a-zA-Z-]{1,64})$/.exec(s);
  if (!m) throw badRequest(CURSOR_REFUSED);
  return { priority: Number(m[1]), segment: Number(m[2]), createdAt: Number(m[3]), id: m[4]! };
}

/**
 * The cases of a queue segment. A trusted segment of a view of open cases is written so that
 * SQLite searches the small partial index cases_trusted_idx (org_id, created_at WHERE is_open = 1
 * AND trusted_flagged = 1): its condition spelt out as literals (a bound `is_open = ?` does not
 * show SQLite that the index holds every row the query wants), and the bucket compared through
 * coalesce(), which no index serves, so that the planner does not take (org_id, is_open, bucket,
 * created_at) instead and walk every case of the bucket for the few trusted ones: an empty trusted
 * segment took 30 to 140 ms at 37,000 open emergency cases, on the thread that serves every
 * request on SQLite. test/query-plan.test.ts checks the plan.
 */
export function segmentCondition(segment: { bucket: Bucket; trusted: 0 | 1 }, openView: boolean): SQL {
  if (segment.trusted && openView) return sql`${cases.isOpen} = 1 and ${cases.trustedFlagged} = 1 and coalesce(${cases.bucket}, '') = ${segment.bucket}`;
  return and(eq(cases.bucket, segment.bucket), eq(cases.trustedFlagged, segment.trusted))!;
}

const segmentOf = (c: Pick<typeof cases.$inferSelect, "bucket" | "trustedFlagged">): number =>
  QUEUE_SEGMENTS.findIndex((s) => s.bucket === c.bucket && s.trusted === (c.trustedFlagged === 1 ? 1 : 0));

/**
 * One page of a queue ordered by "priority" or "age", from the cursor on: one keyset query
 * (the order is total: id breaks ties), so paging neither skips nor repeats a case.
 */
async function orderedPage(ctx: TenantRead, where: SQL | undefined, ordering: "priority" | "age", cursor: string | undefined, limit: number) {
  const c = cursor ? decodeOrderedCursor(cursor, ordering) : null;
  const afterAge = c ? or(gt(cases.createdAt, c.createdAt), and(eq(cases.createdAt, c.createdAt), gt(cases.id, c.id))) : undefined;
  const after =
    c && ordering === "priority"
      ? or(
          sql`${cases.priority} < ${c.priority}`,
          and(eq(cases.priority, c.priority), or(sql`${segmentSql} > ${c.segment}`, and(sql`${segmentSql} = ${c.segment}`, afterAge))),
        )
      : afterAge;
  const rows = await ctx.db.select().from(cases).where(and(where, after)).orderBy(...queueOrder(ordering)).limit(limit + 1);
  let nextCursor: string | null = null;
  if (rows.length > limit) {
    rows.length = limit;
    const last = rows.at(-1)!;
    nextCursor = ordering === "age" ? `a.${last.createdAt}.${last.id}` : `p.${last.priority}.${segmentOf(last)}.${last.createdAt}.${last.id}`;
  }
  return { rows, nextCursor };
}

/** The cases a view holds (before any other filter). */
function viewCondition(ctx: Pick<DomainContext, "orgId">, view: QueueView, userId: string | null | undefined, now: number): SQL[] {
  if (view === "appealed") return [eq(cases.orgId, ctx.orgId), eq(cases.status, "APPEALED")];
  const open = [eq(cases.orgId, ctx.orgId), eq(cases.isOpen, 1)];
  const team = teamOfView(view);
  if (team) return [...open, eq(cases.escalatedTeam, team)];
  if (view === "unassigned") return [...open, isUnclaimed(now)];
  // "mine" without a user (an API key): nobody's cases are the key's.
  if (view === "mine") return [...open, userId ? isClaimedBy(userId, now) : sql`1 = 0`];
  return open;
}

/**
 * One page of the queue: emergency first, then high, then normal; within a bucket the cases a
 * trusted flagger reported into first (a search of the cases_trusted_idx partial index), then
 * the others (the (org, open, bucket, created) index), each oldest first from the cursor on, with the
 * counts per bucket under the same filters and each view's count, so that every case is
 * reachable page by page and the page can say "51–100 of 19,938".
 */
export async function queue(ctx: TenantRead & AccessContext, f: QueueFilter): Promise<QueuePage> {
  const counts = { emergency: 0, high: 0, normal: 0, total: 0 };
  let rows: (typeof cases.$inferSelect)[] = [];
  const view: QueueView = f.view ?? (f.assigned === "me" ? "mine" : f.assigned === "unclaimed" ? "unassigned" : "open");
  // The queue shown (or every queue the caller may work) and its ordering (src/domain/review/queues.ts).
  const scope = await queueScope(ctx, f.queueId);
  const cursor = f.cursor && scope.ordering === "severity_age" ? decodeCursor(f.cursor) : null;
  // Reports keep their reasons in their project's spelling of the category: the filter matches
  // every spelling whose key (src/domain/categories/category-key.ts) is the filter's, never SQLite's
  // ASCII-only lower().
  const categoryNames = f.category ? await categorySpellings(ctx, f.category) : null;
  const now = ctx.clock.now();
  const filters: SQL[] = viewCondition(ctx, view, f.userId, now);
  if (scope.where) filters.push(scope.where);
  if (f.projectId) filters.push(eq(cases.projectId, f.projectId));
  if (f.status) filters.push(eq(cases.status, f.status));
  if (f.assigned === "me") filters.push(f.userId ? isClaimedBy(f.userId, now) : sql`1 = 0`);
  if (f.assigned === "unclaimed") filters.push(isUnclaimed(now));
  if (f.tag) filters.push(sql`exists (select 1 from ${caseTags} ct where ct.case_id = ${cases.id} and ct.tag = ${f.tag})`);
  if (categoryNames) {
    filters.push(
      sql`exists (select 1 from ${reports} r join report_reasons rr on rr.report_id = r.id
                  where r.case_id = ${cases.id} and rr.name in ${categoryNames})`,
    );
  }
  let nextCursor: string | null = null;
  for (const bucket of QUEUE_BUCKETS) {
    if (f.bucket && f.bucket !== bucket) continue;
    counts[bucket] = await countUpTo(ctx.db, cases, and(...filters, eq(cases.bucket, bucket)), QUEUE_COUNT_CAP + 1);
    counts.total += counts[bucket];
  }
  counts.total = Math.min(counts.total, QUEUE_COUNT_CAP + 1);
  if (scope.ordering !== "severity_age") {
    const page = await orderedPage(ctx, and(...filters, f.bucket ? eq(cases.bucket, f.bucket) : undefined), scope.ordering, f.cursor, f.limit);
    rows = page.rows;
    nextCursor = page.nextCursor;
  }
  for (const [index, segment] of QUEUE_SEGMENTS.entries()) {
    if (scope.ordering !== "severity_age") break;
    if ((f.bucket && f.bucket !== segment.bucket) || !counts[segment.bucket]) continue;
    if (rows.length > f.limit || (cursor && index < cursor.segment)) continue;
    const where = and(...filters, segmentCondition(segment, view !== "appealed"));
    const after =
      cursor && index === cursor.segment
        ? or(gt(cases.createdAt, cursor.createdAt), and(eq(cases.createdAt, cursor.createdAt), gt(cases.id, cursor.id)))
        : undefined;
    // One more than the page holds: whether a next page exists.
    const want = f.limit + 1 - rows.length;
    rows.push(...(await ctx.db.select().from(cases).where(and(where, after)).orderBy(asc(cases.createdAt), asc(cases.id)).limit(want)));
  }
  if (rows.length > f.limit) {
    rows.length = f.limit;
    const last = rows.at(-1)!;
    nextCursor = encodeCursor({ segment: segmentOf(last), createdAt: last.createdAt, id: last.id });
  }
  return {
    items: await toQueueItems(ctx, rows),
    counts,
    countCap: QUEUE_COUNT_CAP,
    views: await viewCounts(ctx, f, scope.where),
    nextCursor,
    queues: await pickableQueues(ctx, QUEUE_COUNT_CAP),
    queueId: f.queueId ?? null,
    ordering: scope.ordering,
  };
}

/** Each view's count under the project filter alone: the queue's tabs. */
async function viewCounts(ctx: TenantRead, f: Pick<QueueFilter, "projectId" | "userId">, scope: SQL | undefined): Promise<Record<QueueView, number>> {
  const out = {} as Record<QueueView, number>;
  for (const view of QUEUE_VIEWS) {
    const where = and(...viewCondition(ctx, view, f.userId, ctx.clock.now()), scope, f.projectId ? eq(cases.projectId, f.projectId) : undefined);
    out[view] = await countUpTo(ctx.db, cases, where, QUEUE_COUNT_CAP + 1);
  }
  return out;
}

async function toQueueItems(ctx: TenantRead, rows: (typeof cases.$inferSelect)[]): Promise<QueueItem[]> {
  if (!rows.length) return [];
  const now = ctx.clock.now();
  const byCase = new Map<string, (typeof reports.$inferSelect)[]>();
  for (const r of await reportsOfCases(ctx, { caseIds: rows.map((c) => c.id) })) {
    const list = byCase.get(r.caseId) ?? [];
    list.push(r);
    byCase.set(r.caseId, list);
  }
  const subjectIds = [...new Set(rows.map((c) => c.subjectIdentityId).filter((x): x is string => !!x))];
  const subjectRows = subjectIds.length ? await ctx.db.select().from(identities).where(inArray(identities.id, subjectIds)) : [];
  const subjects = new Map(subjectRows.map((i) => [i.id, toIdentityView(i)] as const));
  const projectRows = await ctx.db.select({ id: projects.id, name: projects.name }).from(projects).where(eq(projects.orgId, ctx.orgId));
  const projectNames = new Map(projectRows.map((p) => [p.id, p.name] as const));
  const emails = await userEmails(ctx, { ids: rows.map((c) => c.assigneeId) });
  const tags = await tagsOfCases(ctx, { caseIds: rows.map((c) => c.id) });
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
      ...holding(c, emails, now),
      escalation: c.escalatedTeam ? { team: c.escalatedTeam, at: iso(c.escalatedAt ?? c.updatedAt) } : null,
      tags: tags.get(c.id) ?? [],
      trustedFlagged: c.trustedFlagged === 1,
      createdAt: iso(c.createdAt),
      lastReportAt: iso(c.lastReportAt),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// A case with its whole context.

/** Enforcement actions as the case and identity pages show them: the enforcement domain's own view. */
export type EnforcementView = EnforcementActionView;

/**
 * The enforcement actions against an identity, newest first, with their status at `now` (default:
 * the clock's): those taken outside any case, and those of the cases the caller may work.
 */
export async function enforcementOf(ctx: ReadContext & AccessContext, input: { identityId: string; now?: number; limit?: number }): Promise<EnforcementView[]> {
  const rows = await ctx.db
    .select()
    .from(enforcementActions)
    .where(and(eq(enforcementActions.identityId, input.identityId), await isOfWorkableCase(ctx, "case", enforcementActions.caseId, { whenNull: "kept" })))
    .orderBy(desc(enforcementActions.id))
    .limit(input.limit ?? 50);
  return actionViews(ctx, { rows, now: input.now });
}

/** An analysis with, for link scans, what fetching the URL gave. */
export interface AnalysisDetail extends AnalysisView {
  scan: { finalUrl: string | null; statusCode: number | null; kind: string; title: string | null; reason: string | null; fetchedAt: string } | null;
}

/** The most AI analyses a case page shows: the newest. */
const CASE_PAGE_ANALYSES = 50;

/** The newest analyses of the case's reports (CASE_PAGE_ANALYSES), with the link scans they name. */
async function analysesOfCase(ctx: Pick<DomainContext, "db">, caseId: string): Promise<AnalysisDetail[]> {
  const ofCase = ctx.db.select({ id: reports.id }).from(reports).where(eq(reports.caseId, caseId));
  const rows = await ctx.db.select().from(contentAnalyses).where(inArray(contentAnalyses.reportId, ofCase)).orderBy(desc(contentAnalyses.id)).limit(CASE_PAGE_ANALYSES);
  const urls = [...new Set(rows.map((r) => r.url).filter((u): u is string => !!u))];
  const scanRows = urls.length ? await ctx.db.select().from(urlScanCache).where(inArray(urlScanCache.url, urls)) : [];
  const scans = new Map(scanRows.map((s) => [s.url, s] as const));
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

/**
 * How many reports each reporter filed, by status (an index search per reporter), but those the
 * blind-review wall hides from the caller: their status would tell the decision.
 */
async function reporterStats(ctx: AccessContext, reporterIds: string[]): Promise<Map<string, Partial<Record<Status, number>>>> {
  const out = new Map<string, Partial<Record<Status, number>>>();
  if (!reporterIds.length) return out;
  const rows = await ctx.db
    .select({ id: reports.reporterIdentityId, status: reports.status, n: sql<number>`count(*)` })
    .from(reports)
    // Identities belong to one project, so the reporter ids alone pick the project's reports
    // (and leave the planner the reporter index rather than a walk of the whole project).
    .where(and(inArray(reports.reporterIdentityId, reporterIds), await reportNotReviewedBlind(ctx)))
    .groupBy(reports.reporterIdentityId, reports.status);
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

async function auditOfCase(ctx: TenantRead, caseId: string, reportIds: string[], limit = 200): Promise<AuditEntry[]> {
  const caseRows = await ctx.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.orgId, ctx.orgId), eq(auditEvents.entityType, "case"), eq(auditEvents.entityId, caseId)))
    .orderBy(desc(auditEvents.id))
    .limit(limit);
  const reportRows = reportIds.length
    ? await ctx.db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.orgId, ctx.orgId), eq(auditEvents.entityType, "report"), inArray(auditEvents.entityId, reportIds.slice(0, 500))))
        .orderBy(desc(auditEvents.id))
        .limit(limit)
    : [];
  const rows = [...caseRows, ...reportRows].sort((a, b) => (a.id < b.id ? 1 : -1)).slice(0, limit);
  return withActorEmails(ctx, { events: rows.map(toAuditEventView) });
}

/** Adds the email of each user actor (audit events store the user's id). */
export async function withActorEmails(ctx: TenantRead, input: { events: AuditEventView[] }): Promise<AuditEntry[]> {
  const { events } = input;
  const emails = await userEmails(ctx, { ids: events.filter((e) => e.actor.type === "user").map((e) => e.actor.id) });
  return events.map((e) => ({ ...e, actorEmail: e.actor.type === "user" && e.actor.id ? (emails.get(e.actor.id) ?? null) : null }));
}

/** Who holds a case now (a lapsed review claim is nobody's: src/domain/cases/claims.ts), since when and until when. */
function holding(c: typeof cases.$inferSelect, emails: Map<string, string>, now: number): { assignee: Person | null; assignedAt: string | null; claimUntil: string | null } {
  const holder = holderOf(c, now);
  return {
    assignee: holder ? { id: holder, email: emails.get(holder) ?? "unknown user" } : null,
    assignedAt: holder ? isoOrNull(c.assignedAt) : null,
    claimUntil: holder ? isoOrNull(c.claimExpiresAt) : null,
  };
}

export interface CaseDetail {
  case: CaseView;
  projectName: string;
  assignee: Person | null;
  /** Until when a claim taken in review mode holds (null: an assignment, held until released or decided). */
  claimUntil: string | null;
  /** The case's newest reports (at most CASE_PAGE_REPORTS, oldest first): the case's `reportCount` says how many it has. */
  reports: ReportView[];
  /** The reasons all the case's reports give, each once, sorted. */
  reasons: string[];
  /** The report a link named (caseDetail's `report`) when it is the case's but older than those in `reports`; else null. */
  linkedReport: ReportView | null;
  subject: IdentityView | null;
  /** The subject's cases opened before this one (the case page's "Earlier cases"), the latest first, at most 20. */
  subjectCases: CaseView[];
  subjectEnforcement: EnforcementView[];
  /** Enforcement actions taken on this case's reports (on whoever they were against). */
  caseEnforcement: EnforcementView[];
  reporters: ReporterView[];
  analyses: AnalysisDetail[];
  notes: (NoteView & { authorEmail: string | null })[];
  audit: AuditEntry[];
  /** The case's tags, sorted. */
  tags: string[];
  /** The review queue the case is in (issue 15). */
  queue: { id: string; name: string };
  /** Why the case opens behind a warning screen (CRITICAL, graphic categories), or null (src/domain/categories/graphic.ts). */
  caution: CaseCaution;
}

export async function caseDetail(ctx: TenantRead & AccessContext, caseId: string, opts: { report?: string } = {}): Promise<CaseDetail> {
  const now = ctx.clock.now();
  // A case in a queue the caller may not work is not found, one they review blind refused (src/domain/access/queue-access.ts).
  const c = await requireCase(ctx, caseId);
  const def = await defaultQueue(ctx);
  const inQueue = c.queueId ? await requireQueue(ctx, queueIdOfCase(c, def.id)).catch(() => def) : def;
  // The newest reports (CASE_PAGE_REPORTS); what the page sums up over all of them is read apart.
  const rows = await reportsOfCase(ctx, c.id);
  const reportViews = await toReportViews(ctx, { rows });
  const reportIds = rows.map((r) => r.id);
  const names = await namesOfCase(ctx, c.id);
  // A link to one report of the case (`?report=`) older than those shown: that report too.
  const [linkedRow] =
    opts.report && !rows.some((r) => r.id === opts.report)
      ? await ctx.db.select().from(reports).where(and(eq(reports.id, opts.report), eq(reports.caseId, c.id))).limit(1)
      : [];
  // The case's subject; a case opened by a report about content alone (a link scan that knew no
  // poster) takes the subject of the first of its reports that names one.
  const subjectId = c.subjectIdentityId ?? (await firstSubjectOfCase(ctx, c.id));
  const subject = subjectId ? await getIdentity(ctx, subjectId) : null;
  const [project] = await ctx.db.select({ name: projects.name }).from(projects).where(eq(projects.id, c.projectId)).limit(1);

  const reporterIds = [...new Set(rows.map((r) => r.reporterIdentityId).filter((x): x is string => !!x))].slice(0, 20);
  const reporterRows = reporterIds.length ? await ctx.db.select().from(identities).where(inArray(identities.id, reporterIds)) : [];
  const stats = await reporterStats(ctx, reporterIds);

  const notes = await listCaseNotes(ctx, c.id);
  const emails = await userEmails(ctx, { ids: [c.assigneeId, ...notes.filter((n) => n.author.type === "user").map((n) => n.author.id)] });
  const caseEnforcement = reportIds.length
    ? await actionViews(ctx, {
        rows: await ctx.db
          .select()
          .from(enforcementActions)
          .where(inArray(enforcementActions.reportId, reportIds.slice(0, 500)))
          .orderBy(desc(enforcementActions.id)),
        now,
      })
    : [];
  return {
    case: toCaseView(c, ctx.clock.now()),
    projectName: project?.name ?? "",
    ...holding(c, emails, now),
    reports: reportViews,
    subject,
    // "Earlier cases": the subject's cases opened before this one, the latest first.
    subjectCases: subjectId ? await subjectHistory(ctx, { subjectIdentityId: subjectId, exceptCaseId: c.id, openedBefore: { createdAt: c.createdAt, id: c.id } }) : [],
    subjectEnforcement: subjectId ? await enforcementOf(ctx, { identityId: subjectId, now }) : [],
    caseEnforcement,
    reporters: reporterRows.map((i) => ({ identity: toIdentityView(i), filed: stats.get(i.id) ?? {} })),
    analyses: await analysesOfCase(ctx, c.id),
    notes: notes.map((n) => ({ ...n, authorEmail: n.author.type === "user" && n.author.id ? (emails.get(n.author.id) ?? null) : null })),
    audit: await auditOfCase(ctx, c.id, reportIds),
    tags: (await tagsOfCases(ctx, { caseIds: [c.id] })).get(c.id) ?? [],
    queue: { id: inQueue.id, name: inQueue.name },
    caution: await caseCaution(ctx, { projectId: c.projectId, bucket: c.bucket, reports: [{ reasons: names.reasons, ai: { categories: names.aiCategories } }] }),
    reasons: names.reasons,
    linkedReport: linkedRow ? ((await toReportViews(ctx, { rows: [linkedRow] }))[0] ?? null) : null,
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

export async function identityProfile(ctx: TenantRead & AccessContext, identityId: string): Promise<IdentityProfile> {
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .select({ identity: identities, projectName: projects.name })
    .from(identities)
    // An account of a project being deleted is gone with it, though its row waits for the slices.
    .innerJoin(projects, and(eq(projects.id, identities.projectId), liveProject()))
    .where(and(eq(identities.id, identityId), eq(projects.orgId, ctx.orgId)))
    .limit(1);
  if (!row) throw notFound("Identity not found");
  // Refused when a case about this identity is one the caller reviews blind (the blind-review wall).
  await assertMaySeeSubject(ctx, identityId);
  // Cases in queues the caller may not work, and their reports, are left out; so are those the wall hides.
  const access = await listableCases(ctx);
  const reportWorkable = await isOfWorkableCase(ctx, "case", reports.caseId, { whenNull: "left out" });
  const about = await ctx.db
    .select()
    .from(reports)
    .where(and(eq(reports.subjectIdentityId, identityId), reportWorkable))
    .orderBy(desc(reports.createdUs))
    .limit(50);
  // The reporter's index (reporter_identity_id, created_us), newest first.
  const filed = await ctx.db
    .select()
    .from(reports)
    .where(and(eq(reports.projectId, row.identity.projectId), eq(reports.reporterIdentityId, identityId), reportWorkable))
    .orderBy(desc(reports.createdUs))
    .limit(20);
  const caseRows = await ctx.db
    .select()
    .from(cases)
    .where(and(eq(cases.subjectIdentityId, identityId), access))
    .orderBy(desc(cases.createdAt))
    .limit(50);
  return {
    identity: toIdentityView(row.identity),
    projectName: row.projectName,
    cases: caseRows.map((c) => toCaseView(c, ctx.clock.now())),
    reportsAbout: await toReportViews(ctx, { rows: about }),
    reportsFiled: await toReportViews(ctx, { rows: filed }),
    enforcement: await enforcementOf(ctx, { identityId, now }),
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
    /** Escalations in the period (CASE_ESCALATED events: one per escalation that took effect). */
    escalated: number;
    /** actioned / (actioned + dismissed), null without decisions. */
    actionRate: number | null;
    /** Median time from a report's creation to its resolution or dismissal, in the period. */
    medianDecisionMs: number | null;
  };
  /** Background work of the installation (AI enrichment, link scans, webhooks) and whether it is behind. */
  backlog: Backlog;
  /** The AI model's capacity against the reports asking for it (src/domain/analysis/capacity.ts). */
  ai: AiCapacity;
}

/** Microseconds in a day, a literal (an integer division by it gives the UTC day number). */
const US_PER_DAY = sql.raw(String(DAY_MS * 1000));
/** The UTC day number (days since 1970-01-01) of a time in microseconds. */
const dayOfUs = (us: SQLWrapper) => sql<number>`${us} / ${US_PER_DAY}`;

/** What countsByDay counts (the overview's two series). */
interface CountsByDay {
  table: "reports" | "report_reasons";
  key: "severity" | "name";
  /** A statement answering one column, the values of `key` to count (null rows left out). */
  keys: SQL;
  /** The first day's start (ms, UTC). */
  since: number;
  days: number;
}

/** countsByDay's statement, unrun (test/query-plan.test.ts reads its plan). */
export function countsByDayQuery(ctx: Pick<TenantRead, "db" | "orgId">, input: CountsByDay) {
  const firstDay = input.since / DAY_MS;
  const dayRanges = sql.join(
    Array.from({ length: input.days }, (_, i) => sql.raw(`(${firstDay + i}, ${(input.since + i * DAY_MS) * 1000}, ${(input.since + (i + 1) * DAY_MS) * 1000})`)),
    sql`, `,
  );
  const table = sql.identifier(input.table);
  const key = sql.identifier(input.key);
  return ctx.db
    .select({ day: sql<number | string>`x.day`, key: sql<string>`x.k`, n: sql<number | string>`x.n` })
    .from(sql`(with recursive keyed(k) as (${input.keys}), days(day, lo, hi) as (values ${dayRanges})
      select days.day as day, keyed.k as k,
        (select count(*) from ${table} t where t.org_id = ${ctx.orgId} and t.${key} = keyed.k and t.created_us >= days.lo and t.created_us < days.hi) as n
      from keyed, days where keyed.k is not null) as x`);
}

/** The overview's severities, as countsByDay's `keys`. */
export const SEVERITY_KEYS: SQL = sql`values ${sql.join(SEVERITIES.map((v) => sql`(${v})`), sql`, `)}`;

/**
 * Rows of `table` of the caller's organization per value of `key` (the values `keys` gives, one
 * column) and per UTC day from `since` (ms, a day's start) for `days` days: a count of each
 * (value, day) on the table's (org_id, key, created_us) index, in one statement. Grouping the
 * period's rows instead read each one and sorted them all: at 300,000 reports (137,000 of them in
 * 14 days) the overview's two groupings took 82 to 108 and 58 to 69 ms of the thread that, on
 * SQLite, serves every request; counted so, 8 and 10 ms (docs/operations.md, "The overview").
 * Each (value, day) is a subquery, which both engines run as a range of that index.
 */
async function countsByDay(ctx: TenantRead, input: CountsByDay): Promise<{ day: number; key: string; n: number }[]> {
  const rows = await countsByDayQuery(ctx, input);
  return rows.map((r) => ({ day: Number(r.day), key: r.key, n: Number(r.n) })).filter((r) => r.n > 0);
}

/**
 * The reason names an organization's reports gave, one index seek each (the smallest name
 * after the last: a loose scan of `report_reasons_list_idx`, not a read of every reason), as
 * countsByDay's `keys`; a null row when there are none, which it leaves out.
 */
export function reasonNamesOf(orgId: string): SQL {
  return sql`select min(name) from report_reasons where org_id = ${orgId}
    union all select (select min(r.name) from report_reasons r where r.org_id = ${orgId} and r.name > keyed.k) from keyed where keyed.k is not null`;
}

/** The organization's project when it has exactly one (most installations), else null. */
async function soleProjectOf(ctx: TenantRead): Promise<string | null> {
  const rows = await ctx.db.select({ id: projects.id }).from(projects).where(eq(projects.orgId, ctx.orgId)).limit(2);
  return rows.length === 1 ? rows[0]!.id : null;
}

/**
 * How long one read of countInWindows should hold the thread on SQLite: a window that took less
 * than a quarter of it is followed by one four times as long, one that took more by one half as
 * long, so that years of a sparse history are not read an hour at a time.
 */
const COUNT_READ_MS = 8;

/**
 * count(*) of `table`'s rows meeting `filter` on `range`, a range of an index whose last column is `key`
 * (a time: `unitsPerMs` 1 for ms, 1000 for µs). On SQLite, where each query holds the thread that
 * serves requests, counted in windows of `key`'s values from the range's first row to its last,
 * sized to hold it about COUNT_READ_MS each, the event loop given back between two: a filter of a
 * row's (a project, the caller's queues) reads each entry's row, and at 200,000 open reports of
 * one project a count in one statement held every request for 40 to 80 ms. On PostgreSQL, one
 * statement.
 */
export async function countInWindows(
  ctx: TenantRead,
  input: { table: typeof reports | typeof cases; range: SQL; filter: SQL | undefined; key: SQLWrapper & AnyColumn; unitsPerMs: 1 | 1000 },
  firstWindowMs = readWindowMs(ctx.store.engine),
): Promise<number> {
  const counted = (where: SQL | undefined) => ctx.db.select({ n: sql<number | string>`count(*)` }).from(input.table).where(where);
  if (!input.filter || !Number.isFinite(firstWindowMs)) return Number((await counted(and(input.range, input.filter)))[0]?.n ?? 0);
  // Each bound is one seek of the index (a single min() or max() is).
  const [first] = await ctx.db.select({ v: sql<number | null>`min(${input.key})` }).from(input.table).where(input.range);
  const [last] = await ctx.db.select({ v: sql<number | null>`max(${input.key})` }).from(input.table).where(input.range);
  if (first?.v == null || last?.v == null) return 0;
  const end = Number(last.v) + 1;
  let total = 0;
  let windowUnits = Math.max(1, firstWindowMs * input.unitsPerMs);
  for (let lo = Number(first.v); lo < end; ) {
    const hi = Math.min(end, lo + windowUnits);
    const started = performance.now();
    total += Number((await counted(and(input.range, gte(input.key, lo), lt(input.key, hi), input.filter)))[0]?.n ?? 0);
    const took = performance.now() - started;
    if (took < COUNT_READ_MS / 4) windowUnits *= 4;
    else if (took > COUNT_READ_MS) windowUnits = Math.max(1, Math.floor(windowUnits / 2));
    lo = hi;
    await breathe();
  }
  return total;
}

export async function overview(ctx: TenantRead & AccessContext, q: { projectId?: string; days: number }): Promise<Overview> {
  const now = ctx.clock.now();
  // Every figure counts the cases the caller may work, and their reports (queue access), a case
  // they review blind included: figures that dropped it would tell its decision (queue-access.ts).
  const [caseWorkable, reportWorkable, caseEventWorkable] = await Promise.all([
    workableCases(ctx),
    isCountedFor(ctx, "case", reports.caseId, { whenNull: "left out" }),
    isCountedFor(ctx, "case", auditEvents.entityId, { whenNull: "left out" }),
  ]);
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const since = today - (q.days - 1) * DAY_MS;
  const days = Array.from({ length: q.days }, (_, i) => iso(since + i * DAY_MS).slice(0, 10));
  // Rows carry the UTC day number of their time; its place in `days`, or undefined outside them.
  const sinceDay = since / DAY_MS;
  const indexOfDay = (day: number): number | undefined => {
    const i = Number(day) - sinceDay;
    return i >= 0 && i < q.days ? i : undefined;
  };
  const count = sql<number>`count(*)`;

  const bySeverity = Object.fromEntries(SEVERITIES.map((s) => [s, days.map(() => 0)])) as Record<Severity, number[]>;
  const sevDay = dayOfUs(reports.createdUs);
  // A project picked in an organization of that one project is the whole organization.
  const onlyProject = q.projectId && (await soleProjectOf(ctx)) !== q.projectId ? q.projectId : undefined;
  // The organization's whole figures for a caller who sees every case: counted a day at a time
  // on an index (countsByDay). Filtered by project or by the caller's access, each row of the
  // period is read: grouped a window of time at a time (on SQLite, six hours, the event loop
  // given back between two: one project's 14 days at 300,000 reports, read at once, held every
  // request for 100 to 200 ms a chart: scripts/bench/dashboard-overview.ts).
  const wholeOrganization = !onlyProject && !reportWorkable;
  const inPeriod = (column: SQLWrapper, [lo, hi]: [number, number]) => and(gte(column, lo * 1000), lt(column, hi * 1000));
  const filteredReports = and(onlyProject ? eq(reports.projectId, onlyProject) : eq(reports.orgId, ctx.orgId), reportWorkable);
  // On SQLite the event loop is also given back between the page's other statements (each a
  // few ms): together they held every request for 40 to 50 ms.
  const windowMs = readWindowMs(ctx.store.engine);
  const periodWindows = () => windowsOf(since, today + DAY_MS, windowMs);
  const sevRows: { day: number; severity: string; n: number }[] = [];
  if (wholeOrganization) {
    for (const r of await countsByDay(ctx, { table: "reports", key: "severity", keys: SEVERITY_KEYS, since, days: q.days })) sevRows.push({ day: r.day, severity: r.key, n: r.n });
    await breatheBetweenReads(windowMs);
  } else {
    for (const window of periodWindows()) {
      const rows = await ctx.db
        .select({ day: sevDay, severity: reports.severity, n: count })
        .from(reports)
        .where(and(filteredReports, inPeriod(reports.createdUs, window)))
        .groupBy(sevDay, reports.severity);
      for (const r of rows) sevRows.push({ day: Number(r.day), severity: r.severity, n: Number(r.n) });
      await breatheBetweenReads(windowMs);
    }
  }
  const seriesOf = new Map<string, number[]>(SEVERITIES.map((s) => [s, bySeverity[s]]));
  let received = 0;
  for (const r of sevRows) {
    const i = indexOfDay(r.day);
    const series = seriesOf.get(r.severity);
    if (i === undefined || !series) continue;
    series[i]! += r.n;
    received += r.n;
  }

  const catDay = dayOfUs(reportReasons.createdUs);
  const catRows: { day: number; name: string; n: number }[] = [];
  if (wholeOrganization) {
    for (const r of await countsByDay(ctx, { table: "report_reasons", key: "name", keys: reasonNamesOf(ctx.orgId), since, days: q.days })) catRows.push({ day: r.day, name: r.key, n: r.n });
    await breatheBetweenReads(windowMs);
  } else {
    for (const window of periodWindows()) {
      const rows = await ctx.db
        .select({ day: catDay, name: reportReasons.name, n: count })
        .from(reports)
        .innerJoin(reportReasons, eq(reportReasons.reportId, reports.id))
        .where(and(filteredReports, inPeriod(reports.createdUs, window)))
        .groupBy(catDay, reportReasons.name);
      for (const r of rows) catRows.push({ day: Number(r.day), name: r.name, n: Number(r.n) });
      await breatheBetweenReads(windowMs);
    }
  }
  const cats = new Map<string, number[]>();
  for (const r of catRows) {
    const i = indexOfDay(r.day);
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
    const range = and(eq(reports.orgId, ctx.orgId), eq(reports.status, status))!;
    pending += await countInWindows(ctx, { table: reports, range, filter: and(onlyProject ? eq(reports.projectId, onlyProject) : undefined, reportWorkable), key: reports.createdUs, unitsPerMs: 1000 });
    await breatheBetweenReads(windowMs);
  }
  const openCases = { emergency: 0, high: 0, normal: 0 } as Record<Bucket, number>;
  for (const bucket of BUCKETS) {
    const range = and(eq(cases.orgId, ctx.orgId), eq(cases.isOpen, 1), eq(cases.bucket, bucket))!;
    openCases[bucket] = await countInWindows(ctx, { table: cases, range, filter: and(onlyProject ? eq(cases.projectId, onlyProject) : undefined, caseWorkable), key: cases.createdAt, unitsPerMs: 1 });
    await breatheBetweenReads(windowMs);
  }

  // Decisions come from the audit trail (each is one event per report, with its time). Audit
  // ids are UUIDv7s of the real time: the id bound (a day early, for a shifted test clock)
  // keeps this a range search of the (org, action, id) index; created_at is the exact filter.
  const idFloor = uuidV7Floor(since - (now - Date.now()) - DAY_MS);
  const decisions = (action: string) =>
    ctx.db
      .select({ id: auditEvents.entityId, at: auditEvents.createdAt, createdUs: reports.createdUs, data: auditEvents.data })
      .from(auditEvents)
      .innerJoin(reports, eq(reports.id, auditEvents.entityId))
      .where(
        and(
          eq(auditEvents.orgId, ctx.orgId),
          eq(auditEvents.action, action),
          gte(auditEvents.id, idFloor),
          gte(auditEvents.createdAt, since),
          q.projectId ? eq(auditEvents.projectId, q.projectId) : undefined,
          reportWorkable,
        ),
      );
  const resolvedRows = await decisions("REPORT_RESOLVED");
  await breatheBetweenReads(windowMs);
  const dismissedRows = await decisions("REPORT_DISMISSED");
  await breatheBetweenReads(windowMs);
  // Escalations: one CASE_ESCALATED event per escalation that took effect, however many reports
  // moved with it (escalating a case already IN_REVIEW counts; one of a RESOLVED report does not).
  const [escalated] = await ctx.db
    .select({ n: count })
    .from(auditEvents)
    .where(
      and(
        eq(auditEvents.orgId, ctx.orgId),
        eq(auditEvents.action, "CASE_ESCALATED"),
        gte(auditEvents.id, idFloor),
        gte(auditEvents.createdAt, since),
        q.projectId ? eq(auditEvents.projectId, q.projectId) : undefined,
        caseEventWorkable,
      ),
    );
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
    backlog: await backgroundBacklog(ctx),
    ai: await aiCapacity(ctx, { projectId: q.projectId, counted: reportWorkable }),
    figures: {
      pending,
      openCases,
      received,
      actioned,
      dismissed,
      escalated: Number(escalated?.n ?? 0),
      actionRate: actioned + dismissed ? actioned / (actioned + dismissed) : null,
      medianDecisionMs,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// People: who is who, for "taken by", notes and the audit log.

export async function people(ctx: Pick<DomainContext, "db" | "orgId">): Promise<(Person & { role: string; disabled: boolean })[]> {
  const rows = await ctx.db
    .select({ id: users.id, email: users.email, role: users.role, disabledAt: users.disabledAt })
    .from(users)
    .where(eq(users.orgId, ctx.orgId))
    .orderBy(asc(users.email));
  return rows.map((u) => ({ id: u.id, email: u.email, role: u.role, disabled: u.disabledAt != null }));
}
