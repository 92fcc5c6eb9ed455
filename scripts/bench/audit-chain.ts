/**
 * The audit chain's cost (issue 29): report intake and decisions with the chain (this checkout)
 * against an earlier commit (--base, default 1025b39: main just before the chain was merged), or
 * against this checkout's HEAD with the chain's writing taken out (--base chain-off, see
 * exportTree), on SQLite with one instance and on PostgreSQL with two
 * instances on one database, in alternating rounds (base, current, then current, base…),
 * printed as medians, ratios and CPU per request (on PostgreSQL, with the database's share).
 * FLAGSTAFF_AUDIT_CHAIN_LANES passes through (=1: one head per organization). Figures only.
 * --pg-delay-ms N puts PostgreSQL "on another host" as far as latency goes (the shape a platform
 * past one machine runs): the instances reach it through scripts/pg-proxy.ts (in this process,
 * its CPU not counted), which holds every chunk N ms each way. PostgreSQL still runs on this
 * machine's cores either way, so the work the chain adds in the database is taken from the
 * instances' CPU in both.
 *
 *   bun scripts/bench/audit-chain.ts [--base 1025b39|chain-off] [--rounds 4] [--seconds 8] [--decisions 1500]
 *                                    [--engine sqlite|postgres|both] [--connections 32] [--pg-delay-ms 0]
 *
 * Both sides run from source (`bun src/cli.ts serve`, the base exported with `git archive`, this
 * checkout's node_modules linked). Each round of a side: a fresh database made by `init`; intake
 * is wrk (scripts/bench/wrk/report.lua) at 32 connections for --seconds (PostgreSQL: two wrk, 16
 * connections to each instance, at once); decisions are --decisions reports (one per case, taken
 * from what intake created) resolved through POST /reports/{id}/resolve by 32 concurrent clients
 * (PostgreSQL: half to each instance). CPU per request is the instances' (and PostgreSQL's, all
 * its processes) CPU time over the phase divided by the requests answered 2xx.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { startPgCluster, type PgCluster } from "../pg-cluster.ts";
import { startPgProxy, type PgProxy } from "../pg-proxy.ts";
import { ensureWrk, fmtInt, markdownTable, median, processTreeCpuMs, ROOT, run, startServer, wrk, type Server } from "./lib.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    base: { type: "string", default: "1025b39" },
    rounds: { type: "string", default: "4" },
    seconds: { type: "string", default: "8" },
    decisions: { type: "string", default: "1500" },
    engine: { type: "string", default: "both" },
    connections: { type: "string", default: "32" },
    "pg-delay-ms": { type: "string", default: "0" },
  },
});
const ROUNDS = Number(args.rounds);
const SECONDS = Number(args.seconds);
const DECISIONS = Number(args.decisions);
const CONNECTIONS = Number(args.connections);
/** PostgreSQL "on another host": every instance reaches it through scripts/pg-proxy.ts, which holds each chunk this long each way. */
const PG_DELAY_MS = Number(args["pg-delay-ms"]);
const BUN = process.execPath;
const log = (s: string) => console.error(`[audit-chain ${new Date().toISOString().slice(11, 19)}] ${s}`);
const work = mkdtempSync(join(tmpdir(), "flagstaff-chain-bench-"));

interface Figures {
  intakeRps: number;
  intakeCpuMs: number;
  /** PostgreSQL's share of intakeCpuMs (all its processes), 0 on SQLite. */
  intakePgCpuMs: number;
  decisionsRps: number;
  decisionCpuMs: number;
  errors: number;
}

/**
 * The base commit's tree, exported beside this checkout's node_modules. `chain-off` is HEAD with
 * the chain's writing taken out of both appenders (src/db/audit-append-sqlite.ts,
 * src/db/audit-append-pg.ts): each event written by a prepared INSERT of its own on the
 * transaction's connection (chain columns null), as 1025b39 wrote them, but still at the COMMIT
 * as the chain appends them (Store.appendAudit), which 1025b39 did not: the difference is what
 * chaining costs the database, without the commits since 1025b39 and without the round trips
 * appending at the COMMIT saves (1025b39 awaited some events' INSERTs in the transaction).
 */
