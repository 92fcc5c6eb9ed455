/**
 * A case's media items (docs/media.md, "Media on reports"): what a platform sends with a report
 * (`media`: a URL and/or the hashes it computed) and the attachments added to a case, each one
 * row of `case_media`, matched against the project's banks by a job of its own
 * (JOB_KIND.mediaMatch, src/domain/banks/matching.ts). Written in the transaction of the report
 * or the attachment, so the job exists exactly when the media does.
 *
 * Hashes sent with a report are first looked up at once in the project's index when this
 * instance holds it at the banks' current version (signal-index.ts): most media match nothing,
 * and those are done there (`matchedAt` set, no job), which keeps a report with media nearly as
 * cheap as one without. A possible match, or no current index, goes to the job, which records
 * it, acts, and builds the index.
 */
import { and, eq, getTableColumns, inArray, or, type SQL } from "drizzle-orm";
import { param, statements } from "../../db/prepared.ts";
import { attachments, caseMedia, reports } from "../../db/schema.ts";
import type { DomainContext } from "../core/context.ts";
import { newId } from "../core/ids.ts";
import { enqueueJob } from "../plumbing/jobs.ts";
import { hitsOf, type ProjectIndex } from "./signal-index.ts";
import { JOB_KIND } from "../views/job.ts";
import { normalizeSignal, type MediaInput, type MediaStatus } from "../views/media-bank.ts";

export type CaseMediaRow = typeof caseMedia.$inferSelect;

/** Attempts a media job gets: a URL may be down for a while. */
const MEDIA_JOB_ATTEMPTS = 5;

interface Owner {
  orgId: string;
  projectId: string;
  caseId: string;
  reportId: string | null;
}

/** A report's media item is written on every report that carries media: kept prepared (src/db/prepared.ts). */
const mediaStatements = statements((db) => {
  const columns = Object.keys(getTableColumns(caseMedia)) as (keyof CaseMediaRow)[];
  return { insert: db.insert(caseMedia).values(Object.fromEntries(columns.map((c) => [c, param(c)])) as unknown as CaseMediaRow).prepare() };
});

/**
 * Which media items are a case's: those of its reports and of its attachments, so that a report
 * moved to another case shows its media there. Not by `case_media.case_id`, which has no index
 * (src/db/tables.ts says why); the report and attachment indexes serve this.
 */
export function mediaOfCase(ctx: DomainContext, caseId: string): SQL {
  return or(
    inArray(caseMedia.reportId, ctx.db.select({ id: reports.id }).from(reports).where(eq(reports.caseId, caseId))),
    inArray(caseMedia.attachmentId, ctx.db.select({ id: attachments.id }).from(attachments).where(eq(attachments.caseId, caseId))),
  )!;
}

/** A media item sent as hashes alone (no URL for the job to fetch and hash): hashed already, ready to match at intake. */
const hashesOnly = (m: MediaInput): boolean => m.url === undefined;

/**
 * Whether any of a report's media items is ready to match at once (hashesOnly): only then does
 * intake read the project's held index (heldIndex), in the round trip of the report's first
 * lookups (reports.ts).
 */
export function matchesAtIntake(media: readonly MediaInput[] | undefined): boolean {
  return !!media?.some(hashesOnly);
}

/**
 * Stores a report's media items (inside the report's transaction), each matched at once against
 * `index` (the project's index held at its banks' current version, read by the caller with
 * heldIndex; null: none held) when it carries hashes only; the others, and possible matches, get
 * a media job. The rows and jobs are written with the COMMIT (Store.atCommit): on PostgreSQL,
 * media add no round trip to a report (test/media-round-trips.test.ts).
 */
