/**
 * Attachments: evidence added to a report or a case (issue 42, docs/attachments.md). The bytes
 * live in the attachment store (src/db/blobs.ts, `ctx.store.blobs`), content-addressed by
 * SHA-256; the rows here say whose evidence they are.
 *
 * Files are untrusted: the type is read from the bytes (the allowlist, src/domain/media/sniff.ts),
 * never from the declared type or the name; an image's dimensions are read from its header and
 * bounded before anything decodes it; the original is only ever served as a download; images
 * are shown through a preview made anew on the preview thread (a job of its own lane).
 *
 * An upload, in order: the caller's access to the case (the queue-access and blind-review walls,
 * through requireCase/requireReport); the limits that can be checked before a byte is read; the
 * body streamed to a spool file, hashed and counted as it comes (past the size limit it stops);
 * the type and an image's header from the bytes; the blob's row leased (transaction A), the
 * object placed, then the attachment's row, its audit event and its preview job (transaction B,
 * the limits checked again under the case's lock). A crash between the object and transaction B
 * leaves an object whose row holds no attachment: the sweep deletes it once its lease ran out.
 *
 * A blob is deleted when its last attachment is: marked `deleting` in a transaction (an upload
 * of the same bytes waits for it to finish), its objects deleted, then its row. So an upload
 * that placed its object never loses it to a deletion running beside it.
 */
import { and, eq, inArray, isNotNull, isNull, lt, or, sql } from "drizzle-orm";
import { forUpdate } from "../../db/prepared.ts";
import { attachmentBlobs, attachments, attachmentStores, cases } from "../../db/schema.ts";
import type { BlobStore, Spool, StoredObject } from "../../db/blobs.ts";
import { BlobStoreFault, blobKey, noteBlobFault, previewKey } from "../../db/blobs.ts";
import { recordAudit } from "../core/audit.ts";
import { rowLockedTransaction, transaction, type DomainContext, type ReadContext } from "../core/context.ts";
import { badRequest, conflict, DomainError, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { MediaRefusal } from "../media/refusals.ts";
import { MEDIA_TYPE_SPECS, readImageHeader, sniffType, type MediaType } from "../media/sniff.ts";
import { makePreviewOffThread } from "../media/preview-thread.ts";
import { inspectFileOffThread, InspectionFailed } from "../media/inspect-thread.ts";
import { reserveUploadBytes, uploadTurn } from "./upload-pacing.ts";
import { enqueueJob } from "../plumbing/jobs.ts";
import { requireReport } from "../intake/reports.ts";
import { attachmentMediaHashed, recordAttachmentMedia } from "../intake/case-media.ts";
import { listableCases } from "../access/queue-access.ts";
import { requireCase } from "../cases/cases.ts";
import { lockCase } from "../cases/case-lock.ts";
import { MAX_FILE_NAME, MEDIA_TYPES, type AttachmentMediaType, type AttachmentView, type PreviewStatus } from "../views/attachment.ts";
import { JOB_KIND } from "../views/job.ts";

// The allowlist is written twice (the stored vocabulary, a pure module; the sniffer's record):
// this line fails to compile when they differ.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const SAME_ALLOWLIST: Same<AttachmentMediaType, MediaType> = true;
void SAME_ALLOWLIST;
void MEDIA_TYPES;

/** The limits of docs/attachments.md, from the configuration (FLAGSTAFF_ATTACHMENT_*). */
export interface AttachmentLimits {
  maxBytes: number;
  perCase: number;
  orgBytes: number;
  maxPixels: number;
  /** How long an upload may hold its blob before the sweep takes it for a crash's leftover. */
  orphanMs: number;
}

type AttachmentRow = typeof attachments.$inferSelect;
type BlobRow = typeof attachmentBlobs.$inferSelect;

/** How long a client waits after the store failed (a full disk, an unreachable bucket). */
const STORE_RETRY_AFTER_S = 5;

/** The bytes kept of an upload's start: its type and an image's header are read from them. */
const HEAD_BYTES = 1024 * 1024;

/** The store, or a 503 when this process has none (it is not serving: a migration, a test of the domain). */
function blobsOf(ctx: Pick<DomainContext, "store">): BlobStore {
  const blobs = ctx.store.blobs;
  if (!blobs) throw new DomainError("unavailable", "Attachments are not available in this process", { retryAfter: STORE_RETRY_AFTER_S });
  return blobs;
}

/** A fault of the store as the 503 the transports answer (and readiness remembers); other errors unchanged. */
function storeUnavailable(err: unknown): unknown {
  if (!(err instanceof BlobStoreFault)) return err;
  noteBlobFault(err.fault);
  return new DomainError("unavailable", `${err.message}: retry in a moment`, { retryAfter: STORE_RETRY_AFTER_S });
}

async function withStore<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw storeUnavailable(err);
  }
}

