/**
 * Quality review (issue 29): the blind second review of a sampled decision, the leads'
 * disagreements and the agreement figures. Sampling itself is quality-sampling.ts (an effect of
 * the workflow engine); docs/quality.md describes all of it for people.
 *
 * - A sampled decision is offered to every moderator who may work the case's queue but its
 *   first decider; one takes it (`nextQualityTask`), and it is theirs alone from then.
 * - Its reviewer sees the case as the first moderator saw it (`blindCase`): reports, content,
 *   subject, the AI's analysis, other people's notes from before the decision; nothing that
 *   tells the decision (status, resolution, dismissal, actions, the audit trail, update times,
 *   the decider's own notes), nor why it was sampled (an always-sample condition names the kind
 *   of action).
 * - The reviewer commits a decision as the decision dialog asks it (`submitSecondReview`); only
 *   then does the answer hold both. A second review never changes the case: it records.
 * - Disagreements are listed for the leads (admins) side by side; a lead acknowledges one,
 *   optionally putting a dismissed case back into review through the workflow engine (an
 *   escalation to senior moderators), audited. A resolution changes through its appeal.
 * - Agreement figures over a period: per queue and per category (percentage agreement and
 *   Krippendorff's α, with n), per pair of moderators (Cohen's κ, with n): agreement.ts.
 *
 * Every read and write goes through the one queue-access check: a task of a case the caller
 * may not work is not found (404), and lists leave such cases out. The blind-review wall itself
 * (what the holder of a task may not see until they submit it) is that same check
 * (src/domain/access/queue-access.ts, blindScope): the task is read by queue access alone, as the
 * reviewer's own.
 */
import { and, asc, desc, eq, gte, inArray, isNotNull, isNull, lt, lte, ne, or, sql } from "drizzle-orm";
import { caseNotes, cases, identities, projects, qualityReviews, queues, reports } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { iso, isoFromUs } from "../core/clock.ts";
import { rowLockedTransaction, type DomainContext } from "../core/context.ts";
import { conflict, forbidden, notFound } from "../core/errors.ts";
import { userEmails } from "../accounts/users.ts";
import { ACTION_KINDS, kindsOfCode, type ActionKind } from "../views/enforcement.ts";
import type { ResolutionCode } from "../views/report.ts";
import {
  decisionLabel,
  REVIEWED_CASE_DESCRIPTIONS,
  type Agreement,
  type BlindCase,
  type QualityDecision,
  type QualityReview,
  type QualityTask,
  type ReviewedAction,
  type ReviewedCase,
  type SampleReason,
  type SecondDecisionInput,
} from "../views/quality.ts";
import { cohensKappa, krippendorffAlpha, percentAgreement } from "./agreement.ts";
import { assertMayWorkQueueOfCaseId, forgetBlindScope, listableCases, workableCases, type AccessContext } from "../access/queue-access.ts";
import { applyTransition } from "../review/workflow-engine.ts";

type ReviewRow = typeof qualityReviews.$inferSelect;
type ReportRow = typeof reports.$inferSelect;
type IdentityRow = typeof identities.$inferSelect;


/** The signed-in moderator a second review is for: API keys and Flagstaff itself review nothing. */
function reviewer(ctx: DomainContext): string {
  if (ctx.actor.type !== "user" || !ctx.actor.id) throw forbidden("A second review is a signed-in moderator's");
  return ctx.actor.id;
}

/** The condition "the review's case is one the caller may work" (undefined: every case): their own second reviews. */
async function ofWorkableCase(ctx: AccessContext) {
  const workable = await workableCases(ctx);
  return workable ? sql`exists (select 1 from ${cases} where ${cases.id} = ${qualityReviews.caseId} and ${workable})` : undefined;
}

/**
 * The condition "the review's case may be listed to the caller" (undefined: every case): one they
 * may work and that the blind-review wall does not hide (a case they review blind, or another
 * about its account): the leads' lists, which show what each case is about.
 */
async function ofListableCase(ctx: AccessContext) {
  const listable = await listableCases(ctx);
  return listable ? sql`exists (select 1 from ${cases} where ${cases.id} = ${qualityReviews.caseId} and ${listable})` : undefined;
}

/** The reports a case held when its first decision was made (a report filed later was not seen), the first filed first; at most `limit`. */
function reportsSeen(ctx: Pick<DomainContext, "db">, review: Pick<ReviewRow, "caseId" | "firstDecidedAt">, limit?: number): Promise<ReportRow[]> {
  const q = ctx.db
    .select()
    .from(reports)
    .where(and(eq(reports.caseId, review.caseId), lte(reports.createdUs, review.firstDecidedAt * 1000)))
    .orderBy(asc(reports.createdUs), asc(reports.id));
  return limit === undefined ? q : q.limit(limit);
}

