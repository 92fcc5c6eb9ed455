import { z } from "zod";
import { notFound } from "../../domain/errors.ts";
import { listJobs, queueDepth, retryDeadJob } from "../../jobs/queue.ts";
import { router, secretProcedure } from "../trpc.ts";

/** The background queue of the caller's organization, for operators (tRPC). */
export const jobsRouter = router({
  stats: secretProcedure.query(({ ctx }) => queueDepth(ctx.db, ctx.caller.orgId)),
  list: secretProcedure
    .input(z.object({ status: z.enum(["pending", "running", "done", "dead"]).optional(), kind: z.string().max(64).optional(), limit: z.number().int().min(1).max(100).default(50) }))
    .query(({ ctx, input }) => ({ jobs: listJobs(ctx.db, { ...input, orgId: ctx.caller.orgId }) })),
  retry: secretProcedure.meta({ role: "admin" }).input(z.object({ jobId: z.string().min(1).max(64) })).mutation(({ ctx, input }) => {
    if (!retryDeadJob(ctx.db, ctx.clock.now(), ctx.caller.orgId, input.jobId)) throw notFound("No dead job with that id");
    ctx.jobs.wake();
    return { ok: true as const };
  }),
});
