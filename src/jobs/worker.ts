import type { Store } from "../db/store.ts";
import type { Clock } from "../domain/clock.ts";
import type { ReadContext } from "../domain/context.ts";
import { newId } from "../domain/ids.ts";
import { errorFields, log } from "../log.ts";
import { RetryLater } from "../domain/errors.ts";
import { backoffMs } from "./backoff.ts";
import { claimJob, completeJob, failJob, nextDueAt, releaseLeases, type JobRow } from "../domain/jobs.ts";


export type JobHandler = (payload: unknown, job: JobRow) => Promise<void>;

export interface WorkerOptions {
  concurrency: number;
  leaseMs: number;
  /** Longest sleep between looks at the table when nothing is due. */
  pollMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** Told the kind, outcome and duration of every job run (metrics). */
  onJobRun?: (kind: string, outcome: JobOutcome, ms: number) => void;
}

export type JobOutcome = "ok" | "retry" | "dead";

export interface WorkerPool {
  /** Look at the queue now (the store calls it once a transaction that enqueued jobs commits). */
  wake(): void;
  /** Stop taking jobs, wait for those running (up to `graceMs`), give back any still leased. */
  drain(graceMs: number): Promise<void>;
  readonly running: number;
}

/**
 * Runs jobs from the durable queue with a fixed number of concurrent slots. Each slot claims
 * one job at a time under a lease; a job whose handler throws is retried with exponential
 * backoff and jitter until its attempts run out, then it is dead (visible through tRPC). The
 * pool registers with the store: a transaction that enqueued jobs wakes it when it commits.
 */
export function startWorkers(store: Store, clock: Clock, handlers: Record<string, JobHandler>, opts: WorkerOptions): WorkerPool {
  const ctx: ReadContext = { store, db: store.db, clock };
  const workerId = `w-${newId()}`;
  let stopping = false;
  let running = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const inFlight = new Set<Promise<void>>();
  /** The pass over the queue under way: one at a time, or two could both take the last free slot. */
  let pumping: Promise<void> | null = null;
  /** Asked to look again while a pass was under way. */
  let again = false;

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
    while (!stopping && running < opts.concurrency) {
      let job: JobRow | null;
      try {
        job = await claimJob(ctx, { workerId, leaseMs: opts.leaseMs });
      } catch (err) {
        log.error("job claim failed", errorFields(err));
        break;
      }
      if (!job) break;
      running++;
      const p = run(job).finally(() => {
        running--;
        inFlight.delete(p);
        schedule(0);
      });
      inFlight.add(p);
    }
    if (running < opts.concurrency) {
      let due: number | null = null;
      try {
        due = await nextDueAt(ctx);
      } catch (err) {
        log.error("reading the next due job failed", errorFields(err));
      }
      const wait = due === null ? opts.pollMs : Math.min(opts.pollMs, due - clock.now());
      schedule(Math.max(wait, 5));
    }
  }

  async function run(job: JobRow): Promise<void> {
    const handler = handlers[job.kind];
    const started = performance.now();
    try {
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      await handler(JSON.parse(job.payload), job);
      await completeJob(ctx, { job, workerId });
      opts.onJobRun?.(job.kind, "ok", performance.now() - started);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const delay = err instanceof RetryLater ? err.delayMs : backoffMs(job.attempts, opts.backoffBaseMs, opts.backoffCapMs);
      try {
        const status = await failJob(ctx, { job, workerId, error: message, retryAt: clock.now() + delay });
        opts.onJobRun?.(job.kind, status === "dead" ? "dead" : "retry", performance.now() - started);
        (status === "dead" ? log.error : log.warn)("job failed", { jobId: job.id, kind: job.kind, attempt: job.attempts, status, error: message });
      } catch (failErr) {
        // The lease runs out and the job is claimed again.
        log.error("recording a job failure failed", { jobId: job.id, kind: job.kind, jobError: message, ...errorFields(failErr) });
      }
    }
  }

  store.onJobsEnqueued(() => schedule(0));
  schedule(0);
  return {
    wake: () => schedule(0),
    get running() {
      return running;
    },
    async drain(graceMs) {
      stopping = true;
      if (timer) clearTimeout(timer);
      // A pass under way may still be claiming a job: let it finish, so that job is waited for too.
      if (pumping) await pumping;
      await Promise.race([Promise.allSettled([...inFlight]), Bun.sleep(graceMs)]);
      const released = await releaseLeases(ctx, { workerId });
      if (released) log.info("released job leases", { released });
    },
  };
}
