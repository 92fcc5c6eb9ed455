/**
 * Prometheus metrics, in the text exposition format (version 0.0.4) at GET /metrics.
 *
 * A small registry written for Flagstaff rather than a client library: counters and histograms
 * with fixed label sets, plus gauges read when scraped. Other code records through the small
 * functions below; labels are always drawn from bounded sets (route patterns, never raw paths).
 *
 *   flagstaff_build_info{version}                           gauge, always 1: the release this process runs
 *   flagstaff_http_requests_total{method,route,status}     counter
 *   flagstaff_http_request_duration_seconds{method,route}   histogram
 *   flagstaff_http_requests_in_flight                       gauge
 *   flagstaff_jobs{status}                                  gauge (pending, running, dead), read at scrape
 *   flagstaff_jobs_oldest_pending_age_seconds               gauge, read at scrape (the oldest of every lane's)
 *   flagstaff_job_lane_depth{lane,status}                   gauge (pending, running) per lane (job kind), read at scrape
 *   flagstaff_job_lane_oldest_age_seconds{lane}             gauge, read at scrape
 *   flagstaff_job_lane_slots{lane}                          gauge: jobs of the lane run at once
 *   flagstaff_job_lane_drain_seconds{lane}                  gauge: pending x recent mean run time / slots
 *   flagstaff_jobs_skipped_total{lane,reason}               counter: optional work skipped (backlog)
 *   flagstaff_job_runs_total{kind,outcome}                  counter (ok, retry, dead)
 *   flagstaff_job_duration_seconds{kind}                    histogram
 *   flagstaff_ai_call_duration_seconds{outcome}             histogram (ok, error)
 *   flagstaff_ai_answer_seconds                             gauge: mean time of a model answer lately (Ollama's queue included)
 *   flagstaff_ai_answers_in_flight                          gauge: model calls waiting for their answer
 *   flagstaff_ai_capacity_per_second                        gauge: answers a second the enrichment lane gets with every slot busy (slots / answer time)
 *   flagstaff_ai_answers_per_second                         gauge: answers a second over the last minute
 *   flagstaff_ai_arrivals_per_second                        gauge: enrichments asked for a second over the last minute (this instance's reports)
 *   flagstaff_ai_enrichments_total{outcome}                 counter (analysed, reused, caught_up, expired)
 *   flagstaff_db_size_bytes{file}                           gauge (db, wal), read at scrape
 *   flagstaff_sla_breaches_total{queue,target}              counter read at scrape: service-level breaches recorded (queue id, "" for appeals; first_review, decision, appeal)
 *   flagstaff_db_errors_total{kind}                         counter (connection, unavailable, timeout, busy, disk_full, read_only, io)
 *   flagstaff_attachment_uploads_total{outcome}             counter: uploads stored (stored) or refused (too_large, limit, type, image, unavailable, other)
 *   flagstaff_attachment_upload_bytes_total                 counter: bytes of the uploads stored
 *   flagstaff_attachment_store_bytes                        gauge read at scrape: bytes of the distinct files kept (docs/attachments.md)
 *   flagstaff_attachment_store_files{kind}                  gauge read at scrape: distinct files (blobs) and attachments
 *   process_resident_memory_bytes, process_heap_bytes, process_start_time_seconds, process_cpu_seconds_total
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { statSync } from "node:fs";
import type { ReadContext } from "../domain/core/context.ts";
import { countJobsByStatus, arrivalRate, laneDepths, skippedJobs, type LaneDepth } from "../domain/plumbing/jobs.ts";
import { ENRICHMENT_OUTCOMES, enrichmentOutcomes, modelPace } from "../domain/analysis/model-meter.ts";
import { JOB_KIND } from "../domain/views/job.ts";
import { breachTotals } from "../domain/service-levels/service-levels.ts";
import { attachmentStoreFigures } from "../domain/attachments/attachments.ts";
import { VERSION } from "../version.ts";

/** Latency buckets in seconds: 0.5 ms to 10 s. */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Jobs and AI calls take longer: 10 ms to 2 min. */
const SLOW_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const formatLabels = (names: readonly string[], values: readonly string[], extra = ""): string => {
  const parts = names.map((n, i) => `${n}="${escapeLabel(values[i]!)}"`);
  if (extra) parts.push(extra);
  return parts.length ? `{${parts.join(",")}}` : "";
};
const formatNumber = (n: number): string => (Number.isFinite(n) ? String(n) : n > 0 ? "+Inf" : n < 0 ? "-Inf" : "NaN");

