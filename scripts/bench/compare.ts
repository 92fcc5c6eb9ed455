/**
 * `bun run bench:compare`: the current code beside an earlier commit, measured in one run on
 * one machine, printed as one table (figures only: it never fails because of a ratio).
 *
 *   bun scripts/bench/compare.ts [--base REV] [--current REV] [--engine sqlite|postgres]
 *                                [--rounds 3] [--reports 150000] [--seconds 10] [--get-seconds 5]
 *                                [--decisions 5000] [--cache DIR]
 *
 * --base     the commit to compare with. Default: where HEAD left origin/main (their merge-base)
 *            when origin/main exists and HEAD is ahead of it, else HEAD~1. To measure
 *            uncommitted changes alone, pass --base HEAD.
 * --current  a second commit instead of the working tree (as it is, uncommitted changes too).
 * --engine   sqlite (default), or postgres: a throwaway cluster (scripts/pg-cluster.ts, its
 *            default settings, stopped at the end and on Ctrl-C) reached over TCP on loopback,
 *            the nearest one machine has to a database on another host; every database below is
 *            then one of its databases (FLAGSTAFF_DATABASE_URL), each side its own.
 * --decisions  the open reports made for each decisions run; a round makes 1.5 times the most
 *            decisions asked in one run so far instead, if more (the same number for both
 *            binaries; a run that ran out counts what it asked, its 409s too).
 *
 * 1. Both binaries are built with their own revision's scripts/build.ts. A commit is exported
 *    with `git archive` (the checkout is left alone) and built with the checkout's node_modules
 *    (symlinked; `npm ci --prefer-offline` when its package-lock.json differs); its binary is
 *    kept in the cache under the commit hash, so the next run starts at once. The working tree
 *    is built afresh unless it is clean (then it is HEAD, cached too).
 * 2. Each binary gets its own database with `--reports` reports seeded (scripts/bench/seed.ts;
 *    on PostgreSQL seeded in SQLite, made by that binary, then copied into a database that
 *    binary migrated: scripts/bench/copy-to-postgres.ts). This checkout's seed.ts, copy and
 *    wrk scripts serve both sides: the base must share the schema of the tables seeded and the
 *    request shapes of report creation, GET /reports, and resolve and dismiss.
 * 3. Rounds: base, current, then current, base, and so on (a steady drift of the machine favours
 *    neither). In each, the binary is started as `flagstaff serve` (access log at info to a
 *    file, as in `bun run bench`):
 *    - on a fresh database for report creation at 32 connections (wrk, 3 s of warm-up, RSS
 *      sampled);
 *    - on another fresh database for moderators' decisions at 8 connections: open reports made
 *      first through POST …/reports (16 at a time, each on its own content, so its own case),
 *      then each decided once by wrk (scripts/bench/wrk/decide.lua: POST /reports/{id}/resolve
 *      with SPAM_CONFIRMED and /dismiss with false_positive alternately; 1 s of warm-up on
 *      reports of its own). A run that outlasts its open reports gets 409s, counted as errors;
 *    - on its seeded database for GET /reports at one connection (the default listing and
 *      status=OPEN, 1 s of warm-up each).
 *    The server's CPU time (/proc) per report created and per decision is kept (steadier than
 *    throughput on a shared machine); on PostgreSQL that of the whole cluster too.
 * 4. The table shows the median of the rounds per binary, and the ratio: current/base for
 *    throughput (requests answered 2xx), base/current for latency, CPU and memory, so ≥ 1 means
 *    the current code is better. A side that answered errors is named with the first error's
 *    answer, and its `ratio ≥ 0.95` reads n/a. The machine's load averages at the start and the
 *    end are printed with it (and at each round, on stderr).
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { newDatabase, startPgCluster, type PgCluster } from "../pg-cluster.ts";
import { copySqliteToPostgres } from "./copy-to-postgres.ts";
import { seedReports } from "./seed.ts";
import { cpuMs, ensureWrk, fmtInt, fmtMs, markdownTable, median, processTreeCpuMs, ROOT, run, sampleRss, startServer, wrk, type Server, type WrkResult } from "./lib.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    base: { type: "string" },
    current: { type: "string" },
    engine: { type: "string", default: "sqlite" },
    rounds: { type: "string", default: "3" },
    reports: { type: "string", default: "150000" },
    seconds: { type: "string", default: "10" },
    "get-seconds": { type: "string", default: "5" },
    decisions: { type: "string", default: "5000" },
    cache: { type: "string", default: join(tmpdir(), "flagstaff-bench-cache") },
  },
});
const ENGINE = args.engine;
if (ENGINE !== "sqlite" && ENGINE !== "postgres") throw new Error(`--engine ${ENGINE}: sqlite or postgres`);
const ROUNDS = Number(args.rounds);
const SEED_COUNT = Number(args.reports);
const LOAD_S = Number(args.seconds);
const GET_S = Number(args["get-seconds"]);
const FIRST_DECISIONS = Number(args.decisions);
const CACHE = args.cache!;
const BUN = process.execPath;
const QUERIES: [string, string][] = [
  ["default listing", ""],
  ["status=OPEN", "status=OPEN"],
];
/** Decisions: moderators deciding at once, wrk's threads, and the open reports of the warm-up. */
const DECIDE_CONNECTIONS = 8;
const DECIDE_THREADS = 2;
const DECIDE_WARM_UP = 300;
const loadAtStart = loadavg();
const work = mkdtempSync(join(tmpdir(), "flagstaff-compare-"));
const log = (s: string) => console.error(`[compare ${new Date().toISOString().slice(11, 19)}] ${s}`);
const servers = new Set<Server>();
const warned = new Set<string>();
// Assigned in postgresEngine() (the assertion keeps it from being narrowed to null here).
let cluster = null as PgCluster | null;

