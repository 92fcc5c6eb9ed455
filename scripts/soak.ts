/**
 * `bun run soak`: a long mixed workload against a real server, printing the drift every window
 * and a verdict at the end (issue 32). Nothing is asserted while it runs: it measures.
 *
 *   bun run soak [--duration 180] [--window 10] [--rate 100] [--decisions 20] [--upserts 20]
 *                [--listings 20] [--ai-latency-ms 0] [--engine sqlite|postgres] [--binary dist/flagstaff]
 *                [--json out.json] [--source ../other-checkout]
 *
 * Defaults: 3 minutes (a developer's run); `--duration 900` is the release run. What runs:
 * - a server (`bun src/cli.ts serve`, or `--binary`) on a fresh database: SQLite in a temporary
 *   folder, or with `--engine postgres` a throwaway cluster (scripts/pg-cluster.ts);
 * - AI enrichment on, against the fake Ollama (scripts/fake-ollama.ts) answering after
 *   `--ai-latency-ms`; a webhook receiver on loopback, subscribed to report.decided and the
 *   enforcement events;
 * - open-loop load, each kind at its own steady rate whatever the answers take: `--rate` reports
 *   a second, `--decisions` decisions (resolve, one in four with a suspension, or dismiss, of
 *   reports filed earlier), `--upserts` identity upserts, `--listings` GET /reports, and a
 *   dashboard polling its queue (tRPC) every 2 s;
 * - every window: RSS (anonymous) of the server, database and WAL size (PostgreSQL: the
 *   database's size), p50/p99 per request kind, 5xx and failures, jobs by lane (pending) and the
 *   oldest due job (from /metrics), skipped enrichments, webhook delivery delay (receipt time
 *   minus the event's timestamp), p50 and max.
 * At the end: every acknowledged report is looked for in the database, and the verdict checks
 * the goals of issue 32: p99 of reports in the last third of the run <= 1.25 x the first third's; the job backlog
 * bounded (pending at the end no higher than the peak of the first two thirds, or under 1,000);
 * webhook deliveries within 5 s throughout; no 5xx; no acknowledged report missing.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir, cpus } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { startFakeOllama } from "./fake-ollama.ts";
import { startPgCluster, type PgCluster } from "./pg-cluster.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    duration: { type: "string", default: "180" },
    window: { type: "string", default: "10" },
    rate: { type: "string", default: "100" },
    decisions: { type: "string", default: "20" },
    upserts: { type: "string", default: "20" },
    listings: { type: "string", default: "20" },
    "ai-latency-ms": { type: "string", default: "0" },
    engine: { type: "string", default: "sqlite" },
    binary: { type: "string" },
    /** Another checkout's source (its src/cli.ts), to measure a version before a change. */
    source: { type: "string" },
    json: { type: "string" },
    "max-in-flight": { type: "string", default: "512" },
  },
});
const DURATION_S = Number(args.duration);
const WINDOW_S = Number(args.window);
const RATES = { report: Number(args.rate), decision: Number(args.decisions), upsert: Number(args.upserts), listing: Number(args.listings) };
const AI_LATENCY_MS = Number(args["ai-latency-ms"]);
const ENGINE = args.engine === "postgres" || args.engine === "pg" ? "postgres" : "sqlite";
const MAX_IN_FLIGHT = Number(args["max-in-flight"]);
const ROOT = join(import.meta.dir, "..");
const log = (s: string) => console.error(`[soak ${new Date().toISOString().slice(11, 19)}] ${s}`);

// ---------------------------------------------------------------------------------------------
// Set-up: model, receiver, database, server.

const fake = startFakeOllama();
if (AI_LATENCY_MS > 0) fake.setDefault(() => ({ delayMs: AI_LATENCY_MS }));
/** Delivery delays (ms) of the webhooks received, with when they arrived. */
const deliveries: { at: number; delayMs: number }[] = [];
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const at = Date.now();
    try {
      const body = JSON.parse(await req.text()) as { timestamp: string };
      deliveries.push({ at, delayMs: at - Date.parse(body.timestamp) });
    } catch {
      // not ours
    }
    return new Response("ok");
  },
});

const dir = mkdtempSync(join(tmpdir(), "flagstaff-soak-"));
const dbPath = join(dir, "flagstaff.db");
let cluster: PgCluster | null = null;
let pgUrl: string | null = null;
if (ENGINE === "postgres") {
  cluster = await startPgCluster();
  const admin = postgres(cluster.url, { max: 1, onnotice: () => {} });
  await admin.unsafe("CREATE DATABASE soak TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C' ENCODING 'UTF8'");
  await admin.end();
  const u = new URL(cluster.url);
  u.pathname = "/soak";
  pgUrl = u.toString();
}