// ---------------------------------------------------------------------------------------------
// Views

/** The paths of an attachment's bytes (organization routes: the dashboard's session reaches them too). */
export function attachmentUrls(orgSlug: string, attachmentId: string): { contentUrl: string; previewUrl: string } {
  const base = `/api/v1/organizations/${encodeURIComponent(orgSlug)}/attachments/${encodeURIComponent(attachmentId)}`;
  return { contentUrl: `${base}/content`, previewUrl: `${base}/preview` };
}

function toView(row: AttachmentRow, blob: Pick<BlobRow, "previewStatus" | "previewWidth" | "previewHeight" | "previewError"> | undefined, orgSlug: string): AttachmentView {
  const urls = attachmentUrls(orgSlug, row.id);
  const status: PreviewStatus = blob?.previewStatus ?? "none";
  return {
    id: row.id,
    caseId: row.caseId,
    reportId: row.reportId,
    fileName: row.fileName,
    declaredType: row.declaredType,
    mediaType: row.mediaType,
    contentType: MEDIA_TYPE_SPECS[row.mediaType].mime,
    sizeBytes: row.sizeBytes,
    sha256: row.blobId,
    width: row.width,
    height: row.height,
    addedBy: { type: row.addedByType, id: row.addedById },
    createdAt: new Date(row.createdAt).toISOString(),
    preview: { status, width: blob?.previewWidth ?? null, height: blob?.previewHeight ?? null, error: blob?.previewError ?? null },
    contentUrl: urls.contentUrl,
    previewUrl: status === "ready" ? urls.previewUrl : null,
  };
}

const PREVIEW_COLUMNS = {
  blobId: attachmentBlobs.id,
  previewStatus: attachmentBlobs.previewStatus,
  previewWidth: attachmentBlobs.previewWidth,
  previewHeight: attachmentBlobs.previewHeight,
  previewError: attachmentBlobs.previewError,
  previewBytes: attachmentBlobs.previewBytes,
};

async function previewsOf(ctx: Pick<DomainContext, "db">, blobIds: string[]): Promise<Map<string, BlobRow>> {
  if (!blobIds.length) return new Map();
  const rows = await ctx.db.select(PREVIEW_COLUMNS).from(attachmentBlobs).where(inArray(attachmentBlobs.id, [...new Set(blobIds)]));
  return new Map(rows.map((r) => [r.blobId, r as unknown as BlobRow]));
}

/** An attachment of the caller's organization whose case the caller may see (404 / the blind-review 403 otherwise). */
async function requireAttachment(ctx: DomainContext, attachmentId: string): Promise<AttachmentRow> {
  const [row] = await ctx.db
    .select()
    .from(attachments)
    .where(and(eq(attachments.id, attachmentId), eq(attachments.orgId, ctx.orgId)))
    .limit(1);
  if (!row) throw notFound("Attachment not found");
  await requireCase(ctx, row.caseId).catch((err: unknown) => {
    // Its case hidden from the caller: the attachment is as if it did not exist (a 404 names it), or blind (the 403 as is).
    if (err instanceof DomainError && err.kind === "not_found") throw notFound("Attachment not found");
    throw err;
  });
  return row;
}

/** A case's attachments, its reports' included, oldest first. */
export async function listAttachments(ctx: DomainContext, input: { caseId: string; orgSlug: string }): Promise<AttachmentView[]> {
  await requireCase(ctx, input.caseId);
  const rows = await ctx.db
    .select()
    .from(attachments)
    .where(and(eq(attachments.caseId, input.caseId), eq(attachments.orgId, ctx.orgId)))
    .orderBy(attachments.createdAt, attachments.id);
  const previews = await previewsOf(ctx, rows.map((r) => r.blobId));
  return rows.map((r) => toView(r, previews.get(r.blobId), input.orgSlug));
}

/** The attachments of the cases the caller may list, newest first (a count per case for the queue, say). */
export async function countAttachmentsOfCases(ctx: DomainContext, caseIds: string[]): Promise<Map<string, number>> {
  if (!caseIds.length) return new Map();
  const visible = await listableCases(ctx);
  const rows = await ctx.db
    .select({ caseId: attachments.caseId, n: sql<number>`count(*)` })
    .from(attachments)
    .innerJoin(cases, eq(cases.id, attachments.caseId))
    .where(and(eq(attachments.orgId, ctx.orgId), inArray(attachments.caseId, caseIds), visible))
    .groupBy(attachments.caseId);
  return new Map(rows.map((r) => [r.caseId, Number(r.n)]));
}