async function exportTree(rev: string): Promise<string> {
  const dir = join(work, `tree-${rev}`);
  await run(["sh", "-c", `mkdir -p ${dir} && git -C ${ROOT} archive ${rev === "chain-off" ? "HEAD" : rev} | tar -x -C ${dir}`]);
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  if (rev === "chain-off") {
    const columns = "id, org_id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at";
    const values = "e.id, e.orgId, e.projectId, e.actorType, e.actorId, e.action, e.entityType, e.entityId, e.before, e.after, e.data, e.createdAt";
    const unchained = {
      "audit-append-sqlite.ts": `for (const e of events) writer.query("INSERT INTO audit_events (${columns}) VALUES (${Array(12).fill("?").join(", ")})").run(${values});`,
      "audit-append-pg.ts": `await tx.atCommit(...events.map((e) => tx.send("INSERT INTO audit_events (${columns}) VALUES (${Array.from({ length: 12 }, (_, i) => `$${i + 1}`).join(", ")})", [${values}]) as Promise<unknown>));`,
    };
    const head = "    async append(events) {\n";
    for (const [name, write] of Object.entries(unchained)) {
      const file = join(dir, "src", "db", name);
      const text = readFileSync(file, "utf8");
      if (!text.includes(head)) throw new Error(`--base chain-off: the appender's append changed in src/db/${name}; update this script`);
      writeFileSync(file, text.replace(head, `${head}      ${write}\n      return;\n`));
    }
  }
  return dir;
}

