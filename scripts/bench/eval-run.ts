/**
 * `bun run bench:eval`: an evaluation run of 1,000 items against the fake Ollama (issue 28): its
 * wall time, the server's RSS and CPU per item, and report intake throughput during a run beside
 * intake with no run, printed as markdown tables (figures only: it never fails because of a ratio).
 *
 *   bun scripts/bench/eval-run.ts [--items 1000] [--delay-ms 30] [--parallel 2] [--rounds 2] [--postgres]
 *                                 [--eval-concurrency N] [--source] [--max-run-seconds 600]
 *
 * 1. The fake Ollama (scripts/fake-ollama.ts) runs as a process of its own on loopback, so its
 *    CPU is not the server's; every answer waits `--delay-ms` first, a stand-in for a model's time
 *    per answer, then comes from its keyword heuristic; it answers `--parallel` requests at once
 *    (2, like a small model on one GPU), the others waiting their turn.
 * 2. One Flagstaff server, the compiled binary (built into a temporary folder, as a self-hoster
 *    runs it; `--source` runs `bun src/cli.ts` instead), on a fresh SQLite database made by
 *    `flagstaff init` (`--postgres`: a throwaway PostgreSQL cluster, scripts/pg-cluster.ts),
 *    with OLLAMA_HOST at the fake, its access log at info to a file, the report rate limit
 *    raised, the job settings at their defaults. Every phase below runs on this same server.
 * 3. A set of `--items` generated items (several categories and none; texts varied by index) is
 *    imported as JSONL through the REST route (chunks of 500, the first creating the set), with
 *    the secret key of `init`, which acts as an admin.
 * 4. Warm-up: report creation (wrk, 32 connections, 5 s) and a run started and cancelled after 5 s.
 * 5. Rounds, each of three phases, in the order alone, none, with on even rounds and with, none,
 *    alone on odd ones (so no-run and with-run intake alternate: none, with, with, none, …):
 *    - alone: a run of the whole set with nothing else: its wall time (the server's createdAt to
 *      finishedAt, the run's own record), items/s, the server's CPU per item, the largest RSS
 *      (sampled every 100 ms) and the RSS when it completed;
 *    - none: report creation at 32 connections (wrk, report.lua as in the other benches) for as
 *      long as the latest run under intake lasted (else the latest run alone; 10–120 s);
 *    - with: a run of the whole set started, and report creation at 32 connections from then
 *      until the run completes (wrk is stopped with SIGINT then; it prints its figures over the
 *      time it ran): the run's wall time under intake and intake req/s during the run.
 *    CPU per request is the server's CPU time (all its threads, the run's work included in the
 *    with phase) over the 2xx answers.
 * 6. The table shows the median of the rounds of each figure, and each round's figures.
 *
 * A run is worked item after item by one job at a time (src/domain/evaluation/runs.ts), so the
 * evaluation lane's slots (FLAGSTAFF_EVAL_CONCURRENCY, printed) bound the runs in flight, not the
 * speed of one: a run's wall time is about items × (model time + the server's time per item).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { newDatabase, startPgCluster, type PgCluster } from "../pg-cluster.ts";
import { cpuMs, ensureWrk, fmtInt, fmtMs, lastLinesOf, markdownTable, median, ROOT, rssMb, run, sampleRss, startServer, wrk, type WrkResult } from "./lib.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    items: { type: "string", default: "1000" },
    "delay-ms": { type: "string", default: "30" },
    parallel: { type: "string", default: "2" },
    rounds: { type: "string", default: "2" },
    postgres: { type: "boolean" },
    "eval-concurrency": { type: "string" },
    source: { type: "boolean" },
    "max-run-seconds": { type: "string", default: "600" },
  },
});
const ITEMS = Number(args.items);
const DELAY_MS = Number(args["delay-ms"]);
const PARALLEL = Number(args.parallel);
const ROUNDS = Number(args.rounds);
const MAX_RUN_S = Number(args["max-run-seconds"]);
if (!(Number.isInteger(ITEMS) && ITEMS >= 1 && ITEMS <= 20_000)) throw new Error(`--items ${args.items}: 1–20,000`);
if (!(DELAY_MS >= 0)) throw new Error(`--delay-ms ${args["delay-ms"]}: milliseconds ≥ 0`);
if (!Number.isInteger(PARALLEL) || PARALLEL < 0) throw new Error(`--parallel ${args.parallel}: answers at once, a whole number ≥ 0 (0: no limit)`);
if (!(Number.isInteger(ROUNDS) && ROUNDS >= 1)) throw new Error(`--rounds ${args.rounds}: a whole number ≥ 1`);
const CONNECTIONS = 32;
const BUN = process.execPath;
const work = mkdtempSync(join(tmpdir(), "flagstaff-bench-eval-"));
const log = (s: string) => console.error(`[bench:eval ${new Date().toISOString().slice(11, 19)}] ${s}`);
const loadAtStart = loadavg();
const children: { kill(signal?: number | NodeJS.Signals): void }[] = [];
let cluster: PgCluster | null = null;
/** The server's JSON log (its last lines are printed when the bench fails). */
let logFile: string | null = null;

