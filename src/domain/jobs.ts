import { and, asc, count, desc, eq, inArray, lt, lte, min, or, sql } from "drizzle-orm";
import { jobs } from "../db/schema.ts";
import { iso, isoOrNull } from "./clock.ts";
import { transaction, type DomainContext, type ReadContext } from "./context.ts";
import { newId } from "./ids.ts";
import type { JobStatus, JobView } from "./views/job.ts";

export type JobRow = typeof jobs.$inferSelect;
export type { JobStatus, JobView } from "./views/job.ts";

export interface EnqueueInput {
  /** The organization the job works for. */
  orgId: string;
  kind: string;
  payload: unknown;
  /** When the job may first run (default: now). */
  runAt?: number;
  maxAttempts?: number;
}

/**
 * Adds a job. Call it inside the transaction whose change it follows (the job then exists
 * exactly when the change does: an outbox); the workers are woken once that transaction commits.
 */
export async function enqueueJob(ctx: ReadContext, input: EnqueueInput): Promise<string> {
  const id = newId();
  const now = ctx.clock.now();
  await ctx.db.insert(jobs).values({
    id,
    orgId: input.orgId,
    kind: input.kind,
    payload: JSON.stringify(input.payload),
    status: "pending",
    attempts: 0,
    maxAttempts: input.maxAttempts ?? 10,
    runAt: input.runAt ?? now,
    createdAt: now,
    updatedAt: now,
  });
  ctx.store.jobEnqueued();
  return id;
}

/**
 * The queue's own transactions touch only job rows they lock (a claim) or lease: on PostgreSQL
 * they run beside other writes, so instances claim jobs together (Store.transaction).
 */
const LEASED_ROWS_ONLY = { exclusive: false } as const;

/**
 * Leases the next due job: a pending one whose time has come, or a running one whose lease
 * expired (its worker died). One UPDATE … RETURNING in a transaction of its own, its row
 * locked FOR UPDATE SKIP LOCKED on PostgreSQL, so two workers (of any instance) never take the
 * same job and never wait for each other.
 */
export function claimJob(ctx: ReadContext, input: { workerId: string; leaseMs: number }): Promise<JobRow | null> {
  return ctx.store.transaction(async () => {
    const now = ctx.clock.now();
    const next = ctx.db
      .select({ id: jobs.id })
      .from(jobs)
      .where(or(and(eq(jobs.status, "pending"), lte(jobs.runAt, now)), and(eq(jobs.status, "running"), lt(jobs.leaseUntil, now))))
      .orderBy(asc(jobs.runAt))
      .limit(1);
    const [row] = await ctx.db
      .update(jobs)
      .set({ status: "running", attempts: sql`${jobs.attempts} + 1`, leaseUntil: now + input.leaseMs, leasedBy: input.workerId, updatedAt: now })
      // Another instance's claim in progress holds its row: take the next one instead of waiting.
      .where(inArray(jobs.id, ctx.store.skipLocked(next)))
      .returning();
    return row ?? null;
  }, LEASED_ROWS_ONLY);
}

/** Marks a leased job done, unless its lease passed to another worker meanwhile. */
export function completeJob(ctx: ReadContext, input: { job: JobRow; workerId: string }): Promise<void> {
  return ctx.store.transaction(async () => {
    await ctx.db
      .update(jobs)
      .set({ status: "done", leaseUntil: null, leasedBy: null, lastError: null, updatedAt: ctx.clock.now() })
      .where(and(eq(jobs.id, input.job.id), eq(jobs.leasedBy, input.workerId)));
  }, LEASED_ROWS_ONLY);
}

/** A failed attempt: retry at `retryAt`, or dead when that was the last attempt. */
export function failJob(ctx: ReadContext, input: { job: JobRow; workerId: string; error: string; retryAt: number }): Promise<JobStatus> {
  const { job } = input;
  const status: JobStatus = job.attempts >= job.maxAttempts ? "dead" : "pending";
  return ctx.store.transaction(async () => {
    await ctx.db
      .update(jobs)
      .set({ status, runAt: status === "pending" ? input.retryAt : job.runAt, leaseUntil: null, leasedBy: null, lastError: input.error.slice(0, 2000), updatedAt: ctx.clock.now() })
      .where(and(eq(jobs.id, job.id), eq(jobs.leasedBy, input.workerId)));
    return status;
  }, LEASED_ROWS_ONLY);
}

/**
 * Gives leased jobs back on shutdown so they run again at once after restart rather than
 * after their lease; the attempt they were in does not count.
 */
