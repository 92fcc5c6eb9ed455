import type { Store } from "../db/store.ts";
import type { Clock } from "../domain/core/clock.ts";
import type { ReadContext } from "../domain/core/context.ts";
import { newId } from "../domain/core/ids.ts";
import { errorFields, log } from "../log.ts";
import { RetryLater } from "../domain/core/errors.ts";
import { backoffMs } from "./backoff.ts";
import {
  claimJobs,
  completeJobs,
  failJob,
  nextDueAt,
  nextLeaseEnd,
  reclaimExpiredLeases,
  refreshBacklogs,
  releaseLeases,
  takeEnqueuedKinds,
  type JobRow,
} from "../domain/plumbing/jobs.ts";

export type JobHandler = (payload: unknown, job: JobRow) => Promise<void>;

/** A lane: the jobs of one kind, run by its handler, so many at once (JOB_SPECS, src/jobs/job-specs.ts). */
export interface WorkerLane {
  handler: JobHandler;
  slots: number;
}

export interface WorkerOptions {
  leaseMs: number;
  /** Longest sleep between looks at the table when nothing is due. */
  pollMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** Told the kind, outcome and duration of every job run (metrics). */
  onJobRun?: (kind: string, outcome: JobOutcome, ms: number) => void;
}

export type JobOutcome = "ok" | "retry" | "dead";

/** What a lane's workers know of it (metrics, the drain estimate). */
export interface LaneInfo {
  lane: string;
  slots: number;
  running: number;
  /** Mean time a job of the lane has taken lately (exponentially weighted), null before the first. */
  meanRunMs: number | null;
}

export interface WorkerPool {
  /** Look at the queue now (the store calls it once a transaction that enqueued jobs commits). */
  wake(): void;
  /** Stop taking jobs, wait for those running (up to `graceMs`), give back any still leased. */
  drain(graceMs: number): Promise<void>;
  readonly running: number;
  lanes(): LaneInfo[];
}

/** Jobs whose lease ended taken back per transaction. */
const RECLAIM_BATCH = 100;
/** How often each optional lane's backlog is counted for its bound (src/domain/plumbing/jobs.ts). */
const BACKLOG_REFRESH_MS = 1_000;
/** Weight of the newest run in a lane's mean run time. */
const MEAN_WEIGHT = 0.05;

/**
 * Runs jobs from the durable queue, one lane per job kind, each lane with its own slots: a lane
 * claims only its own kind (a range of the claim index), so a backlog of AI enrichment never
 * delays a webhook delivery, and however long the backlog, a claim costs the same. A lane with
 * free slots claims as many due jobs as it has free slots in one statement; completions of the
 * same turn of the event loop are written together. A job whose handler throws is retried with
 * exponential backoff and jitter until its attempts run out, then it is dead (visible through
 * tRPC). Jobs whose worker died are taken back by a separate pass over the lease index. The pool
 * registers with the store: a transaction that enqueued jobs wakes it when it commits.
 */
