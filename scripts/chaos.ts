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
 * With `--postgres` (about two minutes) everything runs on PostgreSQL: a throwaway cluster on
 * loopback (scripts/pg-cluster.ts), or the server of `--postgres-url postgres://…` (an admin
 * URL: a database `flagstaff_chaos_<seed>` is created in it and dropped afterwards). Crashes
 * (a) then run two instances on one database, as behind a load balancer: clients send to both,
 * one instance at a time is killed with SIGKILL at a random moment and started again while the
 * other keeps serving. The project has AI enrichment on (scripts/fake-ollama.ts answers) and a
 * webhook endpoint, and two more clients create enforcement actions, so both instances claim
 * jobs all along. Afterwards, the queue drained: every acknowledged report and action is in the
 * database; every report was enriched exactly once (one content analysis each, whichever
 * instance ran its job, however often a kill cut a job off); every webhook message was
 * received, and a second phase without kills (both instances claiming) receives each message
 * exactly once. Messages received twice in the kill phase are counted: each is a delivery cut
 * off by a kill after the receiver had it, sent again with the same webhook-id (receivers drop
 * such repeats, as Standard Webhooks asks).
 */
import { Database } from "bun:sqlite";
import postgres from "postgres";
import { startPgCluster, type PgCluster } from "./pg-cluster.ts";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ROOT, run, startServer, type Server } from "./bench/lib.ts";
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
};
let server: Server | null = null;
const extra: Server[] = [];
let failed = false;

let cluster: PgCluster | null = null;
let dropDatabase: (() => Promise<void>) | null = null;