export async function getAttachment(ctx: DomainContext, input: { attachmentId: string; orgSlug: string }): Promise<AttachmentView> {
  const row = await requireAttachment(ctx, input.attachmentId);
  const previews = await previewsOf(ctx, [row.blobId]);
  return toView(row, previews.get(row.blobId), input.orgSlug);
}

// ---------------------------------------------------------------------------------------------
// Upload

export interface UploadInput {
  target: { caseId: string } | { reportId: string };
  orgSlug: string;
  fileName: string | null;
  declaredType: string | null;
  /** The request's Content-Length (null: chunked). */
  declaredLength: number | null;
  body: ReadableStream<Uint8Array> | null;
  limits: AttachmentLimits;
  /** Record it as a media item of its case, matched against the banks (default true; a fetched report media item kept as an attachment is one already). */
  asMedia?: boolean;
}

/** A name safe to show and to offer as a download's: no path, no control character, at most MAX_FILE_NAME characters. */
export function cleanFileName(name: string | null): string {
  const base = (name ?? "").split(/[\\/]/).pop() ?? "";
  // eslint-disable-next-line no-control-regex
  const clean = base.replace(/[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069"]/g, "").trim();
  return ([...clean].slice(0, MAX_FILE_NAME).join("") || "attachment").normalize("NFC");
}

const tooLarge = (limit: number) => new DomainError("too_large", `The file is larger than the limit of ${limit} bytes per attachment (FLAGSTAFF_ATTACHMENT_MAX_BYTES)`, { limit: "FLAGSTAFF_ATTACHMENT_MAX_BYTES" });
const tooManyFiles = (limit: number) => conflictNaming(`The case already has ${limit} attachments, the most one case may hold (FLAGSTAFF_ATTACHMENTS_PER_CASE)`, "FLAGSTAFF_ATTACHMENTS_PER_CASE");
const orgFull = (limit: number) => conflictNaming(`The organization's attachments would exceed ${limit} bytes (FLAGSTAFF_ATTACHMENT_ORG_BYTES)`, "FLAGSTAFF_ATTACHMENT_ORG_BYTES");
const conflictNaming = (message: string, limit: string) => new DomainError("conflict", message, { limit });

async function checkRoom(ctx: Pick<DomainContext, "db" | "orgId">, caseId: string, incoming: number, limits: AttachmentLimits): Promise<void> {
  const [[onCase], [ofOrg]] = await Promise.all([
    ctx.db.select({ n: sql<number>`count(*)` }).from(attachments).where(eq(attachments.caseId, caseId)),
    ctx.db.select({ bytes: sql<number>`coalesce(sum(${attachments.sizeBytes}), 0)` }).from(attachments).where(eq(attachments.orgId, ctx.orgId)),
  ]);
  if (Number(onCase?.n ?? 0) >= limits.perCase) throw tooManyFiles(limits.perCase);
  if (Number(ofOrg?.bytes ?? 0) + incoming > limits.orgBytes) throw orgFull(limits.orgBytes);
}

/** What the spool saw of the body. */
interface Spooled {
  spool: Spool;
  size: number;
  sha256: string;
  /** Matched against banks' MD5 entries (a video's, in HMA's lists), not kept on the blob: every upload is read whole anyway. */
  md5: string;
  head: Uint8Array;
  /** For a body longer than the head: whether all of it after the head is plain text (UTF-8, no control character). */
  tailIsText: boolean;
}

/**
 * Writes the body to a spool file as it streams in (Bun writes it natively; the server takes
 * no body longer than the largest attachment and a little: src/server.ts), then inspects the
 * file on the inspection thread (its size, SHA-256, first bytes, whether the rest is text) and
 * syncs it. Past `maxBytes` it is a 413 and the spool is deleted; so is it on any failure.
 */
async function spoolBody(blobs: BlobStore, body: ReadableStream<Uint8Array> | null, bounded: boolean, maxBytes: number): Promise<Spooled> {
  const spool = await withStore(() => blobs.spool());
  try {
    // A body of no declared length (chunked) is counted as it passes, and cut past the limit;
    // one of a declared length (checked already) cannot be longer than it says.
    let cut = false;
    const counted = bounded || !body ? body : body.pipeThrough(countingUpTo(maxBytes, () => (cut = true)));
    let written: number;
    try {
      written = await withStore(() => spool.receive(counted));
    } catch (err) {
      if (cut) throw tooLarge(maxBytes);
      throw err;
    }
    if (cut || written > maxBytes) throw tooLarge(maxBytes);
    const [inspection] = await Promise.all([
      inspectFileOffThread(spool.path, HEAD_BYTES).catch((err: unknown) => {
        if (err instanceof InspectionFailed && err.code === "EIO") throw new BlobStoreFault("io", "The attachment store has I/O errors (reading an upload back)");
        throw err;
      }),
      withStore(() => spool.finish()),
    ]).catch((err: unknown) => {
      throw storeUnavailable(err);
    });
    return { spool, size: inspection.size, sha256: inspection.sha256, md5: inspection.md5, head: inspection.head, tailIsText: inspection.tailIsText };
  } catch (err) {
    await spool.discard();
    throw err;
  }
}

/** A stream that passes bytes on until more than `maxBytes` came, then fails (and says so). */
function countingUpTo(maxBytes: number, onCut: () => void): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  return new TransformStream({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > maxBytes) {
        onCut();
        controller.error(tooLarge(maxBytes));
        return;
      }
      controller.enqueue(chunk);
    },
  });
}

