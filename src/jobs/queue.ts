import { and, desc, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { jobs } from "../db/schema.ts";
import { iso, isoOrNull } from "../domain/clock.ts";
import { newId } from "../domain/ids.ts";

export type JobRow = typeof jobs.$inferSelect;
export type JobStatus = JobRow["status"];

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
 * Adds a job. Synchronous, so it can be part of the transaction whose change it follows (the
 * job then exists exactly when the change does: an outbox).
 */
export function enqueueJob(db: Db, now: number, input: EnqueueInput): string {
  const id = newId();
  db.insert(jobs)
    .values({
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
    })
    .run();
  return id;
}

/**
 * Leases the next due job: a pending one whose time has come, or a running one whose lease
 * expired (its worker died). One UPDATE … RETURNING, so two workers never take the same job.
 */
export function claimJob(db: Db, now: number, workerId: string, leaseMs: number): JobRow | null {
  const row = db.$client
    .query(
      `UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = ?1, leased_by = ?2, updated_at = ?3
       WHERE id = (
         SELECT id FROM jobs
         WHERE (status = 'pending' AND run_at <= ?3) OR (status = 'running' AND lease_until < ?3)
         ORDER BY run_at LIMIT 1
       )
       RETURNING *`,
    )
    .get(now + leaseMs, workerId, now) as Record<string, unknown> | null;
  return row ? fromRaw(row) : null;
}

function fromRaw(r: Record<string, unknown>): JobRow {
  return {
    id: r.id as string,
    orgId: (r.org_id as string | null) ?? null,
    kind: r.kind as string,
    payload: r.payload as string,
    status: r.status as JobStatus,
    attempts: r.attempts as number,
    maxAttempts: r.max_attempts as number,
    runAt: r.run_at as number,
    leaseUntil: (r.lease_until as number | null) ?? null,
    leasedBy: (r.leased_by as string | null) ?? null,
    lastError: (r.last_error as string | null) ?? null,
    createdAt: r.created_at as number,
    updatedAt: r.updated_at as number,
  };
}

/** Marks a leased job done, unless its lease passed to another worker meanwhile. */
export function completeJob(db: Db, now: number, job: JobRow, workerId: string): void {
  db.update(jobs)
    .set({ status: "done", leaseUntil: null, leasedBy: null, lastError: null, updatedAt: now })
    .where(and(eq(jobs.id, job.id), eq(jobs.leasedBy, workerId)))
    .run();
}

/** A failed attempt: retry at `retryAt`, or dead when that was the last attempt. */
export function failJob(db: Db, now: number, job: JobRow, workerId: string, error: string, retryAt: number): JobStatus {
  const status: JobStatus = job.attempts >= job.maxAttempts ? "dead" : "pending";
  db.update(jobs)
    .set({ status, runAt: status === "pending" ? retryAt : job.runAt, leaseUntil: null, leasedBy: null, lastError: error.slice(0, 2000), updatedAt: now })
    .where(and(eq(jobs.id, job.id), eq(jobs.leasedBy, workerId)))
    .run();
  return status;
}

/**
 * Gives leased jobs back on shutdown so they run again at once after restart rather than
 * after their lease; the attempt they were in does not count.
 */
export function releaseLeases(db: Db, now: number, workerId: string): number {
  const r = db
    .update(jobs)
    .set({ status: "pending", attempts: sql`max(0, ${jobs.attempts} - 1)`, leaseUntil: null, leasedBy: null, runAt: now, updatedAt: now })
    .where(and(eq(jobs.status, "running"), eq(jobs.leasedBy, workerId)))
    .returning({ id: jobs.id })
    .all();
  return r.length;
}

/** When the next job becomes due (pending run time or expiring lease), to sleep until then. */
export function nextDueAt(db: Db): number | null {
  const row = db.$client
    .query(
      `SELECT min(t) AS t FROM (
         SELECT min(run_at) AS t FROM jobs WHERE status = 'pending'
         UNION ALL SELECT min(lease_until) FROM jobs WHERE status = 'running')`,
    )
    .get() as { t: number | null };
  return row.t;
}

export interface JobView {
  id: string;
  kind: string;
  status: JobStatus;
  attempts: number;
  maxAttempts: number;
  runAt: string;
  lastError: string | null;
  payload: unknown;
  createdAt: string;
  updatedAt: string;
  leaseUntil: string | null;
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

export function listJobs(db: Db, filter: { orgId: string; status?: JobStatus; kind?: string; limit: number }): JobView[] {
  return db
    .select()
    .from(jobs)
    .where(
      and(
        eq(jobs.orgId, filter.orgId),
        filter.status ? eq(jobs.status, filter.status) : undefined,
        filter.kind ? eq(jobs.kind, filter.kind) : undefined,
      ),
    )
    .orderBy(desc(jobs.updatedAt))
    .limit(filter.limit)
    .all()
    .map(toJobView);
}

/** Jobs by status: of one organization, or of the whole installation (metrics) without one. */
export function queueDepth(db: Db, orgId?: string): Record<JobStatus, number> {
  const rows = (
    orgId === undefined
      ? db.$client.query("SELECT status, count(*) AS n FROM jobs GROUP BY status").all()
      : db.$client.query("SELECT status, count(*) AS n FROM jobs WHERE org_id = ? GROUP BY status").all(orgId)
  ) as { status: JobStatus; n: number }[];
  const out: Record<JobStatus, number> = { pending: 0, running: 0, done: 0, dead: 0 };
  for (const r of rows) out[r.status] = r.n;
  return out;
}

/** Puts a dead job back in line (an operator's "retry"). */
export function retryDeadJob(db: Db, now: number, orgId: string, jobId: string): boolean {
  const r = db
    .update(jobs)
    .set({ status: "pending", attempts: 0, runAt: now, lastError: null, updatedAt: now })
    .where(and(eq(jobs.id, jobId), eq(jobs.orgId, orgId), eq(jobs.status, "dead")))
    .returning({ id: jobs.id })
    .all();
  return r.length > 0;
}
