/**
 * An evaluation run survives a crash (issue 28): the server is killed with SIGKILL mid-run, a new
 * server on the same database resumes the run to completion, and no item whose answer had been
 * stored before the kill is sent to the model again.
 *
 * The fake Ollama runs in this process, so it outlives the server and records every request.
 * What is asserted about the request in flight at the kill: the items answered and stored before
 * the kill (read back from the finished run: they are the first `doneAtKill` items in the set's
 * order, as the lane has one slot and works items in order) are asked exactly once over the
 * whole run; every other item is asked once after the restart; and the only item asked twice,
 * if any, is the one whose request the fake had received last before the kill (in flight: asked,
 * its answer not yet stored). The model answered each item once: the fake answers only a client
 * still connected, as Ollama stops generating when its client goes away.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { classifiedText, startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import { withKey } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

let fake: FakeOllama;
let server: TestServer;

const N = 12;
const texts = Array.from({ length: N }, (_, i) => `Item number ${i + 1} of the resumed run`);

beforeAll(async () => {
  fake = startFakeOllama();
  // Slow enough to kill the server between two answers.
  fake.setDefault(() => ({ json: { reasoning: "Scripted.", categories: ["spam"], severity: "MEDIUM", confidence: 80 }, delayMs: 150 }));
  server = await startServer({
    OLLAMA_HOST: fake.url,
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

test("a run whose server was killed (SIGKILL) mid-run resumes on a new server, no stored answer asked again", async () => {
  const at = { orgSlug: server.demo.orgSlug, projectId: server.demo.projectId };
  const content = texts.map((text) => JSON.stringify({ text, categories: ["spam"] })).join("\n");
  const { set } = await withKey(server).trpc.evaluation.importSet.mutate({ ...at, name: "Resume", format: "jsonl", content });
  const { run } = await withKey(server).trpc.evaluation.startRun.mutate({ ...at, setId: set.id });

  await until("a few items done", async () => (await withKey(server).trpc.evaluation.run.query({ ...at, runId: run.id })).run.itemsDone >= 3);
  await server.kill();
  const askedBeforeKill = fake.requests.map(classifiedText);
  const inFlight = askedBeforeKill.at(-1);

  await server.start();
  const done = await until(
    "the run to complete after the restart",
    async () => {
      const r = (await withKey(server).trpc.evaluation.run.query({ ...at, runId: run.id })).run;
      return r.status === "completed" ? r : null;
    },
    30_000,
  );
  expect(done.itemsDone).toBe(N);
  expect(done.metrics!.items).toBe(N);
  expect(done.metrics!.failedItems).toBe(0);

  const asked = fake.requests.map(classifiedText);
  const times = (t: string) => asked.filter((a) => a === t).length;
  // Every item was asked; none more than twice; only the request in flight at the kill twice.
  for (const t of texts) expect(times(t)).toBeGreaterThanOrEqual(1);
  const twice = texts.filter((t) => times(t) > 1);
  expect(twice.length).toBeLessThanOrEqual(1);
  if (twice.length === 1) expect(twice[0]).toBe(inFlight);
  // The items asked before the kill other than the one in flight had their answers stored: asked once.
  for (const t of askedBeforeKill.slice(0, -1)) expect(times(t)).toBe(1);
  expect(askedBeforeKill.length).toBeGreaterThanOrEqual(3);
  expect(askedBeforeKill.length).toBeLessThan(N);
  // After the restart, nothing asked before the kill was asked again but the one in flight.
  const afterRestart = asked.slice(askedBeforeKill.length);
  expect(afterRestart.filter((t) => askedBeforeKill.includes(t) && t !== inFlight)).toEqual([]);
  // And the model answered every item exactly once: the request in flight at the kill lost its
  // client before its answer was ready (the fake, like Ollama, drops the work of a client gone).
  const answered = fake.answered.map(classifiedText);
  expect([...answered].sort()).toEqual([...texts].sort());
}, 60_000);
