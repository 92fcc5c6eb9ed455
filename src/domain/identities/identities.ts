import { and, asc, count, eq, gt, gte, lt, or, sql, type SQL } from "drizzle-orm";
import { forUpdate, param, statements } from "../../db/prepared.ts";
import { identities } from "../../db/schema.ts";
import { DAY_MS, iso, isoOrNull } from "../core/clock.ts";
import { together, transaction, type DomainContext } from "../core/context.ts";
import { badRequest } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { applyMergePatch } from "../plumbing/merge-patch.ts";
import { searchDocument } from "../plumbing/search-text.ts";
import type { IdentityView } from "../views/identity.ts";

export type { IdentityView } from "../views/identity.ts";

export type IdentityRow = typeof identities.$inferSelect;

export interface DisplayInput {
  name?: string | null;
  username?: string | null;
  avatarUrl?: string | null;
}

export interface UpsertIdentityInput {
  projectId: string;
  type: string;
  externalId: string;
  display?: DisplayInput | null;
  /** A JSON Merge Patch (RFC 7396) applied to the stored metadata; null or omitted changes nothing. */
  metadata?: unknown;
  /** Set lastSeenAt to this time (the platform saw the user act). */
  seenAt?: number;
  /** Count one more report against this identity at this time. */
  reportedAt?: number;
  now: number;
}

/** Stored metadata is bounded so one identity cannot grow the database without limit. */
export const MAX_METADATA_BYTES = 16 * 1024;

/** A display value that is null, empty or blank never replaces what is stored. */
const displayValue = (incoming: string | null | undefined, stored: string | null): string | null =>
  incoming != null && incoming.trim() !== "" ? incoming : stored;

/** PUT identity: creates or updates the identity in a transaction of its own, and answers its view. */
export function saveIdentity(ctx: Pick<DomainContext, "store" | "db">, input: UpsertIdentityInput): Promise<IdentityView> {
  return transaction(ctx, async () => toIdentityView(await upsertIdentity(ctx, input)));
}

/**
 * Creates the identity keyed by project + type + externalId, or updates it with the merge
 * rules of the spec. Only inside the caller's transaction (report creation runs it twice per
 * report: no savepoint of its own).
 *
 * Instances write side by side (PostgreSQL): of two first sightings, one inserts and the other
 * waits for it, then updates it, each in one statement that locks the row until its commit, so
 * neither loses the other's count:
 * - without a metadata patch (report intake): INSERT … ON CONFLICT DO UPDATE merges in SQL what
 *   the spec's rules say (a display value given replaces, one not given keeps; the counters
 *   add), and its search text, which depends on the merged names, is written with the commit
 *   when it changed;
 * - with one (PUT identity): the JSON Merge Patch is applied here, to the row read locked.
 */
export async function upsertIdentity(ctx: Pick<DomainContext, "store" | "db">, input: UpsertIdentityInput): Promise<IdentityRow> {
  if (!ctx.store.inTransaction()) throw new Error("upsertIdentity runs inside a transaction");
  const q = upsertStatements(ctx.db);
  const fresh = mergedIdentity(null, input);
  if (input.metadata === undefined || input.metadata === null) {
    const [row] = await q.merge.execute(fresh);
    if (!row) throw new Error("an identity upserted is not there");
    const searchText = searchDocument([row.externalId, row.name, row.username]);
    if (searchText === row.searchText) return row;
    await ctx.store.atCommit(q.setSearchText.execute({ id: row.id, searchText }));
    return { ...row, searchText };
  }
  const key = { projectId: input.projectId, type: input.type, externalId: input.externalId };
  // In this order on the connection (one round trip): inserted if absent, then found and locked.
  const [, found] = await together(q.insertIfAbsent.execute(fresh), q.findLocked.execute(key));
  const [row] = found as IdentityRow[];
  if (!row) throw new Error("an identity inserted or found is not there");
  if (row.id === fresh.id) return fresh;
  const merged = mergedIdentity(row, input);
  await ctx.store.atCommit(q.update.execute(merged));
  return merged;
}

