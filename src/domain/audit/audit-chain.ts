/**
 * The audit chain as an operator and a third party check it (docs/audit.md): signed checkpoints
 * of each organization's chain, the verification of the chain and its checkpoints, and exports
 * of a case's or a period's events with what proves them. The chain itself is written by
 * recordAudit (src/domain/core/audit.ts); its canonical forms are src/domain/views/audit-chain.ts.
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { and, asc, count, desc, eq, gt, gte, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import { chainHash, eventDigest } from "../../db/audit-hash.ts";
import { auditChainHeads, auditCheckpoints, auditEvents, organizations, reports } from "../../db/schema.ts";
import { stragglerFloor } from "./stragglers.ts";
import { iso } from "../core/clock.ts";
import type { ReadContext } from "../core/context.ts";
import { newId } from "../core/ids.ts";
import { EVENT_TYPE } from "../views/webhook.ts";
import { enqueueWebhookEvent } from "../webhooks/outbox.ts";
import { AUDIT_CHAIN_GENESIS, auditCheckpointViewSchema, checkpointCanonical, type AuditCheckpointView, type ChainedEventFields, type LaneHead } from "../views/audit-chain.ts";

/** The key that signs checkpoints, with its public half as published (raw 32 bytes, base64). */
export interface AuditSigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicKeyBase64: string;
}

/** DER prefix of a PKCS #8 Ed25519 private key, before its 32-byte seed (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
/** DER prefix of an Ed25519 SubjectPublicKeyInfo, before its 32 bytes (RFC 8410). */
const SPKI_ED25519_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

export class AuditKeyError extends Error {}

/**
 * The checkpoint signing key from FLAGSTAFF_AUDIT_SIGNING_KEY (a PEM "PRIVATE KEY", or the
 * 32-byte seed in base64) or FLAGSTAFF_AUDIT_SIGNING_KEY_FILE (a file holding either); null when
 * neither is set. Never stored in the database.
 */
export function loadAuditSigningKey(env: Record<string, string | undefined> = process.env): AuditSigningKey | null {
  const file = env.FLAGSTAFF_AUDIT_SIGNING_KEY_FILE;
  const text = env.FLAGSTAFF_AUDIT_SIGNING_KEY ?? (file ? readKeyFile(file) : undefined);
  if (!text?.trim()) return null;
  return parseSigningKey(text.trim());
}

function readKeyFile(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new AuditKeyError(`FLAGSTAFF_AUDIT_SIGNING_KEY_FILE: cannot read ${path}: ${(err as Error).message}`);
  }
}

export function parseSigningKey(text: string): AuditSigningKey {
  let privateKey: KeyObject;
  try {
    if (text.includes("-----BEGIN")) privateKey = createPrivateKey(text);
    else {
      const seed = Buffer.from(text, "base64");
      if (seed.length !== 32) throw new AuditKeyError(`a base64 Ed25519 seed is 32 bytes; this one is ${seed.length}`);
      privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: "der", type: "pkcs8" });
    }
  } catch (err) {
    throw err instanceof AuditKeyError ? err : new AuditKeyError(`the audit signing key is neither an Ed25519 PEM private key nor a base64 32-byte seed: ${(err as Error).message}`);
  }
  if (privateKey.asymmetricKeyType !== "ed25519") throw new AuditKeyError(`the audit signing key must be Ed25519, not ${privateKey.asymmetricKeyType}`);
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, publicKeyBase64: rawPublicKey(publicKey) };
}

/** A public key's raw 32 bytes, base64. */
const rawPublicKey = (key: KeyObject): string => (key.export({ format: "der", type: "spki" }) as Buffer).subarray(SPKI_ED25519_PREFIX.length).toString("base64");

/** An Ed25519 public key from its raw 32 bytes in base64 (or a PEM public key). */
export function publicKeyFrom(text: string): KeyObject {
  if (text.includes("-----BEGIN")) return createPublicKey(text);
  const raw = Buffer.from(text, "base64");
  if (raw.length !== 32) throw new AuditKeyError(`an Ed25519 public key is 32 bytes; ${JSON.stringify(text)} is ${raw.length}`);
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: "der", type: "spki" });
}

/** The public key to publish: PEM and raw base64. */
export const publishedPublicKey = (key: AuditSigningKey): { pem: string; base64: string } => ({
  pem: key.publicKey.export({ format: "pem", type: "spki" }) as string,
  base64: key.publicKeyBase64,
});

