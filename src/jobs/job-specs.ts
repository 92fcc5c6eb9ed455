/**
 * Every kind of background job with what goes with it, in one record the compiler keeps whole
 * (JOB_SPECS): its handler, its lane's slots, its backlog bound and how long its finished jobs
 * are kept. The worker pool (its lanes and their slots, src/commands/serve.ts), the backlog
 * bounds (src/domain/plumbing/jobs.ts), the lane gauges of /metrics (one per lane of the pool)
 * and the retention pass's deletion of finished jobs (src/jobs/retention.ts) all derive from
 * it. A new kind is its name in JOB_KIND (src/domain/views/job.ts) and its entry here, which
 * the compiler asks for (docs/architecture.md, "Add a job kind").
 */
import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Config } from "../config.ts";
import { reports } from "../db/schema.ts";
import { enrichReport } from "../domain/analysis/enrichment.ts";
import { linkScanPayloadSchema } from "../domain/analysis/scan-job.ts";
import { runLinkScan } from "../domain/analysis/scan.ts";
import { shadowPayloadSchema } from "../domain/analysis/shadow-job.ts";
import { runShadowAnalysis } from "../domain/analysis/shadow.ts";
import { runSubmissionJob } from "../domain/dsa/transparency-submission.ts";
import { makeAttachmentPreview } from "../domain/attachments/attachments.ts";
import { processMedia } from "../domain/banks/matching.ts";
import { checkPastMedia } from "../domain/banks/past-check.ts";
import { PROJECT_DELETION } from "../domain/accounts/project-deletion.ts";
import { BANK_DELETION } from "../domain/banks/bank-deletion.ts";
import { deleteNextSlice, slicePayload, type SlicedDeletion } from "../domain/plumbing/sliced-deletion.ts";
import { takeLadderStep } from "../domain/enforcement/strike-ladder.ts";
import { workEvalRun } from "../domain/evaluation/runs.ts";
import { KEPT_PRIORITY_MAX } from "../domain/views/enrichment-order.ts";
import type { JobRow, LaneBound } from "../domain/plumbing/jobs.ts";
import { JOB_KIND, JOB_KINDS, type JobKind } from "../domain/views/job.ts";
import { deliveryOrgId, runDeliveryJob } from "../domain/webhooks/delivery.ts";
import { resolveFfmpeg } from "../domain/media/video-frames.ts";
import { jobContext, type JobDeps } from "./context.ts";
import type { JobHandler, WorkerLane } from "./worker.ts";

/** How long the finished jobs of a kind are kept, in ms (0: forever). */
export interface JobRetention {
  /** Done and skipped jobs, from when they finished. */
  doneMs: number;
  /** Dead jobs (their attempts ran out), from when they died, and expired ones (shed work not caught up in time). */
  deadMs: number;
}

/** What Flagstaff knows about one kind of background job besides its name. */
export interface JobSpec {
  /**
   * Runs one job of the kind: reads its payload, calls the domain function, and throws to have
   * it retried (with backoff, or when RetryLater says).
   */
  handle: (deps: JobDeps, payload: unknown, job: JobRow) => Promise<void>;
  /** Jobs of the kind one process runs at once: its lane's slots (FLAGSTAFF_*_CONCURRENCY). */
  slots: (config: Config) => number;
  /**
   * Optional work only: the pending jobs past which the lane sheds the job it would take last
   * (its least urgent, src/domain/plumbing/backlog-rules.ts), written as skipped with the reason
   * (0: never); null for work that is never shed.
   */
  backlogBound: ((config: Config) => number) | null;
  /** A lane that ranks its jobs: those of this priority or a more urgent one are never shed (they wait). */
  keptPriority?: number;
  /** How long its finished jobs are kept before the retention pass deletes them. */
  retention: (config: Config) => JobRetention;
}

/** The operator's retention of finished jobs: FLAGSTAFF_RETENTION_JOBS_MS, and FLAGSTAFF_RETENTION_DEAD_JOBS_MS for dead ones. */
const CONFIGURED_RETENTION = (config: Config): JobRetention => ({ doneMs: config.retention.jobsMs, deadMs: config.retention.deadJobsMs });
/** The lanes without a setting of their own: FLAGSTAFF_JOB_CONCURRENCY. */
const SHARED_SLOTS = (config: Config): number => config.jobs.concurrency;

const reportPayload = z.object({ reportId: z.string() });
const evalRunPayload = z.object({ runId: z.string() });
const deliveryPayload = z.object({ deliveryId: z.string() });
const strikePayload = z.object({ strikeId: z.string() });
const submitPayload = z.object({ orgId: z.string() });
const previewPayload = z.object({ blobId: z.string() });
const mediaPayload = z.object({ mediaId: z.string() });
// `settled`: the check's first batch, once the reports in flight when it was added have settled (past-check.ts).
const pastCheckPayload = z.object({ additionId: z.string(), after: z.string().nullable(), settled: z.boolean().optional() });