/** The identity after an upsert of `input` onto `stored` (null: a new one). */
function mergedIdentity(stored: IdentityRow | null, input: UpsertIdentityInput): IdentityRow {
  const display = input.display ?? {};
  const fields = {
    name: displayValue(display.name, stored?.name ?? null),
    username: displayValue(display.username, stored?.username ?? null),
    avatarUrl: displayValue(display.avatarUrl, stored?.avatarUrl ?? null),
    metadata: mergeMetadata(stored?.metadata ?? null, input.metadata),
    reportCount: (stored?.reportCount ?? 0) + (input.reportedAt != null ? 1 : 0),
    lastSeenAt: input.seenAt ?? stored?.lastSeenAt ?? null,
    lastReportedAt: input.reportedAt ?? stored?.lastReportedAt ?? null,
    updatedAt: input.now,
  };
  const searchText = searchDocument([input.externalId, fields.name, fields.username]);
  if (stored) return { ...stored, ...fields, searchText };
  return {
    id: newId(),
    projectId: input.projectId,
    type: input.type,
    externalId: input.externalId,
    createdAt: input.now,
    trustedFlagger: 0,
    mutedUntil: null,
    muteReason: null,
    reportsUpheld: 0,
    reportsDecided: 0,
    ...fields,
    searchText,
  };
}

/** Report creation upserts two identities: these statements stay prepared (src/db/prepared.ts). */
const upsertStatements = statements((db) => {
  const updatable = {
    name: param("name"),
    username: param("username"),
    avatarUrl: param("avatarUrl"),
    metadata: param("metadata"),
    reportCount: param("reportCount"),
    lastSeenAt: param("lastSeenAt"),
    lastReportedAt: param("lastReportedAt"),
    updatedAt: param("updatedAt"),
    searchText: param("searchText"),
  };
  // A whole new row, every column from the placeholder of its name.
  const newRow = {
    id: param("id"),
    projectId: param("projectId"),
    type: param("type"),
    externalId: param("externalId"),
    createdAt: param("createdAt"),
    trustedFlagger: param("trustedFlagger"),
    mutedUntil: param("mutedUntil"),
    muteReason: param("muteReason"),
    reportsUpheld: param("reportsUpheld"),
    reportsDecided: param("reportsDecided"),
    ...updatable,
  };
  return {
    findLocked: forUpdate(
      db
        .select()
        .from(identities)
        .where(
          and(
            eq(identities.projectId, sql.placeholder("projectId")),
            eq(identities.type, sql.placeholder("type")),
            eq(identities.externalId, sql.placeholder("externalId")),
          ),
        ),
    ).prepare(),
    update: db.update(identities).set(updatable).where(eq(identities.id, sql.placeholder("id"))).prepare(),
    merge: db
      .insert(identities)
      .values(newRow)
      .onConflictDoUpdate({
        target: [identities.projectId, identities.type, identities.externalId],
        // The row as mergedIdentity(null, input) made it: a display value not given is null there.
        set: {
          name: sql`coalesce(excluded.name, ${identities.name})`,
          username: sql`coalesce(excluded.username, ${identities.username})`,
          avatarUrl: sql`coalesce(excluded.avatar_url, ${identities.avatarUrl})`,
          reportCount: sql`${identities.reportCount} + excluded.report_count`,
          lastSeenAt: sql`coalesce(excluded.last_seen_at, ${identities.lastSeenAt})`,
          lastReportedAt: sql`coalesce(excluded.last_reported_at, ${identities.lastReportedAt})`,
          updatedAt: sql`excluded.updated_at`,
        },
      })
      .returning()
      .prepare(),
    setSearchText: db.update(identities).set({ searchText: param("searchText") }).where(eq(identities.id, sql.placeholder("id"))).prepare(),
    insertIfAbsent: db
      .insert(identities)
      .values(newRow)
      .onConflictDoNothing({ target: [identities.projectId, identities.type, identities.externalId] })
      .prepare(),
  };
});

function mergeMetadata(stored: string | null, patch: unknown): string | null {
  if (patch === undefined || patch === null) return stored;
  const merged = applyMergePatch(stored == null ? undefined : JSON.parse(stored), patch);
  const text = JSON.stringify(merged);
  if (Buffer.byteLength(text, "utf8") > MAX_METADATA_BYTES) {
    throw badRequest(`metadata must be at most ${MAX_METADATA_BYTES} bytes of JSON once merged`);
  }
  return text;
}

export interface ListIdentitiesQuery {
  projectId: string;
  /** Prefix of the external ID (exact case), name or username (any case). */
  search?: string;
  /** The id of the last identity of the previous page. */
  cursor?: string;
  limit: number;
}

/** Highest code point: `prefix + MAX` bounds every string that starts with `prefix`. */
const MAX_CHAR = "\u{10FFFF}";

export async function listIdentities(ctx: Pick<DomainContext, "db">, q: ListIdentitiesQuery): Promise<{ identities: IdentityView[]; nextCursor: string | null }> {
  const where: (SQL | undefined)[] = [eq(identities.projectId, q.projectId)];
  if (q.cursor) where.push(gt(identities.id, q.cursor));
  if (q.search) where.push(await searchCondition(ctx, q.projectId, q.search));
  const rows = await ctx.db
    .select()
    .from(identities)
    .where(and(...where))
    .orderBy(asc(identities.id))
    .limit(q.limit + 1);
  const page = rows.slice(0, q.limit);
  return {
    identities: page.map(toIdentityView),
    nextCursor: rows.length > q.limit ? (page.at(-1)?.id ?? null) : null,
  };
}