type CheckpointRow = typeof auditCheckpoints.$inferSelect;

/** A checkpoint's heads as stored (JSON [[lane, seq, hash], …], by lane). */
const headsOf = (r: CheckpointRow): LaneHead[] => (JSON.parse(r.heads) as [number, number, string][]).map(([lane, seq, hash]) => ({ lane, seq, hash }));

const checkpointView = (r: CheckpointRow): AuditCheckpointView => ({
  orgId: r.orgId,
  seq: Number(r.seq),
  heads: headsOf(r),
  signedAt: Number(r.signedAt),
  signedAtIso: iso(Number(r.signedAt)),
  publicKey: r.publicKey,
  signature: r.signature,
});

/**
 * One checkpoint per organization whose chain grew since its last one: every lane's head (its
 * sequence and hash), read at once and signed together, stored, and announced (webhook
 * `audit.checkpoint`, to endpoints that list it). Its `seq` is the sum of the lanes' sequences:
 * the number of events it covers, which grows with the chain, so two checkpoints of the same heads
 * collide on the unique index. The periodic pass (src/jobs/audit-jobs.ts) and `flagstaff audit
 * checkpoint` run it. Returns the checkpoints made.
 */
export async function checkpointChains(ctx: ReadContext, key: AuditSigningKey, input: { orgId?: string } = {}): Promise<AuditCheckpointView[]> {
  // One statement: every lane's head as of one moment.
  const rows = await ctx.store.db
    .select()
    .from(auditChainHeads)
    .where(input.orgId ? eq(auditChainHeads.orgId, input.orgId) : undefined)
    .orderBy(asc(auditChainHeads.orgId), asc(auditChainHeads.lane));
  const byOrg = new Map<string, LaneHead[]>();
  for (const r of rows) {
    const heads = byOrg.get(r.orgId) ?? [];
    heads.push({ lane: r.lane, seq: Number(r.lastSeq), hash: r.lastHash });
    byOrg.set(r.orgId, heads);
  }
  const made: AuditCheckpointView[] = [];
  for (const [orgId, heads] of byOrg) {
    const total = heads.reduce((n, h) => n + h.seq, 0);
    const [last] = await ctx.store.db.select().from(auditCheckpoints).where(eq(auditCheckpoints.orgId, orgId)).orderBy(desc(auditCheckpoints.seq)).limit(1);
    if (total === 0 || (last && Number(last.seq) >= total)) continue;
    const signedAt = ctx.clock.now();
    const signature = sign(null, Buffer.from(checkpointCanonical({ orgId, heads, signedAt }), "utf8"), key.privateKey).toString("base64");
    const row: CheckpointRow = {
      id: newId(),
      orgId,
      seq: total,
      heads: JSON.stringify(heads.map((h) => [h.lane, h.seq, h.hash])),
      signedAt,
      publicKey: key.publicKeyBase64,
      signature,
    };
    const stored = await ctx.store.transaction(async () => {
      // Another instance's pass may have signed these heads meanwhile (the unique index says so).
      const inserted = await ctx.store.db.insert(auditCheckpoints).values(row).onConflictDoNothing().returning({ id: auditCheckpoints.id });
      if (!inserted.length) return false;
      await enqueueWebhookEvent({ ...ctx, db: ctx.store.db, orgId }, { type: EVENT_TYPE.auditCheckpoint, data: checkpointView(row), now: signedAt });
      return true;
    }, { exclusive: false });
    if (stored) made.push(checkpointView(row));
  }
  return made;
}

/** Events read per query while verifying or exporting. */
const PAGE = 5_000;

type EventRow = typeof auditEvents.$inferSelect;
const fieldsOf = (r: EventRow): ChainedEventFields => ({
  orgId: r.orgId,
  lane: r.chainLane,
  seq: Number(r.chainSeq),
  id: r.id,
  projectId: r.projectId,
  actorType: r.actorType,
  actorId: r.actorId,
  action: r.action,
  entityType: r.entityType,
  entityId: r.entityId,
  before: r.before,
  after: r.after,
  data: r.data,
  createdAt: Number(r.createdAt),
});