const cmd = args.binary ? [resolve(ROOT, args.binary)] : [process.execPath, join(args.source ? resolve(args.source) : ROOT, "src/cli.ts")];
const env: Record<string, string> = {
  FLAGSTAFF_SHUTDOWN_DRAIN_MS: "0",
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? dir,
  FLAGSTAFF_DB: dbPath,
  ...(pgUrl ? { FLAGSTAFF_DATABASE_URL: pgUrl } : {}),
  PORT: "0",
  HOST: "127.0.0.1",
  FLAGSTAFF_LOG_LEVEL: "warn",
  OLLAMA_HOST: fake.url,
  FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
  FLAGSTAFF_REPORT_RATE_LIMIT: "100000000",
};

const init = Bun.spawnSync([...cmd, "init", "--json"], { env, cwd: dir });
if (init.exitCode !== 0) throw new Error(`init failed: ${init.stderr.toString()}`);
const demo = JSON.parse(init.stdout.toString()) as { orgSlug: string; projectId: string; secretKey: string };

const server = Bun.spawn([...cmd, "serve"], { env, cwd: dir, stdout: "pipe", stderr: "pipe" });
const serverErrors: string[] = [];
const baseUrl = await new Promise<string>((resolveUrl, reject) => {
  const reader = server.stdout.getReader();
  let seen = "";
  const timer = setTimeout(() => reject(new Error(`server did not start: ${seen}`)), 30_000);
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
      const m = /Flagstaff listening on (http:\/\/\S+)/.exec(seen);
      if (m?.[1]) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    }
  })();
});
void (async () => {
  const reader = server.stderr.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    for (const line of new TextDecoder().decode(value).split("\n")) if (line.includes('"level":"error"') && serverErrors.length < 1000) serverErrors.push(line);
  }
})();

let stopped = false;
async function cleanup(): Promise<void> {
  if (stopped) return;
  stopped = true;
  server.kill("SIGTERM");
  await Promise.race([server.exited, Bun.sleep(30_000)]);
  server.kill("SIGKILL");
  await receiver.stop(true);
  await fake.stop();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void cleanup().then(() => process.exit(130)));

const auth = { authorization: `Bearer ${demo.secretKey}`, "content-type": "application/json" };
const sdk = `${baseUrl}/sdk/flagstaff/v1`;
const org = `${baseUrl}/api/v1/organizations/${demo.orgSlug}`;
async function must(res: Promise<Response>, what: string): Promise<unknown> {
  const r = await res;
  if (!r.ok) throw new Error(`${what}: HTTP ${r.status} ${await r.text()}`);
  return r.json();
}
await must(fetch(`${org}/projects/${demo.projectId}/settings`, { method: "PATCH", headers: auth, body: JSON.stringify({ aiEnabled: true }) }), "AI on");
await must(
  fetch(`${org}/webhook-endpoints`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ url: `http://127.0.0.1:${receiver.port}/hook`, eventTypes: ["report.decided", "enforcement_action.created", "enforcement_action.updated", "enforcement_action.revoked"] }),
  }),
  "webhook endpoint",
);

// ---------------------------------------------------------------------------------------------
// Load: each kind at its own rate, open loop.

type Kind = "report" | "decision" | "upsert" | "listing" | "dashboard";
const KINDS: Kind[] = ["report", "decision", "upsert", "listing", "dashboard"];
interface Sample {
  kind: Kind;
  at: number;
  ms: number;
  status: number;
}
const samples: Sample[] = [];
let inFlight = 0;
let shedByClient = 0;
let serial = 0;
const acknowledged: string[] = [];
/** Reports filed and not decided yet, oldest first (decisions take from here). */
const undecided: string[] = [];

async function send(kind: Kind, url: string, init: RequestInit, onOk?: (body: unknown) => void): Promise<void> {
  if (inFlight >= MAX_IN_FLIGHT) {
    shedByClient++;
    return;
  }
  inFlight++;
  const started = performance.now();
  let status = 0;
  try {
    const r = await fetch(url, { ...init, headers: auth });
    status = r.status;
    const body = await r.json().catch(() => null);
    if (r.ok) onOk?.(body);
  } catch {
    status = 0; // a failed connection
  } finally {
    inFlight--;
    samples.push({ kind, at: Date.now(), ms: performance.now() - started, status });
  }
}

