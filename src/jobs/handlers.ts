import { eq } from "drizzle-orm";
import { z } from "zod";
import { reports } from "../db/schema.ts";
import { enrichReport } from "../domain/analysis/analysis.ts";
import { LINK_SCAN_JOB, linkScanPayloadSchema } from "../domain/analysis/scan-job.ts";
import { runLinkScan } from "../domain/analysis/scan.ts";
import { ENRICH_JOB } from "../domain/intake/reports.ts";
import { EVAL_RUN_JOB, workEvalRun } from "../domain/evaluation/runs.ts";
import { jobContext, type JobDeps } from "./context.ts";
import { enforcementJobHandlers } from "./enforcement-jobs.ts";
import { transparencyJobHandlers } from "./transparency-jobs.ts";
import type { JobRow } from "../domain/plumbing/jobs.ts";
import { DELIVER_JOB } from "../domain/webhooks/outbox.ts";
import type { Config } from "../config.ts";
import type { JobHandler } from "./worker.ts";

const reportPayload = z.object({ reportId: z.string() });
const evalRunPayload = z.object({ runId: z.string() });

/**
 * The organization of an enrichment job. Jobs enqueued before jobs carried one (migration 0007)
 * have none: the report names it (none when the report is gone: nothing to enrich).
 */
async function enrichOrgId(deps: JobDeps, job: JobRow, reportId: string): Promise<string | null> {
  if (job.orgId !== null) return job.orgId;
  const [report] = await deps.store.db.select({ orgId: reports.orgId }).from(reports).where(eq(reports.id, reportId)).limit(1);
  return report?.orgId ?? null;
}

/** Every kind of background job this process knows how to run. */
export function jobHandlers(deps: JobDeps): Record<string, JobHandler> {
  const { config, onAiCall } = deps;
  return {
    ...enforcementJobHandlers(deps),
    ...transparencyJobHandlers(deps),
    [ENRICH_JOB]: async (payload, job) => {
      const { reportId } = reportPayload.parse(payload);
      const orgId = await enrichOrgId(deps, job, reportId);
      if (orgId === null) return;
      await enrichReport({ ...jobContext(deps, orgId), config, onAiCall }, reportId);
    },
    [EVAL_RUN_JOB]: async (payload, job) => {
      const { runId } = evalRunPayload.parse(payload);
      // The run names its organization; a job works for a quarter of its lease, then hands on.
      await workEvalRun({ ...jobContext(deps, job.orgId ?? ""), config, onAiCall, budgetMs: config.jobs.leaseMs / 4, lastAttempt: job.attempts >= job.maxAttempts }, runId);
    },
    [LINK_SCAN_JOB]: async (payload, job) => {
      const p = linkScanPayloadSchema.parse(payload);
      const ctx = { ...jobContext(deps, job.orgId ?? p.orgId), config, onAiCall, allowPrivate: config.scanAllowPrivate, timeoutMs: config.scanTimeoutMs };
      await runLinkScan(ctx, p);
    },
  };
}

/**
 * The slots of the lanes that have a setting of their own (every other kind gets
 * FLAGSTAFF_JOB_CONCURRENCY): deliveries and AI work never share slots, so a slow model delays
 * enrichment only.
 */
export function laneSlots(config: Pick<Config, "laneSlots">): Record<string, number> {
  return {
    [DELIVER_JOB]: config.laneSlots.webhooks,
    [ENRICH_JOB]: config.laneSlots.enrichment,
    [LINK_SCAN_JOB]: config.laneSlots.linkScans,
    [EVAL_RUN_JOB]: config.laneSlots.evaluation,
  };
}

/** The optional work shed past a backlog bound: AI enrichment (never the report that asked for it). */
export function backlogBounds(config: Pick<Config, "enrichBacklogMax">): Record<string, number> {
  return { [ENRICH_JOB]: config.enrichBacklogMax };
}