async function main(): Promise<void> {
try {
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

  if (ON_POSTGRES) await twoInstances(demo, ollama.url);
  else await oneInstanceKilled(demo);
  await fuzzPhase(demo);
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
 * (a) on PostgreSQL: two instances on one database; one of them at a time is killed with SIGKILL
 * and started again while the other serves. Jobs (AI enrichment, webhook deliveries) are claimed
 * by both all along.
 */
async function twoInstances(demo: Demo, ollamaUrl: string): Promise<void> {
  const LEASE_MS = 3_000;
  Object.assign(env, {
    FLAGSTAFF_JOB_LEASE_MS: String(LEASE_MS),
    FLAGSTAFF_JOB_POLL_MS: "200",
    FLAGSTAFF_JOB_BACKOFF_MS: "200",
    FLAGSTAFF_JOB_BACKOFF_CAP_MS: "2000",
    FLAGSTAFF_WEBHOOK_TIMEOUT_MS: "2000",
    FLAGSTAFF_WEBHOOK_RETRY_SCALE: "0.001",
    FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
  });
  const concurrency = Number(env.FLAGSTAFF_JOB_CONCURRENCY ?? 4);
  const db = postgres(env.FLAGSTAFF_DATABASE_URL!, { max: 2, onnotice: () => {}, types: { int8: { to: 20, from: [20], serialize: String, parse: Number } } });

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

  const names = ["A", "B"] as const;
  const instances: (Server | null)[] = [null, null];
  const urls: (string | null)[] = [null, null];
  const restartMs: number[] = [];
  const startInstance = async (i: number) => {
    const t = performance.now();
    const s = await startServer([BUN, CLI, "serve"], env, { logFile: `${logFile}.${names[i]}` });
    restartMs.push(performance.now() - t);
    instances[i] = s;
    urls[i] = s.url;
  };
  await startInstance(0);
  await startInstance(1);
  restartMs.length = 0;

  const headers = { authorization: `Bearer ${demo.secretKey}`, "content-type": "application/json" };
  const orgApi = (i: number, path: string) => `${urls[i]}/api/v1/organizations/${demo.orgSlug}${path}`;
  const must = async (res: Response, what: string) => {
    if (!res.ok) throw new Error(`${what}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  await must(await fetch(orgApi(0, `/projects/${demo.projectId}/settings`), { method: "PATCH", headers, body: JSON.stringify({ aiEnabled: true, aiThreshold: 90 }) }), "AI on");
  await must(await fetch(orgApi(1, "/webhook-endpoints"), { method: "POST", headers, body: JSON.stringify({ url: `http://127.0.0.1:${receiver.port}/hook` }) }), "webhook endpoint");

  // Clients: report creators and action creators, each on "its" instance, on the other one while
  // its own is down (as a load balancer would route).
  const reportsAcked: string[] = [];
  const actionsAcked: string[] = [];
  let attempts = 0;
  let unanswered = 0;
  let fiveXx = 0;
  let servedWhileOtherDown = 0;
  let stop = false;
  const down: boolean[] = [false, false];
  const pickUrl = (n: number): [string | null, number] => {
    const own = n % 2;
    const i = urls[own] ? own : 1 - own;
    return [urls[i] ?? null, i];
  };
  const send = async (n: number, make: (url: string) => Promise<Response>, onOk: (body: Record<string, unknown>) => void) => {
    const [url, i] = pickUrl(n);
    if (!url) return Bun.sleep(2);
    attempts++;
    try {
      const res = await make(url);
      const body = (await res.json()) as Record<string, unknown>;
      if (res.status === 201) {
        onOk(body);
        if (down[1 - i]) servedWhileOtherDown++;
      } else if (res.status >= 500) fiveXx++;
    } catch {
      unanswered++;
      await Bun.sleep(1);
    }
  };
  const reportClient = async (n: number) => {
    for (let i = 0; !stop; i++) {
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
              description: `chaos-${n}-${i}`,
            }),
            signal: AbortSignal.timeout(10_000),
          }),
        (body) => reportsAcked.push((body.report as { id: string }).id),
      );
    }
  };
  const actionClient = async (n: number) => {
    for (let i = 0; !stop; i++) {
      await send(
        n,
        (url) =>
          fetch(`${url}/api/v1/organizations/${demo.orgSlug}/projects/${demo.projectId}/enforcement-actions`, {
            method: "POST",
            headers,
            body: JSON.stringify({ kind: "warning", reason: "chaos", identity: { type: "user", externalId: `w-${n}-${i}` } }),
            signal: AbortSignal.timeout(10_000),
          }),
        (body) => actionsAcked.push((body.action as { id: string }).id),
      );
      await Bun.sleep(20);
    }
  };

  step(`(a) two instances on PostgreSQL: ${KILLS} SIGKILLs of one of them under load (${CLIENTS} report clients, 2 action clients)`);
  const startedAt = performance.now();
  const clients = [...Array.from({ length: CLIENTS }, (_, n) => reportClient(n)), actionClient(0), actionClient(1)];
  const killed = [0, 0];
  for (let k = 0; k < KILLS; k++) {
    await Bun.sleep(100 + Math.floor(random() * 800));
    const v = random() < 0.5 ? 0 : 1;
    const victim = instances[v]!;
    urls[v] = null;
    down[v] = true;
    await victim.kill();
    killed[v]!++;
    await startInstance(v);
    down[v] = false;
  }
  await Bun.sleep(300);
  stop = true;
  await Promise.all(clients);
  const loadSeconds = (performance.now() - startedAt) / 1000;

  // The queue drains with both instances up: leases of killed instances run out and are claimed again.
  const drainStarted = performance.now();
  const openJobs = async () => Number((await db`SELECT count(*)::int AS n FROM jobs WHERE status IN ('pending', 'running')`)[0]!.n);
  while ((await openJobs()) > 0 && performance.now() - drainStarted < 120_000) await Bun.sleep(250);
  const drainSeconds = (performance.now() - drainStarted) / 1000;

  const ids = (rows: { id: string }[]) => new Set(rows.map((r) => r.id));
  const foundReports = ids(await db`SELECT id FROM reports WHERE description LIKE 'chaos-%'`);
  const foundActions = ids(await db`SELECT id FROM enforcement_actions WHERE reason = 'chaos'`);
  const lostReports = reportsAcked.filter((id) => !foundReports.has(id)).length;
  const lostActions = actionsAcked.filter((id) => !foundActions.has(id)).length;
  const jobStatuses = Object.fromEntries((await db`SELECT status, count(*)::int AS n FROM jobs GROUP BY status`).map((r) => [r.status, r.n]));
  // Enrichment: one content analysis per report, whoever ran it and however often it was cut off.
  const analyses = await db`SELECT r.id, count(a.id)::int AS n FROM reports r LEFT JOIN content_analyses a ON a.report_id = r.id AND a.source = 'enrichment' WHERE r.description LIKE 'chaos-%' GROUP BY r.id`;
  const enrichedOnce = analyses.filter((r) => r.n === 1).length;
  const enrichedTwice = analyses.filter((r) => r.n > 1).length;
  const notEnriched = analyses.filter((r) => r.n === 0).length;
  const modelCalls = ((await (await fetch(`${ollamaUrl}/__requests`)).json()) as unknown[]).length;
  // Webhooks: every message of the kill phase received at least once.
  const deliveries = await db`SELECT id, status FROM webhook_deliveries`;
  const deliveryIds = deliveries.map((d) => String(d.id));
  // A delivery's id is its message's webhook-id (src/domain/webhooks/outbox.ts).
  const missing = deliveryIds.filter((id) => !receivedAt.has(id)).length;
  const repeated = [...receivedAt.values()].filter((n) => n > 1).length;
  const notDelivered = deliveries.filter((d) => d.status !== "delivered").length;
  const restarts = [...restartMs].sort((a, b) => a - b);

  say("## Chaos (a): two instances on PostgreSQL, one killed with SIGKILL at a time");
  say("");
  say(`- ${KILLS} SIGKILLs in ${loadSeconds.toFixed(1)} s (instance A ${killed[0]}, B ${killed[1]}), each 100–900 ms after the previous restart; ${CLIENTS} clients creating reports and 2 creating enforcement actions, each sending to its instance or, while that one is down, to the other.`);
  say(`- requests sent ${attempts}, answered 201 ${reportsAcked.length + actionsAcked.length} (${servedWhileOtherDown} by one instance while the other was down), unanswered (cut by a kill) ${unanswered}, 5xx ${fiveXx}`);
  say(`- **reports: acknowledged ${reportsAcked.length}, found ${reportsAcked.length - lostReports}, lost ${lostReports}**; in the database ${foundReports.size} (${foundReports.size - (reportsAcked.length - lostReports)} committed whose answer a kill cut off)`);
  say(`- **enforcement actions: acknowledged ${actionsAcked.length}, found ${actionsAcked.length - lostActions}, lost ${lostActions}**`);
  say(`- queue drained ${drainSeconds.toFixed(1)} s after the load (lease ${LEASE_MS} ms); jobs by status: ${JSON.stringify(jobStatuses)}`);
  say(`- **AI enrichment: ${enrichedOnce} of ${analyses.length} reports enriched exactly once, ${enrichedTwice} more than once, ${notEnriched} not at all**; ${modelCalls} model calls (a call cut off by a kill is made again; its result is written once)`);
  say(`- **webhooks: ${deliveryIds.length} messages, ${deliveryIds.length - missing} received, ${missing} never received, ${notDelivered} not marked delivered**; ${receivedTotal} requests received; ${repeated} messages received twice or more (deliveries cut off by a kill after the receiver had them, sent again with the same webhook-id: at most ${KILLS} kills × ${concurrency} jobs at a time = ${KILLS * concurrency})`);
  say(`- restart after a kill to listening: median ${Math.round(restarts[Math.floor(restarts.length / 2)] ?? 0)} ms, max ${Math.round(restarts.at(-1) ?? 0)} ms`);
  if (lostReports || lostActions || fiveXx || !reportsAcked.length || !actionsAcked.length || enrichedTwice || notEnriched || missing || notDelivered || repeated > KILLS * concurrency) failed = true;

  // Both instances up, no kills: every message exactly once while both claim.
  step("(a) both instances claiming, no kills: each webhook message exactly once");
  receivedAt.clear();
  const before = new Set(deliveryIds);
  const steady: string[] = [];
  await Promise.all(
    Array.from({ length: 4 }, async (_, n) => {
      for (let i = 0; i < 50; i++) {
        const res = await fetch(`${urls[n % 2]}/api/v1/organizations/${demo.orgSlug}/projects/${demo.projectId}/enforcement-actions`, {
          method: "POST",
          headers,
          body: JSON.stringify({ kind: "warning", reason: "chaos steady", identity: { type: "user", externalId: `steady-${n}-${i}` } }),
        });
        if (res.status === 201) steady.push(((await res.json()) as { action: { id: string } }).action.id);
        else if (res.status >= 500) fiveXx++;
      }
    }),
  );
  const steadyStarted = performance.now();
  while ((await openJobs()) > 0 && performance.now() - steadyStarted < 60_000) await Bun.sleep(100);
  const steadyDeliveries = (await db`SELECT id FROM webhook_deliveries`).map((d) => String(d.id)).filter((id) => !before.has(id));
  const steadyOnce = steadyDeliveries.filter((id) => receivedAt.get(id) === 1).length;
  const steadyExtra = [...receivedAt.entries()].filter(([id, n]) => !before.has(id) && n > 1).length;
  say(`- without kills, both instances claiming: ${steady.length} actions through both, ${steadyDeliveries.length} messages, **${steadyOnce} received exactly once, ${steadyExtra} more than once, ${steadyDeliveries.length - [...steadyDeliveries].filter((id) => receivedAt.has(id)).length} never**`);
  say("");
  if (steady.length !== 200 || steadyOnce !== steadyDeliveries.length || steadyDeliveries.length < 200) failed = true;

  for (const s of instances) await s?.stop();
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
