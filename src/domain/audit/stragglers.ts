/**
 * The straggler pass (docs/audit.md, "Upgrading"): during a rolling upgrade on PostgreSQL,
 * instances of a release before the chain write events without a chain position; once none is
 * connected any more, the events they left are chained after lane 0's head. Run by the instance
 * that signs checkpoints (src/jobs/audit-jobs.ts).
 */
import { and, asc, count, eq, gte, isNull, lte } from "drizzle-orm";
import { chainHash, eventDigest } from "../../db/audit-hash.ts";
import { lockHead, moveHead, preChainSessions, takeLane } from "../../db/audit-stragglers.ts";
import { auditChainHeads, auditEvents, organizations } from "../../db/schema.ts";
import type { Store } from "../../db/store.ts";
import type { Clock } from "../core/clock.ts";
import { AUDIT_CHAIN_GENESIS } from "../views/audit-chain.ts";

/** Rows an instance of a release before the chain left unchained, chained per transaction. */
const STRAGGLER_BATCH = 1_000;
/**
 * How far past the moment the pass saw no instance of a release before the chain an event's
 * `created_at` may be and still be chained: those instances' clocks may run a little ahead.
 */
export const STRAGGLER_CLOCK_MARGIN_MS = 60_000;

/**
 * What the straggler pass (src/jobs/audit-jobs.ts) has seen of a rolling upgrade: when it last saw
 * an instance of a release before the chain connected (null: none since the window closed). Kept
 * by the pass's instance only.
 */
export interface UpgradeWindow {
  olderSeenAt: number | null;
}

/**
 * How long after it last saw an instance of a release before the chain, with nothing left to
 * chain, the pass closes the upgrade window: an event without a chain position that appears after
 * that is never chained (docs/audit.md, "Upgrading"). Longer than the pass's period, so that a
 * straggler committed in that instance's last moments is still found.
 */
export const UPGRADE_WINDOW_CLOSE_MS = 5 * 60_000;

/** What a straggler pass did: events chained, events left waiting for older instances to go, events it will never chain. */
export interface StragglerPass {
  chained: number;
  waiting: number;
  refused: number;
}

/**
 * The earliest `created_at` an organization's event without a chain position may have and still be
 * chained: that of the head of its lane 0 (where the migration chained the events written before
 * the chain, and where stragglers go), or when lane 0 is empty the organization's creation. An
 * event dated before it is never chained: nothing legitimate writes one (docs/audit.md, "Upgrading").
 */
export async function stragglerFloor(db: Store["db"], orgId: string): Promise<{ at: number; of: string }> {
  const [head] = await db
    .select({ createdAt: auditEvents.createdAt })
    .from(auditChainHeads)
    .innerJoin(auditEvents, and(eq(auditEvents.orgId, auditChainHeads.orgId), eq(auditEvents.chainLane, auditChainHeads.lane), eq(auditEvents.chainSeq, auditChainHeads.lastSeq)))
    .where(and(eq(auditChainHeads.orgId, orgId), eq(auditChainHeads.lane, 0)));
  if (head) return { at: Number(head.createdAt), of: "the head of lane 0" };
  const [org] = await db.select({ createdAt: organizations.createdAt }).from(organizations).where(eq(organizations.id, orgId));
  return { at: Number(org?.createdAt ?? 0), of: "the organization's creation (lane 0 is empty)" };
}

/**
 * Chains the events an instance of a release before the chain wrote during a rolling upgrade on
 * PostgreSQL (chain_seq null; the partial index audit_unchained_idx finds them), and only those
 * (docs/audit.md, "Upgrading"):
 * - never on SQLite (one instance: no release runs beside another);
 * - only while the upgrade window is open: this pass saw such an instance connected (application
 *   name `flagstaff`, which the releases before the chain give; this one gives `flagstaff
 *   VERSION`; every pass looks, whether or not anything waits), and sees none now, so that none of
 *   its events can still commit dated before the ones chained; the window closes with the chaining,
 *   or UPGRADE_WINDOW_CLOSE_MS after the last sighting when nothing waits;
 * - only events dated from the head of lane 0 on (stragglerFloor) up to now (and a clock margin):
 *   a back-dated event is never chained. They go after lane 0's head, in order (created_at, id).
 * Everything else stays unchained, and `flagstaff audit verify` names it. Returns what it did.
 */
export async function chainStragglers(store: Store, clock: Clock, window: UpgradeWindow): Promise<StragglerPass> {
  const pass: StragglerPass = { chained: 0, waiting: 0, refused: 0 };
  // The database's only writer (SQLite) runs beside no instance of an older release.
  if (store.soleWriter) return pass;
  // Looked at on every pass: an older instance that writes and leaves between two passes that
  // found nothing waiting must still open the window.
  const olderConnected = (await preChainSessions(store)) > 0;
  if (olderConnected) window.olderSeenAt = clock.now();
  const pending = await store.db.select({ orgId: auditEvents.orgId, n: count() }).from(auditEvents).where(isNull(auditEvents.chainSeq)).groupBy(auditEvents.orgId);
  if (!pending.length) {
    if (window.olderSeenAt !== null && !olderConnected && clock.now() - window.olderSeenAt > UPGRADE_WINDOW_CLOSE_MS) window.olderSeenAt = null;
    return pass;
  }
  const total = pending.reduce((n, p) => n + Number(p.n), 0);
  if (olderConnected) {
    pass.waiting = total;
    return pass;
  }
  if (window.olderSeenAt === null) {
    pass.refused = total;
    return pass;
  }
  const until = clock.now() + STRAGGLER_CLOCK_MARGIN_MS;
  for (const { orgId } of pending) {
    for (;;) {
      const chained = await store.transaction(async () => {
        await takeLane(store, orgId, 0);
        const [head] = await lockHead(store.db).execute({ orgId, lane: 0, genesis: AUDIT_CHAIN_GENESIS });
        const floor = await stragglerFloor(store.db, orgId);
        const rows = await store.db
          .select()
          .from(auditEvents)
          .where(and(eq(auditEvents.orgId, orgId), isNull(auditEvents.chainSeq), gte(auditEvents.createdAt, floor.at), lte(auditEvents.createdAt, until)))
          .orderBy(asc(auditEvents.createdAt), asc(auditEvents.id))
          .limit(STRAGGLER_BATCH);
        let seq = Number(head!.lastSeq);
        let prevHash = head!.lastHash;
        for (const r of rows) {
          seq += 1;
          const hash = chainHash(prevHash, eventDigest({ ...r, createdAt: Number(r.createdAt) }));
          await store.db.update(auditEvents).set({ chainLane: 0, chainSeq: seq, prevHash, hash }).where(eq(auditEvents.id, r.id));
          prevHash = hash;
        }
        if (rows.length) await moveHead(store.db).execute({ orgId, lane: 0, lastSeq: seq, lastHash: prevHash });
        return rows.length;
      }, { exclusive: false });
      pass.chained += chained;
      if (chained < STRAGGLER_BATCH) break;
    }
  }
  pass.refused = total - pass.chained;
  window.olderSeenAt = null;
  return pass;
}