/** The AI's finding a report holds (null: not analysed). */
const aiFindingOf = (r: ReportRow) =>
  r.aiAnalyzedAt != null
    ? { severity: r.aiSeverity ?? "", categories: JSON.parse(r.aiCategories ?? "[]") as string[], confidence: r.aiConfidence ?? 0, reasoning: r.aiReasoning ?? "" }
    : null;

const identityRef = (p: IdentityRow) => ({ type: p.type, externalId: p.externalId, displayName: p.name ?? p.username ?? null });

/** The reports a list reads of each case to say what it is about (a pile-on's first ones say it). */
const SUMMARY_REPORTS = 20;

/**
 * What each review's case is about, as its first decider saw it (reviewedCaseSchema), keyed by
 * review id: the case's content with the text of its first report that carried it, else its
 * account; the first reports' descriptions; the AI's finding on the first analysed report.
 */
async function reviewedCases(ctx: Pick<DomainContext, "db" | "orgId">, rows: readonly ReviewRow[]): Promise<Map<string, ReviewedCase>> {
  if (!rows.length) return new Map();
  const caseIds = [...new Set(rows.map((r) => r.caseId))];
  const caseRows = await ctx.db
    .select({ id: cases.id, contentType: cases.contentType, contentExternalId: cases.contentExternalId, subjectIdentityId: cases.subjectIdentityId })
    .from(cases)
    .where(and(eq(cases.orgId, ctx.orgId), inArray(cases.id, caseIds)));
  const caseById = new Map(caseRows.map((c) => [c.id, c] as const));
  const seen = await Promise.all(rows.map((r) => reportsSeen(ctx, r, SUMMARY_REPORTS)));
  const subjectOf = (i: number) => caseById.get(rows[i]!.caseId)?.subjectIdentityId ?? seen[i]!.find((r) => r.subjectIdentityId)?.subjectIdentityId ?? null;
  const subjectIds = [...new Set(rows.map((_, i) => subjectOf(i)).filter((x): x is string => !!x))];
  const people = subjectIds.length ? await ctx.db.select().from(identities).where(inArray(identities.id, subjectIds)) : [];
  const personById = new Map(people.map((p) => [p.id, p] as const));
  return new Map(
    rows.map((review, i) => {
      const c = caseById.get(review.caseId);
      const reportsOfCase = seen[i]!;
      const withContent = reportsOfCase.find((r) => r.content != null && r.content !== "");
      const subject = personById.get(subjectOf(i) ?? "");
      const analysed = reportsOfCase.find((r) => r.aiAnalyzedAt != null);
      const descriptions = [...new Set(reportsOfCase.map((r) => r.description?.trim()).filter((d): d is string => !!d))].slice(0, REVIEWED_CASE_DESCRIPTIONS);
      return [
        review.id,
        {
          target: c?.contentExternalId != null ? { contentType: c.contentType || null, contentExternalId: c.contentExternalId } : null,
          subject: subject ? identityRef(subject) : null,
          content: withContent?.content ?? null,
          descriptions,
          ai: analysed ? aiFindingOf(analysed) : null,
        },
      ] as const;
    }),
  );
}

/** A review of the organization whose case the caller may work, else 404 (a case they review blind too: the task is theirs). */
async function requireReview(ctx: AccessContext, reviewId: string): Promise<ReviewRow> {
  const [row] = await ctx.db.select().from(qualityReviews).where(and(eq(qualityReviews.id, reviewId), eq(qualityReviews.orgId, ctx.orgId))).limit(1);
  if (!row) throw notFound("Review not found");
  await assertMayWorkQueueOfCaseId(ctx, row.caseId, "Review");
  return row;
}

/** The caller's own task (taken by them), else 404: another moderator's task is not theirs to see. */
async function requireOwnTask(ctx: DomainContext, reviewId: string): Promise<ReviewRow> {
  const me = reviewer(ctx);
  const row = await requireReview(ctx, reviewId);
  if (row.reviewerId !== me) throw notFound("Review not found");
  return row;
}

async function queueNames(ctx: Pick<DomainContext, "db" | "orgId">, ids: readonly string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await ctx.db.select({ id: queues.id, name: queues.name }).from(queues).where(and(eq(queues.orgId, ctx.orgId), inArray(queues.id, [...new Set(ids)])));
  return new Map(rows.map((r) => [r.id, r.name] as const));
}

