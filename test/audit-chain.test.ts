/**
 * The tamper-evident audit log (docs/audit.md): events written through the API form a hash chain
 * per organization, in lanes (sub-chains with a head each, FLAGSTAFF_AUDIT_CHAIN_LANES, LANES here); `flagstaff audit verify` (the CLI, as a subprocess) names the first
 * event edited or deleted directly in the database, checks signed checkpoints and refuses a
 * tampered one; an export is checked by scripts/verify-audit-export.mjs with plain Node; many
 * parallel writes (on PostgreSQL through two instances) leave every lane gap-free; on PostgreSQL,
 * lanes an instance holds that were written behind its back, or whose lock's connection was
 * lost, never fork, and a transaction that meets one reads every head of the organization again
 * (its attempts are not spent one stale lane at a time). Tampering with what the chain relies on (issue 40): checkpoints deleted, or
 * deleted and signed again with the real key after a lane was truncated, deleted or rewritten,
 * fail against the checkpoints kept outside (`--checkpoints`); a checkpoint signed with another
 * key fails; an event slipped in without its place is never chained (on PostgreSQL, only an
 * instance of a release before the chain gets its events chained, once it has gone).
 */
import { AUDIT_CHAIN_GENESIS } from "../src/domain/views/audit-chain.ts";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createPublicKey, generateKeyPairSync, randomBytes, sign, verify } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql, type SQL } from "drizzle-orm";
import { chainHash, eventDigest } from "../src/db/audit-hash.ts";
import { migrateStore } from "../src/db/migrate.ts";
import { embeddedMigrations } from "../src/db/migrations-index.ts";
import { embeddedPgMigrations } from "../src/db/migrations-index-pg.ts";
import { auditChainHeads, auditEvents } from "../src/db/schema.ts";
import { systemClock } from "../src/domain/core/clock.ts";
import { DEFAULT_AUDIT_CHAIN_LANES, laneOf, type UnchainedEvent } from "../src/db/audit-append.ts";
import { verifyChains } from "../src/domain/audit/audit-chain.ts";
import { openTestStore } from "./helpers/builders.ts";
import { MAX_TRANSACTION_ATTEMPTS, openPostgresStore, postgresClient } from "../src/db/store-pg.ts";
import { createTestDatabase, databaseForPath, lockedLanes, TEST_ENGINE } from "./helpers/pg.ts";
import { rawDb } from "./helpers/raw-db.ts";
import { until } from "./helpers/wait.ts";
import { ROOT, runCli, startServer, TestServer, type InitResult } from "./helpers/server.ts";

setDefaultTimeout(60_000);

const SEED = randomBytes(32).toString("base64");
const KEYED = { FLAGSTAFF_AUDIT_SIGNING_KEY: SEED };

interface ChainRow {
  id: string;
  org_id: string;
  chain_lane: number;
  chain_seq: number;
  action: string;
  hash: string;
  prev_hash: string;
}

async function report(server: TestServer, demo: InitResult, externalId: string): Promise<string> {
  const sdk = await server.sdkClient(demo.secretKey);
  const created = await sdk.POST("/projects/{projectId}/reports", {
    params: { path: { projectId: demo.projectId } },
    body: { subject: { type: "user", externalId }, reason: "spam", target: { contentType: "post", contentExternalId: `post-${externalId}` } },
  });
  if (created.response.status !== 201) throw new Error(`report: ${created.response.status}`);
  return created.data!.report.id;
}

async function resolve(server: TestServer, demo: InitResult, reportId: string): Promise<void> {
  const sdk = await server.sdkClient(demo.secretKey);
  const r = await sdk.POST("/reports/{reportId}/resolve", { params: { path: { reportId } }, body: { resolutionCode: "SPAM_CONFIRMED" } });
  if (r.response.status !== 200) throw new Error(`resolve: ${r.response.status} ${JSON.stringify(r.error)}`);
}

const verifyCli = (server: TestServer, extra: string[] = [], env: Record<string, string> = {}) => runCli(["audit", "verify", ...extra], { ...server.env, ...env });

/** An organization's chained events, by lane then sequence. */
async function chainOf(server: TestServer, orgId: string): Promise<ChainRow[]> {
  const db = await rawDb(server.dbPath);
  try {
    return (
      await db.all<ChainRow>("SELECT id, org_id, chain_lane, chain_seq, action, hash, prev_hash FROM audit_events WHERE org_id = ? ORDER BY chain_lane, chain_seq, created_at", orgId)
    ).map((r) => ({ ...r, chain_lane: Number(r.chain_lane), chain_seq: Number(r.chain_seq) }));
  } finally {
    await db.close();
  }
}

/** The events of each lane, by lane. */
async function lanesOf(server: TestServer, orgId: string): Promise<Map<number, ChainRow[]>> {
  const lanes = new Map<number, ChainRow[]>();
  for (const r of await chainOf(server, orgId)) lanes.set(r.chain_lane, [...(lanes.get(r.chain_lane) ?? []), r]);
  return lanes;
}

/** Each lane is numbered 1, 2, 3… and linked from 64 zeros. */
function expectGapFreeLanes(lanes: Map<number, ChainRow[]>): void {
  for (const rows of lanes.values()) {
    expect(rows.map((r) => r.chain_seq)).toEqual(rows.map((_, i) => i + 1));
    expect(rows[0]!.prev_hash).toBe("0".repeat(64));
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.prev_hash).toBe(rows[i - 1]!.hash);
  }
}

/** The lane with the most events. */
const busiest = (lanes: Map<number, ChainRow[]>): ChainRow[] => [...lanes.values()].sort((a, b) => b.length - a.length)[0]!;

async function rawSql(server: TestServer, q: string, ...params: unknown[]): Promise<void> {
  const db = await rawDb(server.dbPath);
  try {
    await db.run(q, ...params);
  } finally {
    await db.close();
  }
}

/** Appends one event to a lane with plain statements, as a writer the instances do not know of would; its place and hash. */
async function appendBehind(pg: ReturnType<typeof postgresClient>, orgId: string, lane: number): Promise<{ seq: number; hash: string }> {
  return pg.begin(async (tx) => {
    const [head] = await tx<{ last_seq: number; last_hash: string }[]>`SELECT last_seq, last_hash FROM audit_chain_heads WHERE org_id = ${orgId} AND lane = ${lane} FOR UPDATE`;
    const seq = Number(head?.last_seq ?? 0) + 1;
    const prev = head?.last_hash ?? "0".repeat(64);
    const event = { id: `behind-${randomBytes(4).toString("hex")}`, orgId, projectId: null, actorType: "system", actorId: null, action: "SSO_SIGN_IN_REFUSED", entityType: "oidc_config", entityId: orgId, before: null, after: null, data: null, createdAt: Date.now() };
    const hash = chainHash(prev, eventDigest(event));
    await tx`INSERT INTO audit_events (id, org_id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at, chain_lane, chain_seq, prev_hash, hash)
      VALUES (${event.id}, ${orgId}, NULL, 'system', NULL, ${event.action}, ${event.entityType}, ${orgId}, NULL, NULL, NULL, ${event.createdAt}, ${lane}, ${seq}, ${prev}, ${hash})`;
    await tx`INSERT INTO audit_chain_heads (org_id, lane, last_seq, last_hash) VALUES (${orgId}, ${lane}, ${seq}, ${hash})
      ON CONFLICT (org_id, lane) DO UPDATE SET last_seq = excluded.last_seq, last_hash = excluded.last_hash`;
    return { seq, hash };
  });
}

