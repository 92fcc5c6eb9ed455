import { sql, type SQL } from "drizzle-orm";
import { param, statements } from "./prepared.ts";
import { auditChainHeads } from "./schema.ts";
import type { Store } from "./store.ts";

/**
 * What the straggler pass (src/domain/audit/stragglers.ts, docs/audit.md "Upgrading") asks of the
 * database: who is connected, and lane 0 of a chain taken and its head locked and moved, to chain
 * the events an instance of a release before the chain left without a place.
 */

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