interface Metric {
  render(out: string[]): void;
}

class Counter implements Metric {
  private readonly values = new Map<string, { labels: string[]; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  inc(labels: readonly string[], by = 1): void {
    const key = labels.join("\u0000");
    const entry = this.values.get(key);
    if (entry) entry.value += by;
    else this.values.set(key, { labels: [...labels], value: by });
  }

  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`);
    for (const { labels, value } of this.values.values()) out.push(`${this.name}${formatLabels(this.labelNames, labels)} ${formatNumber(value)}`);
  }
}

class Histogram implements Metric {
  private readonly series = new Map<string, { labels: string[]; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {}

  observe(labels: readonly string[], seconds: number): void {
    const key = labels.join("\u0000");
    let s = this.series.get(key);
    if (!s) {
      s = { labels: [...labels], counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    // Counts per bucket (not cumulative) here; cumulated when rendered.
    const i = this.buckets.findIndex((le) => seconds <= le);
    if (i >= 0) s.counts[i]!++;
    s.sum += seconds;
    s.count++;
  }

  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`);
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.counts[i]!;
        out.push(`${this.name}_bucket${formatLabels(this.labelNames, s.labels, `le="${le}"`)} ${cumulative}`);
      });
      out.push(`${this.name}_bucket${formatLabels(this.labelNames, s.labels, 'le="+Inf"')} ${s.count}`);
      out.push(`${this.name}_sum${formatLabels(this.labelNames, s.labels)} ${formatNumber(s.sum)}`);
      out.push(`${this.name}_count${formatLabels(this.labelNames, s.labels)} ${s.count}`);
    }
  }
}

