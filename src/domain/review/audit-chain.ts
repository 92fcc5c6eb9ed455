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
import { chainStragglers } from "../core/audit.ts";
import { iso } from "../core/clock.ts";
import type { ReadContext } from "../core/context.ts";
import { newId } from "../core/ids.ts";
import { EVENT_TYPE } from "../views/webhook.ts";
import { enqueueWebhookEvent } from "../webhooks/outbox.ts";
import { AUDIT_CHAIN_GENESIS, checkpointCanonical, type AuditCheckpointView, type ChainedEventFields, type LaneHead } from "../views/audit-chain.ts";

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
 * collide on the unique index. Events left unchained by an instance of the previous release are
 * chained first. The periodic pass (src/jobs/audit-jobs.ts) and `flagstaff audit checkpoint` run
 * it. Returns the checkpoints made.
 */
export async function checkpointChains(ctx: ReadContext, key: AuditSigningKey, input: { orgId?: string } = {}): Promise<AuditCheckpointView[]> {
  await chainStragglers(ctx.store);
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

/** The first event (or checkpoint) of an organization that does not verify, and why. */
export interface ChainFailure {
  org: string;
  /** The event named: its id, lane, sequence and action (null when what fails is a lane's end or a checkpoint alone). */
  event: { id: string; lane: number; seq: number; action: string } | null;
  why: string;
}

export interface OrgVerification {
  org: string;
  events: number;
  checkpoints: number;
  /** Checkpoints whose signature was checked against a trusted key. */
  signaturesChecked: number;
  failure: ChainFailure | null;
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
async function lanesOf(ctx: ReadContext, orgId: string, checkpoints: CheckpointRow[]): Promise<number[]> {
  const lanes = new Set<number>();
  for (const h of await ctx.db.select({ lane: auditChainHeads.lane }).from(auditChainHeads).where(eq(auditChainHeads.orgId, orgId))) lanes.add(h.lane);
  const withEvents = await ctx.db
    .selectDistinct({ lane: auditEvents.chainLane })
    .from(auditEvents)
    .where(and(eq(auditEvents.orgId, orgId), sql`${auditEvents.chainSeq} IS NOT NULL`));
  for (const e of withEvents) lanes.add(e.lane);
  for (const c of checkpoints) for (const h of headsOf(c)) lanes.add(h.lane);
  return [...lanes].sort((a, b) => a - b);
}

/**
 * Recomputes every organization's chain (or one's), lane by lane, in pages: each event's
 * sequence follows the one before it in its lane (else events were deleted), its previous hash
 * is that event's hash (else the lane was cut or rewritten there), and its hash is that of its
 * content (else it was edited). Each checkpoint must name, for each lane, an event of the lane
 * with its hash, and be signed by a trusted key. The first failure of each organization (in
 * lane order) is named.
 */
export async function verifyChains(ctx: ReadContext, input: { orgSlug?: string; trustedKeys: readonly KeyObject[] }): Promise<OrgVerification[]> {
  const orgs = await ctx.db
    .select({ id: organizations.id, slug: organizations.slug })
    .from(organizations)
    .where(input.orgSlug ? eq(organizations.slug, input.orgSlug) : undefined)
    .orderBy(asc(organizations.slug));
  const trusted = new Map(input.trustedKeys.map((k) => [rawPublicKey(k), k]));
  const out: OrgVerification[] = [];
  for (const org of orgs) {
    const checkpoints = await ctx.db.select().from(auditCheckpoints).where(eq(auditCheckpoints.orgId, org.id)).orderBy(asc(auditCheckpoints.seq));
    const result: OrgVerification = { org: org.slug, events: 0, checkpoints: checkpoints.length, signaturesChecked: 0, failure: null };
    const fail = (event: EventRow | null, why: string) => {
      result.failure = { org: org.slug, event: event ? { id: event.id, lane: event.chainLane, seq: Number(event.chainSeq), action: event.action } : null, why };
    };
    out.push(result);
    // Signatures first: a checkpoint not signed by a trusted key proves nothing.
    for (const c of checkpoints) {
      const key = trusted.get(c.publicKey);
      if (!key) continue;
      const fields = { orgId: c.orgId, heads: headsOf(c), signedAt: Number(c.signedAt) };
      if (!verify(null, Buffer.from(checkpointCanonical(fields), "utf8"), key, Buffer.from(c.signature, "base64"))) {
        fail(null, `checkpoint of ${iso(Number(c.signedAt))} (${c.seq} events): its signature does not verify: the checkpoint was altered`);
        break;
      }
      result.signaturesChecked++;
    }
    if (result.failure) continue;
    const heads = new Map((await ctx.db.select().from(auditChainHeads).where(eq(auditChainHeads.orgId, org.id))).map((h) => [h.lane, h]));
    for (const lane of await lanesOf(ctx, org.id, checkpoints)) {
      // What each checkpoint signed for this lane, by sequence.
      const signed = new Map<number, { hash: string; signedAt: number }[]>();
      for (const c of checkpoints) {
        for (const h of headsOf(c)) {
          if (h.lane !== lane) continue;
          signed.set(h.seq, [...(signed.get(h.seq) ?? []), { hash: h.hash, signedAt: Number(c.signedAt) }]);
        }
      }
      let expected = 1;
      let prev = AUDIT_CHAIN_GENESIS;
      for await (const row of chainOf(ctx, org.id, lane)) {
        const seq = Number(row.chainSeq);
        if (seq !== expected) {
          fail(row, `sequence gap: lane ${lane} goes from ${expected - 1} to ${seq}: event(s) ${expected}${seq - 1 > expected ? `..${seq - 1}` : ""} of the lane before it were deleted`);
          break;
        }
        if (row.prevHash !== prev) {
          fail(row, `broken link: its previous hash ${row.prevHash} is not the hash of event ${seq - 1} of lane ${lane} (${prev}): the event before it, or the lane from there, was rewritten`);
          break;
        }
        const hash = chainHash(prev, eventDigest(fieldsOf(row)));
        if (hash !== row.hash) {
          fail(row, `hash mismatch: its content does not hash to its stored hash: the event was edited after it was written`);
          break;
        }
        const wrong = signed.get(seq)?.find((c) => c.hash !== hash);
        if (wrong) {
          fail(row, `checkpoint mismatch: the checkpoint signed at ${iso(wrong.signedAt)} says event ${seq} of lane ${lane} hashed ${wrong.hash}, the chain has ${hash}: the lane up to it was rewritten`);
          break;
        }
        prev = hash;
        expected++;
        result.events++;
      }
      if (result.failure) break;
      const last = expected - 1;
      const head = heads.get(lane);
      const headSeq = head ? Number(head.lastSeq) : 0;
      if (headSeq > last) fail(null, `lane ${lane} ends at ${last} but its head says ${headSeq}: the last event(s) ${last + 1}..${headSeq} of the lane were deleted`);
      else if (headSeq < last) fail(null, `lane ${lane} ends at ${last} but its head says ${headSeq}: events were added outside the chain's writer`);
      else if (head && head.lastHash !== prev) fail(null, `the head of lane ${lane} has hash ${head.lastHash}, not the last event's (${prev})`);
      const beyond = [...signed.keys()].find((seq) => seq > last);
      if (!result.failure && beyond !== undefined) fail(null, `a checkpoint signed event ${beyond} of lane ${lane}, beyond the lane's end (${last}): the last events were deleted`);
      if (result.failure) break;
    }
    if (!result.failure) {
      const [unchained] = await ctx.db.select({ n: count() }).from(auditEvents).where(and(eq(auditEvents.orgId, org.id), isNull(auditEvents.chainSeq)));
      if (unchained && unchained.n > 0) fail(null, `${unchained.n} event(s) are not chained yet (written by an instance of the release before the chain; the next checkpoint pass chains them)`);
    }
  }
  return out;
}

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
