/**
 * `bun scripts/bench/job-claim.ts`: what one job claim costs against the size of the backlog,
 * on SQLite and on PostgreSQL (a throwaway cluster, scripts/pg-cluster.ts; skipped with
 * --no-postgres or when no PostgreSQL server programs are found). Printed as a markdown table.
 *
 *   bun scripts/bench/job-claim.ts [--sizes 100,10000,100000,1000000] [--claims 500] [--no-postgres]
 *
 * For each backlog size: a fresh migrated database with that many pending enrichment jobs (and
 * as many done ones beside them), then `--claims` claims of one job each through the domain's
 * own claimJobs (its transaction included), timed one by one; median and p99 per claim. Beside
 * it, the claim query before issue 32 (`(pending and due) or (running and lease ended)` ordered by
 * run_at, read only) at the same size, fewer times (it is slow by design), to show what changed.
 * And the claim of a webhook delivery (another lane) with the whole enrichment backlog waiting.
 */
import { parseArgs } from "node:util";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrateStore } from "../../src/db/migrate.ts";
import { openPostgresStore } from "../../src/db/store-pg.ts";
import { openSqliteStore, type Store } from "../../src/db/store.ts";
import { claimJobs } from "../../src/domain/plumbing/jobs.ts";
import { findPgBinDir, startPgCluster } from "../pg-cluster.ts";
import { fmtInt, markdownTable, quantile } from "./lib.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    sizes: { type: "string", default: "100,10000,100000,1000000" },
    claims: { type: "string", default: "500" },
    "no-postgres": { type: "boolean" },
  },
});
const SIZES = args.sizes!.split(",").map(Number);
const CLAIMS = Number(args.claims);
const log = (s: string) => console.error(`[job-claim ${new Date().toISOString().slice(11, 19)}] ${s}`);
const clock = { now: () => Date.now() };

interface Row {
  engine: string;
  backlog: number;
  claimMedianMs: number;
  claimP99Ms: number;
  webhookMedianMs: number;
  legacyMedianMs: number;
}

type Exec = (text: string, params?: unknown[]) => Promise<unknown[]>;

function executor(store: Store): Exec {
  const client = (store.writer as unknown as { $client: unknown }).$client;
  if (store.engine === "sqlite") {
    const db = client as { query(s: string): { all(...p: unknown[]): unknown[] } };
    return async (text, params = []) => db.query(text).all(...params);
  }
  const pg = client as { unsafe(s: string, p?: unknown[]): Promise<unknown[]> };
  return async (text, params = []) => {
    let k = 0;
    return [...(await pg.unsafe(text.replace(/\?/g, () => `$${++k}`), params))];
  };
}

/** `n` jobs of `kind` in `status`, made by the database itself (a series), run_at in the past. */
async function seed(store: Store, exec: Exec, kind: string, status: string, n: number, tag: string): Promise<void> {
  const now = Date.now() - 3_600_000;
  const series =
    store.engine === "sqlite"
      ? `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${n}) SELECT i FROM s`
      : `SELECT i FROM generate_series(1, ${n}) AS s(i)`;
  const cast = store.engine === "sqlite" ? "i" : "i::text";
  await exec(
    `INSERT INTO jobs (id, org_id, kind, payload, status, attempts, max_attempts, run_at, created_at, updated_at)
     SELECT '${tag}-' || ${cast}, NULL, '${kind}', '{}', '${status}', 0, 10, ${now} + i, ${now}, ${now} FROM (${series}) AS t`,
  );
  await exec(store.engine === "sqlite" ? "ANALYZE" : "ANALYZE jobs");
}