/** The type of the spooled bytes, from them alone (the allowlist, or a 400). */
function typeOf(s: Spooled): MediaType {
  if (s.size === 0) throw badRequest("The file is empty");
  const whole = s.size <= HEAD_BYTES;
  let type = sniffType(s.head);
  if (type === "unknown" && !whole) {
    // The head may end inside a UTF-8 sequence: text is judged on whole characters (the rest was checked as it came).
    for (let cut = 1; cut <= 3 && type === "unknown"; cut++) type = sniffType(s.head.subarray(0, s.head.length - cut));
    if (type !== "text") type = "unknown";
  }
  if (type === "text" && !whole && !s.tailIsText) type = "unknown";
  if (type === "unknown") {
    throw badRequest("The file's type is not one attachments accept: JPEG, PNG, GIF, WebP, MP4, WebM, PDF or plain text, read from its bytes (docs/attachments.md)");
  }
  return type;
}

/** An image's dimensions from its header, bounded (too_many_pixels: a 413) before anything decodes it. */
function imageSize(type: MediaType, s: Spooled, maxPixels: number): { width: number; height: number } | null {
  if (!MEDIA_TYPE_SPECS[type].image) return null;
  let header;
  try {
    header = readImageHeader(s.head);
  } catch (err) {
    // A header past the first megabyte (a JPEG with large metadata first): its preview job reads it from the whole file.
    if (err instanceof MediaRefusal && err.reason === "truncated" && s.size > s.head.length) return null;
    throw err;
  }
  if (header.width * header.height > maxPixels) {
    throw new MediaRefusal("too_many_pixels", `The image is ${header.width} x ${header.height} pixels, more than the limit of ${maxPixels} (FLAGSTAFF_ATTACHMENT_MAX_PIXELS)`);
  }
  return { width: header.width, height: header.height };
}

/** Which preview a blob of this type gets: made by the preview job, or none (video, PDF, text, WebP). */
const previewOf = (type: MediaType): PreviewStatus => (type === "jpeg" || type === "png" || type === "gif" ? "pending" : "none");

/** How long an upload waits for a deletion of the same bytes to finish before answering 503. */
const DELETION_WAIT_MS = 5_000;

/**
 * Transaction A: the blob's row, leased for this upload (created, or its pending uploads counted
 * up). A blob being deleted is waited for: its objects are going.
 */
async function leaseBlob(ctx: DomainContext, s: Spooled, type: MediaType): Promise<void> {
  const deadline = ctx.clock.now() + DELETION_WAIT_MS;
  for (;;) {
    const now = ctx.clock.now();
    const leased = await rowLockedTransaction(ctx, async () => {
      const [blob] = await forUpdate(ctx.db.select().from(attachmentBlobs).where(eq(attachmentBlobs.id, s.sha256)));
      if (blob?.deletingAt != null) return false;
      if (blob) {
        await ctx.db
          .update(attachmentBlobs)
          .set({ pendingUploads: sql`${attachmentBlobs.pendingUploads} + 1`, heldUntil: now })
          .where(eq(attachmentBlobs.id, s.sha256));
        return true;
      }
      const inserted = await ctx.db
        .insert(attachmentBlobs)
        .values({ id: s.sha256, sizeBytes: s.size, mediaType: type, pendingUploads: 1, heldUntil: now, previewStatus: previewOf(type), createdAt: now })
        .onConflictDoNothing()
        .returning({ id: attachmentBlobs.id });
      // Another upload of the same bytes inserted it first: lease it on the next turn.
      return inserted.length > 0 ? true : null;
    });
    if (leased) return;
    if (leased === false && ctx.clock.now() > deadline) {
      throw new DomainError("unavailable", "The same file is being deleted: retry in a moment", { retryAfter: 1 });
    }
    if (leased === false) await Bun.sleep(50);
  }
}