/** A gauge whose samples are read when scraped (or a counter kept elsewhere, such as in the database). */
class CollectedGauge implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly collect: () => { labels: string[]; value: number }[] | Promise<{ labels: string[]; value: number }[]>,
    readonly type: "gauge" | "counter" = "gauge",
  ) {}

  private samples: { labels: string[]; value: number }[] | null = null;

  /** Reads the gauge for the next render (the database answers asynchronously). */
  async refresh(): Promise<void> {
    try {
      this.samples = await this.collect();
    } catch {
      this.samples = null; // a gauge that cannot be read right now is left out of this scrape
    }
  }

  render(out: string[]): void {
    const samples = this.samples;
    if (!samples) return;
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`);
    for (const { labels, value } of samples) out.push(`${this.name}${formatLabels(this.labelNames, labels)} ${formatNumber(value)}`);
  }
}

const httpRequests = new Counter("flagstaff_http_requests_total", "HTTP requests answered, by route pattern and status.", ["method", "route", "status"]);
const httpDuration = new Histogram(
  "flagstaff_http_request_duration_seconds",
  "Time from receiving a request to handing its response to the server, by route pattern.",
  ["method", "route"],
  HTTP_BUCKETS,
);
let inFlight = 0;
const jobRuns = new Counter("flagstaff_job_runs_total", "Background job attempts by kind and outcome (ok, retry: failed and rescheduled, dead: failed for good).", ["kind", "outcome"]);
const jobDuration = new Histogram("flagstaff_job_duration_seconds", "Time a job's handler ran, by kind.", ["kind"], SLOW_BUCKETS);
const aiCalls = new Histogram("flagstaff_ai_call_duration_seconds", "Time of one AI classification call (retries included), by outcome (ok or error).", ["outcome"], SLOW_BUCKETS);
const dbErrors = new Counter("flagstaff_db_errors_total", "Requests answered 503 because the database could not answer, by kind of fault (src/db/faults.ts).", ["kind"]);
const attachmentUploads = new Counter("flagstaff_attachment_uploads_total", "Attachment uploads by outcome: stored, or refused (too_large, limit, type, image, unavailable, other).", ["outcome"]);
const attachmentUploadBytes = new Counter("flagstaff_attachment_upload_bytes_total", "Bytes of the attachment uploads stored.", []);
const startTimeSeconds = Math.floor(Date.now() / 1000 - process.uptime());

const metrics: Metric[] = [
  // Which release each instance runs (during a rolling upgrade, some run the old one).
  new CollectedGauge("flagstaff_build_info", "The Flagstaff release this process runs (label version); always 1.", ["version"], () => [{ labels: [VERSION], value: 1 }]),
  httpRequests,
  httpDuration,
  new CollectedGauge("flagstaff_http_requests_in_flight", "HTTP requests being handled now.", [], () => [{ labels: [], value: inFlight }]),
  jobRuns,
  jobDuration,
  aiCalls,
  dbErrors,
  attachmentUploads,
  attachmentUploadBytes,
  new CollectedGauge("process_resident_memory_bytes", "Resident set size of the process.", [], () => [{ labels: [], value: process.memoryUsage.rss() }]),
  new CollectedGauge("process_heap_bytes", "JavaScript heap in use.", [], () => [{ labels: [], value: process.memoryUsage().heapUsed }]),
  new CollectedGauge("process_start_time_seconds", "Start time of the process, seconds since the Unix epoch.", [], () => [{ labels: [], value: startTimeSeconds }]),
  new CollectedGauge("process_cpu_seconds_total", "User and system CPU time spent, in seconds.", [], () => {
    const u = process.cpuUsage();
    return [{ labels: [], value: (u.user + u.system) / 1e6 }];
  }),
];

const databaseGauges: CollectedGauge[] = [];

// ---------------------------------------------------------------------------------------------
// What other code calls.

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** One answered HTTP request. `route` is the matched route pattern ("unmatched" for 404s). */
export function observeRequest(method: string, route: string, status: number, ms: number): void {
  const m = METHODS.has(method) ? method : "OTHER"; // a client's method names must not grow the label set
  httpRequests.inc([m, route, String(status)]);
  httpDuration.observe([m, route], ms / 1000);
}

export function requestStarted(): void {
  inFlight++;
}

export function requestFinished(): void {
  inFlight = Math.max(0, inFlight - 1);
}

/** One job attempt: `outcome` ok, retry (failed, rescheduled) or dead (failed for good). */
export function observeJobRun(kind: string, outcome: "ok" | "retry" | "dead", ms: number): void {
  jobRuns.inc([kind, outcome]);
  jobDuration.observe([kind], ms / 1000);
}

/** A request the database could not serve (answered 503), by kind of fault. */
export function observeDatabaseFault(kind: string): void {
  dbErrors.inc([kind]);
}

/** The outcomes an attachment upload is counted under. */
export type AttachmentUploadOutcome = "stored" | "too_large" | "limit" | "type" | "image" | "unavailable" | "other";

/** One attachment upload: stored (with its size), or refused and why. */
export function observeAttachmentUpload(outcome: AttachmentUploadOutcome, bytes = 0): void {
  attachmentUploads.inc([outcome]);
  if (outcome === "stored") attachmentUploadBytes.inc([], bytes);
}

/** One AI classification call: its duration (retries included) and whether it produced a usable answer. */
export function observeAiCall(ms: number, ok: boolean): void {
  aiCalls.observe([ok ? "ok" : "error"], ms / 1000);
}

/**
 * Gauges read from the database when scraped: job queue depth by status, the service-level
 * breaches recorded (a count of the sla_breaches table, grouped), and on SQLite the size of the
 * database and WAL files.
 */
export function registerDatabaseGauges(ctx: Pick<ReadContext, "db">, dbPath: string | null): void {
  databaseGauges.length = 0; // one database per process; a second call replaces the first
  databaseGauges.push(
    new CollectedGauge("flagstaff_jobs", "Background jobs by status (pending: waiting or scheduled for a retry, running: leased, dead: gave up).", ["status"], async () => {
      const counts = await countJobsByStatus(ctx, ["pending", "running", "dead"]);
      return Object.entries(counts).map(([status, n]) => ({ labels: [status], value: n }));
    }),
    // Recorded once per case and target by the service-level pass (src/domain/service-levels/service-levels.ts).
    new CollectedGauge(
      "flagstaff_sla_breaches_total",
      "Service-level breaches recorded (each case once per target, each appeal once), by queue id (empty for appeals) and target (first_review, decision, appeal).",
      ["queue", "target"],
      async () => (await breachTotals(ctx)).map((b) => ({ labels: [b.queueId ?? "", b.target], value: b.n })),
      "counter",
    ),
    new CollectedGauge("flagstaff_attachment_store_bytes", "Bytes of the distinct files the attachment store keeps (one copy per SHA-256).", [], async () => [
      { labels: [], value: (await attachmentStoreFigures(ctx)).bytes },
    ]),
    new CollectedGauge("flagstaff_attachment_store_files", "Distinct files the attachment store keeps (blobs), and attachments that hold them.", ["kind"], async () => {
      const f = await attachmentStoreFigures(ctx);
      return [
        { labels: ["blobs"], value: f.blobs },
        { labels: ["attachments"], value: f.attachments },
      ];
    }),
  );
  if (dbPath !== null && dbPath !== ":memory:") {
    databaseGauges.push(
      new CollectedGauge("flagstaff_db_size_bytes", "Size of the SQLite database file and of its write-ahead log.", ["file"], () =>
        [
          ["db", dbPath],
          ["wal", `${dbPath}-wal`],
        ].map(([file, path]) => ({ labels: [file!], value: statSync(path!, { throwIfNoEntry: false })?.size ?? 0 })),
      ),
    );
  }
}

/** A lane as its workers know it (src/jobs/worker.ts). */
export interface LaneWorkers {
  lane: string;
  slots: number;
  running: number;
  meanRunMs: number | null;
}

const laneGauges: Metric[] = [];

/**
 * The job lanes (one per job kind, src/jobs/worker.ts): depth and oldest due job of each, read
 * from the queue when scraped (ranges of the claim index, one reading per scrape for all these
 * gauges), the slots and recent run time its workers know, and what was skipped.
 */
export function registerLaneGauges(ctx: Pick<ReadContext, "store" | "db" | "clock">, lanes: () => LaneWorkers[]): void {
  laneGauges.length = 0;
  let reading: { at: number; depths: Promise<LaneDepth[]> } | null = null;
  const depths = (): Promise<LaneDepth[]> => {
    const t = performance.now();
    if (!reading || t - reading.at > 500) reading = { at: t, depths: laneDepths(ctx, { kinds: lanes().map((l) => l.lane), now: ctx.clock.now() }) };
    return reading.depths;
  };
  laneGauges.push(
    new CollectedGauge("flagstaff_jobs_oldest_pending_age_seconds", "How long the oldest due job (of any lane) has been waiting (0 when none).", [], async () => [
      { labels: [], value: Math.max(0, ...(await depths()).map((d) => d.oldestAgeSeconds)) },
    ]),
    new CollectedGauge("flagstaff_job_lane_depth", "Jobs of each lane (job kind) by status: pending (due or waiting for a retry) and running.", ["lane", "status"], async () =>
      (await depths()).flatMap((d) => [
        { labels: [d.lane, "pending"], value: d.pending },
        { labels: [d.lane, "running"], value: d.running },
      ]),
    ),
    new CollectedGauge("flagstaff_job_lane_oldest_age_seconds", "How long the oldest due job of each lane has been waiting (0 when none).", ["lane"], async () =>
      (await depths()).map((d) => ({ labels: [d.lane], value: d.oldestAgeSeconds })),
    ),
    new CollectedGauge("flagstaff_job_lane_slots", "Jobs of each lane this process runs at once.", ["lane"], () => lanes().map((l) => ({ labels: [l.lane], value: l.slots }))),
    new CollectedGauge(
      "flagstaff_job_lane_drain_seconds",
      "Time this process would take to run each lane's pending jobs at its recent pace (pending x mean run time / slots); left out before a lane's first job.",
      ["lane"],
      async () => {
        const byLane = new Map((await depths()).map((d) => [d.lane, d.pending]));
        return lanes()
          .filter((l) => l.meanRunMs !== null)
          .map((l) => ({ labels: [l.lane], value: ((byLane.get(l.lane) ?? 0) * l.meanRunMs!) / l.slots / 1000 }));
      },
    ),
    {
      // A counter the domain keeps (src/domain/plumbing/jobs.ts, enqueueJob): rendered from its figures.
      render(out) {
        const skipped = new Counter("flagstaff_jobs_skipped_total", "Optional jobs (AI enrichment) not run because their lane was past its backlog bound, by lane and reason.", ["lane", "reason"]);
        for (const s of skippedJobs(ctx.store)) skipped.inc([s.kind, s.reason], s.count);
        skipped.render(out);
      },
    },
  );
}

const aiGauges: Metric[] = [];

/**
 * The model's capacity against what arrives (docs/ai.md, "Sizing"), as this process measures
 * it (src/domain/analysis/model-meter.ts), and what became of enrichments.
 */
export function registerAiGauges(ctx: Pick<ReadContext, "store" | "clock">): void {
  aiGauges.length = 0;
  const pace = () => modelPace(ctx.store, ctx.clock.now());
  const known = (v: number | null) => (v === null ? [] : [{ labels: [], value: v }]);
  aiGauges.push(
    new CollectedGauge("flagstaff_ai_answer_seconds", "Mean time of a model answer lately, in seconds (Ollama's own queue included); left out before the first answer.", [], () => known(pace().answerSeconds)),
    new CollectedGauge("flagstaff_ai_answers_in_flight", "Model calls waiting for their answer now.", [], () => [{ labels: [], value: pace().inFlight }]),
    new CollectedGauge(
      "flagstaff_ai_capacity_per_second",
      "Answers a second the enrichment lane gets from the model with every slot busy: FLAGSTAFF_AI_CONCURRENCY / the mean answer time; left out before the first answer.",
      [],
      () => known(pace().capacityPerSecond),
    ),
    new CollectedGauge("flagstaff_ai_answers_per_second", "Model answers a second over the last minute.", [], () => [{ labels: [], value: pace().answersPerSecond }]),
    new CollectedGauge("flagstaff_ai_arrivals_per_second", "Reports asking for AI enrichment a second over the last minute (those this instance took in).", [], () => [
      { labels: [], value: arrivalRate(ctx.store, JOB_KIND.enrich, ctx.clock.now()) },
    ]),
    {
      // Counters the domain keeps (src/domain/analysis/model-meter.ts): rendered from its figures.
      render(out) {
        const done = new Counter(
          "flagstaff_ai_enrichments_total",
          "Report enrichments by outcome: analysed (the model answered), reused (an earlier analysis of the same content), caught_up (a skipped one queued again), expired (a skipped one not caught up in time).",
          ["outcome"],
        );
        const counts = enrichmentOutcomes(ctx.store);
        for (const outcome of ENRICHMENT_OUTCOMES) done.inc([outcome], counts[outcome]);
        done.render(out);
      },
    },
  );
}

/** Every metric in the Prometheus text format. */
export async function renderMetrics(): Promise<string> {
  const all = [...metrics, ...databaseGauges, ...laneGauges, ...aiGauges];
  await Promise.all(all.map((g) => (g instanceof CollectedGauge ? g.refresh() : undefined)));
  const out: string[] = [];
  for (const m of all) m.render(out);
  return out.join("\n") + "\n";
}

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const sha256 = (s: string): Buffer => createHash("sha256").update(s).digest();

/**
 * Whether a scrape may read /metrics: always when no FLAGSTAFF_METRICS_TOKEN is set, else only
 * with `Authorization: Bearer <token>`. Compared in constant time (both sides hashed first, so
 * neither the token's characters nor its length show in the time taken).
 */
export function metricsAuthorized(token: string | null, authorization: string | null): boolean {
  if (token === null) return true;
  const m = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
  return m !== null && timingSafeEqual(sha256(m[1]!), sha256(token));
}
