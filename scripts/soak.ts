/**
 * `bun run soak`: a long mixed workload against a real server, printing the drift every window
 * and a verdict at the end (issues 32 and 44). Nothing is asserted while it runs: it measures.
 *
 *   bun run soak [--duration 180] [--window 10] [--rate 100] [--decisions <rate/10>] [--upserts 20]
 *                [--listings 20] [--ai-latency-ms 200] [--ai-parallel 2] [--repeat-share 0.333]
 *                [--emergency-share 0.02] [--catch-up-minutes 10] [--backlog-max N] [--engine sqlite|postgres]
 *                [--binary dist/flagstaff] [--json out.json] [--source ../other-checkout] [--cpu-prof dir]
 *
 * Defaults: 3 minutes (a developer's run); `--duration 900` is the release run. What runs:
 * - a server (`bun src/cli.ts serve`, or `--binary`) on a fresh database: SQLite in a temporary
 *   folder, or with `--engine postgres` a throwaway cluster (scripts/pg-cluster.ts);
 * - AI enrichment on, against the fake Ollama (scripts/fake-ollama.ts) behaving like a small
 *   model on one GPU: `--ai-latency-ms` (200) an answer, `--ai-parallel` (2) answered at once, the
 *   rest waiting their turn: at most parallel / latency answers a second (10 by default); a
 *   webhook receiver on loopback, subscribed to report.decided and the enforcement events;
 * - open-loop load, each kind at its own steady rate whatever the answers take: `--rate` reports
 *   a second, `--decisions` decisions (10 % of the rate unless given: resolve, one in four with a
 *   suspension, or dismiss, of reports filed earlier), `--upserts` identity upserts, `--listings`
 *   GET /reports, and a dashboard polling its queue (tRPC) every 2 s;
 * - the reports' mix (issue 44): `--repeat-share` of them (a third) are about content already
 *   reported, brigades of 10 to 50 reports on one earlier post with its content (up to three
 *   brigades at a time); the others are each about a new post with a text of its own, and
 *   `--emergency-share` of those (2 %) give a reason of the emergency class (child_safety, a
 *   CRITICAL category), the most urgent enrichment; every report has the same description;
 * - every window: RSS (anonymous) of the server, database and WAL size (PostgreSQL: the
 *   database's size), p50/p99 per request kind, 5xx and failures, jobs by lane (pending) and the
 *   oldest due job (from /metrics), skipped enrichments, enrichments by the model and reused,
 *   webhook delivery delay (receipt time minus the event's timestamp), p50 and max.
 * After the load: the model's capacity against what arrived (from /metrics), then up to
 * `--catch-up-minutes` for the skipped enrichments to be caught up (how long it took, or what is
 * left). At the end: every acknowledged report is looked for in the database, and the verdict
 * checks the goals of issues 32 and 44: p99 of reports in the last third of the run <= 1.25 x the
 * first third's; the job backlog bounded; webhook deliveries within 5 s throughout; no 5xx; no
 * acknowledged report missing; the most urgent class analysed within 10 s at p99; at least 95 %
 * of distinct contents analysed once caught up; the skipped work caught up in the time given.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir, cpus } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { startFakeOllama } from "./fake-ollama.ts";
import { newDatabase, startPgCluster, type PgCluster } from "./pg-cluster.ts";
import { quantile } from "./bench/lib.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    duration: { type: "string", default: "180" },
    window: { type: "string", default: "10" },
    rate: { type: "string", default: "100" },
    decisions: { type: "string" },
    upserts: { type: "string", default: "20" },
    listings: { type: "string", default: "20" },
    "ai-latency-ms": { type: "string", default: "200" },
    "ai-parallel": { type: "string", default: "2" },
    "repeat-share": { type: "string", default: String(1 / 3) },
    "emergency-share": { type: "string", default: "0.02" },
    "catch-up-minutes": { type: "string", default: "10" },
    /** The server's FLAGSTAFF_ENRICH_BACKLOG_MAX (its default, 10,000, unless given): a short run reaches a lower one. */
    "backlog-max": { type: "string" },
    engine: { type: "string", default: "sqlite" },
    binary: { type: "string" },
    /** Another checkout's source (its src/cli.ts), to measure a version before a change. */
    source: { type: "string" },
    json: { type: "string" },
    /** A folder for the server's CPU profile (Bun's --cpu-prof, written when it stops): where its time went. Source runs only. */
    "cpu-prof": { type: "string" },
    "max-in-flight": { type: "string", default: "512" },
  },
});
const DURATION_S = Number(args.duration);
const WINDOW_S = Number(args.window);
const RATES = {
  report: Number(args.rate),
  decision: args.decisions === undefined ? Number(args.rate) / 10 : Number(args.decisions),
  upsert: Number(args.upserts),
  listing: Number(args.listings),
};
const AI_LATENCY_MS = Number(args["ai-latency-ms"]);
/** The server's enrichment backlog bound (FLAGSTAFF_ENRICH_BACKLOG_MAX; its default unless given). */
const ENRICH_BOUND = Number(args["backlog-max"] ?? 10_000);
const AI_PARALLEL = Number(args["ai-parallel"]);
const REPEAT_SHARE = Number(args["repeat-share"]);
const EMERGENCY_SHARE = Number(args["emergency-share"]);
const CATCH_UP_MINUTES = Number(args["catch-up-minutes"]);
const ENGINE = args.engine === "postgres" || args.engine === "pg" ? "postgres" : "sqlite";
const MAX_IN_FLIGHT = Number(args["max-in-flight"]);
const ROOT = join(import.meta.dir, "..");
const log = (s: string) => console.error(`[soak ${new Date().toISOString().slice(11, 19)}] ${s}`);

