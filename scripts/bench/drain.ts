/**
 * `bun scripts/bench/drain.ts`: report intake while a large enrichment backlog drains (issue 32:
 * once a slow model turned fast, draining 26,000-30,000 jobs cut intake to 0.29 of its pace).
 *
 *   bun scripts/bench/drain.ts [--backlog 30000] [--connections 16] [--seconds 15] [--ai-parallel 2] [--engine sqlite|postgres] [--source ../checkout]
 *
 * 1. A server with AI on against the fake Ollama answering after 1 s, `--ai-parallel` (2) at once
 *    and the rest waiting their turn, like a small model on one GPU: reports are filed with
 *    `--connections` in flight until `--backlog` enrichment jobs wait; the pace of the last
 *    `--seconds` of that is the intake "with a backlog that does not drain".
 * 2. The model turns fast (answers at once, as many at once as before): the workers drain the backlog while the same load
 *    goes on for `--seconds`; its pace against step 1's is the figure (goal: >= 0.8). Meanwhile a
 *    suspension is made and the time its enforcement_action.created webhook takes to arrive is
 *    measured (goal: within 5 s).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { startFakeOllama } from "../fake-ollama.ts";
import { newDatabase, startPgCluster, type PgCluster } from "../pg-cluster.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    backlog: { type: "string", default: "30000" },
    connections: { type: "string", default: "16" },
    seconds: { type: "string", default: "15" },
    engine: { type: "string", default: "sqlite" },
    source: { type: "string" },
    "ai-parallel": { type: "string", default: "2" },
  },
});
const BACKLOG = Number(args.backlog);
const CONNECTIONS = Number(args.connections);
const SECONDS = Number(args.seconds);
const ENGINE = args.engine === "postgres" || args.engine === "pg" ? "postgres" : "sqlite";
const ROOT = join(import.meta.dir, "..", "..");
const log = (s: string) => console.error(`[drain ${new Date().toISOString().slice(11, 19)}] ${s}`);

const fake = startFakeOllama({ parallel: Number(args["ai-parallel"]) });
let latencyMs = 1000;
fake.setDefault(() => ({ delayMs: latencyMs }));
const webhooks: { at: number; type: string; actionId?: string }[] = [];
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = JSON.parse(await req.text()) as { type: string; data: { action?: { id: string } } };
    webhooks.push({ at: Date.now(), type: body.type, actionId: body.data.action?.id });
    return new Response("ok");
  },
});

const dir = mkdtempSync(join(tmpdir(), "flagstaff-drain-"));
let cluster: PgCluster | null = null;
let pgUrl: string | null = null;
if (ENGINE === "postgres") {
  cluster = await startPgCluster();
  pgUrl = await newDatabase(cluster.url, "drain");
}
const cmd = [process.execPath, join(args.source ? resolve(args.source) : ROOT, "src/cli.ts")];
const env: Record<string, string> = {
  FLAGSTAFF_SHUTDOWN_DRAIN_MS: "0",
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? dir,
  FLAGSTAFF_DB: join(dir, "flagstaff.db"),
  ...(pgUrl ? { FLAGSTAFF_DATABASE_URL: pgUrl } : {}),
  PORT: "0",
  HOST: "127.0.0.1",
  FLAGSTAFF_LOG_LEVEL: "warn",
  OLLAMA_HOST: fake.url,
  FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
  FLAGSTAFF_REPORT_RATE_LIMIT: "100000000",
  FLAGSTAFF_ENRICH_BACKLOG_MAX: String(BACKLOG * 10), // nothing skipped: the whole backlog drains
};
const init = Bun.spawnSync([...cmd, "init", "--json"], { env, cwd: dir });
if (init.exitCode !== 0) throw new Error(`init failed: ${init.stderr.toString()}`);
const demo = JSON.parse(init.stdout.toString()) as { orgSlug: string; projectId: string; secretKey: string };
const server = Bun.spawn([...cmd, "serve"], { env, cwd: dir, stdout: "pipe", stderr: "inherit" });
const baseUrl = await new Promise<string>((ok) => {
  const reader = server.stdout.getReader();
  let seen = "";
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
      const m = /Flagstaff listening on (http:\/\/\S+)/.exec(seen);
      if (m?.[1]) ok(m[1]);
    }
  })();
});
async function cleanup(): Promise<void> {
  server.kill("SIGKILL");
  await server.exited;
  await receiver.stop(true);
  await fake.stop();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void cleanup().then(() => process.exit(130)));

const headers = { authorization: `Bearer ${demo.secretKey}`, "content-type": "application/json" };
const org = `${baseUrl}/api/v1/organizations/${demo.orgSlug}`;
await fetch(`${org}/projects/${demo.projectId}/settings`, { method: "PATCH", headers, body: JSON.stringify({ aiEnabled: true }) });
await fetch(`${org}/webhook-endpoints`, { method: "POST", headers, body: JSON.stringify({ url: `http://127.0.0.1:${receiver.port}/hook` }) });

/** Report creations answered 201, with when. */
const filed: number[] = [];
let stopLoad = false;
let n = 0;
const load = Promise.all(
  Array.from({ length: CONNECTIONS }, async () => {
    while (!stopLoad) {
      const i = ++n;
      const r = await fetch(`${baseUrl}/sdk/flagstaff/v1/projects/${demo.projectId}/reports`, {
        method: "POST",
        headers,
        body: JSON.stringify({ subject: { type: "user", externalId: `u-${i % 5000}` }, target: { contentType: "post", contentExternalId: `p-${i}`, content: "buy cheap followers now" }, reason: "spam" }),
      });
      await r.arrayBuffer();
      if (r.status === 201) filed.push(Date.now());
    }
  }),
);
const pace = (from: number, to: number) => filed.filter((t) => t >= from && t < to).length / ((to - from) / 1000);