/** A lane's chained events in order, a page at a time (the unique index on (org_id, chain_lane, chain_seq)). */
async function* chainOf(ctx: ReadContext, orgId: string, lane: number, from = 1, to = Number.MAX_SAFE_INTEGER): AsyncGenerator<EventRow> {
  let after = from - 1;
  for (;;) {
    const page = await ctx.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.orgId, orgId), eq(auditEvents.chainLane, lane), gt(auditEvents.chainSeq, after), lte(auditEvents.chainSeq, to)))
      .orderBy(asc(auditEvents.chainSeq))
      .limit(PAGE);
    yield* page;
    if (page.length < PAGE) return;
    after = Number(page.at(-1)!.chainSeq);
  }
}

/** The lanes an organization's chain has: those with a head, with chained events, or named by a checkpoint. */
async function lanesOf(ctx: ReadContext, orgId: string, checkpoints: readonly AuditCheckpointView[]): Promise<number[]> {
  const lanes = new Set<number>();
  for (const h of await ctx.db.select({ lane: auditChainHeads.lane }).from(auditChainHeads).where(eq(auditChainHeads.orgId, orgId))) lanes.add(h.lane);
  const withEvents = await ctx.db
    .selectDistinct({ lane: auditEvents.chainLane })
    .from(auditEvents)
    .where(and(eq(auditEvents.orgId, orgId), sql`${auditEvents.chainSeq} IS NOT NULL`));
  for (const e of withEvents) lanes.add(e.lane);
  for (const c of checkpoints) for (const h of c.heads) lanes.add(h.lane);
  return [...lanes].sort((a, b) => a - b);
}

/** A checkpoint as `verify` names it: when it was signed, how many events it covers, where it was read. */
export interface NamedCheckpoint {
  seq: number;
  signedAtIso: string;
  /** "the database", or FILE:LINE for a checkpoint kept outside it. */
  source: string;
}

/** The first event (or checkpoint) of an organization that does not verify, and why. */
export interface ChainFailure {
  org: string;
  /** The event named: its id, lane and sequence (null for an event not chained) and action; null when what fails is a lane's end or a checkpoint. */
  event: { id: string; lane: number | null; seq: number | null; action: string } | null;
  /** The checkpoint named, when a checkpoint is what fails. */
  checkpoint: NamedCheckpoint | null;
  why: string;
}

export interface OrgVerification {
  org: string;
  events: number;
  /** Checkpoints stored in the database. */
  checkpoints: number;
  /** Checkpoints kept outside the database that were given for the organization, each found in it. */
  external: number;
  /** Stored checkpoints whose signature was checked against a trusted key. */
  signaturesChecked: number;
  failure: ChainFailure | null;
}

/** A checkpoint kept outside the database, with where it was read (FILE:LINE). */
export interface ExternalCheckpoint {
  checkpoint: AuditCheckpointView;
  source: string;
}

/** A line of a checkpoint file that is not a checkpoint. */
export class CheckpointFileError extends Error {}

/**
 * Checkpoints kept outside the database (docs/audit.md, "Keeping checkpoints outside"): JSON
 * lines, each the `data` of an `audit.checkpoint` webhook event, as `flagstaff audit checkpoints`
 * writes them, or the event's whole body as a receiver got it (`{ type, timestamp, data }`).
 * Blank lines are skipped; any other line is an error naming it.
 */
