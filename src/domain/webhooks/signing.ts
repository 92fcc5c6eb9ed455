/**
 * Standard Webhooks signing (https://www.standardwebhooks.com, symmetric scheme): a secret is
 * `whsec_` + base64 of random bytes; the signature is HMAC-SHA256, keyed by the decoded bytes,
 * over `{webhook-id}.{webhook-timestamp}.{body}`, sent as `webhook-signature: v1,<base64>`.
 */
import { createHmac, randomBytes } from "node:crypto";

export const SECRET_PREFIX = "whsec_";
/** 32 random bytes (the specification asks for 24 to 64). */
const SECRET_BYTES = 32;

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64");
}

/** The HMAC key of a `whsec_` secret: its base64 part, decoded. */
export function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, "base64");
  if (key.length === 0) throw new Error("empty webhook secret");
  return key;
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`. */
export function sign(secret: string, msgId: string, timestampSeconds: number, body: string): string {
  const mac = createHmac("sha256", secretKey(secret)).update(`${msgId}.${timestampSeconds}.${body}`, "utf8").digest("base64");
  return `v1,${mac}`;
}

/** The three Standard Webhooks headers of one attempt (the timestamp is the attempt's, in seconds). */
export function signatureHeaders(secret: string, msgId: string, attemptAtMs: number, body: string): Record<string, string> {
  const timestamp = Math.floor(attemptAtMs / 1000);
  return {
    "webhook-id": msgId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": sign(secret, msgId, timestamp, body),
  };
}

/** What a list shows of a secret: enough to tell two apart, never enough to sign. */
export const secretHint = (secret: string): string => `${secret.slice(0, SECRET_PREFIX.length + 4)}…`;