async function pendingEnrich(): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const lane = /^flagstaff_job_lane_depth\{lane="report.enrich",status="pending"\} (\S+)$/m.exec(text) ?? /^flagstaff_jobs\{status="pending"\} (\S+)$/m.exec(text);
  return Number(lane?.[1] ?? 0);
}

// 1. The backlog builds up behind a slow model.
log(`${ENGINE}: filing reports with ${CONNECTIONS} connections until ${BACKLOG} enrichment jobs wait (model: 1 s an answer)`);
while (filed.length < BACKLOG) await Bun.sleep(200);
const slowEnd = Date.now();
// The pace once the load settled: the last SECONDS of the build-up, less its first second.
const slowPace = pace(Math.max(filed[0] ?? slowEnd, slowEnd - SECONDS * 1000) + 1000, slowEnd);
const before = await pendingEnrich();
log(`backlog ${before}; intake over the last ${SECONDS} s: ${slowPace.toFixed(0)} reports/s`);

// 2. The model turns fast: the backlog drains while the load goes on.
latencyMs = 0;
const drainStart = Date.now();
await Bun.sleep(2000);
const sent = Date.now();
const action = (await (
  await fetch(`${org}/projects/${demo.projectId}/enforcement-actions`, {
    method: "POST",
    headers,
    body: JSON.stringify({ kind: "suspension", reason: "harassment", durationSeconds: 3600, identity: { type: "user", externalId: "u-1" } }),
  })
).json()) as { action: { id: string } };
await Bun.sleep(SECONDS * 1000 - 2000);
const drainEnd = Date.now();
const drainPace = pace(drainStart, drainEnd);
const after = await pendingEnrich();
stopLoad = true;
await load;
const hook = webhooks.find((w) => w.type === "enforcement_action.created" && w.actionId === action.action.id);

console.log(`\nIntake while an enrichment backlog drains (${ENGINE}, ${CONNECTIONS} connections, 2 shared cores)\n`);
console.log(`| | reports/s | enrichment jobs pending |`);
console.log(`| --- | --- | --- |`);
console.log(`| backlog building, model slow (last ${SECONDS} s) | ${slowPace.toFixed(0)} | ${before} |`);
const ranMeanwhile = before + filed.filter((t) => t >= slowEnd && t < drainEnd).length - after;
console.log(`| backlog draining, model fast (${SECONDS} s) | ${drainPace.toFixed(0)} | ${after} (about ${ranMeanwhile} enrichment jobs ran, ${(ranMeanwhile / ((drainEnd - slowEnd) / 1000)).toFixed(0)}/s) |`);
console.log(`\nintake while draining / before: ${(drainPace / slowPace).toFixed(2)} (goal: >= 0.8)`);
console.log(`enforcement_action.created webhook: ${hook ? `${hook.at - sent} ms` : "not arrived"} (goal: within 5 s)`);
await cleanup();
process.exit(0);