/**
 * The organization of an enrichment job. Jobs enqueued before jobs carried one (migration 0007)
 * have none: the report names it (none when the report is gone: nothing to enrich).
 */
async function enrichOrgId(deps: JobDeps, job: JobRow, reportId: string): Promise<string | null> {
  if (job.orgId !== null) return job.orgId;
  const [report] = await deps.store.db.select({ orgId: reports.orgId }).from(reports).where(eq(reports.id, reportId)).limit(1);
  return report?.orgId ?? null;
}

/**
 * Every job kind with its handler, lane and retention. Deliveries and AI work never share slots,
 * so a slow model delays enrichment only, and a ban's webhook is claimed by its own lane.
 */
export const JOB_SPECS = {
  [JOB_KIND.enrich]: {
    handle: async (deps, payload, job) => {
      const { reportId } = reportPayload.parse(payload);
      const orgId = await enrichOrgId(deps, job, reportId);
      if (orgId === null) return;
      await enrichReport({ ...jobContext(deps, orgId), config: deps.config, onAiCall: deps.onAiCall }, reportId);
    },
    slots: (config) => config.laneSlots.enrichment,
    // Backpressure sheds enrichment, the least urgent first, never the report that asked for it;
    // a report of the emergency class is never shed (src/domain/views/enrichment-order.ts).
    backlogBound: (config) => config.enrichBacklogMax,
    keptPriority: KEPT_PRIORITY_MAX,
    retention: CONFIGURED_RETENTION,
  },
  [JOB_KIND.shadowAnalysis]: {
    // Never before live work: it waits while enrichment jobs are due (runShadowAnalysis).
    handle: async (deps, payload, job) => {
      const { analysisId } = shadowPayloadSchema.parse(payload);
      if (job.orgId === null) return;
      await runShadowAnalysis({ ...jobContext(deps, job.orgId), config: deps.config, onAiCall: deps.onAiCall }, { analysisId, lastAttempt: job.attempts >= job.maxAttempts });
    },
    // One slot: shadow analyses are a sample for comparison, and the model's time is live work's.
    slots: () => 1,
    // A sample for comparison, never a backlog.
    backlogBound: () => 1_000,
    retention: CONFIGURED_RETENTION,
  },
  [JOB_KIND.linkScan]: {
    handle: async (deps, payload, job) => {
      const p = linkScanPayloadSchema.parse(payload);
      const { config, onAiCall } = deps;
      await runLinkScan({ ...jobContext(deps, job.orgId ?? p.orgId), config, onAiCall, allowPrivate: config.scanAllowPrivate, timeoutMs: config.scanTimeoutMs }, p);
    },
    slots: (config) => config.laneSlots.linkScans,
    backlogBound: null,
    retention: CONFIGURED_RETENTION,
  },
  [JOB_KIND.evalRun]: {
    handle: async (deps, payload, job) => {
      const { runId } = evalRunPayload.parse(payload);
      const { config, onAiCall } = deps;
      // The run names its organization; a job works for a quarter of its lease, then hands on.
      await workEvalRun({ ...jobContext(deps, job.orgId ?? ""), config, onAiCall, budgetMs: config.jobs.leaseMs / 4, lastAttempt: job.attempts >= job.maxAttempts }, runId);
    },
    slots: (config) => config.laneSlots.evaluation,
    backlogBound: null,
    retention: CONFIGURED_RETENTION,
  },
  [JOB_KIND.webhookDelivery]: {
    handle: async (deps, payload, job) => {
      const { deliveryId } = deliveryPayload.parse(payload);
      // Jobs enqueued before jobs carried an organization (migration 0007): the delivery names it.
      const orgId = job.orgId ?? (await deliveryOrgId({ db: deps.store.db }, deliveryId));
      if (orgId === null) return; // gone with its endpoint: nothing to send
      await runDeliveryJob({ ...jobContext(deps, orgId), config: deps.config }, { deliveryId, job });
    },
    slots: (config) => config.laneSlots.webhooks,
    backlogBound: null,
    retention: CONFIGURED_RETENTION,
  },
  [JOB_KIND.strikeStep]: {
    // A strike policy's ladder step, reached by a decision (src/domain/enforcement/strike-ladder.ts).
    handle: async (deps, payload, job) => {
      const { strikeId } = strikePayload.parse(payload);
      if (job.orgId !== null) await takeLadderStep(jobContext(deps, job.orgId), { strikeId });
    },
    slots: SHARED_SLOTS,
    backlogBound: null,
    retention: CONFIGURED_RETENTION,
  },
  [JOB_KIND.transparencySubmit]: {
    // An organization's submission run: one job row per organization (scheduleSubmission).
    handle: async (deps, payload, job) => {
      const { orgId } = submitPayload.parse(payload);
      await runSubmissionJob({ ...jobContext(deps, job.orgId ?? orgId), config: deps.config });
    },
    slots: SHARED_SLOTS,
    backlogBound: null,
    retention: CONFIGURED_RETENTION,
  },
  [JOB_KIND.attachmentPreview]: {
    // Decoding runs on the preview thread: the lane bounds how many images are in memory at once.
    handle: async (deps, payload, job) => {
      const { blobId } = previewPayload.parse(payload);
      if (job.orgId === null) return;
      const { maxPixels, previewPx } = deps.config.attachments;
      await makeAttachmentPreview(jobContext(deps, job.orgId), { blobId, maxPixels, maxSide: previewPx });
    },
    slots: (config) => config.laneSlots.previews,
    backlogBound: null,
    retention: CONFIGURED_RETENTION,
  },
  [JOB_KIND.mediaMatch]: {
    // A URL fetched with the link scanner's safeguards and hashed on the preview thread; then matched against the project's banks.
    handle: async (deps, payload, job) => {
      const { mediaId } = mediaPayload.parse(payload);
      if (job.orgId === null) return;
      const { config } = deps;
      const { maxBytes, perCase, orgBytes, maxPixels, orphanMs } = config.attachments;
      await processMedia(jobContext(deps, job.orgId), {
        mediaId,
        allowPrivate: config.scanAllowPrivate,
        timeoutMs: config.scanTimeoutMs,
        attachmentLimits: { maxBytes, perCase, orgBytes, maxPixels, orphanMs },
        video: { ...config.video, ffmpegPath: resolveFfmpeg(config.video.ffmpegPath) },
      });
    },
    slots: (config) => config.laneSlots.previews,
    backlogBound: null,
    retention: CONFIGURED_RETENTION,
  },
  [JOB_KIND.mediaPastCheck]: {
    // One batch of a project's past media checked against an addition's entries; the next batch is the next job (its cursor persisted with it).
    handle: async (deps, payload, job) => {
      const { additionId, after, settled } = pastCheckPayload.parse(payload);
      if (job.orgId === null) return;
      await checkPastMedia(jobContext(deps, job.orgId), { additionId, after, settled, ...deps.config.mediaCheck });
    },
    // One slot: checks take turns a batch at a time, and never hold the media jobs of new reports.
    slots: () => 1,
    // Never shed: a check's cursor is its progress. Its backlog is bounded by construction: one
    // job per addition being checked, and entries added one by one or imported while a check of
    // their bank waits join it (src/domain/banks/banks.ts, entriesAddition).
    backlogBound: null,
    retention: CONFIGURED_RETENTION,
  },
  // A slice of a deleted project's rows, and of a deleted bank's entries (slicedDeletion, below).
  [JOB_KIND.projectDelete]: slicedDeletion(PROJECT_DELETION),
  [JOB_KIND.bankDelete]: slicedDeletion(BANK_DELETION),
} as const satisfies { readonly [K in JobKind]: JobSpec };

