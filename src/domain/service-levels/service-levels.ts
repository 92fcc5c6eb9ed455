/**
 * Service levels (issue 27): a queue's targets for its cases, a project's for its appeals, the
 * breaches recorded when one is passed, and the figures the dashboard, /metrics and the
 * transparency report show of them. The vocabulary and what is measured: views/service-level.ts.
 *
 * A breach is an open case (or a pending appeal) older than its target: the case opened (the
 * appeal was filed) more than the target ago and is still unreviewed (first_review: no claim,
 * no decision), undecided (decision) or pending (appeal). The periodic pass (`recordDueBreaches`,
 * one instance at a time: src/jobs/service-level-jobs.ts) writes one `sla_breaches` row per case
 * and target, and in the same transaction the `queue.sla_breached` webhook event. The unique
 * index (subject, target) makes the row and its event once: a second pass, or another instance
 * running one at the same time, inserts nothing (on PostgreSQL its insert waits for the first's
 * commit, then finds the row) and so announces nothing. A target changed later does not touch
 * breaches already recorded.
 */
import { and, asc, count, eq, gte, inArray, isNotNull, isNull, like, lt, lte, notExists, or, sql, type SQL } from "drizzle-orm";
import { appeals, cases, enforcementActions, projects, queues, slaBreaches } from "../../db/schema.ts";
import { DAY_MS, iso } from "../core/clock.ts";
import { rowLockedTransaction, type ReadContext } from "../core/context.ts";
import { newId } from "../core/ids.ts";
import { parseDsaSettings } from "../accounts/settings.ts";
import { EVENT_TYPE } from "../views/webhook.ts";
import { enqueueWebhookEvent } from "../webhooks/outbox.ts";
import type { SlaBreachedEvent, ServiceLevels, SlaTarget } from "../views/service-level.ts";
import { caseAccess, casesOfLiveProjects, isCountedFor, mayWorkQueueOf, type AccessContext } from "../access/queue-access.ts";
import { defaultQueue, listQueueRows, type QueueRow } from "../review/queues.ts";
import { liveProject } from "../accounts/projects.ts";
import { BUCKETS, type Bucket } from "../views/severity.ts";

const MINUTE_MS = 60_000;
/** Breaches one pass records per queue and target (the next pass goes on). */
const PASS_BATCH = 200;

type QueueTarget = Exclude<SlaTarget, "appeal">;

/** A queue's target of `kind`, in minutes (null: none). */
const targetOf = (q: Pick<QueueRow, "firstReviewTargetMinutes" | "decisionTargetMinutes">, kind: QueueTarget): number | null =>
  kind === "first_review" ? q.firstReviewTargetMinutes : q.decisionTargetMinutes;

/** The SQL condition on `cases` "in queue `q`" (the default queue also holds the cases with no queue). */
const inQueue = (q: Pick<QueueRow, "id" | "isDefault">): SQL => (q.isDefault === 1 ? (or(isNull(cases.queueId), eq(cases.queueId, q.id)) as SQL) : eq(cases.queueId, q.id));

/** The open cases of a queue (of live projects: `live`, casesOfLiveProjects). */
export const openInQueue = (orgId: string, q: Pick<QueueRow, "id" | "isDefault">, live?: SQL): SQL => and(eq(cases.orgId, orgId), eq(cases.isOpen, 1), inQueue(q), live)!;

/** The SQL condition on `cases` "open and still short of `kind`" (its first review, or its decision). */
const stillWaiting = (kind: QueueTarget): SQL =>
  kind === "first_review"
    ? and(eq(cases.isOpen, 1), isNull(cases.decidedAt), isNull(cases.assigneeId))!
    : and(eq(cases.isOpen, 1), isNull(cases.decidedAt))!;

/** The condition on `cases` "open, short of `kind` and past the queue's target at `now`". */
const overdueIn = (q: QueueRow, kind: QueueTarget, now: number): SQL | null => {
  const minutes = targetOf(q, kind);
  if (minutes === null) return null;
  return and(eq(cases.orgId, q.orgId), inQueue(q), stillWaiting(kind), lte(cases.createdAt, now - minutes * MINUTE_MS))!;
};

/** The condition "no breach of `target` is recorded for this case or appeal" (a probe of the unique index). */
const notRecorded = (subjectId: typeof cases.id | typeof appeals.id, target: SlaTarget) =>
  notExists(sql`(select 1 from ${slaBreaches} where ${slaBreaches.subjectId} = ${subjectId} and ${slaBreaches.target} = ${target})`);

interface DueBreach {
  orgId: string;
  projectId: string;
  queueId: string | null;
  target: SlaTarget;
  caseId: string | null;
  appealId: string | null;
  targetMinutes: number;
  startedAt: number;
}