export function releaseLeases(ctx: ReadContext, input: { workerId: string }): Promise<number> {
  return ctx.store.transaction(async () => {
    const now = ctx.clock.now();
    const released = await ctx.db
      .update(jobs)
      .set({
        status: "pending",
        attempts: sql`case when ${jobs.attempts} > 0 then ${jobs.attempts} - 1 else 0 end`,
        leaseUntil: null,
        leasedBy: null,
        runAt: now,
        updatedAt: now,
      })
      .where(and(eq(jobs.status, "running"), eq(jobs.leasedBy, input.workerId)))
      .returning({ id: jobs.id });
    return released.length;
  }, LEASED_ROWS_ONLY);
}

/** When the next job becomes due (pending run time or expiring lease), to sleep until then. */
export async function nextDueAt(ctx: Pick<ReadContext, "db">): Promise<number | null> {
  const [pending] = await ctx.db.select({ t: min(jobs.runAt) }).from(jobs).where(eq(jobs.status, "pending"));
  const [leased] = await ctx.db.select({ t: min(jobs.leaseUntil) }).from(jobs).where(eq(jobs.status, "running"));
  const times = [pending?.t, leased?.t].filter((t): t is number => t != null);
  return times.length ? Math.min(...times) : null;
}

/** How many jobs are in each of `statuses` (metrics). */
export async function countJobsByStatus(ctx: Pick<ReadContext, "db">, statuses: JobStatus[]): Promise<Record<string, number>> {
  const rows = await ctx.db.select({ status: jobs.status, n: count() }).from(jobs).where(inArray(jobs.status, statuses)).groupBy(jobs.status);
  const counts: Record<string, number> = Object.fromEntries(statuses.map((s) => [s, 0]));
  for (const r of rows) counts[r.status] = r.n;
  return counts;
}

/** The run time of the oldest pending job that is due at `now` (null when none). */
export async function oldestDueRunAt(ctx: Pick<ReadContext, "db">, now: number): Promise<number | null> {
  const [row] = await ctx.db.select({ t: min(jobs.runAt) }).from(jobs).where(and(eq(jobs.status, "pending"), lte(jobs.runAt, now)));
  return row?.t ?? null;
}

export const toJobView = (j: JobRow): JobView => ({
  id: j.id,
  kind: j.kind,
  status: j.status,
  attempts: j.attempts,
  maxAttempts: j.maxAttempts,
  runAt: iso(j.runAt),
  lastError: j.lastError,
  payload: JSON.parse(j.payload),
  createdAt: iso(j.createdAt),
  updatedAt: iso(j.updatedAt),
  leaseUntil: isoOrNull(j.leaseUntil),
});

/** The jobs of the context's organization, most recently changed first. */
export async function listJobs(ctx: Pick<DomainContext, "db" | "orgId">, filter: { status?: JobStatus; kind?: string; limit: number }): Promise<JobView[]> {
  const rows = await ctx.db
    .select()
    .from(jobs)
    .where(
      and(
        eq(jobs.orgId, ctx.orgId),
        filter.status ? eq(jobs.status, filter.status) : undefined,
        filter.kind ? eq(jobs.kind, filter.kind) : undefined,
      ),
    )
    .orderBy(desc(jobs.updatedAt))
    .limit(filter.limit);
  return rows.map(toJobView);
}

/** Jobs by status: of one organization, or of the whole installation (metrics) without one. */
export async function queueDepth(ctx: Pick<DomainContext, "db">, input: { orgId?: string } = {}): Promise<Record<JobStatus, number>> {
  const rows = await ctx.db
    .select({ status: jobs.status, n: count() })
    .from(jobs)
    .where(input.orgId === undefined ? undefined : eq(jobs.orgId, input.orgId))
    .groupBy(jobs.status);
  const out: Record<JobStatus, number> = { pending: 0, running: 0, done: 0, dead: 0 };
  for (const r of rows) out[r.status] = r.n;
  return out;
}

/** Puts a dead job of the context's organization back in line (an operator's "retry"). */
export function retryDeadJob(ctx: Pick<DomainContext, "store" | "db" | "clock" | "orgId">, jobId: string): Promise<boolean> {
  return transaction(ctx, async () => {
    const now = ctx.clock.now();
    const retried = await ctx.db
      .update(jobs)
      .set({ status: "pending", attempts: 0, runAt: now, lastError: null, updatedAt: now })
      .where(and(eq(jobs.id, jobId), eq(jobs.orgId, ctx.orgId), eq(jobs.status, "dead")))
      .returning({ id: jobs.id });
    if (retried.length > 0) ctx.store.jobEnqueued();
    return retried.length > 0;
  });
}