const REASONS = ["spam", "harassment", "misinformation", "threats", "other"];
const WORDS = ["buy", "cheap", "followers", "now", "idiot", "link", "free", "crypto", "meet", "kill", "scam", "hello", "great", "post"];
const text = (n: number) => Array.from({ length: 12 }, (_, i) => WORDS[(n * 7 + i * 3) % WORDS.length]).join(" ");

const actions: Record<Exclude<Kind, "dashboard">, () => void> = {
  report: () => {
    const n = ++serial;
    void send(
      "report",
      `${sdk}/projects/${demo.projectId}/reports`,
      {
        method: "POST",
        body: JSON.stringify({
          subject: { type: "user", externalId: `u-${n % 20_000}` },
          reporter: { type: "user", externalId: `r-${n % 50_000}` },
          target: { contentType: "post", contentExternalId: `p-${n}`, content: text(n) },
          reason: REASONS[n % REASONS.length],
          description: "soak report",
        }),
      },
      (body) => {
        const id = (body as { report: { id: string } }).report.id;
        acknowledged.push(id);
        undecided.push(id);
      },
    );
  },
  decision: () => {
    const id = undecided.shift();
    if (!id) return;
    const n = ++serial;
    const body =
      n % 2 === 0
        ? { reason: "not_actionable" }
        : n % 4 === 1
          ? { resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "suspension", durationSeconds: 3600, reason: "soak" } }
          : { resolutionCode: "SPAM_CONFIRMED" };
    const verb = "reason" in body ? "dismiss" : "resolve";
    void send("decision", `${sdk}/reports/${id}/${verb}`, { method: "POST", body: JSON.stringify(body) });
  },
  upsert: () => {
    const n = ++serial;
    void send("upsert", `${sdk}/projects/${demo.projectId}/identities/user/u-${n % 20_000}`, {
      method: "PUT",
      body: JSON.stringify({ display: { name: `User ${n % 20_000}` } }),
    });
  },
  listing: () => void send("listing", `${sdk}/reports?limit=25`, { method: "GET" }),
};

const timers: ReturnType<typeof setInterval>[] = [];
const t0 = Date.now();
const endAt = t0 + DURATION_S * 1000;
for (const [kind, rate] of Object.entries(RATES) as [Exclude<Kind, "dashboard">, number][]) {
  if (rate <= 0) continue;
  // Ticks of 10 ms (or the period when slower), each sending what the rate owes by then.
  const tickMs = Math.max(10, Math.min(1000 / rate, 100));
  let sent = 0;
  timers.push(
    setInterval(() => {
      const owed = Math.floor(((Date.now() - t0) / 1000) * rate) - sent;
      for (let i = 0; i < owed; i++) actions[kind]();
      sent += Math.max(0, owed);
    }, tickMs),
  );
}
const queueInput = encodeURIComponent(JSON.stringify({}));
timers.push(setInterval(() => void send("dashboard", `${baseUrl}/trpc/dashboard.queue?input=${queueInput}`, { method: "GET" }), 2_000));

// ---------------------------------------------------------------------------------------------
// Windows.

interface Window {
  endS: number;
  rssMb: number;
  dbMb: number;
  walMb: number;
  kinds: Record<Kind, { n: number; p50: number; p99: number }>;
  errors5xx: number;
  failed: number;
  lanes: Record<string, number>;
  oldestS: number;
  skipped: number;
  webhookN: number;
  webhookP50Ms: number;
  webhookMaxMs: number;
}
const windows: Window[] = [];
const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

function anonRssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const anon = /RssAnon:\s+(\d+) kB/.exec(status) ?? /VmRSS:\s+(\d+) kB/.exec(status);
    return anon ? Number(anon[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}
const fileMb = (p: string) => (statSync(p, { throwIfNoEntry: false })?.size ?? 0) / 1048576;
let pgSize: postgres.Sql | null = pgUrl ? postgres(pgUrl, { max: 1, onnotice: () => {} }) : null;

async function scrape(): Promise<{ lanes: Record<string, number>; oldestS: number; skipped: number }> {
  const lanes: Record<string, number> = {};
  let oldestS = 0;
  let skipped = 0;
  try {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    for (const m of text.matchAll(/^flagstaff_job_lane_depth\{lane="([^"]+)",status="pending"\} (\S+)$/gm)) lanes[m[1]!] = Number(m[2]);
    // A server without lanes (before issue 32): the whole queue.
    if (Object.keys(lanes).length === 0) lanes.all = Number(/^flagstaff_jobs\{status="pending"\} (\S+)$/m.exec(text)?.[1] ?? 0);
    oldestS = Number(/^flagstaff_jobs_oldest_pending_age_seconds (\S+)$/m.exec(text)?.[1] ?? 0);
    for (const m of text.matchAll(/^flagstaff_jobs_skipped_total\{[^}]*\} (\S+)$/gm)) skipped += Number(m[1]);
  } catch {
    // the scrape failed this window
  }
  return { lanes, oldestS, skipped };
}

let windowStart = Date.now();
let deliveredSeen = 0;
async function closeWindow(): Promise<void> {
  const now = Date.now();
  const mine = samples.filter((s) => s.at >= windowStart && s.at < now);
  const kinds = Object.fromEntries(
    KINDS.map((k) => {
      const ms = mine.filter((s) => s.kind === k && s.status > 0 && s.status < 500).map((s) => s.ms);
      return [k, { n: ms.length, p50: quantile(ms, 0.5), p99: quantile(ms, 0.99) }];
    }),
  ) as Window["kinds"];
  const hooks = deliveries.slice(deliveredSeen);
  deliveredSeen = deliveries.length;
  const { lanes, oldestS, skipped } = await scrape();
  let dbMb = fileMb(dbPath);
  if (pgSize) dbMb = Number((await pgSize`SELECT pg_database_size(current_database()) AS n`)[0]!.n) / 1048576;
  windows.push({
    endS: Math.round((now - t0) / 1000),
    rssMb: anonRssMb(server.pid),
    dbMb,
    walMb: pgSize ? NaN : fileMb(`${dbPath}-wal`),
    kinds,
    errors5xx: mine.filter((s) => s.status >= 500).length,
    failed: mine.filter((s) => s.status === 0).length,
    lanes,
    oldestS,
    skipped,
    webhookN: hooks.length,
    webhookP50Ms: quantile(hooks.map((h) => h.delayMs), 0.5),
    webhookMaxMs: hooks.length ? Math.max(...hooks.map((h) => h.delayMs)) : NaN,
  });
  windowStart = now;
  printWindow(windows.at(-1)!, windows.length === 1);
}

const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : "–");
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "–");
const LANE_SHORT: Record<string, string> = { "report.enrich": "enrich", "webhook.deliver": "hooks", "link.scan": "scan", "transparency.submit": "dsa" };
function printWindow(w: Window, header: boolean): void {
  if (header) {
    console.log(
      "| t (s) | RSS MB | DB MB | WAL MB | reports/s | report p50/p99 ms | decision p50/p99 | upsert p50/p99 | listing p50/p99 | dashboard p99 | 5xx | failed | jobs pending by lane | oldest job s | skipped | webhooks | webhook delay p50/max ms |",
    );
    console.log("|" + " --- |".repeat(17));
  }
  const k = w.kinds;
  const lanes = Object.entries(w.lanes)
    .filter(([, n]) => n > 0)
    .map(([l, n]) => `${LANE_SHORT[l] ?? l} ${n}`)
    .join(", ");
  console.log(
    `| ${w.endS} | ${f0(w.rssMb)} | ${f0(w.dbMb)} | ${f1(w.walMb)} | ${f0(k.report.n / WINDOW_S)} | ${f1(k.report.p50)} / ${f1(k.report.p99)} | ${f1(k.decision.p50)} / ${f1(k.decision.p99)} | ${f1(k.upsert.p50)} / ${f1(k.upsert.p99)} | ${f1(k.listing.p50)} / ${f1(k.listing.p99)} | ${f1(k.dashboard.p99)} | ${w.errors5xx} | ${w.failed} | ${lanes || "0"} | ${f0(w.oldestS)} | ${w.skipped} | ${w.webhookN} | ${f0(w.webhookP50Ms)} / ${f0(w.webhookMaxMs)} |`,
  );
}

log(`${ENGINE}, ${DURATION_S} s, windows of ${WINDOW_S} s: ${RATES.report} reports/s, ${RATES.decision} decisions/s, ${RATES.upsert} upserts/s, ${RATES.listing} listings/s, AI on (fake model, ${AI_LATENCY_MS} ms), ${cpus().length} CPUs`);
console.log(`\nSoak: ${ENGINE}, ${RATES.report} reports/s with AI on (model answering after ${AI_LATENCY_MS} ms), ${RATES.decision} decisions/s, ${RATES.upsert} upserts/s, ${RATES.listing} listings/s, a dashboard polling its queue; ${DURATION_S} s in windows of ${WINDOW_S} s\n`);
while (Date.now() < endAt) {
  await Bun.sleep(Math.min(WINDOW_S * 1000 - (Date.now() - windowStart), endAt - Date.now()));
  await closeWindow();
}
for (const t of timers) clearInterval(t);
// Requests still in flight finish (up to 30 s).
for (let i = 0; i < 300 && inFlight > 0; i++) await Bun.sleep(100);

