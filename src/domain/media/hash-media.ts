/**
 * A file's hashes, as banks match them (docs/media.md, "Media on reports"): SHA-256 and MD5 of
 * its bytes, its type from its bytes (sniff.ts), and for an image this server decodes (JPEG,
 * PNG, GIF) its PDQ hash and quality. An image that cannot be decoded keeps its digests and says
 * why it has no PDQ hash (`refusal`): exact matching still works on it.
 *
 * Synchronous CPU work: run on the preview thread (preview-thread.ts, hashMediaOffThread).
 */
import { decodeImage } from "./decode.ts";
import { pdqHash, type PdqResult } from "./pdq.ts";
import { MediaRefusal, type MediaRefusalReason } from "./refusals.ts";
import { MEDIA_TYPE_SPECS, sniffType, type MediaType } from "./sniff.ts";

export interface MediaHashes {
  sha256: string;
  md5: string;
  /** The type read from the bytes, or "unknown". */
  type: MediaType | "unknown";
  /** An image's PDQ hash, or null (not an image, or refused: `refusal` says why). */
  pdq: PdqResult | null;
  refusal: { reason: MediaRefusalReason; message: string } | null;
}

/** The decoders' images: the types a PDQ hash is computed for. */
const DECODED: ReadonlySet<MediaType> = new Set(["jpeg", "png", "gif"]);

export function hashMedia(bytes: Uint8Array, options: { maxPixels: number }): MediaHashes {
  const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
  const md5 = new Bun.CryptoHasher("md5").update(bytes).digest("hex");
  const type = sniffType(bytes);
  if (type === "unknown" || !MEDIA_TYPE_SPECS[type].image) return { sha256, md5, type, pdq: null, refusal: null };
  if (!DECODED.has(type)) return { sha256, md5, type, pdq: null, refusal: { reason: "unsupported", message: `${type.toUpperCase()} images are not decoded here: matched by SHA-256 and MD5 only` } };
  try {
    return { sha256, md5, type, pdq: pdqHash(decodeImage(bytes, { maxPixels: options.maxPixels })), refusal: null };
  } catch (err) {
    if (!(err instanceof MediaRefusal)) throw err;
    return { sha256, md5, type, pdq: null, refusal: { reason: err.reason, message: err.message } };
  }
}