async function orgIdOf(server: TestServer, slug: string): Promise<string> {
  const db = await rawDb(server.dbPath);
  try {
    return (await db.get<{ id: string }>("SELECT id FROM organizations WHERE slug = ?", slug))!.id;
  } finally {
    await db.close();
  }
}

/**
 * Lanes of the main server's chains: fewer than the default (32), so that this file's few dozen
 * writes still put 5 or more events in several lanes, which the interleaving test needs.
 */
const LANES = 8;

describe("the audit chain", () => {
  let server: TestServer;
  let demoOrg: string;
  beforeAll(async () => {
    server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000", FLAGSTAFF_AUDIT_CHAIN_LANES: String(LANES) });
    demoOrg = await orgIdOf(server, server.demo.orgSlug);
    for (let i = 0; i < 6; i++) {
      const id = await report(server, server.demo, `chain-${i}`);
      if (i % 2 === 0) await resolve(server, server.demo, id);
    }
    // Some at once: on PostgreSQL an instance appends to a lane it holds that is free, so writes
    // one after another may all take one lane; writes at once take several.
    await Promise.all(Array.from({ length: 8 }, (_, i) => report(server, server.demo, `chain-at-once-${i}`)));
  });
  afterAll(async () => {
    await server?.dispose();
  });

  test("events written through the API are chained 1, 2, 3… in each lane, over several lanes, and verify", async () => {
    const rows = await chainOf(server, demoOrg);
    expect(rows.length).toBeGreaterThan(9);
    const lanes = await lanesOf(server, demoOrg);
    expect(lanes.size).toBeGreaterThan(1);
    // The demo's own events were written by `init`, with the default number of lanes.
    for (const lane of lanes.keys()) expect(lane).toBeLessThan(DEFAULT_AUDIT_CHAIN_LANES);
    expectGapFreeLanes(lanes);
    const ok = await verifyCli(server);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`${server.demo.orgSlug}: verified ${rows.length} event(s)`);
    expect(ok.stdout).toContain("all verify");
  });

  test("an edited event is named by `audit verify` (hash mismatch); restored, the chain verifies again", async () => {
    const rows = await chainOf(server, demoOrg);
    const victim = rows[4]!;
    const db = await rawDb(server.dbPath);
    const { data } = (await db.get<{ data: string | null }>("SELECT data FROM audit_events WHERE id = ?", victim.id))!;
    await db.run("UPDATE audit_events SET data = ? WHERE id = ?", JSON.stringify({ note: "rewritten" }), victim.id);
    const bad = await verifyCli(server);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`event ${victim.id} (lane ${victim.chain_lane}, seq ${victim.chain_seq}, ${victim.action})`);
    expect(bad.stdout).toContain("hash mismatch");
    await db.run("UPDATE audit_events SET data = ? WHERE id = ?", data, victim.id);
    await db.close();
    expect((await verifyCli(server)).code).toBe(0);
  });

  test("an edited event whose hash and every later hash were recomputed still fails against a signed checkpoint; a tampered checkpoint fails its signature", async () => {
    const made = await runCli(["audit", "checkpoint"], { ...server.env, ...KEYED });
    expect(made.code).toBe(0);
    expect(made.stdout).toContain("1 checkpoint(s) signed");
    const signed = await verifyCli(server, [], KEYED);
    expect(signed.code).toBe(0);
    expect(signed.stdout).toContain("1 checkpoint(s) (1 signature(s) checked)");
    // Without the key, the checkpoint is not checked, and the output says so.
    expect((await verifyCli(server)).stdout).toContain("not checked: no trusted key");

    // Rewrite the busiest lane from its second event on, consistently, as someone with database access could.
    const lane = busiest(await lanesOf(server, demoOrg))[0]!.chain_lane;
    const db = await rawDb(server.dbPath);
    const full = await db.all<Record<string, unknown>>("SELECT * FROM audit_events WHERE org_id = ? AND chain_lane = ? ORDER BY chain_seq", demoOrg, lane);
    expect(full.length).toBeGreaterThan(1);
    const original = full.map((r) => ({ id: r.id, data: r.data, hash: r.hash, prev: r.prev_hash }));
    let prev = String(full[0]!.hash);
    for (const [i, r] of full.entries()) {
      if (i < 1) continue;
      const data = i === 1 ? JSON.stringify({ note: "rewritten" }) : (r.data as string | null);
      const hash = chainHash(prev, eventDigest({
        orgId: String(r.org_id), id: String(r.id), projectId: (r.project_id as string | null) ?? null, actorType: String(r.actor_type),
        actorId: (r.actor_id as string | null) ?? null, action: String(r.action), entityType: String(r.entity_type), entityId: String(r.entity_id),
        before: (r.before as string | null) ?? null, after: (r.after as string | null) ?? null, data, createdAt: Number(r.created_at),
      }));
      await db.run("UPDATE audit_events SET data = ?, prev_hash = ?, hash = ? WHERE id = ?", data, prev, hash, r.id);
      prev = hash;
    }
    await db.run("UPDATE audit_chain_heads SET last_hash = ? WHERE org_id = ? AND lane = ?", prev, demoOrg, lane);
    const rewritten = await verifyCli(server, [], KEYED);
    expect(rewritten.code).toBe(1);
    expect(rewritten.stdout).toContain(`(lane ${lane}, seq ${full.length},`);
    expect(rewritten.stdout).toContain("checkpoint mismatch");
    for (const o of original) await db.run("UPDATE audit_events SET data = ?, prev_hash = ?, hash = ? WHERE id = ?", o.data, o.prev, o.hash, o.id);
    await db.run("UPDATE audit_chain_heads SET last_hash = ? WHERE org_id = ? AND lane = ?", original.at(-1)!.hash, demoOrg, lane);
    expect((await verifyCli(server, [], KEYED)).code).toBe(0);

    // The checkpoint itself, one lane's head moved to another hash: its signature no longer verifies.
    const [cp] = await db.all<{ id: string; heads: string }>("SELECT id, heads FROM audit_checkpoints WHERE org_id = ?", demoOrg);
    const heads = JSON.parse(cp!.heads) as [number, number, string][];
    expect(heads.map((h) => h[0])).toEqual([...(await lanesOf(server, demoOrg)).keys()].sort((a, b) => a - b));
    heads[0]![2] = "f".repeat(64);
    await db.run("UPDATE audit_checkpoints SET heads = ? WHERE id = ?", JSON.stringify(heads), cp!.id);
    const forged = await verifyCli(server, [], KEYED);
    expect(forged.code).toBe(1);
    expect(forged.stdout).toContain("signature does not verify");
    await db.run("UPDATE audit_checkpoints SET heads = ? WHERE id = ?", cp!.heads, cp!.id);
    await db.close();
    expect((await verifyCli(server, [], KEYED)).code).toBe(0);
  });

  test("a case's export is checked by scripts/verify-audit-export.mjs with plain Node, and fails once edited", async () => {
    const reportId = await report(server, server.demo, "exported");
    await resolve(server, server.demo, reportId);
    await report(server, server.demo, "after-export"); // other events after it, before the checkpoint
    expect((await runCli(["audit", "checkpoint"], { ...server.env, ...KEYED })).code).toBe(0);
    const db = await rawDb(server.dbPath);
    const { case_id: caseId } = (await db.get<{ case_id: string }>("SELECT case_id FROM reports WHERE id = ?", reportId))!;
    await db.close();
    const exported = await runCli(["audit", "export", "--org", server.demo.orgSlug, "--case", caseId], server.env);
    expect(exported.code).toBe(0);
    const doc = JSON.parse(exported.stdout);
    expect(doc.selected).toBeGreaterThan(1);
    const dir = mkdtempSync(join(tmpdir(), "flagstaff-export-"));
    const file = join(dir, "export.json");
    writeFileSync(file, exported.stdout);
    const pub = (await runCli(["audit", "public-key"], { ...server.env, ...KEYED })).stdout.match(/raw \(base64\): (\S+)/)![1]!;
    const node = (f: string, key = pub) => {
      const p = Bun.spawnSync(["node", join(ROOT, "scripts/verify-audit-export.mjs"), f, "--public-key", key]);
      return { code: p.exitCode, out: p.stdout.toString() + p.stderr.toString() };
    };
    const ok = node(file);
    expect(ok.out).toContain(`verified: ${doc.selected} event(s)`);
    expect(ok.out).toContain(`${doc.selected} covered by signed checkpoints`);
    expect(ok.code).toBe(0);

    // Another key than the organization's: refused.
    expect(node(file, Buffer.alloc(32, 7).toString("base64")).code).toBe(1);
    // One selected event's content changed in the file.
    const edited = JSON.parse(readFileSync(file, "utf8"));
    const shown = edited.segments.flatMap((s: { events: { event?: { action: string } }[] }) => s.events).find((e: { event?: unknown }) => e.event);
    shown.event.action = "REPORT_DISMISSED";
    writeFileSync(join(dir, "edited.json"), JSON.stringify(edited));
    const bad = node(join(dir, "edited.json"));
    expect(bad.code).toBe(1);
    expect(bad.out).toContain("DOES NOT VERIFY");
  });

  test("many parallel writes in two organizations leave each lane of each chain without a gap", async () => {
    const other = await server.initOrg("Chain Two");
    // On PostgreSQL, through two instances of the same database.
    const second = TEST_ENGINE === "postgres" ? new TestServer(mkdtempSync(join(tmpdir(), "flagstaff-test-b-")), server.env, server.demo) : server;
    if (second !== server) await second.start();
    try {
      const ids = await Promise.all(
        Array.from({ length: 80 }, (_, i) => report(i % 2 ? second : server, i % 4 < 2 ? server.demo : other, `parallel-${i}`)),
      );
      await Promise.all(ids.filter((_, i) => i % 3 === 0).map((id, i) => resolve(i % 2 ? second : server, ids.indexOf(id) % 4 < 2 ? server.demo : other, id)));
    } finally {
      if (second !== server) await second.stop();
    }
    for (const orgId of [demoOrg, await orgIdOf(server, other.orgSlug)]) {
      const lanes = await lanesOf(server, orgId);
      expect(lanes.size).toBeGreaterThan(2);
      expectGapFreeLanes(lanes);
    }
    const ok = await verifyCli(server, [], KEYED);
    expect(ok.stdout).toContain("all verify: 2 organization(s)");
    expect(ok.code).toBe(0);
  });

  // PostgreSQL's fallback, flagstaff_audit_append (an instance that can hold no lane, and instances of
  // the release before): a lane is held through the COMMIT's flush. SQLite has one writer at a time.
  // PostgreSQL: an instance holds lanes (session advisory locks) and keeps their heads in memory (src/db/audit-lanes-pg.ts).
  /** Runs `fn` with a client of the database and the lanes of the demo organization the server holds; then its lanes are gap-free and verify. */
  async function withHeldLanes(fn: (pg: ReturnType<typeof postgresClient>, held: { pid: number; lane: number }[]) => Promise<void>): Promise<void> {
    const { url } = await databaseForPath(server.dbPath);
    const pg = postgresClient(url, 1);
    try {
      await report(server, server.demo, `warm-${randomBytes(3).toString("hex")}`);
      const held = await lockedLanes(pg, demoOrg);
      expect(held.length).toBeGreaterThan(0);
      await fn(pg, held);
      expectGapFreeLanes(await lanesOf(server, demoOrg));
      const ok = await verifyCli(server, ["--org", server.demo.orgSlug]);
      expect(ok.stdout).toContain("all verify");
    } finally {
      await pg.end({ timeout: 5 });
    }
  }

  test.skipIf(TEST_ENGINE !== "postgres")("lanes written behind the instance's back (its heads in memory stale): its next append meets the unique index and runs again on the head read again, 201; no lane forks", () =>
    withHeldLanes(async (pg, held) => {
      // One event more in every lane the instance holds, as a writer it does not know of would leave it.
      const injected = new Map<number, { seq: number; hash: string }>();
      for (const { lane } of held) injected.set(lane, await appendBehind(pg, demoOrg, lane));
      const id = await report(server, server.demo, `behind-${randomBytes(3).toString("hex")}`);
      const [created] = await pg<{ chain_lane: number; chain_seq: number }[]>`SELECT chain_lane, chain_seq FROM audit_events WHERE org_id = ${demoOrg} AND entity_id = ${id} AND action = 'REPORT_CREATED'`;
      // It landed on a lane written behind the instance's back, after that event, which the next event links to.
      const behind = injected.get(created!.chain_lane)!;
      expect(behind).toBeDefined();
      expect(Number(created!.chain_seq)).toBeGreaterThan(behind.seq);
      const [next] = await pg<{ chain_seq: number }[]>`SELECT chain_seq FROM audit_events WHERE org_id = ${demoOrg} AND chain_lane = ${created!.chain_lane} AND prev_hash = ${behind.hash}`;
      expect(Number(next!.chain_seq)).toBe(behind.seq + 1);
    }),
  );

  test.skipIf(TEST_ENGINE !== "postgres")("the connection holding an instance's lanes is lost: lanes written meanwhile by another writer do not fork, and the instance claims lanes again on a new session", () =>
    withHeldLanes(async (pg, held) => {
      const lost = held[0]!.pid;
      await pg`SELECT pg_terminate_backend(${lost})`;
      await until("the lost session's locks gone", async () => (await lockedLanes(pg, demoOrg)).length === 0);
      // The lanes are free: another writer takes them at once and writes them.
      for (const { lane } of held) await appendBehind(pg, demoOrg, lane);
      await report(server, server.demo, `lost-${randomBytes(3).toString("hex")}`);
      // Within a few seconds the instance notices, and holds lanes again on its new session.
      await Bun.sleep(2_500);
      await report(server, server.demo, `again-${randomBytes(3).toString("hex")}`);
      const now = await lockedLanes(pg, demoOrg);
      expect(now.length).toBeGreaterThan(0);
      expect(now.every((h) => h.pid !== lost)).toBe(true);
    }),
  );

  test("two lanes interleave in time; an event deleted in one is named by `audit verify` as a gap in that lane, a deleted last event through the lane's head", async () => {
    const lanes = await lanesOf(server, demoOrg);
    // Two lanes, the second not the first verified, written at the same time: their events interleave.
    // Of the lanes with 5 events or more, the pair whose events alternate most often in time
    // (which lanes the writes took depends on their entities' hashes and the timing).
    const candidates = [...lanes.entries()].filter(([, rows]) => rows.length >= 5).sort(([x], [y]) => x - y);
    const db = await rawDb(server.dbPath);
    const byTime = (await db.all<{ chain_lane: number }>("SELECT chain_lane FROM audit_events WHERE org_id = ? ORDER BY created_at, id", demoOrg)).map((r) => Number(r.chain_lane));
    await db.close();
    const switchesOf = (x: number, y: number) => {
      const seq = byTime.filter((l) => l === x || l === y);
      return seq.filter((l, i) => i > 0 && l !== seq[i - 1]).length;
    };
    let best: { a: (typeof candidates)[number]; b: (typeof candidates)[number]; switches: number } | null = null;
    for (let i = 0; i < candidates.length; i++) {
      for (let j = i + 1; j < candidates.length; j++) {
        const switches = switchesOf(candidates[i]![0], candidates[j]![0]);
        if (!best || switches > best.switches) best = { a: candidates[i]!, b: candidates[j]!, switches };
      }
    }
    expect(best).not.toBeNull();
    const { a, b, switches } = best!;
    // Interleaved: a, b, a at least.
    expect(switches).toBeGreaterThanOrEqual(2);
    const [lane, rows] = b!;
    expect(lane).toBeGreaterThan(a![0]);

    const last = rows.at(-1)!;
    await rawSql(server, "DELETE FROM audit_events WHERE id = ?", last.id);
    const tail = await verifyCli(server, ["--org", server.demo.orgSlug]);
    expect(tail.code).toBe(1);
    expect(tail.stdout).toContain(`lane ${lane} ends at ${last.chain_seq - 1} but its head says ${last.chain_seq}: the last event(s) ${last.chain_seq}..${last.chain_seq} of the lane were deleted`);

    const gone = rows[2]!;
    const next = rows[3]!;
    await rawSql(server, "DELETE FROM audit_events WHERE id = ?", gone.id);
    const bad = await verifyCli(server, ["--org", server.demo.orgSlug]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`event ${next.id} (lane ${lane}, seq ${next.chain_seq}, ${next.action}): sequence gap: lane ${lane} goes from 2 to 4`);
    expect(bad.stdout).toContain(`event(s) ${gone.chain_seq} of the lane before it were deleted`);
    expect(bad.stderr).toContain("does not verify");
  });
});