const toTask = (r: ReviewRow, names: Map<string, string>, about: Map<string, ReviewedCase>): QualityTask => ({
  id: r.id,
  caseId: r.caseId,
  // Its name only (caseNameSchema): the content is read in the blind view.
  case: { target: about.get(r.id)?.target ?? null, subject: about.get(r.id)?.subject ?? null },
  queue: { id: r.queueId, name: names.get(r.queueId) ?? "(deleted queue)" },
  sampledAt: iso(r.createdAt),
  claimedAt: r.claimedAt === null ? null : iso(r.claimedAt),
});

/**
 * The caller's next second review: the one they took and have not committed, else the oldest
 * offered to them (a case of a queue they may work, decided by someone else), which they take
 * now; null when none waits.
 */
export async function nextQualityTask(ctx: DomainContext): Promise<QualityTask | null> {
  const me = reviewer(ctx);
  const scope = await ofWorkableCase(ctx);
  for (let attempt = 0; attempt < 5; attempt++) {
    const [row] = await ctx.db
      .select()
      .from(qualityReviews)
      .where(
        and(
          eq(qualityReviews.orgId, ctx.orgId),
          isNull(qualityReviews.secondDecidedAt),
          or(eq(qualityReviews.reviewerId, me), and(isNull(qualityReviews.reviewerId), ne(qualityReviews.firstById, me))),
          scope,
        ),
      )
      // Its own first, then the oldest offered.
      .orderBy(sql`case when ${qualityReviews.reviewerId} is null then 1 else 0 end`, asc(qualityReviews.createdAt), asc(qualityReviews.id))
      .limit(1);
    if (!row) return null;
    if (row.reviewerId === me) return toTask(row, await queueNames(ctx, [row.queueId]), await reviewedCases(ctx, [row]));
    const now = ctx.clock.now();
    // Taken by whoever comes first: the update holds only while nobody took it.
    const taken = await rowLockedTransaction(ctx, () =>
      ctx.db
        .update(qualityReviews)
        .set({ reviewerId: me, claimedAt: now })
        .where(and(eq(qualityReviews.id, row.id), isNull(qualityReviews.reviewerId), isNull(qualityReviews.secondDecidedAt)))
        .returning({ id: qualityReviews.id }),
    );
    if (taken.length) {
      // From now on the case is walled off from the taker (the blind review), this request included.
      forgetBlindScope(ctx.actor);
      return toTask({ ...row, reviewerId: me, claimedAt: now }, await queueNames(ctx, [row.queueId]), await reviewedCases(ctx, [row]));
    }
  }
  return null;
}

/** The caller's second reviews not committed yet, and how many more are offered to them. */
export async function myQualityTasks(ctx: DomainContext): Promise<{ tasks: QualityTask[]; offered: number }> {
  const me = reviewer(ctx);
  const scope = await ofWorkableCase(ctx);
  const rows = await ctx.db
    .select()
    .from(qualityReviews)
    .where(and(eq(qualityReviews.orgId, ctx.orgId), isNull(qualityReviews.secondDecidedAt), eq(qualityReviews.reviewerId, me), scope))
    .orderBy(asc(qualityReviews.createdAt))
    .limit(100);
  const [offered] = await ctx.db
    .select({ n: sql<number>`count(*)` })
    .from(qualityReviews)
    .where(and(eq(qualityReviews.orgId, ctx.orgId), isNull(qualityReviews.secondDecidedAt), isNull(qualityReviews.reviewerId), ne(qualityReviews.firstById, me), scope));
  const [names, about] = await Promise.all([queueNames(ctx, rows.map((r) => r.queueId)), reviewedCases(ctx, rows)]);
  return { tasks: rows.map((r) => toTask(r, names, about)), offered: Number(offered?.n ?? 0) };
}

