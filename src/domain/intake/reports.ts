import { and, asc, desc, eq, fillPlaceholders, getTableColumns, gt, inArray, lt, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { param, shapedStatements, statements } from "../../db/prepared.ts";
import { identities, reportReasons, reports } from "../../db/schema.ts";
import { recordAudit, systemActor } from "../core/audit.ts";
import { claimCase, settleCase } from "../cases/cases.ts";
import { resolveProjectReasons } from "../categories/categories.ts";
import { iso, isoFromUs } from "../core/clock.ts";
import { ROW_LOCKED, together, transaction, type DomainContext } from "../core/context.ts";
import { notFound } from "../core/errors.ts";
import { assertMayWorkCaseId, requireEveryCase, type AccessContext } from "../access/queue-access.ts";
import { upsertIdentity, type DisplayInput, type IdentityRow } from "../identities/identities.ts";
import { enqueueJob } from "../plumbing/jobs.ts";
import { JOB_KIND } from "../views/job.ts";
import { newId } from "../core/ids.ts";
import { listProjects, type Project } from "../accounts/projects.ts";
import type { ReportSlot } from "../plumbing/rate-limit.ts";
import { isMuted, markCaseTrustedFlagged } from "../identities/reporters.ts";
import { runRules } from "../rules/rule-engine.ts";
import { contentKeyOf } from "./content-key.ts";
import { matchesAtIntake, recordReportMedia } from "./case-media.ts";
import { heldIndex } from "./signal-index.ts";
import type { MediaInput } from "../views/media-bank.ts";
import { ENRICHMENT_CLASS_SPECS, enrichmentClassOf } from "../views/enrichment-order.ts";
import { searchDocument } from "../plumbing/search-text.ts";
import { assertCommitsInTime, formatCursor, listingHorizonUs, nextCreatedUs, parseCursor } from "./report-time.ts";
import { BUCKETS, bucketFor, maxSeverity, type Severity } from "../cases/severity.ts";
import type { IdentitySummary } from "../views/identity.ts";
import { reportOutcome } from "../review/report-outcomes.ts";
import { applyTransition } from "../review/workflow-engine.ts";
import type { CreatedReportView, Notice, NoticeInput, ReportOutcome, ReportView } from "../views/report.ts";
import type { ProjectRef } from "../views/project.ts";
import type { Status } from "../views/workflow.ts";

export type { ReportView } from "../views/report.ts";

export type ReportRow = typeof reports.$inferSelect;

export interface IdentityRef {
  type: string;
  externalId: string;
  display?: DisplayInput | null;
}

/** A report to file; the actor filing it is the context's. */
export interface CreateReportInput {
  project: Project;
  subject?: IdentityRef | null;
  reporter?: IdentityRef | null;
  target?: { contentType?: string | null; contentExternalId?: string | null; content?: string | null } | null;
  reasonNames: string[];
  description?: string | null;
  automated: boolean;
  /** The notice fields (DSA Art. 16), checked by the caller (noticeInputSchema); stored as JSON. */
  notice?: NoticeInput | null;
  /** Queue AI enrichment when the project has AI on (default true). */
  enrich?: boolean;
  /** Attempts the enrichment job gets before it is dead (default 50). */
  enrichMaxAttempts?: number;
  /** Media items (a URL and/or hashes), matched against the project's banks in the background (docs/media.md). */
  media?: readonly MediaInput[];
  /** The API key's place in its report rate window (reportSlot): checked and taken once the report passes its checks. */
  slot?: Pick<ReportSlot, "take" | "release">;
}

export interface CreatedReport {
  report: CreatedReportView;
  row: ReportRow;
  caseId: string;
}

/**
 * Files a report: checks its reasons against the project's categories, upserts the subject and
 * reporter identities, joins or opens its case and writes the audit trail, all in one
 * transaction, so a refused report leaves nothing behind. The hot path of the service: its
 * statements stay prepared and it makes no query that is not needed.
 */
export async function createReport(ctx: DomainContext, input: CreateReportInput): Promise<CreatedReport> {
  // The report's own check first (its reasons; the categories are cached per project version),
  // then the API key's place in its rate window (src/domain/plumbing/rate-limit.ts, reportSlot): a report
  // refused for what it is spends no place and hears 400, not 429. The place is taken at once
  // (one atomic statement, committed on its own: no report waits for another on the window's
  // row) and given back when the report does not commit.
  const categories = await resolveProjectReasons(ctx, input.project, input.reasonNames);
  await input.slot?.take();
  try {
    // Instances write side by side (PostgreSQL): each invariant is kept by its own row's lock
    // or unique index (src/db/store.ts), so this transaction waits for no other report.
    return await transaction(ctx, () => writeReport(ctx, input, categories), ROW_LOCKED);
  } catch (err) {
    await input.slot?.release();
    throw err;
  }
}

/** createReport's writes, once the report is accepted (inside its transaction). */
async function writeReport(ctx: DomainContext, input: CreateReportInput, categories: Awaited<ReturnType<typeof resolveProjectReasons>>): Promise<CreatedReport> {
  const { project } = input;
  const q = createStatements(ctx.db);
  const now = ctx.clock.now();
  const createdUs = await nextCreatedUs(ctx, { nowMs: now });
  const names = categories.map((c) => c.name);
  const severity = maxSeverity(categories.map((c) => c.severityHint));
  const contentExternalId = input.target?.contentExternalId ?? null;
  const contentType = contentExternalId ? (input.target?.contentType ?? "") : (input.target?.contentType ?? null);
  const caseKey = { orgId: project.orgId, projectId: project.id, contentType, contentExternalId, now };

  // One round trip: the case of the target (first: a decision on it locks it before anything
  // else, so the two never wait for each other crosswise), then the subject and the reporter,
  // each upserted and locked. The same person as subject and reporter is upserted once, then
  // again as reporter. A report with a subject and no target needs its subject's id to find
  // its case: the case comes after.
  const subjectKey = input.subject ? identityKey(input.subject) : null;
  const reporterKey = input.reporter ? identityKey(input.reporter) : null;
  const samePerson = !!subjectKey && !!reporterKey && subjectKey.type === reporterKey.type && subjectKey.externalId === reporterKey.externalId;
  // A new case's bucket is the report's (a muted reporter's report raises none: settleCase
  // lowers it back in that rare case) and its subject the subject's identity when it is known.
  const bucket = bucketFor(severity);
  const byTarget = contentExternalId != null ? claimCase(ctx, { ...caseKey, bucket, subjectIdentityId: null, subject: subjectKey }) : null;
  // Media sent as hashes are matched at once against the index held at the banks' current
  // version: that version is read in the same round trip (case-media.ts).
  const [claimedByTarget, subject, reporterAlone, mediaIndex] = await together(
    byTarget,
    subjectKey ? upsertIdentity(ctx, { projectId: project.id, ...subjectKey, reportedAt: now, now }) : null,
    reporterKey && !samePerson ? upsertIdentity(ctx, { projectId: project.id, ...reporterKey, seenAt: now, now }) : null,
    matchesAtIntake(input.media) ? heldIndex(ctx, project.id) : null,
  );
  const reporter = samePerson && reporterKey ? await upsertIdentity(ctx, { projectId: project.id, ...reporterKey, seenAt: now, now }) : reporterAlone;
  const claimed = claimedByTarget ?? (await claimCase(ctx, { ...caseKey, bucket, subjectIdentityId: subject?.id ?? null }));
  // The reporter's weight (src/domain/identities/reporters.ts), from the row the upsert answered: a muted
  // reporter's report is stored, then dismissed unseen, and raises no case's bucket; a trusted
  // flagger's goes first.
  const muted = !!reporter && isMuted(reporter, now);
  const trusted = !muted && reporter?.trustedFlagger === 1;
  const theCase = await settleCase(ctx, claimed, { bucket: muted ? BUCKETS[0] : bucket, subjectIdentityId: subject?.id ?? null });
  // AI enrichment, when the project has it on: one analysis per content (its key), the most
  // urgent first (its class: src/domain/views/enrichment-order.ts).
  const enrich = input.enrich !== false && project.aiEnabled === 1 && !muted;
  const contentKey = enrich ? contentKeyOf({ description: input.description, content: input.target?.content }) : null;

  const row: ReportRow = {
    id: newId(),
    orgId: project.orgId,
    projectId: project.id,
    caseId: theCase.id,
    status: "OPEN",
    severity,
    reasons: JSON.stringify(names),
    description: input.description ?? null,
    automated: input.automated ? 1 : 0,
    subjectIdentityId: subject?.id ?? null,
    subjectExternalId: subject?.externalId ?? null,
    reporterIdentityId: reporter?.id ?? null,
    contentType,
    contentExternalId,
    content: input.target?.content ?? null,
    escalation: null,
    resolution: null,
    dismissal: null,
    createdById: ctx.actor.id,
    aiSeverity: null,
    aiCategories: null,
    aiConfidence: null,
    aiReasoning: null,
    aiAnalyzedAt: null,
    notice: noticeText(input.notice),
    reporterTrusted: trusted ? 1 : 0,
    contentKey,
    searchText: searchDocument([input.description, input.target?.content, null]),
    createdUs,
    updatedAt: now,
  };
  // The report first (its reasons refer to it), then everything that refers to it: sent now,
  // their answers awaited with the commit. Its creation time is unique in the organization: if
  // another instance took it in the same microsecond, the whole transaction runs again
  // (reports_org_created_idx, src/db/store-pg.ts).
  await ctx.store.atCommit(
    q.insertReport.execute(row),
    ...names.map((name) => q.insertReason.execute({ reportId: row.id, orgId: project.orgId, name, createdUs })),
    trusted && theCase.trustedFlagged !== 1 ? markCaseTrustedFlagged(ctx, theCase.id) : Promise.resolve(),
    enrich
      ? enqueueJob(ctx, {
          orgId: project.orgId,
          kind: JOB_KIND.enrich,
          payload: { reportId: row.id },
          maxAttempts: input.enrichMaxAttempts ?? 50,
          priority: ENRICHMENT_CLASS_SPECS[enrichmentClassOf({ emergency: bucket === "emergency", trustedFlagger: trusted, opensCase: claimed.opened })].priority,
          entityId: row.id,
        })
      : Promise.resolve(),
    recordAudit(ctx, {
      projectId: project.id,
      action: "REPORT_CREATED",
      entityType: "report",
      entityId: row.id,
      after: { status: "OPEN", caseId: theCase.id, reasons: names, severity, automated: input.automated },
    }),
  );
  // Its media items (they refer to it: written once it is, with the COMMIT), matched at once or by a job of their own.
  if (input.media?.length) await recordReportMedia(ctx, { orgId: project.orgId, projectId: project.id, caseId: theCase.id, reportId: row.id }, input.media, mediaIndex);
  if (muted) await dismissMutedReport(ctx, row.id);
  // The organization's report.created rules (src/domain/rules/rule-engine.ts), in this transaction:
  // a routed or dismissed report is never seen in the wrong queue. A muted reporter's is not evaluated.
  else await runRules(ctx, { trigger: "report.created", reportId: row.id, report: row, identities: { subject, reporter }, caseRow: theCase });
  assertCommitsInTime(ctx, createdUs);
  return {
    report: { id: row.id, projectId: row.projectId, status: "OPEN", createdAt: isoFromUs(createdUs) },
    row,
    caseId: theCase.id,
  };
}

/** The statements of every report creation, kept prepared (src/db/prepared.ts). */
const createStatements = statements((db) => ({
  insertReport: db
    .insert(reports)
    // Every column, each from the placeholder of its own name: run it with a whole ReportRow.
    .values(Object.fromEntries(Object.keys(getTableColumns(reports)).map((k) => [k, param(k)])) as unknown as typeof reports.$inferInsert)
    .prepare(),
  insertReason: db
    .insert(reportReasons)
    .values({ reportId: param("reportId"), orgId: param("orgId"), name: param("name"), createdUs: param("createdUs") })
    .prepare(),
}));

/**
 * A report just filed by a muted reporter (report creation, in its transaction): dismissed as
 * `not_actionable` by the system through the workflow engine, alone (the other reports of the
 * case it joined stay as they are; a case it opened is dismissed with it, so it is never in the
 * queue), silently (no webhook event: nobody hears of the mute), and audited as REPORT_DISMISSED
 * with `mutedReporter: true`.
 */
async function dismissMutedReport(ctx: DomainContext, reportId: string): Promise<void> {
  await applyTransition(
    { ...ctx, actor: systemActor },
    { target: { reportId }, move: { action: "dismiss", reason: "not_actionable", mutedReporter: true }, alone: true, silent: true },
  );
}

/** A notice as stored: every field (null when not given), or null when it has none. */
function noticeText(n: NoticeInput | null | undefined): string | null {
  if (!n) return null;
  const notice: Notice = {
    explanation: n.explanation ?? null,
    legalGround: n.legalGround ?? null,
    notifierName: n.notifierName ?? null,
    notifierEmail: n.notifierEmail ?? null,
    goodFaith: n.goodFaith ?? null,
  };
  return Object.values(notice).some((v) => v !== null) ? JSON.stringify(notice) : null;
}

const identityKey = (ref: IdentityRef) => ({ type: ref.type, externalId: ref.externalId, display: ref.display });

/**
 * A report of the caller's organization whose case the caller may work; another organization's,
 * or one in a queue the caller may not work, is a 404 like a missing one; one the blind-review
 * wall hides (its case, or its subject's) a 403.
 */
export async function requireReport(ctx: AccessContext, reportId: string): Promise<ReportRow> {
  const [row] = await ctx.db
    .select()
    .from(reports)
    .where(and(eq(reports.id, reportId), eq(reports.orgId, ctx.orgId)))
    .limit(1);
  if (!row) throw notFound("Report not found");
  await assertMayWorkCaseId(ctx, row.caseId, "Report", row.subjectIdentityId);
  return row;
}

/** A page query of reports; the organization is the context's. */
export interface ReportQuery {
  sort: "asc" | "desc";
  cursor?: string;
  /** Ascending listings where instances write side by side: only reports created before this (listingHorizonUs). */
  beforeUs?: number;
  limit: number;
  projectId?: string;
  statuses?: Status[];
  severity?: Severity;
  reason?: string;
  subjectExternalId?: string;
  contentExternalId?: string;
  automated?: boolean;
}

/**
 * One page of reports, newest first unless `sort` is asc. The cursor is the microsecond
 * creation time of the last report of the previous page, so pages neither skip nor repeat.
 */
export async function listReports(
  ctx: Pick<DomainContext, "db" | "orgId" | "store" | "clock">,
  q: ReportQuery,
): Promise<{ reports: ReportView[]; nextCursor: string | null }> {
  // An ascending reader is never shown a time behind which a report could still commit.
  const horizon = q.sort === "asc" ? listingHorizonUs(ctx) : null;
  const bounded = horizon === null ? q : { ...q, beforeUs: horizon };
  const lists = await Promise.all(reportListQueries(ctx, bounded).map(async (query) => (await query.execute()).map((r) => r.report)));
  const rows = mergeByTime(lists, q.sort).slice(0, q.limit + 1);
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return {
    reports: await toReportViews(ctx, { rows: page }),
    nextCursor: rows.length > q.limit && last ? formatCursor(last.createdUs) : null,
  };
}

/** One query of a listing, prepared (its SQL, for the plan test, and a way to run it). */
export interface ReportListQuery {
  toSQL(): { sql: string; params: unknown[] };
  execute(): Promise<{ report: ReportRow }[]>;
}

/**
 * The queries behind listReports, each returning one row more than the page (to know whether
 * another page follows). A list of statuses becomes one query per status, each an index
 * search of (org, status, time), merged afterwards: one `IN` query would have to either walk
 * the whole organization or sort every matching report. Exported so a test can check the
 * plans: every filter must be an index search. Each is prepared once per shape (which filters
 * are given) and connection: building and compiling the SQL cost more than running it.
 */
export function reportListQueries(ctx: Pick<DomainContext, "db" | "orgId">, q: ReportQuery): ReportListQuery[] {
  if (q.statuses && q.statuses.length > 1 && !q.reason) {
    return [...new Set(q.statuses)].map((status) => reportListQuery(ctx.db, ctx.orgId, { ...q, statuses: [status] }));
  }
  return [reportListQuery(ctx.db, ctx.orgId, q)];
}

/** Merges lists that are each sorted by creation time into one, in the same order. */
function mergeByTime(lists: ReportRow[][], sort: "asc" | "desc"): ReportRow[] {
  if (lists.length === 1) return lists[0]!;
  const sign = sort === "asc" ? 1 : -1;
  return lists.flat().sort((a, b) => sign * (a.createdUs - b.createdUs));
}

/** The placeholder values of a listing query (names as in buildReportList). */
function reportListParams(orgId: string, q: ReportQuery): Record<string, unknown> {
  const values: Record<string, unknown> = { orgId, limit: q.limit + 1 };
  if (q.projectId) values.projectId = q.projectId;
  q.statuses?.forEach((status, i) => (values[`status${i}`] = status));
  if (q.severity) values.severity = q.severity;
  if (q.subjectExternalId) values.subjectExternalId = q.subjectExternalId;
  if (q.contentExternalId) values.contentExternalId = q.contentExternalId;
  if (q.automated !== undefined) values.automated = q.automated ? 1 : 0;
  if (q.reason) values.reason = q.reason;
  if (q.cursor !== undefined) values.after = parseCursor(q.cursor);
  if (q.beforeUs !== undefined) values.before = q.beforeUs;
  return values;
}

/** What the SQL of a listing depends on: the filters given, not their values. */
const reportListShape = (q: ReportQuery): string =>
  [
    q.sort,
    q.projectId ? "p" : "",
    q.statuses?.length ?? 0,
    q.severity ? "v" : "",
    q.subjectExternalId ? "s" : "",
    q.contentExternalId ? "c" : "",
    q.automated !== undefined ? "a" : "",
    q.reason ? "r" : "",
    q.cursor !== undefined ? "after" : "",
    q.beforeUs !== undefined ? "before" : "",
  ].join("|");

function reportListQuery(db: Db, orgId: string, q: ReportQuery): ReportListQuery {
  const values = reportListParams(orgId, q);
  const statement = listStatements(db, reportListShape(q), q);
  return {
    toSQL: () => {
      const { sql, params } = statement.getQuery();
      return { sql, params: fillPlaceholders(params, values) };
    },
    execute: () => statement.execute(values) as Promise<{ report: ReportRow }[]>,
  };
}

/** Builds a listing query of one shape, every value a placeholder (reportListParams). */
const listStatements = shapedStatements((db: Db, q: ReportQuery) => {
  const order = q.sort === "asc" ? asc : desc;
  const where: SQL[] = [];
  // The project filter stands alone (the project was checked to be the caller's), so the
  // planner takes its (project_id, created_us) index rather than the organization's.
  if (q.projectId) where.push(eq(reports.projectId, sql.placeholder("projectId")));
  else where.push(eq(reports.orgId, sql.placeholder("orgId")));
  if (q.statuses?.length) {
    where.push(
      q.statuses.length === 1
        ? eq(reports.status, sql.placeholder("status0"))
        : inArray(reports.status, q.statuses.map((_, i) => sql.placeholder(`status${i}`))),
    );
  }
  if (q.severity) where.push(eq(reports.severity, sql.placeholder("severity")));
  if (q.subjectExternalId) where.push(eq(reports.subjectExternalId, sql.placeholder("subjectExternalId")));
  if (q.contentExternalId) where.push(eq(reports.contentExternalId, sql.placeholder("contentExternalId")));
  if (q.automated !== undefined) where.push(eq(reports.automated, sql.placeholder("automated")));
  const after = sql.placeholder("after");
  const before = sql.placeholder("before");

  if (q.reason) {
    // Reason filter: walk the reasons index, then fetch each report by primary key.
    const reasonWhere: SQL[] = [eq(reportReasons.orgId, sql.placeholder("orgId")), eq(reportReasons.name, sql.placeholder("reason"))];
    if (q.cursor !== undefined) reasonWhere.push(q.sort === "asc" ? gt(reportReasons.createdUs, after) : lt(reportReasons.createdUs, after));
    if (q.beforeUs !== undefined) reasonWhere.push(lt(reportReasons.createdUs, before));
    return db
      .select({ report: reports })
      .from(reportReasons)
      .innerJoin(reports, eq(reports.id, reportReasons.reportId))
      .where(and(...reasonWhere, ...where))
      .orderBy(order(reportReasons.createdUs))
      .limit(sql.placeholder("limit"))
      .prepare();
  }
  if (q.cursor !== undefined) where.push(q.sort === "asc" ? gt(reports.createdUs, after) : lt(reports.createdUs, after));
  if (q.beforeUs !== undefined) where.push(lt(reports.createdUs, before));
  return db
    .select({ report: reports })
    .from(reports)
    .where(and(...where))
    .orderBy(order(reports.createdUs))
    .limit(sql.placeholder("limit"))
    .prepare();
});

const summary = (i: IdentityRow | undefined): IdentitySummary | null =>
  i
    ? {
        id: i.id,
        type: i.type,
        externalId: i.externalId,
        displayName: i.name ?? i.username ?? i.externalId,
        handleLabel: i.username ? `@${i.username}` : `${i.type}:${i.externalId}`,
      }
    : null;

/** Full report records, with subject and reporter summaries fetched in one query. */
export async function toReportViews(ctx: Pick<DomainContext, "db">, input: { rows: ReportRow[] }): Promise<ReportView[]> {
  const { rows } = input;
  const ids = [...new Set(rows.flatMap((r) => [r.subjectIdentityId, r.reporterIdentityId]).filter((x): x is string => x != null))];
  const found = ids.length ? await identitiesByIds(ctx.db, String(ids.length), ids.length).execute(Object.fromEntries(ids.map((id, i) => [`id${i}`, id]))) : [];
  const byId = new Map(found.map((i) => [i.id, i] as const));
  return rows.map((r) => toReportView(r, byId));
}

/** The identities of a page, by id: prepared once per number of ids. */
const identitiesByIds = shapedStatements((db: Db, count: number) =>
  db
    .select()
    .from(identities)
    .where(inArray(identities.id, Array.from({ length: count }, (_, i) => sql.placeholder(`id${i}`))))
    .prepare(),
);

function toReportView(r: ReportRow, identitiesById: Map<string, IdentityRow>): ReportView {
  const hasTarget = r.contentExternalId != null || r.contentType != null || r.content != null;
  return {
    id: r.id,
    projectId: r.projectId,
    caseId: r.caseId,
    status: r.status as Status,
    severity: r.severity as Severity,
    reasons: JSON.parse(r.reasons) as string[],
    description: r.description,
    automated: r.automated === 1,
    subject: summary(r.subjectIdentityId ? identitiesById.get(r.subjectIdentityId) : undefined),
    reporter: summary(r.reporterIdentityId ? identitiesById.get(r.reporterIdentityId) : undefined),
    target: hasTarget ? { contentType: r.contentType || null, contentExternalId: r.contentExternalId, content: r.content } : null,
    escalation: r.escalation ? JSON.parse(r.escalation) : null,
    resolution: r.resolution ? JSON.parse(r.resolution) : null,
    dismissal: r.dismissal ? JSON.parse(r.dismissal) : null,
    notice: r.notice ? (JSON.parse(r.notice) as Notice) : null,
    ai:
      r.aiAnalyzedAt != null
        ? {
            severity: r.aiSeverity as Severity,
            categories: JSON.parse(r.aiCategories ?? "[]") as string[],
            confidence: r.aiConfidence ?? 0,
            reasoning: r.aiReasoning ?? "",
            analyzedAt: iso(r.aiAnalyzedAt),
          }
        : null,
    createdAt: isoFromUs(r.createdUs),
    updatedAt: iso(r.updatedAt),
  };
}

/**
 * A report with its outcome (src/domain/review/report-outcomes.ts; null while undecided): the SDK's
 * `GET /reports/{reportId}`. The outcome sits beside the report, not in it: its text needs the
 * project's templates, which listings and the case page do not pay for.
 */
export async function reportWithOutcome(ctx: AccessContext, reportId: string): Promise<{ report: ReportView; outcome: ReportOutcome | null }> {
  const row = await requireReport(ctx, reportId);
  const [report] = await toReportViews(ctx, { rows: [row] });
  return { report: report!, outcome: await reportOutcome(ctx, row) };
}

/** A page of reports (listReports) with the organization's projects, by id and name, to name them by. */
export async function reportsWithProjects(
  ctx: AccessContext & Pick<DomainContext, "store" | "clock">,
  q: ReportQuery,
): Promise<{ projects: ProjectRef[]; reports: ReportView[]; nextCursor: string | null }> {
  // The SDK's listing of every report (the platform's view): a dashboard user bound to some
  // queues has the review queue, search and the closed cases instead.
  await requireEveryCase(ctx);
  const page = await listReports(ctx, q);
  return { projects: (await listProjects(ctx)).map((p) => ({ id: p.id, name: p.name })), ...page };
}
