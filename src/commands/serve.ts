import type { Config } from "../config.ts";
import { setHoldingLimits } from "../domain/core/holding-limits.ts";
import { startCheckpointer } from "../db/checkpoint.ts";
import { observeJobRun, registerAiGauges, registerLaneGauges } from "../api/metrics.ts";
import { setModelSlots } from "../domain/analysis/model-meter.ts";
import { startEnrichmentCatchUp } from "../jobs/enrichment-jobs.ts";
import { setBacklogBounds } from "../domain/plumbing/jobs.ts";
import { errorFields, log } from "../log.ts";
import { createApp, type Lifecycle } from "../server.ts";
import { databaseFault } from "../db/faults.ts";
import { redact } from "../db/open.ts";
import { createServices } from "../services.ts";
import { startExpiryScheduler } from "../jobs/enforcement-jobs.ts";
import { startSubmissionScheduler } from "../jobs/transparency-jobs.ts";
import { backlogBounds, jobLanes } from "../jobs/job-specs.ts";
import { startRetention } from "../jobs/retention.ts";
import { startBreachScheduler } from "../jobs/service-level-jobs.ts";
import { startAuditCheckpoints } from "../jobs/audit-jobs.ts";
import { startAttachmentSweep } from "../jobs/attachment-jobs.ts";
import { loadAuditSigningKey } from "../domain/audit/audit-chain.ts";
import { startWorkers } from "../jobs/worker.ts";
import { setBackgroundThreadNiceness } from "../domain/plumbing/thread-priority.ts";
import { setUploadPacing } from "../domain/attachments/upload-pacing.ts";
import { VERSION } from "../version.ts";
import { resolveFfmpeg } from "../domain/media/video-frames.ts";
import { bootstrapIfEmpty, formatInitBanner } from "./init.ts";

/** How long requests in flight may take to finish once the listener closed. */
const SHUTDOWN_GRACE_MS = 20_000;

/** The port is in use by another process (which did not ask to share it, or this one did not). */
export class PortInUseError extends Error {}

/**
 * Listens on PORT and HOST, alone unless FLAGSTAFF_REUSE_PORT asks to share the port. Elysia
 * asks Bun.serve for SO_REUSEPORT by default, which on Linux lets a second process bind a port
 * in use without an error and take half its connections: `reusePort` is always passed. On a
 * port in use, `cleanup` runs (the database closes) and a PortInUseError says what to do.
 */
async function listen(app: ReturnType<typeof createApp>, config: Config, cleanup: () => Promise<void>) {
  try {
    app.listen({ port: config.port, hostname: config.host, reusePort: config.reusePort });
  } catch (err) {
    if ((err as { code?: string }).code !== "EADDRINUSE") throw err;
    await cleanup();
    throw new PortInUseError(
      `port ${config.port} on ${config.host} is already in use (another Flagstaff, or another program, listens there): ` +
        `stop it or choose another PORT${config.reusePort ? "; FLAGSTAFF_REUSE_PORT shares a port only with processes that ask to share it too" : ". To run several instances on one port on purpose (PostgreSQL only), set FLAGSTAFF_REUSE_PORT=1 on each (docs/operations.md)"}`,
    );
  }
  const server = app.server;
  if (!server) throw new Error("server did not start");
  return server;
}

/**
 * Migrates, takes its port, bootstraps an empty database (printing its keys once), then serves
 * until SIGTERM or SIGINT, when it drains (not ready, still serving), stops accepting, lets
 * requests in flight finish, and closes the database.
 */