/** Gives the upload's lease back (its row committed, or the upload failed). */
async function releaseLease(ctx: DomainContext, sha256: string): Promise<void> {
  await ctx.db
    .update(attachmentBlobs)
    .set({ pendingUploads: sql`case when ${attachmentBlobs.pendingUploads} > 0 then ${attachmentBlobs.pendingUploads} - 1 else 0 end` })
    .where(eq(attachmentBlobs.id, sha256));
}

/** Uploads a file to a case or a report (see the module's comment); answers the attachment. */
export async function uploadAttachment(ctx: DomainContext, input: UploadInput): Promise<AttachmentView> {
  const blobs = blobsOf(ctx);
  const { limits } = input;
  const reportId = "reportId" in input.target ? input.target.reportId : null;
  const owner = reportId !== null ? await requireReport(ctx, reportId) : await requireCase(ctx, (input.target as { caseId: string }).caseId);
  const caseId = reportId !== null ? (owner as { caseId: string }).caseId : owner.id;
  const projectId = owner.projectId;
  if (input.declaredLength !== null && input.declaredLength > limits.maxBytes) throw tooLarge(limits.maxBytes);
  // The limits that can be checked before a byte is read (again in transaction B).
  await checkRoom(ctx, caseId, input.declaredLength ?? 0, limits);

  // Its turn while the server is busy serving other requests (upload-pacing.ts): the body is not read until then.
  const wait = uploadTurn(input.declaredLength);
  if (wait > 0) await Bun.sleep(wait);
  const s = await spoolBody(blobs, input.body, input.declaredLength !== null, limits.maxBytes);
  if (input.declaredLength === null) reserveUploadBytes(s.size);
  let leased = false;
  try {
    const type = typeOf(s);
    const size = imageSize(type, s, limits.maxPixels);
    await leaseBlob(ctx, s, type);
    leased = true;
    await withStore(() => blobs.place(blobKey(s.sha256), s.spool));
    const fileName = cleanFileName(input.fileName);
    const now = ctx.clock.now();
    const row: AttachmentRow = {
      id: newId(),
      orgId: ctx.orgId,
      projectId,
      caseId,
      reportId,
      blobId: s.sha256,
      fileName,
      declaredType: input.declaredType?.slice(0, 255) || null,
      mediaType: type,
      sizeBytes: s.size,
      width: size?.width ?? null,
      height: size?.height ?? null,
      addedByType: ctx.actor.type,
      addedById: ctx.actor.id ?? null,
      createdAt: now,
    };
    await rowLockedTransaction(ctx, async () => {
      // The case's lock: two uploads to one case count each other.
      await lockCase(ctx, caseId);
      await checkRoom(ctx, caseId, s.size, limits);
      await ctx.db.insert(attachments).values(row);
      await releaseLease(ctx, s.sha256);
      const [blob] = await ctx.db.select({ previewStatus: attachmentBlobs.previewStatus, pdq: attachmentBlobs.pdq, pdqQuality: attachmentBlobs.pdqQuality }).from(attachmentBlobs).where(eq(attachmentBlobs.id, s.sha256));
      if (blob?.previewStatus === "pending") await enqueueJob(ctx, { kind: JOB_KIND.attachmentPreview, orgId: ctx.orgId, payload: { blobId: s.sha256 } });
      // Matched against the project's banks: an image once its preview job has its PDQ hash (it enqueues the matching then).
      if (input.asMedia !== false) {
        await recordAttachmentMedia(ctx, { orgId: ctx.orgId, projectId, caseId, reportId }, { attachmentId: row.id, sha256: s.sha256, md5: s.md5, awaitsPdq: blob?.previewStatus === "pending", pdq: blob?.pdq != null ? { hash: blob.pdq, quality: blob.pdqQuality ?? 0 } : null });
      }
      await recordAudit(ctx, { action: "ATTACHMENT_ADDED", entityType: "case", entityId: caseId, projectId, data: auditData(row) });
    });
    leased = false;
    const previews = await previewsOf(ctx, [row.blobId]);
    return toView(row, previews.get(row.blobId), input.orgSlug);
  } finally {
    await s.spool.discard();
    if (leased) await transaction(ctx, () => releaseLease(ctx, s.sha256), { exclusive: false }).catch(() => {});
  }
}

