import type postgres from "postgres";
import { AUDIT_CHAIN_GENESIS } from "../domain/views/audit-chain.ts";

/**
 * The lanes of the audit chain this instance holds, on PostgreSQL (docs/audit.md, "Lanes").
 *
 * An instance claims a lane of an organization's chain with a session-level advisory lock on
 * (hashtext(org id), lane), the key flagstaff_audit_append and flagstaff_audit_lock_lane take
 * (migration 0027_audit_chain_advisory_lanes), held on a connection of its own. While it holds
 * it, no other instance and no other transaction writes that lane, so the instance keeps the
 * lane's head (sequence and hash) in memory: a transaction takes a free lane here, without a
 * round trip, hashes its events, and sends them with the head's move as one statement that
 * travels with its COMMIT (pgChainAppender, src/db/audit-append-pg.ts). The database then does what it
 * did before the chain (an INSERT) plus the head's UPDATE, and no hashing or PL/pgSQL.
 *
 * - A lane is one transaction's at a time, from its take to the end of the transaction: given
 *   back moved when it committed, else marked stale, its head read again (waiting for the row
 *   lock of a COMMIT whose outcome this instance never learnt) before the next take.
 * - Lanes are claimed only when every lane this instance holds for the organization is busy,
 *   so an instance holds about as many as its concurrent writes, and lanes left idle for
 *   LANE_IDLE_MS are unlocked (the lock table is shared memory: many organizations × lanes).
 * - Lane 0 is never claimed: it is the lane of the straggler pass and of the fallback, an
 *   append through flagstaff_audit_append when no lane can be claimed (every lane held by
 *   other instances, or MAX_LANES_HELD reached).
 * - The locks live as long as the connection: it is checked every WATCH_MS (its backend pid),
 *   and when it was lost (PostgreSQL restarted, the network cut), every lane is dropped and
 *   claimed again. In the moment before that is noticed, another instance may have claimed a
 *   lane and written it: the unique index audit_chain_idx (org, lane, seq) refuses the second
 *   event at a sequence, the transaction runs again (store-pg.ts, RACED_UNIQUE_INDEXES), so a
 *   lane never forks.
 * - A lane found written behind this instance's back is a sign that any other lane it holds of
 *   that organization may have been too (the lost lock was the session's, not the lane's): every
 *   one is marked stale (`suspect`), each head read again before its next use, so the
 *   transaction's next attempt does not meet another lane written behind, and its attempts
 *   (store-pg.ts, MAX_TRANSACTION_ATTEMPTS) are not spent one stale lane at a time.
 */

/** A lane held for one transaction. */
export interface HeldLane {
  readonly orgId: string;
  readonly lane: number;
  /** The lane's head as last committed. */
  readonly seq: number;
  readonly hash: string;
  /** Whether its row of audit_chain_heads exists (else the append creates it). */
  readonly stored: boolean;
}

export interface AuditLanes {
  /**
   * A lane of `orgId`'s chain for the current transaction: a free one this instance holds
   * (`preferred` when it is one of them), else one claimed now; null when none can be had.
   * Give it back with `give` once the transaction ended, whatever its outcome.
   */
  take(orgId: string, preferred: number, lanes: number): Promise<HeldLane | null>;
  /** The lane back: moved to `to` when its transaction committed, null when it did not (or may not have). */
  give(held: HeldLane, to: { seq: number; hash: string } | null): void;
  /**
   * Every lane of `orgId` this instance holds, busy or not, is to be read again before its next
   * use: one of them was found written by another writer (its transaction met audit_chain_idx).
   */
  suspect(orgId: string): void;
  close(): Promise<void>;
}

/** Lanes unused this long are unlocked. */
export const LANE_IDLE_MS = 30_000;
/** How often the connection's session and the idle lanes are checked. */
const WATCH_MS = 2_000;
/** Most lanes one instance holds, over every organization (each is an entry of the lock table). */
export const MAX_LANES_HELD = 1_024;

interface Lane {
  orgId: string;
  lane: number;
  seq: number;
  hash: string;
  stored: boolean;
  busy: boolean;
  /** Its head must be read again before it is used (a transaction on it ended without a known outcome). */
  stale: boolean;
  lastUsed: number;
  /** The session the lock was taken on: a lane of a lost session is dropped when given back. */
  session: number;
}

interface LaneRef extends HeldLane {
  readonly of: Lane;
}

const CLAIM = "SELECT pg_try_advisory_lock(hashtext($1), $2) AS ok, pg_backend_pid() AS pid";
// FOR UPDATE waits for a transaction that moved the head and has not ended yet, so the head read
// is the one its outcome left. A lane without a row yet has none (its first append writes it,
// in its own transaction: the organization may be created by that same transaction).
const READ_HEAD = "SELECT last_seq, last_hash FROM audit_chain_heads WHERE org_id = $1 AND lane = $2 FOR UPDATE";
const UNLOCK = "SELECT pg_advisory_unlock(hashtext($1), $2) WHERE pg_backend_pid() = $3";

/**
 * `conn`: a client of one connection, never recycled (max_lifetime off), used for nothing else.
 * `timing` shortens LANE_IDLE_MS and WATCH_MS (tests).
 */
