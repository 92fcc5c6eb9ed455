/**
 * `bun run chaos`: crash-and-fuzz harness. Bounded (about a minute); uses a temporary database.
 *
 *   bun scripts/chaos.ts [--kills 25] [--fuzz 10000] [--clients 16] [--seed N]
 *
 * (a) Crashes. Clients create reports without pause against `bun src/cli.ts serve`, while the
 *     server is killed with SIGKILL at random moments (100–900 ms after it came up) and started
 *     again, `--kills` times. Each report carries a unique description; every one answered 201
 *     is remembered. Afterwards every acknowledged report must be in the database:
 *     "acknowledged N, found N, lost 0". The database must pass `PRAGMA integrity_check`.
 * (b) Fuzz. `--fuzz` malformed or random requests across every REST route (restRoutes()),
 *     every tRPC procedure and random paths: bad JSON, wrong types, huge values, unicode edge
 *     cases, wrong methods, bad keys, odd headers. Every answer must be below 500, and the
 *     server must still be healthy (/healthz, /readyz, a report created) at the end. The AI
 *     routes talk to scripts/fake-ollama.ts, so a 503 "AI backend unavailable" cannot hide a
 *     real 5xx.
 * Exits 1 when a report was lost, the database is damaged, a 5xx was answered or the server
 * ended unhealthy.
 *
 * With `--postgres` (about three minutes) everything runs on PostgreSQL: a throwaway cluster on
 * loopback (scripts/pg-cluster.ts), or the server of `--postgres-url postgres://…` (an admin
 * URL: a database `flagstaff_chaos_<seed>` is created in it and dropped afterwards). Crashes
 * (a) then run three instances on one database, as behind a load balancer: clients send to all
 * of them, one instance at a time is killed with SIGKILL at a random moment and started again
 * while the others keep serving. The project has AI enrichment on (scripts/fake-ollama.ts
 * answers) and a webhook endpoint, and two more clients create enforcement actions, so every
 * instance claims jobs all along. Afterwards, the queue drained: every acknowledged report and
 * action is in the database; every report was enriched exactly once (one content analysis
 * each, whichever instance ran its job, however often a kill cut a job off); every webhook
 * message was received, and a second phase without kills (all instances claiming) receives each
 * message exactly once. Messages received twice in the kill phase are counted: each is a
 * delivery cut off by a kill after the receiver had it, sent again with the same webhook-id
 * (receivers drop such repeats, as Standard Webhooks asks).
 * (c) On the throwaway cluster only (skipped, saying so, with --postgres-url): PostgreSQL itself
 *     is restarted under the same load, `pg_ctl restart -m fast`, then `-m immediate` (a crash:
 *     recovery at start), the instances left alone. Printed for each: the answers by status
 *     while it restarted and after, requests without an answer, acknowledged reports and actions
 *     lost (each looked up by id: must be 0), for each instance whether it serves again without
 *     being restarted (time from PostgreSQL accepting connections to /readyz 200 and to a report
 *     201) or exited (its exit code and the last lines of its stderr), and every job's effect
 *     exactly once (webhook messages received, reports enriched). An instance that exited or does
 *     not serve again within 30 s fails the run (it is started again so the run goes on).
 *
 * (e) At the end, in both modes: `flagstaff audit verify` on the database, checking every
 *     organization's audit chain from its first event and the checkpoints the instances signed
 *     (every 2 s, kills included): the run fails unless it verifies end to end.
 *
 * With `--faults` (about a minute) it runs the database fault harness instead
 * (scripts/chaos-faults.ts says what it does): two instances on PostgreSQL, each through a proxy
 * of its own, and one on SQLite, under load, while PostgreSQL is restarted (-m immediate, -m
 * fast), stopped for 10 s, cut off by the network for 10 s, and SQLite's disk fills up; a table
 * row per fault. `--clients N` gives each instance N/4 report clients (4 by default).
 */
import { Database } from "bun:sqlite";
import postgres from "postgres";
import { startPgCluster, type PgCluster } from "./pg-cluster.ts";
import { runFaultHarness } from "./chaos-faults.ts";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { lastLinesOf, ROOT, run, startServer, type Server } from "./bench/lib.ts";
import { restRoutes } from "../src/api/rest.ts";
import { appRouter } from "../src/api/router.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    kills: { type: "string", default: "25" },
    fuzz: { type: "string", default: "10000" },
    clients: { type: "string", default: "16" },
    seed: { type: "string" },
    postgres: { type: "boolean" },
    "postgres-url": { type: "string" },
    faults: { type: "boolean" },
  },
});
const ON_POSTGRES = !!args.postgres || !!args["postgres-url"];
const KILLS = Number(args.kills);
const FUZZ = Number(args.fuzz);
const CLIENTS = Number(args.clients);
const SEED = Number(args.seed ?? Date.now() % 1_000_000);
const BUN = process.execPath;
const CLI = join(ROOT, "src", "cli.ts");
const dir = mkdtempSync(join(tmpdir(), "flagstaff-chaos-"));
const dbPath = join(dir, "flagstaff.db");
const logFile = join(dir, "server.log");
const say = (s: string) => console.log(s);
const step = (s: string) => console.error(`[chaos ${new Date().toISOString().slice(11, 19)}] ${s}`);

// A seeded generator: a failing run can be replayed with --seed.
let state = SEED >>> 0 || 1;
const random = () => {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return (state >>> 0) / 4294967296;
};
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
const chance = (p: number) => random() < p;

const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  FLAGSTAFF_DB: dbPath,
  PORT: "0",
  HOST: "127.0.0.1",
  FLAGSTAFF_REPORT_RATE_LIMIT: "100000000",
  FLAGSTAFF_LOG_LEVEL: "info",
  FLAGSTAFF_AI_TIMEOUT_MS: "5000",
  // The audit chain's checkpoints are signed all along, kills included, and checked at the end.
  FLAGSTAFF_AUDIT_SIGNING_KEY: randomBytes(32).toString("base64"),
  FLAGSTAFF_AUDIT_CHECKPOINT_MS: "2000",
};
let server: Server | null = null;
const extra: Server[] = [];
let failed = false;

let cluster: PgCluster | null = null;
let dropDatabase: (() => Promise<void>) | null = null;

