/**
 * Lanes: each job kind is claimed on its own, with its own slots. With a slow model (1 s an
 * answer, the fake Ollama) and thousands of enrichment jobs waiting, an enforcement webhook
 * still reaches its receiver (a loopback server) within seconds; past the enrichment backlog
 * bound, new reports are accepted as ever and their enrichment is skipped with the reason, in
 * the jobs list, /metrics and the dashboard's overview.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import { expectRefused, withKey } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

setDefaultTimeout(120_000);

const REPORTS = 2_500;
const BOUND = 2_000;

let fake: FakeOllama;
let server: TestServer;
let receiver: ReturnType<typeof Bun.serve>;
const received: { at: number; body: { type: string; data: { action?: { id: string } } } }[] = [];

beforeAll(async () => {
  fake = startFakeOllama();
  fake.setDefault(() => ({ delayMs: 1_000 })); // then the keyword heuristic's answer
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      received.push({ at: Date.now(), body: JSON.parse(await req.text()) });
      return new Response("ok");
    },
  });
  server = await startServer({
    OLLAMA_HOST: fake.url,
    FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
    FLAGSTAFF_REPORT_RATE_LIMIT: "1000000",
    FLAGSTAFF_ENRICH_BACKLOG_MAX: String(BOUND),
    FLAGSTAFF_JOB_POLL_MS: "200",
  });
  const settings = `/api/v1/organizations/${server.demo.orgSlug}/projects/${server.demo.projectId}/settings`;
  expect((await server.call("PATCH", settings, { body: { aiEnabled: true } })).status).toBe(200);

  // Thousands of reports, each asking for enrichment, 16 at a time: every one is accepted.
  let next = 0;
  const statuses: number[] = [];
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < REPORTS) {
        const i = next++;
        const r = await server.call("POST", `/projects/${server.demo.projectId}/reports`, {
          body: { subject: { type: "user", externalId: `lane-${i}` }, description: `mean words ${i}`, reason: "harassment" },
        });
        statuses.push(r.status);
      }
    }),
  );
  expect(statuses.filter((s) => s !== 201)).toEqual([]);
});
afterAll(async () => {
  await server.dispose();
  await receiver.stop(true);
  await fake.stop();
});

/** The platform's key, on the dashboard's procedures (tRPC): the job queue and the overview. */
const platform = () => withKey(server);

test("an enforcement webhook arrives within seconds while thousands of enrichment jobs wait for a slow model", async () => {
  const org = `/api/v1/organizations/${server.demo.orgSlug}`;
  const created = await server.call("POST", `${org}/webhook-endpoints`, { body: { url: `http://127.0.0.1:${receiver.port}/hook` } });
  expect(created.status).toBe(201);
  const stats = await platform().trpc.jobs.stats.query();
  expect(stats.pending).toBeGreaterThan(1_000); // the enrichment backlog is there

  const sent = Date.now();
  const action = await server.call("POST", `${org}/projects/${server.demo.projectId}/enforcement-actions`, {
    body: { kind: "suspension", reason: "harassment", durationSeconds: 3600, identity: { type: "user", externalId: "lane-0" } },
  });
  expect(action.status).toBe(201);
  const got = await until(
    "the enforcement_action.created webhook",
    async () => received.find((r) => r.body.type === "enforcement_action.created" && r.body.data.action?.id === action.body.action.id),
    30_000,
  );
  // Delivered while the enrichment backlog still waits, within 5 s of the suspension.
  expect(got.at - sent).toBeLessThan(5_000);
  expect((await platform().trpc.jobs.stats.query()).pending).toBeGreaterThan(1_000);
});

test("past the enrichment backlog bound, reports are still accepted and their enrichment is skipped with the reason, in /metrics and the overview", async () => {
  const skipped = await platform().trpc.jobs.list.query({ status: "skipped", kind: "report.enrich", limit: 100 });
  expect(skipped.jobs.length).toBeGreaterThan(0);
  expect(skipped.jobs[0]!.lastError).toContain("backlog bound");
  // About REPORTS - BOUND were skipped (the lane drained a few meanwhile, at 2 a second).
  const stats = await platform().trpc.jobs.stats.query();
  expect(stats.skipped).toBeGreaterThanOrEqual(REPORTS - BOUND - 100);
  // One enrichment job per report (queued or skipped), and the webhook delivery of the test before.
  expect(stats.pending + stats.running + stats.done + stats.skipped).toBe(REPORTS + 1);

  // The drain estimate comes once a lane's first job ran (the model takes a second).
  let metrics = "";
  await until("the enrichment lane's drain estimate", async () => {
    metrics = await (await fetch(`${server.url}/metrics`)).text();
    return /^flagstaff_job_lane_drain_seconds\{lane="report.enrich"\} \d+/m.test(metrics);
  }, 15_000);
  expect(metrics).toMatch(new RegExp(`^flagstaff_jobs_skipped_total\\{lane="report.enrich",reason="backlog"\\} ${stats.skipped}$`, "m"));
  expect(metrics).toMatch(/^flagstaff_job_lane_depth\{lane="report.enrich",status="pending"\} \d{4}$/m);
  expect(metrics).toMatch(/^flagstaff_job_lane_depth\{lane="webhook.deliver",status="pending"\} 0$/m);
  expect(metrics).toMatch(/^flagstaff_job_lane_slots\{lane="report.enrich"\} 2$/m);
  expect(metrics).toMatch(/^flagstaff_job_lane_slots\{lane="webhook.deliver"\} 8$/m);
  // Waiting for some time now (a positive age: how long depends on this machine's pace).
  expect(metrics).toMatch(/^flagstaff_job_lane_oldest_age_seconds\{lane="report.enrich"\} (?:0\.\d*[1-9]|[1-9])/m);
  expect(metrics).toMatch(/^flagstaff_job_lane_drain_seconds\{lane="report.enrich"\} \d+/m);

  // The overview warns: enrichment is behind and skipping.
  const overview = await platform().trpc.dashboard.overview.query({});
  const enrich = overview.backlog.lanes.find((l) => l.lane === "report.enrich");
  expect(enrich).toMatchObject({ skipping: true });
  expect(enrich!.pending).toBeGreaterThan(1_000);
  expect(overview.backlog.warning).toContain("AI enrichment");
});

test("a skipped enrichment can be retried by an admin: it is back in its lane", async () => {
  const before = await platform().trpc.jobs.stats.query();
  const [job] = (await platform().trpc.jobs.list.query({ status: "skipped", kind: "report.enrich", limit: 1 })).jobs;
  await platform().trpc.jobs.retry.mutate({ jobId: job!.id });
  expect((await platform().trpc.jobs.stats.query()).skipped).toBe(before.skipped - 1);
  // A pending job is not retried.
  await expectRefused(platform().trpc.jobs.retry.mutate({ jobId: job!.id }), "NOT_FOUND");
});
