import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { statements } from "../../db/prepared.ts";
import { apiKeys, projects } from "../../db/schema.ts";
import { iso, isoOrNull } from "../core/clock.ts";
import { transaction, type DomainContext, type ReadContext } from "../core/context.ts";
import { notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import type { ApiKeyView, KeyKind } from "../views/api-key.ts";
import { liveProject } from "./projects.ts";

export type { ApiKeyView, KeyKind } from "../views/api-key.ts";

const PREFIX: Record<KeyKind, string> = { secret: "sk_live_", publishable: "pk_live_" };
/** `sk_live_` or `pk_live_` followed by 43 base64url characters (32 random bytes). */
const KEY_SHAPE = /^(sk|pk)_live_[A-Za-z0-9_-]{43}$/;

/** What an authenticated API key may act as. */
export interface KeyPrincipal {
  keyId: string;
  orgId: string;
  projectId: string;
  kind: KeyKind;
  reportRateLimit: number | null;
}

const hashKey = (key: string): string => createHash("sha256").update(key).digest("hex");

export function generateKey(kind: KeyKind): string {
  return PREFIX[kind] + randomBytes(32).toString("base64url");
}

/**
 * A new key for a project, shown once. The caller has checked that the project is theirs (the
 * CLI names any project of the database).
 */
export async function createApiKey(
  ctx: ReadContext,
  input: { projectId: string; kind: KeyKind; name?: string; reportRateLimit?: number | null },
): Promise<{ key: string; apiKey: ApiKeyView }> {
  const [project] = await ctx.db.select().from(projects).where(and(eq(projects.id, input.projectId), liveProject())).limit(1);
  if (!project) throw notFound("Project not found");
  const key = generateKey(input.kind);
  const row = {
    id: newId(),
    orgId: project.orgId,
    projectId: project.id,
    kind: input.kind,
    name: input.name ?? `${input.kind} key`,
    prefix: key.slice(0, 12),
    hash: hashKey(key),
    reportRateLimit: input.reportRateLimit ?? null,
    createdAt: ctx.clock.now(),
  };
  await transaction(ctx, async () => {
    await ctx.db.insert(apiKeys).values(row);
  });
  return { key, apiKey: toView({ ...row, lastUsedAt: null, revokedAt: null }) };
}

/** The keys of the context's organization, or of every organization (`orgId: null`, the CLI). */
export async function listApiKeys(ctx: Pick<DomainContext, "db">, input: { orgId: string | null }): Promise<ApiKeyView[]> {
  const q = ctx.db.select().from(apiKeys);
  const rows = await (input.orgId == null ? q : q.where(eq(apiKeys.orgId, input.orgId))).orderBy(desc(apiKeys.id));
  return rows.map(toView);
}

/** Revokes a key of `orgId` (the caller's; null: any, for the CLI). Revoking twice changes nothing. */
export function revokeApiKey(ctx: ReadContext, input: { orgId: string | null; keyId: string }): Promise<ApiKeyView> {
  return transaction(ctx, async () => {
    const where = input.orgId == null ? eq(apiKeys.id, input.keyId) : and(eq(apiKeys.id, input.keyId), eq(apiKeys.orgId, input.orgId));
    const [row] = await ctx.db.select().from(apiKeys).where(where).limit(1);
    if (!row) throw notFound("API key not found");
    if (row.revokedAt == null) {
      row.revokedAt = ctx.clock.now();
      await ctx.db.update(apiKeys).set({ revokedAt: row.revokedAt }).where(eq(apiKeys.id, row.id));
    }
    return toView(row);
  });
}

/** Every authenticated request runs these: kept prepared (src/db/prepared.ts). */
const keyStatements = statements((db) => ({
  liveByHash: db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.hash, sql.placeholder("hash")), isNull(apiKeys.revokedAt)))
    .prepare(),
  touch: db
    .update(apiKeys)
    .set({ lastUsedAt: sql`${sql.placeholder("now")}` })
    .where(eq(apiKeys.id, sql.placeholder("id")))
    .prepare(),
}));

/** lastUsedAt is written at most this often per key, so a busy key does not turn reads into writes. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Finds the live key for a presented secret. Returns null for anything malformed, unknown or
 * revoked; the caller answers 401 without saying which. The lookup goes through the hash
 * index; the final comparison of the hashes is constant-time.
 */
export async function authenticateKey(ctx: ReadContext, presented: string): Promise<KeyPrincipal | null> {
  if (!KEY_SHAPE.test(presented)) return null;
  const hash = hashKey(presented);
  const [row] = await keyStatements(ctx.db).liveByHash.execute({ hash });
  if (!row) return null;
  if (!timingSafeEqual(Buffer.from(row.hash, "hex"), Buffer.from(hash, "hex"))) return null;
  if (row.kind !== (presented.startsWith("sk_") ? "secret" : "publishable")) return null;
  const now = ctx.clock.now();
  if (row.lastUsedAt == null || now - row.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
    // In a transaction of its own: a write, on the writing connection (whose statements differ).
    await transaction(ctx, async () => {
      await keyStatements(ctx.db).touch.execute({ id: row.id, now });
    });
  }
  return {
    keyId: row.id,
    orgId: row.orgId,
    projectId: row.projectId,
    kind: row.kind,
    reportRateLimit: row.reportRateLimit,
  };
}

function toView(row: typeof apiKeys.$inferSelect): ApiKeyView {
  return {
    id: row.id,
    projectId: row.projectId,
    kind: row.kind,
    name: row.name,
    prefix: row.prefix,
    reportRateLimit: row.reportRateLimit,
    createdAt: iso(row.createdAt),
    lastUsedAt: isoOrNull(row.lastUsedAt),
    revokedAt: isoOrNull(row.revokedAt),
  };
}