async function main(): Promise<void> {
try {
  if (args.faults) {
    // (d) The database fault harness: scripts/chaos-faults.ts.
    failed = await runFaultHarness({ seed: SEED, clientsPerInstance: Math.max(1, Math.round(CLIENTS / 4)), dir, say, step });
    say(failed ? "CHAOS FAILED" : "chaos passed");
    return;
  }
  if (ON_POSTGRES) {
    const admin = args["postgres-url"] ?? (cluster = await startPgCluster()).url;
    const name = `flagstaff_chaos_${SEED}`;
    const sql = postgres(admin, { max: 1, onnotice: () => {} });
    await sql.unsafe(`CREATE DATABASE ${name}`);
    await sql.end();
    const url = new URL(admin);
    url.pathname = `/${name}`;
    env.FLAGSTAFF_DATABASE_URL = url.toString();
    dropDatabase = async () => {
      const c = postgres(admin, { max: 1, onnotice: () => {} });
      await c.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    };
    step(`seed ${SEED}; PostgreSQL database ${name}${cluster ? " (throwaway cluster)" : ""}`);
  } else step(`seed ${SEED}; database ${dbPath}`);
  const demo = JSON.parse(await run([BUN, CLI, "init", "--json"], env)) as { orgSlug: string; projectId: string; secretKey: string; publishableKey: string };
  const ollama = await startServer([BUN, join(ROOT, "scripts", "fake-ollama.ts"), "--port", "0"], process.env as Record<string, string>);
  extra.push(ollama);
  env.OLLAMA_HOST = ollama.url;

  if (ON_POSTGRES) await instancesOnPostgres(demo, ollama.url);
  else await oneInstanceKilled(demo);
  await fuzzPhase(demo);
  await verifyAuditChain();
  say(failed ? "CHAOS FAILED" : "chaos passed");
} finally {
  const s = server as Server | null;
  if (s) await s.kill();
  for (const e of extra) await e.kill();
  if (dropDatabase && !failed && !process.env.CHAOS_KEEP) await dropDatabase().catch(() => {});
  if (cluster && (failed || process.env.CHAOS_KEEP)) console.error(`PostgreSQL cluster kept running for inspection: ${cluster.url} (its folder ${cluster.dir})`);
  else await cluster?.stop();
  if (!failed && !process.env.CHAOS_KEEP) rmSync(dir, { recursive: true, force: true });
  else console.error(`kept ${dir} for inspection`);
}
}

/**
 * (e) The audit chain after it all (docs/audit.md): a last checkpoint signed, then `flagstaff
 * audit verify` recomputes every organization's chain from its first event and checks every
 * checkpoint the instances signed during the kills: any gap, edit or broken link fails the run.
 */
async function verifyAuditChain(): Promise<void> {
  step("audit chain: a last checkpoint, then flagstaff audit verify");
  const proc = Bun.spawn([BUN, CLI, "audit", "checkpoint"], { env, stdout: "pipe", stderr: "pipe" });
  await proc.exited;
  const started = performance.now();
  const verify = Bun.spawn([BUN, CLI, "audit", "verify"], { env: { ...env, FLAGSTAFF_LOG_LEVEL: "warn" }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(verify.stdout).text(), new Response(verify.stderr).text(), verify.exited]);
  say(`\n## Audit chain\n\n\`flagstaff audit verify\` (exit ${code}, ${Math.round(performance.now() - started)} ms):\n\n\`\`\`\n${out.trim()}${err.trim() ? `\n${err.trim()}` : ""}\n\`\`\``);
  if (code !== 0) failed = true;
}

type Demo = { orgSlug: string; projectId: string; secretKey: string; publishableKey: string };

/** (a) on SQLite: one process, killed again and again under load. */
async function oneInstanceKilled(demo: Demo): Promise<void> {

  // -------------------------------------------------------------------------------------------
  // (a) SIGKILL at random moments under sustained report creation.
  const acknowledged: string[] = [];
  const startedAt = performance.now();
  let attempts = 0;
  let unanswered = 0;
  let fiveXx = 0;
  let current: string | null = null;
  let stop = false;
  const restartMs: number[] = [];

  const startOne = async () => {
    const t = performance.now();
    server = await startServer([BUN, CLI, "serve"], env, { logFile });
    restartMs.push(performance.now() - t);
    current = server.url;
  };

  const client = async (n: number) => {
    let i = 0;
    while (!stop) {
      const url = current;
      if (!url) {
        await Bun.sleep(2);
        continue;
      }
      const marker = `chaos-${n}-${i++}`;
      attempts++;
      try {
        const res = await fetch(`${url}/sdk/flagstaff/v1/projects/${demo.projectId}/reports`, {
          method: "POST",
          headers: { authorization: `Bearer ${demo.secretKey}`, "content-type": "application/json" },
          body: JSON.stringify({
            subject: { type: "user", externalId: `u-${i % 500}` },
            reporter: { type: "user", externalId: `r-${n}` },
            target: { contentType: "post", contentExternalId: `p-${i % 2000}` },
            reason: pick(["spam", "harassment", "threats"]),
            description: marker,
          }),
          signal: AbortSignal.timeout(5_000),
        });
        const body = (await res.json()) as { report?: { id: string } };
        if (res.status === 201 && body.report) acknowledged.push(body.report.id);
        else if (res.status >= 500) fiveXx++;
      } catch {
        unanswered++; // connection refused or reset: the server is down; not acknowledged
        await Bun.sleep(1);
      }
    }
  };

  step(`(a) ${KILLS} SIGKILLs under sustained report creation (${CLIENTS} clients)`);
  await startOne();
  const clients = Array.from({ length: CLIENTS }, (_, n) => client(n));
  for (let k = 0; k < KILLS; k++) {
    await Bun.sleep(100 + Math.floor(random() * 800));
    const victim = server!;
    current = null;
    await victim.kill();
    await startOne();
  }
  await Bun.sleep(300);
  stop = true;
  await Promise.all(clients);
  await server!.stop();
  server = null;

  const db = new Database(dbPath, { readonly: true });
  const integrity = db.query("PRAGMA integrity_check").values().flat().join("; ");
  const found = new Set<string>();
  const lookup = db.query("SELECT id FROM reports WHERE id = ?");
  for (const id of acknowledged) if (lookup.get(id)) found.add(id);
  const inDatabase = (db.query("SELECT count(*) AS n FROM reports WHERE description LIKE 'chaos-%'").get() as { n: number }).n;
  db.close();
  const lost = acknowledged.length - found.size;
  const seconds = (performance.now() - startedAt) / 1000;
  const restarts = restartMs.slice(1).sort((a, b) => a - b);

  say("## Chaos (a): SIGKILL under load");
  say("");
  say(`- ${KILLS} SIGKILLs in ${seconds.toFixed(1)} s, each at a random moment 100–900 ms after the server came up; ${CLIENTS} clients creating reports without pause.`);
  say(`- requests sent ${attempts}, answered 201 ${acknowledged.length}, unanswered (connection refused or cut by a kill) ${unanswered}, 5xx ${fiveXx}`);
  say(`- **acknowledged ${acknowledged.length}, found ${found.size}, lost ${lost}**`);
  say(`- reports in the database ${inDatabase}: ${inDatabase - found.size} committed whose answer a kill cut off (never acknowledged, so allowed)`);
  say(`- PRAGMA integrity_check after ${KILLS} crashes: ${integrity}`);
  say(`- restart after a crash to listening: median ${Math.round(restarts[Math.floor(restarts.length / 2)] ?? 0)} ms, max ${Math.round(restarts.at(-1) ?? 0)} ms`);
  say("");
  if (lost !== 0 || integrity !== "ok" || fiveXx !== 0 || acknowledged.length === 0) failed = true;
}