export function parseCheckpointLines(text: string, name: string): ExternalCheckpoint[] {
  const out: ExternalCheckpoint[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    const source = `${name}:${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new CheckpointFileError(`${source}: not a line of JSON`);
    }
    const body = value as { type?: unknown; data?: unknown } | null;
    const parsed = auditCheckpointViewSchema.safeParse(body?.type === EVENT_TYPE.auditCheckpoint ? body.data : value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new CheckpointFileError(`${source}: not an audit checkpoint (${issue?.path.join(".") || "the line"}: ${issue?.message})`);
    }
    out.push({ checkpoint: parsed.data, source });
  });
  return out;
}

/** A checkpoint as one line of a checkpoint file: the `data` of its `audit.checkpoint` event. */
export const checkpointLine = (c: AuditCheckpointView): string => JSON.stringify(c);

/** What tells checkpoints apart in files: the same one read twice is one. */
export const checkpointIdentity = (c: AuditCheckpointView): string => `${c.orgId}\n${c.seq}\n${c.signature}`;

/** The checkpoints stored in the database, of every organization or one, by organization then sequence. */
export async function storedCheckpoints(ctx: ReadContext, orgId?: string): Promise<AuditCheckpointView[]> {
  const rows = await ctx.db
    .select()
    .from(auditCheckpoints)
    .where(orgId ? eq(auditCheckpoints.orgId, orgId) : undefined)
    .orderBy(asc(auditCheckpoints.orgId), asc(auditCheckpoints.seq));
  return rows.map(checkpointView);
}

/** Two copies of a checkpoint are one when what is signed, the key and the signature are the same. */
const sameCheckpoint = (a: AuditCheckpointView, b: AuditCheckpointView): boolean =>
  a.seq === b.seq && a.publicKey === b.publicKey && a.signature === b.signature && checkpointCanonical(a) === checkpointCanonical(b);

/**
 * How long after the checkpoint interval an event may still be covered by no checkpoint before
 * `verify` (with a signing key configured) fails: a pass that ran long, an election after the
 * signing instance stopped (docs/audit.md, "Verifying").
 */
export const CHECKPOINT_GRACE_MS = 15 * 60_000;

export interface VerifyInput {
  orgSlug?: string;
  /**
   * The public keys to trust. A checkpoint signed by any other key is a failure; with none, no
   * signature is checked (the output says how many were not).
   */
  trustedKeys: readonly KeyObject[];
  /** Checkpoints kept outside the database: each must be in it, the same, and sign the chain as it is. */
  external?: readonly ExternalCheckpoint[];
  /**
   * With a signing key configured, how long an event may go covered by no checkpoint (the
   * interval plus CHECKPOINT_GRACE_MS): an older one not covered is a failure. Null: not checked.
   */
  coverWithinMs?: number | null;
}

const FROM_DATABASE = "the database";
const named = (c: AuditCheckpointView, source: string): NamedCheckpoint => ({ seq: c.seq, signedAtIso: c.signedAtIso, source });

/**
 * Recomputes every organization's chain (or one's), lane by lane, in pages (docs/audit.md,
 * "Verifying"), and names the first failure of each organization:
 * - each checkpoint, stored or given, signed by a trusted key (any other key fails);
 * - each checkpoint given (kept outside the database) found in the database, the same;
 * - each event's sequence following the one before it in its lane (else events were deleted),
 *   its previous hash that event's hash (else the lane was cut or rewritten there), its hash that
 *   of its content (else it was edited), and the hash each checkpoint signed at its place;
 * - each lane's end: its head, and no checkpoint signing beyond it;
 * - with `coverWithinMs`, no event left covered by no checkpoint longer than that;
 * - no event without a place in the chain.
 */
export async function verifyChains(ctx: ReadContext, input: VerifyInput): Promise<OrgVerification[]> {
  const orgs = await ctx.db
    .select({ id: organizations.id, slug: organizations.slug })
    .from(organizations)
    .where(input.orgSlug ? eq(organizations.slug, input.orgSlug) : undefined)
    .orderBy(asc(organizations.slug));
  const trusted = new Map(input.trustedKeys.map((k) => [rawPublicKey(k), k]));
  const external = input.external ?? [];
  const out: OrgVerification[] = [];
  for (const org of orgs) {
    const given = new Map<string, ExternalCheckpoint>();
    for (const e of external) if (e.checkpoint.orgId === org.id && !given.has(checkpointIdentity(e.checkpoint))) given.set(checkpointIdentity(e.checkpoint), e);
    out.push(await verifyOrg(ctx, org, trusted, [...given.values()], input.coverWithinMs ?? null));
  }
  if (input.orgSlug) return out;
  // A checkpoint of an organization the database no longer has: the organization went with its chain.
  const known = new Set(orgs.map((o) => o.id));
  for (const e of external) {
    const orgId = e.checkpoint.orgId;
    if (known.has(orgId)) continue;
    known.add(orgId);
    const count = external.filter((x) => x.checkpoint.orgId === orgId).length;
    out.push({
      org: orgId,
      events: 0,
      checkpoints: 0,
      external: count,
      signaturesChecked: 0,
      failure: { org: orgId, event: null, checkpoint: named(e.checkpoint, e.source), why: `it signs the chain of organization ${orgId}, which is not in the database: the organization was deleted, with its chain` },
    });
  }
  return out;
}

async function verifyOrg(ctx: ReadContext, org: { id: string; slug: string }, trusted: Map<string, KeyObject>, given: ExternalCheckpoint[], coverWithinMs: number | null): Promise<OrgVerification> {
  const stored = await storedCheckpoints(ctx, org.id);
  const result: OrgVerification = { org: org.slug, events: 0, checkpoints: stored.length, external: given.length, signaturesChecked: 0, failure: null };
  const fail = (why: string, at: { event?: EventRow; checkpoint?: NamedCheckpoint } = {}) => {
    const e = at.event;
    result.failure = {
      org: org.slug,
      event: e ? { id: e.id, lane: e.chainSeq === null ? null : e.chainLane, seq: e.chainSeq === null ? null : Number(e.chainSeq), action: e.action } : null,
      checkpoint: at.checkpoint ?? null,
      why,
    };
    return result;
  };

  // Signatures first: a checkpoint not signed by a trusted key proves nothing.
  if (trusted.size) {
    for (const { checkpoint: c, source } of [...stored.map((checkpoint) => ({ checkpoint, source: FROM_DATABASE })), ...given]) {
      const key = trusted.get(c.publicKey);
      if (!key) return fail(`it is signed by the key ${c.publicKey}, which is not a trusted key: the checkpoint was made, or signed again, with another key`, { checkpoint: named(c, source) });
      if (!verify(null, Buffer.from(checkpointCanonical(c), "utf8"), key, Buffer.from(c.signature, "base64"))) {
        return fail(`its signature does not verify: the checkpoint was altered`, { checkpoint: named(c, source) });
      }
      if (source === FROM_DATABASE) result.signaturesChecked++;
    }
  }
  // Each checkpoint kept outside must be in the database as it is there (then the chain is checked against the stored ones).
  const bySeq = new Map(stored.map((c) => [c.seq, c]));
  for (const { checkpoint: c, source } of given) {
    const there = bySeq.get(c.seq);
    if (!there) return fail(`it is missing from the database: checkpoints were deleted`, { checkpoint: named(c, source) });
    if (!sameCheckpoint(there, c)) {
      return fail(`the database's checkpoint of ${c.seq} events differs from it (signed at ${there.signedAtIso} by ${there.publicKey}): the checkpoint was replaced`, { checkpoint: named(c, source) });
    }
  }

  const heads = new Map((await ctx.db.select().from(auditChainHeads).where(eq(auditChainHeads.orgId, org.id))).map((h) => [h.lane, h]));
  // The lanes as the newest checkpoint signed them: events beyond are covered by none yet.
  const newest = stored.at(-1);
  const coveredTo = new Map((newest?.heads ?? []).map((h) => [h.lane, h.seq]));
  let oldestUncovered: EventRow | null = null;
  for (const lane of await lanesOf(ctx, org.id, stored)) {
    // What each checkpoint signed for this lane, by sequence.
    const signed = new Map<number, { hash: string; signedAt: number }[]>();
    for (const c of stored) {
      for (const h of c.heads) {
        if (h.lane !== lane) continue;
        signed.set(h.seq, [...(signed.get(h.seq) ?? []), { hash: h.hash, signedAt: c.signedAt }]);
      }
    }
    const covered = coveredTo.get(lane) ?? 0;
    let expected = 1;
    let prev = AUDIT_CHAIN_GENESIS;
    for await (const row of chainOf(ctx, org.id, lane)) {
      const seq = Number(row.chainSeq);
      if (seq !== expected) {
        return fail(`sequence gap: lane ${lane} goes from ${expected - 1} to ${seq}: event(s) ${expected}${seq - 1 > expected ? `..${seq - 1}` : ""} of the lane before it were deleted`, { event: row });
      }
      if (row.prevHash !== prev) {
        return fail(`broken link: its previous hash ${row.prevHash} is not the hash of event ${seq - 1} of lane ${lane} (${prev}): the event before it, or the lane from there, was rewritten`, { event: row });
      }
      const hash = chainHash(prev, eventDigest(fieldsOf(row)));
      if (hash !== row.hash) return fail(`hash mismatch: its content does not hash to its stored hash: the event was edited after it was written`, { event: row });
      const wrong = signed.get(seq)?.find((c) => c.hash !== hash);
      if (wrong) {
        return fail(`checkpoint mismatch: the checkpoint signed at ${iso(wrong.signedAt)} says event ${seq} of lane ${lane} hashed ${wrong.hash}, the chain has ${hash}: the lane up to it was rewritten`, { event: row });
      }
      if (seq > covered && (!oldestUncovered || Number(row.createdAt) < Number(oldestUncovered.createdAt))) oldestUncovered = row;
      prev = hash;
      expected++;
      result.events++;
    }
    const last = expected - 1;
    const head = heads.get(lane);
    const headSeq = head ? Number(head.lastSeq) : 0;
    if (headSeq > last) return fail(`lane ${lane} ends at ${last} but its head says ${headSeq}: the last event(s) ${last + 1}..${headSeq} of the lane were deleted`);
    if (headSeq < last) return fail(`lane ${lane} ends at ${last} but its head says ${headSeq}: events were added outside the chain's writer`);
    if (head && head.lastHash !== prev) return fail(`the head of lane ${lane} has hash ${head.lastHash}, not the last event's (${prev})`);
    const beyond = [...signed.keys()].find((seq) => seq > last);
    if (beyond !== undefined) return fail(`a checkpoint signed event ${beyond} of lane ${lane}, beyond the lane's end (${last}): the last events were deleted`);
  }

  if (coverWithinMs !== null && oldestUncovered && Number(oldestUncovered.createdAt) < ctx.clock.now() - coverWithinMs) {
    const since = newest ? `the newest checkpoint was signed at ${newest.signedAtIso}` : "there is no checkpoint";
    return fail(
      `covered by no checkpoint though written at ${iso(Number(oldestUncovered.createdAt))}, more than ${formatDuration(coverWithinMs)} ago (${since}): ` +
        `checkpoints were deleted, or the instance that signs them stopped or has another key`,
      { event: oldestUncovered },
    );
  }

  const [unchained] = await ctx.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.orgId, org.id), isNull(auditEvents.chainSeq)))
    .orderBy(asc(auditEvents.createdAt), asc(auditEvents.id))
    .limit(1);
  if (unchained) {
    const [all] = await ctx.db.select({ n: count() }).from(auditEvents).where(and(eq(auditEvents.orgId, org.id), isNull(auditEvents.chainSeq)));
    const what = `it has no place in the chain (${all!.n} such event(s), this the oldest, written at ${iso(Number(unchained.createdAt))})`;
    if (ctx.store.soleWriter) return fail(`${what}: on SQLite an event is chained as it is written, and one written without its place never is: it was inserted outside Flagstaff`, { event: unchained });
    const floor = await stragglerFloor(ctx.db, org.id);
    if (Number(unchained.createdAt) < floor.at) {
      return fail(`${what}: it is dated before ${floor.of} (${iso(floor.at)}), and such an event is never chained: it was inserted outside Flagstaff, back-dated`, { event: unchained });
    }
    return fail(
      `${what}: such an event is chained only when an instance of a release before the chain wrote it during a rolling upgrade, seconds after the last of those instances stopped (docs/audit.md, "Upgrading"); otherwise it never is: it was inserted outside Flagstaff`,
      { event: unchained },
    );
  }
  return result;
}

