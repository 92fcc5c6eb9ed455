import type { Config } from "../config.ts";
import { organizations } from "../db/schema.ts";
import { errorFields, log } from "../log.ts";
import { createApp } from "../server.ts";
import { createServices } from "../services.ts";
import { startExpiryScheduler } from "../jobs/enforcement-jobs.ts";
import { jobHandlers } from "../jobs/handlers.ts";
import { startWorkers } from "../jobs/worker.ts";
import { formatInitBanner, initOrganization } from "./init.ts";

/**
 * Migrates, bootstraps an empty database (printing its keys once), then serves until SIGTERM
 * or SIGINT, when it stops accepting, lets requests in flight finish, and closes the database.
 */
export async function serve(config: Config): Promise<void> {
  const services = createServices(config);
  const isEmpty = services.db.select({ id: organizations.id }).from(organizations).limit(1).all().length === 0;
  const bootstrap = isEmpty ? await initOrganization(services.db, services.clock) : null;

  const workers = startWorkers(services.db, services.clock, jobHandlers(services), config.jobs);
  services.jobs = workers;
  const expiry = startExpiryScheduler(services);

  const app = createApp(services);
  app.listen({ port: config.port, hostname: config.host });
  const server = app.server;
  if (!server) throw new Error("server did not start");
  const shownHost = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  const baseUrl = `http://${shownHost}:${server.port}`;

  if (bootstrap) process.stdout.write(formatInitBanner(bootstrap, baseUrl) + "\n");
  // Tests and scripts wait for this exact line to learn the port.
  process.stdout.write(`Flagstaff listening on ${baseUrl}\n`);
  log.info("listening", { url: baseUrl, db: config.dbPath });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal });
    try {
      await server.stop(false); // stop accepting; requests in flight finish
      expiry.stop();
      await workers.drain(10_000); // let running jobs finish, give back the rest
      services.db.$client.close();
    } catch (err) {
      log.error("error during shutdown", errorFields(err));
    }
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}