/**
 * (a) on PostgreSQL: three instances on one database; one of them at a time is killed with
 * SIGKILL and started again while the others serve. Jobs (AI enrichment, webhook deliveries) are
 * claimed by all of them all along. Then (c): PostgreSQL itself restarted under load.
 */
async function instancesOnPostgres(demo: Demo, ollamaUrl: string): Promise<void> {
  const LEASE_MS = 3_000;
  Object.assign(env, {
    FLAGSTAFF_JOB_LEASE_MS: String(LEASE_MS),
    FLAGSTAFF_JOB_POLL_MS: "200",
    FLAGSTAFF_JOB_BACKOFF_MS: "200",
    FLAGSTAFF_JOB_BACKOFF_CAP_MS: "2000",
    FLAGSTAFF_WEBHOOK_TIMEOUT_MS: "2000",
    FLAGSTAFF_WEBHOOK_RETRY_SCALE: "0.001",
    FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
    // Every report's enrichment is checked exactly once, so none is shed: on a quiet machine
    // the run files more reports than the fake model answers in time, and past the default
    // bound (10,000 waiting) enrichment is skipped by design (test/job-lanes.test.ts tests that).
    FLAGSTAFF_ENRICH_BACKLOG_MAX: "0",
  });
  const concurrency = Number(env.FLAGSTAFF_JOB_CONCURRENCY ?? 4);
  const connect = () => postgres(env.FLAGSTAFF_DATABASE_URL!, { max: 2, onnotice: () => {}, types: { int8: { to: 20, from: [20], serialize: String, parse: Number } } });
  // The harness's own client: a new one after each restart of PostgreSQL (the old one's
  // connections are gone with it).
  let db = connect();

  // The webhook receiver: every message it gets, by webhook-id.
  const receivedAt = new Map<string, number>();
  let receivedTotal = 0;
  const receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      await req.text();
      const id = req.headers.get("webhook-id") ?? "";
      receivedAt.set(id, (receivedAt.get(id) ?? 0) + 1);
      receivedTotal++;
      return new Response("ok");
    },
  });

  const names = ["A", "B", "C"] as const;
  const N = names.length;
  const instances: (Server | null)[] = names.map(() => null);
  const urls: (string | null)[] = names.map(() => null);
  const down: boolean[] = names.map(() => false);
  const restartMs: number[] = [];
  /** Instances that exited without being killed by the harness. */
  const exits: { name: string; during: string; at: number; code: number | null; signal: string | null; log: string; lastLines: string[] }[] = [];
  /** Killed on purpose: their exit is no news. */
  const killing = new Set<Server>();
  let during = "start-up";
  const starts = names.map(() => 0);
  const startInstance = async (i: number) => {
    const t = performance.now();
    // A log file per process: a new process would write over the start of the last one's.
    const log = `${logFile}.${names[i]}.${++starts[i]!}`;
    const s = await startServer([BUN, CLI, "serve"], env, { logFile: log });
    restartMs.push(performance.now() - t);
    instances[i] = s;
    urls[i] = s.url;
    down[i] = false;
    void s.proc.exited.then((code) => {
      if (killing.has(s)) return;
      if (instances[i] === s) {
        instances[i] = null;
        urls[i] = null;
        down[i] = true;
      }
      exits.push({ name: names[i]!, during, at: performance.now(), code, signal: s.proc.signalCode ? String(s.proc.signalCode) : null, log, lastLines: lastLinesOf(log, 8) });
      step(`instance ${names[i]} EXITED by itself during ${during}: code ${code}${s.proc.signalCode ? `, signal ${s.proc.signalCode}` : ""}`);
    });
  };
  const killInstance = async (i: number) => {
    const s = instances[i];
    if (!s) return;
    killing.add(s);
    urls[i] = null;
    down[i] = true;
    instances[i] = null;
    await s.kill();
  };
  for (let i = 0; i < N; i++) await startInstance(i);
  restartMs.length = 0;

  const headers = { authorization: `Bearer ${demo.secretKey}`, "content-type": "application/json" };
  const orgApi = (i: number, path: string) => `${urls[i]}/api/v1/organizations/${demo.orgSlug}${path}`;
  const must = async (res: Response, what: string) => {
    if (!res.ok) throw new Error(`${what}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  await must(await fetch(orgApi(0, `/projects/${demo.projectId}/settings`), { method: "PATCH", headers, body: JSON.stringify({ aiEnabled: true, aiThreshold: 90 }) }), "AI on");
  await must(await fetch(orgApi(1, "/webhook-endpoints"), { method: "POST", headers, body: JSON.stringify({ url: `http://127.0.0.1:${receiver.port}/hook` }) }), "webhook endpoint");

  // Clients: report creators and action creators, each on "its" instance, on another one while
  // its own is down (as a load balancer would route).
  type Outcome = number | "no answer" | "timed out";
  interface Sent {
    startedAt: number;
    endedAt: number;
    outcome: Outcome;
    /** The 201 came while another instance was down. */
    whileOtherDown: boolean;
  }
  interface Load {
    reports: string[];
    actions: string[];
    sent: Sent[];
    stop(): Promise<void>;
  }
  const pickUrl = (n: number): [string | null, number] => {
    for (let k = 0; k < N; k++) {
      const i = (n + k) % N;
      if (urls[i]) return [urls[i], i];
    }
    return [null, -1];
  };
  /** `CLIENTS` report clients and 2 action clients, until stopped; reports described `chaos-<tag>-…`, actions with reason `chaos <tag>`. */
  const startLoad = (tag: string): Load => {
    let stopped = false;
    const load = { reports: [] as string[], actions: [] as string[], sent: [] as Sent[] };
    const send = async (n: number, make: (url: string) => Promise<Response>, onOk: (body: Record<string, unknown>) => void) => {
      const [url, i] = pickUrl(n);
      if (!url) return Bun.sleep(2);
      const startedAt = performance.now();
      let outcome: Outcome;
      let whileOtherDown = false;
      try {
        const res = await make(url);
        const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
        outcome = res.status;
        if (res.status === 201) {
          onOk(body);
          whileOtherDown = down.some((d, k) => d && k !== i);
        }
      } catch (err) {
        outcome = (err as Error).name === "TimeoutError" ? "timed out" : "no answer";
        await Bun.sleep(1);
      }
      load.sent.push({ startedAt, endedAt: performance.now(), outcome, whileOtherDown });
    };
    const reportClient = async (n: number) => {
      for (let i = 0; !stopped; i++) {
        await send(
          n,
          (url) =>
            fetch(`${url}/sdk/flagstaff/v1/projects/${demo.projectId}/reports`, {
              method: "POST",
              headers,
              body: JSON.stringify({
                subject: { type: "user", externalId: `u-${i % 500}` },
                reporter: { type: "user", externalId: `r-${n}` },
                target: { contentType: "post", contentExternalId: `p-${n}-${i % 300}`, content: "Buy cheap followers now" },
                reason: pick(["spam", "harassment", "threats"]),
                description: `chaos-${tag}-${n}-${i}`,
              }),
              signal: AbortSignal.timeout(10_000),
            }),
          (body) => load.reports.push((body.report as { id: string }).id),
        );
      }
    };
    const actionClient = async (n: number) => {
      for (let i = 0; !stopped; i++) {
        await send(
          n,
          (url) =>
            fetch(`${url}/api/v1/organizations/${demo.orgSlug}/projects/${demo.projectId}/enforcement-actions`, {
              method: "POST",
              headers,
              body: JSON.stringify({ kind: "warning", reason: `chaos ${tag}`, identity: { type: "user", externalId: `w-${tag}-${n}-${i}` } }),
              signal: AbortSignal.timeout(10_000),
            }),
          (body) => load.actions.push((body.action as { id: string }).id),
        );
        await Bun.sleep(20);
      }
    };
    const clients = [...Array.from({ length: CLIENTS }, (_, n) => reportClient(n)), actionClient(0), actionClient(1)];
    return {
      ...load,
      async stop() {
        stopped = true;
        await Promise.all(clients);
      },
    };
  };
  const openJobs = async () => Number((await db`SELECT count(*)::int AS n FROM jobs WHERE status IN ('pending', 'running')`)[0]!.n);
  const drain = async (limitMs: number) => {
    const started = performance.now();
    while ((await openJobs()) > 0 && performance.now() - started < limitMs) await Bun.sleep(250);
    return (performance.now() - started) / 1000;
  };
  const fiveXxOf = (sent: Sent[]) => sent.filter((s) => typeof s.outcome === "number" && s.outcome >= 500).length;
  const unansweredOf = (sent: Sent[]) => sent.filter((s) => typeof s.outcome !== "number").length;

  // ---- (a) kills
  during = "the kill phase";
  step(`(a) ${N} instances on PostgreSQL: ${KILLS} SIGKILLs of one of them at a time under load (${CLIENTS} report clients, 2 action clients)`);
  const startedAt = performance.now();
  const killLoad = startLoad("kill");
  const killed = names.map(() => 0);
  for (let k = 0; k < KILLS; k++) {
    await Bun.sleep(100 + Math.floor(random() * 800));
    const up = names.map((_, i) => i).filter((i) => instances[i]);
    if (up.length < 2) break; // one left: not this one (an instance that exited by itself is reported below)
    const v = up[Math.floor(random() * up.length)]!;
    await killInstance(v);
    killed[v]!++;
    await startInstance(v);
  }
  await Bun.sleep(300);
  await killLoad.stop();
  const loadSeconds = (performance.now() - startedAt) / 1000;

  // The queue drains with every instance up: leases of killed instances run out and are claimed again.
  const drainSeconds = await drain(120_000);

  const ids = (rows: { id: string }[]) => new Set(rows.map((r) => r.id));
  const foundReports = ids(await db`SELECT id FROM reports WHERE description LIKE 'chaos-kill-%'`);
  const foundActions = ids(await db`SELECT id FROM enforcement_actions WHERE reason = 'chaos kill'`);
  const lostReports = killLoad.reports.filter((id) => !foundReports.has(id)).length;
  const lostActions = killLoad.actions.filter((id) => !foundActions.has(id)).length;
  const jobStatuses = Object.fromEntries((await db`SELECT status, count(*)::int AS n FROM jobs GROUP BY status`).map((r) => [r.status, r.n]));
  // Enrichment: one content analysis per report, whoever ran it and however often it was cut off.
  const enrichment = async (descriptionLike: string) => {
    const rows = await db`SELECT r.id, count(a.id)::int AS n FROM reports r LEFT JOIN content_analyses a ON a.report_id = r.id AND a.source = 'enrichment' WHERE r.description LIKE ${descriptionLike} GROUP BY r.id`;
    return { reports: rows.length, once: rows.filter((r) => r.n === 1).length, twice: rows.filter((r) => r.n > 1).length, none: rows.filter((r) => r.n === 0).length };
  };
  const enriched = await enrichment("chaos-kill-%");
  const modelCalls = ((await (await fetch(`${ollamaUrl}/__requests`)).json()) as unknown[]).length;
  // Webhooks: every message of the kill phase received at least once.
  const deliveries = await db`SELECT id, status FROM webhook_deliveries`;
  const deliveryIds = deliveries.map((d) => String(d.id));
  // A delivery's id is its message's webhook-id (src/domain/webhooks/outbox.ts).
  const missing = deliveryIds.filter((id) => !receivedAt.has(id)).length;
  const repeated = [...receivedAt.values()].filter((n) => n > 1).length;
  const notDelivered = deliveries.filter((d) => d.status !== "delivered").length;
  const restarts = [...restartMs].sort((a, b) => a - b);
  const killAcked = killLoad.reports.length + killLoad.actions.length;
  const killFiveXx = fiveXxOf(killLoad.sent);

  say(`## Chaos (a): ${N} instances on PostgreSQL, one killed with SIGKILL at a time`);
  say("");
  say(`- ${killed.reduce((a, b) => a + b, 0)} SIGKILLs in ${loadSeconds.toFixed(1)} s (${names.map((n, i) => `${n} ${killed[i]}`).join(", ")}), each 100–900 ms after the previous restart; ${CLIENTS} clients creating reports and 2 creating enforcement actions, each sending to its instance or, while that one is down, to the next one up.`);
  say(`- requests sent ${killLoad.sent.length}, answered 201 ${killAcked} (${killLoad.sent.filter((s) => s.whileOtherDown).length} while another instance was down), unanswered (cut by a kill) ${unansweredOf(killLoad.sent)}, 5xx ${killFiveXx}`);
  say(`- **reports: acknowledged ${killLoad.reports.length}, found ${killLoad.reports.length - lostReports}, lost ${lostReports}**; in the database ${foundReports.size} (${foundReports.size - (killLoad.reports.length - lostReports)} committed whose answer a kill cut off)`);
  say(`- **enforcement actions: acknowledged ${killLoad.actions.length}, found ${killLoad.actions.length - lostActions}, lost ${lostActions}**`);
  say(`- queue drained ${drainSeconds.toFixed(1)} s after the load (lease ${LEASE_MS} ms); jobs by status: ${JSON.stringify(jobStatuses)}`);
  say(`- **AI enrichment: ${enriched.once} of ${enriched.reports} reports enriched exactly once, ${enriched.twice} more than once, ${enriched.none} not at all**; ${modelCalls} model calls (a call cut off by a kill is made again; its result is written once)`);
  say(`- **webhooks: ${deliveryIds.length} messages, ${deliveryIds.length - missing} received, ${missing} never received, ${notDelivered} not marked delivered**; ${receivedTotal} requests received; ${repeated} messages received twice or more (deliveries cut off by a kill after the receiver had them, sent again with the same webhook-id: at most ${KILLS} kills × ${concurrency} jobs at a time = ${KILLS * concurrency})`);
  say(`- restart after a kill to listening: median ${Math.round(restarts[Math.floor(restarts.length / 2)] ?? 0)} ms, max ${Math.round(restarts.at(-1) ?? 0)} ms`);
  if (lostReports || lostActions || killFiveXx || !killLoad.reports.length || !killLoad.actions.length || enriched.twice || enriched.none || missing || notDelivered || repeated > KILLS * concurrency) failed = true;

  // Every instance up, no kills: every message exactly once while all claim.
  during = "the steady phase";
  step(`(a) all ${N} instances claiming, no kills: each webhook message exactly once`);
  for (let i = 0; i < N; i++) if (!instances[i]) await startInstance(i);
  receivedAt.clear();
  const before = new Set(deliveryIds);
  const steady: string[] = [];
  let steadyFiveXx = 0;
  await Promise.all(
    Array.from({ length: 4 }, async (_, n) => {
      for (let i = 0; i < 50; i++) {
        const res = await fetch(`${urls[n % N]}/api/v1/organizations/${demo.orgSlug}/projects/${demo.projectId}/enforcement-actions`, {
          method: "POST",
          headers,
          body: JSON.stringify({ kind: "warning", reason: "chaos steady", identity: { type: "user", externalId: `steady-${n}-${i}` } }),
        });
        if (res.status === 201) steady.push(((await res.json()) as { action: { id: string } }).action.id);
        else if (res.status >= 500) steadyFiveXx++;
      }
    }),
  );
  await drain(60_000);
  const steadyDeliveries = (await db`SELECT id FROM webhook_deliveries`).map((d) => String(d.id)).filter((id) => !before.has(id));
  const steadyOnce = steadyDeliveries.filter((id) => receivedAt.get(id) === 1).length;
  const steadyExtra = [...receivedAt.entries()].filter(([id, n]) => !before.has(id) && n > 1).length;
  say(`- without kills, all ${N} instances claiming: ${steady.length} actions through them, ${steadyDeliveries.length} messages, **${steadyOnce} received exactly once, ${steadyExtra} more than once, ${steadyDeliveries.filter((id) => !receivedAt.has(id)).length} never**${steadyFiveXx ? `; 5xx ${steadyFiveXx}` : ""}`);
  say("");
  if (steady.length !== 200 || steadyOnce !== steadyDeliveries.length || steadyDeliveries.length < 200 || steadyFiveXx) failed = true;

  // ---- (c) PostgreSQL restarted under load
  const pgCluster = cluster;
  if (!pgCluster) {
    say("## Chaos (c): PostgreSQL restarted under load");
    say("");
    say("- skipped: --postgres-url names a server this harness did not start, so it does not restart it (run `--postgres` for a throwaway cluster).");
    say("");
  } else {
    for (const mode of ["fast", "immediate"] as const) {
      during = `the restart of PostgreSQL (-m ${mode})`;
      // Every instance up (one that exited in an earlier phase is started again, and said so).
      const startedAgain = names.filter((_, i) => !instances[i]);
      for (let i = 0; i < N; i++) if (!instances[i]) await startInstance(i);
      step(`(c) pg_ctl restart -m ${mode} under load (${N} instances, ${CLIENTS} report clients, 2 action clients)`);
      receivedAt.clear();
      const deliveriesBefore = new Set((await db`SELECT id FROM webhook_deliveries`).map((d) => String(d.id)));
      const exitsBefore = exits.length;
      const tag = `restart-${mode}`;
      const load = startLoad(tag);
      await Bun.sleep(1500);
      const restartStarted = performance.now();
      let restartError: string | null = null;
      try {
        await pgCluster.restart(mode);
      } catch (err) {
        restartError = err instanceof Error ? err.message : String(err);
      }
      const pgReady = performance.now();
      const oldDb = db;
      db = connect();
      void oldDb.end({ timeout: 1 }).catch(() => {});

      // Each instance, left alone: how long until /readyz answers 200, and a report 201.
      const recoverLimitMs = 30_000;
      const recovery = await Promise.all(
        names.map(async (_, i) => {
          let readyMs: number | null = null;
          let reportMs: number | null = null;
          while (performance.now() - pgReady < recoverLimitMs && (readyMs === null || reportMs === null)) {
            const url = urls[i];
            if (!url) break; // exited
            if (readyMs === null) {
              const ok = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.status === 200, () => false);
              if (ok) readyMs = performance.now() - pgReady;
            } else {
              const status = await fetch(`${url}/sdk/flagstaff/v1/projects/${demo.projectId}/reports`, {
                method: "POST",
                headers,
                body: JSON.stringify({ subject: { type: "user", externalId: `probe-${tag}-${i}` }, reason: "spam", description: `chaos-${tag}-probe-${i}` }),
                signal: AbortSignal.timeout(2_000),
              }).then(async (r) => {
                await r.arrayBuffer();
                return r.status;
              }, () => 0);
              if (status === 201) reportMs = performance.now() - pgReady;
            }
            if (readyMs === null || reportMs === null) await Bun.sleep(100);
          }
          return { readyMs, reportMs, exited: !urls[i] };
        }),
      );
      await Bun.sleep(1000);
      await load.stop();
      const loadEnded = performance.now();
      // An instance that did not serve again is started again, so the queue can drain.
      const stuck = names.filter((_, i) => !recovery[i]!.exited && (recovery[i]!.readyMs === null || recovery[i]!.reportMs === null));
      for (let i = 0; i < N; i++) {
        if (stuck.includes(names[i]!)) {
          await killInstance(i);
          await startInstance(i);
        } else if (!instances[i]) await startInstance(i);
      }
      const drained = await drain(60_000);

      // Acknowledged reports and actions, each looked up by id.
      const reportIds = ids(await db`SELECT id FROM reports WHERE id IN ${db(load.reports.length ? load.reports : [""])}`);
      const actionIds = ids(await db`SELECT id FROM enforcement_actions WHERE id IN ${db(load.actions.length ? load.actions : [""])}`);
      const lost = load.reports.filter((id) => !reportIds.has(id)).length;
      const lostActs = load.actions.filter((id) => !actionIds.has(id)).length;
      // Answers during the restart: requests in flight at some moment between its start and PostgreSQL accepting connections again.
      const inWindow = load.sent.filter((s) => s.startedAt < pgReady && s.endedAt > restartStarted);
      const afterWindow = load.sent.filter((s) => s.startedAt >= pgReady);
      const byOutcome = (sent: Sent[]) => {
        const m = new Map<string, number>();
        for (const s of sent) m.set(String(s.outcome), (m.get(String(s.outcome)) ?? 0) + 1);
        return [...m].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}: ${v}`).join(", ") || "none";
      };
      const phaseDeliveries = await db`SELECT id, status FROM webhook_deliveries`;
      const newDeliveries = phaseDeliveries.filter((d) => !deliveriesBefore.has(String(d.id)));
      const once = newDeliveries.filter((d) => receivedAt.get(String(d.id)) === 1).length;
      const more = newDeliveries.filter((d) => (receivedAt.get(String(d.id)) ?? 0) > 1).length;
      const never = newDeliveries.filter((d) => !receivedAt.has(String(d.id))).length;
      const undelivered = newDeliveries.filter((d) => d.status !== "delivered").length;
      const phaseEnriched = await enrichment(`chaos-${tag}-%`);
      const phaseExits = exits.slice(exitsBefore);
      const fmtS = (ms: number | null) => (ms === null ? "never" : `${(ms / 1000).toFixed(1)} s`);

      say(`## Chaos (c): PostgreSQL restarted under load (pg_ctl restart -m ${mode})`);
      say("");
      say(
        `- ${N} instances${startedAgain.length ? ` (${startedAgain.join(", ")} started again first: it had exited)` : ""}, ${CLIENTS} report clients and 2 action clients; ` +
          `the restart took ${((pgReady - restartStarted) / 1000).toFixed(1)} s${restartError ? ` and FAILED: ${restartError}` : ""}; load for ${((loadEnded - restartStarted) / 1000).toFixed(1)} s from its start.`,
      );
      say(`- answers during the restart (requests in flight between its start and PostgreSQL accepting connections again): ${byOutcome(inWindow)}`);
      say(`- answers after it: ${byOutcome(afterWindow)}`);
      say(`- requests without an answer: ${unansweredOf(load.sent)} (${load.sent.filter((s) => s.outcome === "timed out").length} timed out after 10 s); 5xx ${fiveXxOf(load.sent)} (500: ${load.sent.filter((s) => s.outcome === 500).length}, 503: ${load.sent.filter((s) => s.outcome === 503).length})`);
      say(`- **reports: acknowledged ${load.reports.length}, lost ${lost}; enforcement actions: acknowledged ${load.actions.length}, lost ${lostActs}**`);
      for (let i = 0; i < N; i++) {
        const r = recovery[i]!;
        say(
          `- instance ${names[i]}: ${r.exited ? "**EXITED** (started again by the harness afterwards)" : r.readyMs === null || r.reportMs === null ? `**did not serve again within ${recoverLimitMs / 1000} s** (started again by the harness)` : "serves again, not restarted"}; ` +
            `/readyz 200 after ${fmtS(r.readyMs)}, a report 201 after ${fmtS(r.reportMs)} (from PostgreSQL accepting connections)`,
        );
      }
      for (const e of phaseExits) {
        say(`- **instance ${e.name} exited** during ${e.during}, ${((e.at - restartStarted) / 1000).toFixed(1)} s after the restart began: exit code ${e.code}${e.signal ? `, signal ${e.signal}` : ""}; the last lines of its stderr (${e.log}):`);
        for (const line of e.lastLines) say(`    ${line}`);
      }
      say(`- queue drained ${drained.toFixed(1)} s after the load`);
      say(`- **webhooks: ${newDeliveries.length} messages, ${once} received exactly once, ${more} more than once, ${never} never, ${undelivered} not marked delivered**`);
      say(`- **AI enrichment: ${phaseEnriched.once} of ${phaseEnriched.reports} reports enriched exactly once, ${phaseEnriched.twice} more than once, ${phaseEnriched.none} not at all**`);
      say("");
      if (restartError || lost || lostActs || phaseExits.length || stuck.length || never || undelivered || more > N * concurrency || phaseEnriched.twice || phaseEnriched.none || !load.reports.length) failed = true;
    }
  }

  during = "shutdown";
  for (let i = 0; i < N; i++) {
    const s = instances[i];
    if (s) {
      killing.add(s);
      await s.stop();
    }
  }
  await receiver.stop(true);
  await db.end();
}

