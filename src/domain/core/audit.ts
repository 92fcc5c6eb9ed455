import { and, asc, count, eq, gte, isNull, lte } from "drizzle-orm";
import { appendToChain, chainHash, eventDigest, lockHead, moveHead, preChainSessions, takeLane, type UnchainedEvent } from "../../db/audit-hash.ts";
import { auditChainHeads, auditEvents, organizations } from "../../db/schema.ts";
import type { CommitQueue, Store } from "../../db/store.ts";
import { AUDIT_CHAIN_GENESIS } from "../views/audit-chain.ts";
import { iso, type Clock } from "./clock.ts";
import type { DomainContext } from "./context.ts";
import { newId } from "./ids.ts";
import type { AuditAction, AuditEntityOf, AuditEventView, AuditPart } from "../views/audit.ts";
import type { Actor } from "../views/common.ts";

export type { Actor } from "../views/common.ts";
export type { AuditAction, AuditEventView } from "../views/audit.ts";

export const systemActor: Actor = { type: "system", id: null };

/**
 * An audit event; the organization and the actor are the context's. The action is one of the
 * catalogue's (AUDIT_ACTIONS in src/domain/views/audit.ts), and so are the entity type and the
 * shapes of `before`, `after` and `data` when the action is named at the call site.
 */
export interface AuditInput<A extends AuditAction = AuditAction> {
  projectId?: string | null;
  action: A;
  entityType: AuditEntityOf<A>;
  entityId: string;
  before?: AuditPart<A, "before">;
  after?: AuditPart<A, "after">;
  data?: AuditPart<A, "data">;
}

const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
const parse = (v: string | null): unknown => (v == null ? null : JSON.parse(v));

/**
 * Writes one audit event. Call it inside the transaction of the change it records: the event is
 * written with that transaction, chained (below) just before its COMMIT.
 */
export async function recordAudit<A extends AuditAction>(ctx: DomainContext, e: AuditInput<A>): Promise<void> {
  const event: UnchainedEvent = {
    id: newId(),
    orgId: ctx.orgId,
    projectId: e.projectId ?? null,
    actorType: ctx.actor.type,
    actorId: ctx.actor.id,
    action: e.action,
    entityType: e.entityType,
    entityId: e.entityId,
    before: json(e.before),
    after: json(e.after),
    // A rule's effect names the rule and its version, a strike policy's step its strike (DomainContext.automation).
    data: json(ctx.automation ? { ...(e.data as object | undefined), ...ctx.automation, automated: true } : e.data),
    createdAt: ctx.clock.now(),
  };
  if (!ctx.store.inTransaction()) return ctx.store.transaction(() => ctx.store.defer(chainQueue(ctx.store), event), { exclusive: false });
  await ctx.store.defer(chainQueue(ctx.store), event);
}



/** Lanes per organization when the store was not given a number (FLAGSTAFF_AUDIT_CHAIN_LANES). */
export const DEFAULT_AUDIT_CHAIN_LANES = 32;
const laneCounts = new WeakMap<Store, number>();

/** How many lanes this store's transactions spread an organization's events over (services.ts sets it from the config). */
export function setAuditChainLanes(store: Store, lanes: number): void {
  if (!Number.isInteger(lanes) || lanes < 1) throw new Error(`audit chain lanes must be a positive integer, not ${lanes}`);
  laneCounts.set(store, lanes);
}

/**
 * The lane of a transaction's events: FNV-1a of its first event's entity id, modulo the lanes.
 * By entity rather than at random so that an entity's events (a report's, a case's) keep to one
 * lane, their order fixed by that lane's links, and an export of a case walks few lanes; intake
 * and decisions touch a new entity per transaction, so the lanes fill evenly all the same.
 */
export function laneOf(entityId: string, lanes: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < entityId.length; i++) h = Math.imul(h ^ entityId.charCodeAt(i), 0x01000193);
  return (h >>> 0) % lanes;
}