export function openAuditLanes(conn: postgres.Sql, timing: { idleMs?: number; watchMs?: number } = {}): AuditLanes {
  const idleMs = timing.idleMs ?? LANE_IDLE_MS;
  const byOrg = new Map<string, Map<number, Lane>>();
  /** Lanes being claimed ("org lane"): two takes at once do not claim the same one. */
  const claiming = new Set<string>();
  let session = 0;
  let count = 0;
  let closed = false;

  const rows = async <R>(text: string, params: (string | number)[]): Promise<R[]> => (await conn.unsafe(text, params, { prepare: true })) as unknown as R[];
  const one = async <R>(text: string, params: (string | number)[]): Promise<R> => (await rows<R>(text, params))[0]!;

  function dropAll(): void {
    byOrg.clear();
    count = 0;
    session = 0;
  }

  function forget(l: Lane): void {
    const lanes = byOrg.get(l.orgId);
    if (lanes?.get(l.lane) !== l) return;
    lanes.delete(l.lane);
    if (!lanes.size) byOrg.delete(l.orgId);
    count--;
  }

  async function readHead(l: Lane): Promise<void> {
    const [head] = await rows<{ last_seq: number; last_hash: string }>(READ_HEAD, [l.orgId, l.lane]);
    l.seq = head ? Number(head.last_seq) : 0;
    l.hash = head?.last_hash ?? AUDIT_CHAIN_GENESIS;
    l.stored = head !== undefined;
    l.stale = false;
  }

  async function claim(orgId: string, preferred: number, lanes: number): Promise<Lane | null> {
    if (count >= MAX_LANES_HELD || lanes < 2) return null;
    const mine = byOrg.get(orgId);
    // From the preferred lane on, lane 0 left out.
    const start = preferred >= 1 && preferred < lanes ? preferred : 1;
    for (let i = 0; i < lanes - 1; i++) {
      const lane = 1 + ((start - 1 + i) % (lanes - 1));
      const key = `${orgId} ${lane}`;
      if (mine?.has(lane) || claiming.has(key)) continue;
      claiming.add(key);
      try {
        const row = await one<{ ok: boolean; pid: number }>(CLAIM, [orgId, lane]);
        if (!row.ok) continue;
        // A new session: the locks of the one before went with it.
        if (row.pid !== session) {
          dropAll();
          session = row.pid;
        }
        const l: Lane = { orgId, lane, seq: 0, hash: AUDIT_CHAIN_GENESIS, stored: false, busy: true, stale: true, lastUsed: Date.now(), session };
        let held = byOrg.get(orgId);
        if (!held) byOrg.set(orgId, (held = new Map()));
        held.set(lane, l);
        count++;
        return l;
      } finally {
        claiming.delete(key);
      }
    }
    return null;
  }

  async function take(orgId: string, preferred: number, lanes: number): Promise<HeldLane | null> {
    if (closed) return null;
    const mine = byOrg.get(orgId);
    let lane: Lane | null = null;
    if (mine) {
      const own = mine.get(preferred);
      if (own && !own.busy && own.lane < lanes) lane = own;
      else for (const l of mine.values()) if (!l.busy && l.lane < lanes) { lane = l; break; }
    }
    if (lane) lane.busy = true;
    else lane = await claim(orgId, preferred, lanes);
    if (!lane) return null;
    try {
      if (lane.stale) await readHead(lane);
    } catch (err) {
      lane.busy = false;
      throw err;
    }
    const ref: LaneRef = { orgId, lane: lane.lane, seq: lane.seq, hash: lane.hash, stored: lane.stored, of: lane };
    return ref;
  }

  function give(held: HeldLane, to: { seq: number; hash: string } | null): void {
    const l = (held as LaneRef).of;
    l.busy = false;
    l.lastUsed = Date.now();
    if (to) {
      l.seq = to.seq;
      l.hash = to.hash;
      l.stored = true;
    } else l.stale = true;
    if (l.session !== session || closed) forget(l);
  }

  function suspect(orgId: string): void {
    // A busy lane stays stale when its transaction gives it back moved: one head read more.
    for (const l of byOrg.get(orgId)?.values() ?? []) l.stale = true;
  }

  async function watch(): Promise<void> {
    if (!session) return;
    try {
      const row = await one<{ pid: number }>("SELECT pg_backend_pid() AS pid", []);
      if (row.pid !== session) return dropAll();
    } catch {
      // Not answered (the database away, a statement timeout): the next check, on a connection
      // that answers, sees whether the session is still the one that holds the locks. Dropping
      // the lanes now would forget locks a live session still holds.
      return;
    }
    const idleBefore = Date.now() - idleMs;
    for (const lanes of [...byOrg.values()]) {
      for (const l of [...lanes.values()]) {
        if (l.busy || l.lastUsed > idleBefore) continue;
        // Not handed out while it is let go; forgotten only once unlocked (or its session gone),
        // else a lock this instance no longer knows of would keep the lane from every other.
        l.busy = true;
        try {
          await conn.unsafe(UNLOCK, [l.orgId, l.lane, l.session], { prepare: true });
          forget(l);
        } catch {
          l.busy = false;
        }
      }
    }
  }

  let watching: Promise<void> | null = null;
  const timer = setInterval(() => {
    watching ??= watch().finally(() => (watching = null));
  }, timing.watchMs ?? WATCH_MS);
  timer.unref?.();

  return {
    take,
    give,
    suspect,
    async close() {
      closed = true;
      clearInterval(timer);
      await watching;
      dropAll();
      await conn.end({ timeout: 5 });
    },
  };
}