/** The case of the caller's task as its first moderator saw it, and nothing that tells their decision. */
export async function blindCase(ctx: DomainContext, input: { reviewId: string }): Promise<BlindCase> {
  const row = await requireOwnTask(ctx, input.reviewId);
  const [c] = await ctx.db.select().from(cases).where(and(eq(cases.id, row.caseId), eq(cases.orgId, ctx.orgId))).limit(1);
  if (!c) throw notFound("Review not found");
  const [project] = await ctx.db.select({ name: projects.name }).from(projects).where(eq(projects.id, c.projectId)).limit(1);
  // The reports the case held when it was decided (a report filed later was not seen).
  const rows = await reportsSeen(ctx, row);
  const ids = [...new Set([c.subjectIdentityId, ...rows.flatMap((r) => [r.subjectIdentityId, r.reporterIdentityId])].filter((x): x is string => !!x))];
  const people = ids.length ? await ctx.db.select().from(identities).where(inArray(identities.id, ids)) : [];
  const byId = new Map(people.map((p) => [p.id, p] as const));
  const nameOf = (id: string | null) => {
    const p = id ? byId.get(id) : undefined;
    return p ? (p.name ?? p.username ?? p.externalId) : null;
  };
  const subjectId = c.subjectIdentityId ?? rows.find((r) => r.subjectIdentityId)?.subjectIdentityId ?? null;
  const subject = subjectId ? byId.get(subjectId) : undefined;
  // Other people's notes from before the decision: the decider's own may say what they decided.
  const notes = await ctx.db
    .select({ body: caseNotes.body, createdAt: caseNotes.createdAt, authorId: caseNotes.authorId, authorType: caseNotes.authorType })
    .from(caseNotes)
    .where(and(eq(caseNotes.caseId, c.id), lt(caseNotes.createdAt, row.firstDecidedAt)))
    .orderBy(asc(caseNotes.createdAt));
  return {
    task: toTask(row, await queueNames(ctx, [row.queueId]), await reviewedCases(ctx, [row])),
    case: { id: c.id, projectName: project?.name ?? "", bucket: c.bucket, createdAt: iso(c.createdAt), categories: JSON.parse(row.categories) as string[] },
    subject: subject ? identityRef(subject) : null,
    reports: rows.map((r) => ({
      id: r.id,
      reasons: JSON.parse(r.reasons) as string[],
      severity: r.severity,
      description: r.description,
      automated: r.automated === 1,
      target: r.contentExternalId != null || r.contentType != null || r.content != null ? { contentType: r.contentType || null, contentExternalId: r.contentExternalId, content: r.content } : null,
      reporter: nameOf(r.reporterIdentityId),
      ai: aiFindingOf(r),
      createdAt: isoFromUs(r.createdUs),
    })),
    notes: notes.filter((n) => !(n.authorType === "user" && n.authorId === row.firstById)).map((n) => ({ body: n.body, createdAt: iso(n.createdAt) })),
  };
}

const asKind = (k: string | null): ActionKind | null => (k !== null && (ACTION_KINDS as readonly string[]).includes(k) ? (k as ActionKind) : null);

function decisionOf(action: string, code: string | null, kind: string | null): QualityDecision {
  const d = { action: action as ReviewedAction, code, actionKind: asKind(kind) };
  return { ...d, label: decisionLabel(d) };
}

/** What the reviewer's input records: a code that implies its kind without one (CONTENT_LEVEL_ACTION) records that kind, as a resolution does. */
function secondDecision(input: SecondDecisionInput): { action: ReviewedAction; code: string; actionKind: ActionKind | null } {
  if (input.action === "dismiss") return { action: "dismiss", code: input.reason, actionKind: null };
  const kinds = kindsOfCode(input.code as ResolutionCode);
  if (input.actionKind && !kinds.includes(input.actionKind)) {
    throw conflict(`actionKind: ${input.code} takes ${kinds.length ? kinds.join(", ") : "no action"}, not ${input.actionKind}`);
  }
  return { action: "resolve", code: input.code, actionKind: input.actionKind ?? null };
}

async function toReviews(ctx: Pick<DomainContext, "db" | "orgId">, rows: ReviewRow[]): Promise<QualityReview[]> {
  const [emails, names, about] = await Promise.all([
    userEmails(ctx, { ids: rows.flatMap((r) => [r.firstById, r.reviewerId, r.ackById]) }),
    queueNames(ctx, rows.map((r) => r.queueId)),
    reviewedCases(ctx, rows),
  ]);
  const person = (id: string) => ({ id, email: emails.get(id) ?? "unknown user" });
  return rows.map((r) => ({
    id: r.id,
    caseId: r.caseId,
    case: about.get(r.id) ?? { target: null, subject: null, content: null, descriptions: [], ai: null },
    projectId: r.projectId,
    queue: { id: r.queueId, name: names.get(r.queueId) ?? "(deleted queue)" },
    reason: r.reason as SampleReason,
    sampledAt: iso(r.createdAt),
    categories: JSON.parse(r.categories) as string[],
    first: { by: person(r.firstById), decision: decisionOf(r.firstAction, r.firstCode, r.firstKind), decidedAt: iso(r.firstDecidedAt) },
    second:
      r.secondDecidedAt !== null && r.reviewerId && r.secondAction
        ? { by: person(r.reviewerId), decision: decisionOf(r.secondAction, r.secondCode, r.secondKind), note: r.secondNote, decidedAt: iso(r.secondDecidedAt) }
        : null,
    agree: r.agree === null ? null : r.agree === 1,
    acknowledgment: r.ackAt !== null && r.ackById ? { by: person(r.ackById), at: iso(r.ackAt), note: r.ackNote, reopened: r.ackReopened === 1 } : null,
  }));
}

