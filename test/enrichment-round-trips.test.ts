/**
 * What one AI enrichment job costs PostgreSQL, counted by scripts/pg-proxy.ts between the store
 * and the database (a round trip: a client→server flight that follows a server→client one):
 * its claim, the read of what it needs, the transaction that writes its result with its case's
 * changes, and its completion. Issue 44 found about 21; the goal is at most 6. The job runs
 * through the functions the worker pool runs (claimJobs, the kind's handler in JOB_SPECS,
 * completeJobs) on warm connections, the model being the fake Ollama.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import type { PgProxy } from "../scripts/pg-proxy.ts";
import { loadConfig } from "../src/config.ts";
import type { Store } from "../src/db/store.ts";
import { updateAiSettings } from "../src/domain/accounts/settings.ts";
import { requireProject } from "../src/domain/accounts/projects.ts";
import { systemActor } from "../src/domain/core/audit.ts";
import { domainContext, type DomainContext } from "../src/domain/core/context.ts";
import { createReport } from "../src/domain/intake/reports.ts";
import { claimJobs, completeJobs } from "../src/domain/plumbing/jobs.ts";
import { JOB_KIND } from "../src/domain/views/job.ts";
import { JOB_SPECS } from "../src/jobs/job-specs.ts";
import { fakeClock } from "./helpers/builders.ts";
import { organizationThroughProxy, TEST_PG_URL } from "./helpers/pg.ts";

describe.skipIf(!TEST_PG_URL)("round trips of one enrichment job (PostgreSQL)", () => {
  let fake: FakeOllama;
  let proxy: PgProxy;
  let store: Store;
  let close: (() => Promise<void>) | undefined;
  let platform: DomainContext;
  let projectId: string;
  const clock = fakeClock(Date.now());
  let serial = 0;

  beforeAll(async () => {
    fake = startFakeOllama();
    const org = await organizationThroughProxy("Trips", clock);
    ({ store, proxy, projectId, close } = org);
    const admin = domainContext(store, clock, systemActor, org.orgId);
    await updateAiSettings(admin, { projectId, patch: { aiEnabled: true, aiThreshold: 70 } });
    platform = domainContext(store, clock, { type: "api_key", id: null }, org.orgId);
  });
  afterAll(async () => {
    await close?.();
    await fake?.stop();
  });

  const deps = () => ({ store, clock, config: { ...loadConfig({}), ollamaHost: fake.url, aiModel: "llama3.2", aiTimeoutMs: 5_000 } });

  /** Files a report on a new target (its enrichment job waits). */
  async function fileReport(text: string, reason = "harassment"): Promise<string> {
    const project = await requireProject(platform, projectId);
    const n = ++serial;
    const created = await createReport(platform, {
      project,
      reasonNames: [reason],
      subject: { type: "user", externalId: `trips-${n}` },
      target: { contentType: "post", contentExternalId: `trips-post-${n}`, content: text },
      description: "reported from the app",
      automated: false,
    });
    return created.report.id;
  }

  const ctx = () => ({ store, db: store.db, clock });
  const handle = async (job: { payload: string }) => JOB_SPECS[JOB_KIND.enrich].handle(deps(), JSON.parse(job.payload), job as never);

  /** Claims, runs and completes the lane's next `n` jobs together, as the worker pool does with `n` free slots. */
  async function runJobs(n = 1): Promise<void> {
    const claimed = await claimJobs(ctx(), { kind: JOB_KIND.enrich, workerId: "w-trips", leaseMs: 60_000, limit: n });
    expect(claimed).toHaveLength(n);
    await Promise.all(claimed.map(handle));
    await completeJobs(ctx(), { ids: claimed.map((j) => j.id), workerId: "w-trips" });
  }

  /** The round trips of running the lane's next `n` jobs. */
  async function tripsOf(n = 1): Promise<number> {
    proxy.resetStats();
    await runJobs(n);
    return proxy.stats().roundTrips;
  }

  test("an enrichment job costs at most 6 round trips: its claim, its read, its transaction (BEGIN, the lock, the writes with the COMMIT), its completion", async () => {
    // Warm: the pool's connections are open and every statement is prepared on them (the first
    // use of a statement on a connection costs a round trip more: Parse and Describe).
    for (let i = 0; i < 8; i++) {
      await fileReport(i % 2 ? `warming words ${i}` : `I will kill you ${i}`);
      await fileReport(i % 2 ? `more warming words ${i}` : `I will kill them ${i}`);
      await runJobs(i < 4 ? 2 : 1);
      if (i >= 4) await runJobs();
    }

    // The model answers CRITICAL: the report and its case go into review, the case to the emergency bucket.
    await fileReport("I will kill you tomorrow");
    const escalated = await tripsOf();
    // The model answers LOW: nothing moves.
    await fileReport("a kind word");
    const quiet = await tripsOf();
    // The same content again, on another post: the analysis is reused, no model call.
    const asked = fake.requests.length;
    await fileReport("I will kill you tomorrow");
    const reused = await tripsOf();
    expect(fake.requests.length).toBe(asked);
    console.log(`round trips of one enrichment job: ${escalated} (the model's answer escalates), ${quiet} (nothing moves), ${reused} (a reused analysis escalates)`);
    expect(escalated).toBeLessThanOrEqual(6);
    expect(quiet).toBeLessThanOrEqual(6);
    expect(reused).toBeLessThanOrEqual(6);
  });

  test("jobs in hand together share their claim and their completion", async () => {
    await fileReport("I will kill them all");
    await fileReport("some other words");
    const two = await tripsOf(2);
    console.log(`round trips of two enrichment jobs claimed and completed together: ${two}`);
    // One claim, two reads and two transactions side by side, one completion.
    expect(two).toBeLessThanOrEqual(1 + 2 * 4 + 1);
  });
});
