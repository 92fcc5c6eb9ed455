import { sql, type SQL } from "drizzle-orm";
import { appendOrder, checkLaneCount, type ChainAppender, type UnchainedEvent } from "./audit-append.ts";
import { chainHash, eventDigest } from "./audit-hash.ts";
import { slicer } from "../domain/plumbing/event-loop.ts";
import type { AuditLanes } from "./audit-lanes-pg.ts";

/**
 * What the append uses of the PostgreSQL store's current transaction (src/db/store-pg.ts gives
 * it; every member runs inside a transaction).
 */
export interface PgTransactionAccess {
  /** A statement sent as is (prepared) on the current transaction's connection, for `atCommit`. */
  send(text: string, params: unknown[]): PromiseLike<unknown>;
  /** A query built with Drizzle's `sql`, run on the current transaction's connection. */
  execute(query: SQL): Promise<unknown>;
  /** Writes awaited with the end of the transaction, travelling with its COMMIT (Store.atCommit). */
  atCommit(...work: Promise<unknown>[]): Promise<void>;
  /** Runs `fn` once the outermost transaction ended, with how (TransactionEnd). */
  afterEnd(fn: (end: TransactionEnd) => void): void;
}

/** How a transaction ended, for the lanes it took. */
export interface TransactionEnd {
  /** It committed (false: it did not, or may not have). */
  committed: boolean;
  /**
   * It failed on the chain's unique index (AUDIT_CHAIN_INDEX): another writer's event was at a
   * place it took, so a lane this instance holds was written behind its back.
   */
  chainRaced: boolean;
}

/** The unique index (org_id, chain_lane, chain_seq) of audit_events (src/db/tables.ts). */
export const AUDIT_CHAIN_INDEX = "audit_chain_idx";

/**
 * The audit chain's append on PostgreSQL (src/db/audit-append.ts), for each organization of the
 * transaction:
 * - on a lane this instance holds (audit-lanes-pg.ts; its entity's lane when it holds that one
 *   and it is free), its head known here: the events are hashed here and sent with the head's
 *   move as statements that travel with the COMMIT (`atCommit`), so the chain adds no round trip
 *   and the database only inserts the rows and moves the head. The lane is given back when the
 *   transaction ended, moved when it committed, else to be read again before its next use (and
 *   every lane of the organization this instance holds too, when the transaction met another
 *   writer's event in the lane: the unique index AUDIT_CHAIN_INDEX).
 * - when no lane can be held (every one held by other instances, or this instance's most
 *   reached), one call of flagstaff_audit_append (migrations 0023_audit_chain,
 *   0027_audit_chain_advisory_lanes) appends in the database, from lane 0, with the COMMIT too.
 * The digests are computed here first, before any lock. A transaction of many events (a decision
 * on a pile-on writes one a report) hashes them in slices, the event loop given back between two
 * (src/domain/plumbing/event-loop.ts): 12,000 events held it about 25 ms in one piece.
 */
export function pgChainAppender(tx: PgTransactionAccess, lanes: AuditLanes, laneCount: number): ChainAppender {
  checkLaneCount(laneCount);

  async function appendOne(orgId: string, lane: number, events: UnchainedEvent[]): Promise<void> {
    const slices = slicer();
    const digests: string[] = [];
    for (const e of events) {
      if (slices.due()) await slices.breathe();
      digests.push(eventDigest(e));
    }
    const held = await lanes.take(orgId, lane, laneCount);
    if (held) {
      let seq = held.seq;
      let prevHash = held.hash;
      const rows: unknown[][] = [];
      for (const [i, e] of events.entries()) {
        if (slices.due()) await slices.breathe();
        seq += 1;
        const hash = chainHash(prevHash, digests[i]!);
        rows.push([e.id, e.projectId, e.actorType, e.actorId, e.action, e.entityType, e.entityId, e.before, e.after, e.data, e.createdAt, seq, prevHash, hash]);
        prevHash = hash;
      }
      const head = { seq, hash: prevHash };
      tx.afterEnd(({ committed, chainRaced }) => {
        lanes.give(held, committed ? head : null);
        // Met another writer's event: every lane of the organization it holds is read again
        // before its next use, not only this one (audit-lanes-pg.ts, suspect).
        if (chainRaced) lanes.suspect(orgId);
      });
      const sent: PromiseLike<unknown>[] = [];
      for (let at = 0; at < rows.length; at += PG_ROWS_PER_INSERT) {
        const chunk = rows.slice(at, at + PG_ROWS_PER_INSERT);
        const last = at + PG_ROWS_PER_INSERT >= rows.length;
        sent.push(tx.send(pgInsertEvents(chunk.length, !last ? "none" : held.stored ? "update" : "insert"), [orgId, held.lane, ...chunk.flat()]));
      }
      await tx.atCommit(...(sent as Promise<unknown>[]));
      return;
    }
    const col = <K extends keyof UnchainedEvent>(k: K) => sql.param(events.map((e) => e[k]));
    await tx.atCommit(
      tx.execute(sql`SELECT flagstaff_audit_append(${orgId}, 0, ${col("id")}::text[], ${col("projectId")}::text[], ${col("actorType")}::text[], ${col("actorId")}::text[],
        ${col("action")}::text[], ${col("entityType")}::text[], ${col("entityId")}::text[], ${col("before")}::text[], ${col("after")}::text[], ${col("data")}::text[],
        ${col("createdAt")}::bigint[], ${sql.param(digests)}::text[])`),
    );
  }

  return {
    async append(events) {
      for (const { orgId, lane, events: list } of appendOrder(events, laneCount)) await appendOne(orgId, lane, list);
    },
    close: () => lanes.close(),
  };
}

/** Events per INSERT: a few statement shapes per connection, far below the 65,535 parameters of one. */
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