async function measure(engine: string, open: () => Promise<{ store: Store; close(): Promise<void> }>): Promise<Row[]> {
  const rows: Row[] = [];
  for (const size of SIZES) {
    const { store, close } = await open();
    try {
      await migrateStore(store);
      const exec = executor(store);
      const t0 = performance.now();
      await seed(store, exec, "report.enrich", "pending", size, "p");
      await seed(store, exec, "report.enrich", "done", size, "d");
      log(`${engine}: ${fmtInt(size)} pending + ${fmtInt(size)} done seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      const ctx = { store, db: store.db, clock };
      const claims = Math.min(CLAIMS, Math.floor(size / 2));
      // Warm-up (statements prepared, pages cached), then timed one by one.
      for (let i = 0; i < 20; i++) await claimJobs(ctx, { kind: "report.enrich", workerId: "bench", leaseMs: 60_000, limit: 1 });
      const times: number[] = [];
      for (let i = 0; i < claims; i++) {
        const s = performance.now();
        const got = await claimJobs(ctx, { kind: "report.enrich", workerId: "bench", leaseMs: 60_000, limit: 1 });
        times.push(performance.now() - s);
        if (got.length !== 1) throw new Error("the backlog ran out");
      }
      // A webhook delivery, its lane empty but for itself, with the whole enrichment backlog waiting.
      const webhook: number[] = [];
      for (let i = 0; i < 50; i++) {
        await seed(store, exec, "webhook.deliver", "pending", 1, `w${i}`);
        const s = performance.now();
        const got = await claimJobs(ctx, { kind: "webhook.deliver", workerId: "bench", leaseMs: 60_000, limit: 1 });
        webhook.push(performance.now() - s);
        if (got.length !== 1) throw new Error("no webhook claimed");
      }
      // The claim query before issue 32, read only.
      const legacy: number[] = [];
      const legacySql = `SELECT id FROM jobs WHERE (status = 'pending' AND run_at <= ?) OR (status = 'running' AND lease_until < ?) ORDER BY run_at LIMIT 1`;
      for (let i = 0; i < (size >= 100_000 ? 5 : 30); i++) {
        const s = performance.now();
        await exec(legacySql, [Date.now(), Date.now()]);
        legacy.push(performance.now() - s);
      }
      rows.push({
        engine,
        backlog: size,
        claimMedianMs: quantile(times, 0.5),
        claimP99Ms: quantile(times, 0.99),
        webhookMedianMs: quantile(webhook, 0.5),
        legacyMedianMs: quantile(legacy, 0.5),
      });
      log(`${engine} ${fmtInt(size)}: claim median ${quantile(times, 0.5).toFixed(3)} ms, p99 ${quantile(times, 0.99).toFixed(3)} ms; before: ${quantile(legacy, 0.5).toFixed(3)} ms`);
    } finally {
      await close();
    }
  }
  return rows;
}

const all: Row[] = [];
all.push(
  ...(await measure("SQLite", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagstaff-claim-"));
    const store = openSqliteStore(join(dir, "db.sqlite"));
    return {
      store,
      close: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  })),
);

let havePg = !args["no-postgres"];
if (havePg) {
  try {
    findPgBinDir();
  } catch {
    havePg = false;
    log("no PostgreSQL server programs found: PostgreSQL skipped");
  }
}
if (havePg) {
  const cluster = await startPgCluster();
  try {
    const admin = openPostgresStore({ url: cluster.url, poolSize: 2 });
    const adminExec = executor(admin);
    let n = 0;
    all.push(
      ...(await measure("PostgreSQL", async () => {
        const name = `claim_${++n}`;
        await adminExec(`CREATE DATABASE ${name}`);
        const url = new URL(cluster.url);
        url.pathname = `/${name}`;
        const store = openPostgresStore({ url: url.toString(), poolSize: 4 });
        return {
          store,
          close: async () => {
            await store.close();
            await adminExec(`DROP DATABASE ${name}`);
          },
        };
      })),
    );
    await admin.close();
  } finally {
    await cluster.stop();
  }
}

const ms = (x: number) => (x < 1 ? x.toFixed(3) : x.toFixed(2));
console.log(`\nJob claim against the backlog (${CLAIMS} claims of one job each per size, through claimJobs; ms per claim)\n`);
console.log(
  markdownTable(
    ["engine", "pending (and as many done)", "claim median", "claim p99", "webhook claim beside it, median", "claim query before issue 32, median"],
    all.map((r) => [r.engine, fmtInt(r.backlog), ms(r.claimMedianMs), ms(r.claimP99Ms), ms(r.webhookMedianMs), ms(r.legacyMedianMs)]),
  ),
);
for (const engine of new Set(all.map((r) => r.engine))) {
  const mine = all.filter((r) => r.engine === engine);
  const first = mine[0]!;
  const last = mine.at(-1)!;
  console.log(`${engine}: claim at ${fmtInt(last.backlog)} pending / at ${fmtInt(first.backlog)}: ${(last.claimMedianMs / first.claimMedianMs).toFixed(2)}x (goal: within 2x)`);
}