// PostgreSQL, on a server of its own: the main one above holds most lanes of its organization
// after its writes at once, and a lane it holds cannot be taken by the test's holder.
describe.skipIf(TEST_ENGINE !== "postgres")("an append beside a lane another transaction holds (PostgreSQL)", () => {
  let server: TestServer;
  let demoOrg: string;
  beforeAll(async () => {
    server = await startServer({ FLAGSTAFF_AUDIT_CHAIN_LANES: String(LANES) });
    demoOrg = await orgIdOf(server, server.demo.orgSlug);
    await report(server, server.demo, "beside-a-held-lane");
  });
  afterAll(async () => {
    await server?.dispose();
  });

  test("a transaction whose lane another transaction holds appends to a free lane at once, without waiting; the chain verifies", async () => {
    const { url } = await databaseForPath(server.dbPath);
    const holder = postgresClient(url, 1);
    const writer = postgresClient(url, 1);
    // A lane other than 0 that the holder takes without waiting (the server may take lanes
    // meanwhile: each is tried, never waited for), so lane 0 (never held by an instance) stays free
    // for the append: with lane 0 held too and the server holding every other lane, the append
    // would rightly wait.
    let held = 0;
    // Lane 0 as the chain's first append there makes it (a head at genesis), so a free lane with
    // a head is there for the append to move to whichever lanes this server's writes took.
    await writer`INSERT INTO audit_chain_heads (org_id, lane, last_seq, last_hash) VALUES (${demoOrg}, 0, 0, ${AUDIT_CHAIN_GENESIS}) ON CONFLICT DO NOTHING`;
    const event = { id: `skip-locked-${randomBytes(4).toString("hex")}`, orgId: demoOrg, projectId: null, actorType: "system", actorId: null, action: "SSO_SIGN_IN_REFUSED", entityType: "oidc_config", entityId: demoOrg, before: null, after: null, data: null, createdAt: Date.now() };
    let release!: () => void;
    const holding = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    try {
      const holderDone = holder.begin(async (tx) => {
        // As an append holds it (migration 0027: the lane's advisory lock).
        for (let lane = 1; lane < LANES && !held; lane++) {
          const [got] = await tx`SELECT flagstaff_audit_lock_lane(${demoOrg}, ${lane}::integer, false) AS ok`;
          if (got!.ok) held = lane;
        }
        locked();
        await holding;
      });
      await isLocked;
      expect(held).toBeGreaterThan(0);
      // Before migration 0025 this waited for the holder: the statement timeout would end it.
      await writer.begin(async (tx) => {
        await tx`SET LOCAL statement_timeout = 3000`;
        const text = (v: string | null) => [v];
        await tx`SELECT flagstaff_audit_append(${demoOrg}, ${held}::integer, ${text(event.id)}::text[], ${text(null)}::text[], ${text(event.actorType)}::text[], ${text(null)}::text[],
          ${text(event.action)}::text[], ${text(event.entityType)}::text[], ${text(event.entityId)}::text[], ${text(null)}::text[], ${text(null)}::text[], ${text(null)}::text[],
          ${[event.createdAt]}::bigint[], ${text(eventDigest(event))}::text[])`;
      });
      release();
      await holderDone;
    } finally {
      release();
      await holder.end({ timeout: 5 });
      await writer.end({ timeout: 5 });
    }
    const [row] = (await chainOf(server, demoOrg)).filter((r) => r.id === event.id);
    expect(row).toBeDefined();
    expect(row!.chain_lane).not.toBe(held);
    expectGapFreeLanes(await lanesOf(server, demoOrg));
    const ok = await verifyCli(server, ["--org", server.demo.orgSlug]);
    expect(ok.stdout).toContain("all verify");
    expect(ok.code).toBe(0);
  });

});