/** A duration as `verify` says it: in hours, minutes or seconds. */
const formatDuration = (ms: number): string =>
  ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;

/** What an export covers: a case (its events and its reports'), or a period [from, to). */
export type ExportSelection = { caseId: string } | { from: number; to: number };

/** One event of an export: in full when selected, else only its digest (its content stays private). */
export type ExportedEvent = { seq: number; hash: string } & ({ event: ChainedEventFields } | { digest: string });

export interface AuditExport {
  format: "flagstaff.audit-export.v1";
  exportedAt: string;
  organization: { id: string; slug: string };
  selection: { caseId: string } | { from: string; to: string };
  /** Public keys of the checkpoints included (raw Ed25519, base64): check them against the published one. */
  publicKeys: string[];
  /** Runs of consecutive events of one lane, each from a selected event to the checkpoint covering it. */
  segments: { lane: number; prevHash: string; events: ExportedEvent[]; checkpoint: AuditCheckpointView | null }[];
  /** How many events were selected. */
  selected: number;
}

/**
 * The events of a case or a period with what proves them (docs/audit.md, "Exports"). A case's
 * events are scattered over the lanes of the chain: for each selected event the export carries
 * every event of its lane from it to the first checkpoint that signed the lane at or after it
 * (the lane's head when none yet), the selected ones in full and the others as their digests
 * only, so that a third party recomputes each hash from the previous one up to the signed
 * checkpoint without seeing other cases' content.
 */
