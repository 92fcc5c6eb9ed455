import type { Database } from "bun:sqlite";
import { AUDIT_CHAIN_GENESIS } from "../domain/views/audit-chain.ts";
import { appendOrder, checkLaneCount, type ChainAppender } from "./audit-append.ts";
import { chainHash, eventDigest } from "./audit-hash.ts";
import { slicer } from "../domain/plumbing/event-loop.ts";

/**
 * The audit chain's append on SQLite (src/db/audit-append.ts). One writer at a time: the
 * store's lock already serialises, and every write transaction holds the database's write lock
 * from its `BEGIN IMMEDIATE`, so each organization's lane is its entity's (laneOf) and nobody
 * else can write it. Per organization: a plain SELECT reads the lane's head, the hashes are
 * computed here, the events are inserted and the head written once (an upsert, which creates it
 * with the lane's first event), as plain bun:sqlite statements compiled once per connection
 * (`query` caches them), without the query builder's per-call work, since intake writes a few
 * events per report (docs/audit.md, "Cost"). A group commit of reports (src/db/group-commit.ts) is
 * one transaction: its events are chained by one read and one write of each head.
 *
 * A transaction of many events (a decision on a pile-on of 40,000 reports writes one a report:
 * about 300 ms of inserts) gives the event loop back between two once a slice has run its time
 * (src/domain/plumbing/event-loop.ts): its transaction, and so the write lock, stays held, but reads
 * and health probes go on meanwhile.
 *
 * `writer`: the store's writing connection, whose transaction is open when `append` runs.
 */
export function sqliteChainAppender(writer: Database, lanes: number): ChainAppender {
  checkLaneCount(lanes);
  return {
    async append(events) {
      for (const { orgId, lane, events: list } of appendOrder(events, lanes)) {
        const head = writer.query<{ last_seq: number; last_hash: string }, [string, number]>(READ_HEAD).get(orgId, lane);
        const insert = writer.query(INSERT_EVENT);
        let seq = Number(head?.last_seq ?? 0);
        let prevHash = head?.last_hash ?? AUDIT_CHAIN_GENESIS;
        const slices = slicer();
        for (const e of list) {
          if (slices.due()) await slices.breathe();
          seq += 1;
          const hash = chainHash(prevHash, eventDigest(e));
          insert.run(e.id, e.orgId, e.projectId, e.actorType, e.actorId, e.action, e.entityType, e.entityId, e.before, e.after, e.data, e.createdAt, lane, seq, prevHash, hash);
          prevHash = hash;
        }
        writer.query(WRITE_HEAD).run(orgId, lane, seq, prevHash);
      }
    },
    async close() {},
  };
}

// The transaction already holds the database's one write lock (BEGIN IMMEDIATE, every process),
// so the head is read with a plain SELECT and written once, at the end (created with the lane's
// first event).
const READ_HEAD = "SELECT last_seq, last_hash FROM audit_chain_heads WHERE org_id = ? AND lane = ?";
const INSERT_EVENT = `INSERT INTO audit_events (id, org_id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at, chain_lane, chain_seq, prev_hash, hash)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const WRITE_HEAD = `INSERT INTO audit_chain_heads (org_id, lane, last_seq, last_hash) VALUES (?1, ?2, ?3, ?4)
  ON CONFLICT (org_id, lane) DO UPDATE SET last_seq = excluded.last_seq, last_hash = excluded.last_hash`;
