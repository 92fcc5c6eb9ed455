import { isIP } from "node:net";
import { dirname, join } from "node:path";
import { z } from "zod";
import { HOLDING_LIMITS, type HoldingLimits } from "./domain/core/holding-limits.ts";

/** A boolean environment flag: "1", "true", "yes", "on" (and their opposites). */
const flag = z
  .enum(["1", "0", "true", "false", "yes", "no", "on", "off", ""])
  .default("")
  .transform((v) => ["1", "true", "yes", "on"].includes(v));

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
/** Slots of a job lane: jobs of its kind run at once. */
const slots = (fallback: number) => z.coerce.number().int().min(1).max(64).default(fallback);
/** A retention in milliseconds; 0 keeps forever. */
const retention = (fallback: number, min = 60_000) =>
  z.coerce
    .number()
    .int()
    .refine((n) => n === 0 || n >= min, `must be 0 (keep forever) or at least ${min} ms`)
    .default(fallback);
const DAY_MS = 24 * 3_600_000;

/**
 * A list of addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`, `127.0.0.1`), separated by
 * commas or spaces: each checked, and an entry that is neither named in the error.
 */
const addressList = z
  .string()
  .transform((value, ctx) => {
    const entries = value.split(/[\s,]+/).filter(Boolean);
    for (const entry of entries) {
      const [address = "", prefix, ...rest] = entry.split("/");
      const version = isIP(address);
      const bits = version === 6 ? 128 : 32;
      const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
      if (version === 0 || !prefixOk || rest.length > 0) {
        ctx.addIssue({ code: "custom", message: `${JSON.stringify(entry)} is not an IP address or a CIDR range such as 10.0.0.0/8 or fd00::/8` });
        return z.NEVER;
      }
    }
    return entries;
  })
  .default([]);

