/**
 * Enrichment under a burst, through the front door (issue 44): a real server, the fake Ollama
 * answering one request at a time (150 ms each, the rest waiting their turn, like a small model
 * on one GPU), an enrichment lane of one slot bounded at 8 waiting. A burst of reports on new
 * posts, a brigade of copies of one post, then three reports of the emergency class: the lane
 * sheds the least urgent past its bound, never an emergency report, which is analysed before
 * every skipped one; once the burst is over the catch-up takes every skipped enrichment again
 * (no retry by anyone), each distinct content costs one model call, and /metrics and the
 * overview say the model's capacity against what arrived.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import { withKey } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

setDefaultTimeout(120_000);

const BOUND = 8;
const NEW_POSTS = 24;
const BRIGADE = 10;

let fake: FakeOllama;
let server: TestServer;
const filed: { id: string; kind: "post" | "brigade" | "emergency"; at: number }[] = [];
/** The reports whose enrichment was skipped during the burst. */
let skipped: Set<string>;

beforeAll(async () => {
  fake = startFakeOllama({ delayMs: 150, parallel: 1 });
  server = await startServer({
    OLLAMA_HOST: fake.url,
    FLAGSTAFF_REPORT_RATE_LIMIT: "1000000",
    FLAGSTAFF_ENRICH_BACKLOG_MAX: String(BOUND),
    FLAGSTAFF_AI_CONCURRENCY: "1",
    FLAGSTAFF_JOB_POLL_MS: "200",
  });
  const settings = `/api/v1/organizations/${server.demo.orgSlug}/projects/${server.demo.projectId}/settings`;
  expect((await server.call("PATCH", settings, { body: { aiEnabled: true } })).status).toBe(200);

  const report = async (kind: "post" | "brigade" | "emergency", i: number) => {
    const body =
      kind === "brigade"
        ? { target: { contentType: "post", contentExternalId: "brigaded", content: "This post is a lie and so is its author" }, reason: "harassment", reporter: { type: "user", externalId: `brigadier-${i}` } }
        : kind === "emergency"
          ? { target: { contentType: "post", contentExternalId: `urgent-${i}`, content: `urgent words ${i}` }, reason: "child_safety" }
          : { target: { contentType: "post", contentExternalId: `post-${i}`, content: `ordinary words number ${i}` }, reason: "spam" };
    const r = await server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: { ...body, description: "reported in the app" } });
    expect(r.status).toBe(201);
    filed.push({ id: r.body.report.id, kind, at: Date.now() });
  };
  // The burst: new posts and the brigade interleaved, 8 at a time, then the emergency reports.
  const burst: ["post" | "brigade", number][] = [
    ...Array.from({ length: NEW_POSTS }, (_, i) => ["post", i] as ["post", number]),
    ...Array.from({ length: BRIGADE }, (_, i) => ["brigade", i] as ["brigade", number]),
  ].sort((a, b) => (a[1] * 7 + (a[0] === "post" ? 0 : 3)) % 11 - (b[1] * 7 + (b[0] === "post" ? 0 : 3)) % 11);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < burst.length) {
        const [kind, i] = burst[next++]!;
        await report(kind, i);
      }
    }),
  );
  for (let i = 0; i < 3; i++) await report("emergency", i);
  const jobs = await withKey(server).trpc.jobs.list.query({ status: "skipped", kind: "report.enrich", limit: 100 });
  skipped = new Set(jobs.jobs.map((j) => (j.payload as { reportId: string }).reportId));
});
afterAll(async () => {
  await server.dispose();
  await fake.stop();
});

const sdkReport = async (id: string) => {
  const r = await server.call("GET", `/reports/${id}`);
  expect(r.status).toBe(200);
  return r.body.report as { ai: { analyzedAt: string } | null };
};

test("past the bound the least urgent is skipped, never an emergency report; the catch-up then takes every skipped one, each content analysed once", async () => {
  // The burst outran the model: many were skipped, none of the emergency class.
  expect(skipped.size).toBeGreaterThanOrEqual(NEW_POSTS + BRIGADE - 2 * BOUND);
  for (const e of filed.filter((f) => f.kind === "emergency")) expect(skipped.has(e.id)).toBe(false);

  // Nobody retries anything: the catch-up takes them as the lane has room.
  const platform = withKey(server);
  await until("every report enriched", async () => {
    const stats = await platform.trpc.jobs.stats.query();
    return stats.pending === 0 && stats.running === 0 && stats.skipped === 0 ? stats : null;
  }, 90_000);
  const analysed = new Map<string, number>();
  for (const f of filed) {
    const r = await sdkReport(f.id);
    expect(r.ai).not.toBeNull();
    analysed.set(f.id, Date.parse(r.ai!.analyzedAt));
  }
  // The emergency reports, filed last, were analysed before any report skipped in the burst.
  const lastEmergency = Math.max(...filed.filter((f) => f.kind === "emergency").map((f) => analysed.get(f.id)!));
  const firstCaughtUp = Math.min(...[...skipped].map((id) => analysed.get(id)!));
  expect(lastEmergency).toBeLessThan(firstCaughtUp);
  // One model call per distinct content: the brigade's copies reused one analysis.
  expect(fake.answered.length).toBe(NEW_POSTS + 1 + 3);
  expect(fake.load().mostWaiting).toBeLessThanOrEqual(1);
});

test("/metrics and the overview say the model's capacity against what arrived, and what became of the enrichments", async () => {
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(metrics)?.[1] ?? NaN);
  // 150 ms an answer (the model's own time, and the wait for its one slot), one slot: about 6 a second at most.
  expect(value("flagstaff_ai_answer_seconds")).toBeGreaterThanOrEqual(0.15);
  expect(value("flagstaff_ai_capacity_per_second")).toBeGreaterThan(0);
  expect(value("flagstaff_ai_capacity_per_second")).toBeLessThanOrEqual(1 / 0.15);
  expect(value("flagstaff_ai_answers_in_flight")).toBe(0);
  expect(value("flagstaff_ai_arrivals_per_second")).toBeGreaterThan(0);
  expect(value('flagstaff_ai_enrichments_total\\{outcome="analysed"\\}')).toBe(NEW_POSTS + 1 + 3);
  expect(value('flagstaff_ai_enrichments_total\\{outcome="reused"\\}')).toBe(BRIGADE - 1);
  expect(value('flagstaff_ai_enrichments_total\\{outcome="caught_up"\\}')).toBeGreaterThanOrEqual(skipped.size);
  expect(value('flagstaff_ai_enrichments_total\\{outcome="expired"\\}')).toBe(0);
  expect(value('flagstaff_jobs_skipped_total\\{lane="report.enrich",reason="backlog"\\}')).toBeGreaterThanOrEqual(skipped.size);

  const overview = await withKey(server).trpc.dashboard.overview.query({});
  expect(overview.ai).toMatchObject({ slots: 1, skipped: 0, expired: 0, lastHour: { reports: filed.length, withAnalysis: filed.length, contents: NEW_POSTS + 1 + 3, contentsAnalysed: NEW_POSTS + 1 + 3 } });
  expect(overview.ai.summary).toMatch(/^The model analyses about [\d.]+ reports\/s \(1 at a time, 0\.\d\d s each\); [\d.]+\/s arrive; 100 % of distinct contents analysed in the last hour \(100 % of reports\)\.$/);
});
