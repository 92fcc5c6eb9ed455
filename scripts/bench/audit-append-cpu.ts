/**
 * Where the audit chain's PostgreSQL CPU goes (issue 29, docs/audit.md "Cost"): the database's CPU
 * per transaction of 3 audit events written as before the chain (plain INSERTs, what 1025b39 did)
 * against one call of flagstaff_audit_append (the chain), serially on one connection (no lock
 * waits: what the hashing, the function call and the head cost) and by 32 connections at once
 * with 1 lane and with 8 (what waiting on a head adds). Figures only.
 *
 *   bun scripts/bench/audit-append-cpu.ts [--transactions 3000]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { startPgCluster } from "../pg-cluster.ts";
import { processTreeCpuMs, ROOT, run } from "./lib.ts";

const { values: args } = parseArgs({ args: process.argv.slice(2), options: { transactions: { type: "string", default: "3000" } } });
const N = Number(args.transactions);
const pg = await startPgCluster();
try {
  const env = { ...(process.env as Record<string, string>), FLAGSTAFF_DATABASE_URL: pg.url, FLAGSTAFF_LOG_LEVEL: "warn" };
  await run([process.execPath, join(ROOT, "src/cli.ts"), "init", "--json"], env, ROOT);
  const postmaster = Number(readFileSync(join(pg.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
  const db = postgres(pg.url, { max: 32, onnotice: () => {} });
  const [{ id: orgId }] = (await db`SELECT id FROM organizations LIMIT 1`) as unknown as [{ id: string }];
  const digest = "ab".repeat(32);
  let n = 0;
  const events = () => Array.from({ length: 3 }, () => `bench-${n++}`);
  const plain = (sql: postgres.TransactionSql) => async () => {
    for (const id of events())
      await sql`INSERT INTO audit_events (id, org_id, actor_type, action, entity_type, entity_id, after, created_at) VALUES (${id}, ${orgId}, 'api_key', 'REPORT_CREATED', 'report', ${id}, '{"status":"OPEN"}', ${Date.now()})`;
  };
  const chained = (sql: postgres.TransactionSql, lane: number) => async () => {
    const ids = events();
    const col = (v: string | number | null) => ids.map(() => v);
    const params = [orgId, lane, ids, col(null), col("api_key"), col(null), col("REPORT_CREATED"), col("report"), ids, col(null), col('{"status":"OPEN"}'), col(null), col(Date.now()), col(digest)];
    const types = ["text", "integer", ...Array(10).fill("text[]"), "bigint[]", "text[]"];
    await sql.unsafe(`SELECT flagstaff_audit_append(${types.map((t, i) => `$${i + 1}::${t}`).join(", ")})`, params as never[]);
  };
  async function measure(label: string, concurrency: number, body: (sql: postgres.TransactionSql, i: number) => () => Promise<void>): Promise<void> {
    const before = processTreeCpuMs(postmaster);
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < N; i = next++) await db.begin((sql) => body(sql, i)());
      }),
    );
    const ms = performance.now() - started;
    const cpu = processTreeCpuMs(postmaster) - before;
    console.log(`${label.padEnd(44)} ${(N / (ms / 1000)).toFixed(0).padStart(6)} tx/s   PostgreSQL CPU ${(cpu / N).toFixed(3)} ms/tx`);
  }
  for (let round = 0; round < 2; round++) {
    await measure("1 connection, plain INSERTs (before)", 1, (sql) => plain(sql));
    await measure("1 connection, flagstaff_audit_append", 1, (sql) => chained(sql, 0));
    await measure("32 connections, plain INSERTs (before)", 32, (sql) => plain(sql));
    await measure("32 connections, append, 1 lane", 32, (sql) => chained(sql, 0));
    await measure("32 connections, append, 8 lanes", 32, (sql, i) => chained(sql, i % 8));
  }
  await db.end();
} finally {
  await pg.stop();
}
