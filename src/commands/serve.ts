import type { Config } from "../config.ts";
import { startCheckpointer } from "../db/checkpoint.ts";
import { observeJobRun, registerAiGauges, registerLaneGauges } from "../api/metrics.ts";
import { setModelSlots } from "../domain/analysis/model-meter.ts";
import { startEnrichmentCatchUp } from "../jobs/enrichment-jobs.ts";
import { setBacklogBounds } from "../domain/plumbing/jobs.ts";
import { errorFields, log } from "../log.ts";
import { createApp } from "../server.ts";
import { databaseFault } from "../db/faults.ts";
import { redact } from "../db/open.ts";
import { createServices } from "../services.ts";
import { startExpiryScheduler } from "../jobs/enforcement-jobs.ts";
import { startSubmissionScheduler } from "../jobs/transparency-jobs.ts";
import { backlogBounds, jobLanes } from "../jobs/job-specs.ts";
import { startRetention } from "../jobs/retention.ts";
import { startBreachScheduler } from "../jobs/service-level-jobs.ts";
import { startAuditCheckpoints } from "../jobs/audit-jobs.ts";
import { loadAuditSigningKey } from "../domain/review/audit-chain.ts";
import { startWorkers } from "../jobs/worker.ts";
import { VERSION } from "../version.ts";
import { bootstrapIfEmpty, formatInitBanner } from "./init.ts";

/** How long requests in flight may take to finish once SIGTERM came. */
const SHUTDOWN_GRACE_MS = 20_000;

/**
 * Migrates, bootstraps an empty database (printing its keys once), then serves until SIGTERM
 * or SIGINT, when it stops accepting, lets requests in flight finish, and closes the database.
 */
export async function serve(config: Config): Promise<void> {
  // Read before anything starts: a key that cannot be read stops the start (exit 2).
  const auditKey = loadAuditSigningKey();
  const services = await createServices(config);
  // On an empty database, the demo organization (one, however many instances start together).
  const bootstrap = await bootstrapIfEmpty(services);

  // The workers register with the store: whatever enqueues a job wakes them once its
  // transaction committed (src/db/store.ts).
  // One lane per job kind, each with its handler and slots; optional work past its backlog
  // bound is skipped (JOB_SPECS, src/jobs/job-specs.ts).
  setBacklogBounds(services.store, backlogBounds(config));
  // The model's capacity is measured against the requests the enrichment lane sends at once (docs/ai.md, "Sizing").
  setModelSlots(services.store, config.laneSlots.enrichment);
  const workers = startWorkers(services.store, services.clock, jobLanes(services), { ...config.jobs, onJobRun: observeJobRun });
  registerLaneGauges(services, () => workers.lanes());
  registerAiGauges(services);
  // Once across instances (on PostgreSQL, the instance holding its advisory lock).
  const expiry = services.store.singleton("enforcement-expiry", () => startExpiryScheduler(services));
  const transparency = services.store.singleton("transparency-submission", () => startSubmissionScheduler(services));
  const retention = services.store.singleton("retention", () => startRetention(services));
  const breaches = services.store.singleton("sla-breaches", () => startBreachScheduler(services));
  const auditCheckpoints = services.store.singleton("audit-checkpoints", () => startAuditCheckpoints(services, auditKey));
  // Skipped enrichment taken again as the lane has room, or expired (src/jobs/enrichment-jobs.ts).
  const catchUp = services.store.singleton("enrichment-catch-up", () => startEnrichmentCatchUp(services));
  if (auditKey) log.info("audit checkpoints on", { publicKey: auditKey.publicKeyBase64, everyMs: config.auditCheckpointMs });
  else log.warn("audit checkpoints are off: no FLAGSTAFF_AUDIT_SIGNING_KEY or FLAGSTAFF_AUDIT_SIGNING_KEY_FILE (the chain is still written and verifiable; docs/audit.md)");

  // SQLite: WAL checkpoints (and their fsyncs) run on a thread of their own (src/db/checkpoint.ts).
  const checkpointer = services.store.file !== null ? startCheckpointer(services.store.writer, services.store.file) : null;

  let stopping = false;
  const app = createApp(services, { isDraining: () => stopping });
  app.listen({ port: config.port, hostname: config.host });
  const server = app.server;
  if (!server) throw new Error("server did not start");
  const shownHost = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  const baseUrl = `http://${shownHost}:${server.port}`;

  if (bootstrap) process.stdout.write(formatInitBanner(bootstrap, baseUrl) + "\n");
  // Tests and scripts wait for this exact line to learn the port.
  process.stdout.write(`Flagstaff listening on ${baseUrl}\n`);
  log.info("listening", { url: baseUrl, version: VERSION, engine: services.store.engine, db: services.store.file ?? redact(config.databaseUrl ?? "") });

  // Graceful shutdown (docs/operations.md): /readyz turns 503; the listener closes (idle
  // keep-alive connections at once); requests in flight finish, for up to SHUTDOWN_GRACE_MS;
  // running jobs finish and the leases of the others are released; a last checkpoint; the
  // database closes. A second signal, or a shutdown that hangs, ends the process at once.
  const shutdown = async (signal: string) => {
    if (stopping) {
      log.warn("second signal: exiting now", { signal });
      process.exit(1);
    }
    stopping = true;
    log.info("shutting down", { signal, requestsInFlight: server.pendingRequests });
    setTimeout(() => {
      log.error("shutdown did not finish in time: exiting");
      process.exit(1);
    }, SHUTDOWN_GRACE_MS + 15_000);
    let code = 0;
    try {
      const drained = await Promise.race([server.stop(false).then(() => true), Bun.sleep(SHUTDOWN_GRACE_MS).then(() => false)]);
      if (!drained) {
        log.warn("requests still in flight after the grace period: closing their connections", { requestsInFlight: server.pendingRequests });
        await server.stop(true);
      }
      await expiry.stop();
      await transparency.stop();
      await retention.stop();
      await breaches.stop();
      await auditCheckpoints.stop();
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
}
