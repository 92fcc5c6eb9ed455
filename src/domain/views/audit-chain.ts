/**
 * The audit chain's canonical forms (docs/audit.md): what is hashed for an event and what is
 * signed for a checkpoint, written so that a third party recomputes them with no Flagstaff code
 * (scripts/verify-audit-export.mjs does, with node:crypto only). Pure: the hashing itself is
 * src/db/audit-hash.ts's.
 *
 * An event's digest is SHA-256 (hex) of the UTF-8 of `auditEventCanonical(e)`: the JSON array
 *   ["flagstaff.audit.v1", orgId, id, projectId, actorType, actorId, action, entityType,
 *    entityId, before, after, data, createdAt]
 * as JSON.stringify writes it (no spaces; for an array of strings, integers and nulls this is
 * also its RFC 8785 canonical form). `before`, `after` and `data` are the stored JSON texts (or
 * null), hashed as strings, so their own key order never matters; `createdAt` is in ms.
 * Its hash is SHA-256 (hex) of the UTF-8 of prevHash followed by the digest (128 hex digits),
 * prevHash being the hash of the event before it in its lane of the organization's chain, or 64
 * zeros for a lane's first (seq 1). An organization's chain has lanes (sub-chains, each with its
 * own head, so that one organization's commits do not all queue on one head: docs/audit.md,
 * "Lanes"); each lane links exactly as one chain would. The sequence and the lane are not in the
 * digest: the writer computes digests before it knows them (before it takes a lane,
 * src/db/audit-hash.ts), and the links already fix each event's place (a checkpoint
 * signs each lane's sequence with its hash). A checkpoint signs (Ed25519) the UTF-8 of
 *   ["flagstaff.audit-checkpoint.v1", orgId, [[lane, seq, hash], …], signedAt]
 * written the same way, its lanes in increasing order: every lane's head at signedAt.
 */
import { z } from "zod";
import { isoDateTime } from "./common.ts";

/** The previous hash of the first event of a lane. */
export const AUDIT_CHAIN_GENESIS = "0".repeat(64);

/** The fields of an audit event that its digest covers, as stored (and its lane and sequence, which the links cover). */
export interface ChainedEventFields {
  orgId: string;
  lane: number;
  seq: number;
  id: string;
  projectId: string | null;
  actorType: string;
  actorId: string | null;
  action: string;
  entityType: string;
  entityId: string;
  before: string | null;
  after: string | null;
  data: string | null;
  createdAt: number;
}

export const auditEventCanonical = (e: Omit<ChainedEventFields, "seq" | "lane">): string =>
  JSON.stringify([
    "flagstaff.audit.v1", e.orgId, e.id, e.projectId, e.actorType, e.actorId, e.action, e.entityType, e.entityId, e.before, e.after, e.data, e.createdAt,
  ]);

/** A lane's head as a checkpoint signs it. */
export interface LaneHead {
  lane: number;
  seq: number;
  hash: string;
}

/** What a checkpoint's signature covers: every lane's head of the organization, by lane. */
export interface CheckpointFields {
  orgId: string;
  heads: LaneHead[];
  signedAt: number;
}

export const checkpointCanonical = (c: CheckpointFields): string =>
  JSON.stringify(["flagstaff.audit-checkpoint.v1", c.orgId, [...c.heads].sort((a, b) => a.lane - b.lane).map((h) => [h.lane, h.seq, h.hash]), c.signedAt]);

/** A signed checkpoint as published (webhook `audit.checkpoint`, exports). */
export const auditCheckpointViewSchema = z
  .object({
    orgId: z.string(),
    seq: z.number().int().meta({ description: "How many events the checkpoint covers: the sum of its lanes' sequences (not signed: it follows from them)." }),
    heads: z
      .array(
        z.object({
          lane: z.number().int(),
          seq: z.number().int().meta({ description: "The sequence of the lane's last event the checkpoint covers." }),
          hash: z.string().meta({ description: "That event's hash (SHA-256 hex): it covers every event before it in the lane too." }),
        }),
      )
      .meta({ description: "Every lane's head of the organization's chain, by lane." }),
    signedAt: z.number().int().meta({ description: "When it was signed, in ms since the epoch (part of what is signed)." }),
    signedAtIso: isoDateTime,
    publicKey: z.string().meta({ description: "The Ed25519 public key that signed it, raw 32 bytes in base64." }),
    signature: z
      .string()
      .meta({ description: 'Ed25519 signature (base64) of the UTF-8 of ["flagstaff.audit-checkpoint.v1", orgId, [[lane, seq, hash], …], signedAt] as JSON (docs/audit.md).' }),
  })
  .meta({ id: "AuditCheckpointEvent" });
export type AuditCheckpointView = z.infer<typeof auditCheckpointViewSchema>;