/**
 * Records every breach due at the clock's time not recorded yet, each with its webhook event
 * (endpoints that list `queue.sla_breached`), and answers how many it recorded. Every
 * organization's: it runs as the installation's periodic pass.
 */
export async function recordDueBreaches(ctx: ReadContext): Promise<number> {
  const now = ctx.clock.now();
  const due: DueBreach[] = [];

  const targeted = await ctx.db
    .select()
    .from(queues)
    .where(or(isNotNull(queues.firstReviewTargetMinutes), isNotNull(queues.decisionTargetMinutes)));
  for (const q of targeted) {
    for (const kind of ["first_review", "decision"] as const) {
      const overdue = overdueIn(q, kind, now);
      if (!overdue) continue;
      const rows = await ctx.db
        .select({ id: cases.id, projectId: cases.projectId, createdAt: cases.createdAt })
        .from(cases)
        .where(and(overdue, notRecorded(cases.id, kind)))
        .orderBy(asc(cases.createdAt))
        .limit(PASS_BATCH);
      for (const c of rows) {
        due.push({ orgId: q.orgId, projectId: c.projectId, queueId: q.id, target: kind, caseId: c.id, appealId: null, targetMinutes: targetOf(q, kind)!, startedAt: c.createdAt });
      }
    }
  }

  // Appeals: the projects whose DSA settings set a target (a JSON field; few projects).
  const withTarget = await ctx.db
    .select({ id: projects.id, orgId: projects.orgId, dsaSettings: projects.dsaSettings })
    .from(projects)
    .where(and(like(projects.dsaSettings, "%appealTargetMinutes%"), liveProject()));
  for (const p of withTarget) {
    const minutes = parseDsaSettings(p.dsaSettings).appealTargetMinutes;
    if (minutes === undefined) continue;
    const rows = await ctx.db
      .select({ id: appeals.id, caseId: appeals.caseId, createdAt: appeals.createdAt })
      .from(appeals)
      .innerJoin(enforcementActions, eq(enforcementActions.id, appeals.actionId))
      .where(
        and(
          eq(appeals.orgId, p.orgId),
          eq(appeals.status, "pending"),
          eq(enforcementActions.projectId, p.id),
          lte(appeals.createdAt, now - minutes * MINUTE_MS),
          notRecorded(appeals.id, "appeal"),
        ),
      )
      .orderBy(asc(appeals.createdAt))
      .limit(PASS_BATCH);
    for (const a of rows) {
      due.push({ orgId: p.orgId, projectId: p.id, queueId: null, target: "appeal", caseId: a.caseId, appealId: a.id, targetMinutes: minutes, startedAt: a.createdAt });
    }
  }

  let recorded = 0;
  for (const b of due) if (await recordBreach({ ...ctx, orgId: b.orgId }, b, now)) recorded++;
  return recorded;
}

/** Writes one breach and its event, unless it is recorded already (then nothing: false). */
async function recordBreach(ctx: ReadContext & { orgId: string }, b: DueBreach, now: number): Promise<boolean> {
  const dueAt = b.startedAt + b.targetMinutes * MINUTE_MS;
  return rowLockedTransaction(ctx, async () => {
    const inserted = await ctx.db
      .insert(slaBreaches)
      .values({
        id: newId(),
        orgId: b.orgId,
        projectId: b.projectId,
        queueId: b.queueId,
        target: b.target,
        subjectId: b.appealId ?? b.caseId!,
        targetMinutes: b.targetMinutes,
        dueAt,
        breachedAt: now,
      })
      .onConflictDoNothing()
      .returning({ id: slaBreaches.id });
    if (!inserted.length) return false;
    const data: SlaBreachedEvent = {
      target: b.target,
      projectId: b.projectId,
      queueId: b.queueId,
      caseId: b.caseId,
      appealId: b.appealId,
      targetMinutes: b.targetMinutes,
      startedAt: iso(b.startedAt),
      dueAt: iso(dueAt),
      breachedAt: iso(now),
    };
    await enqueueWebhookEvent(ctx, { type: EVENT_TYPE.slaBreached, data, now });
    return true;
  });
}

/**
 * The oldest of the cases `open` selects: the oldest of each bucket, each the first of a range of
 * an index by (organization, …, bucket, created_at) (cases_queue_idx, cases_open_queue_idx). The
 * bucket sits before the age in those indexes, so ordering every bucket's cases by age at once
 * read and sorted all of the queue's open cases: 35 to 110 ms at 60,000, on the thread that serves
 * every request on SQLite (scripts/bench/dashboard-overview.ts).
 */
export async function oldestOf(ctx: Pick<ReadContext, "db">, open: SQL | undefined): Promise<{ id: string; createdAt: number } | null> {
  const firsts = await Promise.all(BUCKETS.map((bucket) => oldestQuery(ctx, open, bucket)));
  return firsts.flat().reduce<{ id: string; createdAt: number } | null>((a, b) => (a === null || b.createdAt < a.createdAt ? b : a), null);
}

