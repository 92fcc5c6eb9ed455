/**
 * Why a file is refused by the media readers (sniff.ts, decode.ts), each reason with the
 * DomainError kind the transports answer with. A refusal is a DomainError, so a route that lets
 * one through answers its status and `{ error }` with the message: never a 500.
 */
import { DomainError, type DomainErrorKind } from "../core/errors.ts";

interface MediaRefusalSpec {
  kind: DomainErrorKind;
  /** What the refusal means, for docs/media.md and the messages. */
  meaning: string;
}

export const MEDIA_REFUSAL_SPECS = {
  truncated: { kind: "bad_request", meaning: "the file ends before its header or its image data does" },
  corrupt: { kind: "bad_request", meaning: "the bytes do not follow the format's rules" },
  unsupported: { kind: "bad_request", meaning: "a format or variant of one that these decoders cannot read (WebP, a JPEG in arithmetic coding, 12-bit or lossless JPEG…)" },
  not_an_image: { kind: "bad_request", meaning: "the bytes are not an image of the allowlist (JPEG, PNG, GIF, WebP)" },
  too_many_pixels: { kind: "too_large", meaning: "the image's dimensions, read from its header, exceed the pixel bound (decompression bombs)" },
  too_long: { kind: "too_large", meaning: "the video is longer than FLAGSTAFF_VIDEO_MAX_SECONDS: its first seconds' frames are hashed, the rest not" },
  timed_out: { kind: "too_large", meaning: "the video was not decoded within FLAGSTAFF_VIDEO_TIMEOUT_MS: ffmpeg was stopped" },
} as const satisfies Record<string, MediaRefusalSpec>;

export type MediaRefusalReason = keyof typeof MEDIA_REFUSAL_SPECS;

/**
 * The one error the media readers throw: a DomainError whose kind comes from its reason. The
 * reason stays a property (for logs and tests), not a field of the error body.
 */
export class MediaRefusal extends DomainError {
  constructor(
    readonly reason: MediaRefusalReason,
    message: string,
  ) {
    super(MEDIA_REFUSAL_SPECS[reason].kind, message);
  }
}