const auditData = (row: AttachmentRow) => ({ attachmentId: row.id, reportId: row.reportId, fileName: row.fileName, sha256: row.blobId, mediaType: row.mediaType, sizeBytes: row.sizeBytes });

// ---------------------------------------------------------------------------------------------
// Reading the bytes

export interface OpenedAttachment {
  attachment: AttachmentView;
  /** The bytes (streamed when read). */
  bytes: StoredObject;
  /** How many there are (null: not recorded), for the byte ranges the route answers (src/api/attachment-routes.ts). */
  sizeBytes: number | null;
}

/**
 * The original's bytes, for a download. Audited first (ATTACHMENT_OPENED: who opened which
 * evidence when): the event is committed before a byte is sent.
 */
export async function openAttachmentOriginal(ctx: DomainContext, input: { attachmentId: string; orgSlug: string }): Promise<OpenedAttachment> {
  const blobs = blobsOf(ctx);
  const row = await requireAttachment(ctx, input.attachmentId);
  const bytes = await withStore(() => blobs.get(blobKey(row.blobId)));
  if (!bytes) throw new DomainError("unavailable", "The attachment's bytes cannot be read now", { retryAfter: STORE_RETRY_AFTER_S });
  await recordAudit(ctx, { action: "ATTACHMENT_OPENED", entityType: "case", entityId: row.caseId, projectId: row.projectId, data: auditData(row) });
  const previews = await previewsOf(ctx, [row.blobId]);
  return { attachment: toView(row, previews.get(row.blobId), input.orgSlug), bytes, sizeBytes: row.sizeBytes };
}

/** The preview's bytes (a JPEG made anew, no metadata): 409 while it is being made, 404 when there is none. */
export async function openAttachmentPreview(ctx: DomainContext, input: { attachmentId: string; orgSlug: string }): Promise<OpenedAttachment> {
  const blobs = blobsOf(ctx);
  const row = await requireAttachment(ctx, input.attachmentId);
  const previews = await previewsOf(ctx, [row.blobId]);
  const preview = previews.get(row.blobId);
  const view = toView(row, preview, input.orgSlug);
  if (view.preview.status === "pending") throw conflict("The preview is still being made: retry in a moment");
  if (view.preview.status !== "ready") throw notFound(view.preview.status === "failed" ? `This attachment has no preview: ${view.preview.error ?? "it could not be decoded"}` : "This attachment has no preview (only JPEG, PNG and GIF images get one)");
  const bytes = await withStore(() => blobs.get(previewKey(row.blobId)));
  if (!bytes) throw new DomainError("unavailable", "The preview cannot be read now", { retryAfter: STORE_RETRY_AFTER_S });
  return { attachment: view, bytes, sizeBytes: preview?.previewBytes ?? null };
}

// ---------------------------------------------------------------------------------------------
// Deleting

/** Deletes an attachment (audited); its bytes go with it when no other attachment holds them. */
export async function deleteAttachment(ctx: DomainContext, input: { attachmentId: string }): Promise<{ deleted: true }> {
  const row = await requireAttachment(ctx, input.attachmentId);
  await rowLockedTransaction(ctx, async () => {
    await ctx.db.delete(attachments).where(eq(attachments.id, row.id));
    await recordAudit(ctx, { action: "ATTACHMENT_DELETED", entityType: "case", entityId: row.caseId, projectId: row.projectId, data: auditData(row) });
  });
  // The bytes: at once when unreferenced (an erasure), else when the sweep finds them so.
  await releaseBlobs(ctx, [row.blobId], ctx.clock.now(), Number.POSITIVE_INFINITY).catch(() => {});
  return { deleted: true };
}

/**
 * Deletes the blobs of `blobIds` that no attachment holds and no upload leases (a lease older
 * than `orphanMs` is a dead upload's): marked, objects deleted, rows deleted. Answers how many.
 */
async function releaseBlobs(ctx: DomainContext, blobIds: string[], now: number, orphanMs: number): Promise<number> {
  const blobs = blobsOf(ctx);
  let released = 0;
  for (const id of blobIds) {
    const marked = await rowLockedTransaction(ctx, async () => {
      const [blob] = await forUpdate(ctx.db.select().from(attachmentBlobs).where(eq(attachmentBlobs.id, id)));
      if (!blob) return false;
      if (blob.deletingAt == null) {
        const held = blob.pendingUploads > 0 && now - blob.heldUntil < orphanMs;
        if (held) return false;
        const [ref] = await ctx.db.select({ id: attachments.id }).from(attachments).where(eq(attachments.blobId, id)).limit(1);
        if (ref) return false;
        await ctx.db.update(attachmentBlobs).set({ deletingAt: now }).where(eq(attachmentBlobs.id, id));
      }
      return true;
    });
    if (!marked) continue;
    await withStore(async () => {
      await blobs.delete(previewKey(id));
      await blobs.delete(blobKey(id));
    });
    await transaction(ctx, () => ctx.db.delete(attachmentBlobs).where(and(eq(attachmentBlobs.id, id), isNotNull(attachmentBlobs.deletingAt))), { exclusive: false });
    released++;
  }
  return released;
}