/** A database `flagstaff init` (or the seed) made, and how a binary is pointed at it. */
interface Store {
  env: Record<string, string>;
  /** Where the server's log goes (and its cwd). */
  dir: string;
  projectId: string;
  secretKey: string;
  drop(): Promise<void>;
}

interface Run {
  create: WrkResult;
  rssMb: number;
  createCpuUs: number;
  /** The database server's CPU per report created (PostgreSQL only, else 0). */
  createDbCpuUs: number;
  decide: WrkResult;
  /** Open reports there were to decide (a decision past them is answered 409). */
  openReports: number;
  decideCpuUs: number;
  decideDbCpuUs: number;
  gets: WrkResult[];
}

interface Side {
  name: "base" | "current";
  label: string;
  binary: string;
  seeded: Store;
  runs: Run[];
}

process.on("SIGINT", () => {
  for (const s of servers) s.proc.kill("SIGKILL");
  void (cluster?.stop() ?? Promise.resolve()).finally(() => {
    rmSync(work, { recursive: true, force: true });
    process.exit(130);
  });
});

const fmtLoad = (l: number[]) => l.map((n) => n.toFixed(2)).join(", ");

try {
  const wrkBin = await ensureWrk(log);
  mkdirSync(CACHE, { recursive: true });
  log(`load average (1, 5, 15 min) at the start: ${fmtLoad(loadAtStart)}`);

  // -------------------------------------------------------------------------------------------
  const baseHash = await revParse(args.base ?? (await defaultBase()));
  log(`base ${baseHash.slice(0, 7)}: building (or from the cache)`);
  const base = { label: baseHash.slice(0, 7), binary: await buildCommit(baseHash) };
  const current = await buildCurrent();

  const engine = ENGINE === "postgres" ? await postgresEngine() : sqliteEngine();
  const sides: Side[] = [];
  for (const [name, b] of [["base", base], ["current", current]] as const) {
    log(`${name}: seeding ${fmtInt(SEED_COUNT)} reports (${ENGINE})`);
    sides.push({ name, ...b, seeded: await engine.seeded(b.binary, name), runs: [] });
  }

  // -------------------------------------------------------------------------------------------
  for (let round = 0; round < ROUNDS; round++) {
    // The same number for both sides in a round: a decision's cost may grow with the database.
    // Every request counts, 409s too: a run that ran out would have decided that many.
    const decided = sides.flatMap((s) => s.runs.map((r) => r.decide.requests));
    const openReports = Math.max(FIRST_DECISIONS, Math.ceil(1.5 * Math.max(0, ...decided)));
    for (const side of round % 2 ? [...sides].reverse() : sides) {
      const r = await measure(side, wrkBin, engine, openReports);
      side.runs.push(r);
      log(
        `round ${round + 1} ${side.name}: create ${fmtInt(okRps(r.create))}/s p99 ${fmtMs(r.create.latencyMs.p99)} ms, ` +
          `decide ${fmtInt(okRps(r.decide))}/s p99 ${fmtMs(r.decide.latencyMs.p99)} ms (${fmtInt(r.decideCpuUs)} µs CPU each), ` +
          r.gets.map((g, i) => `${QUERIES[i]![0]} p99 ${fmtMs(g.latencyMs.p99)} ms`).join(", ") +
          `; load ${fmtLoad(loadavg())}`,
      );
    }
  }

  // -------------------------------------------------------------------------------------------
  const [b, c] = sides as [Side, Side];
  const med = (s: Side, f: (r: Run) => number) => median(s.runs.map(f));
  const rows: (string | number)[][] = [];
  const gates: string[] = [];
  const add = (metric: string, f: (r: Run) => number, higherIsBetter: boolean, fmt: (n: number) => string) => {
    const [vb, vc] = [med(b, f), med(c, f)];
    const ratio = higherIsBetter ? vc / vb : vb / vc;
    rows.push([metric, fmt(vb), fmt(vc), ratio.toFixed(3)]);
    return ratio;
  };
  // A run that answered errors says nothing about speed: its gate reads n/a.
  const gate = (what: string, ratio: number, pick: (r: Run) => WrkResult) => {
    const [eb, ec] = sides.map((s) => s.runs.reduce((n, r) => n + failed(pick(r)), 0));
    const verdict = eb || ec ? `n/a, errors answered (non-2xx or socket): base ${fmtInt(eb!)}, current ${fmtInt(ec!)}` : ratio >= 0.95 ? "yes" : "no";
    gates.push(`${what}: ratio ${ratio.toFixed(3)}, ratio ≥ 0.95: ${verdict}`);
  };
  const us = (n: number) => n.toFixed(0);
  const pg = ENGINE === "postgres";
  gate("report creation at 32 connections, 2xx req/s", add("report creation, 32 conn., 2xx req/s", (r) => okRps(r.create), true, fmtInt), (r) => r.create);
  gate("report creation, server CPU per report", add("report creation, server CPU µs per report", (r) => r.createCpuUs, false, us), (r) => r.create);
  if (pg) add("report creation, PostgreSQL CPU µs per report", (r) => r.createDbCpuUs, false, us);
  add("report creation, 32 conn., p50 ms", (r) => r.create.latencyMs.p50, false, fmtMs);
  add("report creation, 32 conn., p99 ms", (r) => r.create.latencyMs.p99, false, fmtMs);
  gate(`decisions at ${DECIDE_CONNECTIONS} connections, 2xx/s`, add(`decisions, ${DECIDE_CONNECTIONS} conn., 2xx/s`, (r) => okRps(r.decide), true, fmtInt), (r) => r.decide);
  gate("decisions, server CPU per decision", add("decisions, server CPU µs per decision", (r) => r.decideCpuUs, false, us), (r) => r.decide);
  if (pg) add("decisions, PostgreSQL CPU µs per decision", (r) => r.decideDbCpuUs, false, us);
  add(`decisions, ${DECIDE_CONNECTIONS} conn., p50 ms`, (r) => r.decide.latencyMs.p50, false, fmtMs);
  add(`decisions, ${DECIDE_CONNECTIONS} conn., p99 ms`, (r) => r.decide.latencyMs.p99, false, fmtMs);
  QUERIES.forEach(([name], i) => {
    add(`GET /reports ${name}, 1 conn., p50 ms`, (r) => r.gets[i]!.latencyMs.p50, false, fmtMs);
    gate(`GET /reports p99, ${name}`, add(`GET /reports ${name}, 1 conn., p99 ms`, (r) => r.gets[i]!.latencyMs.p99, false, fmtMs), (r) => r.gets[i]!);
  });
  add("RSS under load (creation, largest), MB", (r) => r.rssMb, false, (n) => n.toFixed(1));
  const errors = (s: Side) => s.runs.reduce((n, r) => [r.create, r.decide, ...r.gets].reduce((m, w) => m + failed(w), n), 0);
  rows.push(["errors (non-2xx, socket), all runs", errors(b), errors(c), ""]);
  const loadAtEnd = loadavg();

  console.log(`## Flagstaff on ${pg ? "PostgreSQL (loopback TCP)" : "SQLite"}: ${c.label} beside ${b.label}, ${new Date().toISOString()}`);
  console.log("");
  console.log(
    `${cpus().length} × ${cpus()[0]?.model}, Bun ${Bun.version}${pg ? `, ${engine.version}` : ""}; wrk on the same machine; median of ${ROUNDS} round${ROUNDS === 1 ? "" : "s"} per binary (order base, current, current, base, …); ` +
      `creation ${LOAD_S} s per round on a fresh database; decisions ${LOAD_S} s per round on a fresh database with open reports made for it; GET /reports ${GET_S} s per query per round, ${fmtInt(SEED_COUNT)} reports seeded. ` +
      `Load average (1, 5, 15 min) ${fmtLoad(loadAtStart)} at the start, ${fmtLoad(loadAtEnd)} at the end: more than about 1 means other work shared the CPUs.`,
  );
  console.log("");
  console.log(markdownTable(["metric", `base ${b.label}`, `current ${c.label}`, "ratio (≥ 1 better)"], rows));
  console.log("");
  for (const line of gates) console.log(line);
  console.log("");
  for (const s of sides) {
    console.log(
      `per round, ${s.name}: create 2xx req/s ${s.runs.map((r) => fmtInt(okRps(r.create))).join(" / ")}, CPU µs each ${s.runs.map((r) => us(r.createCpuUs)).join(" / ")}; ` +
        `decisions 2xx/s ${s.runs.map((r) => fmtInt(okRps(r.decide))).join(" / ")} (of ${s.runs.map((r) => fmtInt(r.openReports)).join(" / ")} open), CPU µs each ${s.runs.map((r) => us(r.decideCpuUs)).join(" / ")}; ` +
        QUERIES.map(([name], i) => `${name} p99 ms ${s.runs.map((r) => fmtMs(r.gets[i]!.latencyMs.p99)).join(" / ")}`).join("; "),
    );
  }
  for (const s of sides) await s.seeded.drop();
  await engine.close();
} finally {
  for (const s of servers) if (s.proc.exitCode === null) s.proc.kill("SIGKILL");
  await cluster?.stop().catch((err: unknown) => log(`stopping PostgreSQL failed: ${err instanceof Error ? err.message : String(err)}`));
  rmSync(work, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------

/**
 * One round of one binary: report creation on a fresh database, decisions on another, then
 * GET /reports on its seeded one.
 */
async function measure(side: Side, wrkBin: string, engine: Engine, openReports: number): Promise<Run> {
  // ---- report creation
  const fresh = await engine.fresh(side.binary, `${side.name}-create`);
  const app = await serve(side.binary, fresh);
  const keyEnv = { KEY: fresh.secretKey, PROJECT: fresh.projectId };
  const report = { subject: { type: "user", externalId: "u-1" }, target: { contentType: "post", contentExternalId: "p-1" }, reason: "spam" };
  await probe(side, "POST …/reports", `${app.url}/sdk/flagstaff/v1/projects/${fresh.projectId}/reports`, fresh.secretKey, report);
  await wrk(wrkBin, { url: app.url, connections: 32, seconds: 3, script: "report.lua", env: keyEnv }); // warm-up
  const rss = sampleRss(app.proc.pid);
  const cpuBefore = [cpuMs(app.proc.pid), engine.cpuMs()];
  const create = await wrk(wrkBin, { url: app.url, connections: 32, seconds: LOAD_S, script: "report.lua", env: keyEnv });
  const createOk = Math.max(1, create.requests - failed(create));
  const createCpuUs = ((cpuMs(app.proc.pid) - cpuBefore[0]!) * 1000) / createOk;
  const createDbCpuUs = ((engine.cpuMs() - cpuBefore[1]!) * 1000) / createOk;
  const rssMb = rss.stop();
  await stop(app);
  await fresh.drop();

  // ---- decisions
  const store = await engine.fresh(side.binary, `${side.name}-decide`);
  const decider = await serve(side.binary, store);
  log(`${side.name}: making ${fmtInt(DECIDE_WARM_UP + openReports + 1)} open reports to decide`);
  const ids = await openReportsOn(decider.url, store, DECIDE_WARM_UP + openReports + 1);
  await probe(side, "POST /reports/{id}/resolve", `${decider.url}/sdk/flagstaff/v1/reports/${ids[0]}/resolve`, store.secretKey, { resolutionCode: "SPAM_CONFIRMED" });
  const warmIds = join(store.dir, "warm-up.ids");
  const runIds = join(store.dir, "run.ids");
  writeFileSync(warmIds, ids.slice(1, 1 + DECIDE_WARM_UP).join("\n") + "\n");
  writeFileSync(runIds, ids.slice(1 + DECIDE_WARM_UP).join("\n") + "\n");
  const decideEnv = (file: string) => ({ KEY: store.secretKey, IDS: file, THREADS: String(DECIDE_THREADS) });
  const decideWrk = (file: string, seconds: number) =>
    wrk(wrkBin, { url: decider.url, connections: DECIDE_CONNECTIONS, threads: DECIDE_THREADS, seconds, script: "decide.lua", env: decideEnv(file) });
  await decideWrk(warmIds, 1); // warm-up: its 409s past its own reports do not count
  await Bun.sleep(500); // what the reports' creation left to do in the background, mostly done
  const decideBefore = [cpuMs(decider.proc.pid), engine.cpuMs()];
  const decide = await decideWrk(runIds, LOAD_S);
  const decideOk = Math.max(1, decide.requests - failed(decide));
  const decideCpuUs = ((cpuMs(decider.proc.pid) - decideBefore[0]!) * 1000) / decideOk;
  const decideDbCpuUs = ((engine.cpuMs() - decideBefore[1]!) * 1000) / decideOk;
  if (decide.requests > openReports) log(`warning: ${side.name} made ${fmtInt(decide.requests)} decisions on ${fmtInt(openReports)} open reports: the rest were answered 409 (raise --decisions)`);
  await stop(decider);
  await store.drop();

  // ---- GET /reports on the seeded database
  const big = await serve(side.binary, side.seeded);
  const gets: WrkResult[] = [];
  for (const [, q] of QUERIES) {
    const url = `${big.url}/sdk/flagstaff/v1/reports${q ? "?" + q : ""}`;
    await probe(side, `GET /reports${q ? "?" + q : ""}`, url, side.seeded.secretKey);
    await wrk(wrkBin, { url, connections: 1, seconds: 1, script: "get.lua", env: { KEY: side.seeded.secretKey } }); // warm-up
    gets.push(await wrk(wrkBin, { url, connections: 1, seconds: GET_S, script: "get.lua", env: { KEY: side.seeded.secretKey } }));
  }
  await stop(big);
  return { create, rssMb, createCpuUs, createDbCpuUs, decide, openReports, decideCpuUs, decideDbCpuUs, gets };
}

/**
 * `count` open reports, each on content of its own (so each its own case: deciding one decides
 * no other), made through POST …/reports 16 at a time; their ids in the order made.
 */
async function openReportsOn(url: string, store: Store, count: number): Promise<string[]> {
  const ids: string[] = new Array(count);
  const endpoint = `${url}/sdk/flagstaff/v1/projects/${store.projectId}/reports`;
  const headers = { authorization: `Bearer ${store.secretKey}`, "content-type": "application/json" };
  const reasons = ["spam", "harassment", "misinformation", "threats", "other"];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const body = {
        subject: { type: "user", externalId: `u-${i % 5000}` },
        reporter: { type: "user", externalId: `r-${i % 20000}` },
        target: { contentType: "post", contentExternalId: `open-${i}`, content: "Buy cheap followers now at example dot com, limited offer!" },
        reason: reasons[i % reasons.length],
      };
      const res = await fetch(endpoint, { method: "POST", headers, body: JSON.stringify(body) });
      const text = await res.text();
      if (res.status !== 201) throw new Error(`making open reports: POST …/reports answered ${res.status}: ${text.slice(0, 300)}`);
      ids[i] = (JSON.parse(text) as { report: { id: string } }).report.id;
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return ids;
}

/** One request by hand before the load: a binary that answers errors is named, with the answer. */
async function probe(side: Side, what: string, url: string, key: string, body?: unknown): Promise<void> {
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const res = await fetch(url, body ? { method: "POST", headers, body: JSON.stringify(body) } : { headers });
  const text = await res.text();
  if (!res.ok && !warned.has(side.name + what)) log(`warning: ${side.name} answered ${res.status} to ${what} (its runs will count errors): ${text.slice(0, 300)}`);
  if (!res.ok) warned.add(side.name + what);
}

function failed(w: WrkResult): number {
  return w.non2xx + w.socketErrors;
}

/** Requests per second answered 2xx: an error answered fast is no throughput. */
function okRps(w: WrkResult): number {
  return w.requests ? (w.rps * (w.requests - failed(w))) / w.requests : 0;
}

async function serve(binary: string, store: Store): Promise<Server> {
  const env = cleanEnv({ ...store.env, PORT: "0", HOST: "127.0.0.1", FLAGSTAFF_REPORT_RATE_LIMIT: "100000000", FLAGSTAFF_LOG_LEVEL: "info" });
  const server = await startServer([binary, "serve"], env, { logFile: join(store.dir, "server.log"), cwd: store.dir });
  servers.add(server);
  return server;
}

async function stop(server: Server): Promise<void> {
  await server.stop();
  servers.delete(server);
}

function cleanEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: "/usr/bin:/bin", HOME: work, ...extra };
}