async function oneRun(tree: string, engine: "sqlite" | "postgres", pg: PgCluster | null, proxy: PgProxy | null, tag: string): Promise<Figures> {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: "0",
    HOST: "127.0.0.1",
    FLAGSTAFF_REPORT_RATE_LIMIT: "100000000",
    FLAGSTAFF_LOG_LEVEL: "warn",
    FLAGSTAFF_DB: join(work, `${tag}.db`),
  };
  let dropDb: (() => Promise<void>) | null = null;
  let postmaster = 0;
  if (engine === "postgres") {
    const admin = postgres(pg!.url, { max: 1, onnotice: () => {} });
    const name = `bench_${tag.replace(/\W/g, "_")}`;
    await admin.unsafe(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(pg!.url);
    url.pathname = `/${name}`;
    env.FLAGSTAFF_DATABASE_URL = proxy ? proxy.url(url.toString()) : url.toString();
    dropDb = async () => {
      const c = postgres(pg!.url, { max: 1, onnotice: () => {} });
      await c.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    };
    postmaster = Number(readFileSync(join(pg!.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
  }
  const cli = join(tree, "src", "cli.ts");
  const demo = JSON.parse(await run([BUN, cli, "init", "--json"], env, tree)) as { projectId: string; secretKey: string };
  const instances: Server[] = [];
  for (let i = 0; i < (engine === "postgres" ? 2 : 1); i++) instances.push(await startServer([BUN, cli, "serve"], env, { cwd: tree }));
  const pgCpu = () => (postmaster ? processTreeCpuMs(postmaster) : 0);
  const cpu = () => instances.reduce((n, s) => n + processTreeCpuMs(s.proc.pid), 0) + pgCpu();
  try {
    const wrkBin = await ensureWrk(log);
    // Warm-up, then intake.
    await Promise.all(instances.map((s) => wrk(wrkBin, { url: s.url, connections: 8, seconds: 2, script: "report.lua", env: { KEY: demo.secretKey, PROJECT: demo.projectId } })));
    let before = cpu();
    const pgBefore = pgCpu();
    const per = Math.max(1, Math.round(CONNECTIONS / instances.length));
    const intake = await Promise.all(instances.map((s) => wrk(wrkBin, { url: s.url, connections: per, seconds: SECONDS, script: "report.lua", env: { KEY: demo.secretKey, PROJECT: demo.projectId } })));
    const intakeCpu = cpu() - before;
    const intakePgCpu = pgCpu() - pgBefore;
    const intakeOk = intake.reduce((n, r) => n + r.requests - r.non2xx, 0);
    const intakeRps = intake.reduce((n, r) => n + r.rps * (1 - r.non2xx / Math.max(1, r.requests)), 0);

    // Decisions: one open report per case.
    const ids = await openReportPerCase(env, DECISIONS);
    let next = 0;
    let ok = 0;
    let errors = intake.reduce((n, r) => n + r.non2xx + r.socketErrors, 0);
    before = cpu();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, c) => {
        const base = instances[c % instances.length]!.url;
        for (;;) {
          const id = ids[next++];
          if (!id) return;
          const r = await fetch(`${base}/sdk/flagstaff/v1/reports/${id}/resolve`, {
            method: "POST",
            headers: { "Content-Type": "application/json", Authorization: `Bearer ${demo.secretKey}` },
            body: JSON.stringify({ resolutionCode: "SPAM_CONFIRMED" }),
          });
          await r.arrayBuffer();
          if (r.ok) ok++;
          else errors++;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const decisionCpu = cpu() - before;
    return { intakeRps, intakeCpuMs: intakeCpu / Math.max(1, intakeOk), intakePgCpuMs: intakePgCpu / Math.max(1, intakeOk), decisionsRps: ok / seconds, decisionCpuMs: decisionCpu / Math.max(1, ok), errors };
  } finally {
    for (const s of instances) await s.kill();
    await dropDb?.();
    rmSync(env.FLAGSTAFF_DB!, { force: true });
    rmSync(`${env.FLAGSTAFF_DB}-wal`, { force: true });
    rmSync(`${env.FLAGSTAFF_DB}-shm`, { force: true });
  }
}

async function openReportPerCase(env: Record<string, string>, limit: number): Promise<string[]> {
  const q = `SELECT min(id) AS id FROM reports WHERE status = 'OPEN' GROUP BY case_id ORDER BY min(id) LIMIT ${limit}`;
  if (env.FLAGSTAFF_DATABASE_URL) {
    const c = postgres(env.FLAGSTAFF_DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      return (await c.unsafe(q)).map((r) => String(r.id));
    } finally {
      await c.end();
    }
  }
  const db = new Database(env.FLAGSTAFF_DB!, { readonly: true });
  try {
    return (db.query(q).all() as { id: string }[]).map((r) => r.id);
  } finally {
    db.close();
  }
}

async function main(): Promise<void> {
  const baseTree = await exportTree(args.base!);
  const engines = args.engine === "both" ? (["sqlite", "postgres"] as const) : ([args.engine as "sqlite" | "postgres"] as const);
  const out: string[] = [];
  for (const engine of engines) {
    const pg = engine === "postgres" ? await startPgCluster() : null;
    const proxy = pg && PG_DELAY_MS > 0 ? await startPgProxy({ target: { host: "127.0.0.1", port: pg.port }, delayMs: PG_DELAY_MS }) : null;
    try {
      const figures: Record<"base" | "current", Figures[]> = { base: [], current: [] };
      for (let r = 0; r < ROUNDS; r++) {
        const order: ("base" | "current")[] = r % 2 === 0 ? ["base", "current"] : ["current", "base"];
        for (const side of order) {
          const f = await oneRun(side === "base" ? baseTree : ROOT, engine, pg, proxy, `${engine}_${side}_${r}`);
          figures[side].push(f);
          log(`${engine} round ${r + 1} ${side}: intake ${fmtInt(f.intakeRps)}/s (${f.intakeCpuMs.toFixed(2)} ms CPU each, PostgreSQL ${f.intakePgCpuMs.toFixed(2)}), decisions ${fmtInt(f.decisionsRps)}/s (${f.decisionCpuMs.toFixed(2)} ms CPU each), errors ${f.errors}`);
        }
      }
      const m = (side: "base" | "current", k: keyof Figures) => median(figures[side].map((f) => f[k]));
      const rows: (string | number)[][] = [];
      for (const [label, rate, cpuKey] of [["report intake", "intakeRps", "intakeCpuMs"], ["decisions (resolve)", "decisionsRps", "decisionCpuMs"]] as const) {
        rows.push([
          label,
          fmtInt(m("base", rate)),
          fmtInt(m("current", rate)),
          (m("current", rate) / m("base", rate)).toFixed(3),
          m("base", cpuKey).toFixed(3),
          m("current", cpuKey).toFixed(3),
          (m("current", cpuKey) / m("base", cpuKey)).toFixed(3),
          figures.current.map((f) => fmtInt(f[rate])).join(" "),
          figures.base.map((f) => fmtInt(f[rate])).join(" "),
        ]);
      }
      out.push(
        `\n### ${engine === "sqlite" ? "SQLite, one instance" : `PostgreSQL, two instances${proxy ? `, the database ${2 * PG_DELAY_MS} ms away` : ", all on this machine"}`}, ${CONNECTIONS} connections (${ROUNDS} rounds, median; base ${args.base})\n\n` +
          markdownTable(["", "base req/s", "chain req/s", "ratio (≥ 0.95)", "base CPU ms/req", "chain CPU ms/req", "CPU ratio", "chain rounds", "base rounds"], rows) +
          (engine === "postgres" ? `\nPostgreSQL's share of the CPU per intake request: base ${m("base", "intakePgCpuMs").toFixed(3)} ms, chain ${m("current", "intakePgCpuMs").toFixed(3)} ms\n` : ""),
      );
      console.log(out.at(-1));
    } finally {
      await proxy?.stop();
      await pg?.stop();
    }
  }
  console.log(out.join("\n"));
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(work, { recursive: true, force: true }));
