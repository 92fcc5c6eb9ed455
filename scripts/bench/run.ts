/**
 * `bun run bench`: Flagstaff's performance on this machine, measured against two ceilings of
 * the same machine, printed as markdown tables and written as JSON to bench-results/.
 *
 *   bun scripts/bench/run.ts [--quick] [--reports N] [--binary dist/flagstaff] [--no-build] [--source]
 *                            [--no-postgres] [--pg-delay-ms 1] [--only rules|postgres|attachments|media]
 *                            [--server-env KEY=VALUE ...] [--media-engine sqlite|postgres|postgres-away]
 *                            [--media-connections 8]
 *
 * What runs, in order (about 11½ minutes on the 2-core benchmark machine, 5½ of them the
 * PostgreSQL section; --quick shortens every phase, about 4 minutes, for trying it out):
 *  1. the binary is built (scripts/build.ts): everything below runs the compiled dist/flagstaff,
 *     as a self-hoster would, with its JSON access log written to a file (level info).
 *     `--no-build` runs the binary already there (`--binary`); `--source` runs
 *     `bun src/cli.ts` instead (no build; for iterating on a change: its figures are not the
 *     binary's);
 *  2. ceilings: a bare Bun.serve answering fixed JSON; a bare Bun.serve inserting one row per
 *     request into bun:sqlite (WAL, synchronous=NORMAL); bare bun:sqlite one-row transactions
 *     with no HTTP. The first one also shows that wrk is not the bottleneck: it is how fast
 *     wrk drives a server that does nothing;
 *  3. report creation over HTTP at 1, 8, 32 and 128 connections (rate limit raised through
 *     FLAGSTAFF_REPORT_RATE_LIMIT), then identity upserts at 32; RSS idle and the largest seen
 *     under load; afterwards every acknowledged (201) report is looked for in the database;
 *  4. GET /reports with 1,000,000 reports seeded (scripts/bench/seed.ts), one connection, the
 *     default query and each filter, after a warm-up pass;
 *  5. start-up of the compiled binary to a 200 from /readyz, five times, on the 1M database,
 *     with an empty environment (env -i) from an empty folder;
 *  6. PostgreSQL (about 5½ minutes, one of them copying the 1M database; skipped with
 *     --no-postgres, or with a line saying so when no PostgreSQL server programs are found):
 *     a throwaway cluster (scripts/pg-cluster.ts, its default settings, stopped at the end and
 *     on Ctrl-C), a database per phase, the same binary with FLAGSTAFF_DATABASE_URL:
 *     - report creation at 8 and 32 connections on a database made by `flagstaff init`, with
 *       one instance, then two `serve` processes on the same database loaded by two wrk at
 *       once, each with half the connections (summed 2xx req/s, the worse p99); the reports
 *       each run stored are counted against the 201s;
 *     - the same at 32 connections with PostgreSQL "on another host": every instance reaches it
 *       through scripts/pg-proxy.ts, which holds each chunk --pg-delay-ms (default 1) each way,
 *       a 2 ms round trip, on a database of its own;
 *     - round trips per report, counted by that proxy: on a warm instance of their own (job
 *       poller and enforcement tick slowed to once an hour; the idle rate is subtracted),
 *       N reports one after the other, each on a new target with a new subject and a new
 *       reporter, then N on one existing target by the same identities;
 *     - CPU time per report of the instances, of PostgreSQL (all its processes) and of this
 *       process (the proxy runs in it) in every run;
 *     - GET /reports on a copy of step 4's database (scripts/bench/copy-to-postgres.ts, into a
 *       database made by `flagstaff migrate`: same rows, same API key), the same queries, one
 *       connection, with one instance, then one connection to each of two instances at once;
 *     printed beside this run's SQLite figures (and under `postgres` in the JSON);
 *  7. rules on intake (scripts/bench/rules.ts, about 1½ minutes): report creation at 32
 *     connections with 50 live report.created rules beside the same without rules, six rounds
 *     in alternating order after a warm-up, and their ratio (target ≥ 0.8). `--only rules` builds the binary and runs this step alone.
 *  8. attachments (scripts/bench/attachments.ts, about 2 minutes): a 50 MB upload's throughput
 *     beside a bare Bun.write of the same bytes, the server's RSS while 10 uploads of 50 MB run
 *     at once, and report intake at 8 connections while 50 MB uploads run back to back, as a ratio to intake alone
 *     (target ≥ 0.9), alternating rounds, with the load average. `--only attachments` runs it alone.
 *  9. media (scripts/bench/media.ts, about 2 minutes): PDQ hash time per megapixel (JPEG, PNG,
 *     decoding included), one lookup against 100,000 and 1,000,000 entries, memory per million;
 *     report intake at 8 connections with media hashes against without, banks of 150,000 entries
 *     loaded, alternating rounds, as a ratio (target ≥ 0.9). `--only media` runs it alone;
 *     with `--media-engine postgres`, its server on a database of a throwaway PostgreSQL
 *     cluster (scripts/pg-cluster.ts) instead of a SQLite file; with `postgres-away`, that
 *     database reached through scripts/pg-proxy.ts (--pg-delay-ms each way, "on another host",
 *     though its processes and the proxy still share this machine's cores);
 *     `--media-connections N` sets wrk's connections (default 8).
 *
 * `--only postgres` (about 2½ minutes; --quick about 1½) runs step 6's report creation and round
 * trips alone, beside a SQLite reference run (report creation at 8 and 32 connections), and
 * writes bench-results/postgres-<time>.json and latest-postgres.{json,md}; with `--reports N`
 * it also seeds N reports and runs step 6's GET /reports on PostgreSQL (without SQLite's
 * figures beside them).
 * The load generator is wrk (Debian's package; installed when missing), on the same machine.
 */
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { findPgBinDir, newDatabase, startPgCluster, type PgCluster } from "../pg-cluster.ts";
import { copySqliteToPostgres, type CopyResult } from "./copy-to-postgres.ts";
import { renderRules, rulesComparison } from "./rules.ts";
import { attachmentsComparison, renderAttachments } from "./attachments.ts";
import { mediaComparison, renderMedia } from "./media.ts";
import { seedReports } from "./seed.ts";
import { startPgProxy, type PgProxy } from "../pg-proxy.ts";
import { ensureWrk, fmtInt, fmtMs, markdownTable, median, processTreeCpuMs, ROOT, rssMb, run, sampleRss, startServer, wrk, type Server, type WrkResult } from "./lib.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    quick: { type: "boolean" },
    reports: { type: "string" },
    binary: { type: "string", default: "dist/flagstaff" },
    "no-build": { type: "boolean" },
    "no-postgres": { type: "boolean" },
    source: { type: "boolean" },
    "pg-delay-ms": { type: "string", default: "1" },
    only: { type: "string" },
    "server-env": { type: "string", multiple: true },
    "media-engine": { type: "string", default: "sqlite" },
    "media-connections": { type: "string", default: "8" },
  },
});
const QUICK = !!args.quick;
const MEDIA_ENGINES = ["sqlite", "postgres", "postgres-away"] as const;
const MEDIA_ENGINE = MEDIA_ENGINES.find((e) => e === args["media-engine"]);
if (!MEDIA_ENGINE) throw new Error(`--media-engine ${args["media-engine"]}: one of ${MEDIA_ENGINES.join(", ")}`);
if (MEDIA_ENGINE !== "sqlite" && args.only !== "media") throw new Error(`--media-engine ${MEDIA_ENGINE} goes with --only media`);
const MEDIA_CONNECTIONS = Number(args["media-connections"]);
if (!Number.isInteger(MEDIA_CONNECTIONS) || MEDIA_CONNECTIONS < 1) throw new Error(`--media-connections ${args["media-connections"]}: a whole number ≥ 1`);
const SEED_COUNT = Number(args.reports ?? (QUICK ? 100_000 : 1_000_000));
const LOAD_S = QUICK ? 3 : 10;
const GET_S = QUICK ? 2 : 5;
const BINARY = resolve(ROOT, args.binary!);
const BUN = process.execPath;
const SOURCE = !!args.source;
/** How Flagstaff is run: the compiled binary, or its source with `--source`. */
const FLAGSTAFF = SOURCE ? [BUN, join(ROOT, "src", "cli.ts")] : [BINARY];
const flagstaff = (...rest: string[]) => [...FLAGSTAFF, ...rest];
/** `--server-env KEY=VALUE` (repeatable): settings given to the attachments section's server, to compare a variant with the default. */
const SERVER_ENV: Record<string, string> = Object.fromEntries(
  (args["server-env"] ?? []).map((kv) => {
    const at = kv.indexOf("=");
    if (at < 1) throw new Error(`--server-env ${kv}: KEY=VALUE`);
    return [kv.slice(0, at), kv.slice(at + 1)];
  }),
);
/** PostgreSQL "on another host": the latency proxy's delay each way. */
const PG_DELAY_MS = Number(args["pg-delay-ms"]);
if (!(PG_DELAY_MS >= 0)) throw new Error(`--pg-delay-ms ${args["pg-delay-ms"]}: a number of milliseconds ≥ 0`);
/** Reports one after the other for the round-trip count, of each kind. */
const ROUND_TRIP_REPORTS = QUICK ? 30 : 100;
const work = mkdtempSync(join(tmpdir(), "flagstaff-bench-"));
const log = (s: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}`);
const servers: Server[] = [];
/** The PostgreSQL section's cluster while it runs (stopped by the section, or on SIGINT and errors). */
let cluster: PgCluster | null = null;
/** The media step's latency proxy, when it has one (stopped with the cluster). */
let mediaProxy: PgProxy | null = null;
async function stopCluster(): Promise<void> {
  const c = cluster;
  cluster = null;
  await mediaProxy?.stop();
  mediaProxy = null;
  await c?.stop();
}

process.on("SIGINT", async () => {
  for (const s of servers) s.proc.kill("SIGKILL");
  await stopCluster().catch(() => {});
  rmSync(work, { recursive: true, force: true });
  process.exit(130);
});

const results: Record<string, unknown> = {
  when: new Date().toISOString(),
  machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryGb: Math.round(totalmem() / 2 ** 30), bun: Bun.version },
  settings: {
    quick: QUICK,
    loadSeconds: LOAD_S,
    getSeconds: GET_S,
    seededReports: SEED_COUNT,
    loadGenerator: "wrk (same machine)",
    accessLog: "level info, to a file",
    flagstaff: SOURCE ? "bun src/cli.ts (--source)" : "compiled binary",
    pgDelayMsEachWay: PG_DELAY_MS,
  },
};

try {
  const wrkBin = await ensureWrk(log);
  // wrk prints its version with its usage, and exits 1.
  const wrkVersion = Bun.spawnSync([wrkBin, "--version"]);
  results.loadGenerator = (wrkVersion.stdout.toString() + wrkVersion.stderr.toString()).split("\n")[0]!.replace(/ Copyright.*/, "");
  if (!args["no-build"] && !SOURCE) {
    log("building dist/flagstaff");
    await run([BUN, join(ROOT, "scripts/build.ts"), "--no-smoke", "--outfile", BINARY]);
  }
  const rulesDeps = { wrkBin, flagstaff: FLAGSTAFF, work, seconds: LOAD_S, env: flagstaffEnv, cleanEnv, log, servers };
  if (args.only === "rules") {
    log("rules on intake");
    const r = await rulesComparison(rulesDeps);
    console.log(renderRules(r));
    process.exitCode = 0;
  } else if (args.only === "postgres") {
    await onlyPostgres(wrkBin);
  } else if (args.only === "attachments") {
    log("attachments");
    console.log(renderAttachments(await attachmentsComparison({ ...rulesDeps, quick: QUICK, serverEnv: SERVER_ENV })));
    process.exitCode = 0;
  } else if (args.only === "media") {
    log("media");
    const database = MEDIA_ENGINE === "sqlite" ? null : await mediaDatabase(MEDIA_ENGINE === "postgres-away" ? PG_DELAY_MS : null);
    const engine = database ? { env: () => pgEnv(database.url), engine: database.label } : {};
    console.log(renderMedia(await mediaComparison({ ...rulesDeps, ...engine, quick: QUICK, serverEnv: SERVER_ENV, connections: MEDIA_CONNECTIONS })));
    process.exitCode = 0;
  } else {
    if (args.only) throw new Error(`--only: unknown section ${args.only} (known: rules, postgres, attachments, media)`);

    // -------------------------------------------------------------------------------------------
    log("ceilings");
    const bareJson = await startServer([BUN, join(ROOT, "scripts/bench/bare.ts"), "json"], cleanEnv());
    servers.push(bareJson);
    await wrk(wrkBin, { url: bareJson.url + "/", connections: 32, seconds: 2, script: "plain.lua" });
    const ceilingJson = await wrk(wrkBin, { url: bareJson.url + "/", connections: 32, seconds: LOAD_S, script: "plain.lua" });
    await bareJson.stop();
    const bareInsert = await startServer([BUN, join(ROOT, "scripts/bench/bare.ts"), "insert", join(work, "bare-insert.db")], cleanEnv());
    servers.push(bareInsert);
    await wrk(wrkBin, { url: bareInsert.url + "/", connections: 32, seconds: 2, script: "plain.lua", env: { METHOD: "POST" } });
    const ceilingInsert = await wrk(wrkBin, { url: bareInsert.url + "/", connections: 32, seconds: LOAD_S, script: "plain.lua", env: { METHOD: "POST" } });
    await bareInsert.stop();
    const sqliteOut = await run([BUN, join(ROOT, "scripts/bench/bare.ts"), "sqlite", join(work, "bare-sqlite.db"), String(LOAD_S * 1000)]);
    const sqliteRun = JSON.parse(sqliteOut.split("\n").find((l) => l.startsWith("BENCH_JSON "))!.slice(11)) as { rows: number; ms: number };
    const ceilingSqlite = Math.round(sqliteRun.rows / (sqliteRun.ms / 1000));
    results.ceilings = { bareJsonC32: ceilingJson, bareInsertC32: ceilingInsert, bareSqliteRowsPerSecond: ceilingSqlite };

    // -------------------------------------------------------------------------------------------
    log("report creation and identity upserts");
    const createDir = mkdtempSync(join(work, "create-"));
    const createDb = join(createDir, "flagstaff.db");
    const init = JSON.parse(await run(flagstaff("init", "--json"), cleanEnv({ FLAGSTAFF_DB: createDb }), createDir)) as { projectId: string; secretKey: string };
    const app = await startServer(flagstaff("serve"), flagstaffEnv(createDb), { logFile: join(createDir, "server.log"), cwd: createDir });
    servers.push(app);
    await Bun.sleep(2000);
    const rssIdle = rssMb(app.proc.pid);
    const loadRss = sampleRss(app.proc.pid);
    const keyEnv = { KEY: init.secretKey, PROJECT: init.projectId };
    await wrk(wrkBin, { url: app.url, connections: 32, seconds: 3, script: "report.lua", env: keyEnv }); // warm-up
    const storedBefore = countReports(createDb); // a reader beside the server (WAL)
    const creation: WrkResult[] = [];
    for (const c of [1, 8, 32, 128]) {
      const r = await wrk(wrkBin, { url: app.url, connections: c, seconds: LOAD_S, script: "report.lua", env: keyEnv });
      log(`  reports c=${c}: ${fmtInt(r.rps)}/s p50 ${r.latencyMs.p50} ms p99 ${r.latencyMs.p99} ms (non-2xx ${r.non2xx})`);
      creation.push(r);
    }
    const identity = await wrk(wrkBin, { url: app.url, connections: 32, seconds: LOAD_S, script: "identity.lua", env: keyEnv });
    log(`  identities c=32: ${fmtInt(identity.rps)}/s p99 ${identity.latencyMs.p99} ms`);
    const rssLoad = loadRss.stop();
    const stopStarted = performance.now();
    const stopCode = await app.stop();
    const stopMs = performance.now() - stopStarted;
    // Every acknowledged report must be in the database (wrk counts answers; non-2xx are reported apart).
    // wrk counts answers, not 201s alone: with no non-2xx and no socket errors, every request
    // of the measured runs was acknowledged with 201.
    const acknowledged = creation.reduce((n, r) => n + r.requests - r.non2xx - r.socketErrors, 0);
    const stored = countReports(createDb) - storedBefore;
    results.creation = creation;
    results.identityUpsertC32 = identity;
    results.memoryMb = { idle: round1(rssIdle), underLoadMax: round1(rssLoad) };
    results.creationCheck = { acknowledged, newReportsInDatabase: stored, errors: creation.reduce((n, r) => n + r.non2xx + r.socketErrors, 0) };
    results.gracefulStop = { exitCode: stopCode, ms: Math.round(stopMs) };

    // -------------------------------------------------------------------------------------------
    log(`seeding ${fmtInt(SEED_COUNT)} reports`);
    const bigDir = mkdtempSync(join(work, "big-"));
    const bigDb = join(bigDir, "flagstaff.db");
    const bigInit = JSON.parse(await run(flagstaff("init", "--json"), cleanEnv({ FLAGSTAFF_DB: bigDb }), bigDir)) as { projectId: string; secretKey: string };
    const seeded = seedReports(bigDb, { count: SEED_COUNT, log: (s) => (/000 \//.test(s) && !/[1-9]50000 \//.test(s) ? log("  " + s) : undefined) });
    results.seed = { reports: seeded.reports, cases: seeded.cases, identities: seeded.identities, seconds: Math.round(seeded.ms / 100) / 10 };

    log("GET /reports");
    const big = await startServer(flagstaff("serve"), flagstaffEnv(bigDb), { logFile: join(bigDir, "server.log"), cwd: bigDir });
    servers.push(big);
    const firstPage = await firstPageOf(big.url, bigInit.secretKey);
    const queries = reportQueries(bigInit.projectId, seeded.sample, firstPage);
    const getEnv = { KEY: bigInit.secretKey };
    const listUrl = (q: string) => `${big.url}/sdk/flagstaff/v1/reports${q ? "?" + q : ""}`;
    for (const [, q] of queries) await wrk(wrkBin, { url: listUrl(q), connections: 1, seconds: 1, script: "get.lua", env: getEnv }); // warm-up
    const gets: (WrkResult & { query: string })[] = [];
    for (const [name, q] of queries) {
      const r = await wrk(wrkBin, { url: listUrl(q), connections: 1, seconds: GET_S, script: "get.lua", env: getEnv });
      log(`  ${name}: p50 ${r.latencyMs.p50} ms p99 ${r.latencyMs.p99} ms`);
      gets.push({ query: name, ...r });
    }
    const getsC8 = await wrk(wrkBin, { url: listUrl(""), connections: 8, seconds: GET_S, script: "get.lua", env: getEnv });
    results.listReports = { reports: SEED_COUNT, connections: 1, runs: gets, defaultQueryAt8Connections: getsC8, rssAfterMb: round1(rssMb(big.proc.pid)) };
    await big.stop();

    // -------------------------------------------------------------------------------------------
    log("start-up of the compiled binary");
    const startups: { readyMs: number; rssMb: number }[] = [];
    const emptyDir = mkdtempSync(join(work, "empty-"));
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const proc = Bun.spawn(flagstaff("serve"), { cwd: emptyDir, env: cleanEnv({ FLAGSTAFF_DB: bigDb, PORT: "3199", HOST: "127.0.0.1", FLAGSTAFF_SHUTDOWN_DRAIN_MS: "0" }), stdout: "ignore", stderr: "ignore" });
      let ready = false;
      while (!ready && performance.now() - started < 10_000) {
        ready = await fetch("http://127.0.0.1:3199/readyz").then((r) => r.status === 200, () => false);
        if (!ready) await Bun.sleep(2);
      }
      const readyMs = performance.now() - started;
      startups.push({ readyMs: Math.round(readyMs), rssMb: round1(rssMb(proc.pid)) });
      proc.kill("SIGTERM");
      await proc.exited;
    }
    const readyMs = startups.map((s) => s.readyMs).sort((a, b) => a - b);
    results.startup = { runs: startups, medianMs: readyMs[2], maxMs: readyMs[4], database: `${fmtInt(SEED_COUNT)} reports` };

    // -------------------------------------------------------------------------------------------
    log("rules on intake");
    const rulesRun = await rulesComparison(rulesDeps);
    results.rulesOnIntake = rulesRun;

    // -------------------------------------------------------------------------------------------
    const pgSection = await postgresSection(wrkBin, { bigDb, bigInit, queries, firstPage });
    results.postgres = pgSection;

    // -------------------------------------------------------------------------------------------
    log("attachments");
    const attachmentsRun = await attachmentsComparison({ ...rulesDeps, quick: QUICK, serverEnv: SERVER_ENV });
    results.attachments = attachmentsRun;

    // -------------------------------------------------------------------------------------------
    log("media");
    const mediaRun = await mediaComparison({ ...rulesDeps, quick: QUICK, serverEnv: SERVER_ENV });
    results.media = mediaRun;

    // -------------------------------------------------------------------------------------------
    const c32 = creation[2]!;
    const worstGet = gets.reduce((a, b) => (b.latencyMs.p99 > a.latencyMs.p99 ? b : a));
    results.ratios = {
      creationC32_vs_bareJson: round3(c32.rps / ceilingJson.rps),
      creationC32_vs_bareHttpInsert: round3(c32.rps / ceilingInsert.rps),
      creationC32_vs_bareSqliteInsert: round3(c32.rps / ceilingSqlite),
      identityC32_vs_bareHttpInsert: round3(identity.rps / ceilingInsert.rps),
      wrkHeadroom_bareJson_vs_creationC32: round1(ceilingJson.rps / c32.rps),
    };
    results.targets = [
      target("report creation at 32 connections", "≥ 10,000/s", `${fmtInt(c32.rps)}/s`, c32.rps >= 10_000),
      target("report creation p99 at 32 connections", "≤ 15 ms", `${fmtMs(c32.latencyMs.p99)} ms`, c32.latencyMs.p99 <= 15),
      target(`GET /reports p99, every filter, ${fmtInt(SEED_COUNT)} reports`, "≤ 10 ms", `${fmtMs(worstGet.latencyMs.p99)} ms (worst: ${worstGet.query})`, worstGet.latencyMs.p99 <= 10),
      target("RSS idle", "≤ 120 MB", `${round1(rssIdle)} MB`, rssIdle <= 120),
      target("RSS under load", "≤ 250 MB", `${round1(rssLoad)} MB`, rssLoad <= 250),
      target("start-up to ready (median of 5)", "≤ 300 ms", `${readyMs[2]} ms`, readyMs[2]! <= 300),
      target("report creation at 32 connections, 50 live rules vs none", "≥ 0.8", String(rulesRun.ratio), rulesRun.ratio >= 0.8),
      target("report intake at 8 connections while 50 MB uploads run vs alone", "≥ 0.9", String(attachmentsRun.intake.ratio), attachmentsRun.intake.ratio >= 0.9),
      target("report intake at 8 connections with media hashes vs without", "≥ 0.9", String(mediaRun.intake.ratio), mediaRun.intake.ratio >= 0.9),
      target(`RSS growth, ${attachmentsRun.rss.concurrent} uploads of ${attachmentsRun.fileMb} MB at once`, `≤ ${attachmentsRun.rssBoundMb} MB`, `${round1(attachmentsRun.rss.peakMb - attachmentsRun.rss.idleMb)} MB`, attachmentsRun.rss.peakMb - attachmentsRun.rss.idleMb <= attachmentsRun.rssBoundMb),
    ];

    const out = render(results, { ceilingJson, ceilingInsert, ceilingSqlite, creation, identity, gets, getsC8, rssIdle, rssLoad, startups, pg: pgSection }) + "\n\n" + renderRules(rulesRun) + "\n\n" + renderAttachments(attachmentsRun) + "\n\n" + renderMedia(mediaRun);
    console.log(out);
    const dir = join(ROOT, "bench-results");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `bench-${(results.when as string).replace(/[:.]/g, "-")}.json`);
    writeFileSync(file, JSON.stringify(results, null, 2) + "\n");
    writeFileSync(join(dir, "latest.json"), JSON.stringify(results, null, 2) + "\n");
    writeFileSync(join(dir, "latest.md"), out + "\n");
    console.log(`\nJSON: ${file}`);
  }
} finally {
  for (const s of servers) if (s.proc.exitCode === null) s.proc.kill("SIGKILL");
  await stopCluster().catch((err: unknown) => log(`stopping PostgreSQL failed: ${err instanceof Error ? err.message : String(err)}`));
  rmSync(work, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------

/**
 * `--only media --media-engine postgres`: the media step's server on a database of a throwaway
 * cluster (scripts/pg-cluster.ts, its default settings; stopped at the end), the shape platforms
 * past one machine run, minus the network.
 */
/**
 * The media step's database on a throwaway cluster; with `delayMs`, reached through the latency
 * proxy (scripts/pg-proxy.ts) that puts it "on another host", as the PostgreSQL section does.
 */
async function mediaDatabase(delayMs: number | null): Promise<{ url: string; label: string }> {
  log("media: starting a throwaway PostgreSQL cluster");
  const pg = await startPgCluster();
  cluster = pg;
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  try {
    const url = await newDatabase(pg.url, "bench_media", admin);
    const [version] = await admin<{ v: string }[]>`SELECT current_setting('server_version') AS v`;
    const label = `PostgreSQL ${version!.v}, a throwaway cluster on this machine`;
    if (delayMs === null) return { url, label };
    const proxy = await startPgProxy({ target: { host: "127.0.0.1", port: pg.port }, delayMs });
    mediaProxy = proxy;
    return { url: proxy.url(url), label: `${label}, reached through scripts/pg-proxy.ts holding each chunk ${delayMs} ms each way ("on another host": its CPU still shares this machine's cores)` };
  } finally {
    await admin.end();
  }
}