// PostgreSQL, in process: a store whose transactions pick each attempt's lane (its event's entity).
describe.skipIf(TEST_ENGINE !== "postgres")("every lane an instance holds written behind its back (PostgreSQL, in process)", () => {
  test("a transaction whose attempts would each take another of them: the first meets the unique index, the second reads its head again and commits; no lane forks", async () => {
    const LANES_HERE = 8;
    const ORG = "org-behind";
    // More lanes held (1..7) than a transaction has attempts: before every held head was read
    // again on the first race, each attempt marked only its own lane stale, and the five attempts
    // of a transaction whose entities fell on five of them all failed (a 500 on the API).
    expect(LANES_HERE - 1).toBeGreaterThan(MAX_TRANSACTION_ATTEMPTS);
    /** An entity id whose events go to `lane` (laneOf). */
    const entityOn = (lane: number): string => {
      for (let i = 0; ; i++) if (laneOf(`entity-${lane}-${i}`, LANES_HERE) === lane) return `entity-${lane}-${i}`;
    };
    const event = (entityId: string): UnchainedEvent => ({
      id: `event-${randomBytes(4).toString("hex")}`, orgId: ORG, projectId: null, actorType: "system", actorId: null, action: "SSO_SIGN_IN_REFUSED",
      entityType: "oidc_config", entityId, before: null, after: null, data: null, createdAt: Date.now(),
    });
    const database = await createTestDatabase();
    const store = openPostgresStore({ url: database.url, poolSize: LANES_HERE, auditChainLanes: LANES_HERE });
    const pg = postgresClient(database.url, 2);
    const gate = postgresClient(database.url, 1, {}, { keep: true });
    try {
      await migrateStore(store);
      await pg`INSERT INTO organizations (id, slug, name, plan, created_at) VALUES (${ORG}, ${ORG}, ${ORG}, 'enterprise', 1)`;
      // The instance claims lanes 1..7: a transaction per lane, at once, each kept from its COMMIT
      // (so holding its lane) by an advisory lock the gate holds, awaited with its COMMIT.
      const GATE = 0x7e57;
      await gate`SELECT pg_advisory_lock(${GATE})`;
      const held = Array.from({ length: LANES_HERE - 1 }, (_, i) => i + 1);
      const claiming = held.map((lane) =>
        store.transaction(async () => {
          await store.atCommit((store.db as unknown as { execute(q: SQL): Promise<unknown> }).execute(sql`SELECT pg_advisory_xact_lock(${GATE})`));
          store.appendAudit(event(entityOn(lane)));
        }, { exclusive: false }),
      );
      await until("every lane claimed", async () => (await lockedLanes(pg, ORG)).length === held.length);
      await gate`SELECT pg_advisory_unlock(${GATE})`;
      await Promise.all(claiming);
      expect((await lockedLanes(pg, ORG)).map((l) => l.lane)).toEqual(held);

      // Another writer appends to every one of them: every head the instance keeps is stale.
      const behind = new Map<number, { seq: number; hash: string }>();
      for (const lane of held) behind.set(lane, await appendBehind(pg, ORG, lane));

      // Attempt n's event falls on lane n.
      let attempts = 0;
      let written = "";
      await store.transaction(async () => {
        attempts++;
        const e = event(entityOn(attempts));
        written = e.id;
        store.appendAudit(e);
      }, { exclusive: false });
      expect(attempts).toBe(2);
      const [row] = await pg<{ chain_lane: number; chain_seq: number; prev_hash: string }[]>`SELECT chain_lane, chain_seq, prev_hash FROM audit_events WHERE id = ${written}`;
      expect([Number(row!.chain_lane), Number(row!.chain_seq), row!.prev_hash]).toEqual([2, behind.get(2)!.seq + 1, behind.get(2)!.hash]);

      const rows = await pg<ChainRow[]>`SELECT id, org_id, chain_lane, chain_seq, action, hash, prev_hash FROM audit_events WHERE org_id = ${ORG} ORDER BY chain_lane, chain_seq`;
      const lanes = new Map<number, ChainRow[]>();
      for (const r of rows.map((r) => ({ ...r, chain_lane: Number(r.chain_lane), chain_seq: Number(r.chain_seq) }))) lanes.set(r.chain_lane, [...(lanes.get(r.chain_lane) ?? []), r]);
      expect([...lanes.keys()]).toEqual(held);
      expectGapFreeLanes(lanes);
      const verified = await verifyChains({ store, db: store.db, clock: systemClock }, { trustedKeys: [] });
      expect(verified.map((v) => [v.org, v.events, v.failure])).toEqual([[ORG, rows.length, null]]);
    } finally {
      await gate.end({ timeout: 5 });
      await pg.end({ timeout: 5 });
      await store.close();
      await database.drop();
    }
  });
});