/** (b) Fuzz. */
async function fuzzPhase(demo: Demo): Promise<void> {
  step(`(b) ${FUZZ} malformed or random requests`);
  server = await startServer([BUN, CLI, "serve"], env, { logFile });
  const base = server!.url;
  const other = JSON.parse(await run([BUN, CLI, "init", "--json", "--org", "Other"], env)) as { projectId: string; secretKey: string };
  const fuzz = new Fuzzer(demo, other);
  const statuses = new Map<number, number>();
  const failures: string[] = [];
  let healthChecks = 0;
  let unhealthy = 0;
  let sent = 0;
  const byKind = new Map<string, number>();

  const worker = async () => {
    while (sent < FUZZ) {
      sent++;
      const req = fuzz.next(base);
      byKind.set(req.kind, (byKind.get(req.kind) ?? 0) + 1);
      let status: number;
      try {
        const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body, signal: AbortSignal.timeout(15_000), redirect: "manual" });
        status = res.status;
        const text = await res.text();
        if (status >= 500 && failures.length < 20) failures.push(`${status} ${req.method} ${req.url.slice(base.length, base.length + 160)} body=${String(req.body ?? "").slice(0, 160)} → ${text.slice(0, 200)}`);
      } catch (err) {
        status = 0; // no answer at all
        if (failures.length < 20) failures.push(`no answer: ${req.method} ${req.url.slice(base.length, base.length + 160)}: ${(err as Error).message}`);
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (sent % 500 === 0) {
        healthChecks++;
        const ok = await fetch(`${base}/healthz`).then((r) => r.status === 200, () => false);
        if (!ok) unhealthy++;
      }
    }
  };
  const fuzzStarted = performance.now();
  await Promise.all(Array.from({ length: 16 }, worker));
  const fuzzSeconds = (performance.now() - fuzzStarted) / 1000;

  const healthz = await fetch(`${base}/healthz`).then((r) => r.status, () => 0);
  const readyz = await fetch(`${base}/readyz`).then((r) => r.status, () => 0);
  const demoKeyStatus = await fetch(`${base}/sdk/flagstaff/v1/reports?limit=1`, { headers: { authorization: `Bearer ${demo.secretKey}` } }).then((r) => r.status, () => 0);
  // A new organization for the last check: the fuzz may have revoked or deleted what it had.
  const fresh = JSON.parse(await run([BUN, CLI, "init", "--json", "--org", "After fuzz"], env)) as { projectId: string; secretKey: string };
  const probe = await fetch(`${base}/sdk/flagstaff/v1/projects/${fresh.projectId}/reports`, {
    method: "POST",
    headers: { authorization: `Bearer ${fresh.secretKey}`, "content-type": "application/json" },
    body: JSON.stringify({ subject: { type: "user", externalId: "after-fuzz" }, reason: "spam" }),
  }).then((r) => r.status, () => 0);
  const stopCode = await server!.stop();
  server = null;
  const serverErrors = readFileSync(logFile, "utf8")
    .split("\n")
    .filter((l) => l.includes('"level":"error"') && !l.includes('"msg":"request"')).length;

  const fiveHundreds = [...statuses].filter(([s]) => s >= 500 || s === 0).reduce((n, [, c]) => n + c, 0);
  say("## Chaos (b): fuzz");
  say("");
  say(`- ${FUZZ} requests in ${fuzzSeconds.toFixed(1)} s (16 at a time): ${[...byKind].map(([k, n]) => `${k} ${n}`).join(", ")}`);
  say(`- statuses: ${[...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s === 0 ? "no answer" : s}: ${n}`).join(", ")}`);
  say(`- **5xx or no answer: ${fiveHundreds}**`);
  say(`- health checks during the run: ${healthChecks}, failed ${unhealthy}; afterwards /healthz ${healthz}, /readyz ${readyz}, a new report ${probe}; SIGTERM exit code ${stopCode}`);
  say(`- error lines in the server log (besides access lines): ${serverErrors}`);
  say(`- the demo organization's secret key afterwards: ${demoKeyStatus === 200 ? "still valid" : `answered ${demoKeyStatus} (the fuzz revoked it or deleted its project)`}`);
  for (const f of failures) say(`  - ${f}`);
  if (fiveHundreds !== 0 || unhealthy !== 0 || healthz !== 200 || readyz !== 200 || probe !== 201 || stopCode !== 0) failed = true;
  say("");
}