// ---------------------------------------------------------------------------------------------
// Engines: where each database lives

interface Engine {
  /** A new database `flagstaff init` made (one project, one secret key). */
  fresh(binary: string, tag: string): Promise<Store>;
  /** A database with `--reports` reports seeded. */
  seeded(binary: string, tag: string): Promise<Store>;
  /** CPU time (ms) of the database server, all its processes (0 on SQLite: it is the server's own). */
  cpuMs(): number;
  /** The server's version, for the table's heading. */
  version: string;
  close(): Promise<void>;
}

async function initSqlite(binary: string, tag: string): Promise<Store> {
  const dir = mkdtempSync(join(work, `${tag}-`));
  const db = join(dir, "flagstaff.db");
  const init = JSON.parse(await run([binary, "init", "--json"], cleanEnv({ FLAGSTAFF_DB: db }), dir)) as { projectId: string; secretKey: string };
  return { env: { FLAGSTAFF_DB: db }, dir, ...init, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

function sqliteEngine(): Engine {
  return {
    fresh: initSqlite,
    async seeded(binary, tag) {
      const store = await initSqlite(binary, `${tag}-reports`);
      seedReports(store.env.FLAGSTAFF_DB!, { count: SEED_COUNT });
      return store;
    },
    cpuMs: () => 0,
    version: "",
    close: async () => {},
  };
}

/** One throwaway cluster on loopback TCP; each database made from template0 in the C locale, as `bun run bench` does. */
async function postgresEngine(): Promise<Engine> {
  log("PostgreSQL: starting a throwaway cluster (scripts/pg-cluster.ts)");
  const pgCluster = await startPgCluster();
  cluster = pgCluster;
  const admin = postgres(pgCluster.url, { max: 1, onnotice: () => {} });
  const [row] = await admin<{ v: string }[]>`SELECT current_setting('server_version') AS v`;
  const postmaster = Number(readFileSync(join(pgCluster.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
  let made = 0;
  const database = async (tag: string) => {
    const name = `bench_${tag.replace(/[^a-z0-9]/g, "_")}_${++made}`;
    const url = await newDatabase(pgCluster.url, name, admin);
    const dir = mkdtempSync(join(work, `${tag}-`));
    const drop = async () => {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      rmSync(dir, { recursive: true, force: true });
    };
    return { url, dir, drop };
  };
  return {
    async fresh(binary, tag) {
      const db = await database(tag);
      const env = { FLAGSTAFF_DATABASE_URL: db.url };
      const init = JSON.parse(await run([binary, "init", "--json"], cleanEnv(env), db.dir)) as { projectId: string; secretKey: string };
      return { env, dir: db.dir, ...init, drop: db.drop };
    },
    async seeded(binary, tag) {
      // Seeded in SQLite by this binary's own init, then copied into a database it migrated.
      const lite = await initSqlite(binary, `${tag}-sqlite`);
      seedReports(lite.env.FLAGSTAFF_DB!, { count: SEED_COUNT });
      const db = await database(`${tag}-reports`);
      const env = { FLAGSTAFF_DATABASE_URL: db.url };
      await run([binary, "migrate"], cleanEnv(env), db.dir);
      const copy = await copySqliteToPostgres(lite.env.FLAGSTAFF_DB!, db.url);
      log(`${tag}: ${fmtInt(copy.rows)} rows copied into PostgreSQL in ${(copy.copyMs / 1000).toFixed(1)} s`);
      await lite.drop();
      return { env, dir: db.dir, projectId: lite.projectId, secretKey: lite.secretKey, drop: db.drop };
    },
    cpuMs: () => processTreeCpuMs(postmaster),
    version: `PostgreSQL ${row!.v}`,
    close: () => admin.end({ timeout: 5 }),
  };
}

// Builds

async function git(...a: string[]): Promise<string> {
  return (await run(["git", "-C", ROOT, ...a])).trim();
}

function revParse(rev: string): Promise<string> {
  return git("rev-parse", "--verify", `${rev}^{commit}`);
}

async function defaultBase(): Promise<string> {
  const head = await revParse("HEAD");
  const main = await revParse("origin/main").catch(() => null);
  const fork = main ? await git("merge-base", head, main) : null;
  return fork && fork !== head ? fork : "HEAD~1";
}

/** The working tree's binary (or --current's): a clean tree is HEAD, built once and cached. */
async function buildCurrent(): Promise<{ label: string; binary: string }> {
  const dirty = !args.current && (await git("status", "--porcelain")) !== "";
  const hash = await revParse(args.current ?? "HEAD");
  if (!dirty) {
    log(`current ${hash.slice(0, 7)}: building (or from the cache)`);
    return { label: hash.slice(0, 7), binary: await buildCommit(hash) };
  }
  log(`current: building the working tree (${hash.slice(0, 7)} with uncommitted changes)`);
  const binary = join(work, "flagstaff-current");
  await run([BUN, join(ROOT, "scripts/build.ts"), "--no-smoke", "--outfile", binary]).catch((e: Error) => {
    throw new Error(`the working tree does not build (measure a commit instead with --current REV):\n${e.message}`);
  });
  return { label: `${hash.slice(0, 7)}+changes`, binary };
}

/** A commit's binary from the cache, or built from `git archive` with that commit's build script. */
async function buildCommit(hash: string): Promise<string> {
  const binary = join(CACHE, hash, "flagstaff");
  if (existsSync(binary)) return binary;
  const src = mkdtempSync(join(CACHE, "src-"));
  const modules = join(src, "node_modules");
  try {
    await run(["sh", "-c", 'git -C "$0" archive "$1" | tar -x -C "$2"', ROOT, hash, src]);
    const lock = (dir: string) => (existsSync(join(dir, "package-lock.json")) ? readFileSync(join(dir, "package-lock.json"), "utf8") : null);
    let bun = BUN;
    if (lock(src) === lock(ROOT)) symlinkSync(join(ROOT, "node_modules"), modules, "dir");
    else {
      log(`${hash.slice(0, 7)}: its package-lock.json differs, npm ci --prefer-offline`);
      await run(["npm", "ci", "--prefer-offline", "--no-audit", "--no-fund"], process.env as Record<string, string>, src);
      if (existsSync(join(modules, ".bin", "bun"))) bun = join(modules, ".bin", "bun");
    }
    const out = join(src, "dist", "flagstaff");
    await run([bun, "scripts/build.ts", "--no-smoke", "--outfile", out], process.env as Record<string, string>, src);
    mkdirSync(dirname(binary), { recursive: true });
    renameSync(out, binary);
    return binary;
  } finally {
    // The symlink first: the checkout's node_modules must never be walked into.
    if (lstatSync(modules, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(modules);
    rmSync(src, { recursive: true, force: true });
  }
}