function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: "/usr/bin:/bin", HOME: work, ...extra };
}

function flagstaffEnv(db: string): Record<string, string> {
  return cleanEnv({ FLAGSTAFF_DB: db, PORT: "0", HOST: "127.0.0.1", FLAGSTAFF_REPORT_RATE_LIMIT: "100000000", FLAGSTAFF_LOG_LEVEL: "info" });
}

function countReports(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.query("SELECT count(*) AS n FROM reports").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** The first page of GET /reports (default query): its report ids and cursor. */
interface FirstPage {
  ids: string[];
  nextCursor: string;
}

async function firstPageOf(baseUrl: string, key: string): Promise<FirstPage> {
  const res = await fetch(`${baseUrl}/sdk/flagstaff/v1/reports`, { headers: { authorization: `Bearer ${key}` } });
  if (res.status !== 200) throw new Error(`GET /reports answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { reports: { id: string }[]; nextCursor: string };
  return { ids: body.reports.map((r) => r.id), nextCursor: body.nextCursor };
}

/** Requests per second answered 2xx: an error answered fast is no throughput. */
function okRps(w: WrkResult): number {
  return w.requests ? (w.rps * (w.requests - w.non2xx - w.socketErrors)) / w.requests : 0;
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/** Two wrk processes at once, one per instance, each with its share of the connections. */
interface SplitResult {
  /** All connections, both wrk processes together. */
  connections: number;
  /** Summed over both: requests answered 2xx per second. */
  rps2xx: number;
  /** The worse of the two. */
  p50Ms: number;
  p99Ms: number;
  errors: number;
  runs: WrkResult[];
}

/** CPU time per report answered 2xx during one run, in ms (null: fewer than 20 reports, too few to divide by). */
interface CpuPerReport {
  /** The Flagstaff instances of the run, together. */
  flagstaff: number;
  /** PostgreSQL: the postmaster and all its processes. */
  postgres: number;
  /** This process: the latency proxy in the runs through it, else little. */
  benchProcess: number;
}

/** Round trips (counted by scripts/pg-proxy.ts) and frontend messages per report. */
interface PerReport {
  reports: number;
  roundTrips: number;
  /** Statements run: Execute (extended protocol) and Query (simple) messages. */
  statements: number;
  /** Statements prepared anew (0 once the connections are warm). */
  parses: number;
  messages: Record<string, number>;
  /** Wall time per report, one after the other, through the proxy. */
  ms: number;
}

interface RoundTrips {
  delayMsEachWay: number;
  /** `SELECT 1` on an open connection, median of 100, through the proxy and straight (ms). */
  select1Ms: { throughProxy: number; straight: number };
  /** Round trips per second of the idle instance (subtracted from the runs). */
  idlePerSecond: number;
  /** Each report on a new target, with a new subject and a new reporter. */
  newTarget: PerReport;
  /** Each report on the same target, by the same subject and reporter, as one before. */
  existingTarget: PerReport;
}

interface PgSection {
  server: { version: string; settings: Record<string, string> };
  /** PostgreSQL on loopback. */
  creation: { oneInstance: WrkResult[]; twoInstances: SplitResult[] };
  /** PostgreSQL through the latency proxy, at 32 connections. */
  creationAway: { delayMsEachWay: number; oneInstance: WrkResult; twoInstances: SplitResult };
  /** By run: "loopback 1 c8", "loopback 2 c32", "away 1 c32", …. */
  cpuPerReport: Record<string, CpuPerReport | null>;
  roundTripsPerReport: RoundTrips;
  creationCheck: { acknowledged: number; newReportsInDatabase: number; errors: number };
  copy: CopyResult | null;
  listReports: {
    reports: number;
    oneInstance: (WrkResult & { query: string })[];
    defaultQueryAt8Connections: WrkResult;
    twoInstances: (SplitResult & { query: string })[];
    /** The same report ids and cursor on the first page of the default query as on SQLite. */
    firstPageSameAsSqlite: boolean;
  } | null;
}
type PgOutcome = PgSection | { skipped: string };

function pgEnv(url: string): Record<string, string> {
  return cleanEnv({ FLAGSTAFF_DATABASE_URL: url, PORT: "0", HOST: "127.0.0.1", FLAGSTAFF_REPORT_RATE_LIMIT: "100000000", FLAGSTAFF_LOG_LEVEL: "info" });
}

async function wrkSplit(
  wrkBin: string,
  urls: string[],
  opts: { connections: number; seconds: number; script: string; env: Record<string, string> },
): Promise<SplitResult> {
  // One wrk thread each: two processes of one thread, as one process of two threads drives one instance.
  const runs = await Promise.all(urls.map((url) => wrk(wrkBin, { ...opts, url, connections: opts.connections / urls.length, threads: 1 })));
  return {
    connections: opts.connections,
    rps2xx: Math.round(runs.reduce((n, r) => n + okRps(r), 0)),
    p50Ms: Math.max(...runs.map((r) => r.latencyMs.p50)),
    p99Ms: Math.max(...runs.map((r) => r.latencyMs.p99)),
    errors: runs.reduce((n, r) => n + r.non2xx + r.socketErrors, 0),
    runs,
  };
}

/**
 * Report creation and GET /reports on PostgreSQL (a throwaway cluster of this machine, its
 * default settings), with one instance of the binary, then two on the same database.
 */
async function postgresSection(
  wrkBin: string,
  /** The SQLite database GET /reports runs on (copied), or null to leave GET /reports out. */
  sqlite: { bigDb: string; bigInit: { projectId: string; secretKey: string }; queries: [string, string][]; firstPage: FirstPage } | null,
): Promise<PgOutcome> {
  if (args["no-postgres"]) {
    log("PostgreSQL: skipped (--no-postgres)");
    return { skipped: "--no-postgres" };
  }
  try {
    findPgBinDir();
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    log(`PostgreSQL: skipped: ${reason}`);
    return { skipped: reason };
  }
  log("PostgreSQL: starting a throwaway cluster");
  const pg = await startPgCluster();
  cluster = pg;
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  const mine: Server[] = [];
  const start = async (url: string, dir: string, name: string, extraEnv: Record<string, string> = {}) => {
    const s = await startServer(flagstaff("serve"), { ...pgEnv(url), ...extraEnv }, { logFile: join(dir, `server-${name}.log`), cwd: dir });
    servers.push(s);
    mine.push(s);
    return s;
  };
  const createDatabase = (name: string) => newDatabase(pg.url, name, admin);
  /** GET /reports on a copy of the SQLite phase's seeded database, one instance then two. */
  const getReports = async (s: NonNullable<typeof sqlite>) => {
    log(`PostgreSQL: copying the ${fmtInt(SEED_COUNT)}-report database into it (scripts/bench/copy-to-postgres.ts)`);
    const getUrl = await createDatabase("bench_get");
    const getDir = mkdtempSync(join(work, "pg-get-"));
    await run(flagstaff("migrate"), cleanEnv({ FLAGSTAFF_DATABASE_URL: getUrl }), getDir);
    const copy = await copySqliteToPostgres(s.bigDb, getUrl, { log: (line) => log(`  ${line}`) });
    log(`  ${fmtInt(copy.rows)} rows: copy ${(copy.copyMs / 1000).toFixed(1)} s, ANALYZE ${(copy.analyzeMs / 1000).toFixed(1)} s`);

    log("PostgreSQL: GET /reports, one instance then two");
    const getEnv = { KEY: s.bigInit.secretKey };
    const ga = await start(getUrl, getDir, "a");
    const pgFirst = await firstPageOf(ga.url, s.bigInit.secretKey);
    const firstPageSameAsSqlite = JSON.stringify(pgFirst) === JSON.stringify(s.firstPage);
    if (!firstPageSameAsSqlite) log("  warning: the first page of GET /reports differs from SQLite's on the same data");
    const listUrl = (base: string, q: string) => `${base}/sdk/flagstaff/v1/reports${q ? "?" + q : ""}`;
    for (const [, q] of s.queries) await wrk(wrkBin, { url: listUrl(ga.url, q), connections: 1, seconds: 1, script: "get.lua", env: getEnv }); // warm-up
    const oneGets: (WrkResult & { query: string })[] = [];
    for (const [name, q] of s.queries) {
      const r = await wrk(wrkBin, { url: listUrl(ga.url, q), connections: 1, seconds: GET_S, script: "get.lua", env: getEnv });
      log(`  one instance, ${name}: p50 ${r.latencyMs.p50} ms p99 ${r.latencyMs.p99} ms`);
      oneGets.push({ query: name, ...r });
    }
    const getsC8 = await wrk(wrkBin, { url: listUrl(ga.url, ""), connections: 8, seconds: GET_S, script: "get.lua", env: getEnv });
    const gb = await start(getUrl, getDir, "b");
    for (const [, q] of s.queries) await wrk(wrkBin, { url: listUrl(gb.url, q), connections: 1, seconds: 1, script: "get.lua", env: getEnv }); // warm-up of the second
    const twoGets: (SplitResult & { query: string })[] = [];
    for (const [name, q] of s.queries) {
      const r = await wrkSplit(wrkBin, [listUrl(ga.url, q), listUrl(gb.url, q)], { connections: 2, seconds: GET_S, script: "get.lua", env: getEnv });
      log(`  two instances, ${name}: ${fmtInt(r.rps2xx)} 2xx/s, worse p99 ${r.p99Ms} ms`);
      twoGets.push({ query: name, ...r });
    }
    await Promise.all([ga.stop(), gb.stop()]);

    return {
      copy,
      listReports: { reports: SEED_COUNT, oneInstance: oneGets, defaultQueryAt8Connections: getsC8, twoInstances: twoGets, firstPageSameAsSqlite },
    };
  };
  try {
    const [version] = await admin<{ v: string }[]>`SELECT current_setting('server_version') AS v`;
    const settingRows = await admin<{ name: string; setting: string; unit: string | null }[]>`
      SELECT name, setting, unit FROM pg_settings
      WHERE name IN ('shared_buffers', 'work_mem', 'synchronous_commit', 'fsync', 'wal_level', 'max_connections') ORDER BY name`;
    const settings = Object.fromEntries(settingRows.map((r) => [r.name, r.unit === "8kB" ? `${(Number(r.setting) * 8) / 1024} MB` : r.unit ? `${r.setting} ${r.unit}` : r.setting]));

    const check = { acknowledged: 0, newReportsInDatabase: 0, errors: 0 };
    const cpuPerReport: Record<string, CpuPerReport | null> = {};
    const postmaster = Number(readFileSync(join(pg.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
    const benchCpuMs = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    /** A database made by `flagstaff init` (straight, not through the proxy), and a client counting its reports. */
    const initDatabase = async (name: string) => {
      const url = await createDatabase(name);
      const dir = mkdtempSync(join(work, `pg-${name}-`));
      const init = JSON.parse(await run(flagstaff("init", "--json"), cleanEnv({ FLAGSTAFF_DATABASE_URL: url }), dir)) as { projectId: string; secretKey: string };
      const db = postgres(url, { max: 1, onnotice: () => {} });
      return { url, dir, db, keyEnv: { KEY: init.secretKey, PROJECT: init.projectId } };
    };
    // One measured run: the reports it stored are counted against its 201s (the warm-ups between
    // runs are left out), and the CPU its processes spent per report is kept under `label`.
    const measured = async <T>(label: string, db: postgres.Sql, instances: Server[], runs: () => Promise<T>, wrks: (t: T) => WrkResult[]): Promise<T> => {
      // Counted once the requests still in flight when the previous wrk stopped have been
      // answered (at most one per connection, written within milliseconds).
      const storedReports = async () => {
        await Bun.sleep(500);
        const [row] = await db<{ n: number }[]>`SELECT count(*)::int AS n FROM reports`;
        return row!.n;
      };
      const before = await storedReports();
      const cpuBefore = { flagstaff: instances.reduce((n, i) => n + processTreeCpuMs(i.proc.pid), 0), postgres: processTreeCpuMs(postmaster), bench: benchCpuMs() };
      const t = await runs();
      const cpuAfter = { flagstaff: instances.reduce((n, i) => n + processTreeCpuMs(i.proc.pid), 0), postgres: processTreeCpuMs(postmaster), bench: benchCpuMs() };
      const after = await storedReports();
      check.newReportsInDatabase += after - before;
      let ok = 0;
      for (const r of wrks(t)) {
        ok += r.requests - r.non2xx - r.socketErrors;
        check.acknowledged += r.requests - r.non2xx - r.socketErrors;
        check.errors += r.non2xx + r.socketErrors;
      }
      const per = (ms: number) => Math.round((ms / ok) * 1000) / 1000;
      const c = (cpuPerReport[label] =
        ok < 20
          ? null
          : { flagstaff: per(cpuAfter.flagstaff - cpuBefore.flagstaff), postgres: per(cpuAfter.postgres - cpuBefore.postgres), benchProcess: per(cpuAfter.bench - cpuBefore.bench) });
      if (c) log(`  ${label}: CPU per report: Flagstaff ${fmtCpu(c.flagstaff)} ms, PostgreSQL ${fmtCpu(c.postgres)} ms, this process ${fmtCpu(c.benchProcess)} ms`);
      return t;
    };

    // ---- report creation on loopback: one instance at 8 and 32 connections, then two instances sharing them
    log("PostgreSQL: report creation, one instance then two");
    const local = await initDatabase("bench_create");
    const a = await start(local.url, local.dir, "a");
    await wrk(wrkBin, { url: a.url, connections: 32, seconds: 3, script: "report.lua", env: local.keyEnv }); // warm-up
    const oneInstance: WrkResult[] = [];
    for (const c of [8, 32]) {
      const r = await measured(`loopback, 1 instance, c=${c}`, local.db, [a], () => wrk(wrkBin, { url: a.url, connections: c, seconds: LOAD_S, script: "report.lua", env: local.keyEnv }), (r) => [r]);
      log(`  one instance, c=${c}: ${fmtInt(okRps(r))} 2xx/s p50 ${r.latencyMs.p50} ms p99 ${r.latencyMs.p99} ms (errors ${r.non2xx + r.socketErrors})`);
      oneInstance.push(r);
    }
    const b = await start(local.url, local.dir, "b");
    await wrk(wrkBin, { url: b.url, connections: 16, seconds: 3, script: "report.lua", env: local.keyEnv }); // warm-up of the second
    const twoInstances: SplitResult[] = [];
    for (const c of [8, 32]) {
      const r = await measured(`loopback, 2 instances, c=${c}`, local.db, [a, b], () => wrkSplit(wrkBin, [a.url, b.url], { connections: c, seconds: LOAD_S, script: "report.lua", env: local.keyEnv }), (r) => r.runs);
      log(`  two instances, c=${c / 2}+${c / 2}: ${fmtInt(r.rps2xx)} 2xx/s, worse p99 ${r.p99Ms} ms (errors ${r.errors})`);
      twoInstances.push(r);
    }
    await Promise.all([a.stop(), b.stop()]);
    await local.db.end({ timeout: 5 });

    // ---- the same with PostgreSQL on "another host": through the latency proxy
    const away = `${2 * PG_DELAY_MS} ms away`;
    log(`PostgreSQL ${away} (scripts/pg-proxy.ts, ${PG_DELAY_MS} ms each way): report creation at 32 connections, one instance then two`);
    const proxy = await startPgProxy({ target: { host: "127.0.0.1", port: pg.port }, delayMs: PG_DELAY_MS });
    let creationAway: PgSection["creationAway"];
    let roundTripsPerReport: RoundTrips;
    try {
      const far = await initDatabase("bench_create_away");
      const fa = await start(proxy.url(far.url), far.dir, "away-a");
      await wrk(wrkBin, { url: fa.url, connections: 32, seconds: 3, script: "report.lua", env: far.keyEnv }); // warm-up
      const one = await measured(`${away}, 1 instance, c=32`, far.db, [fa], () => wrk(wrkBin, { url: fa.url, connections: 32, seconds: LOAD_S, script: "report.lua", env: far.keyEnv }), (r) => [r]);
      log(`  one instance, c=32: ${fmtInt(okRps(one))} 2xx/s p50 ${one.latencyMs.p50} ms p99 ${one.latencyMs.p99} ms (errors ${one.non2xx + one.socketErrors})`);
      const fb = await start(proxy.url(far.url), far.dir, "away-b");
      await wrk(wrkBin, { url: fb.url, connections: 16, seconds: 3, script: "report.lua", env: far.keyEnv }); // warm-up of the second
      const two = await measured(`${away}, 2 instances, c=32`, far.db, [fa, fb], () => wrkSplit(wrkBin, [fa.url, fb.url], { connections: 32, seconds: LOAD_S, script: "report.lua", env: far.keyEnv }), (r) => r.runs);
      log(`  two instances, c=16+16: ${fmtInt(two.rps2xx)} 2xx/s, worse p99 ${two.p99Ms} ms (errors ${two.errors})`);
      creationAway = { delayMsEachWay: PG_DELAY_MS, oneInstance: one, twoInstances: two };
      await Promise.all([fa.stop(), fb.stop()]);
      await far.db.end({ timeout: 5 });

      log(`PostgreSQL ${away}: round trips per report, ${ROUND_TRIP_REPORTS} reports one after the other of each kind`);
      const trips = await initDatabase("bench_round_trips");
      // Background work slowed to once an hour: what the proxy counts is the reports'.
      const quiet = { FLAGSTAFF_JOB_POLL_MS: "3600000", FLAGSTAFF_ENFORCEMENT_TICK_MS: "3600000", FLAGSTAFF_TRANSPARENCY_TICK_MS: "3600000" };
      const ta = await start(proxy.url(trips.url), trips.dir, "round-trips", quiet);
      // Every connection of the pool opened, and the statements of both kinds prepared on each.
      await wrk(wrkBin, { url: ta.url, connections: 32, seconds: 3, script: "report.lua", env: trips.keyEnv });
      roundTripsPerReport = await countRoundTrips(proxy, trips.url, ta.url, trips.keyEnv);
      const r = roundTripsPerReport;
      log(`  new target: ${r.newTarget.roundTrips} round trips, ${r.newTarget.statements} statements, ${r.newTarget.ms} ms per report; existing target: ${r.existingTarget.roundTrips} round trips, ${r.existingTarget.statements} statements, ${r.existingTarget.ms} ms (idle ${r.idlePerSecond}/s)`);
      await ta.stop();
      await trips.db.end({ timeout: 5 });
    } finally {
      await proxy.stop();
    }

    // ---- GET /reports on a copy of the SQLite phase's seeded database
    const reads = sqlite ? await getReports(sqlite) : null;
    return {
      server: { version: version!.v, settings },
      creation: { oneInstance, twoInstances },
      creationAway,
      cpuPerReport,
      roundTripsPerReport,
      creationCheck: check,
      copy: reads?.copy ?? null,
      listReports: reads?.listReports ?? null,
    };
  } finally {
    for (const s of mine) if (s.proc.exitCode === null) await s.kill();
    await admin.end({ timeout: 5 });
    await stopCluster();
  }
}

function target(what: string, goal: string, measured: string, met: boolean) {
  return { what, goal, measured, met };
}

function round1(n: number) {
  return Math.round(n * 10) / 10;
}
function round3(n: number) {
  return Math.round(n * 1000) / 1000;
}

function render(
  r: Record<string, unknown>,
  m: {
    ceilingJson: WrkResult;
    ceilingInsert: WrkResult;
    ceilingSqlite: number;
    creation: WrkResult[];
    identity: WrkResult;
    gets: (WrkResult & { query: string })[];
    getsC8: WrkResult;
    rssIdle: number;
    rssLoad: number;
    startups: { readyMs: number; rssMb: number }[];
    pg: PgOutcome;
  },
): string {
  const ratios = r.ratios as Record<string, number>;
  const lines: string[] = [];
  lines.push(`## Flagstaff benchmark — ${r.when}`);
  lines.push("");
  lines.push(machineLine(r));
  lines.push("");
  lines.push("### Throughput and latency over HTTP");
  lines.push("");
  const row = (what: string, w: WrkResult, ceiling: string) => [what, w.connections, fmtInt(w.rps), fmtMs(w.latencyMs.p50), fmtMs(w.latencyMs.p99), w.non2xx + w.socketErrors, ceiling];
  lines.push(
    markdownTable(
      ["What", "Conn.", "Req/s", "p50 ms", "p99 ms", "Errors", "vs. ceiling"],
      [
        row("Ceiling: bare Bun.serve, fixed JSON", m.ceilingJson, "—"),
        row("Ceiling: bare Bun.serve + 1 bun:sqlite insert", m.ceilingInsert, "—"),
        ...m.creation.map((w) => row("Create report (POST …/reports)", w, w.connections === 32 ? `${(ratios.creationC32_vs_bareJson! * 100).toFixed(1)} % of JSON, ${(ratios.creationC32_vs_bareHttpInsert! * 100).toFixed(1)} % of insert` : "")),
        row("Upsert identity (PUT …/identities/…)", m.identity, `${(ratios.identityC32_vs_bareHttpInsert! * 100).toFixed(1)} % of insert`),
      ],
    ),
  );
  lines.push("");
  lines.push(
    `Ceiling without HTTP: bare bun:sqlite, one row per transaction (WAL, synchronous=NORMAL): ${fmtInt(m.ceilingSqlite)} rows/s; report creation at 32 connections is ${(ratios.creationC32_vs_bareSqliteInsert! * 100).toFixed(1)} % of it.`,
  );
  lines.push(`wrk drove the bare JSON server ${ratios.wrkHeadroom_bareJson_vs_creationC32}× faster than Flagstaff's report creation at 32 connections: the load generator is not the bottleneck.`);
  lines.push("");
  const seed = r.seed as { reports: number; cases: number; identities: number; seconds: number };
  lines.push(`### GET /reports with ${fmtInt(seed.reports)} reports (1 connection; seeded in ${seed.seconds} s: ${fmtInt(seed.cases)} cases, ${fmtInt(seed.identities)} identities)`);
  lines.push("");
  lines.push(markdownTable(["Query", "Req/s", "p50 ms", "p99 ms", "max ms", "Errors"], m.gets.map((g) => [g.query, fmtInt(g.rps), fmtMs(g.latencyMs.p50), fmtMs(g.latencyMs.p99), fmtMs(g.latencyMs.max), g.non2xx + g.socketErrors])));
  lines.push("");
  lines.push(`Default query at 8 connections: ${fmtInt(m.getsC8.rps)} req/s, p50 ${fmtMs(m.getsC8.latencyMs.p50)} ms, p99 ${fmtMs(m.getsC8.latencyMs.p99)} ms.`);
  lines.push("");
  lines.push(...renderPostgres(m.pg, m.creation, m.gets, m.getsC8, seed.reports));
  lines.push("### Memory and start-up");
  lines.push("");
  lines.push(
    markdownTable(
      ["What", "Figure"],
      [
        ["RSS idle (2 s after start, empty database)", `${round1(m.rssIdle)} MB`],
        ["RSS under load (largest, all creation and upsert runs)", `${round1(m.rssLoad)} MB`],
        ["Start-up to ready (/readyz 200), 5 runs", m.startups.map((s) => `${s.readyMs} ms`).join(", ")],
        ["RSS at ready, 1M-report database", `${m.startups[0]?.rssMb} MB`],
      ],
    ),
  );
  const check = r.creationCheck as { acknowledged: number; newReportsInDatabase: number; errors: number };
  lines.push("");
  lines.push(
    `Report creation runs: ${fmtInt(check.acknowledged)} answered 201 within wrk's clock, ${fmtInt(check.newReportsInDatabase)} new reports in the database afterwards ` +
      `(the ${fmtInt(check.newReportsInDatabase - check.acknowledged)} more were in flight when wrk stopped counting), ${check.errors} errors.`,
  );
  lines.push("");
  lines.push("### Targets");
  lines.push("");
  const targets = r.targets as { what: string; goal: string; measured: string; met: boolean }[];
  lines.push(markdownTable(["Target", "Goal", "Measured", "Met"], targets.map((t) => [t.what, t.goal, t.measured, t.met ? "yes" : "**no**"])));
  return lines.join("\n");
}

function renderPostgres(pg: PgOutcome, creation: WrkResult[], gets: (WrkResult & { query: string })[], getsC8: WrkResult | null, reports: number): string[] {
  const lines: string[] = ["### SQLite and PostgreSQL", ""];
  if ("skipped" in pg) {
    lines.push(`PostgreSQL: skipped (${pg.skipped}).`, "");
    return lines;
  }
  const s = pg.server.settings;
  const away = pg.creationAway;
  const rtt = `${fmtDelay(2 * away.delayMsEachWay)} ms`;
  lines.push(
    `PostgreSQL ${pg.server.version}, a throwaway cluster on this machine with its default settings (shared_buffers ${s.shared_buffers}, synchronous_commit ${s.synchronous_commit}, fsync ${s.fsync}), ` +
      `${SOURCE ? "Flagstaff run from source (--source)" : "the same binary"} with FLAGSTAFF_DATABASE_URL and its default pool of 10 connections per instance; two instances are two \`serve\` processes on one database, ` +
      "loaded by two wrk processes at once (one thread each, half the connections each): summed 2xx req/s, the worse p99 of the two. " +
      `"${rtt} away": every instance reaches PostgreSQL through scripts/pg-proxy.ts, which holds each chunk ${fmtDelay(away.delayMsEachWay)} ms each way (a database on another host of the same zone). ` +
      "SQLite figures are this run's.",
  );
  lines.push("");
  const lite32 = creation.find((c) => c.connections === 32);
  const lite8 = creation.find((c) => c.connections === 8);
  const one32 = pg.creation.oneInstance.find((c) => c.connections === 32)!;
  const two32 = pg.creation.twoInstances.find((c) => c.connections === 32)!;
  const liteRps = lite32 ? okRps(lite32) : 0;
  const ratio = (x: number, y: number) => (y > 0 ? (x / y).toFixed(2) : "—");
  const cpu = (label: string) => {
    const c = pg.cpuPerReport[label];
    return c ? `${fmtCpu(c.flagstaff)} + ${fmtCpu(c.postgres)} + ${fmtCpu(c.benchProcess)}` : "— (too few reports)";
  };
  const trips = pg.roundTripsPerReport;
  lines.push(`Report creation (POST …/reports) at 32 connections, the wrk workload (subjects, reporters and content ids cycling through 20,000, 50,000 and 100,000 values): 2xx req/s and p99.`);
  lines.push("");
  lines.push(
    markdownTable(
      ["Database", "Instances", "Reports/s", "p99 ms", "vs SQLite", "vs 1 instance", "CPU ms/report: Flagstaff + PostgreSQL + bench process"],
      [
        ["SQLite", 1, lite32 ? fmtInt(liteRps) : "—", lite32 ? fmtMs(lite32.latencyMs.p99) : "—", lite32 ? "1.00" : "—", "—", "—"],
        ["PostgreSQL on loopback", 1, fmtInt(okRps(one32)), fmtMs(one32.latencyMs.p99), ratio(okRps(one32), liteRps), "1.00", cpu("loopback, 1 instance, c=32")],
        ["PostgreSQL on loopback", 2, fmtInt(two32.rps2xx), fmtMs(two32.p99Ms), ratio(two32.rps2xx, liteRps), ratio(two32.rps2xx, okRps(one32)), cpu("loopback, 2 instances, c=32")],
        [`PostgreSQL ${rtt} away`, 1, fmtInt(okRps(away.oneInstance)), fmtMs(away.oneInstance.latencyMs.p99), ratio(okRps(away.oneInstance), liteRps), "1.00", cpu(`${rtt} away, 1 instance, c=32`)],
        [`PostgreSQL ${rtt} away`, 2, fmtInt(away.twoInstances.rps2xx), fmtMs(away.twoInstances.p99Ms), ratio(away.twoInstances.rps2xx, liteRps), ratio(away.twoInstances.rps2xx, okRps(away.oneInstance)), cpu(`${rtt} away, 2 instances, c=32`)],
      ],
    ),
  );
  lines.push("");
  const one8 = pg.creation.oneInstance.find((c) => c.connections === 8);
  const two8 = pg.creation.twoInstances.find((c) => c.connections === 8);
  if (one8 && two8) {
    lines.push(
      `At 8 connections: SQLite ${lite8 ? fmtInt(okRps(lite8)) : "—"} reports/s (p99 ${lite8 ? fmtMs(lite8.latencyMs.p99) : "—"} ms); PostgreSQL on loopback, one instance ${fmtInt(okRps(one8))} (p99 ${fmtMs(one8.latencyMs.p99)} ms), ` +
        `two ${fmtInt(two8.rps2xx)} (p99 ${fmtMs(two8.p99Ms)} ms). CPU per report is each process's CPU time during the run over the reports answered 201; ` +
        "this machine has 2 cores for wrk, the instances, PostgreSQL and the proxy together.",
    );
    lines.push("");
  }
  lines.push(
    `Round trips per report, counted by scripts/pg-proxy.ts (a client→server flight that follows a server→client one), ${fmtInt(trips.newTarget.reports)} reports one after the other of each kind ` +
      "on a warm instance of their own (its pool's connections open and statements prepared by a 3 s wrk warm-up; job poller and enforcement tick slowed to once an hour; " +
      `the idle rate, ${trips.idlePerSecond} round trips/s, subtracted). A round trip through the proxy, measured (\`SELECT 1\` on an open connection, median of 100): ` +
      `${fmtMs(trips.select1Ms.throughProxy)} ms, straight ${fmtMs(trips.select1Ms.straight)} ms.`,
  );
  lines.push("");
  const tripRow = (what: string, r: PerReport) => [what, r.roundTrips.toFixed(2), r.statements.toFixed(2), r.parses.toFixed(2), fmtMs(r.ms), fmtMs(r.roundTrips * trips.select1Ms.throughProxy)];
  lines.push(
    markdownTable(
      ["Report", "Round trips", "Statements (Execute + Query)", "Statements prepared (Parse)", `ms per report (${rtt} away)`, "round trips × SELECT 1 ms"],
      [tripRow("new target, new subject, new reporter", trips.newTarget), tripRow("existing target, same subject and reporter", trips.existingTarget)],
    ),
  );
  lines.push("");
  const check = pg.creationCheck;
  lines.push(
    `PostgreSQL report creation runs: ${fmtInt(check.acknowledged)} answered 201 within wrk's clock, ${fmtInt(check.newReportsInDatabase)} new reports in the database ` +
      `(${fmtInt(check.newReportsInDatabase - check.acknowledged)} more were in flight when wrk stopped counting), ${check.errors} errors.`,
  );
  lines.push("");
  const list = pg.listReports;
  if (!list || !pg.copy) {
    lines.push("GET /reports on PostgreSQL: not measured in this run (`--only postgres` without `--reports N`).", "");
    return lines;
  }
  lines.push(
    `GET /reports with ${fmtInt(reports)} reports, one connection per instance, p99 ms (and req/s). PostgreSQL holds a copy of the SQLite database ` +
      `(scripts/bench/copy-to-postgres.ts: ${fmtInt(pg.copy.rows)} rows in ${(pg.copy.copyMs / 1000).toFixed(1)} s, ANALYZE ${(pg.copy.analyzeMs / 1000).toFixed(1)} s); ` +
      `first page of the default query ${list.firstPageSameAsSqlite ? "identical to SQLite's" : "**different from SQLite's**"}:`,
  );
  lines.push("");
  lines.push(
    markdownTable(
      ["Query", "SQLite p99", "PG 1 inst. p99", "PG 2 inst. p99", "SQLite req/s", "PG 1 inst. req/s", "PG 2 inst. req/s", "Errors (PG)"],
      list.oneInstance.map((one, i) => {
        const lite = gets.find((g) => g.query === one.query);
        const two = list.twoInstances[i]!;
        return [
          one.query,
          lite ? fmtMs(lite.latencyMs.p99) : "—",
          fmtMs(one.latencyMs.p99),
          fmtMs(two.p99Ms),
          lite ? fmtInt(okRps(lite)) : "—",
          fmtInt(okRps(one)),
          fmtInt(two.rps2xx),
          one.non2xx + one.socketErrors + two.errors,
        ];
      }),
    ),
  );
  lines.push("");
  const c8 = list.defaultQueryAt8Connections;
  lines.push(
    `Default query at 8 connections, one instance: PostgreSQL ${fmtInt(okRps(c8))} req/s, p99 ${fmtMs(c8.latencyMs.p99)} ms` +
      (getsC8 ? `; SQLite ${fmtInt(okRps(getsC8))} req/s, p99 ${fmtMs(getsC8.latencyMs.p99)} ms.` : "."),
  );
  lines.push("");
  return lines;
}

function fmtCpu(ms: number): string {
  return ms < 1 ? ms.toFixed(3) : ms.toFixed(2);
}
function fmtDelay(ms: number): string {
  return Number.isInteger(ms) ? String(ms) : ms.toFixed(1);
}

/**
 * Round trips per report through the latency proxy: `ROUND_TRIP_REPORTS` reports one after the
 * other, each on a new target with a new subject and a new reporter; then as many on one target
 * already reported, by the same subject and reporter. The instance's own background work is
 * measured idle first and subtracted.
 */
async function countRoundTrips(proxy: PgProxy, databaseUrl: string, baseUrl: string, keyEnv: { KEY: string; PROJECT: string }): Promise<RoundTrips> {
  const n = ROUND_TRIP_REPORTS;
  // What one round trip costs through the proxy (its delay, the timers' lateness, loopback).
  const select1 = async (url: string) => {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await sql`SELECT 1`;
      const ms: number[] = [];
      for (let i = 0; i < 100; i++) {
        const t = performance.now();
        await sql`SELECT 1`;
        ms.push(performance.now() - t);
      }
      return Math.round(median(ms) * 100) / 100;
    } finally {
      await sql.end({ timeout: 1 });
    }
  };
  const select1Ms = { throughProxy: await select1(proxy.url(databaseUrl)), straight: await select1(databaseUrl) };
  const post = async (subject: string, reporter: string, content: string) => {
    const res = await fetch(`${baseUrl}/sdk/flagstaff/v1/projects/${keyEnv.PROJECT}/reports`, {
      method: "POST",
      headers: { authorization: `Bearer ${keyEnv.KEY}`, "content-type": "application/json" },
      body: JSON.stringify({
        subject: { type: "user", externalId: subject, display: { name: `User ${subject}` } },
        reporter: { type: "user", externalId: reporter },
        target: { contentType: "post", contentExternalId: content, content: "Buy cheap followers now at example dot com, limited offer!" },
        reason: "spam",
        description: "round trips",
      }),
    });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`round trips: POST …/reports answered ${res.status}: ${text}`);
  };
  await Bun.sleep(500); // the warm-up's last answers
  proxy.resetStats();
  const idleStarted = performance.now();
  await Bun.sleep(2000);
  const idlePerSecond = proxy.stats().roundTrips / ((performance.now() - idleStarted) / 1000);
  const series = async (report: (i: number) => Promise<void>): Promise<PerReport> => {
    proxy.resetStats();
    const started = performance.now();
    for (let i = 0; i < n; i++) await report(i);
    const ms = performance.now() - started;
    const st = proxy.stats();
    const per = (x: number) => Math.round((x / n) * 100) / 100;
    const m = st.messages;
    return {
      reports: n,
      roundTrips: per(Math.max(0, st.roundTrips - (idlePerSecond * ms) / 1000)),
      statements: per((m.Execute ?? 0) + (m.Query ?? 0)),
      parses: per(m.Parse ?? 0),
      messages: Object.fromEntries(Object.entries(m).map(([k, v]) => [k, per(v)])),
      ms: Math.round((ms / n) * 100) / 100,
    };
  };
  const run = `${Date.now().toString(36)}`;
  const newTarget = await series((i) => post(`rt-s-${run}-${i}`, `rt-r-${run}-${i}`, `rt-p-${run}-${i}`));
  await post(`rt-s-${run}`, `rt-r-${run}`, `rt-p-${run}`);
  const existingTarget = await series(() => post(`rt-s-${run}`, `rt-r-${run}`, `rt-p-${run}`));
  return { delayMsEachWay: proxy.delayMs, select1Ms, idlePerSecond: Math.round(idlePerSecond * 100) / 100, newTarget, existingTarget };
}