/** encodeURIComponent, except that lone surrogates become the bytes of invalid UTF-8 (as a broken client would send). */
function encodeWeird(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return text.split("").map((ch) => (/[\ud800-\udfff]/.test(ch) ? "%ED%A0%80" : encodeURIComponent(ch))).join("");
  }
}

// ---------------------------------------------------------------------------------------------

interface FuzzRequest {
  kind: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
}

/** Builds random requests, most of them wrong in one or several ways. */
class Fuzzer {
  private readonly rest = restRoutes();
  private readonly procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { type: string } }>).map(([path, p]) => ({ path, type: p._def.type }));

  constructor(
    private readonly demo: { orgSlug: string; projectId: string; secretKey: string; publishableKey: string },
    private readonly other: { projectId: string; secretKey: string },
  ) {}

  next(base: string): FuzzRequest {
    const roll = random();
    if (roll < 0.6) return this.restRequest(base);
    if (roll < 0.85) return this.trpcRequest(base);
    return this.randomRequest(base);
  }

  private headers(json = true): Record<string, string> {
    const h: Record<string, string> = {};
    const auth = this.authorization();
    if (auth !== null) h.authorization = auth;
    if (json || chance(0.2)) h["content-type"] = pick(["application/json", "application/json", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=latin1", "application/jsön", "*/*"]);
    if (chance(0.05)) h["x-request-id"] = pick(["", "a".repeat(500), "id with spaces", "ok-id-1"]);
    if (chance(0.05)) h["x-forwarded-proto"] = pick(["https", "gopher", ""]);
    if (chance(0.03)) h.cookie = pick(["flagstaff_session=" + "x".repeat(64), "flagstaff_session=", "a=b; c"]);
    if (chance(0.03)) h.origin = pick(["https://evil.example", "null"]);
    return h;
  }

  private authorization(): string | null {
    const r = random();
    if (r < 0.45) return `Bearer ${this.demo.secretKey}`;
    if (r < 0.55) return `Bearer ${this.demo.publishableKey}`;
    if (r < 0.6) return `Bearer ${this.other.secretKey}`;
    if (r < 0.68) return null;
    return pick([
      "Bearer",
      "Bearer ",
      "Basic dXNlcjpwYXNz",
      `bearer ${this.demo.secretKey}`,
      `Bearer ${this.demo.secretKey}x`,
      `Bearer sk_live_${"A".repeat(43)}`,
      `Bearer pk_live_${"-".repeat(43)}`,
      `Bearer ${this.demo.secretKey.slice(0, -1)}`,
      `Bearer ${"sk_live_".repeat(200)}`,
      "Bearer caf\u00e9",
      `Bearer ${this.demo.secretKey} ${this.demo.secretKey}`,
    ]);
  }

  private param(name: string): string {
    const r = random();
    if (name === "projectId" && r < 0.55) return chance(0.85) ? this.demo.projectId : this.other.projectId;
    if (name === "orgSlug" && r < 0.55) return this.demo.orgSlug;
    if (name === "typeName" && r < 0.5) return pick(["user", "account", "guild"]);
    if (name === "externalId" && r < 0.5) return `u-${Math.floor(random() * 50)}`;
    return encodeWeird(weirdString());
  }

  private restRequest(base: string): FuzzRequest {
    const route = pick(this.rest);
    const method = chance(0.85) ? route.method : pick(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]);
    // Deleting the demo project would delete its keys too and leave the rest of the run at 401:
    // a DELETE of a project itself gets random ids only.
    const deletesProject = method === "DELETE" && /\/projects\/:projectId$/.test(route.path);
    const param = (name: string) => (deletesProject && name === "projectId" ? encodeWeird(weirdString()) : this.param(name));
    const path = route.path.replace(/:(\w+)/g, (_, name: string) => param(name));
    const reads = method === "GET" || method === "HEAD" || method === "DELETE" || method === "OPTIONS";
    const url = base + path + (reads || chance(0.2) ? randomQuery() : "");
    return { kind: "rest", method, url, headers: this.headers(!reads), body: reads ? undefined : randomBody(route.procedurePath) };
  }

  private trpcRequest(base: string): FuzzRequest {
    const proc = pick(this.procedures);
    const query = proc.type === "query";
    const method = chance(0.9) ? (query ? "GET" : "POST") : pick(["GET", "POST", "PUT", "DELETE"]);
    const input = randomJsonText(proc.path);
    const batch = chance(0.1);
    const path = batch ? `${proc.path},${pick(this.procedures).path}` : proc.path;
    const url = method === "GET" ? `${base}/trpc/${path}?${batch ? "batch=1&" : ""}input=${encodeURIComponent(batch ? `{"0":${input}}` : input)}` : `${base}/trpc/${path}${batch ? "?batch=1" : ""}`;
    return { kind: "trpc", method, url, headers: this.headers(method !== "GET"), body: method === "GET" ? undefined : batch ? `{"0":${input}}` : input };
  }

  private randomRequest(base: string): FuzzRequest {
    const paths = [
      "/", "/healthz", "/readyz", "/metrics", "/sdk/flagstaff/v1/openapi.json", "/sdk", "/sdk/flagstaff/v2/reports", "/api/v1",
      "/api/v1/organizations", "/trpc", "/trpc/", "/trpc/nope.nope", "/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/sdk/flagstaff/v1/reports/%00",
      "/sdk/flagstaff/v1/projects//reports", "/sdk/flagstaff/v1/reports/" + "a".repeat(5000), "/favicon.ico", "/" + encodeWeird(weirdString()),
      "/sdk/flagstaff/v1/reports?" + "x=1&".repeat(2000),
    ];
    const method = pick(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]);
    const reads = method === "GET" || method === "HEAD";
    return { kind: "random", method, url: base + pick(paths), headers: this.headers(!reads), body: reads ? undefined : randomBody("random") };
  }
}

/** Strings that have broken parsers somewhere. */
function weirdString(): string {
  return pick([
    "",
    " ",
    "a".repeat(300),
    "x".repeat(70_000),
    "\u0000",
    "nul\u0000byte",
    "\ud800",
    "\udfff\ud800",
    "😀".repeat(100),
    "e\u0301\u0301\u0301",
    "\u202eevil",
    "\ufeffbom",
    "../../etc/passwd",
    "%",
    "%zz",
    "<script>alert(1)</script>",
    "'; DROP TABLE reports; --",
    "${jndi:ldap://x}",
    "null",
    "true",
    "-1",
    "1e309",
    "__proto__",
    "constructor",
    "\r\nX-Injected: 1",
    "ＡＢＣ",
    "𝕏",
    String(Math.floor(random() * 1e9)),
    crypto.randomUUID(),
  ]);
}

function randomValue(depth = 0): unknown {
  const r = random();
  if (depth > 3 || r < 0.35) return pick<unknown>([weirdString(), 0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, true, false, null, "spam", "user", "OPEN"]);
  if (r < 0.55) return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(depth + 1));
  if (r < 0.6) return Array.from({ length: 2000 }, (_, i) => i);
  const keys = ["subject", "reporter", "target", "reason", "description", "automated", "display", "metadata", "type", "externalId", "name", "username", "avatarUrl",
    "contentType", "contentExternalId", "content", "team", "note", "resolutionCode", "action", "kind", "names", "__proto__", "constructor", "limit", "cursor", "status",
    "email", "password", "url", "enabled", "aiEnabled", "aiThreshold", "severityHint", "reportRateLimit", "projectId", "orgSlug"];
  return Object.fromEntries(Array.from({ length: 1 + Math.floor(random() * 5) }, () => [pick(keys), randomValue(depth + 1)]));
}

/** A plausible body with one or several things wrong, or plain garbage. */
function randomBody(procedurePath: string): string | Uint8Array<ArrayBuffer> | undefined {
  const r = random();
  if (r < 0.05) return undefined;
  if (r < 0.1) return "";
  if (r < 0.2) return pick(["{", "[", "}", "nul", "{\"a\":", "{'a':1}", "[1,2", "\"str\"", "42", "null", "true", "{\"a\":1}{\"b\":2}", "\u0000\u0001\u0002"]);
  if (r < 0.24) return crypto.getRandomValues(new Uint8Array(Math.floor(random() * 2048)));
  if (r < 0.27) return "[".repeat(50_000) + "]".repeat(50_000); // deep nesting
  if (r < 0.3) return JSON.stringify({ description: "x".repeat(300_000) }); // over the body limit
  return randomJsonText(procedurePath);
}

function randomJsonText(procedurePath: string): string {
  const base: Record<string, unknown> =
    procedurePath === "reports.create"
      ? { subject: { type: "user", externalId: "u-1" }, reason: "spam", target: { contentType: "post", contentExternalId: "p-1", content: "hello" } }
      : procedurePath === "identities.upsert"
        ? { display: { name: "Ada", username: "ada" }, metadata: { plan: "pro" } }
        : {};
  const mutated = { ...base };
  const changes = Math.floor(random() * 4);
  for (let i = 0; i < changes; i++) {
    const v = randomValue() as Record<string, unknown> | unknown;
    if (v && typeof v === "object" && !Array.isArray(v)) Object.assign(mutated, v);
    else mutated[pick(Object.keys(mutated).concat(["reason", "subject", "extra"]))] = v;
  }
  if (chance(0.05)) return JSON.stringify(randomValue());
  return JSON.stringify(mutated);
}

function randomQuery(): string {
  const keys = ["limit", "cursor", "sort", "status", "severity", "reason", "subjectExternalId", "contentExternalId", "automated", "projectId", "search", "action", "entityType", "kind", "x"];
  const n = Math.floor(random() * 4);
  if (n === 0) return "";
  const parts = Array.from({ length: n }, () => {
    const k = pick(keys);
    const v = pick([weirdString(), "0", "-5", "101", "1e309", "abc", "asc", "DESC", "OPEN,NOPE", "2026-01-01T00:00:00Z", "true", "yes", "", "%", "a&b=c"]);
    return `${encodeURIComponent(k)}=${chance(0.8) ? encodeWeird(v) : v}`;
  });
  return "?" + parts.join("&");
}

await main();
process.exit(failed ? 1 : 0);