export async function serve(config: Config): Promise<void> {
  // Read before anything starts: a key that cannot be read stops the start (exit 2).
  const auditKey = loadAuditSigningKey();
  const services = await createServices(config);
  // How many rules, webhook endpoints and report categories an organization may hold (src/domain/core/holding-limits.ts): before the first request.
  setHoldingLimits(services.store, config.holdingLimits);

  // The port is taken before anything else starts (workers, schedulers, an empty database's
  // first organization): a second instance on a port in use stops here, having done nothing but
  // the migrations (none, on a database already migrated).
  let phase: Lifecycle = "starting";
  const app = createApp(services, { lifecycle: () => phase });
  const server = await listen(app, config, () => services.store.close());

  // On an empty database, the demo organization (one, however many instances start together).
  const bootstrap = await bootstrapIfEmpty(services);

  // The workers register with the store: whatever enqueues a job wakes them once its
  // transaction committed (src/db/store.ts).
  // One lane per job kind, each with its handler and slots; optional work past its backlog
  // bound is skipped (JOB_SPECS, src/jobs/job-specs.ts).
  setBacklogBounds(services.store, backlogBounds(config));
  // The model's capacity is measured against the requests the enrichment lane sends at once (docs/ai.md, "Sizing").
  setModelSlots(services.store, config.laneSlots.enrichment);
  // Uploads' hashing and previews yield to requests on a busy machine (docs/attachments.md, "Sharing the CPU").
  setBackgroundThreadNiceness(config.attachments.threadNice);
  setUploadPacing(config.attachments.busyBytesPerSecond);
  const workers = startWorkers(services.store, services.clock, jobLanes(services), { ...config.jobs, onJobRun: observeJobRun });
  registerLaneGauges(services, () => workers.lanes());
  registerAiGauges(services);
  // Once across instances (on PostgreSQL, the instance holding its advisory lock).
  const expiry = services.store.singleton("enforcement-expiry", () => startExpiryScheduler(services));
  const transparency = services.store.singleton("transparency-submission", () => startSubmissionScheduler(services));
  const retention = services.store.singleton("retention", () => startRetention(services));
  const breaches = services.store.singleton("sla-breaches", () => startBreachScheduler(services));
  const auditCheckpoints = services.store.singleton("audit-checkpoints", () => startAuditCheckpoints(services, auditKey));
  const attachmentSweep = services.store.singleton("attachment-sweep", () => startAttachmentSweep(services));
  // Skipped enrichment taken again as the lane has room, or expired (src/jobs/enrichment-jobs.ts).
  const catchUp = services.store.singleton("enrichment-catch-up", () => startEnrichmentCatchUp(services));
  // Video frames (docs/media.md, "Video"): said once, at start; without ffmpeg video is matched by SHA-256 and MD5 only.
  const ffmpeg = resolveFfmpeg(config.video.ffmpegPath);
  if (ffmpeg) log.info("video frames hashed (vPDQ) with ffmpeg", { ffmpeg, maxSeconds: config.video.maxSeconds });
  else log.warn(`no ffmpeg (${config.video.ffmpegPath ? `FLAGSTAFF_FFMPEG_PATH=${config.video.ffmpegPath} is not an executable file` : "none on the PATH"}): videos are matched by SHA-256 and MD5 only (docs/media.md, "Video")`);
  if (auditKey) log.info("audit checkpoints on", { publicKey: auditKey.publicKeyBase64, everyMs: config.auditCheckpointMs });
  else log.warn("audit checkpoints are off: no FLAGSTAFF_AUDIT_SIGNING_KEY or FLAGSTAFF_AUDIT_SIGNING_KEY_FILE (the chain is still written and verifiable; docs/audit.md)");

  // SQLite: WAL checkpoints (and their fsyncs) run on a thread of their own (src/db/checkpoint.ts).
  const checkpointer = services.store.file !== null ? startCheckpointer(services.store.writer, services.store.file) : null;

  phase = "serving";
  const shownHost = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  const baseUrl = `http://${shownHost}:${server.port}`;

  // Graceful shutdown (docs/operations.md): the drain first, FLAGSTAFF_SHUTDOWN_DRAIN_MS during
  // which /readyz answers 503 and requests are still served (each answer closing its
  // connection), so that a balancer's checks take the instance out while it still answers;
  // a second signal ends the drain early. Then the listener closes (idle keep-alive connections
  // at once); requests in flight finish, for up to SHUTDOWN_GRACE_MS; running jobs finish and
  // the leases of the others are released; a last checkpoint; the database closes. A signal
  // after the drain, or a shutdown that hangs, ends the process at once.
  let endDrain: (() => void) | null = null;
  const shutdown = async (signal: string) => {
    if (endDrain) {
      log.info("second signal: ending the drain now", { signal });
      endDrain();
      endDrain = null;
      return;
    }
    if (phase === "draining") {
      log.warn("another signal after the drain: exiting now", { signal });
      process.exit(1);
    }
    phase = "draining";
    const drainMs = config.shutdownDrainMs;
    log.info("shutting down", { signal, drainMs, requestsInFlight: server.pendingRequests });
    setTimeout(() => {
      log.error("shutdown did not finish in time: exiting");
      process.exit(1);
    }, drainMs + SHUTDOWN_GRACE_MS + 15_000);
    let code = 0;
    try {
      if (drainMs > 0) {
        const drained = Promise.withResolvers<void>();
        endDrain = drained.resolve;
        const timer = setTimeout(drained.resolve, drainMs);
        await drained.promise;
        clearTimeout(timer);
        endDrain = null;
        log.info("drain over: closing the listener", { requestsInFlight: server.pendingRequests });
      }
      const finished = await Promise.race([server.stop(false).then(() => true), Bun.sleep(SHUTDOWN_GRACE_MS).then(() => false)]);
      if (!finished) {
        log.warn("requests still in flight after the grace period: closing their connections", { requestsInFlight: server.pendingRequests });
        await server.stop(true);
      }
      await expiry.stop();
      await transparency.stop();
      await retention.stop();
      await breaches.stop();
      await auditCheckpoints.stop();
      await attachmentSweep.stop();
      await catchUp.stop();
      await workers.drain(10_000); // let running jobs finish, give back the rest
      await checkpointer?.stop();
      await services.store.close(); // the last connections (SQLite: checkpoints and removes the WAL)
      log.info("stopped", { signal });
    } catch (err) {
      log.error("error during shutdown", errorFields(err));
      code = 1;
    }
    process.exit(code);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  // A safety net: a database fault that reached no handler (a query started and never awaited
  // when its connection died) is logged, never the end of the process. Anything else still is.
  process.on("unhandledRejection", (reason) => {
    const fault = databaseFault(reason);
    if (!fault) throw reason;
    log.warn("a database fault no request awaited", { fault, ...errorFields(reason) });
  });

  // Only now, with the signals handled: whoever reads this line may stop the process at once.
  if (bootstrap) process.stdout.write(formatInitBanner(bootstrap, baseUrl) + "\n");
  // Tests and scripts wait for this exact line to learn the port.
  process.stdout.write(`Flagstaff listening on ${baseUrl}\n`);
  log.info("listening", { url: baseUrl, version: VERSION, engine: services.store.engine, db: services.store.file ?? redact(config.databaseUrl ?? ""), reusePort: config.reusePort });
}
