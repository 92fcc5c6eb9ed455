import { z } from "zod";
import { notFound } from "../../domain/core/errors.ts";
import { listJobs, queueDepth, retryDeadJob } from "../../domain/plumbing/jobs.ts";
import { JOB_STATUSES } from "../../domain/views/job.ts";
import { router, secretProcedure } from "../trpc.ts";

/** The background queue of the caller's organization, for operators (tRPC). */
export const jobsRouter = router({
  stats: secretProcedure.query(({ ctx }) => queueDepth(ctx.domain, { orgId: ctx.domain.orgId })),
  // Admins only: a job's payload names the report or case it works on, of any queue.
  list: secretProcedure
    .meta({ role: "admin" })
    .input(z.object({ status: z.enum(JOB_STATUSES).optional(), kind: z.string().max(64).optional(), limit: z.number().int().min(1).max(100).default(50) }))
    .query(async ({ ctx, input }) => ({ jobs: await listJobs(ctx.domain, input) })),
  retry: secretProcedure.meta({ role: "admin" }).input(z.object({ jobId: z.string().min(1).max(64) })).mutation(async ({ ctx, input }) => {
    // The job is back in line when this commits, and the workers are woken then.
    if (!(await retryDeadJob(ctx.domain, input.jobId))) throw notFound("No dead or skipped job with that id");
    return { ok: true as const };
  }),
});