/**
 * Commits the caller's blind decision on their task and answers both decisions. It records
 * only: the case, its reports and their outcome stay as the first decision left them.
 */
export async function submitSecondReview(ctx: DomainContext, input: { reviewId: string; decision: SecondDecisionInput; note?: string }): Promise<QualityReview> {
  const me = reviewer(ctx);
  const row = await requireOwnTask(ctx, input.reviewId);
  if (row.secondDecidedAt !== null) throw conflict("This second review is committed already");
  if (row.firstById === me) throw forbidden("The first decider cannot review their own decision");
  const second = secondDecision(input.decision);
  const first = decisionOf(row.firstAction, row.firstCode, row.firstKind);
  const agree = decisionLabel(second) === first.label;
  const now = ctx.clock.now();
  return rowLockedTransaction(ctx, async () => {
    const done = await ctx.db
      .update(qualityReviews)
      .set({ secondAction: second.action, secondCode: second.code, secondKind: second.actionKind, secondNote: input.note?.trim() || null, secondDecidedAt: now, agree: agree ? 1 : 0 })
      .where(and(eq(qualityReviews.id, row.id), eq(qualityReviews.reviewerId, me), isNull(qualityReviews.secondDecidedAt)))
      .returning();
    if (!done.length) throw conflict("This second review is committed already");
    forgetBlindScope(ctx.actor);
    await recordAudit(ctx, {
      projectId: row.projectId, action: "QUALITY_REVIEW_SUBMITTED", entityType: "case", entityId: row.caseId,
      data: { reviewId: row.id, action: second.action, code: second.code, actionKind: second.actionKind, agree },
    });
    return (await toReviews(ctx, done))[0]!;
  });
}

/**
 * Reviews whose two decisions differ, newest first, of cases the caller may see in a list (queue
 * access, and not walled by a blind review of their own): unacknowledged ones, or acknowledged ones.
 */
export async function listDisagreements(ctx: DomainContext, input: { acknowledged?: boolean; limit?: number }): Promise<QualityReview[]> {
  const rows = await ctx.db
    .select()
    .from(qualityReviews)
    .where(
      and(
        eq(qualityReviews.orgId, ctx.orgId),
        eq(qualityReviews.agree, 0),
        input.acknowledged ? isNotNull(qualityReviews.ackAt) : isNull(qualityReviews.ackAt),
        await ofListableCase(ctx),
      ),
    )
    .orderBy(desc(qualityReviews.secondDecidedAt), desc(qualityReviews.id))
    .limit(input.limit ?? 50);
  return toReviews(ctx, rows);
}

/**
 * A lead acknowledges a disagreement, audited. With `reopen`, a dismissed case goes back into
 * review (escalated to senior moderators) through the workflow engine in the same transaction;
 * a resolved case is not reopened here (its decision changes through its appeal): 409.
 */