export async function exportAudit(ctx: ReadContext, input: { orgId: string; selection: ExportSelection }): Promise<AuditExport> {
  const [org] = await ctx.db.select({ id: organizations.id, slug: organizations.slug }).from(organizations).where(eq(organizations.id, input.orgId));
  if (!org) throw new Error(`no organization ${input.orgId}`);
  const sel = input.selection;
  const inOrg = eq(auditEvents.orgId, org.id);
  let where;
  if ("caseId" in sel) {
    const reportIds = (await ctx.db.select({ id: reports.id }).from(reports).where(and(eq(reports.orgId, org.id), eq(reports.caseId, sel.caseId)))).map((r) => r.id);
    const ofCase = and(eq(auditEvents.entityType, "case"), eq(auditEvents.entityId, sel.caseId));
    where = and(inOrg, reportIds.length ? or(ofCase, and(eq(auditEvents.entityType, "report"), inArray(auditEvents.entityId, reportIds))) : ofCase);
  } else where = and(inOrg, gte(auditEvents.createdAt, sel.from), lt(auditEvents.createdAt, sel.to));
  const selected = await ctx.db
    .select({ lane: auditEvents.chainLane, seq: auditEvents.chainSeq })
    .from(auditEvents)
    .where(and(where, sql`${auditEvents.chainSeq} IS NOT NULL`))
    .orderBy(asc(auditEvents.chainLane), asc(auditEvents.chainSeq));
  const checkpoints = (await ctx.db.select().from(auditCheckpoints).where(eq(auditCheckpoints.orgId, org.id)).orderBy(asc(auditCheckpoints.seq))).map((c) => ({
    row: c,
    heads: new Map(headsOf(c).map((h) => [h.lane, h.seq])),
  }));
  const heads = new Map((await ctx.db.select().from(auditChainHeads).where(eq(auditChainHeads.orgId, org.id))).map((h) => [h.lane, Number(h.lastSeq)]));
  // Each selected event's range reaches the first checkpoint that signed its lane at or after it
  // (checkpoints come in order, and a lane's signed sequence never decreases); overlapping ranges merge.
  const ranges: { lane: number; from: number; to: number; checkpoint: CheckpointRow | null }[] = [];
  for (const { lane, seq: s } of selected) {
    const seq = Number(s);
    const open = ranges.at(-1);
    // Within the range before it in its lane: the same checkpoint covers it.
    if (open && open.lane === lane && seq <= open.to) continue;
    const cp = checkpoints.find((c) => (c.heads.get(lane) ?? 0) >= seq) ?? null;
    ranges.push({ lane, from: seq, to: cp ? cp.heads.get(lane)! : (heads.get(lane) ?? seq), checkpoint: cp?.row ?? null });
  }
  const wanted = new Set(selected.map((e) => `${e.lane}:${e.seq}`));
  const segments: AuditExport["segments"] = [];
  for (const r of ranges) {
    const events: ExportedEvent[] = [];
    let prevHash: string | null = null;
    for await (const row of chainOf(ctx, org.id, r.lane, r.from, r.to)) {
      const f = fieldsOf(row);
      prevHash ??= row.prevHash ?? AUDIT_CHAIN_GENESIS;
      events.push(wanted.has(`${f.lane}:${f.seq}`) ? { seq: f.seq, hash: row.hash ?? "", event: f } : { seq: f.seq, hash: row.hash ?? "", digest: eventDigest(f) });
    }
    segments.push({ lane: r.lane, prevHash: prevHash ?? AUDIT_CHAIN_GENESIS, events, checkpoint: r.checkpoint ? checkpointView(r.checkpoint) : null });
  }
  return {
    format: "flagstaff.audit-export.v1",
    exportedAt: iso(ctx.clock.now()),
    organization: org,
    selection: "caseId" in sel ? { caseId: sel.caseId } : { from: iso(sel.from), to: iso(sel.to) },
    publicKeys: [...new Set(segments.flatMap((s) => (s.checkpoint ? [s.checkpoint.publicKey] : [])))],
    segments,
    selected: selected.length,
  };
}