/** oldestOf's statement for one bucket, unrun (test/query-plan.test.ts reads its plan). */
export function oldestQuery(ctx: Pick<ReadContext, "db">, open: SQL | undefined, bucket: Bucket) {
  return ctx.db.select({ id: cases.id, createdAt: cases.createdAt }).from(cases).where(and(open, eq(cases.bucket, bucket))).orderBy(asc(cases.createdAt)).limit(1);
}

/**
 * The service level of each queue the caller may work (queue access: the others are left out,
 * their breaches too), and of the appeals of cases the caller may work: targets, open cases,
 * the oldest, those past each target now, and the breaches recorded in the last `days` days.
 */
export async function serviceLevels(ctx: Pick<ReadContext, "store" | "clock"> & AccessContext, input: { days: number }): Promise<ServiceLevels> {
  const now = ctx.clock.now();
  const since = now - input.days * DAY_MS;
  const def = await defaultQueue(ctx);
  const access = await caseAccess(ctx);
  const workable = (await listQueueRows(ctx)).filter((q) => mayWorkQueueOf(access, q.id));
  const breachRows = workable.length
    ? await ctx.db
        .select({ queueId: slaBreaches.queueId, target: slaBreaches.target, n: count() })
        .from(slaBreaches)
        .where(and(eq(slaBreaches.orgId, ctx.orgId), gte(slaBreaches.breachedAt, since), inArray(slaBreaches.queueId, workable.map((q) => q.id))))
        .groupBy(slaBreaches.queueId, slaBreaches.target)
    : [];
  const breachesOf = (queueId: string, target: SlaTarget) => Number(breachRows.find((r) => r.queueId === queueId && r.target === target)?.n ?? 0);

  const queueLevels = [];
  const live = await casesOfLiveProjects(ctx);
  for (const q of workable) {
    const open = openInQueue(ctx.orgId, { id: q.id, isDefault: q.id === def.id ? 1 : 0 }, live);
    const [[n], oldest] = await Promise.all([ctx.db.select({ n: count() }).from(cases).where(open), oldestOf(ctx, open)]);
    const overdue = async (kind: QueueTarget) => {
      const where = overdueIn(q, kind, now);
      if (!where) return 0;
      const [row] = await ctx.db.select({ n: count() }).from(cases).where(and(where, live));
      return Number(row?.n ?? 0);
    };
    queueLevels.push({
      queueId: q.id,
      name: q.name,
      firstReviewTargetMinutes: q.firstReviewTargetMinutes,
      decisionTargetMinutes: q.decisionTargetMinutes,
      openCases: Number(n?.n ?? 0),
      oldestCase: oldest ? { id: oldest.id, openedAt: iso(oldest.createdAt) } : null,
      overdue: { firstReview: await overdue("first_review"), decision: await overdue("decision") },
      breaches: { firstReview: breachesOf(q.id, "first_review"), decision: breachesOf(q.id, "decision") },
    });
  }

  // Appeals of cases the caller may work (an appeal of no case is everyone's): figures, which count
  // a case the caller reviews blind with the others (isCountedFor). By the appeal's own case
  // column: a lookup of the appeal by id here would read the subquery's appeals row, not this one.
  const appealWorkable = await isCountedFor(ctx, "case", appeals.caseId, { whenNull: "kept" });
  const pending = await ctx.db
    .select({ createdAt: appeals.createdAt, dsaSettings: projects.dsaSettings })
    .from(appeals)
    .innerJoin(enforcementActions, eq(enforcementActions.id, appeals.actionId))
    .innerJoin(projects, eq(projects.id, enforcementActions.projectId))
    .where(and(eq(appeals.orgId, ctx.orgId), eq(appeals.status, "pending"), appealWorkable));
  let overdueAppeals = 0;
  let oldestPendingAt: number | null = null;
  const settings = new Map<string | null, number | undefined>();
  for (const a of pending) {
    if (!settings.has(a.dsaSettings)) settings.set(a.dsaSettings, parseDsaSettings(a.dsaSettings).appealTargetMinutes);
    const minutes = settings.get(a.dsaSettings);
    if (minutes !== undefined && a.createdAt <= now - minutes * MINUTE_MS) overdueAppeals++;
    oldestPendingAt = Math.min(oldestPendingAt ?? a.createdAt, a.createdAt);
  }
  const appealBreachWorkable = await isCountedFor(ctx, "appeal", slaBreaches.subjectId, { whenNull: "kept" });
  const [appealBreaches] = await ctx.db
    .select({ n: count() })
    .from(slaBreaches)
    .where(and(eq(slaBreaches.orgId, ctx.orgId), eq(slaBreaches.target, "appeal"), gte(slaBreaches.breachedAt, since), appealBreachWorkable));

  return {
    at: iso(now),
    days: input.days,
    queues: queueLevels,
    appeals: { pending: pending.length, overdue: overdueAppeals, oldestPendingAt: oldestPendingAt === null ? null : iso(oldestPendingAt), breaches: Number(appealBreaches?.n ?? 0) },
  };
}

