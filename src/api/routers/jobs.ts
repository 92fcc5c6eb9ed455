import { z } from "zod";
import { notFound } from "../../domain/errors.ts";
import { listJobs, queueDepth, retryDeadJob } from "../../jobs/queue.ts";
import { router, secretProcedure } from "../trpc.ts";

/**
 * The background queue, for operators (tRPC). Jobs carry no organization: they are an
 * installation-wide concern, like the database itself.
 */
export const jobsRouter = router({
  stats: secretProcedure.query(({ ctx }) => queueDepth(ctx.db)),
  list: secretProcedure
    .input(z.object({ status: z.enum(["pending", "running", "done", "dead"]).optional(), kind: z.string().max(64).optional(), limit: z.number().int().min(1).max(100).default(50) }))
    .query(({ ctx, input }) => ({ jobs: listJobs(ctx.db, input) })),
  retry: secretProcedure.meta({ role: "admin" }).input(z.object({ jobId: z.string().min(1).max(64) })).mutation(({ ctx, input }) => {
    if (!retryDeadJob(ctx.db, ctx.clock.now(), input.jobId)) throw notFound("No dead job with that id");
    ctx.jobs.wake();
    return { ok: true as const };
  }),
});
