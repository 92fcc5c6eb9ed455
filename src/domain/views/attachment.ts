/** Attachments as the API answers them, and their vocabularies (docs/attachments.md). */
import { z } from "zod";
import { isoDateTime } from "./common.ts";

/**
 * The allowlist of attachment types, read from the bytes (src/domain/media/sniff.ts, whose
 * MEDIA_TYPE_SPECS holds each one's signature: src/domain/attachments/attachments.ts checks at compile
 * time that the two lists are the same). Anything else is refused.
 */
export const MEDIA_TYPES = ["jpeg", "png", "gif", "webp", "mp4", "webm", "pdf", "text"] as const;
export type AttachmentMediaType = (typeof MEDIA_TYPES)[number];

/**
 * An attachment's preview: `pending` (its job has not run yet), `ready` (a re-encoded JPEG of
 * bounded size, without the original's metadata), `none` (not an image this server decodes:
 * video, PDF, text, WebP) or `failed` (the image could not be decoded: `previewError` says why).
 */
export const PREVIEW_STATUSES = ["pending", "ready", "none", "failed"] as const;
export type PreviewStatus = (typeof PREVIEW_STATUSES)[number];

export const attachmentViewSchema = z
  .object({
    id: z.string(),
    caseId: z.string(),
    /** The report it was added to, or null when added to the case. */
    reportId: z.string().nullable(),
    fileName: z.string().meta({ description: "The name the uploader gave: shown, never trusted" }),
    declaredType: z.string().nullable().meta({ description: "The Content-Type the uploader declared: recorded, never trusted" }),
    mediaType: z.enum(MEDIA_TYPES).meta({ description: "The type read from the bytes (docs/attachments.md, the allowlist)" }),
    contentType: z.string().meta({ description: "The MIME type of `mediaType`" }),
    sizeBytes: z.number().int(),
    sha256: z.string().meta({ description: "SHA-256 of the bytes, lower-case hex" }),
    width: z.number().int().nullable().meta({ description: "An image's width from its header (null: not an image)" }),
    height: z.number().int().nullable(),
    addedBy: z.object({ type: z.string(), id: z.string().nullable() }),
    createdAt: isoDateTime,
    preview: z.object({
      status: z.enum(PREVIEW_STATUSES),
      width: z.number().int().nullable(),
      height: z.number().int().nullable(),
      error: z.string().nullable(),
    }),
    contentUrl: z.string().meta({ description: "Where the original is downloaded (always as an attachment, never shown inline)" }),
    previewUrl: z.string().nullable().meta({ description: "Where the preview is read once `preview.status` is `ready`" }),
  })
  .meta({ id: "Attachment" });
export type AttachmentView = z.infer<typeof attachmentViewSchema>;

/** The longest file name kept (longer ones are cut). */
export const MAX_FILE_NAME = 255;
