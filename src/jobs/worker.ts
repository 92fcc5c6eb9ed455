import { observeJobRun } from "../api/metrics.ts";
import type { Db } from "../db/client.ts";
import type { Clock } from "../domain/clock.ts";
import { newId } from "../domain/ids.ts";
import { errorFields, log } from "../log.ts";
import { backoffMs } from "./backoff.ts";
import { claimJob, completeJob, failJob, nextDueAt, releaseLeases, type JobRow } from "./queue.ts";

/** A handler may throw this to choose when the next attempt runs (a Retry-After, say). */
export class RetryLater extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
  }
}

export type JobHandler = (payload: unknown, job: JobRow) => Promise<void>;

export interface WorkerOptions {
  concurrency: number;
  leaseMs: number;
  /** Longest sleep between looks at the table when nothing is due. */
  pollMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
}

export interface WorkerPool {
  /** Look at the queue now (called after enqueueing, so new work starts at once). */
  wake(): void;
  /** Stop taking jobs, wait for those running (up to `graceMs`), give back any still leased. */
  drain(graceMs: number): Promise<void>;
  readonly running: number;
}

/**
 * Runs jobs from the durable queue with a fixed number of concurrent slots. Each slot claims
 * one job at a time under a lease; a job whose handler throws is retried with exponential
 * backoff and jitter until its attempts run out, then it is dead (visible through tRPC).
 */
export function startWorkers(db: Db, clock: Clock, handlers: Record<string, JobHandler>, opts: WorkerOptions): WorkerPool {
  const workerId = `w-${newId()}`;
  let stopping = false;
  let running = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const inFlight = new Set<Promise<void>>();

  function schedule(delayMs: number): void {
    if (stopping) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(pump, Math.max(0, delayMs));
  }

  function pump(): void {
    timer = null;
    while (!stopping && running < opts.concurrency) {
      let job: JobRow | null;
      try {
        job = claimJob(db, clock.now(), workerId, opts.leaseMs);
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
      const due = nextDueAt(db);
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
      completeJob(db, clock.now(), job, workerId);
      observeJobRun(job.kind, "ok", performance.now() - started);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const delay = err instanceof RetryLater ? err.delayMs : backoffMs(job.attempts, opts.backoffBaseMs, opts.backoffCapMs);
      const status = failJob(db, clock.now(), job, workerId, message, clock.now() + delay);
      observeJobRun(job.kind, status === "dead" ? "dead" : "retry", performance.now() - started);
      (status === "dead" ? log.error : log.warn)("job failed", { jobId: job.id, kind: job.kind, attempt: job.attempts, status, error: message });
    }
  }

  schedule(0);
  return {
    wake: () => schedule(0),
    get running() {
      return running;
    },
    async drain(graceMs) {
      stopping = true;
      if (timer) clearTimeout(timer);
      await Promise.race([Promise.allSettled([...inFlight]), Bun.sleep(graceMs)]);
      const released = releaseLeases(db, clock.now(), workerId);
      if (released) log.info("released job leases", { released });
    },
  };
}
