import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { statements } from "../db/prepared.ts";
import { apiKeys, projects } from "../db/schema.ts";
import { iso, isoOrNull, type Clock } from "./clock.ts";
import { notFound } from "./errors.ts";
import { newId } from "./ids.ts";

export type KeyKind = "secret" | "publishable";

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

export interface ApiKeyView {
  id: string;
  projectId: string;
  kind: KeyKind;
  name: string;
  prefix: string;
  reportRateLimit: number | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const hashKey = (key: string): string => createHash("sha256").update(key).digest("hex");

export function generateKey(kind: KeyKind): string {
  return PREFIX[kind] + randomBytes(32).toString("base64url");
}

export function createApiKey(
  db: Db,
  clock: Clock,
  input: { projectId: string; kind: KeyKind; name?: string; reportRateLimit?: number | null },
): { key: string; apiKey: ApiKeyView } {
  const project = db.select().from(projects).where(eq(projects.id, input.projectId)).get();
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
    createdAt: clock.now(),
  };
  db.insert(apiKeys).values(row).run();
  return { key, apiKey: toView({ ...row, lastUsedAt: null, revokedAt: null }) };
}

export function listApiKeys(db: Db, orgId: string): ApiKeyView[] {
  return db.select().from(apiKeys).where(eq(apiKeys.orgId, orgId)).orderBy(desc(apiKeys.id)).all().map(toView);
}

export function revokeApiKey(db: Db, clock: Clock, orgId: string, keyId: string): ApiKeyView {
  const row = db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.orgId, orgId)))
    .get();
  if (!row) throw notFound("API key not found");
  if (row.revokedAt == null) {
    row.revokedAt = clock.now();
    db.update(apiKeys).set({ revokedAt: row.revokedAt }).where(eq(apiKeys.id, keyId)).run();
  }
  return toView(row);
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
export function authenticateKey(db: Db, clock: Clock, presented: string): KeyPrincipal | null {
  if (!KEY_SHAPE.test(presented)) return null;
  const hash = hashKey(presented);
  const q = keyStatements(db);
  const row = q.liveByHash.get({ hash });
  if (!row) return null;
  if (!timingSafeEqual(Buffer.from(row.hash, "hex"), Buffer.from(hash, "hex"))) return null;
  if (row.kind !== (presented.startsWith("sk_") ? "secret" : "publishable")) return null;
  const now = clock.now();
  if (row.lastUsedAt == null || now - row.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
    q.touch.run({ id: row.id, now });
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