const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  HOST: z.string().min(1).default("0.0.0.0"),
  /**
   * Lets several processes listen on the same PORT (SO_REUSEPORT: the kernel spreads the
   * connections among them). Off, a second instance on a port in use stops with an error.
   */
  FLAGSTAFF_REUSE_PORT: flag,
  /**
   * From SIGTERM until the listener closes: /readyz answers 503 while requests are still served,
   * so that a load balancer's health checks take the instance out before it refuses connections.
   */
  FLAGSTAFF_SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(600_000).default(5_000),
  FLAGSTAFF_DB: z.string().min(1).default("./data/flagstaff.db"),
  /** A postgres:// URL runs Flagstaff on PostgreSQL instead of SQLite (src/db/engine.ts). */
  FLAGSTAFF_DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//i, "must be a postgres:// or postgresql:// URL").optional(),
  /** Most PostgreSQL connections one instance opens. */
  FLAGSTAFF_DATABASE_POOL: z.coerce.number().int().min(2).max(500).default(10),
  /** Longest a database statement (or a wait for a lock, or a transaction left idle) may take: then a 503. */
  FLAGSTAFF_DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  OLLAMA_HOST: z.url({ protocol: /^https?$/ }).default("http://127.0.0.1:11434"),
  FLAGSTAFF_AI_MODEL: z.string().min(1).default("llama3.2"),
  /** A second model that classifies every enriched report again, in shadow: stored for comparison, never acting (docs/ai.md). */
  FLAGSTAFF_AI_SHADOW_MODEL: z.string().min(1).optional(),
  FLAGSTAFF_AI_TIMEOUT_MS: positiveInt(30_000),
  FLAGSTAFF_AI_WINDOW: z.coerce.number().int().min(200).max(9_999).default(4_000),
  FLAGSTAFF_REPORT_RATE_LIMIT: positiveInt(10),
  FLAGSTAFF_SCAN_ALLOW_PRIVATE: flag,
  /** Limit on a whole URL fetch, body and redirects included (spec: 10 s; tests shorten it). */
  FLAGSTAFF_SCAN_TIMEOUT_MS: positiveInt(10_000),
  FLAGSTAFF_LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
  FLAGSTAFF_MAX_BODY_BYTES: positiveInt(256 * 1024),
  /** Slots of the lanes that have no setting of their own (Transparency Database submissions). */
  FLAGSTAFF_JOB_CONCURRENCY: slots(4),
  /** Slots of the webhook deliveries' lane: deliveries run at once (each waits on a receiver, up to FLAGSTAFF_WEBHOOK_TIMEOUT_MS). */
  FLAGSTAFF_WEBHOOK_CONCURRENCY: slots(8),
  /** Slots of the AI enrichment lane: the model's capacity (requests it answers at once, Ollama's OLLAMA_NUM_PARALLEL). */
  FLAGSTAFF_AI_CONCURRENCY: slots(2),
  /**
   * Slots of the evaluation runs' lane: model calls of evaluations in flight at once per instance.
   * Its own lane, so a run never takes enrichment's or webhooks' slots; keep it below the model's capacity.
   */
  FLAGSTAFF_EVAL_CONCURRENCY: slots(1),
  /** Slots of the link scans' lane: URLs fetched (and classified) at once. */
  FLAGSTAFF_SCAN_CONCURRENCY: slots(4),
  /** Enrichment jobs waiting past which the least urgent enrichment is skipped (with the reason, and a metric); 0: never. */
  FLAGSTAFF_ENRICH_BACKLOG_MAX: z.coerce.number().int().min(0).default(10_000),
  /** How long a skipped enrichment is caught up (taken again when the lane has room) before it expires (docs/ai.md). */
  FLAGSTAFF_ENRICH_CATCH_UP_MS: z.coerce.number().int().min(1_000).default(DAY_MS),
  /** How long an analysis of a content is reused for later reports of the same content (docs/ai.md); 0: never reused. */
  FLAGSTAFF_AI_REUSE_WINDOW_MS: z.coerce.number().int().min(0).default(DAY_MS),
  FLAGSTAFF_JOB_LEASE_MS: positiveInt(120_000),
  FLAGSTAFF_JOB_POLL_MS: positiveInt(1_000),
  FLAGSTAFF_JOB_BACKOFF_MS: positiveInt(2_000),
  FLAGSTAFF_JOB_BACKOFF_CAP_MS: positiveInt(10 * 60_000),
  /** Attempts of an enrichment job before it is dead: with the backoff cap, about 8 hours. */
  FLAGSTAFF_ENRICH_MAX_ATTEMPTS: positiveInt(50),
  /** Finished jobs (done, skipped) are deleted this long after they finished; dead ones after FLAGSTAFF_RETENTION_DEAD_JOBS_MS. */
  FLAGSTAFF_RETENTION_JOBS_MS: retention(7 * DAY_MS),
  FLAGSTAFF_RETENTION_DEAD_JOBS_MS: retention(30 * DAY_MS),
  /** Settled webhook deliveries (delivered, failed) and their attempts are deleted this long after they were made. */
  FLAGSTAFF_RETENTION_WEBHOOKS_MS: retention(30 * DAY_MS),
  /** Rule hits are deleted this long after the hit; at least 8 days, so the rules page's 7-day counts stay whole. */
  FLAGSTAFF_RETENTION_RULE_HITS_MS: retention(90 * DAY_MS, 8 * DAY_MS),
  /** How often the retention pass runs (on one instance), and the rows each of its transactions deletes. */
  FLAGSTAFF_RETENTION_TICK_MS: positiveInt(60_000),
  FLAGSTAFF_RETENTION_BATCH: z.coerce.number().int().min(1).max(10_000).default(500),
  /** Shifts the server's clock (tests of time windows only). */
  FLAGSTAFF_CLOCK_OFFSET_MS: z.coerce.number().int().default(0),
  /** Webhook deliveries: time limit of one attempt, retry schedule scale (tests shorten it), auto-disable. */
  FLAGSTAFF_WEBHOOK_TIMEOUT_MS: positiveInt(15_000),
  FLAGSTAFF_WEBHOOK_RETRY_SCALE: z.coerce.number().positive().max(1).default(1),
  FLAGSTAFF_WEBHOOK_DISABLE_AFTER_MS: positiveInt(5 * 24 * 3_600_000),
  /** Longest pause of the scheduler that ends suspensions and mutes whose end has come. */
  FLAGSTAFF_ENFORCEMENT_TICK_MS: positiveInt(5_000),
  /** How often organizations with statements not yet in the Transparency Database get a submission run. */
  FLAGSTAFF_TRANSPARENCY_TICK_MS: positiveInt(10 * 60_000),
  /** How often the service-level pass records the breaches due (on one instance). */
  FLAGSTAFF_SLA_TICK_MS: positiveInt(60_000),
  /** How often each organization's audit chain gets a signed checkpoint (on one instance; docs/audit.md). */
  FLAGSTAFF_AUDIT_CHECKPOINT_MS: positiveInt(3_600_000),
  /** Lanes (sub-chains, a head each) of each organization's audit chain, so that its commits do not all queue on one head (docs/audit.md, "Lanes"). */
  FLAGSTAFF_AUDIT_CHAIN_LANES: positiveInt(32),
  /** The dashboard in its development build (React's dev build, unminified, rebuilt on each page load). */
  FLAGSTAFF_DEV: flag,
  /**
   * The reverse proxies and load balancers whose X-Forwarded-For is believed (src/api/client-address.ts):
   * the client of a request they pass is the right-most address in it that is not theirs.
   */
  FLAGSTAFF_TRUSTED_PROXIES: addressList,
  /** Where attachments are kept without an object store: a directory (default: `attachments` beside FLAGSTAFF_DB). */
  FLAGSTAFF_ATTACHMENTS_DIR: z.string().min(1).optional(),
  /** An S3-compatible bucket for attachments (AWS S3, MinIO, Garage…): required when instances share PostgreSQL. */
  FLAGSTAFF_S3_BUCKET: z.string().min(1).optional(),
  /** The object store's URL (`https://s3.eu-west-1.amazonaws.com`, `http://minio:9000`); unset: AWS's for the region. */
  FLAGSTAFF_S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  FLAGSTAFF_S3_REGION: z.string().min(1).optional(),
  FLAGSTAFF_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  FLAGSTAFF_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  /** Largest attachment, in bytes (a 413 past it). At most 2 GiB - 1. */
  FLAGSTAFF_ATTACHMENT_MAX_BYTES: z.coerce.number().int().min(1).max(2 ** 31 - 1).default(100 * 1024 * 1024),
  /** Most attachments on one case, its reports' included (a 409 past it). */
  FLAGSTAFF_ATTACHMENTS_PER_CASE: positiveInt(100),
  /** Most bytes of attachments one organization keeps (a 409 past it). */
  FLAGSTAFF_ATTACHMENT_ORG_BYTES: positiveInt(20 * 1024 ** 3),
  /** Most rules one organization holds (a 409 past it): HOLDING_LIMITS, src/domain/core/holding-limits.ts. */
  FLAGSTAFF_MAX_RULES: positiveInt(HOLDING_LIMITS.rules.default),
  /** Most webhook endpoints one organization holds (a 409 past it): HOLDING_LIMITS. */
  FLAGSTAFF_MAX_WEBHOOK_ENDPOINTS: positiveInt(HOLDING_LIMITS.webhookEndpoints.default),
  /** Most report categories one project holds (a 409 past it): HOLDING_LIMITS. */
  FLAGSTAFF_MAX_CATEGORIES: positiveInt(HOLDING_LIMITS.categories.default),
  /** Largest image, in pixels (width x height from its header), that gets a preview: larger ones are refused (a 413). */
  FLAGSTAFF_ATTACHMENT_MAX_PIXELS: positiveInt(50_000_000),
  /** The longest side of an image's preview, in pixels. */
  FLAGSTAFF_ATTACHMENT_PREVIEW_PX: z.coerce.number().int().min(64).max(4096).default(1024),
  /** How long an upload may take from its first byte stored to its row committed; an object left unreferenced longer is an orphan the sweep deletes. */
  FLAGSTAFF_ATTACHMENT_ORPHAN_MS: z.coerce.number().int().min(1_000).default(3_600_000),
  /** How often the attachment sweep runs (orphans, deletions left half done; on one instance). */
  FLAGSTAFF_ATTACHMENT_SWEEP_MS: positiveInt(10 * 60_000),
  /**
   * The niceness (0-19) of the threads that hash uploads and decode images: their share of a
   * busy machine's CPU beside requests (0: the server's own priority). docs/attachments.md, "Sharing the CPU".
   */
  /**
   * While the server is serving other requests (20 a second or more), uploads' bytes are let in at
   * no more than this many a second, all uploads together (0: never paced). docs/attachments.md, "Sharing the CPU".
   */
  FLAGSTAFF_ATTACHMENT_BUSY_BYTES_PER_S: z.coerce.number().int().min(0).default(16 * 1024 * 1024),
  FLAGSTAFF_MEDIA_THREAD_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /** Slots of the attachment previews' lane: images decoded at once (each on a worker thread). */
  FLAGSTAFF_PREVIEW_CONCURRENCY: slots(1),
  /** The ffmpeg that samples videos' frames (docs/media.md, "Video"); unset: `ffmpeg` on the PATH. Neither there: video is matched by SHA-256 and MD5 only. */
  FLAGSTAFF_FFMPEG_PATH: z.string().min(1).optional(),
  /** The most seconds of a video whose frames are hashed (one a second); a longer video keeps these and says so. */
  FLAGSTAFF_VIDEO_MAX_SECONDS: z.coerce.number().int().min(1).max(7_200).default(600),
  /** ffmpeg is killed after this long on one video. */
  FLAGSTAFF_VIDEO_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(120_000),
  /** ffmpeg processes at once in one instance. */
  FLAGSTAFF_VIDEO_CONCURRENCY: slots(1),
  /** Media items of a project one job of the past media check reads (docs/media.md, "The past media check"). */
  FLAGSTAFF_MEDIA_CHECK_BATCH: z.coerce.number().int().min(1).max(10_000).default(500),
  /** The pause between two batches of one past media check, in ms: a long check yields the database to the rest. */
  FLAGSTAFF_MEDIA_CHECK_PAUSE_MS: z.coerce.number().int().min(0).max(3_600_000).default(0),
  /** When set, GET /metrics answers only `Authorization: Bearer <this>` (src/api/metrics.ts). */
  FLAGSTAFF_METRICS_TOKEN: z
    .string()
    .min(16, "must be at least 16 characters (a random secret: openssl rand -hex 32)")
    .max(512)
    .regex(/^[A-Za-z0-9\-._~+/]+=*$/, "letters, digits and - . _ ~ + / only (a bearer token, sent in a header)")
    .optional(),
});