describe("the migration that chains the events written before the chain", () => {
  test("numbers each organization's events in order (created_at, id), hashes them as the writer would, writes the heads; the chain verifies", async () => {
    const list = TEST_ENGINE === "postgres" ? embeddedPgMigrations : embeddedMigrations;
    const at = list.findIndex((m) => m.tag.endsWith("_audit_chain"));
    const store = await openTestStore({ migrations: at });
    const exec = (q: SQL) => (TEST_ENGINE === "postgres" ? (store.writer as unknown as { execute(q: SQL): Promise<unknown> }).execute(q) : Promise.resolve(store.writer.run(q)));
    try {
      for (const org of ["org-a", "org-b"]) await exec(sql`INSERT INTO organizations (id, slug, name, plan, created_at) VALUES (${org}, ${org}, ${org}, 'enterprise', 1)`);
      // Inserted out of order: the chain follows (created_at, id), per organization.
      const events: [string, string, number, string | null][] = [
        ["e-b", "org-a", 1000, '{"n":1}'],
        ["e-a", "org-a", 1000, null],
        ["e-z", "org-a", 500, '{"n":"é"}'],
        ["f-1", "org-b", 700, null],
        ["f-0", "org-b", 900, null],
      ];
      for (const [id, org, createdAt, data] of events) {
        await exec(sql`INSERT INTO audit_events (id, org_id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at)
                       VALUES (${id}, ${org}, NULL, 'system', NULL, 'REPORT_CREATED', 'report', ${`r-${id}`}, NULL, '{"status":"OPEN"}', ${data}, ${createdAt})`);
      }
      await migrateStore(store);
      const rows = await store.db.select().from(auditEvents).orderBy(auditEvents.orgId, auditEvents.chainSeq);
      // All in lane 0.
      expect(rows.map((r) => [r.orgId, r.chainLane, Number(r.chainSeq), r.id])).toEqual([
        ["org-a", 0, 1, "e-z"],
        ["org-a", 0, 2, "e-a"],
        ["org-a", 0, 3, "e-b"],
        ["org-b", 0, 1, "f-1"],
        ["org-b", 0, 2, "f-0"],
      ]);
      let prev = "";
      for (const r of rows) {
        if (Number(r.chainSeq) === 1) prev = "0".repeat(64);
        expect(r.prevHash).toBe(prev);
        expect(r.hash).toBe(chainHash(prev, eventDigest({ ...r, createdAt: Number(r.createdAt) })));
        prev = r.hash!;
      }
      const heads = await store.db.select().from(auditChainHeads).orderBy(auditChainHeads.orgId);
      expect(heads.map((h) => [h.orgId, h.lane, Number(h.lastSeq), h.lastHash])).toEqual([
        ["org-a", 0, 3, rows[2]!.hash!],
        ["org-b", 0, 2, rows[4]!.hash!],
      ]);
      const verified = await verifyChains({ store, db: store.db, clock: systemClock }, { trustedKeys: [] });
      expect(verified.map((v) => [v.org, v.events, v.failure])).toEqual([
        ["org-a", 3, null],
        ["org-b", 2, null],
      ]);
    } finally {
      await store.close();
    }
  });
});

