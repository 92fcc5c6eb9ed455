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
 */
import { Database } from "bun:sqlite";
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
  },
});
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

const env = {
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

async function main(): Promise<void> {
try {
  step(`seed ${SEED}; database ${dbPath}`);
  const demo = JSON.parse(await run([BUN, CLI, "init", "--json"], env)) as { orgSlug: string; projectId: string; secretKey: string; publishableKey: string };

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

  // -------------------------------------------------------------------------------------------
  // (b) Fuzz.
  step(`(b) ${FUZZ} malformed or random requests`);
  const ollama = await startServer([BUN, join(ROOT, "scripts", "fake-ollama.ts"), "--port", "0"], process.env as Record<string, string>);
  extra.push(ollama);
  await startOne();
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
  say(failed ? "CHAOS FAILED" : "chaos passed");
} finally {
  const s = server as Server | null;
  if (s) await s.kill();
  for (const e of extra) await e.kill();
  if (!failed && !process.env.CHAOS_KEEP) rmSync(dir, { recursive: true, force: true });
  else console.error(`kept ${dir} for inspection`);
}
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
