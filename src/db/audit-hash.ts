import { sql, type SQL } from "drizzle-orm";
import type { Db } from "./client.ts";
import { param, statements } from "./prepared.ts";
import { auditChainHeads } from "./schema.ts";
import { connectionOf, type Store } from "./store.ts";
import { AUDIT_CHAIN_GENESIS, auditEventCanonical, type ChainedEventFields } from "../domain/views/audit-chain.ts";

/**
 * The audit chain's hashes (the canonical forms are src/domain/views/audit-chain.ts's; docs/audit.md
 * says how to recompute them), and the data step of the migration that chains the events written
 * before the chain existed.
 */
// Bun's own SHA-256 (the same digest as node:crypto's, which scripts/verify-audit-export.mjs uses),
// at less than half the cost per call: every audit event is hashed twice on the write path.
export const sha256Hex = (text: string): string => Bun.SHA256.hash(text, "hex");

/** SHA-256 hex of the event's canonical form. */
export const eventDigest = (e: Omit<ChainedEventFields, "seq" | "lane">): string => sha256Hex(auditEventCanonical(e));

/** An event's hash: SHA-256 hex of the previous event's hash followed by this one's digest. */
export const chainHash = (prevHash: string, digest: string): string => sha256Hex(prevHash + digest);

/** An audit event as written, before the chain gives it its place (lane and sequence). */
export type UnchainedEvent = Omit<ChainedEventFields, "seq" | "lane">;

/**
 * Appends one organization's events to a lane of its chain, inside the transaction, just
 * before its COMMIT (src/domain/core/audit.ts defers them there and names the entity's lane,
 * `lane` of `lanes`). The digests are computed here, before any lock.
 * - PostgreSQL: a lane this instance holds (src/db/audit-lanes-pg.ts; `lane` when it is one of
 *   them), its head known here: the events are hashed here and sent with the head's move as
 *   statements that travel with the COMMIT (Store.atCommit), so the chain adds no round trip
 *   and the database only inserts the rows and moves the head. The lane is given back when the transaction ended.
 *   When no lane can be held, one call of flagstaff_audit_append (migrations 0023_audit_chain,
 *   0027_audit_chain_advisory_lanes) appends in the database, from lane 0.
 * - SQLite (one writer at a time: the lock is the store's own): the head is read, the hashes
 *   are computed here, the events and the head are written there and then (the flush runs just
 *   before the COMMIT).
 */
export async function appendToChain(store: Store, orgId: string, lane: number, lanes: number, events: UnchainedEvent[]): Promise<void> {
  const digests = events.map(eventDigest);
  const db = store.db;
  if (store.pgChain) {
    const pg = store.pgChain;
    const held = await pg.lanes.take(orgId, lane, lanes);
    if (held) {
      let seq = held.seq;
      let prevHash = held.hash;
      const rows = events.map((e, i) => {
        seq += 1;
        const hash = chainHash(prevHash, digests[i]!);
        const row = [e.id, e.projectId, e.actorType, e.actorId, e.action, e.entityType, e.entityId, e.before, e.after, e.data, e.createdAt, seq, prevHash, hash];
        prevHash = hash;
        return row;
      });
      const head = { seq, hash: prevHash };
      pg.afterEnd((committed) => pg.lanes.give(held, committed ? head : null));
      const sent: PromiseLike<unknown>[] = [];
      for (let at = 0; at < rows.length; at += PG_ROWS_PER_INSERT) {
        const chunk = rows.slice(at, at + PG_ROWS_PER_INSERT);
        const last = at + PG_ROWS_PER_INSERT >= rows.length;
        sent.push(pg.send(pgInsertEvents(chunk.length, !last ? "none" : held.stored ? "update" : "insert"), [orgId, held.lane, ...chunk.flat()]));
      }
      await store.atCommit(...(sent as Promise<unknown>[]));
      return;
    }
    const col = <K extends keyof UnchainedEvent>(k: K) => sql.param(events.map((e) => e[k]));
    await store.atCommit(
      executeOnPg(store, sql`SELECT flagstaff_audit_append(${orgId}, 0, ${col("id")}::text[], ${col("projectId")}::text[], ${col("actorType")}::text[], ${col("actorId")}::text[],
        ${col("action")}::text[], ${col("entityType")}::text[], ${col("entityId")}::text[], ${col("before")}::text[], ${col("after")}::text[], ${col("data")}::text[],
        ${col("createdAt")}::bigint[], ${sql.param(digests)}::text[])`),
    );
    return;
  }
  // SQLite runs each statement in this thread at once: plain bun:sqlite statements, compiled once
  // per connection (`query` caches them), without the query builder's per-call work, since
  // intake writes a few events per report (docs/audit.md, "Cost").
  const client = connectionOf(db).$client;
  const head = client.query<{ last_seq: number; last_hash: string }, [string, number]>(SQLITE_READ_HEAD).get(orgId, lane);
  const insert = client.query(SQLITE_INSERT_EVENT);
  let seq = Number(head?.last_seq ?? 0);
  let prevHash = head?.last_hash ?? AUDIT_CHAIN_GENESIS;
  events.forEach((e, i) => {
    seq += 1;
    const hash = chainHash(prevHash, digests[i]!);
    insert.run(e.id, e.orgId, e.projectId, e.actorType, e.actorId, e.action, e.entityType, e.entityId, e.before, e.after, e.data, e.createdAt, lane, seq, prevHash, hash);
    prevHash = hash;
  });
  client.query(SQLITE_WRITE_HEAD).run(orgId, lane, seq, prevHash);
}