export async function acknowledgeDisagreement(ctx: DomainContext, input: { reviewId: string; note?: string; reopen?: boolean }): Promise<QualityReview> {
  const me = reviewer(ctx);
  const row = await requireReview(ctx, input.reviewId);
  if (row.agree !== 0) throw conflict(row.agree === null ? "This review is not committed yet" : "Both decisions agree: nothing to acknowledge");
  if (row.ackAt !== null) throw conflict("This disagreement is acknowledged already");
  const note = input.note?.trim() || null;
  return rowLockedTransaction(ctx, async () => {
    if (input.reopen) {
      const [c] = await ctx.db.select({ status: cases.status }).from(cases).where(eq(cases.id, row.caseId)).limit(1);
      if (c?.status !== "DISMISSED") throw conflict(`The case is ${c?.status ?? "gone"}: only a dismissed case is reopened from here; a resolution changes through its appeal`);
      const [report] = await ctx.db.select({ id: reports.id }).from(reports).where(and(eq(reports.caseId, row.caseId), eq(reports.status, "DISMISSED"))).orderBy(asc(reports.createdUs)).limit(1);
      if (!report) throw conflict("The case has no dismissed report to reopen");
      await applyTransition(ctx, { target: { reportId: report.id }, move: { action: "escalate", team: "senior_moderator", note: note ?? "Reopened after a second review disagreed" } });
    }
    const now = ctx.clock.now();
    const done = await ctx.db
      .update(qualityReviews)
      .set({ ackById: me, ackAt: now, ackNote: note, ackReopened: input.reopen ? 1 : 0 })
      .where(and(eq(qualityReviews.id, row.id), isNull(qualityReviews.ackAt)))
      .returning();
    if (!done.length) throw conflict("This disagreement is acknowledged already");
    await recordAudit(ctx, { projectId: row.projectId, action: "QUALITY_REVIEW_ACKNOWLEDGED", entityType: "case", entityId: row.caseId, data: { reviewId: row.id, note, reopened: input.reopen === true } });
    return (await toReviews(ctx, done))[0]!;
  });
}

/** The figures of a set of reviews: n, percentage agreement, and α over them as units of two coders. */
function alphaFigure(rows: readonly { first: string; second: string }[]) {
  const items = rows.map((r) => [r.first, r.second] as const);
  return { n: rows.length, agreement: percentAgreement(items), alpha: krippendorffAlpha(items) };
}

/**
 * Agreement over the reviews committed in [from, to) of cases the caller may work: overall,
 * per queue, per category of the case (a review counts in each of its categories), and per
 * pair of moderators (Cohen's κ, each moderator's labels on their side whichever decided first).
 */
export async function agreementFigures(ctx: DomainContext, input: { from: number; to: number }): Promise<Agreement> {
  const rows = await ctx.db
    .select()
    .from(qualityReviews)
    .where(
      and(
        eq(qualityReviews.orgId, ctx.orgId),
        gte(qualityReviews.secondDecidedAt, input.from),
        lt(qualityReviews.secondDecidedAt, input.to),
        isNotNull(qualityReviews.reviewerId),
        await ofWorkableCase(ctx),
      ),
    )
    .limit(100_000);
  const items = rows.map((r) => ({
    row: r,
    first: decisionOf(r.firstAction, r.firstCode, r.firstKind).label,
    second: decisionOf(r.secondAction ?? "dismiss", r.secondCode, r.secondKind).label,
  }));
  const names = await queueNames(ctx, items.map((i) => i.row.queueId));
  const byQueue = Map.groupBy(items, (i) => i.row.queueId);
  const byCategory = new Map<string, typeof items>();
  for (const i of items) for (const cat of JSON.parse(i.row.categories) as string[]) byCategory.set(cat, [...(byCategory.get(cat) ?? []), i]);
  const byPair = new Map<string, { a: string; b: string; items: [string, string][] }>();
  for (const i of items) {
    const x = i.row.firstById;
    const y = i.row.reviewerId!;
    const [a, b] = x < y ? [x, y] : [y, x];
    const labels: [string, string] = x === a ? [i.first, i.second] : [i.second, i.first];
    const key = `${a} ${b}`;
    const pair = byPair.get(key) ?? { a, b, items: [] };
    pair.items.push(labels);
    byPair.set(key, pair);
  }
  const emails = await userEmails(ctx, { ids: [...byPair.values()].flatMap((p) => [p.a, p.b]) });
  const person = (id: string) => ({ id, email: emails.get(id) ?? "unknown user" });
  return {
    from: iso(input.from),
    to: iso(input.to),
    overall: alphaFigure(items),
    queues: [...byQueue].map(([id, list]) => ({ queue: { id, name: names.get(id) ?? "(deleted queue)" }, ...alphaFigure(list) })).sort((x, y) => x.queue.name.localeCompare(y.queue.name)),
    categories: [...byCategory].map(([category, list]) => ({ category, ...alphaFigure(list) })).sort((x, y) => x.category.localeCompare(y.category)),
    pairs: [...byPair.values()]
      .map((p) => ({ moderators: [person(p.a), person(p.b)] as [ReturnType<typeof person>, ReturnType<typeof person>], n: p.items.length, agreement: percentAgreement(p.items), kappa: cohensKappa(p.items) }))
      .sort((x, y) => y.n - x.n || x.moderators[0].email.localeCompare(y.moderators[0].email)),
  };
}