/**
 * `--only postgres`: the PostgreSQL section's report creation and round trips, beside a SQLite
 * reference run; GET /reports too with `--reports N`.
 */
async function onlyPostgres(wrkBin: string): Promise<void> {
  log("SQLite reference: report creation at 8 and 32 connections");
  const dir = mkdtempSync(join(work, "create-"));
  const db = join(dir, "flagstaff.db");
  const init = JSON.parse(await run(flagstaff("init", "--json"), cleanEnv({ FLAGSTAFF_DB: db }), dir)) as { projectId: string; secretKey: string };
  const app = await startServer(flagstaff("serve"), flagstaffEnv(db), { logFile: join(dir, "server.log"), cwd: dir });
  servers.push(app);
  const keyEnv = { KEY: init.secretKey, PROJECT: init.projectId };
  await wrk(wrkBin, { url: app.url, connections: 32, seconds: 3, script: "report.lua", env: keyEnv }); // warm-up
  const creation: WrkResult[] = [];
  for (const c of [8, 32]) {
    const r = await wrk(wrkBin, { url: app.url, connections: c, seconds: LOAD_S, script: "report.lua", env: keyEnv });
    log(`  reports c=${c}: ${fmtInt(r.rps)}/s p50 ${r.latencyMs.p50} ms p99 ${r.latencyMs.p99} ms (non-2xx ${r.non2xx})`);
    creation.push(r);
  }
  await app.stop();

  let big: Parameters<typeof postgresSection>[1] = null;
  if (args.reports) {
    log(`seeding ${fmtInt(SEED_COUNT)} reports (SQLite, copied into PostgreSQL for GET /reports)`);
    const bigDir = mkdtempSync(join(work, "big-"));
    const bigDb = join(bigDir, "flagstaff.db");
    const bigInit = JSON.parse(await run(flagstaff("init", "--json"), cleanEnv({ FLAGSTAFF_DB: bigDb }), bigDir)) as { projectId: string; secretKey: string };
    const seeded = seedReports(bigDb, { count: SEED_COUNT });
    const lite = await startServer(flagstaff("serve"), flagstaffEnv(bigDb), { logFile: join(bigDir, "server.log"), cwd: bigDir });
    servers.push(lite);
    const firstPage = await firstPageOf(lite.url, bigInit.secretKey);
    await lite.stop();
    big = { bigDb, bigInit, queries: reportQueries(bigInit.projectId, seeded.sample, firstPage), firstPage };
  }

  const pg = await postgresSection(wrkBin, big);
  results.sqliteCreation = creation;
  results.postgres = pg;
  const out = [`## Flagstaff benchmark, PostgreSQL section — ${results.when as string}`, "", machineLine(results), "", ...renderPostgres(pg, creation, [], null, SEED_COUNT)].join("\n");
  console.log(out);
  const outDir = join(ROOT, "bench-results");
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `postgres-${(results.when as string).replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, JSON.stringify(results, null, 2) + "\n");
  writeFileSync(join(outDir, "latest-postgres.json"), JSON.stringify(results, null, 2) + "\n");
  writeFileSync(join(outDir, "latest-postgres.md"), out + "\n");
  console.log(`\nJSON: ${file}`);
}

function machineLine(r: Record<string, unknown>): string {
  const machine = r.machine as { cpus: number; cpuModel: string; memoryGb: number; bun: string };
  return `${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGb} GB, Bun ${machine.bun}; load from ${r.loadGenerator as string} on the same machine; server: ${SOURCE ? "bun src/cli.ts (--source)" : "dist/flagstaff"}, access log at info to a file.`;
}

/** GET /reports queries of the benchmark: the default one and each filter. */
function reportQueries(projectId: string, sample: { reason: string; subjectExternalId: string; contentExternalId: string }, firstPage: FirstPage): [string, string][] {
  return [
    ["default (newest first)", ""],
    ["sort=asc", "sort=asc"],
    ["second page (cursor)", `cursor=${encodeURIComponent(firstPage.nextCursor)}`],
    ["projectId", `projectId=${projectId}`],
    ["status=OPEN", "status=OPEN"],
    ["status=RESOLVED", "status=RESOLVED"],
    ["status=OPEN,TRIAGED,IN_REVIEW", "status=OPEN,TRIAGED,IN_REVIEW"],
    ["severity=CRITICAL", "severity=CRITICAL"],
    [`reason=${sample.reason}`, `reason=${sample.reason}`],
    ["subjectExternalId", `subjectExternalId=${sample.subjectExternalId}`],
    ["contentExternalId", `contentExternalId=${sample.contentExternalId}`],
    ["automated=true", "automated=true"],
    ["limit=100", "limit=100"],
  ];
}