/** Below this many candidate matches, a search collects them from the three prefix indexes. */
const SPARSE_MATCHES = 2_000;

/**
 * The search filter: a prefix of the external ID (exact case), the name or the username (any
 * case). Range comparisons rather than LIKE, so each arm is a search of its own index. Two
 * plans, chosen by a cheap bounded count: few matches (the usual case, a specific user) are
 * collected from the prefix indexes and then sorted; many matches (a one-letter prefix) are
 * found fastest by walking the project's identities in id order until a page is full.
 */
async function searchCondition(ctx: Pick<DomainContext, "db">, projectId: string, search: string): Promise<SQL> {
  const lower = search.toLowerCase();
  const arms = [
    sql`SELECT id FROM identities WHERE project_id = ${projectId} AND external_id >= ${search} AND external_id < ${search + MAX_CHAR}`,
    sql`SELECT id FROM identities WHERE project_id = ${projectId} AND lower(name) >= ${lower} AND lower(name) < ${lower + MAX_CHAR}`,
    sql`SELECT id FROM identities WHERE project_id = ${projectId} AND lower(username) >= ${lower} AND lower(username) < ${lower + MAX_CHAR}`,
  ];
  const [row] = await ctx.db
    .select({ n: count() })
    .from(sql`(${sql.join(arms, sql` UNION ALL `)} LIMIT ${SPARSE_MATCHES}) AS candidates`);
  if ((row?.n ?? 0) < SPARSE_MATCHES) return sql`${identities.id} IN (${sql.join(arms, sql` UNION `)})`;
  return or(
    and(gte(identities.externalId, search), lt(identities.externalId, search + MAX_CHAR)),
    and(gte(sql`lower(${identities.name})`, lower), lt(sql`lower(${identities.name})`, lower + MAX_CHAR)),
    and(gte(sql`lower(${identities.username})`, lower), lt(sql`lower(${identities.username})`, lower + MAX_CHAR)),
  )!;
}

/**
 * The key of an identity's metadata where the platform may say when the person's account was
 * made (an ISO 8601 date or date-time, such as "2026-11-20T08:00:00Z"). The specification
 * leaves metadata to the platform ("arbitrary JSON", sent with PUT identity), and Flagstaff
 * reads this one key and never refuses what it holds: anything else there is the platform's.
 */
export const ACCOUNT_CREATED_AT = "accountCreatedAt";

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * How many whole days old the person's account on the platform is at `now`, from its metadata
 * (ACCOUNT_CREATED_AT), or null: no metadata, no such key, not an ISO date, or a date to come.
 */
export function accountAgeDays(metadata: string | null, now: number): number | null {
  if (metadata == null || !metadata.includes(ACCOUNT_CREATED_AT)) return null;
  let value: unknown;
  try {
    value = (JSON.parse(metadata) as Record<string, unknown> | null)?.[ACCOUNT_CREATED_AT];
  } catch {
    return null;
  }
  if (typeof value !== "string" || !ISO_DATE.test(value)) return null;
  const at = Date.parse(value);
  if (Number.isNaN(at) || at > now) return null;
  return Math.floor((now - at) / DAY_MS);
}

/**
 * displayName: the name, else the username, else the external ID.
 * handleLabel: "@username" when there is a username, else "type:externalId".
 */
export function toIdentityView(row: IdentityRow): IdentityView {
  return {
    id: row.id,
    externalId: row.externalId,
    projectId: row.projectId,
    type: row.type,
    name: row.name,
    username: row.username,
    avatarUrl: row.avatarUrl,
    metadata: row.metadata == null ? null : JSON.parse(row.metadata),
    reportCount: row.reportCount,
    lastSeenAt: isoOrNull(row.lastSeenAt),
    lastReportedAt: isoOrNull(row.lastReportedAt),
    displayName: row.name ?? row.username ?? row.externalId,
    handleLabel: row.username ? `@${row.username}` : `${row.type}:${row.externalId}`,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

/** An identity by its id (the caller has it from a row of its own organization), or null. */
export async function getIdentity(ctx: Pick<DomainContext, "db">, identityId: string): Promise<IdentityView | null> {
  const [row] = await ctx.db.select().from(identities).where(eq(identities.id, identityId)).limit(1);
  return row ? toIdentityView(row) : null;
}
