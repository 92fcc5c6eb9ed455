/**
 * Retention of the logs that grow with traffic: finished jobs, settled webhook deliveries (with
 * their attempts), rule hits and ended dashboard sessions. Each is deleted in small batches,
 * each batch a short transaction of its own over an index range (the oldest rows first), so a
 * pass never holds the writers for long: between two batches every waiting write runs. On
 * PostgreSQL the batches skip the write lock and rows another transaction holds (they touch
 * only old rows, which nothing else writes but a replay or a retry, whose rows they leave).
 */
import { and, asc, eq, inArray, lt, notInArray, or, type SQL } from "drizzle-orm";
import { jobs, ruleHits, sessions, webhookDeliveries } from "../../db/schema.ts";
import type { ReadContext } from "../core/context.ts";
import { SESSION_IDLE_MS } from "./sessions.ts";

/** How long each log is kept, in ms (0: forever). */
export interface RetentionPolicy {
  /** Done and skipped jobs, from when they finished (of a kind `jobKinds` does not name: one of an earlier release). */
  jobsMs: number;
  /** Dead and expired jobs, from when they died or expired (likewise): kept as long, for an operator's retry. */
  deadJobsMs: number;
  /** Each job kind's own retention of its done and skipped jobs (`doneMs`) and dead ones (`deadMs`): JOB_SPECS, src/jobs/job-specs.ts. */
  jobKinds?: Readonly<Record<string, { doneMs: number; deadMs: number }>>;
  /** Delivered and failed webhook deliveries and their attempts, from when the event was written. */
  webhooksMs: number;
  ruleHitsMs: number;
}

export const RETENTION_LOGS = ["jobs", "deadJobs", "webhookDeliveries", "ruleHits", "sessions"] as const;
export type RetentionLog = (typeof RETENTION_LOGS)[number];

const OWN_ROWS_ONLY = { exclusive: false } as const;

/**
 * The ranges of finished jobs one log of jobs deletes: the kinds kept for the same time go
 * together, the default (`jobsMs`, `deadJobsMs`) with every kind not kept otherwise. When every
 * kind is kept for the default time (the configured one), one range with no filter on the kind.
 */
function jobRanges(policy: RetentionPolicy, log: "jobs" | "deadJobs"): { ms: number; kinds: SQL | undefined }[] {
  const fallback = log === "jobs" ? policy.jobsMs : policy.deadJobsMs;
  const byMs = new Map<number, string[]>();
  for (const [kind, kept] of Object.entries(policy.jobKinds ?? {})) {
    const ms = log === "jobs" ? kept.doneMs : kept.deadMs;
    if (ms !== fallback) byMs.set(ms, [...(byMs.get(ms) ?? []), kind]);
  }
  const keptOtherwise = [...byMs.values()].flat();
  return [
    { ms: fallback, kinds: keptOtherwise.length ? notInArray(jobs.kind, keptOtherwise) : undefined },
    ...[...byMs].map(([ms, kinds]) => ({ ms, kinds: inArray(jobs.kind, kinds) })),
  ].filter((r) => r.ms > 0);
}

/**
 * Deletes up to `batch` rows of one log that its retention let go of (the oldest first), in one
 * transaction; answers how many. A log kept forever deletes nothing.
 */
export function deleteExpiredBatch(ctx: ReadContext, input: { log: RetentionLog; policy: RetentionPolicy; batch: number }): Promise<number> {
  const now = ctx.clock.now();
  const { policy, batch } = input;
  const store = ctx.store;
  const run = (fn: () => Promise<{ id: string }[]>) => store.transaction(async () => (await fn()).length, OWN_ROWS_ONLY);

  switch (input.log) {
    case "jobs":
    case "deadJobs": {
      const ranges = jobRanges(policy, input.log);
      if (ranges.length === 0) return Promise.resolve(0);
      const statuses = input.log === "jobs" ? (["done", "skipped"] as const) : (["dead", "expired"] as const);
      return run(async () => {
        let deleted: { id: string }[] = [];
        // One status at a time: each a range of (status, updated_at), for each retention of the kinds.
        for (const { ms, kinds } of ranges) {
          for (const status of statuses) {
            if (deleted.length >= batch) break;
            const old = ctx.db
              .select({ id: jobs.id })
              .from(jobs)
              .where(and(eq(jobs.status, status), lt(jobs.updatedAt, now - ms), kinds))
              .orderBy(asc(jobs.updatedAt))
              .limit(batch - deleted.length);
            const rows = await ctx.db.delete(jobs).where(inArray(jobs.id, store.skipLocked(old))).returning({ id: jobs.id });
            deleted = deleted.concat(rows);
          }
        }
        return deleted;
      });
    }
    case "webhookDeliveries": {
      if (policy.webhooksMs === 0) return Promise.resolve(0);
      // Attempts go with their delivery (ON DELETE CASCADE, through their delivery index). A
      // delivery still pending (retries under way) stays, whatever its age.
      const old = ctx.db
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(and(lt(webhookDeliveries.createdAt, now - policy.webhooksMs), notInArray(webhookDeliveries.status, ["pending"])))
        .orderBy(asc(webhookDeliveries.createdAt))
        .limit(batch);
      return run(() => ctx.db.delete(webhookDeliveries).where(inArray(webhookDeliveries.id, store.skipLocked(old))).returning({ id: webhookDeliveries.id }));
    }
    case "ruleHits": {
      if (policy.ruleHitsMs === 0) return Promise.resolve(0);
      const old = ctx.db.select({ id: ruleHits.id }).from(ruleHits).where(lt(ruleHits.at, now - policy.ruleHitsMs)).orderBy(asc(ruleHits.at)).limit(batch);
      return run(() => ctx.db.delete(ruleHits).where(inArray(ruleHits.id, store.skipLocked(old))).returning({ id: ruleHits.id }));
    }
    case "sessions": {
      // Ended sessions: past their absolute limit, or idle too long (each a range of its index).
      const ended = ctx.db
        .select({ id: sessions.id })
        .from(sessions)
        .where(or(lt(sessions.expiresAt, now), lt(sessions.lastSeenAt, now - SESSION_IDLE_MS)))
        .limit(batch);
      return run(() => ctx.db.delete(sessions).where(inArray(sessions.id, store.skipLocked(ended))).returning({ id: sessions.id }));
    }
  }
}

/**
 * One retention pass over every log: batches until a log has no more to let go of (or
 * `maxBatches` per log), with `pause` between two batches so that writers waiting get in.
 * Answers the rows deleted per log.
 */
export async function runRetention(
  ctx: ReadContext,
  input: { policy: RetentionPolicy; batch: number; maxBatches?: number; pause?: () => Promise<void> },
): Promise<Record<RetentionLog, number>> {
  const deleted = Object.fromEntries(RETENTION_LOGS.map((l) => [l, 0])) as Record<RetentionLog, number>;
  for (const log of RETENTION_LOGS) {
    for (let i = 0; i < (input.maxBatches ?? Infinity); i++) {
      const n = await deleteExpiredBatch(ctx, { log, policy: input.policy, batch: input.batch });
      deleted[log] += n;
      if (n < input.batch) break;
      await input.pause?.();
    }
  }
  return deleted;
}