// ---------------------------------------------------------------------------------------------
// Set-up: model, receiver, database, server.

// A small model on one GPU: so long an answer, so many at once, the rest waiting their turn.
const fake = startFakeOllama({ delayMs: AI_LATENCY_MS, parallel: AI_PARALLEL });
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
  pgUrl = await newDatabase(cluster.url, "soak");
}

if (args["cpu-prof"] && args.binary) throw new Error("--cpu-prof profiles a source run (bun src/cli.ts), not --binary");
const profileFlags = args["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${resolve(args["cpu-prof"])}`] : [];
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
  ...(args["backlog-max"] ? { FLAGSTAFF_ENRICH_BACKLOG_MAX: args["backlog-max"] } : {}),
};

const init = Bun.spawnSync([...cmd, "init", "--json"], { env, cwd: dir });
if (init.exitCode !== 0) throw new Error(`init failed: ${init.stderr.toString()}`);
const demo = JSON.parse(init.stdout.toString()) as { orgSlug: string; projectId: string; secretKey: string };

const server = Bun.spawn([...cmd.slice(0, 1), ...profileFlags, ...cmd.slice(1), "serve"], { env, cwd: dir, stdout: "pipe", stderr: "pipe" });
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
/** The emergency class: a category whose severity hint is CRITICAL (the default categories' child_safety). */
const EMERGENCY_REASON = "child_safety";
const WORDS = ["buy", "cheap", "followers", "now", "idiot", "link", "free", "crypto", "meet", "kill", "scam", "hello", "great", "post"];
/** A post's text: twelve words, and its number (every new post's content is its own). */
const text = (n: number) => `${Array.from({ length: 12 }, (_, i) => WORDS[(n * 7 + i * 3) % WORDS.length]).join(" ")} #${n}`;

/** The posts reported so far (brigades pick one), and the brigades under way. */
const posts: { post: string; content: string; reason: string }[] = [];
const brigades: { post: string; content: string; reason: string; left: number }[] = [];
const mixCounts = { new: 0, brigade: 0, emergency: 0 };
/** Each acknowledged report's kind in the mix. */
const reportKinds = new Map<string, "new" | "brigade" | "emergency">();

