import type { ChainedEventFields } from "../domain/views/audit-chain.ts";

/**
 * How audit events enter their organization's hash chain (docs/audit.md, "How events are
 * appended"). `recordAudit` (src/domain/core/audit.ts) hands each event to the store
 * (Store.appendAudit), which keeps a transaction's events until its body returned and then,
 * still inside the transaction and just before its COMMIT, gives them all to its engine's
 * ChainAppender at once: one implementation per engine, each the whole append of its engine
 * (audit-append-sqlite.ts; audit-append-pg.ts with the lanes an instance holds,
 * audit-lanes-pg.ts). Nothing outside src/db knows which one runs.
 */
export interface ChainAppender {
  /**
   * Appends a transaction's events (of any organizations), inside that transaction, just before
   * its COMMIT: each organization's events to one lane of its chain, in the order of organization
   * ids (appendOrder), their sequences and hashes following the lane's head, the head moved with
   * them. A throw rolls the transaction back.
   */
  append(events: readonly UnchainedEvent[]): Promise<void>;
  /** Lets go of what the appender holds (the PostgreSQL lanes' connection). */
  close(): Promise<void>;
}

/** An audit event as written, before the chain gives it its place (lane and sequence). */
export type UnchainedEvent = Omit<ChainedEventFields, "seq" | "lane">;

/** Lanes per organization when the store was not given a number (FLAGSTAFF_AUDIT_CHAIN_LANES). */
export const DEFAULT_AUDIT_CHAIN_LANES = 32;

/** The lanes an appender spreads an organization's events over: a positive integer, else a throw at start. */
export function checkLaneCount(lanes: number): number {
  if (!Number.isInteger(lanes) || lanes < 1) throw new Error(`audit chain lanes must be a positive integer, not ${lanes}`);
  return lanes;
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

/** One organization's events of a transaction, and the lane they go to (its entity's: laneOf). */
export interface OrganizationAppend {
  orgId: string;
  lane: number;
  events: UnchainedEvent[];
}

/**
 * A transaction's events by organization, in the order of organization ids, each organization's
 * in the order written with the lane of its first event's entity. Lanes are taken in this order,
 * one per organization, a held lane never waits and nothing is locked after them, so chaining
 * adds no deadlock; transactions of other lanes and organizations never wait for one (their
 * commits share a flush), and no lock is global.
 */
export function appendOrder(events: readonly UnchainedEvent[], lanes: number): OrganizationAppend[] {
  const byOrg = new Map<string, UnchainedEvent[]>();
  for (const e of events) {
    const list = byOrg.get(e.orgId);
    if (list) list.push(e);
    else byOrg.set(e.orgId, [e]);
  }
  return [...byOrg.keys()].sort().map((orgId) => {
    const list = byOrg.get(orgId)!;
    return { orgId, lane: laneOf(list[0]!.entityId, lanes), events: list };
  });
}