describe("checkpoints signed by the periodic pass", () => {
  test("announced as audit.checkpoint to the endpoint that lists it (its signature verifies with the published key), not to an unfiltered one", async () => {
    const received: { path: string; payload: { type: string; data: Record<string, unknown> } }[] = [];
    const receiver = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        received.push({ path: new URL(req.url).pathname, payload: JSON.parse(await req.text()) });
        return new Response("ok");
      },
    });
    const server = await startServer({ ...KEYED, FLAGSTAFF_AUDIT_CHECKPOINT_MS: "200", FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1", FLAGSTAFF_JOB_POLL_MS: "50" });
    try {
      const org = await server.orgClient();
      for (const [path, eventTypes] of [["/listed", ["audit.checkpoint"]], ["/unfiltered", []]] as const) {
        const r = await org.POST("/organizations/{orgSlug}/webhook-endpoints", {
          params: { path: { orgSlug: server.demo.orgSlug } },
          body: { url: `http://127.0.0.1:${receiver.port}${path}`, eventTypes: [...eventTypes] },
        });
        expect(r.response.status).toBe(201);
      }
      await report(server, server.demo, "checkpointed");
      const got = await until("a checkpoint delivered", async () => received.find((r) => r.path === "/listed" && r.payload.type === "audit.checkpoint"));
      const c = got.payload.data as { orgId: string; seq: number; heads: { lane: number; seq: number; hash: string }[]; signedAt: number; publicKey: string; signature: string };
      expect(c.seq).toBe(c.heads.reduce((n, h) => n + h.seq, 0));
      const pub = (await runCli(["audit", "public-key"], { ...server.env, ...KEYED })).stdout.match(/raw \(base64\): (\S+)/)![1]!;
      expect(c.publicKey).toBe(pub);
      const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(pub, "base64").toString("base64url") }, format: "jwk" });
      const message = JSON.stringify(["flagstaff.audit-checkpoint.v1", c.orgId, c.heads.map((h) => [h.lane, h.seq, h.hash]), c.signedAt]);
      expect(verify(null, Buffer.from(message), key, Buffer.from(c.signature, "base64"))).toBe(true);
      expect(verify(null, Buffer.from(message.replace(c.heads[0]!.hash, "0".repeat(64))), key, Buffer.from(c.signature, "base64"))).toBe(false);
      await Bun.sleep(500);
      expect(received.filter((r) => r.path === "/unfiltered").map((r) => r.payload.type)).not.toContain("audit.checkpoint");
    } finally {
      await server.dispose();
      await receiver.stop(true);
    }
  });
});

/** Every audit row of an organization (events, heads, checkpoints), to put back after a tampering. */
async function snapshotChain(server: TestServer, orgId: string): Promise<() => Promise<void>> {
  const tables = ["audit_events", "audit_chain_heads", "audit_checkpoints"];
  const db = await rawDb(server.dbPath);
  const saved = new Map<string, Record<string, unknown>[]>();
  try {
    for (const t of tables) saved.set(t, await db.all(`SELECT * FROM ${t} WHERE org_id = ?`, orgId));
  } finally {
    await db.close();
  }
  return async () => {
    const db = await rawDb(server.dbPath);
    try {
      for (const t of tables) {
        await db.run(`DELETE FROM ${t} WHERE org_id = ?`, orgId);
        for (const row of saved.get(t)!) {
          const cols = Object.keys(row);
          await db.run(`INSERT INTO ${t} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`, ...cols.map((c) => row[c]));
        }
      }
    } finally {
      await db.close();
    }
  };
}

/** An event inserted behind Flagstaff's back without a place in the chain, as an older release would leave one; its id. */
async function insertUnchained(db: { run(q: string, ...p: unknown[]): Promise<unknown> }, orgId: string, createdAt: number): Promise<string> {
  const id = `forged-${randomBytes(4).toString("hex")}`;
  await db.run(
    `INSERT INTO audit_events (id, org_id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at)
     VALUES (?, ?, NULL, 'system', NULL, 'REPORT_DISMISSED', 'report', ?, NULL, NULL, NULL, ?)`,
    id,
    orgId,
    `r-${id}`,
    createdAt,
  );
  return id;
}