/**
 * The lane of a deletion by slices (src/domain/plumbing/sliced-deletion.ts): a job runs one slice,
 * in a transaction of its own, and the next slice is the next job.
 */
function slicedDeletion(d: SlicedDeletion): JobSpec {
  return {
    handle: async (deps, payload, job) => {
      if (job.orgId === null) return;
      await deleteNextSlice(jobContext(deps, job.orgId), d, slicePayload(d, payload));
    },
    // One slot: slices take turns with every other writer, one at a time.
    slots: () => 1,
    // Never shed: what was deleted must go. One job per owner being deleted at a time.
    backlogBound: null,
    retention: CONFIGURED_RETENTION,
  };
}

/** The spec of a kind, typed as the interface (the record itself keeps its literal types). */
const specOf = (kind: JobKind): JobSpec => JOB_SPECS[kind];

/** One lane per job kind, each with its handler and its slots: what the worker pool runs (startWorkers). */
export function jobLanes(deps: JobDeps): Record<JobKind, WorkerLane> {
  const lane = (kind: JobKind): WorkerLane => {
    const spec = specOf(kind);
    const handler: JobHandler = (payload, job) => spec.handle(deps, payload, job);
    return { handler, slots: spec.slots(deps.config) };
  };
  return Object.fromEntries(JOB_KINDS.map((kind) => [kind, lane(kind)])) as Record<JobKind, WorkerLane>;
}

/** The backlog rules of each kind of optional work (setBacklogBounds; a bound of 0: none). */
export function backlogBounds(config: Config): Partial<Record<JobKind, LaneBound>> {
  return Object.fromEntries(JOB_KINDS.flatMap((kind) => {
    const spec = specOf(kind);
    return spec.backlogBound === null ? [] : [[kind, { bound: spec.backlogBound(config), keptUpTo: spec.keptPriority ?? null }]];
  }));
}

/** How long each kind's finished jobs are kept (the retention pass, src/jobs/retention.ts). */
export function jobRetention(config: Config): Record<JobKind, JobRetention> {
  return Object.fromEntries(JOB_KINDS.map((kind) => [kind, specOf(kind).retention(config)])) as Record<JobKind, JobRetention>;
}
