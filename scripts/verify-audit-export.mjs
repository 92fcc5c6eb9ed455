#!/usr/bin/env node
/**
 * Checks an export of Flagstaff's audit log (`flagstaff audit export … > file.json`) with plain
 * Node and nothing of Flagstaff's (docs/audit.md, "Checking an export"):
 *
 *   node scripts/verify-audit-export.mjs file.json [--public-key BASE64]
 *
 * For each segment (consecutive events of one lane of the organization's chain), from its first
 * event's previous hash: every event's digest is recomputed from its content (a selected event)
 * or taken as given (another event, whose content stays private), its hash is SHA-256 of the
 * previous hash followed by the digest, and the sequences follow each other; the segment's last
 * sequence and hash must be the ones its checkpoint signed for the lane, and the signature must
 * verify (Ed25519) with the public key. Pass the organization's public key as
 * published (`flagstaff audit public-key`) with --public-key: without it, the key inside the
 * file is used, which proves only that the file is consistent with itself.
 * Exit 0 when everything verifies, 1 naming the first thing that does not, 2 on bad usage.
 */
import { createHash, createPublicKey, verify } from "node:crypto";
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const file = args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--public-key");
const keyAt = args.indexOf("--public-key");
const pinnedKey = keyAt >= 0 ? args[keyAt + 1] : undefined;
if (!file) {
  console.error("usage: node verify-audit-export.mjs file.json [--public-key BASE64]");
  process.exit(2);
}

const sha256 = (text) => createHash("sha256").update(text, "utf8").digest("hex");
// The canonical forms (docs/audit.md): JSON arrays as JSON.stringify writes them.
const eventCanonical = (e) =>
  JSON.stringify(["flagstaff.audit.v1", e.orgId, e.id, e.projectId, e.actorType, e.actorId, e.action, e.entityType, e.entityId, e.before, e.after, e.data, e.createdAt]);
const checkpointCanonical = (c) =>
  JSON.stringify(["flagstaff.audit-checkpoint.v1", c.orgId, [...c.heads].sort((a, b) => a.lane - b.lane).map((h) => [h.lane, h.seq, h.hash]), c.signedAt]);
// An Ed25519 public key from its raw 32 bytes (base64), as a JWK.
const publicKey = (b64) => createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(b64, "base64").toString("base64url") }, format: "jwk" });

function fail(why) {
  console.error(`DOES NOT VERIFY: ${why}`);
  process.exit(1);
}

const doc = JSON.parse(readFileSync(file, "utf8"));
if (doc.format !== "flagstaff.audit-export.v1") fail(`unknown format ${JSON.stringify(doc.format)}`);
const orgId = doc.organization.id;
let shown = 0;
let covered = 0;
let uncovered = 0;
for (const [i, segment] of doc.segments.entries()) {
  let prev = segment.prevHash;
  let seq = null;
  for (const item of segment.events) {
    if (seq !== null && item.seq !== seq + 1) fail(`segment ${i}: sequence ${item.seq} follows ${seq}: events are missing`);
    seq = item.seq;
    let digest = item.digest;
    if (item.event) {
      const e = item.event;
      if (e.seq !== item.seq || e.lane !== segment.lane || e.orgId !== orgId) fail(`event ${e.id}: its seq, lane or organization is not the segment's`);
      digest = sha256(eventCanonical(e));
      shown++;
    }
    if (typeof digest !== "string" || !/^[0-9a-f]{64}$/.test(digest)) fail(`segment ${i}, seq ${item.seq}: no digest`);
    const hash = sha256(prev + digest);
    if (item.hash && item.hash !== hash) fail(`event ${item.event?.id ?? "(digest only)"} (seq ${item.seq}${item.event ? `, ${item.event.action}` : ""}): its hash does not match its content and the hash before it`);
    prev = hash;
  }
  const c = segment.checkpoint;
  const count = segment.events.filter((e) => e.event).length;
  if (!c) {
    uncovered += count;
    continue;
  }
  const head = c.heads.find((h) => h.lane === segment.lane);
  if (c.orgId !== orgId || !head || head.seq !== seq || head.hash !== prev)
    fail(`segment ${i}: it ends at lane ${segment.lane} seq ${seq} with hash ${prev}, its checkpoint says ${head ? `seq ${head.seq} hash ${head.hash}` : "nothing of the lane"}`);
  if (pinnedKey && c.publicKey !== pinnedKey) fail(`segment ${i}: its checkpoint was signed by ${c.publicKey}, not by the key given`);
  if (!verify(null, Buffer.from(checkpointCanonical(c), "utf8"), publicKey(pinnedKey ?? c.publicKey), Buffer.from(c.signature, "base64"))) fail(`segment ${i}: the checkpoint's signature does not verify`);
  covered += count;
}
if (shown !== doc.selected) fail(`the file says ${doc.selected} events were selected; it shows ${shown}`);
console.log(`verified: ${shown} event(s) in ${doc.segments.length} segment(s); ${covered} covered by signed checkpoints, ${uncovered} not yet covered (linked only)`);
if (!pinnedKey) console.log("note: checked with the public key inside the file; pass --public-key with the organization's published key to prove who signed");