/**
 * The hash chain (docs/audit.md). Each organization's chain has lanes (sub-chains: lane 0, 1, …,
 * FLAGSTAFF_AUDIT_CHAIN_LANES of them, each with its own head); a lane's events are seq 1, 2, 3…,
 * each event's hash covering its canonical form and the hash before it in the lane
 * (src/domain/views/audit-chain.ts); a checkpoint signs every lane's head at once.
 * A transaction's events are held until just before its COMMIT (Store.defer), then each
 * organization's are appended at once to one lane (appendToChain, src/db/audit-hash.ts): the
 * lane taken (on PostgreSQL one the instance holds, src/db/audit-lanes-pg.ts; on SQLite the
 * entity's, under the store's writer), the events given the next sequences and their hashes,
 * written with the new head. The lane is the transaction's from there to the end of its COMMIT:
 * transactions of other lanes and organizations never wait for it (their commits share a
 * flush), and no lock is global. Lanes are taken in the order of organization ids (one lane
 * each), a held lane never waits, and nothing is locked after them, so chaining adds no deadlock.
 */
async function chainEvents(store: Store, events: UnchainedEvent[]): Promise<void> {
  const byOrg = new Map<string, UnchainedEvent[]>();
  for (const e of events) {
    const list = byOrg.get(e.orgId);
    if (list) list.push(e);
    else byOrg.set(e.orgId, [e]);
  }
  const lanes = laneCounts.get(store) ?? DEFAULT_AUDIT_CHAIN_LANES;
  for (const orgId of [...byOrg.keys()].sort()) {
    const list = byOrg.get(orgId)!;
    await appendToChain(store, orgId, laneOf(list[0]!.entityId, lanes), lanes, list);
  }
}

/** Rows an instance of a release before the chain left unchained, chained per transaction. */
const STRAGGLER_BATCH = 1_000;
/**
 * How far past the moment the pass saw no instance of a release before the chain an event's
 * `created_at` may be and still be chained: those instances' clocks may run a little ahead.
 */
export const STRAGGLER_CLOCK_MARGIN_MS = 60_000;

/**
 * What the straggler pass (src/jobs/audit-jobs.ts) has seen of a rolling upgrade: when it last saw
 * an instance of a release before the chain connected while events without a chain position were
 * waiting (null: none seen since the last chaining). Kept by the pass's instance only.
 */
export interface UpgradeWindow {
  olderSeenAt: number | null;
}

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
 * - only once this pass saw such an instance connected (application_name `flagstaff`, which the
 *   releases before the chain give; this one gives `flagstaff VERSION`) while they waited, and no
 *   longer sees one: its last transactions have ended, so none of its events can still commit
 *   dated before the ones chained;
 * - only events dated from the head of lane 0 on (stragglerFloor) up to now (and a clock margin):
 *   a back-dated event is never chained. They go after lane 0's head, in order (created_at, id).
 * Everything else stays unchained, and `flagstaff audit verify` names it. The window closes with
 * the chaining. Returns what it did.
 */
export async function chainStragglers(store: Store, clock: Clock, window: UpgradeWindow): Promise<StragglerPass> {
  const pass: StragglerPass = { chained: 0, waiting: 0, refused: 0 };
  if (store.engine !== "postgres") return pass;
  const pending = await store.db.select({ orgId: auditEvents.orgId, n: count() }).from(auditEvents).where(isNull(auditEvents.chainSeq)).groupBy(auditEvents.orgId);
  if (!pending.length) return pass;
  const total = pending.reduce((n, p) => n + Number(p.n), 0);
  if ((await preChainSessions(store)) > 0) {
    window.olderSeenAt = clock.now();
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

const queues = new WeakMap<Store, CommitQueue<UnchainedEvent>>();
const chainQueue = (store: Store): CommitQueue<UnchainedEvent> => {
  let q = queues.get(store);
  if (!q) queues.set(store, (q = { flush: (items) => chainEvents(store, items) }));
  return q;
};

export const toAuditEventView = (r: typeof auditEvents.$inferSelect): AuditEventView => ({
  id: r.id,
  projectId: r.projectId,
  actor: { type: r.actorType as Actor["type"], id: r.actorId },
  action: r.action,
  entityType: r.entityType,
  entityId: r.entityId,
  before: parse(r.before),
  after: parse(r.after),
  data: parse(r.data),
  createdAt: iso(r.createdAt),
});
