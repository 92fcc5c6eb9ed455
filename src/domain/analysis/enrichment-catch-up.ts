/**
 * Skipped enrichment caught up (docs/ai.md, "When the model is too slow"). The enrichment lane
 * sheds its least urgent jobs past its backlog bound (src/domain/plumbing/backlog-rules.ts);
 * a pass on one instance (src/jobs/enrichment-jobs.ts) takes them again, most urgent first,
 * whenever the lane has room, and marks expired, with the reason, those skipped for longer than
 * FLAGSTAFF_ENRICH_CATCH_UP_MS. An admin puts expired ones back into the catch-up, in bulk: a
 * project's, of a reason, filed in a time range.
 */
import { and, eq, exists, gte, inArray, lt, sql } from "drizzle-orm";
import { jobs, reportReasons, reports } from "../../db/schema.ts";
import { rowLockedTransaction, type DomainContext, type ReadContext } from "../core/context.ts";
import { badRequest } from "../core/errors.ts";
import { requireProject } from "../accounts/projects.ts";
import { resolveProjectReasons } from "../categories/categories.ts";
import { catchUpCount, catchUpRoom } from "../plumbing/backlog-rules.ts";
import { expireSkipped, pendingUpTo, requeueSkipped } from "../plumbing/jobs.ts";
import { JOB_KIND } from "../views/job.ts";
import { countEnrichments } from "./model-meter.ts";

/** Rows a statement of the pass or of a bulk retry touches at most (each its own short transaction). */
const BATCH = 1_000;

const duration = (ms: number): string =>
  ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;

/** The lastError of an expired enrichment. */
export const expiredReason = (maxAgeMs: number): string =>
  `expired: skipped (the enrichment lane was past its backlog bound) and not caught up within ${duration(maxAgeMs)} (FLAGSTAFF_ENRICH_CATCH_UP_MS); an admin may retry it in bulk`;

/**
 * One pass: the skipped enrichments older than `maxAgeMs` expire (in batches, until none is
 * left), then, when fewer than the lane's room (a tenth of its bound) wait, that many skipped
 * ones are queued again, most urgent first. Answers what it did, and whether the lane had room
 * left after it (then no skipped one was left to take).
 */
export async function catchUpEnrichments(ctx: ReadContext, input: { bound: number; maxAgeMs: number }): Promise<{ expired: number; requeued: number; roomLeft: boolean }> {
  const kind = JOB_KIND.enrich;
  const skippedBefore = ctx.clock.now() - input.maxAgeMs;
  const reason = expiredReason(input.maxAgeMs);
  let expired = 0;
  for (let n = BATCH; n === BATCH; expired += n) n = await expireSkipped(ctx, { kind, skippedBefore, reason, limit: BATCH });
  const pending = await pendingUpTo(ctx, { kind, upTo: catchUpRoom(input.bound) });
  const room = Math.min(BATCH, catchUpCount({ bound: input.bound, pending }));
  const requeued = await requeueSkipped(ctx, { kind, limit: room });
  if (expired) countEnrichments(ctx.store, "expired", expired);
  if (requeued) countEnrichments(ctx.store, "caught_up", requeued);
  return { expired, requeued, roomLeft: requeued < room };
}

/** What a bulk retry of expired enrichments takes: a project's, of one reason, filed in [from, to). */
export interface ExpiredRetryInput {
  projectId: string;
  /** A category name of the project (matched as report reasons are); all reasons when absent. */
  reason?: string;
  /** Reports filed from (inclusive) and before (exclusive), ms since the epoch. */
  from?: number;
  to?: number;
}

/**
 * Puts the expired enrichments of a project's reports (of a reason, filed in a time range) back
 * into the catch-up: skipped again, as of now, so that the catch-up takes them as the lane has
 * room, most urgent first, and they expire again only after another FLAGSTAFF_ENRICH_CATCH_UP_MS.
 * In batches, each a transaction of its own. Answers how many.
 */
export async function retryExpiredEnrichments(ctx: DomainContext, input: ExpiredRetryInput): Promise<{ retried: number }> {
  const project = await requireProject(ctx, input.projectId);
  const { from, to } = input;
  if (from !== undefined && to !== undefined && from >= to) throw badRequest("from must be before to");
  const [category] = input.reason === undefined ? [] : await resolveProjectReasons(ctx, project, [input.reason]);
  const reason = category?.name;
  let retried = 0;
  for (;;) {
    const n = await rowLockedTransaction(ctx, async () => {
      const now = ctx.clock.now();
      const batch = ctx.db
        .select({ id: jobs.id })
        .from(jobs)
        .innerJoin(reports, eq(reports.id, jobs.entityId))
        .where(
          and(
            eq(jobs.kind, JOB_KIND.enrich),
            eq(jobs.status, "expired"),
            eq(jobs.orgId, ctx.orgId),
            eq(reports.projectId, project.id),
            from === undefined ? undefined : gte(jobs.createdAt, from),
            to === undefined ? undefined : lt(jobs.createdAt, to),
            reason === undefined
              ? undefined
              : exists(ctx.db.select({ one: sql`1` }).from(reportReasons).where(and(eq(reportReasons.reportId, reports.id), eq(reportReasons.name, reason)))),
          ),
        )
        .limit(BATCH);
      const rows = await ctx.db
        .update(jobs)
        .set({ status: "skipped", runAt: now, lastError: "skipped: an expired enrichment retried by an admin; it is taken again once the lane has room", updatedAt: now })
        .where(and(inArray(jobs.id, batch), eq(jobs.status, "expired")))
        .returning({ id: jobs.id });
      return rows.length;
    });
    retried += n;
    if (n < BATCH) return { retried };
  }
}