/** The next report of the mix: a brigade's (a post reported before, 10 to 50 reports) or a new post's. */
function nextReport(n: number): { kind: "new" | "brigade" | "emergency"; post: string; content: string; reason: string } {
  if (posts.length > 0 && Math.random() < REPEAT_SHARE) {
    if (brigades.length < 3 && (brigades.length === 0 || Math.random() < 0.05)) {
      // A new brigade on a recent post (among the last 1,000 reported).
      const p = posts[posts.length - 1 - Math.floor(Math.random() * Math.min(1000, posts.length))]!;
      brigades.push({ ...p, left: 10 + Math.floor(Math.random() * 41) });
    }
    const i = Math.floor(Math.random() * brigades.length);
    const b = brigades[i]!;
    if (--b.left <= 0) brigades.splice(i, 1);
    return { kind: "brigade", post: b.post, content: b.content, reason: b.reason };
  }
  const emergency = Math.random() < EMERGENCY_SHARE;
  const p = { post: `p-${n}`, content: text(n), reason: emergency ? EMERGENCY_REASON : REASONS[n % REASONS.length]! };
  posts.push(p);
  return { kind: emergency ? "emergency" : "new", ...p };
}

const actions: Record<Exclude<Kind, "dashboard">, () => void> = {
  report: () => {
    const n = ++serial;
    const r = nextReport(n);
    mixCounts[r.kind]++;
    void send(
      "report",
      `${sdk}/projects/${demo.projectId}/reports`,
      {
        method: "POST",
        body: JSON.stringify({
          subject: { type: "user", externalId: `u-${n % 20_000}` },
          reporter: { type: "user", externalId: `r-${n % 50_000}` },
          target: { contentType: "post", contentExternalId: r.post, content: r.content },
          reason: r.reason,
          description: "soak report",
        }),
      },
      (body) => {
        const id = (body as { report: { id: string } }).report.id;
        acknowledged.push(id);
        undecided.push(id);
        reportKinds.set(id, r.kind);
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
  /** Enrichments so far: the model answered, an earlier analysis reused, a skipped one caught up. */
  enriched: { analysed: number; reused: number; caughtUp: number };
  webhookN: number;
  webhookP50Ms: number;
  webhookMaxMs: number;
}
const windows: Window[] = [];

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

/** A gauge or counter of /metrics without labels but those given (NaN when absent). */
const metricOf = (text: string, name: string) => Number(new RegExp(`^${name.replace(/[{}]/g, "\\$&")} (\\S+)$`, "m").exec(text)?.[1] ?? NaN);

async function scrape(): Promise<{ lanes: Record<string, number>; oldestS: number; skipped: number; enriched: Window["enriched"] }> {
  const lanes: Record<string, number> = {};
  let oldestS = 0;
  let skipped = 0;
  const enriched = { analysed: NaN, reused: NaN, caughtUp: NaN };
  try {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    enriched.analysed = metricOf(text, 'flagstaff_ai_enrichments_total{outcome="analysed"}');
    enriched.reused = metricOf(text, 'flagstaff_ai_enrichments_total{outcome="reused"}');
    enriched.caughtUp = metricOf(text, 'flagstaff_ai_enrichments_total{outcome="caught_up"}');
    for (const m of text.matchAll(/^flagstaff_job_lane_depth\{lane="([^"]+)",status="pending"\} (\S+)$/gm)) lanes[m[1]!] = Number(m[2]);
    // A server without lanes (before issue 32): the whole queue.
    if (Object.keys(lanes).length === 0) lanes.all = Number(/^flagstaff_jobs\{status="pending"\} (\S+)$/m.exec(text)?.[1] ?? 0);
    oldestS = Number(/^flagstaff_jobs_oldest_pending_age_seconds (\S+)$/m.exec(text)?.[1] ?? 0);
    for (const m of text.matchAll(/^flagstaff_jobs_skipped_total\{[^}]*\} (\S+)$/gm)) skipped += Number(m[1]);
  } catch {
    // the scrape failed this window
  }
  return { lanes, oldestS, skipped, enriched };
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
  const { lanes, oldestS, skipped, enriched } = await scrape();
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
    enriched,
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
      "| t (s) | RSS MB | DB MB | WAL MB | reports/s | report p50/p99 ms | decision p50/p99 | upsert p50/p99 | listing p50/p99 | dashboard p99 | 5xx | failed | jobs pending by lane | oldest job s | skipped | enriched: model / reused / caught up | webhooks | webhook delay p50/max ms |",
    );
    console.log("|" + " --- |".repeat(18));
  }
  const k = w.kinds;
  const lanes = Object.entries(w.lanes)
    .filter(([, n]) => n > 0)
    .map(([l, n]) => `${LANE_SHORT[l] ?? l} ${n}`)
    .join(", ");
  console.log(
    `| ${w.endS} | ${f0(w.rssMb)} | ${f0(w.dbMb)} | ${f1(w.walMb)} | ${f0(k.report.n / WINDOW_S)} | ${f1(k.report.p50)} / ${f1(k.report.p99)} | ${f1(k.decision.p50)} / ${f1(k.decision.p99)} | ${f1(k.upsert.p50)} / ${f1(k.upsert.p99)} | ${f1(k.listing.p50)} / ${f1(k.listing.p99)} | ${f1(k.dashboard.p99)} | ${w.errors5xx} | ${w.failed} | ${lanes || "0"} | ${f0(w.oldestS)} | ${w.skipped} | ${f0(w.enriched.analysed)} / ${f0(w.enriched.reused)} / ${f0(w.enriched.caughtUp)} | ${w.webhookN} | ${f0(w.webhookP50Ms)} / ${f0(w.webhookMaxMs)} |`,
  );
}

const MODEL = `fake model: ${AI_LATENCY_MS} ms an answer, ${AI_PARALLEL > 0 ? `${AI_PARALLEL} at once` : "any number at once"}`;
const MIX = `${Math.round(REPEAT_SHARE * 100)} % of reports in brigades of 10-50 on a post reported before, ${Math.round(EMERGENCY_SHARE * 1000) / 10} % of the others of the emergency class`;
log(`${ENGINE}, ${DURATION_S} s, windows of ${WINDOW_S} s: ${RATES.report} reports/s, ${RATES.decision} decisions/s, ${RATES.upsert} upserts/s, ${RATES.listing} listings/s, AI on (${MODEL}), ${cpus().length} CPUs`);
console.log(`\nSoak: ${ENGINE}, ${RATES.report} reports/s with AI on (${MODEL}; ${MIX}), ${RATES.decision} decisions/s, ${RATES.upsert} upserts/s, ${RATES.listing} listings/s, a dashboard polling its queue; ${DURATION_S} s in windows of ${WINDOW_S} s\n`);
while (Date.now() < endAt) {
  await Bun.sleep(Math.min(WINDOW_S * 1000 - (Date.now() - windowStart), endAt - Date.now()));
  await closeWindow();
}
for (const t of timers) clearInterval(t);
// Requests still in flight finish (up to 30 s).
for (let i = 0; i < 300 && inFlight > 0; i++) await Bun.sleep(100);

// ---------------------------------------------------------------------------------------------
// The model against what arrived (issue 44): its capacity, what it analysed, the catch-up.

/** Rows of a query on the server's database (a read-only connection of SQLite's file, or PostgreSQL). */
let sqliteReader: { query(s: string): { all(...p: unknown[]): unknown[] }; close(): void } | null = null;
async function rows<T>(text: string, params: unknown[] = []): Promise<T[]> {
  if (ENGINE === "sqlite") {
    if (!sqliteReader) {
      const { Database } = await import("bun:sqlite");
      sqliteReader = new Database(dbPath, { readonly: true });
    }
    return sqliteReader.query(text).all(...params) as T[];
  }
  let k = 0;
  return (await pgSize!.unsafe(text.replace(/\?/g, () => `$${++k}`), params as never[])) as unknown as T[];
}

interface Shares {
  reports: number;
  withAnalysis: number;
  contents: number;
  contentsAnalysed: number;
}
/** Of the reports that asked for enrichment: how many carry an analysis, and of their distinct contents. */
async function shares(): Promise<Shares> {
  const [r] = await rows<Record<string, number | string>>(
    "SELECT count(*) AS reports, count(ai_analyzed_at) AS with_analysis, count(DISTINCT content_key) AS contents, count(DISTINCT CASE WHEN ai_analyzed_at IS NOT NULL THEN content_key END) AS contents_analysed FROM reports WHERE content_key IS NOT NULL",
  );
  return { reports: Number(r?.reports ?? 0), withAnalysis: Number(r?.with_analysis ?? 0), contents: Number(r?.contents ?? 0), contentsAnalysed: Number(r?.contents_analysed ?? 0) };
}
/** Enrichment jobs still to do: waiting, running, or skipped and waiting to be caught up (and expired ones). */
async function enrichmentLeft(): Promise<{ waiting: number; skipped: number; expired: number }> {
  const out = { waiting: 0, skipped: 0, expired: 0 };
  for (const r of await rows<{ status: string; n: number | string }>("SELECT status, count(*) AS n FROM jobs WHERE kind = 'report.enrich' AND status IN ('pending', 'running', 'skipped', 'expired') GROUP BY status")) {
    if (r.status === "skipped") out.skipped += Number(r.n);
    else if (r.status === "expired") out.expired += Number(r.n);
    else out.waiting += Number(r.n);
  }
  return out;
}
/** Seconds from each emergency-class report's filing to its analysis (Infinity: none yet). */
async function emergencyDelays(): Promise<number[]> {
  const ids = [...reportKinds].filter(([, kind]) => kind === "emergency").map(([id]) => id);
  const delays: number[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    const part = ids.slice(i, i + 500);
    for (const r of await rows<{ created_us: number | string; ai_analyzed_at: number | string | null }>(`SELECT created_us, ai_analyzed_at FROM reports WHERE id IN (${part.map(() => "?").join(",")})`, part)) {
      delays.push(r.ai_analyzed_at === null ? Infinity : (Number(r.ai_analyzed_at) - Number(r.created_us) / 1000) / 1000);
    }
  }
  return delays;
}
const pct = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)} %` : "–");

const atLoadEnd = await shares();
const urgentAtLoadEnd = await emergencyDelays();
const loadMetrics = await (await fetch(`${baseUrl}/metrics`)).text().catch(() => "");
const capacity = {
  perSecond: metricOf(loadMetrics, "flagstaff_ai_capacity_per_second"),
  answerSeconds: metricOf(loadMetrics, "flagstaff_ai_answer_seconds"),
  answersPerSecond: metricOf(loadMetrics, "flagstaff_ai_answers_per_second"),
  arrivalsPerSecond: acknowledged.length / DURATION_S,
};
console.log(
  `\nThe model (as /metrics measured it at the end of the load): about ${f1(capacity.perSecond)} answers/s (${AI_PARALLEL} at a time, ${capacity.answerSeconds.toFixed(3)} s each; ${f1(capacity.answersPerSecond)}/s in the last minute); ${f1(capacity.arrivalsPerSecond)} reports/s arrived (${mixCounts.new} on new posts, ${mixCounts.brigade} in brigades, ${mixCounts.emergency} of the emergency class).`,
);
console.log(
  `At the end of the load: ${pct(atLoadEnd.contentsAnalysed, atLoadEnd.contents)} of ${atLoadEnd.contents} distinct contents analysed, ${pct(atLoadEnd.withAnalysis, atLoadEnd.reports)} of ${atLoadEnd.reports} reports carrying an analysis.`,
);

// Catching up: the load has stopped; how long until no enrichment waits or is skipped?
const catchUpStarted = Date.now();
let caughtUpS: number | null = null;
let left = await enrichmentLeft();
log(`catching up: ${left.waiting} enrichments waiting, ${left.skipped} skipped, for up to ${CATCH_UP_MINUTES} min`);
while (Date.now() - catchUpStarted < CATCH_UP_MINUTES * 60_000) {
  if (left.waiting === 0 && left.skipped === 0) {
    caughtUpS = (Date.now() - catchUpStarted) / 1000;
    break;
  }
  await Bun.sleep(5_000);
  left = await enrichmentLeft();
  if ((Date.now() - catchUpStarted) % 60_000 < 5_000) log(`catching up: ${left.waiting} waiting, ${left.skipped} skipped`);
}
const afterCatchUp = await shares();
const urgent = await emergencyDelays();
/** Reports given an analysis a second since the load stopped. */
const catchUpPace = (afterCatchUp.withAnalysis - atLoadEnd.withAnalysis) / Math.max(1, (Date.now() - catchUpStarted) / 1000);
console.log(
  caughtUpS !== null
    ? `Caught up ${f1(caughtUpS / 60)} min after the load stopped: ${pct(afterCatchUp.contentsAnalysed, afterCatchUp.contents)} of distinct contents analysed, ${pct(afterCatchUp.withAnalysis, afterCatchUp.reports)} of reports carrying an analysis.`
    : `Not caught up ${CATCH_UP_MINUTES} min after the load stopped: ${left.waiting} waiting, ${left.skipped} skipped (${left.expired} expired); ${pct(afterCatchUp.contentsAnalysed, afterCatchUp.contents)} of distinct contents analysed, ${pct(afterCatchUp.withAnalysis, afterCatchUp.reports)} of reports; at the pace of the catch-up (${f1(catchUpPace)} reports/s) the rest would take about ${f0((left.waiting + left.skipped) / Math.max(catchUpPace, 0.001) / 60)} min more.`,
);

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
(sqliteReader as { close(): void } | null)?.close();

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
  // The enrichment lane's bound is the most it holds by design: a lane sitting at it is bounded,
  // whatever it peaked at before (10,000 at the end after 9,996 is not growth).
  [
    "job backlog bounded (pending at the end <= the peak of the first two thirds, the enrichment bound, or < 1,000)",
    lastPending <= Math.max(earlierMax, ENRICH_BOUND, 1000),
    `${lastPending} at the end, peak before ${earlierMax}, the enrichment bound ${ENRICH_BOUND}`,
  ],
  ["webhook deliveries within 5 s throughout", webhookMax <= 5000, `slowest ${f0(webhookMax)} ms of ${deliveries.length}`],
  ["no 5xx, no failed connection", total5xx === 0 && totalFailed === 0, `${total5xx} 5xx, ${totalFailed} failed`],
  ["every acknowledged report stored", missing === 0, `${acknowledged.length} acknowledged, ${missing} missing`],
  [
    "the most urgent class analysed within 10 s at p99 (during the load)",
    urgentAtLoadEnd.length > 0 && quantile(urgentAtLoadEnd, 0.99) <= 10,
    `p99 ${f1(quantile(urgentAtLoadEnd, 0.99))} s, p50 ${f1(quantile(urgentAtLoadEnd, 0.5))} s, of ${urgentAtLoadEnd.length} (${urgentAtLoadEnd.filter((d) => !Number.isFinite(d)).length} not analysed by the end of the load; after the catch-up p99 ${f1(quantile(urgent, 0.99))} s)`,
  ],
  [
    "at least 95 % of distinct contents analysed (once caught up)",
    afterCatchUp.contents > 0 && afterCatchUp.contentsAnalysed / afterCatchUp.contents >= 0.95,
    `${pct(afterCatchUp.contentsAnalysed, afterCatchUp.contents)} of ${afterCatchUp.contents} (at the end of the load ${pct(atLoadEnd.contentsAnalysed, atLoadEnd.contents)}); reports carrying an analysis ${pct(afterCatchUp.withAnalysis, afterCatchUp.reports)} (at the end of the load ${pct(atLoadEnd.withAnalysis, atLoadEnd.reports)})`,
  ],
  [
    `skipped work caught up within ${CATCH_UP_MINUTES} min of the load's end`,
    caughtUpS !== null,
    caughtUpS !== null ? `in ${f1(caughtUpS / 60)} min` : `${left.waiting} waiting and ${left.skipped} skipped after ${CATCH_UP_MINUTES} min`,
  ],
  ["the client kept its rates (never at its in-flight cap)", shedByClient === 0, `${shedByClient} requests not sent`],
];
console.log(`\nVerdict (${ENGINE}, ${DURATION_S} s, ${cpus().length} CPUs shared with whatever else runs):\n`);
for (const [name, ok, detail] of checks) console.log(`- ${ok ? "PASS" : "FAIL"} ${name}: ${detail}`);
if (serverErrors.length) console.log(`- server error lines: ${serverErrors.length} (first: ${serverErrors[0]!.slice(0, 300)})`);
const pass = checks.every(([, ok]) => ok);
console.log(`\n${pass ? "PASS" : "FAIL"}`);
if (args.json) {
  const ai = { latencyMs: AI_LATENCY_MS, parallel: AI_PARALLEL, repeatShare: REPEAT_SHARE, emergencyShare: EMERGENCY_SHARE, mix: mixCounts, capacity, atLoadEnd, afterCatchUp, caughtUpS };
  writeFileSync(args.json, JSON.stringify({ engine: ENGINE, rates: RATES, aiLatencyMs: AI_LATENCY_MS, durationS: DURATION_S, ai, windows, checks, pass }, null, 2));
}
await cleanup();
process.exit(pass ? 0 : 1);