process.on("SIGINT", async () => {
  for (const c of children) c.kill("SIGKILL");
  await cluster?.stop().catch(() => {});
  rmSync(work, { recursive: true, force: true });
  process.exit(130);
});

interface RunFigures {
  wallS: number;
  itemsPerS: number;
  cpuMsPerItem: number;
  rssPeakMb: number;
  rssEndMb: number;
  latencyMedianMs: number | null;
  status: string;
}
interface IntakeFigures {
  wrk: WrkResult;
  okRps: number;
  cpuUsPerRequest: number;
  rssPeakMb: number;
}
interface Round {
  alone: RunFigures;
  none: IntakeFigures;
  with: { run: RunFigures; intake: IntakeFigures };
  loadAtStart: number;
}

try {
  const wrkBin = await ensureWrk(log);
  let flagstaff = [BUN, join(ROOT, "src", "cli.ts")];
  if (!args.source) {
    log("building the binary (scripts/build.ts --no-smoke) into a temporary folder");
    const binary = join(work, "flagstaff");
    await run([BUN, join(ROOT, "scripts/build.ts"), "--no-smoke", "--outfile", binary]);
    flagstaff = [binary];
  }

  // The fake Ollama, a process of its own.
  const fake = await startServer([BUN, join(ROOT, "scripts/fake-ollama.ts"), "--port", "0", "--delay-ms", String(DELAY_MS), "--parallel", String(PARALLEL)], cleanEnv());
  children.push(fake.proc);

  // The database and the server.
  const dir = mkdtempSync(join(work, "server-"));
  let dbEnv: Record<string, string>;
  if (args.postgres) {
    log("starting a throwaway PostgreSQL cluster");
    cluster = await startPgCluster();
    dbEnv = { FLAGSTAFF_DATABASE_URL: await newDatabase(cluster.url, "bench_eval") };
  } else {
    dbEnv = { FLAGSTAFF_DB: join(dir, "flagstaff.db") };
  }
  const init = JSON.parse(await run([...flagstaff, "init", "--json"], cleanEnv(dbEnv), dir)) as { orgSlug: string; projectId: string; secretKey: string };
  const serverEnv = cleanEnv({
    ...dbEnv,
    PORT: "0",
    HOST: "127.0.0.1",
    FLAGSTAFF_REPORT_RATE_LIMIT: "100000000",
    FLAGSTAFF_LOG_LEVEL: "info",
    OLLAMA_HOST: fake.url,
    ...(args["eval-concurrency"] ? { FLAGSTAFF_EVAL_CONCURRENCY: args["eval-concurrency"] } : {}),
  });
  logFile = join(dir, "server.log");
  const server = await startServer([...flagstaff, "serve"], serverEnv, { logFile, cwd: dir });
  children.push(server.proc);
  const pid = server.proc.pid;
  const api = apiOf(server.url, init);
  const keyEnv = { KEY: init.secretKey, PROJECT: init.projectId };
  await Bun.sleep(1000);
  const rssIdleMb = rssMb(pid);

  log(`importing ${fmtInt(ITEMS)} items (JSONL, REST)`);
  const setId = await api.importSet(generateItems(ITEMS));

  log("warm-up: report creation 5 s, a run cancelled after 5 s");
  await wrk(wrkBin, { url: server.url, connections: CONNECTIONS, seconds: 5, script: "report.lua", env: keyEnv });
  const warm = await api.startRun(setId);
  await Bun.sleep(5000);
  await api.cancelRun(warm);

  const rounds: Round[] = [];
  let intakeSeconds = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? (["alone", "none", "with"] as const) : (["with", "none", "alone"] as const);
    const round: Partial<Round> = { loadAtStart: loadavg()[0]! };
    for (const phase of order) {
      if (phase === "alone") {
        round.alone = await runPhase(null);
        intakeSeconds ||= round.alone.wallS;
        log(`round ${r + 1} alone: ${fmtS(round.alone.wallS)} s, ${round.alone.itemsPerS.toFixed(1)} items/s, ${round.alone.cpuMsPerItem.toFixed(2)} ms CPU/item, RSS peak ${round.alone.rssPeakMb.toFixed(1)} MB`);
      } else if (phase === "none") {
        const seconds = Math.min(120, Math.max(10, Math.round(intakeSeconds || 10)));
        round.none = await intakePhase(seconds);
        log(`round ${r + 1} none: ${seconds} s, ${fmtInt(round.none.okRps)} req/s, ${round.none.cpuUsPerRequest.toFixed(0)} µs CPU/req, p99 ${fmtMs(round.none.wrk.latencyMs.p99)} ms`);
      } else {
        round.with = await withPhase();
        intakeSeconds = round.with.run.wallS;
        log(
          `round ${r + 1} with: run ${fmtS(round.with.run.wallS)} s (${round.with.run.status}), ${round.with.run.itemsPerS.toFixed(1)} items/s; ` +
            `intake ${fmtInt(round.with.intake.okRps)} req/s, ${round.with.intake.cpuUsPerRequest.toFixed(0)} µs CPU/req, p99 ${fmtMs(round.with.intake.wrk.latencyMs.p99)} ms`,
        );
      }
    }
    rounds.push(round as Round);
  }
  const fakeCpuMs = cpuMs(fake.proc.pid);
  const rssEndMb = rssMb(pid);
  const evalConcurrency = args["eval-concurrency"] ?? "1 (the default)";
  await server.stop();
  await fake.stop();

  // -------------------------------------------------------------------------------------------
  const med = (pick: (r: Round) => number) => median(rounds.map(pick));
  const noneRps = med((r) => r.none.okRps);
  const withRps = med((r) => r.with.intake.okRps);
  const errors = rounds.reduce((n, r) => n + failed(r.none.wrk) + failed(r.with.intake.wrk), 0);
  console.log(`## Evaluation run of ${fmtInt(ITEMS)} items beside report intake, ${new Date().toISOString()}`);
  console.log("");
  console.log(
    `${cpus().length} × ${cpus()[0]?.model}, Bun ${Bun.version}; ${args.postgres ? "PostgreSQL (throwaway cluster, same machine)" : "SQLite"}; ` +
      `${args.source ? "bun src/cli.ts (--source)" : "the compiled binary"}; one server for every phase; fake Ollama in its own process, ${DELAY_MS} ms per answer, ${PARALLEL > 0 ? `${PARALLEL} at once` : "any number at once"}; ` +
      `FLAGSTAFF_EVAL_CONCURRENCY ${evalConcurrency}; intake: wrk report.lua, ${CONNECTIONS} connections, on the same machine; ` +
      `median of ${ROUNDS} round${ROUNDS === 1 ? "" : "s"} (order alone, none, with; then with, none, alone; …). ` +
      `Load average (1, 5, 15 min) at start ${loadAtStart.map((l) => l.toFixed(2)).join(", ")}; at the end ${loadavg().map((l) => l.toFixed(2)).join(", ")} (2 cores: above about 1 other work shared them).`,
  );
  console.log("");
  console.log(
    markdownTable(
      ["run", "items", "wall time s", "items/s", "server CPU ms/item", "model latency median ms", "RSS peak MB", "RSS at its end MB"],
      [
        ["alone", ITEMS, fmtS(med((r) => r.alone.wallS)), med((r) => r.alone.itemsPerS).toFixed(1), med((r) => r.alone.cpuMsPerItem).toFixed(2), fmtNullable(rounds.map((r) => r.alone.latencyMedianMs)), med((r) => r.alone.rssPeakMb).toFixed(1), med((r) => r.alone.rssEndMb).toFixed(1)],
        ["with intake", ITEMS, fmtS(med((r) => r.with.run.wallS)), med((r) => r.with.run.itemsPerS).toFixed(1), "(shared)", fmtNullable(rounds.map((r) => r.with.run.latencyMedianMs)), med((r) => r.with.run.rssPeakMb).toFixed(1), med((r) => r.with.run.rssEndMb).toFixed(1)],
      ],
    ),
  );
  console.log("");
  console.log(
    markdownTable(
      ["report intake, 32 conn.", "no run", "during a run", "ratio (during / no run)"],
      [
        ["2xx req/s", fmtInt(noneRps), fmtInt(withRps), (withRps / noneRps).toFixed(3)],
        ["server CPU µs per request", med((r) => r.none.cpuUsPerRequest).toFixed(0), med((r) => r.with.intake.cpuUsPerRequest).toFixed(0), (med((r) => r.with.intake.cpuUsPerRequest) / med((r) => r.none.cpuUsPerRequest)).toFixed(3)],
        ["p50 ms", fmtMs(med((r) => r.none.wrk.latencyMs.p50)), fmtMs(med((r) => r.with.intake.wrk.latencyMs.p50)), ""],
        ["p99 ms", fmtMs(med((r) => r.none.wrk.latencyMs.p99)), fmtMs(med((r) => r.with.intake.wrk.latencyMs.p99)), ""],
        ["RSS peak MB", med((r) => r.none.rssPeakMb).toFixed(1), med((r) => r.with.intake.rssPeakMb).toFixed(1), ""],
      ],
    ),
  );
  console.log("");
  console.log(`errors (non-2xx, socket) in the measured intake: ${fmtInt(errors)}; RSS idle after start ${rssIdleMb.toFixed(1)} MB, at the end ${rssEndMb.toFixed(1)} MB; the fake Ollama's own CPU over the whole bench ${fmtInt(fakeCpuMs)} ms.`);
  console.log("");
  console.log(
    markdownTable(
      ["round", "load avg at start", "alone: wall s / items/s", "none: req/s", "with: run wall s / items/s", "with: req/s", "ratio"],
      rounds.map((r, i) => [
        i + 1,
        r.loadAtStart.toFixed(2),
        `${fmtS(r.alone.wallS)} / ${r.alone.itemsPerS.toFixed(1)}`,
        fmtInt(r.none.okRps),
        `${fmtS(r.with.run.wallS)} / ${r.with.run.itemsPerS.toFixed(1)}${r.with.run.status === "completed" ? "" : ` (${r.with.run.status})`}`,
        fmtInt(r.with.intake.okRps),
        (r.with.intake.okRps / r.none.okRps).toFixed(3),
      ]),
    ),
  );

  // -------------------------------------------------------------------------------------------

  /** A run of the whole set; with `intake` (wrk's promise) beside it, the run's figures only. */
  async function runPhase(stopIntake: ((done: Promise<void>) => void) | null): Promise<RunFigures> {
    const rss = sampleRss(pid);
    const cpuBefore = cpuMs(pid);
    const runId = await api.startRun(setId);
    const finished = api.waitForRun(runId, MAX_RUN_S * 1000);
    stopIntake?.(finished.then(() => undefined));
    const view = await finished;
    const rssEndMb = rssMb(pid);
    const cpu = cpuMs(pid) - cpuBefore;
    const wallS = (Date.parse(view.finishedAt ?? new Date().toISOString()) - Date.parse(view.createdAt)) / 1000;
    return {
      wallS,
      itemsPerS: view.itemsDone / wallS,
      cpuMsPerItem: cpu / Math.max(1, view.itemsDone),
      rssPeakMb: rss.stop(),
      rssEndMb,
      latencyMedianMs: view.metrics?.latencyMs.median ?? null,
      status: view.status,
    };
  }

  async function intakePhase(seconds: number): Promise<IntakeFigures> {
    const rss = sampleRss(pid);
    const cpuBefore = cpuMs(pid);
    const w = await wrk(wrkBin, { url: server.url, connections: CONNECTIONS, seconds, script: "report.lua", env: keyEnv });
    return intakeFigures(w, cpuMs(pid) - cpuBefore, rss.stop());
  }

  /** A run with report creation from its start to its end (wrk runs until the run finishes, then gets SIGINT). */
  async function withPhase(): Promise<Round["with"]> {
    const rss = sampleRss(pid);
    const cpuBefore = cpuMs(pid);
    let intake: Promise<WrkResult> | null = null;
    const runFigures = await runPhase((done) => {
      intake = wrk(wrkBin, { url: server.url, connections: CONNECTIONS, seconds: MAX_RUN_S + 60, script: "report.lua", env: keyEnv, until: done });
    });
    const w = await intake!;
    return { run: runFigures, intake: intakeFigures(w, cpuMs(pid) - cpuBefore, rss.stop()) };
  }
} catch (err) {
  log(`failed: ${err instanceof Error ? err.message : String(err)}`);
  if (logFile) log(`the server's log ends:\n${lastLinesOf(logFile, 15).join("\n")}`);
  process.exitCode = 1;
} finally {
  for (const c of children) c.kill("SIGKILL");
  await cluster?.stop().catch(() => {});
  rmSync(work, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------

function intakeFigures(w: WrkResult, cpu: number, rssPeakMb: number): IntakeFigures {
  const ok = w.requests - failed(w);
  return { wrk: w, okRps: w.requests ? (w.rps * ok) / w.requests : 0, cpuUsPerRequest: (cpu * 1000) / Math.max(1, ok), rssPeakMb };
}

function failed(w: WrkResult): number {
  return w.non2xx + w.socketErrors;
}

function fmtS(s: number): string {
  return s.toFixed(1);
}

function fmtNullable(xs: (number | null)[]): string {
  const known = xs.filter((x): x is number => x !== null);
  return known.length ? fmtMs(median(known)) : "n/a";
}

function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: "/usr/bin:/bin", HOME: work, ...extra };
}

