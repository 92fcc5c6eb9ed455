import { sql, type SQL } from "drizzle-orm";
import type { Db } from "./client.ts";
import { AUDIT_CHAIN_GENESIS, auditEventCanonical, type ChainedEventFields } from "../domain/views/audit-chain.ts";

/**
 * The audit chain's hashes (the canonical forms are src/domain/views/audit-chain.ts's; docs/audit.md
 * says how to recompute them), and the data step of the migration that chains the events written
 * before the chain existed. Appending is src/db/audit-append.ts's; the straggler pass's statements
 * are src/db/audit-stragglers.ts.
 */
// Bun's own SHA-256 (the same digest as node:crypto's, which scripts/verify-audit-export.mjs uses),
// at less than half the cost per call: every audit event is hashed twice on the write path.
export const sha256Hex = (text: string): string => Bun.SHA256.hash(text, "hex");

/** SHA-256 hex of the event's canonical form. */
export const eventDigest = (e: Omit<ChainedEventFields, "seq" | "lane">): string => sha256Hex(auditEventCanonical(e));

/** An event's hash: SHA-256 hex of the previous event's hash followed by this one's digest. */
export const chainHash = (prevHash: string, digest: string): string => sha256Hex(prevHash + digest);

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
