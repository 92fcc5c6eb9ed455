import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import { until } from "./helpers/wait.ts";
import { expectRefused, withKey } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let fake: FakeOllama;
let server: TestServer;

beforeAll(async () => {
  fake = startFakeOllama();
  server = await startServer({
    OLLAMA_HOST: fake.url,
    FLAGSTAFF_AI_TIMEOUT_MS: "10000",
    FLAGSTAFF_JOB_LEASE_MS: "1500",
    FLAGSTAFF_WEBHOOK_TIMEOUT_MS: "1000",
    FLAGSTAFF_JOB_POLL_MS: "100",
    FLAGSTAFF_JOB_BACKOFF_MS: "100",
  });
});
afterAll(async () => {
  await server.dispose();
  await fake.stop();
});


test("a job leased by a server killed with SIGKILL completes after restart, exactly once", async () => {
  const settings = `/api/v1/organizations/${server.demo.orgSlug}/projects/${server.demo.projectId}/settings`;
  expect((await server.call("PATCH", settings, { body: { aiEnabled: true } })).status).toBe(200);

  // The first model call hangs, so the enrichment job is leased and in flight when we kill.
  fake.script({ json: { reasoning: "slow", categories: ["harassment"], severity: "HIGH", confidence: 90 }, delayMs: 5000 });
  const filed = await server.call("POST", `/projects/${server.demo.projectId}/reports`, {
    body: { subject: { type: "user", externalId: "crash-subject" }, description: "mean words", reason: "harassment" },
  });
  expect(filed.status).toBe(201);
  const id = filed.body.report.id;
  await until("the job to reach the model", async () => fake.requests.length === 1);

  await server.kill();
  fake.script({ json: { reasoning: "after restart", categories: ["harassment"], severity: "HIGH", confidence: 85 } });
  await server.start();

  const report = await until("enrichment after restart", async () => {
    const r = (await server.call("GET", `/reports/${id}`)).body.report;
    return r.ai ? r : null;
  });
  expect(report.ai).toMatchObject({ confidence: 85, reasoning: "after restart" });
  expect(report.status).toBe("IN_REVIEW");

  // Give any duplicate run a chance to show itself, then count.
  await Bun.sleep(500);
  const events = (await server.call("GET", `/api/v1/organizations/${server.demo.orgSlug}/audit-events?action=AI_ANALYZED&entityId=${id}`)).body.events;
  expect(events.length).toBe(1);
  const analyses = (await server.call("GET", `/api/v1/organizations/${server.demo.orgSlug}/projects/${server.demo.projectId}/content-analyses`)).body.analyses;
  expect(analyses.filter((a: { reportId: string }) => a.reportId === id).length).toBe(1);
  const { jobs } = await withKey(server).trpc.jobs.list.query({ kind: "report.enrich" });
  expect(jobs.length).toBe(1);
  expect(jobs[0]!.status).toBe("done");
  expect(jobs[0]!.attempts).toBe(2);
});

test("a job that runs out of attempts is dead, visible through tRPC, and can be retried", async () => {
  const down = startFakeOllama();
  const port = down.port;
  await down.stop();
  const s = await startServer({
    OLLAMA_HOST: `http://127.0.0.1:${port}`,
    FLAGSTAFF_ENRICH_MAX_ATTEMPTS: "2",
    FLAGSTAFF_JOB_POLL_MS: "100",
    FLAGSTAFF_JOB_BACKOFF_MS: "50",
    FLAGSTAFF_JOB_BACKOFF_CAP_MS: "100",
  });
  try {
    await s.call("PATCH", `/api/v1/organizations/${s.demo.orgSlug}/projects/${s.demo.projectId}/settings`, { body: { aiEnabled: true } });
    const filed = await s.call("POST", `/projects/${s.demo.projectId}/reports`, {
      body: { subject: { type: "user", externalId: "dead" }, description: "x", reason: "spam" },
    });
    const dead = await until("the job to die", async () => {
      return (await withKey(s).trpc.jobs.list.query({ status: "dead" })).jobs[0];
    });
    expect(dead.attempts).toBe(2);
    expect(dead.lastError).toMatch(/unreachable/);
    expect(dead.payload).toEqual({ reportId: filed.body.report.id });

    // Another organization sees none of these jobs and cannot retry them.
    const other = await s.initOrg("Other Org");
    const theirKey = withKey(s, other.secretKey);
    expect((await theirKey.trpc.jobs.list.query({})).jobs).toEqual([]);
    expect((await theirKey.trpc.jobs.stats.query()).dead).toBe(0);
    await expectRefused(theirKey.trpc.jobs.retry.mutate({ jobId: dead.id }), "NOT_FOUND");

    const back = startFakeOllama({ port });
    try {
      back.script({ json: { reasoning: "ok", categories: ["spam"], severity: "MEDIUM", confidence: 50 } });
      await withKey(s).trpc.jobs.retry.mutate({ jobId: dead.id });
      await until("the retried job to enrich", async () => (await s.call("GET", `/reports/${filed.body.report.id}`)).body.report.ai);
    } finally {
      await back.stop();
    }
  } finally {
    await s.dispose();
  }
});

test("SIGTERM lets a running job finish before the process exits", async () => {
  const s = await startServer({ OLLAMA_HOST: fake.url, FLAGSTAFF_JOB_POLL_MS: "100" });
  try {
    await s.call("PATCH", `/api/v1/organizations/${s.demo.orgSlug}/projects/${s.demo.projectId}/settings`, { body: { aiEnabled: true } });
    fake.reset();
    fake.script({ json: { reasoning: "late", categories: ["spam"], severity: "LOW", confidence: 10 }, delayMs: 800 });
    const filed = await s.call("POST", `/projects/${s.demo.projectId}/reports`, {
      body: { subject: { type: "user", externalId: "drain" }, description: "x", reason: "spam" },
    });
    await until("the job to reach the model", async () => fake.requests.length === 1);
    s.proc!.kill("SIGTERM");
    expect(await s.proc!.exited).toBe(0);
    s.proc = null;
    // Restarted without Ollama answering anything new: the AI fields came from the drained job.
    await s.start();
    const r = (await s.call("GET", `/reports/${filed.body.report.id}`)).body.report;
    expect(r.ai).toMatchObject({ reasoning: "late" });
    expect(fake.requests.length).toBe(1);
  } finally {
    await s.dispose();
  }
});