interface RunView {
  id: string;
  status: string;
  itemsDone: number;
  itemsTotal: number;
  createdAt: string;
  finishedAt: string | null;
  metrics: { latencyMs: { median: number | null } } | null;
}

/** The evaluation REST routes, with the secret key of `init` (a secret key acts as an admin). */
function apiOf(baseUrl: string, init: { orgSlug: string; projectId: string; secretKey: string }) {
  const base = `${baseUrl}/api/v1/organizations/${init.orgSlug}/projects/${init.projectId}`;
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${init.secretKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
    return JSON.parse(text) as T;
  };
  return {
    /** Imports the lines in chunks of 500 (the request body limit), the first chunk creating the set. */
    async importSet(lines: string[]): Promise<string> {
      let setId: string | undefined;
      for (let i = 0; i < lines.length; i += 500) {
        const content = lines.slice(i, i + 500).join("\n");
        const { set } = await call<{ set: { id: string; items: number } }>("POST", "/evaluation-sets/import", setId ? { setId, format: "jsonl", content } : { name: "bench:eval", format: "jsonl", content });
        setId = set.id;
      }
      return setId!;
    },
    async startRun(setId: string): Promise<string> {
      return (await call<{ run: RunView }>("POST", "/evaluation-runs", { setId })).run.id;
    },
    /** Cancels a run (one that finished meanwhile is left as it is). */
    async cancelRun(runId: string): Promise<void> {
      await call("POST", `/evaluation-runs/${runId}/cancel`).catch((err: Error) => {
        if (!err.message.includes("answered 409")) throw err;
      });
    },
    /** Polls the run every 250 ms until it is no longer queued or running; cancels it after `limitMs`. */
    async waitForRun(runId: string, limitMs: number): Promise<RunView> {
      const deadline = Date.now() + limitMs;
      for (;;) {
        const { run } = await call<{ run: RunView }>("GET", `/evaluation-runs/${runId}`);
        if (run.status !== "queued" && run.status !== "running") return run;
        if (Date.now() > deadline) {
          log(`run ${runId} still ${run.status} after ${limitMs / 1000} s (${run.itemsDone}/${run.itemsTotal}): cancelling it`);
          await this.cancelRun(runId);
        }
        await Bun.sleep(250);
      }
    },
  };
}

