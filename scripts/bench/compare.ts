/**
 * `bun run bench:compare`: the current code beside an earlier commit, measured in one run on
 * one machine, printed as one table (figures only: it never fails because of a ratio).
 *
 *   bun scripts/bench/compare.ts [--base REV] [--current REV] [--rounds 3] [--reports 150000]
 *                                [--seconds 10] [--get-seconds 5] [--cache DIR]
 *
 * --base     the commit to compare with. Default: where HEAD left origin/main (their merge-base)
 *            when origin/main exists and HEAD is ahead of it, else HEAD~1. To measure
 *            uncommitted changes alone, pass --base HEAD.
 * --current  a second commit instead of the working tree (as it is, uncommitted changes too).
 *
 * 1. Both binaries are built with their own revision's scripts/build.ts. A commit is exported
 *    with `git archive` (the checkout is left alone) and built with the checkout's node_modules
 *    (symlinked; `npm ci --prefer-offline` when its package-lock.json differs); its binary is
 *    kept in the cache under the commit hash, so the next run starts at once. The working tree
 *    is built afresh unless it is clean (then it is HEAD, cached too).
 * 2. Each binary gets its own database with `--reports` reports seeded (scripts/bench/seed.ts).
 *    This checkout's seed.ts and wrk scripts serve both sides: the base must share the schema
 *    of the tables seeded and the request shapes of report creation and GET /reports.
 * 3. Rounds: base, current, then current, base, and so on (a steady drift of the machine favours
 *    neither). In each, the binary is started as `flagstaff serve` (access log at info to a
 *    file, as in `bun run bench`) on a fresh database for report creation at 32 connections
 *    (wrk, 3 s of warm-up, RSS sampled), then on its seeded database for GET /reports at one
 *    connection (the default listing and status=OPEN, 1 s of warm-up each).
 * 4. The table shows the median of the rounds per binary, and the ratio: current/base for
 *    throughput (requests answered 2xx), base/current for latency and memory, so ≥ 1 means the
 *    current code is better. A side that answered errors is named with the first error's
 *    answer, and its `ratio ≥ 0.95` reads n/a.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { seedReports } from "./seed.ts";
import { cpuMs, ensureWrk, fmtInt, fmtMs, markdownTable, median, ROOT, run, sampleRss, startServer, wrk, type Server, type WrkResult } from "./lib.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    base: { type: "string" },
    current: { type: "string" },
    rounds: { type: "string", default: "3" },
    reports: { type: "string", default: "150000" },
    seconds: { type: "string", default: "10" },
    "get-seconds": { type: "string", default: "5" },
    cache: { type: "string", default: join(tmpdir(), "flagstaff-bench-cache") },
  },
});
const ROUNDS = Number(args.rounds);
const SEED_COUNT = Number(args.reports);
const LOAD_S = Number(args.seconds);
const GET_S = Number(args["get-seconds"]);
const CACHE = args.cache!;
const BUN = process.execPath;
const QUERIES: [string, string][] = [
  ["default listing", ""],
  ["status=OPEN", "status=OPEN"],
];
const loadAtStart = loadavg()[0]!;
const work = mkdtempSync(join(tmpdir(), "flagstaff-compare-"));
const log = (s: string) => console.error(`[compare ${new Date().toISOString().slice(11, 19)}] ${s}`);
const servers = new Set<Server>();
const warned = new Set<string>();

interface Side {
  name: "base" | "current";
  label: string;
  binary: string;
  db: string;
  key: string;
  runs: { create: WrkResult; rssMb: number; createCpuUs: number; gets: WrkResult[] }[];
}

process.on("SIGINT", () => {
  for (const s of servers) s.proc.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
  process.exit(130);
});

try {
  const wrkBin = await ensureWrk(log);
  mkdirSync(CACHE, { recursive: true });

  // -------------------------------------------------------------------------------------------
  const baseHash = await revParse(args.base ?? (await defaultBase()));
  log(`base ${baseHash.slice(0, 7)}: building (or from the cache)`);
  const base = { label: baseHash.slice(0, 7), binary: await buildCommit(baseHash) };
  const current = await buildCurrent();

  const sides: Side[] = [];
  for (const [name, b] of [["base", base], ["current", current]] as const) {
    const dir = mkdtempSync(join(work, `${name}-reports-`));
    const init = await initDatabase(b.binary, dir);
    log(`${name}: seeding ${fmtInt(SEED_COUNT)} reports`);
    seedReports(init.db, { count: SEED_COUNT });
    sides.push({ name, ...b, db: init.db, key: init.secretKey, runs: [] });
  }

  // -------------------------------------------------------------------------------------------
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 ? [...sides].reverse() : sides) {
      const r = await measure(side, wrkBin);
      side.runs.push(r);
      log(
        `round ${round + 1} ${side.name}: create ${fmtInt(okRps(r.create))}/s p99 ${fmtMs(r.create.latencyMs.p99)} ms, ` +
          r.gets.map((g, i) => `${QUERIES[i]![0]} p99 ${fmtMs(g.latencyMs.p99)} ms`).join(", "),
      );
    }
  }

  // -------------------------------------------------------------------------------------------
  const [b, c] = sides as [Side, Side];
  const med = (s: Side, f: (r: Side["runs"][number]) => number) => median(s.runs.map(f));
  const rows: (string | number)[][] = [];
  const gates: string[] = [];
  const add = (metric: string, f: (r: Side["runs"][number]) => number, higherIsBetter: boolean, fmt: (n: number) => string) => {
    const [vb, vc] = [med(b, f), med(c, f)];
    const ratio = higherIsBetter ? vc / vb : vb / vc;
    rows.push([metric, fmt(vb), fmt(vc), ratio.toFixed(3)]);
    return ratio;
  };
  // A run that answered errors says nothing about speed: its gate reads n/a.
  const gate = (what: string, ratio: number, pick: (r: Side["runs"][number]) => WrkResult) => {
    const [eb, ec] = sides.map((s) => s.runs.reduce((n, r) => n + failed(pick(r)), 0));
    const verdict = eb || ec ? `n/a, errors answered (non-2xx or socket): base ${fmtInt(eb!)}, current ${fmtInt(ec!)}` : ratio >= 0.95 ? "yes" : "no";
    gates.push(`${what}: ratio ${ratio.toFixed(3)}, ratio ≥ 0.95: ${verdict}`);
  };
  gate("report creation at 32 connections, 2xx req/s", add("report creation, 32 conn., 2xx req/s", (r) => okRps(r.create), true, fmtInt), (r) => r.create);
  gate("report creation, server CPU per report", add("report creation, server CPU µs per report", (r) => r.createCpuUs, false, (n) => n.toFixed(0)), (r) => r.create);
  add("report creation, 32 conn., p50 ms", (r) => r.create.latencyMs.p50, false, fmtMs);
  add("report creation, 32 conn., p99 ms", (r) => r.create.latencyMs.p99, false, fmtMs);
  QUERIES.forEach(([name], i) => {
    add(`GET /reports ${name}, 1 conn., p50 ms`, (r) => r.gets[i]!.latencyMs.p50, false, fmtMs);
    gate(`GET /reports p99, ${name}`, add(`GET /reports ${name}, 1 conn., p99 ms`, (r) => r.gets[i]!.latencyMs.p99, false, fmtMs), (r) => r.gets[i]!);
  });
  add("RSS under load (creation, largest), MB", (r) => r.rssMb, false, (n) => n.toFixed(1));
  const errors = (s: Side) => s.runs.reduce((n, r) => [r.create, ...r.gets].reduce((m, w) => m + failed(w), n), 0);
  rows.push(["errors (non-2xx, socket), all runs", errors(b), errors(c), ""]);

  console.log(`## Flagstaff: ${c.label} beside ${b.label}, ${new Date().toISOString()}`);
  console.log("");
  console.log(
    `${cpus().length} × ${cpus()[0]?.model}, Bun ${Bun.version}; wrk on the same machine; median of ${ROUNDS} round${ROUNDS === 1 ? "" : "s"} per binary (order base, current, current, base, …); ` +
      `creation ${LOAD_S} s per round on a fresh database; GET /reports ${GET_S} s per query per round, ${fmtInt(SEED_COUNT)} reports seeded. ` +
      `Load average (1 min) ${loadAtStart.toFixed(1)} before the run, ${loadavg()[0]!.toFixed(1)} at its end: more than about 1 before it means other work shared the CPUs.`,
  );
  console.log("");
  console.log(markdownTable(["metric", `base ${b.label}`, `current ${c.label}`, "ratio (≥ 1 better)"], rows));
  console.log("");
  for (const line of gates) console.log(line);
  console.log("");
  for (const s of sides) {
    console.log(`per round, ${s.name}: create 2xx req/s ${s.runs.map((r) => fmtInt(okRps(r.create))).join(" / ")}; ` + QUERIES.map(([name], i) => `${name} p99 ms ${s.runs.map((r) => fmtMs(r.gets[i]!.latencyMs.p99)).join(" / ")}`).join("; "));
  }
} finally {
  for (const s of servers) if (s.proc.exitCode === null) s.proc.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------

/** One round of one binary: report creation on a fresh database, then GET /reports on its seeded one. */
async function measure(side: Side, wrkBin: string): Promise<Side["runs"][number]> {
  const dir = mkdtempSync(join(work, `${side.name}-create-`));
  const init = await initDatabase(side.binary, dir);
  const app = await serve(side.binary, init.db);
  const keyEnv = { KEY: init.secretKey, PROJECT: init.projectId };
  const report = { subject: { type: "user", externalId: "u-1" }, target: { contentType: "post", contentExternalId: "p-1" }, reason: "spam" };
  await probe(side, "POST …/reports", `${app.url}/sdk/flagstaff/v1/projects/${init.projectId}/reports`, init.secretKey, report);
  await wrk(wrkBin, { url: app.url, connections: 32, seconds: 3, script: "report.lua", env: keyEnv }); // warm-up
  const rss = sampleRss(app.proc.pid);
  const cpuBefore = cpuMs(app.proc.pid);
  const create = await wrk(wrkBin, { url: app.url, connections: 32, seconds: LOAD_S, script: "report.lua", env: keyEnv });
  // The server's CPU time per report created: steadier than req/s on a shared machine.
  const createCpuUs = ((cpuMs(app.proc.pid) - cpuBefore) * 1000) / Math.max(1, create.requests - failed(create));
  const rssMb = rss.stop();
  await stop(app);
  rmSync(dir, { recursive: true, force: true });

  const big = await serve(side.binary, side.db);
  const gets: WrkResult[] = [];
  for (const [, q] of QUERIES) {
    const url = `${big.url}/sdk/flagstaff/v1/reports${q ? "?" + q : ""}`;
    await probe(side, `GET /reports${q ? "?" + q : ""}`, url, side.key);
    await wrk(wrkBin, { url, connections: 1, seconds: 1, script: "get.lua", env: { KEY: side.key } }); // warm-up
    gets.push(await wrk(wrkBin, { url, connections: 1, seconds: GET_S, script: "get.lua", env: { KEY: side.key } }));
  }
  await stop(big);
  return { create, rssMb, createCpuUs, gets };
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

async function initDatabase(binary: string, dir: string) {
  const db = join(dir, "flagstaff.db");
  const init = JSON.parse(await run([binary, "init", "--json"], cleanEnv({ FLAGSTAFF_DB: db }), dir)) as { projectId: string; secretKey: string };
  return { db, ...init };
}

async function serve(binary: string, db: string): Promise<Server> {
  const env = cleanEnv({ FLAGSTAFF_DB: db, PORT: "0", HOST: "127.0.0.1", FLAGSTAFF_REPORT_RATE_LIMIT: "100000000", FLAGSTAFF_LOG_LEVEL: "info" });
  const server = await startServer([binary, "serve"], env, { logFile: join(dirname(db), "server.log"), cwd: dirname(db) });
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