export function startWorkers(store: Store, clock: Clock, lanesByKind: Record<string, WorkerLane>, opts: WorkerOptions): WorkerPool {
  const ctx: ReadContext = { store, db: store.db, clock };
  const workerId = `w-${newId()}`;
  let stopping = false;
  const inFlight = new Set<Promise<void>>();

  // Completions of one turn of the event loop: one UPDATE for all of them.
  let completed: string[] = [];
  let flushing: Promise<void> | null = null;
  function complete(id: string): Promise<void> {
    completed.push(id);
    flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      const ids = completed;
      completed = [];
      flushing = null;
      // A failed write leaves the jobs leased: their lease ends and they run again (at least once).
      await completeJobs(ctx, { ids, workerId });
    });
    return flushing;
  }

  const lanes = Object.entries(lanesByKind).map(([kind, { handler, slots }]) => lane(kind, handler, slots));

  function lane(kind: string, handler: JobHandler, slots: number) {
    let running = 0;
    let meanRunMs: number | null = null;
    let timer: ReturnType<typeof setTimeout> | null = null;
    /** The pass over the lane under way: one at a time, or two could both take the last free slot. */
    let pumping: Promise<void> | null = null;
    /** Asked to look again while a pass was under way. */
    let again = false;
    /**
     * The last claim took as many jobs as it asked for: more are likely due, so the next claim
     * goes without the read that looks first (one round trip less per job while the lane is busy).
     */
    let busy = false;

    function schedule(delayMs: number): void {
      if (stopping) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(pump, Math.max(0, delayMs));
    }

    function pump(): void {
      timer = null;
      if (pumping) {
        again = true;
        return;
      }
      pumping = pass().finally(() => {
        pumping = null;
        if (again) {
          again = false;
          schedule(0);
        }
      });
    }

    async function pass(): Promise<void> {
      while (!stopping && running < slots) {
        let due: number | null;
        let claimed: JobRow[];
        const asked = slots - running;
        try {
          // A read first: an idle lane (or one whose next job is a retry later on) costs no write.
          if (!busy) {
            due = await nextDueAt(ctx, kind);
            if (due === null || due > clock.now()) {
              schedule(due === null ? opts.pollMs : Math.min(opts.pollMs, Math.max(due - clock.now(), 5)));
              return;
            }
          }
          claimed = await claimJobs(ctx, { kind, workerId, leaseMs: opts.leaseMs, limit: asked });
        } catch (err) {
          busy = false;
          log.error("job claim failed", { kind, ...errorFields(err) });
          break;
        }
        busy = claimed.length === asked;
        // None taken: none due any more, or another instance's claims hold them. Look again shortly.
        if (claimed.length === 0) break;
        for (const job of claimed) {
          running++;
          const p = run(job).finally(() => {
            running--;
            inFlight.delete(p);
            schedule(0);
          });
          inFlight.add(p);
        }
      }
      if (!stopping && running < slots) schedule(Math.min(opts.pollMs, 50));
    }

    async function run(job: JobRow): Promise<void> {
      const started = performance.now();
      const took = () => {
        const ms = performance.now() - started;
        meanRunMs = meanRunMs === null ? ms : meanRunMs + MEAN_WEIGHT * (ms - meanRunMs);
        return ms;
      };
      try {
        await handler(JSON.parse(job.payload), job);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        const delay = err instanceof RetryLater ? err.delayMs : backoffMs(job.attempts, opts.backoffBaseMs, opts.backoffCapMs);
        try {
          const status = await failJob(ctx, { job, workerId, error: message, retryAt: clock.now() + delay });
          opts.onJobRun?.(job.kind, status === "dead" ? "dead" : "retry", took());
          (status === "dead" ? log.error : log.warn)("job failed", { jobId: job.id, kind: job.kind, attempt: job.attempts, status, error: message });
        } catch (failErr) {
          // The lease runs out and the job is claimed again.
          log.error("recording a job failure failed", { jobId: job.id, kind: job.kind, jobError: message, ...errorFields(failErr) });
        }
        return;
      }
      // The slot is free once the handler is done: the completion is written (with the others
      // of this turn of the event loop) while the lane claims its next job.
      const ms = took();
      const recorded = complete(job.id).then(
        () => opts.onJobRun?.(job.kind, "ok", ms),
        (err) => log.error("recording a job done failed", { jobId: job.id, kind: job.kind, ...errorFields(err) }),
      );
      inFlight.add(recorded);
      void recorded.finally(() => inFlight.delete(recorded));
    }

    return {
      kind,
      slots,
      wake: () => schedule(0),
      stop() {
        if (timer) clearTimeout(timer);
      },
      /** A pass under way may still be claiming jobs: let it finish, so they are waited for too. */
      settled: () => pumping ?? Promise.resolve(),
      info: (): LaneInfo => ({ lane: kind, slots, running, meanRunMs }),
    };
  }

  // Jobs whose lease ended (their worker died): made pending again by a pass of their own, at
  // the first lease end and at least every poll interval.
  let reclaimTimer: ReturnType<typeof setTimeout> | null = null;
  async function reclaim(): Promise<void> {
    reclaimTimer = null;
    if (stopping) return;
    let wait = opts.pollMs;
    try {
      let taken = 0;
      for (let n = await reclaimExpiredLeases(ctx, { limit: RECLAIM_BATCH }); n > 0; n = n < RECLAIM_BATCH ? 0 : await reclaimExpiredLeases(ctx, { limit: RECLAIM_BATCH })) {
        taken += n;
      }
      if (taken > 0) {
        log.warn("jobs whose lease ended taken back", { count: taken });
        wakeAll();
      }
      const next = await nextLeaseEnd(ctx);
      if (next !== null) wait = Math.min(wait, next - clock.now() + 1);
    } catch (err) {
      log.error("taking back expired job leases failed", errorFields(err));
    }
    if (!stopping) reclaimTimer = setTimeout(() => void reclaim(), Math.max(wait, 5));
  }

  let backlogTimer: ReturnType<typeof setInterval> | null = setInterval(() => {
    refreshBacklogs(ctx).catch((err) => log.error("counting the job backlog failed", errorFields(err)));
  }, BACKLOG_REFRESH_MS);

  function wakeAll(): void {
    for (const l of lanes) l.wake();
  }

  void refreshBacklogs(ctx).catch((err) => log.error("counting the job backlog failed", errorFields(err)));
  // After a commit that enqueued jobs: the lanes of their kinds look (every lane when unknown).
  store.onJobsEnqueued(() => {
    const kinds = takeEnqueuedKinds(store);
    if (kinds.length === 0) return wakeAll();
    for (const l of lanes) if (kinds.includes(l.kind)) l.wake();
  });
  wakeAll();
  void reclaim();
  return {
    wake: wakeAll,
    get running() {
      return lanes.reduce((sum, l) => sum + l.info().running, 0);
    },
    lanes: () => lanes.map((l) => l.info()),
    async drain(graceMs) {
      stopping = true;
      for (const l of lanes) l.stop();
      if (reclaimTimer) clearTimeout(reclaimTimer);
      if (backlogTimer) clearInterval(backlogTimer);
      backlogTimer = null;
      await Promise.all(lanes.map((l) => l.settled()));
      await Promise.race([Promise.allSettled([...inFlight]), Bun.sleep(graceMs)]);
      if (flushing) await flushing.catch(() => {});
      const released = await releaseLeases(ctx, { workerId });
      if (released) log.info("released job leases", { released });
    },
  };
}
