/**
 * Identity listing and prefix search at 100,000 identities: seeds a fresh database through the
 * real migrations, starts `flagstaff serve`, and times GET /identities over HTTP (sequential
 * requests, so the figures are latencies, not throughput). Prints a markdown table.
 *
 *   bun scripts/bench/identities-search.ts [count]
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const COUNT = Number(process.argv[2] ?? 100_000);
const ROOT = join(import.meta.dir, "..", "..");
const dir = mkdtempSync(join(tmpdir(), "flagstaff-bench-ident-"));
const env = { ...process.env, FLAGSTAFF_DB: join(dir, "db.sqlite"), PORT: "0", HOST: "127.0.0.1", FLAGSTAFF_LOG_LEVEL: "warn", FLAGSTAFF_SHUTDOWN_DRAIN_MS: "0" };

async function cli(args: string[]): Promise<string> {
  const p = Bun.spawn([process.execPath, join(ROOT, "src/cli.ts"), ...args], { env, stdout: "pipe" });
  const out = await new Response(p.stdout).text();
  await p.exited;
  return out;
}

const init = JSON.parse(await cli(["init", "--json"])) as { projectId: string; secretKey: string };

// Seed straight into SQLite: the point is the read path at scale, not the write path.
const first = ["ada", "bob", "cyd", "dee", "eve", "fay", "gus", "hal", "ivy", "jon", "kai", "lea", "max", "ned", "oli", "pam"];
const db = new Database(env.FLAGSTAFF_DB);
const insert = db.prepare(
  "INSERT INTO identities (id, project_id, type, external_id, name, username, report_count, created_at, updated_at) VALUES (?, ?, 'user', ?, ?, ?, 0, ?, ?)",
);
const t0 = performance.now();
db.transaction(() => {
  for (let i = 0; i < COUNT; i++) {
    const name = `${first[i % first.length]} ${String(i).padStart(6, "0")}`;
    insert.run(Bun.randomUUIDv7(), init.projectId, `ext-${i}`, name, `${first[(i * 7) % first.length]}_${i}`, Date.now(), Date.now());
  }
})();
db.close();
const seedMs = performance.now() - t0;

const server = Bun.spawn([process.execPath, join(ROOT, "src/cli.ts"), "serve"], { env, stdout: "pipe" });
const reader = server.stdout.getReader();
let seen = "";
while (!/listening on (\S+)/.test(seen)) {
  const { value, done } = await reader.read();
  if (done) throw new Error("server exited");
  seen += new TextDecoder().decode(value);
}
const base = /listening on (\S+)/.exec(seen)![1]!;

async function timeQuery(query: string, n = 300): Promise<{ p50: number; p99: number; results: number }> {
  const times: number[] = [];
  let results = 0;
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fetch(`${base}/sdk/flagstaff/v1/projects/${init.projectId}/identities?${query}`, {
      headers: { authorization: `Bearer ${init.secretKey}` },
    });
    const body = (await res.json()) as { identities: unknown[] };
    times.push(performance.now() - t);
    results = body.identities.length;
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(n * 0.5)]!, p99: times[Math.floor(n * 0.99)]!, results };
}

const cases: [string, string][] = [
  ["first page (limit 50)", "limit=50"],
  ["page deep in the list (cursor)", ""],
  ["search external ID prefix `ext-4242`", "search=ext-4242"],
  ["search name prefix `eve 00`", "search=eve%2000"],
  ["search username prefix `ivy_`", "search=ivy_"],
  ["search that matches nothing", "search=zzz"],
  ["search one letter `e` (dense: walks ids)", "search=e"],
];
// A cursor from the middle of the list.
const mid = await fetch(`${base}/sdk/flagstaff/v1/projects/${init.projectId}/identities?limit=100`, { headers: { authorization: `Bearer ${init.secretKey}` } });
cases[1]![1] = `limit=50&cursor=${((await mid.json()) as { nextCursor: string }).nextCursor}`;

console.log(`\nIdentities: ${COUNT.toLocaleString()} seeded in ${(seedMs / 1000).toFixed(1)} s\n`);
console.log("| query | results | p50 ms | p99 ms |\n|---|---|---|---|");
for (const [name, q] of cases) {
  const r = await timeQuery(q);
  console.log(`| ${name} | ${r.results} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`);
}
server.kill("SIGTERM");
await server.exited;
rmSync(dir, { recursive: true, force: true });