export async function recordReportMedia(ctx: DomainContext, owner: Owner, media: readonly MediaInput[], index: ProjectIndex | null): Promise<void> {
  const now = ctx.clock.now();
  const insert = mediaStatements(ctx.db).insert;
  for (const m of media) {
    const ready = hashesOnly(m);
    const row: CaseMediaRow = {
      id: newId(),
      ...owner,
      attachmentId: null,
      url: m.url ?? null,
      keep: m.keep ? 1 : 0,
      sha256: m.sha256 !== undefined ? normalizeSignal("sha256", m.sha256) : null,
      md5: m.md5 !== undefined ? normalizeSignal("md5", m.md5) : null,
      pdq: m.pdq !== undefined ? normalizeSignal("pdq", m.pdq) : null,
      pdqQuality: m.pdq !== undefined ? (m.pdqQuality ?? null) : null,
      vpdq: null,
      frameHashing: null,
      // A URL is fetched and hashed by the job; hashes alone are ready to match.
      status: ready ? "hashed" : "pending",
      error: null,
      createdAt: now,
      hashedAt: ready ? now : null,
      matchedAt: null,
    };
    if (ready && index !== null && hitsOf(index, row).length === 0) await ctx.store.atCommit(insert.execute({ ...row, matchedAt: now }));
    else await ctx.store.atCommit(insert.execute(row), enqueueMediaMatch(ctx, row));
  }
}

/**
 * An attachment as a media item of its case: its SHA-256 and MD5 now, and an image's PDQ hash when its
 * bytes were decoded before (`pdq`), else once its preview job has decoded them (`awaitsPdq`:
 * `pending` until then, and that job enqueues the matching: attachmentMediaHashed).
 */
export async function recordAttachmentMedia(
  ctx: DomainContext,
  owner: Owner,
  input: { attachmentId: string; sha256: string; md5: string; awaitsPdq: boolean; pdq: { hash: string; quality: number } | null },
): Promise<void> {
  const now = ctx.clock.now();
  const status: MediaStatus = input.awaitsPdq ? "pending" : "hashed";
  const row: CaseMediaRow = {
    id: newId(),
    ...owner,
    attachmentId: input.attachmentId,
    url: null,
    keep: 0,
    sha256: input.sha256,
    md5: input.md5,
    pdq: input.pdq?.hash ?? null,
    pdqQuality: input.pdq?.quality ?? null,
    vpdq: null,
    frameHashing: null,
    status,
    error: null,
    createdAt: now,
    hashedAt: input.awaitsPdq ? null : now,
    matchedAt: null,
  };
  await ctx.db.insert(caseMedia).values(row);
  if (!input.awaitsPdq) await enqueueMediaMatch(ctx, row);
}

/**
 * An attachment's bytes decoded by its preview job (in its transaction): the media items of
 * those bytes still waiting get the PDQ hash (or, the image refused, why it has none) and are
 * matched.
 */
export async function attachmentMediaHashed(ctx: DomainContext, input: { blobId: string; pdq: { hash: string; quality: number } | null; error: string | null }): Promise<void> {
  const now = ctx.clock.now();
  const waiting = await ctx.db
    .update(caseMedia)
    .set({ pdq: input.pdq?.hash ?? null, pdqQuality: input.pdq?.quality ?? null, status: input.pdq ? "hashed" : "refused", error: input.pdq ? null : input.error, hashedAt: now })
    .where(and(eq(caseMedia.status, "pending"), eq(caseMedia.sha256, input.blobId), inArray(caseMedia.attachmentId, ctx.db.select({ id: attachments.id }).from(attachments).where(eq(attachments.blobId, input.blobId)))))
    .returning({ id: caseMedia.id, orgId: caseMedia.orgId });
  for (const row of waiting) await enqueueMediaMatch(ctx, row);
}

/** The job that hashes (a URL) and matches one media item. */
export function enqueueMediaMatch(ctx: DomainContext, row: Pick<CaseMediaRow, "id" | "orgId">): Promise<string> {
  return enqueueJob(ctx, { orgId: row.orgId, kind: JOB_KIND.mediaMatch, payload: { mediaId: row.id }, maxAttempts: MEDIA_JOB_ATTEMPTS, entityId: row.id });
}
