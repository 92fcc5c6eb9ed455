/**
 * An evaluation run of 1,000 items against the fake Ollama (issue 28): its wall time, the
 * server's peak RSS, and report intake (POST /reports at 32 connections, wrk) while the run goes
 * on, beside intake with no run. Figures only: it never fails because of a figure.
 *
 *   bun scripts/bench/eval-run.ts [--items 1000] [--delay-ms 5] [--seconds 10]
 *
 * --delay-ms  how long the fake model takes per answer (a real one: hundreds of ms).
 * AI enrichment is off in the project (the run's lane alone calls the model), so intake measures
 * what the run costs the server, not the model's shared capacity.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startFakeOllama } from "../fake-ollama.ts";
import { ensureWrk, fmtInt, markdownTable, ROOT, run, sampleRss, startServer, wrk } from "./lib.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: { items: { type: "string", default: "1000" }, "delay-ms": { type: "string", default: "5" }, seconds: { type: "string", default: "10" } },
});
const ITEMS = Number(args.items);
const DELAY = Number(args["delay-ms"]);
const SECONDS = Number(args.seconds);
const log = (s: string) => process.stderr.write(`${s}\n`);

const dir = mkdtempSync(join(tmpdir(), "flagstaff-eval-bench-"));
const fake = startFakeOllama();
fake.setDefault(() => ({ json: { reasoning: "Scripted.", categories: ["spam"], severity: "MEDIUM", confidence: 80 }, delayMs: DELAY }));
const env = {
  ...(process.env as Record<string, string>),
  FLAGSTAFF_DB: join(dir, "flagstaff.db"),
  PORT: "0",
  HOST: "127.0.0.1",
  OLLAMA_HOST: fake.url,
  FLAGSTAFF_LOG_LEVEL: "warn",
  FLAGSTAFF_REPORT_RATE_LIMIT: "1000000",
  FLAGSTAFF_JOB_POLL_MS: "100",
};
const cli = [process.execPath, join(ROOT, "src", "cli.ts")];

try {
  const wrkBin = await ensureWrk(log);
  const init = JSON.parse(await run([...cli, "init", "--json", "--org", "Bench"], env)) as { orgSlug: string; projectId: string; secretKey: string };
  const server = await startServer([...cli, "serve"], env);
  const keyEnv = { KEY: init.secretKey, PROJECT: init.projectId };
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}/api/v1/organizations/${init.orgSlug}/projects/${init.projectId}${path}`, {
      method,
      headers: { authorization: `Bearer ${init.secretKey}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<{ set: { id: string; items: number }; run: { id: string; status: string; itemsDone: number } }>;
  };
  try {
    log("warm-up, then intake with no run");
    await wrk(wrkBin, { url: server.url, connections: 32, seconds: 3, script: "report.lua", env: keyEnv });
    const idle = await wrk(wrkBin, { url: server.url, connections: 32, seconds: SECONDS, script: "report.lua", env: keyEnv });

    const content = Array.from({ length: ITEMS }, (_, i) => JSON.stringify({ text: `Benchmark item ${i}: buy cheap followers now`, categories: i % 2 ? ["spam"] : [] })).join("\n");
    const { set } = await api("POST", "/evaluation-sets/import", { name: "Bench", format: "jsonl", content });
    log(`set of ${set.items} items; starting the run, with intake at the same time`);
    const rss = sampleRss(server.proc.pid);
    const started = performance.now();
    const { run: r } = await api("POST", "/evaluation-runs", { setId: set.id });
    const during = await wrk(wrkBin, { url: server.url, connections: 32, seconds: SECONDS, script: "report.lua", env: keyEnv });
    const doneAtIntakeEnd = (await api("GET", `/evaluation-runs/${r.id}`)).run.itemsDone as number;
    let finished: { status: string };
    for (;;) {
      finished = (await api("GET", `/evaluation-runs/${r.id}`)).run;
      if (finished.status !== "queued" && finished.status !== "running") break;
      await Bun.sleep(100);
    }
    const wallMs = performance.now() - started;
    const peak = rss.stop();
    log("the same set again, with no intake load");
    const quietStart = performance.now();
    const { run: quiet } = await api("POST", "/evaluation-runs", { setId: set.id });
    for (;;) {
      const q = (await api("GET", `/evaluation-runs/${quiet.id}`)).run;
      if (q.status !== "queued" && q.status !== "running") break;
      await Bun.sleep(100);
    }
    const quietMs = performance.now() - quietStart;
    console.log(
      markdownTable(
        ["figure", "value"],
        [
          ["items", fmtInt(ITEMS)],
          ["fake model delay per answer", `${DELAY} ms`],
          ["run status", finished.status],
          ["run wall time (start → completed)", `${(wallMs / 1000).toFixed(2)} s`],
          ["items done when the intake load ended", `${doneAtIntakeEnd} of ${ITEMS}`],
          ["run wall time with no intake load", `${(quietMs / 1000).toFixed(2)} s`],
          ["server peak RSS during the run", `${peak.toFixed(0)} MB`],
          ["intake, no run (req/s, c=32)", fmtInt(idle.rps)],
          ["intake during the run (req/s, c=32)", fmtInt(during.rps)],
          ["intake ratio (during / none)", (during.rps / idle.rps).toFixed(2)],
          ["intake p99 no run / during (ms)", `${idle.latencyMs.p99} / ${during.latencyMs.p99}`],
          ["intake errors (non-2xx, socket) during", `${during.non2xx}, ${during.socketErrors}`],
        ],
      ),
    );
  } finally {
    await server.stop();
  }
} finally {
  await fake.stop();
  rmSync(dir, { recursive: true, force: true });
}