type RawConfig = z.infer<typeof configSchema>;

export interface Config {
  /** How many rules and webhook endpoints one organization, and report categories one project, may hold (src/domain/core/holding-limits.ts). */
  holdingLimits: HoldingLimits;
  port: number;
  host: string;
  /** FLAGSTAFF_REUSE_PORT: share the port with other processes that ask for it too (SO_REUSEPORT). */
  reusePort: boolean;
  /** FLAGSTAFF_SHUTDOWN_DRAIN_MS: how long /readyz answers 503 after SIGTERM before the listener closes. */
  shutdownDrainMs: number;
  dbPath: string;
  /** PostgreSQL's URL when Flagstaff runs on it, else null (SQLite at dbPath). */
  databaseUrl: string | null;
  databasePool: number;
  /** Longest a statement, a lock wait or an idle transaction may take (FLAGSTAFF_DB_STATEMENT_TIMEOUT_MS). */
  databaseStatementTimeoutMs: number;
  ollamaHost: string;
  aiModel: string;
  /** FLAGSTAFF_AI_SHADOW_MODEL, or null: no shadow model. */
  aiShadowModel: string | null;
  aiTimeoutMs: number;
  aiWindow: number;
  reportRateLimit: number;
  scanAllowPrivate: boolean;
  scanTimeoutMs: number;
  logLevel: RawConfig["FLAGSTAFF_LOG_LEVEL"];
  maxBodyBytes: number;
  clockOffsetMs: number;
  jobs: { concurrency: number; leaseMs: number; pollMs: number; backoffBaseMs: number; backoffCapMs: number };
  /** Slots of the lanes with a setting of their own: webhook deliveries, AI enrichment, link scans. */
  laneSlots: { webhooks: number; enrichment: number; linkScans: number; evaluation: number; previews: number };
  /** FLAGSTAFF_ENRICH_BACKLOG_MAX: 0 when enrichment is never skipped. */
  enrichBacklogMax: number;
  /** FLAGSTAFF_ENRICH_CATCH_UP_MS: a skipped enrichment older than this expires. */
  enrichCatchUpMs: number;
  /** FLAGSTAFF_AI_REUSE_WINDOW_MS: 0 when no analysis is reused. */
  aiReuseWindowMs: number;
  /** Retention of the growing logs, in ms (0: kept forever); the pass's period and batch size. */
  retention: { jobsMs: number; deadJobsMs: number; webhooksMs: number; ruleHitsMs: number; tickMs: number; batch: number };
  enrichMaxAttempts: number;
  webhooks: { timeoutMs: number; retryScale: number; disableAfterMs: number };
  enforcementTickMs: number;
  transparencyTickMs: number;
  /** How often the service-level pass records the breaches due (FLAGSTAFF_SLA_TICK_MS). */
  slaTickMs: number;
  /** How often the audit chains get signed checkpoints (FLAGSTAFF_AUDIT_CHECKPOINT_MS; the key: FLAGSTAFF_AUDIT_SIGNING_KEY[_FILE]). */
  auditCheckpointMs: number;
  /** Lanes of each organization's audit chain (FLAGSTAFF_AUDIT_CHAIN_LANES). */
  auditChainLanes: number;
  /** FLAGSTAFF_DEV: serve the dashboard's development build (src/api/dashboard-page.ts). */
  dev: boolean;
  /** FLAGSTAFF_TRUSTED_PROXIES: addresses and CIDR ranges whose X-Forwarded-For names the client (empty: none, the socket's address is the client). */
  trustedProxies: string[];
  /** FLAGSTAFF_METRICS_TOKEN: the bearer token /metrics asks for, or null (open: keep it to the monitoring network). */
  metricsToken: string | null;
  /** Attachments: where they are kept and their limits (docs/attachments.md). */
  attachments: AttachmentConfig;
  /** Videos' frames sampled by ffmpeg (docs/media.md, "Video"). */
  video: {
    /** FLAGSTAFF_FFMPEG_PATH as set, or null: `ffmpeg` on the PATH (src/domain/media/video-frames.ts, resolveFfmpeg). */
    ffmpegPath: string | null;
    maxSeconds: number;
    timeoutMs: number;
    concurrency: number;
  };
  /** The past media check of entries added to a bank: media items per job, pause between jobs (FLAGSTAFF_MEDIA_CHECK_BATCH, FLAGSTAFF_MEDIA_CHECK_PAUSE_MS). */
  mediaCheck: { batch: number; pauseMs: number };
}

