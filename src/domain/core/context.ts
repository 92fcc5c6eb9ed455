import type { Db } from "../../db/client.ts";
import type { Store } from "../../db/store.ts";
import type { Actor } from "../views/common.ts";
import type { Clock } from "./clock.ts";

/**
 * What every domain function is given, as its first argument: where the data lives, what time
 * it is, who acts and for which organization. Build it with `domainContext` (the transports
 * and the job handlers do); pass it on unchanged to the functions you call, so that everything
 * runs in the caller's transaction.
 */
export interface DomainContext {
  store: Store;
  /** `store.db`: the current transaction's handle inside one, else the reading connection. */
  db: Db;
  clock: Clock;
  actor: Actor;
  /** The organization the work is for: every query of a tenant's data is bounded by it. */
  orgId: string;
  /**
   * Set while a rule's effects are applied (src/domain/rules/rule-engine.ts), or a strike policy's
   * ladder step (src/domain/enforcement/strike-ladder.ts), or a media bank's action on a match
   * (src/domain/banks/matching.ts): every audit event written then carries
   * these fields and `automated: true` in its data (`{ ruleId, version }`, `{ strikePolicy:
   * { strikeId, threshold } }`), and rules are not evaluated again for the changes (a rule cannot
   * re-trigger itself).
   */
  automation?: { ruleId: string; version: number } | { strikePolicy: { strikeId: string; threshold: number } } | { mediaMatch: { bankId: string; entryId: string } };
}

/** Reading needs only the data and the clock. */
export type ReadContext = Pick<DomainContext, "store" | "db" | "clock">;

export function domainContext(store: Store, clock: Clock, actor: Actor, orgId: string): DomainContext {
  return { store, db: store.db, clock, actor, orgId };
}

/**
 * Runs `fn` in one transaction (a savepoint when already in one): every write of the domain
 * goes through here. It settles after COMMIT; the job workers are woken then if jobs were
 * enqueued. Nothing inside may wait on the network.
 */
export function transaction<T>(ctx: Pick<DomainContext, "store">, fn: () => Promise<T>, opts?: Parameters<Store["transaction"]>[1]): Promise<T> {
  return ctx.store.transaction(fn, opts);
}

/**
 * A transaction that keeps its invariants by the locks of the rows it touches and by unique
 * indexes, not by writing alone: on PostgreSQL it runs beside other instances' transactions
 * (no cluster-wide write lock). The paths that carry load (report intake, decisions, rule
 * effects, enrichment, enforcement, appeals) run so; src/db/store.ts lists each invariant and
 * the lock that keeps it.
 */
export const ROW_LOCKED = { exclusive: false } as const;

/** `transaction(ctx, fn, ROW_LOCKED)`: a transaction of the paths that carry load (see ROW_LOCKED). */
export function rowLockedTransaction<T>(ctx: Pick<DomainContext, "store">, fn: () => Promise<T>): Promise<T> {
  return ctx.store.transaction(fn, ROW_LOCKED);
}

/**
 * Awaits statements issued together, in the order given, and answers their results. On
 * PostgreSQL statements issued without waiting for each other travel in one round trip
 * (postgres.js pipelines them on the transaction's connection) and run in the order sent; on
 * SQLite they run in that order at once. Use it for statements that do not need each other's
 * answers (a report's reasons and its audit event, two identities' lookups). Every statement
 * settles before it answers; when some failed, the first failure in argument order is thrown
 * (on PostgreSQL the ones after it failed only because the transaction was aborted by it).
 */
export async function together<T extends readonly unknown[]>(...work: { [K in keyof T]: Promise<T[K]> | T[K] }): Promise<T> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((s) => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