// ---------------------------------------------------------------------------------------------
// Checks and verdict.

let missing = -1;
try {
  if (ENGINE === "sqlite") {
    const { Database } = await import("bun:sqlite");
    const db = new Database(dbPath, { readonly: true });
    const found = new Set<string>();
    for (let i = 0; i < acknowledged.length; i += 500) {
      const ids = acknowledged.slice(i, i + 500);
      for (const r of db.query(`SELECT id FROM reports WHERE id IN (${ids.map(() => "?").join(",")})`).all(...ids) as { id: string }[]) found.add(r.id);
    }
    db.close();
    missing = acknowledged.length - found.size;
  } else if (pgSize) {
    const found = new Set<string>();
    for (let i = 0; i < acknowledged.length; i += 5000) {
      for (const r of await pgSize<{ id: string }[]>`SELECT id FROM reports WHERE id IN ${pgSize(acknowledged.slice(i, i + 5000))}`) found.add(r.id);
    }
    missing = acknowledged.length - found.size;
  }
} catch (err) {
  log(`counting the acknowledged reports failed: ${String(err)}`);
}
await pgSize?.end();
pgSize = null;

const first = windows[0];
// p99 over the first and the last third of the run (a single window's p99 is its tenth-slowest
// request at 100 reports/s: too few to compare on a shared machine).
const reportMs = (fromS: number, toS: number) =>
  samples.filter((s) => s.kind === "report" && s.status > 0 && s.status < 500 && s.at >= t0 + fromS * 1000 && s.at < t0 + toS * 1000).map((s) => s.ms);
const reportP99 = { first: quantile(reportMs(0, DURATION_S / 3), 0.99), last: quantile(reportMs((2 * DURATION_S) / 3, DURATION_S), 0.99) };
const last = windows.at(-1);
const third = Math.max(1, Math.floor(windows.length / 3));
const pendingOf = (w: Window) => Object.values(w.lanes).reduce((a, b) => a + b, 0);
// Bounded: at the end no higher than the peak of the first two thirds (or small): not growing all along.
const earlierMax = Math.max(0, ...windows.slice(0, 2 * third).map(pendingOf));
const lastPending = last ? pendingOf(last) : 0;
const webhookMax = Math.max(0, ...windows.map((w) => (Number.isFinite(w.webhookMaxMs) ? w.webhookMaxMs : 0)));
const total5xx = windows.reduce((a, w) => a + w.errors5xx, 0);
const totalFailed = windows.reduce((a, w) => a + w.failed, 0);
const checks: [string, boolean, string][] = [
  [
    "p99 of reports, last third <= 1.25 x first third",
    reportP99.last <= 1.25 * reportP99.first,
    `${f1(reportP99.last)} ms against ${f1(reportP99.first)} ms (${(reportP99.last / reportP99.first).toFixed(2)}x; windows: first ${f1(first?.kinds.report.p99 ?? NaN)}, last ${f1(last?.kinds.report.p99 ?? NaN)})`,
  ],
  ["job backlog bounded (pending at the end <= the peak of the first two thirds, or < 1,000)", lastPending <= Math.max(earlierMax, 1000), `${lastPending} at the end, peak before ${earlierMax}`],
  ["webhook deliveries within 5 s throughout", webhookMax <= 5000, `slowest ${f0(webhookMax)} ms of ${deliveries.length}`],
  ["no 5xx, no failed connection", total5xx === 0 && totalFailed === 0, `${total5xx} 5xx, ${totalFailed} failed`],
  ["every acknowledged report stored", missing === 0, `${acknowledged.length} acknowledged, ${missing} missing`],
  ["the client kept its rates (never at its in-flight cap)", shedByClient === 0, `${shedByClient} requests not sent`],
];
console.log(`\nVerdict (${ENGINE}, ${DURATION_S} s, ${cpus().length} CPUs shared with whatever else runs):\n`);
for (const [name, ok, detail] of checks) console.log(`- ${ok ? "PASS" : "FAIL"} ${name}: ${detail}`);
if (serverErrors.length) console.log(`- server error lines: ${serverErrors.length} (first: ${serverErrors[0]!.slice(0, 300)})`);
const pass = checks.every(([, ok]) => ok);
console.log(`\n${pass ? "PASS" : "FAIL"}`);
if (args.json) writeFileSync(args.json, JSON.stringify({ engine: ENGINE, rates: RATES, aiLatencyMs: AI_LATENCY_MS, durationS: DURATION_S, windows, checks, pass }, null, 2));
await cleanup();
process.exit(pass ? 0 : 1);