/**
 * Erasure: every attachment of a case (its reports' included), deleted as deleteAttachment does
 * each, audited. The documented erasure request of docs/attachments.md.
 */
export async function deleteCaseAttachments(ctx: DomainContext, input: { caseId: string }): Promise<{ deleted: number }> {
  await requireCase(ctx, input.caseId);
  const rows = await ctx.db.select({ id: attachments.id }).from(attachments).where(and(eq(attachments.caseId, input.caseId), eq(attachments.orgId, ctx.orgId)));
  for (const r of rows) await deleteAttachment(ctx, { attachmentId: r.id });
  return { deleted: rows.length };
}

// ---------------------------------------------------------------------------------------------
// The sweep: what a crash or a half-done deletion left

export interface SweepResult {
  /** Blobs deleted: unreferenced, their lease run out (a crash between the object and its row), or a deletion left half done. */
  blobs: number;
  /** Objects of the store with no row at all (deleted). */
  strays: number;
  /** Spool files a crash left. */
  spools: number;
}

/**
 * One pass: blobs that no attachment holds and no live upload leases (their objects and rows),
 * objects the store holds without a row (older than `orphanMs`), and old spool files.
 */
export async function sweepAttachments(ctx: DomainContext, input: { orphanMs: number }): Promise<SweepResult> {
  const blobs = blobsOf(ctx);
  const now = ctx.clock.now();
  const candidates = await ctx.db
    .select({ id: attachmentBlobs.id })
    .from(attachmentBlobs)
    .where(
      and(
        or(isNotNull(attachmentBlobs.deletingAt), eq(attachmentBlobs.pendingUploads, 0), lt(attachmentBlobs.heldUntil, now - input.orphanMs)),
        sql`not exists (select 1 from ${attachments} where ${attachments.blobId} = ${attachmentBlobs.id})`,
      ),
    )
    .limit(1000);
  const released = await releaseBlobs(ctx, candidates.map((c) => c.id), now, input.orphanMs);

  // Objects with no row (a deletion whose row went first, a store restored from another time).
  let strays = 0;
  for (const prefix of ["blobs/", "previews/"] as const) {
    const batch: { key: string; id: string }[] = [];
    const flush = async () => {
      if (!batch.length) return;
      const known = new Set((await ctx.db.select({ id: attachmentBlobs.id }).from(attachmentBlobs).where(inArray(attachmentBlobs.id, batch.map((b) => b.id)))).map((r) => r.id));
      for (const b of batch) {
        if (!known.has(b.id)) {
          await withStore(() => blobs.delete(b.key));
          strays++;
        }
      }
      batch.length = 0;
    };
    for await (const o of blobs.list(prefix)) {
      if (now - o.modifiedAt < input.orphanMs) continue;
      const name = o.key.slice(prefix.length);
      batch.push({ key: o.key, id: name.replace(/\.jpg$/, "") });
      if (batch.length >= 500) await flush();
    }
    await flush();
  }
  const spools = await blobs.sweepSpools(input.orphanMs, now);
  return { blobs: released, strays, spools };
}

/**
 * An attachment's type and a way to write its bytes to a file, for the media job (its video's
 * frames, src/domain/banks/matching.ts): not audited (no person opens it), null when the
 * attachment or its bytes are gone or it is not of `types` (its bytes then not read).
 */
export async function attachmentFileForHashing(
  ctx: DomainContext,
  input: { attachmentId: string; types: readonly AttachmentMediaType[] },
): Promise<{ mediaType: AttachmentMediaType; writeTo: (path: string) => Promise<unknown> } | null> {
  const [row] = await ctx.db.select({ blobId: attachments.blobId, mediaType: attachments.mediaType }).from(attachments).where(and(eq(attachments.id, input.attachmentId), eq(attachments.orgId, ctx.orgId)));
  if (!row || !input.types.includes(row.mediaType)) return null;
  const blobs = blobsOf(ctx);
  const original = await withStore(() => blobs.get(blobKey(row.blobId)));
  if (!original) return null;
  // Streamed to the file (a local object copied by the kernel): a video is never whole in memory.
  return { mediaType: row.mediaType, writeTo: (path) => withStore(() => Bun.write(path, new Response(original.body()))) };
}