/** Breaches recorded so far, by queue (null: appeals) and target, every organization's: /metrics. */
export async function breachTotals(ctx: Pick<ReadContext, "db">): Promise<{ queueId: string | null; target: string; n: number }[]> {
  const rows = await ctx.db
    .select({ queueId: slaBreaches.queueId, target: slaBreaches.target, n: count() })
    .from(slaBreaches)
    .groupBy(slaBreaches.queueId, slaBreaches.target);
  return rows.map((r) => ({ queueId: r.queueId, target: r.target, n: Number(r.n) }));
}

/** The transparency report's service-level section (views/transparency.ts). */
export interface DecidedWithinTarget {
  /** Cases decided in the period whose queue has a decision target, and those decided within it. */
  casesDecided: number;
  casesWithinTarget: number;
  /** Appeals decided in the period whose project has an appeal target, and those decided within it. */
  appealsDecided: number;
  appealsWithinTarget: number;
}

/**
 * How many decisions of the period met their target: a case decided within its queue's
 * decision target (as set now) of its opening, an appeal within its project's appeal target of
 * its filing. Decisions with no target are not counted.
 */
export async function decidedWithinTarget(ctx: Pick<ReadContext, "db"> & { orgId: string }, input: { fromMs: number; toMs: number; projectId: string | null }): Promise<DecidedWithinTarget> {
  // Aggregates in SQL, however many cases and appeals the period holds: each queue's (and each
  // project's) target is applied by the database, grouped per queue (per project), and only
  // those few rows come back. A case with no queue counts under the default queue's target.
  const queueRows = await listQueueRows(ctx);
  const defaultRow = queueRows.find((q) => q.isDefault === 1);
  const targets = new Map(queueRows.map((q) => [q.id, q.decisionTargetMinutes]));
  const decidedWithin = (targetMs: number): SQL<number> => sql<number>`coalesce(sum(case when ${cases.decidedAt} - ${cases.createdAt} <= ${targetMs} then 1 else 0 end), 0)`;
  let casesDecided = 0;
  let casesWithinTarget = 0;
  for (const [queueId, minutes] of [...targets.entries(), [null, defaultRow?.decisionTargetMinutes ?? null] as const]) {
    if (minutes === null || minutes === undefined) continue;
    const [row] = await ctx.db
      .select({ decided: count(), within: decidedWithin(minutes * MINUTE_MS) })
      .from(cases)
      .where(
        and(
          eq(cases.orgId, ctx.orgId),
          queueId === null ? isNull(cases.queueId) : eq(cases.queueId, queueId),
          isNotNull(cases.decidedAt),
          gte(cases.decidedAt, input.fromMs),
          lt(cases.decidedAt, input.toMs),
          input.projectId ? eq(cases.projectId, input.projectId) : undefined,
        ),
      );
    casesDecided += Number(row?.decided ?? 0);
    casesWithinTarget += Number(row?.within ?? 0);
  }

  const projectRows = await ctx.db
    .select({ id: projects.id, dsaSettings: projects.dsaSettings })
    .from(projects)
    .where(and(eq(projects.orgId, ctx.orgId), liveProject(), input.projectId ? eq(projects.id, input.projectId) : undefined));
  let appealsDecided = 0;
  let appealsWithinTarget = 0;
  for (const p of projectRows) {
    const minutes = parseDsaSettings(p.dsaSettings).appealTargetMinutes;
    if (minutes === undefined) continue;
    const [row] = await ctx.db
      .select({
        decided: count(),
        within: sql<number>`coalesce(sum(case when ${appeals.decidedAt} - ${appeals.createdAt} <= ${minutes * MINUTE_MS} then 1 else 0 end), 0)`,
      })
      .from(appeals)
      .innerJoin(enforcementActions, eq(enforcementActions.id, appeals.actionId))
      .where(and(eq(appeals.orgId, ctx.orgId), eq(enforcementActions.projectId, p.id), isNotNull(appeals.decidedAt), gte(appeals.decidedAt, input.fromMs), lt(appeals.decidedAt, input.toMs)));
    appealsDecided += Number(row?.decided ?? 0);
    appealsWithinTarget += Number(row?.within ?? 0);
  }
  return { casesDecided, casesWithinTarget, appealsDecided, appealsWithinTarget };
}