/** Where attachments are kept (an S3 bucket, else a local directory) and their limits. */
export interface AttachmentConfig {
  /** FLAGSTAFF_ATTACHMENTS_DIR, else `attachments` beside FLAGSTAFF_DB. */
  dir: string;
  /** Whether FLAGSTAFF_ATTACHMENTS_DIR was set (else the default beside the SQLite file). */
  dirConfigured: boolean;
  s3: { bucket: string; endpoint: string | null; region: string | null; accessKeyId: string | null; secretAccessKey: string | null } | null;
  maxBytes: number;
  perCase: number;
  orgBytes: number;
  maxPixels: number;
  previewPx: number;
  orphanMs: number;
  sweepMs: number;
  /** FLAGSTAFF_MEDIA_THREAD_NICE: the niceness of the inspection and preview threads. */
  threadNice: number;
  /** FLAGSTAFF_ATTACHMENT_BUSY_BYTES_PER_S: uploads' bytes a second while the server is busy (0: unpaced). */
  busyBytesPerSecond: number;
}

export class ConfigError extends Error {}

/**
 * Reads the configuration from the environment. An invalid value throws a ConfigError whose
 * message names every offending variable, so start-up can stop with a clear line.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings mean "unset" for everything but flags, which treat "" as off.
  const cleaned = Object.fromEntries(
    Object.keys(configSchema.shape).map((key) => [key, env[key] === "" ? undefined : env[key]]),
  );
  const parsed = configSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (issue) => `  ${String(issue.path[0])}=${JSON.stringify(env[String(issue.path[0])])}: ${issue.message}`,
    );
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const c = parsed.data;
  // Two processes on one SQLite file would both write it, each believing itself its only writer.
  if (c.FLAGSTAFF_REUSE_PORT && !c.FLAGSTAFF_DATABASE_URL) {
    throw new ConfigError(
      "Invalid configuration:\n  FLAGSTAFF_REUSE_PORT=1: instances share a port only on PostgreSQL (set FLAGSTAFF_DATABASE_URL); on SQLite one process serves its database",
    );
  }
  // A job lease shorter than a webhook attempt would hand a slow delivery to a second worker.
  if (c.FLAGSTAFF_JOB_LEASE_MS <= c.FLAGSTAFF_WEBHOOK_TIMEOUT_MS) {
    throw new ConfigError(
      `Invalid configuration:\n  FLAGSTAFF_JOB_LEASE_MS=${c.FLAGSTAFF_JOB_LEASE_MS}: must be longer than FLAGSTAFF_WEBHOOK_TIMEOUT_MS (${c.FLAGSTAFF_WEBHOOK_TIMEOUT_MS})`,
    );
  }
  return {
    port: c.PORT,
    host: c.HOST,
    reusePort: c.FLAGSTAFF_REUSE_PORT,
    shutdownDrainMs: c.FLAGSTAFF_SHUTDOWN_DRAIN_MS,
    dbPath: c.FLAGSTAFF_DB,
    databaseUrl: c.FLAGSTAFF_DATABASE_URL ?? null,
    databasePool: c.FLAGSTAFF_DATABASE_POOL,
    databaseStatementTimeoutMs: c.FLAGSTAFF_DB_STATEMENT_TIMEOUT_MS,
    ollamaHost: c.OLLAMA_HOST,
    aiModel: c.FLAGSTAFF_AI_MODEL,
    aiShadowModel: c.FLAGSTAFF_AI_SHADOW_MODEL ?? null,
    aiTimeoutMs: c.FLAGSTAFF_AI_TIMEOUT_MS,
    aiWindow: c.FLAGSTAFF_AI_WINDOW,
    reportRateLimit: c.FLAGSTAFF_REPORT_RATE_LIMIT,
    scanAllowPrivate: c.FLAGSTAFF_SCAN_ALLOW_PRIVATE,
    scanTimeoutMs: c.FLAGSTAFF_SCAN_TIMEOUT_MS,
    logLevel: c.FLAGSTAFF_LOG_LEVEL,
    maxBodyBytes: c.FLAGSTAFF_MAX_BODY_BYTES,
    clockOffsetMs: c.FLAGSTAFF_CLOCK_OFFSET_MS,
    jobs: {
      concurrency: c.FLAGSTAFF_JOB_CONCURRENCY,
      leaseMs: c.FLAGSTAFF_JOB_LEASE_MS,
      pollMs: c.FLAGSTAFF_JOB_POLL_MS,
      backoffBaseMs: c.FLAGSTAFF_JOB_BACKOFF_MS,
      backoffCapMs: c.FLAGSTAFF_JOB_BACKOFF_CAP_MS,
    },
    laneSlots: { webhooks: c.FLAGSTAFF_WEBHOOK_CONCURRENCY, enrichment: c.FLAGSTAFF_AI_CONCURRENCY, linkScans: c.FLAGSTAFF_SCAN_CONCURRENCY, evaluation: c.FLAGSTAFF_EVAL_CONCURRENCY, previews: c.FLAGSTAFF_PREVIEW_CONCURRENCY },
    enrichBacklogMax: c.FLAGSTAFF_ENRICH_BACKLOG_MAX,
    enrichCatchUpMs: c.FLAGSTAFF_ENRICH_CATCH_UP_MS,
    aiReuseWindowMs: c.FLAGSTAFF_AI_REUSE_WINDOW_MS,
    retention: {
      jobsMs: c.FLAGSTAFF_RETENTION_JOBS_MS,
      deadJobsMs: c.FLAGSTAFF_RETENTION_DEAD_JOBS_MS,
      webhooksMs: c.FLAGSTAFF_RETENTION_WEBHOOKS_MS,
      ruleHitsMs: c.FLAGSTAFF_RETENTION_RULE_HITS_MS,
      tickMs: c.FLAGSTAFF_RETENTION_TICK_MS,
      batch: c.FLAGSTAFF_RETENTION_BATCH,
    },
    enrichMaxAttempts: c.FLAGSTAFF_ENRICH_MAX_ATTEMPTS,
    webhooks: {
      timeoutMs: c.FLAGSTAFF_WEBHOOK_TIMEOUT_MS,
      retryScale: c.FLAGSTAFF_WEBHOOK_RETRY_SCALE,
      disableAfterMs: c.FLAGSTAFF_WEBHOOK_DISABLE_AFTER_MS,
    },
    enforcementTickMs: c.FLAGSTAFF_ENFORCEMENT_TICK_MS,
    transparencyTickMs: c.FLAGSTAFF_TRANSPARENCY_TICK_MS,
    slaTickMs: c.FLAGSTAFF_SLA_TICK_MS,
    auditCheckpointMs: c.FLAGSTAFF_AUDIT_CHECKPOINT_MS,
    auditChainLanes: c.FLAGSTAFF_AUDIT_CHAIN_LANES,
    dev: c.FLAGSTAFF_DEV,
    trustedProxies: c.FLAGSTAFF_TRUSTED_PROXIES,
    metricsToken: c.FLAGSTAFF_METRICS_TOKEN ?? null,
    holdingLimits: { rules: c.FLAGSTAFF_MAX_RULES, webhookEndpoints: c.FLAGSTAFF_MAX_WEBHOOK_ENDPOINTS, categories: c.FLAGSTAFF_MAX_CATEGORIES },
    attachments: {
      dir: c.FLAGSTAFF_ATTACHMENTS_DIR ?? join(dirname(c.FLAGSTAFF_DB), "attachments"),
      dirConfigured: c.FLAGSTAFF_ATTACHMENTS_DIR !== undefined,
      s3: c.FLAGSTAFF_S3_BUCKET
        ? {
            bucket: c.FLAGSTAFF_S3_BUCKET,
            endpoint: c.FLAGSTAFF_S3_ENDPOINT ?? null,
            region: c.FLAGSTAFF_S3_REGION ?? null,
            accessKeyId: c.FLAGSTAFF_S3_ACCESS_KEY_ID ?? null,
            secretAccessKey: c.FLAGSTAFF_S3_SECRET_ACCESS_KEY ?? null,
          }
        : null,
      maxBytes: c.FLAGSTAFF_ATTACHMENT_MAX_BYTES,
      perCase: c.FLAGSTAFF_ATTACHMENTS_PER_CASE,
      orgBytes: c.FLAGSTAFF_ATTACHMENT_ORG_BYTES,
      maxPixels: c.FLAGSTAFF_ATTACHMENT_MAX_PIXELS,
      previewPx: c.FLAGSTAFF_ATTACHMENT_PREVIEW_PX,
      orphanMs: c.FLAGSTAFF_ATTACHMENT_ORPHAN_MS,
      sweepMs: c.FLAGSTAFF_ATTACHMENT_SWEEP_MS,
      threadNice: c.FLAGSTAFF_MEDIA_THREAD_NICE,
      busyBytesPerSecond: c.FLAGSTAFF_ATTACHMENT_BUSY_BYTES_PER_S,
    },
    video: {
      ffmpegPath: c.FLAGSTAFF_FFMPEG_PATH ?? null,
      maxSeconds: c.FLAGSTAFF_VIDEO_MAX_SECONDS,
      timeoutMs: c.FLAGSTAFF_VIDEO_TIMEOUT_MS,
      concurrency: c.FLAGSTAFF_VIDEO_CONCURRENCY,
    },
    mediaCheck: { batch: c.FLAGSTAFF_MEDIA_CHECK_BATCH, pauseMs: c.FLAGSTAFF_MEDIA_CHECK_PAUSE_MS },
  };
}