// ---------------------------------------------------------------------------------------------
// Previews (the job of JOB_KIND.attachmentPreview)

/** Makes a blob's preview on the preview thread and keeps it; a refused image is `failed`, with why. */
export async function makeAttachmentPreview(ctx: DomainContext, input: { blobId: string; maxPixels: number; maxSide: number }): Promise<void> {
  const blobs = blobsOf(ctx);
  const [blob] = await ctx.db.select().from(attachmentBlobs).where(eq(attachmentBlobs.id, input.blobId));
  if (!blob || blob.previewStatus !== "pending" || blob.deletingAt != null) return;
  const original = await withStore(() => blobs.get(blobKey(blob.id)));
  if (!original) return; // deleted meanwhile
  let outcome: Partial<BlobRow>;
  try {
    const preview = await makePreviewOffThread(await withStore(() => original.bytes()), { maxPixels: input.maxPixels, maxSide: input.maxSide });
    await withStore(() => blobs.put(previewKey(blob.id), preview.jpeg));
    outcome = { previewStatus: "ready", previewWidth: preview.width, previewHeight: preview.height, previewBytes: preview.jpeg.byteLength, previewError: null, pdq: preview.pdq.hash, pdqQuality: preview.pdq.quality };
  } catch (err) {
    if (!(err instanceof MediaRefusal)) throw err;
    outcome = { previewStatus: "failed", previewError: err.message.slice(0, 500) };
  }
  await transaction(
    ctx,
    async () => {
      await ctx.db.update(attachmentBlobs).set(outcome).where(and(eq(attachmentBlobs.id, blob.id), isNull(attachmentBlobs.deletingAt)));
      // The attachments of these bytes waiting for their PDQ hash are matched now (their own, or only their SHA-256 when refused).
      await attachmentMediaHashed(ctx, { blobId: blob.id, pdq: outcome.pdq != null ? { hash: outcome.pdq, quality: outcome.pdqQuality ?? 0 } : null, error: outcome.previewError ?? null });
    },
    { exclusive: false },
  );
}

// ---------------------------------------------------------------------------------------------
// The store's guard and figures

/**
 * Records the store this database's instances use, or refuses (a DomainError to stop start-up
 * with) when it is another: instances sharing PostgreSQL must share one object store, never keep
 * evidence on separate local disks (docs/attachments.md, "Several instances").
 */
export async function registerAttachmentStore(ctx: ReadContext, input: { identity: string; location: string }): Promise<void> {
  const now = ctx.clock.now();
  await ctx.store.transaction(async () => {
    const [known] = await ctx.db.select().from(attachmentStores).limit(1);
    if (!known) {
      await ctx.db.insert(attachmentStores).values({ id: input.identity, location: input.location, createdAt: now }).onConflictDoNothing();
      return;
    }
    if (known.id !== input.identity) {
      throw new DomainError(
        "conflict",
        `This database's attachments are kept in another store (${known.location}, ${known.id}) than this instance's (${input.location}, ${input.identity}). ` +
          "Instances that share a database must share one attachment store: set FLAGSTAFF_S3_BUCKET (with FLAGSTAFF_S3_ENDPOINT, FLAGSTAFF_S3_REGION, FLAGSTAFF_S3_ACCESS_KEY_ID and FLAGSTAFF_S3_SECRET_ACCESS_KEY) to the same bucket on every instance, " +
          "or point FLAGSTAFF_ATTACHMENTS_DIR at the directory the first instance uses (docs/attachments.md, \"Several instances\").",
      );
    }
  });
}

/** Bytes and distinct files in the store, and attachments (the /metrics gauges). */
export async function attachmentStoreFigures(ctx: Pick<DomainContext, "db">): Promise<{ bytes: number; blobs: number; attachments: number }> {
  const [[b], [a]] = await Promise.all([
    ctx.db.select({ bytes: sql<number>`coalesce(sum(${attachmentBlobs.sizeBytes}), 0)`, n: sql<number>`count(*)` }).from(attachmentBlobs).where(isNull(attachmentBlobs.deletingAt)),
    ctx.db.select({ n: sql<number>`count(*)` }).from(attachments),
  ]);
  return { bytes: Number(b?.bytes ?? 0), blobs: Number(b?.n ?? 0), attachments: Number(a?.n ?? 0) };
}