describe("tampering that deletes, re-signs or slips in what the chain relies on", () => {
  let server: TestServer;
  let orgId: string;
  let dir: string;
  /** The signed checkpoints, kept outside the database as `audit checkpoint --out` appends them. */
  let kept: string;
  const LATER = { FLAGSTAFF_CLOCK_OFFSET_MS: String(2 * 3_600_000) };
  beforeAll(async () => {
    // No key in the server: the checkpoints here are the CLI's. The straggler pass runs every 200 ms.
    server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000", FLAGSTAFF_AUDIT_CHAIN_LANES: "4", FLAGSTAFF_AUDIT_CHECKPOINT_MS: "200" });
    orgId = await orgIdOf(server, server.demo.orgSlug);
    // At once, so that the chain spans several lanes: on PostgreSQL an instance claims another lane
    // only when those it holds are busy, and reports one after the other could all fall in one
    // (a lane deleted below would then leave no chain to sign a checkpoint of).
    await Promise.all(Array.from({ length: 8 }, (_, i) => report(server, server.demo, `kept-${i}`)));
    dir = mkdtempSync(join(tmpdir(), "flagstaff-checkpoints-"));
    kept = join(dir, "checkpoints.jsonl");
    expect((await runCli(["audit", "checkpoint"], { ...server.env, ...KEYED })).stdout).toContain("1 checkpoint(s) signed");
    for (let i = 0; i < 3; i++) await report(server, server.demo, `after-${i}`);
    expect((await runCli(["audit", "checkpoint"], { ...server.env, ...KEYED })).stdout).toContain("1 checkpoint(s) signed");
    // Kept outside as a receiver of audit.checkpoint keeps them: each event's data, a JSON line each.
    const db = await rawDb(server.dbPath);
    try {
      const rows = await db.all<{ org_id: string; seq: number; heads: string; signed_at: number; public_key: string; signature: string }>(
        "SELECT * FROM audit_checkpoints WHERE org_id = ? ORDER BY seq",
        orgId,
      );
      expect(rows.length).toBe(2);
      const data = rows.map((r) => ({
        orgId: r.org_id,
        seq: Number(r.seq),
        heads: (JSON.parse(r.heads) as [number, number, string][]).map(([lane, seq, hash]) => ({ lane, seq, hash })),
        signedAt: Number(r.signed_at),
        signedAtIso: new Date(Number(r.signed_at)).toISOString(),
        publicKey: r.public_key,
        signature: r.signature,
      }));
      writeFileSync(kept, data.map((d) => JSON.stringify(d) + "\n").join(""));
    } finally {
      await db.close();
    }
  });
  afterAll(async () => {
    await server?.dispose();
  });

  const verifyKept = (extra: string[] = [], env: Record<string, string> = KEYED) => verifyCli(server, ["--checkpoints", kept, ...extra], env);

  test("the checkpoints kept outside are the ones the database holds: verify checks the chain against them; the file is the audit.checkpoint events' data, and a receiver's stored payloads are read too", async () => {
    // `audit checkpoints` writes the same lines, and appends to a file only what it lacks.
    expect((await runCli(["audit", "checkpoints"], server.env)).stdout).toBe(readFileSync(kept, "utf8"));
    expect((await runCli(["audit", "checkpoints", "--out", kept], server.env)).stdout).toBe(`0 checkpoint(s) appended to ${kept} (2 already there)\n`);
    await report(server, server.demo, "one-more");
    expect((await runCli(["audit", "checkpoint", "--out", kept], { ...server.env, ...KEYED })).stdout).toContain(`1 checkpoint(s) signed; 1 appended to ${kept}`);
    const lines = readFileSync(kept, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((c) => [c.orgId, c.heads.length > 0])).toEqual([
      [orgId, true],
      [orgId, true],
      [orgId, true],
    ]);
    const ok = await verifyKept();
    expect(ok.stdout).toContain("3 checkpoint(s) (3 signature(s) checked; 3 kept outside found in it)");
    expect(ok.code).toBe(0);
    // As a webhook receiver stored them: the whole delivery body, one a line.
    const received = join(dir, "received.jsonl");
    writeFileSync(received, lines.map((data) => JSON.stringify({ type: "audit.checkpoint", timestamp: data.signedAtIso, data })).join("\n") + "\n");
    expect((await verifyCli(server, ["--checkpoints", received, "--checkpoints", kept], KEYED)).code).toBe(0);
    // A line that is no checkpoint is refused, named.
    writeFileSync(join(dir, "bad.jsonl"), `${JSON.stringify(lines[0])}\n{"type":"report.created","data":{}}\n`);
    const bad = await verifyCli(server, ["--checkpoints", join(dir, "bad.jsonl")], KEYED);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${join(dir, "bad.jsonl")}:2: not an audit checkpoint`);
  });

  test("checkpoints deleted from the database: verify fails naming the checkpoint kept outside, and, with the key configured, once events went uncovered past the interval and its grace", async () => {
    const restore = await snapshotChain(server, orgId);
    try {
      await rawSql(server, "DELETE FROM audit_checkpoints WHERE org_id = ?", orgId);
      // With the key configured: within the interval and its grace the chain still verifies; past them, it does not.
      expect((await verifyCli(server, [], KEYED)).code).toBe(0);
      const late = await verifyCli(server, [], { ...KEYED, ...LATER });
      expect(late.code).toBe(1);
      expect(late.stdout).toContain("covered by no checkpoint though written at");
      expect(late.stdout).toContain("there is no checkpoint");
      // With the checkpoints kept outside, at once.
      const missing = await verifyKept();
      expect(missing.code).toBe(1);
      expect(missing.stdout).toMatch(/DOES NOT VERIFY at the checkpoint of \S+ \(\d+ events, from .*checkpoints\.jsonl:1\): it is missing from the database: checkpoints were deleted/);
    } finally {
      await restore();
    }
    expect((await verifyKept()).code).toBe(0);
  });

  test("a lane truncated, a lane deleted, or a lane rewritten with every hash recomputed, the checkpoints deleted and signed again with the real key: each fails against the checkpoints kept outside", async () => {
    const lanes = await lanesOf(server, orgId);
    const [lane, rows] = [...lanes.entries()].sort((a, b) => b[1].length - a[1].length)[0]!;
    expect(rows.length).toBeGreaterThan(2);
    // Another lane keeps events when this one is deleted: there is still a chain to sign.
    expect(lanes.size).toBeGreaterThanOrEqual(2);
    const resign = async () => {
      await rawSql(server, "DELETE FROM audit_checkpoints WHERE org_id = ?", orgId);
      expect((await runCli(["audit", "checkpoint"], { ...server.env, ...KEYED })).stdout).toContain("1 checkpoint(s) signed");
      // The database alone now verifies, with the real key.
      expect((await verifyCli(server, [], KEYED)).code).toBe(0);
    };
    const scenarios: [string, () => Promise<void>][] = [
      [
        "truncated",
        async () => {
          const last = rows.at(-1)!;
          await rawSql(server, "DELETE FROM audit_events WHERE id = ?", last.id);
          await rawSql(server, "UPDATE audit_chain_heads SET last_seq = ?, last_hash = ? WHERE org_id = ? AND lane = ?", last.chain_seq - 1, rows.at(-2)!.hash, orgId, lane);
        },
      ],
      [
        "deleted",
        async () => {
          await rawSql(server, "DELETE FROM audit_events WHERE org_id = ? AND chain_lane = ?", orgId, lane);
          await rawSql(server, "DELETE FROM audit_chain_heads WHERE org_id = ? AND lane = ?", orgId, lane);
        },
      ],
      [
        "rewritten",
        async () => {
          const db = await rawDb(server.dbPath);
          try {
            const full = await db.all<Record<string, unknown>>("SELECT * FROM audit_events WHERE org_id = ? AND chain_lane = ? ORDER BY chain_seq", orgId, lane);
            let prev = "0".repeat(64);
            for (const [i, r] of full.entries()) {
              const data = i === 0 ? JSON.stringify({ note: "rewritten" }) : ((r.data as string | null) ?? null);
              const hash = chainHash(prev, eventDigest({
                orgId, id: String(r.id), projectId: (r.project_id as string | null) ?? null, actorType: String(r.actor_type), actorId: (r.actor_id as string | null) ?? null,
                action: String(r.action), entityType: String(r.entity_type), entityId: String(r.entity_id), before: (r.before as string | null) ?? null,
                after: (r.after as string | null) ?? null, data, createdAt: Number(r.created_at),
              }));
              await db.run("UPDATE audit_events SET data = ?, prev_hash = ?, hash = ? WHERE id = ?", data, prev, hash, r.id);
              prev = hash;
            }
            await db.run("UPDATE audit_chain_heads SET last_hash = ? WHERE org_id = ? AND lane = ?", prev, orgId, lane);
          } finally {
            await db.close();
          }
        },
      ],
    ];
    for (const [what, tamper] of scenarios) {
      const restore = await snapshotChain(server, orgId);
      try {
        await tamper();
        await resign();
        const bad = await verifyKept();
        expect({ what, code: bad.code }).toEqual({ what, code: 1 });
        expect(bad.stdout).toMatch(/DOES NOT VERIFY at the checkpoint of \S+ \(\d+ events, from .*checkpoints\.jsonl:\d\): (it is missing from the database|the database's checkpoint of \d+ events differs from it)/);
      } finally {
        await restore();
      }
      expect((await verifyKept()).code).toBe(0);
    }
  });

  test("a checkpoint signed again with another key fails, with the configured key and with --public-key, instead of a note", async () => {
    const restore = await snapshotChain(server, orgId);
    const pub = (await runCli(["audit", "public-key"], { ...server.env, ...KEYED })).stdout.match(/raw \(base64\): (\S+)/)![1]!;
    const other = generateKeyPairSync("ed25519");
    const otherPub = (other.publicKey.export({ format: "der", type: "spki" }) as Buffer).subarray(12).toString("base64");
    try {
      // The newest checkpoint, signed again as it is with another key (the attacker's).
      const db = await rawDb(server.dbPath);
      try {
        const [c] = await db.all<{ id: string; heads: string; signed_at: number }>("SELECT id, heads, signed_at FROM audit_checkpoints WHERE org_id = ? ORDER BY seq DESC", orgId);
        const message = JSON.stringify(["flagstaff.audit-checkpoint.v1", orgId, JSON.parse(c!.heads), Number(c!.signed_at)]);
        await db.run("UPDATE audit_checkpoints SET public_key = ?, signature = ? WHERE id = ?", otherPub, sign(null, Buffer.from(message), other.privateKey).toString("base64"), c!.id);
      } finally {
        await db.close();
      }
      for (const [how, args, env] of [
        ["the configured key", [], KEYED],
        ["--public-key", ["--public-key", pub], {}],
      ] as const) {
        const bad = await verifyCli(server, [...args], env);
        expect({ how, code: bad.code }).toEqual({ how, code: 1 });
        expect(bad.stdout).toMatch(/DOES NOT VERIFY at the checkpoint of \S+ \(\d+ events, from the database\): it is signed by the key \S+, which is not a trusted key/);
        expect(bad.stdout).toContain(otherPub);
      }
      // The other key given as the one to trust: the checkpoints of the real key are the ones refused.
      expect((await verifyCli(server, ["--public-key", otherPub], KEYED)).stdout).toContain(`it is signed by the key ${pub}, which is not a trusted key`);
      // With no trusted key at all, nothing is checked, and the output says so.
      const unchecked = await verifyCli(server);
      expect(unchecked.code).toBe(0);
      expect(unchecked.stdout).toContain("3 checkpoint signature(s) not checked: no trusted key");
    } finally {
      await restore();
    }
    expect((await verifyCli(server, ["--public-key", pub])).code).toBe(0);
  });

  test("an event slipped in without a place in the chain, back-dated or not, is named by verify and never chained: not by `audit checkpoint`, not by the server's passes", async () => {
    const db = await rawDb(server.dbPath);
    let backDated: string;
    let recent: string;
    try {
      const { oldest } = (await db.get<{ oldest: number }>("SELECT min(created_at) AS oldest FROM audit_events WHERE org_id = ?", orgId))!;
      backDated = await insertUnchained(db, orgId, Number(oldest) - 86_400_000);
      recent = await insertUnchained(db, orgId, Date.now());
    } finally {
      await db.close();
    }
    try {
      // Before, `audit checkpoint` chained them and signed them: verify then exited 0.
      expect((await runCli(["audit", "checkpoint"], { ...server.env, ...KEYED })).code).toBe(0);
      await Bun.sleep(1_000); // several passes of the server's straggler pass (every 200 ms)
      const bad = await verifyCli(server, [], KEYED);
      expect(bad.code).toBe(1);
      expect(bad.stdout).toContain(`DOES NOT VERIFY at event ${backDated} (not chained, REPORT_DISMISSED): it has no place in the chain (2 such event(s), this the oldest`);
      expect(bad.stdout).toContain(TEST_ENGINE === "postgres" ? "it is dated before " : "on SQLite an event is chained as it is written");
      const db2 = await rawDb(server.dbPath);
      try {
        const left = await db2.all<{ id: string; chain_seq: number | null }>("SELECT id, chain_seq FROM audit_events WHERE id IN (?, ?) ORDER BY created_at", backDated, recent);
        expect(left).toEqual([
          { id: backDated, chain_seq: null },
          { id: recent, chain_seq: null },
        ]);
        await db2.run("DELETE FROM audit_events WHERE id = ?", backDated);
      } finally {
        await db2.close();
      }
      const still = await verifyCli(server, [], KEYED);
      expect(still.code).toBe(1);
      expect(still.stdout).toContain(`DOES NOT VERIFY at event ${recent} (not chained, REPORT_DISMISSED)`);
      expect(still.stdout).toContain(TEST_ENGINE === "postgres" ? "only when an instance of a release before the chain wrote it during a rolling upgrade" : "on SQLite");
    } finally {
      await rawSql(server, "DELETE FROM audit_events WHERE id IN (?, ?)", backDated, recent);
    }
    expect((await verifyCli(server, [], KEYED)).code).toBe(0);
  });

  // An instance of a release before the chain (application_name `flagstaff`) writing beside this one.
  test.skipIf(TEST_ENGINE !== "postgres")("events an instance of a release before the chain wrote are chained after lane 0's head within seconds of its last session's end, never while it is connected; one it dated before lane 0's head never is", async () => {
    const { url } = await databaseForPath(server.dbPath);
    const older = postgresClient(url, 1, { application_name: "flagstaff" });
    const write = (createdAt: number) => insertUnchained({ run: (q: string, ...p: unknown[]) => older.unsafe(q.replace(/\?/g, ((n) => () => `$${++n}`)(0)), p as never[]) }, orgId, createdAt);
    let straggler: string;
    let backDated: string;
    const chainSeqOf = async (id: string) => {
      const db = await rawDb(server.dbPath);
      try {
        return (await db.get<{ chain_lane: number; chain_seq: number | null }>("SELECT chain_lane, chain_seq FROM audit_events WHERE id = ?", id))!;
      } finally {
        await db.close();
      }
    };
    const headBefore = (await chainOf(server, orgId)).filter((r) => r.chain_lane === 0).length;
    try {
      straggler = await write(Date.now());
      backDated = await write(Date.now() - 30 * 86_400_000);
      await Bun.sleep(1_000); // passes every 200 ms: it waits while the older instance is connected
      expect((await chainSeqOf(straggler)).chain_seq).toBeNull();
      const waiting = await verifyCli(server, [], KEYED);
      expect(waiting.code).toBe(1);
      expect(waiting.stdout).toContain(`event ${backDated} (not chained`);
    } finally {
      await older.end({ timeout: 5 });
    }
    const chained = await until("the straggler chained", async () => ((await chainSeqOf(straggler!)).chain_seq !== null ? chainSeqOf(straggler!) : null), 5_000);
    expect(chained).toEqual({ chain_lane: 0, chain_seq: headBefore + 1 });
    expect((await chainSeqOf(backDated!)).chain_seq).toBeNull();
    const named = await verifyCli(server, [], KEYED);
    expect(named.code).toBe(1);
    expect(named.stdout).toContain(`DOES NOT VERIFY at event ${backDated!} (not chained, REPORT_DISMISSED): it has no place in the chain (1 such event(s)`);
    expect(named.stdout).toContain("it is dated before ");
    await rawSql(server, "DELETE FROM audit_events WHERE id = ?", backDated!);
    // The window closed with the chaining: an event slipped in now stays out.
    const late = await insertUnchained({ run: (q: string, ...p: unknown[]) => rawSql(server, q, ...p) }, orgId, Date.now());
    await Bun.sleep(1_000);
    expect((await chainSeqOf(late)).chain_seq).toBeNull();
    await rawSql(server, "DELETE FROM audit_events WHERE id = ?", late);
    expect((await runCli(["audit", "checkpoint", "--out", kept], { ...server.env, ...KEYED })).code).toBe(0);
    expect((await verifyKept()).code).toBe(0);
  });
});