/**
 * Takes a lane of an organization's chain for the rest of the transaction, before its head is
 * read: on PostgreSQL the lane's advisory lock (flagstaff_audit_lock_lane, migration
 * 0027_audit_chain_advisory_lanes), which flagstaff_audit_append takes too, waiting for the
 * transaction that holds it; on SQLite the store's one writer already keeps the lane.
 */
export async function takeLane(store: Store, orgId: string, lane: number): Promise<void> {
  if (store.engine !== "postgres") return;
  await executeOnPg(store, sql`SELECT flagstaff_audit_lock_lane(${orgId}, ${lane}::integer, true)`);
}

/**
 * The application_name the releases before the chain give their PostgreSQL sessions; this one and
 * later ones give `flagstaff VERSION` (src/db/store-pg.ts), so that an instance of a release that
 * writes events without a chain position is told apart from the others.
 */
export const PRE_CHAIN_APPLICATION_NAME = "flagstaff";

/**
 * How many sessions of an instance of a release before the chain are connected to this database
 * now (PostgreSQL; pg_stat_activity shows every session's application_name to every role). 0 on SQLite.
 */
export async function preChainSessions(store: Store): Promise<number> {
  if (store.engine !== "postgres") return 0;
  const rows = (await executeOnPg(
    store,
    sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = ${PRE_CHAIN_APPLICATION_NAME}`,
  )) as Iterable<{ n: number }>;
  return Number([...rows][0]?.n ?? 0);
}

// The domain's handle is typed as SQLite's; PostgreSQL's runs a statement with `execute`.
const executeOnPg = (store: Store, q: SQL): Promise<unknown> => (store.db as unknown as { execute(q: SQL): Promise<unknown> }).execute(q);

/** Events per INSERT on PostgreSQL: a few statement shapes per connection, far below the 65,535 parameters of one. */
const PG_ROWS_PER_INSERT = 64;
/** Columns of an event sent per row ($1 and $2 are the organization and the lane, shared by the rows). */
const PG_EVENT_COLUMNS = 14;
const pgInsertTexts = new Map<string, string>();

/**
 * The INSERT of `count` events of one lane, and with `head` the head's move in the same statement
 * (a data-modifying WITH), its sequence and hash the last row's parameters: an UPDATE, or the
 * lane's first head row.
 */
export function pgInsertEvents(count: number, head: "none" | "update" | "insert"): string {
  const key = `${count}:${head}`;
  let text = pgInsertTexts.get(key);
  if (text) return text;
  const values = Array.from({ length: count }, (_, r) => {
    const p = (c: number) => `$${3 + r * PG_EVENT_COLUMNS + c}`;
    return `(${p(0)}, $1, ${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)}, ${p(9)}, ${p(10)}, $2, ${p(11)}, ${p(12)}, ${p(13)})`;
  });
  const insert = `INSERT INTO audit_events (id, org_id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at, chain_lane, chain_seq, prev_hash, hash) VALUES ${values.join(", ")}`;
  const lastRow = 3 + (count - 1) * PG_EVENT_COLUMNS;
  const [seq, hash] = [`$${lastRow + 11}`, `$${lastRow + 13}`];
  text =
    head === "update"
      ? `WITH events AS (${insert}) UPDATE audit_chain_heads SET last_seq = ${seq}, last_hash = ${hash} WHERE org_id = $1 AND lane = $2`
      : head === "insert"
        ? `WITH events AS (${insert}) INSERT INTO audit_chain_heads (org_id, lane, last_seq, last_hash) VALUES ($1, $2, ${seq}, ${hash}) ON CONFLICT (org_id, lane) DO UPDATE SET last_seq = excluded.last_seq, last_hash = excluded.last_hash`
        : insert;
  pgInsertTexts.set(key, text);
  return text;
}

// SQLite's transaction already holds the database's one write lock (BEGIN IMMEDIATE, every
// process), so the head is read with a plain SELECT and written once, at the end (created with
// the lane's first event).
const SQLITE_READ_HEAD = "SELECT last_seq, last_hash FROM audit_chain_heads WHERE org_id = ? AND lane = ?";
const SQLITE_INSERT_EVENT = `INSERT INTO audit_events (id, org_id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at, chain_lane, chain_seq, prev_hash, hash)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const SQLITE_WRITE_HEAD = `INSERT INTO audit_chain_heads (org_id, lane, last_seq, last_hash) VALUES (?1, ?2, ?3, ?4)
  ON CONFLICT (org_id, lane) DO UPDATE SET last_seq = excluded.last_seq, last_hash = excluded.last_hash`;

/**
 * The head of a lane of an organization's chain, locked until COMMIT: an upsert (ON CONFLICT DO
 * UPDATE locks the row it meets, and creates the head of the lane's first event), one round trip.
 * Take the lane first (takeLane): on PostgreSQL the appends hold the lane, not the row.
 */
export const lockHead = statements((db) =>
  db
    .insert(auditChainHeads)
    .values({ orgId: param("orgId"), lane: param("lane"), lastSeq: 0, lastHash: param("genesis") })
    .onConflictDoUpdate({ target: [auditChainHeads.orgId, auditChainHeads.lane], set: { lastSeq: sql`${auditChainHeads.lastSeq}` } })
    .returning({ lastSeq: auditChainHeads.lastSeq, lastHash: auditChainHeads.lastHash })
    .prepare(),
);

export const moveHead = statements((db) =>
  db
    .update(auditChainHeads)
    .set({ lastSeq: param("lastSeq"), lastHash: param("lastHash") })
    .where(sql`${auditChainHeads.orgId} = ${sql.placeholder("orgId")} AND ${auditChainHeads.lane} = ${sql.placeholder("lane")}`)
    .prepare(),
);

/** Rows of the backfill read and written per statement. */
const BACKFILL_PAGE = 5_000;

interface StoredRow {
  id: string;
  org_id: string;
  chain_seq: number;
  project_id: string | null;
  actor_type: string;
  actor_id: string | null;
  action: string;
  entity_type: string;
  entity_id: string;
  before: string | null;
  after: string | null;
  data: string | null;
  created_at: number;
}

// The events that exist before the chain all go to lane 0.
const fieldsOf = (r: StoredRow): ChainedEventFields => ({
  orgId: r.org_id,
  lane: 0,
  seq: Number(r.chain_seq),
  id: r.id,
  projectId: r.project_id,
  actorType: r.actor_type,
  actorId: r.actor_id,
  action: r.action,
  entityType: r.entity_type,
  entityId: r.entity_id,
  before: r.before,
  after: r.after,
  data: r.data,
  createdAt: Number(r.created_at),
});

const NUMBER_SQL = sql`UPDATE audit_events SET chain_seq = o.seq FROM (SELECT id, row_number() OVER (PARTITION BY org_id ORDER BY created_at, id) AS seq FROM audit_events) AS o WHERE audit_events.id = o.id`;

const pageSql = (after: { org: string; seq: number } | null) =>
  sql`SELECT id, org_id, chain_seq, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at FROM audit_events
      WHERE chain_seq IS NOT NULL ${after ? sql`AND (org_id > ${after.org} OR (org_id = ${after.org} AND chain_seq > ${after.seq}))` : sql``}
      ORDER BY org_id, chain_seq LIMIT ${BACKFILL_PAGE}`;

type Heads = Map<string, { seq: number; hash: string }>;

/** Hashes one page in chain order, each organization's previous hash carried in `heads`. */
function hashPage(page: StoredRow[], heads: Heads): { id: string; prevHash: string; hash: string }[] {
  return page.map((r) => {
    const f = fieldsOf(r);
    const prevHash = heads.get(f.orgId)?.hash ?? AUDIT_CHAIN_GENESIS;
    const hash = chainHash(prevHash, eventDigest(f));
    heads.set(f.orgId, { seq: f.seq, hash });
    return { id: f.id, prevHash, hash };
  });
}

const lastOf = (page: StoredRow[]) => ({ org: page.at(-1)!.org_id, seq: Number(page.at(-1)!.chain_seq) });

/*
 * The data step of migration 0033_audit_chain (SQLite) / 0023_audit_chain (PostgreSQL), in the
 * migration's transaction, chaining the events that exist: each organization's events in order
 * (created_at, id) are numbered 1, 2, 3… in lane 0 (one UPDATE; the column's default is 0), then read in pages of BACKFILL_PAGE rows
 * in chain order (the new unique index), hashed here, the previous hash carried from page to
 * page, and written back; last, each organization's head. Memory stays one page whatever the
 * number of events; the time is that of reading and rewriting each event twice (docs/audit.md,
 * "Upgrading").
 */

/** SQLite (bun:sqlite, synchronous, inside the migrator's transaction). */
export function chainExistingEventsSqlite(db: Db): number {
  const update = db.$client.prepare("UPDATE audit_events SET prev_hash = ?, hash = ? WHERE id = ?");
  db.run(NUMBER_SQL);
  const heads: Heads = new Map();
  let after: { org: string; seq: number } | null = null;
  let count = 0;
  for (;;) {
    const page = db.all(pageSql(after)) as StoredRow[];
    if (!page.length) break;
    for (const r of hashPage(page, heads)) update.run(r.prevHash, r.hash, r.id);
    count += page.length;
    after = lastOf(page);
  }
  for (const [orgId, head] of heads) db.run(sql`INSERT INTO audit_chain_heads (org_id, lane, last_seq, last_hash) VALUES (${orgId}, 0, ${head.seq}, ${head.hash})`);
  return count;
}

/** PostgreSQL, inside the migrator's transaction. */
export async function chainExistingEventsPg(tx: { execute(q: SQL): Promise<unknown> }): Promise<void> {
  const rowsOf = async (q: SQL) => [...((await tx.execute(q)) as Iterable<StoredRow>)];
  await tx.execute(NUMBER_SQL);
  const heads: Heads = new Map();
  let after: { org: string; seq: number } | null = null;
  for (;;) {
    const page = await rowsOf(pageSql(after));
    if (!page.length) break;
    const rows = hashPage(page, heads);
    await tx.execute(
      sql`UPDATE audit_events AS a SET prev_hash = u.prev_hash, hash = u.hash
          FROM unnest(${sql.param(rows.map((r) => r.id))}::text[], ${sql.param(rows.map((r) => r.prevHash))}::text[], ${sql.param(rows.map((r) => r.hash))}::text[]) AS u(id, prev_hash, hash)
          WHERE a.id = u.id`,
    );
    after = lastOf(page);
  }
  for (const [orgId, head] of heads) await tx.execute(sql`INSERT INTO audit_chain_heads (org_id, lane, last_seq, last_hash) VALUES (${orgId}, 0, ${head.seq}, ${head.hash})`);
}
