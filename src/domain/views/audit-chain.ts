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
 * prevHash being the hash of the event before it in the organization's chain, or 64 zeros for
 * the first (seq 1). The sequence is not in the digest: the writer computes digests before it
 * knows the sequence (PostgreSQL chains them in the database, src/db/audit-hash.ts), and the
 * links already fix each event's place (a checkpoint signs the sequence with the hash). A checkpoint signs (Ed25519) the UTF-8 of
 *   ["flagstaff.audit-checkpoint.v1", orgId, seq, hash, signedAt]
 * written the same way.
 */
import { z } from "zod";
import { isoDateTime } from "./common.ts";

/** The previous hash of an organization's first event. */
export const AUDIT_CHAIN_GENESIS = "0".repeat(64);

/** The fields of an audit event that its digest covers, as stored (and its sequence, which the links cover). */
export interface ChainedEventFields {
  orgId: string;
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

export const auditEventCanonical = (e: Omit<ChainedEventFields, "seq">): string =>
  JSON.stringify([
    "flagstaff.audit.v1", e.orgId, e.id, e.projectId, e.actorType, e.actorId, e.action, e.entityType, e.entityId, e.before, e.after, e.data, e.createdAt,
  ]);

/** What a checkpoint's signature covers. */
export interface CheckpointFields {
  orgId: string;
  seq: number;
  hash: string;
  signedAt: number;
}

export const checkpointCanonical = (c: CheckpointFields): string => JSON.stringify(["flagstaff.audit-checkpoint.v1", c.orgId, c.seq, c.hash, c.signedAt]);

/** A signed checkpoint as published (webhook `audit.checkpoint`, exports). */
export const auditCheckpointViewSchema = z
  .object({
    orgId: z.string(),
    seq: z.number().int().meta({ description: "The sequence of the last event the checkpoint covers." }),
    hash: z.string().meta({ description: "That event's hash (SHA-256 hex): it covers every event before it too." }),
    signedAt: z.number().int().meta({ description: "When it was signed, in ms since the epoch (part of what is signed)." }),
    signedAtIso: isoDateTime,
    publicKey: z.string().meta({ description: "The Ed25519 public key that signed it, raw 32 bytes in base64." }),
    signature: z.string().meta({ description: 'Ed25519 signature (base64) of the UTF-8 of ["flagstaff.audit-checkpoint.v1", orgId, seq, hash, signedAt] as JSON (docs/audit.md).' }),
  })
  .meta({ id: "AuditCheckpointEvent" });
export type AuditCheckpointView = z.infer<typeof auditCheckpointViewSchema>;