/**
 * `count` JSONL lines: texts varied by index in several categories, a third without any. The
 * fake's keyword heuristic answers "buy now"/"free money" as spam-like and "kill" as threats or
 * violence; harassment and misinformation it misses, so the figures are not all perfect.
 */
function generateItems(count: number): string[] {
  const names = ["Alex", "Sam", "Priya", "Jonas", "Mei", "Omar", "Lena", "Tomás"];
  const places = ["the park", "the station", "your school", "the market", "the stadium", "the library"];
  const things = ["sneakers", "watches", "phones", "supplements", "crypto coins", "concert tickets"];
  const kinds: { share: number; categories: string[]; severity: string; text: (i: number) => string }[] = [
    { share: 20, categories: ["spam"], severity: "LOW", text: (i) => `Buy now: ${things[i % 6]} at ${10 + (i % 80)}% off, only at shop${i}.example, offer ends tonight` },
    { share: 10, categories: ["fraud_or_scam"], severity: "HIGH", text: (i) => `Free money for ${names[i % 8]}! Send your bank login to claim prize number ${i} before midnight` },
    { share: 15, categories: ["threats"], severity: "CRITICAL", text: (i) => `I will kill you if I see you at ${places[i % 6]} again, ${names[(i + 3) % 8]} (message ${i})` },
    { share: 15, categories: ["harassment"], severity: "MEDIUM", text: (i) => `You are a pathetic loser, ${names[i % 8]}, nobody at ${places[(i + 1) % 6]} wants you here, post ${i}` },
    { share: 10, categories: ["misinformation"], severity: "LOW", text: (i) => `Share before they delete this: the water at ${places[i % 6]} is poisoned on purpose, report ${i}` },
    { share: 30, categories: [], severity: "LOW", text: (i) => `Lovely afternoon at ${places[i % 6]} with ${names[(i + 5) % 8]}, see you all at event ${i} next week` },
  ];
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    // Cycle through 100 slots shared out by the kinds' shares, so every chunk holds every kind.
    let slot = i % 100;
    const kind = kinds.find((k) => (slot -= k.share) < 0)!;
    lines.push(JSON.stringify({ id: `bench-${i + 1}`, text: kind.text(i), categories: kind.categories, severity: kind.severity }));
  }
  return lines;
}
