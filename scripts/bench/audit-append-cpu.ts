/**
 * Where the audit chain's PostgreSQL CPU goes (issue 29, docs/audit.md "Cost"): the database's CPU
 * per transaction of 2 audit events (a report's intake writes two), every statement prepared as
 * the store prepares them, by --connections clients at once, in alternating rounds (medians):
 * - before: two INSERTs, as 1025b39 wrote events;
 * - floor: one multi-row INSERT with the chain's columns given by the client (what the chain
 *   would cost if the instance knew the lane's last hash: the columns and the unique index);
 * - function, no lane: flagstaff_audit_append's body without the lane's lock and head (the call,
 *   the 14 arrays, the hashing, the set-based INSERT);
 * - flagstaff_audit_append: the chain in the database (migration 0027), over --lanes lanes: what an
 *   instance falls back to when it holds no lane;
 * - held lane: the chain as an instance writes it on a lane it holds (src/db/audit-lanes-pg.ts):
 *   the events hashed by the client, one INSERT with the head's UPDATE (pgInsertEvents), one lane
 *   per connection.
 * Figures only.
 *
 *   bun scripts/bench/audit-append-cpu.ts [--transactions 6000] [--connections 20] [--lanes 32] [--rounds 4]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { startPgCluster } from "../pg-cluster.ts";
import { pgInsertEvents } from "../../src/db/audit-append-pg.ts";
import { median, processTreeCpuMs, ROOT, run } from "./lib.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: { transactions: { type: "string", default: "6000" }, connections: { type: "string", default: "20" }, lanes: { type: "string", default: "32" }, rounds: { type: "string", default: "4" } },
});
const N = Number(args.transactions);
const CONNECTIONS = Number(args.connections);
const LANES = Number(args.lanes);
const EVENTS = 2;
const AFTER = '{"status":"OPEN","caseId":"01JBENCHCASE0000000000000","reasons":["spam"],"severity":"LOW"}';
const ARGS = `(p_org text, p_lane integer, p_ids text[], p_project_ids text[], p_actor_types text[], p_actor_ids text[], p_actions text[],
  p_entity_types text[], p_entity_ids text[], p_befores text[], p_afters text[], p_datas text[], p_created bigint[], p_digests text[])`;

const pg = await startPgCluster();
try {
  const env = { ...(process.env as Record<string, string>), FLAGSTAFF_DATABASE_URL: pg.url, FLAGSTAFF_LOG_LEVEL: "warn" };
  await run([process.execPath, join(ROOT, "src/cli.ts"), "init", "--json"], env, ROOT);
  const postmaster = Number(readFileSync(join(pg.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
  const db = postgres(pg.url, { max: CONNECTIONS, onnotice: () => {} });
  const [{ id: orgId }] = (await db`SELECT id FROM organizations LIMIT 1`) as unknown as [{ id: string }];
  // The function's body from the migration, without the lane (a random sequence instead: nothing else writes it).
  await db.unsafe(`CREATE FUNCTION bench_append_no_lane${ARGS} RETURNS void LANGUAGE plpgsql AS $$
DECLARE v_seq bigint := (random() * 1e15)::bigint; v_prev text := repeat('0', 64); v_count integer := coalesce(array_length(p_ids, 1), 0); v_prevs text[]; v_hashes text[];
BEGIN
  FOR i IN 1 .. v_count LOOP v_prevs[i] := v_prev; v_prev := encode(sha256(convert_to(v_prev || p_digests[i], 'UTF8')), 'hex'); v_hashes[i] := v_prev; END LOOP;
  INSERT INTO audit_events (id, org_id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at, chain_lane, chain_seq, prev_hash, hash)
  SELECT e.id, p_org, e.project_id, e.actor_type, e.actor_id, e.action, e.entity_type, e.entity_id, e.before, e.after, e.data, e.created_at, 1000000, v_seq + e.n, e.prev_hash, e.hash
  FROM unnest(p_ids, p_project_ids, p_actor_types, p_actor_ids, p_actions, p_entity_types, p_entity_ids, p_befores, p_afters, p_datas, p_created, v_prevs, v_hashes)
    WITH ORDINALITY AS e(id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at, prev_hash, hash, n);
END $$`);
  let n = 0;
  const ids = () => Array.from({ length: EVENTS }, () => `bench-${n++}`);
  type Tx = postgres.TransactionSql;
  const before = async (sql: Tx) => {
    const sent = ids().map((id) =>
      sql.unsafe(
        "INSERT INTO audit_events (id, org_id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        [id, orgId, null, "api_key", null, "REPORT_CREATED", "report", id, null, AFTER, null, Date.now()] as never[],
        { prepare: true },
      ),
    );
    await Promise.all(sent);
  };
  let floorSeq = 0;
  const floor = async (sql: Tx) => {
    const params: unknown[] = [orgId];
    const rows = ids().map((id) => {
      const b = params.length;
      params.push(id, AFTER, Date.now(), ++floorSeq, "ab".repeat(32));
      return `($${b + 1}, $1, NULL, 'api_key', NULL, 'REPORT_CREATED', 'report', $${b + 1}, NULL, $${b + 2}, NULL, $${b + 3}, 2000000, $${b + 4}, $${b + 5}, $${b + 5})`;
    });
    await sql.unsafe(`INSERT INTO audit_events (id, org_id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at, chain_lane, chain_seq, prev_hash, hash) VALUES ${rows.join(", ")}`, params as never[], { prepare: true });
  };
  const append = (fn: string) => async (sql: Tx, i: number) => {
    const eventIds = ids();
    const col = (v: string | number | null) => eventIds.map(() => v);
    const params = [orgId, i % LANES, eventIds, col(null), col("api_key"), col(null), col("REPORT_CREATED"), col("report"), eventIds, col(null), col(AFTER), col(null), col(Date.now()), col("ab".repeat(32))];
    const types = ["text", "integer", ...Array(10).fill("text[]"), "bigint[]", "text[]"];
    await sql.unsafe(`SELECT ${fn}(${types.map((t, k) => `$${k + 1}::${t}`).join(", ")})`, params as never[], { prepare: true });
  };
  // A lane per client, its head's sequence kept here as an instance keeps it; in an organization of
  // its own, whose lanes flagstaff_audit_append (which takes any free lane) never meets.
  const heldOrg = "bench-held-lanes";
  await db`INSERT INTO organizations (id, slug, name, plan, created_at) VALUES (${heldOrg}, ${heldOrg}, ${heldOrg}, 'enterprise', 1)`;
  const heldSeqs = Array.from({ length: CONNECTIONS }, () => 0);
  for (let c = 0; c < CONNECTIONS; c++) await db`INSERT INTO audit_chain_heads (org_id, lane, last_seq, last_hash) VALUES (${heldOrg}, ${1 + c}, 0, ${"0".repeat(64)})`;
  const heldLane = async (sql: Tx, _i: number, worker: number) => {
    const params: unknown[] = [heldOrg, 1 + worker];
    for (const id of ids()) params.push(id, null, "api_key", null, "REPORT_CREATED", "report", id, null, AFTER, null, Date.now(), ++heldSeqs[worker]!, "ab".repeat(32), "cd".repeat(32));
    await sql.unsafe(pgInsertEvents(EVENTS, "update"), params as never[], { prepare: true });
  };
  const variants: [string, (sql: Tx, i: number, worker: number) => Promise<void>][] = [
    ["before: two INSERTs (1025b39)", before],
    ["floor: one INSERT, chain columns given", floor],
    ["function, no lane", append("bench_append_no_lane")],
    [`flagstaff_audit_append, ${LANES} lanes`, append("flagstaff_audit_append")],
    ["held lane: INSERT with the head's UPDATE", heldLane],
  ];
  const cpu: Record<string, number[]> = {};
  for (let round = 0; round < Number(args.rounds); round++) {
    for (const [label, body] of round % 2 ? [...variants].reverse() : variants) {
      const start = processTreeCpuMs(postmaster);
      let next = 0;
      await Promise.all(Array.from({ length: CONNECTIONS }, async (_, worker) => {
        for (let i = next++; i < N; i = next++) await db.begin((sql) => body(sql, i, worker));
      }));
      (cpu[label] ??= []).push((processTreeCpuMs(postmaster) - start) / N);
    }
  }
  const base = median(cpu[variants[0]![0]]!);
  console.log(`PostgreSQL CPU per transaction of ${EVENTS} events, ${CONNECTIONS} connections, ${args.rounds} rounds of ${N} (median, and against "before"):`);
  for (const [label] of variants) console.log(`  ${label.padEnd(40)} ${median(cpu[label]!).toFixed(3)} ms   ${(median(cpu[label]!) - base >= 0 ? "+" : "") + (median(cpu[label]!) - base).toFixed(3)} ms`);
  await db.end();
} finally {
  await pg.stop();
}
