/**
 * Matching a case's media against its project's banks (issue 43, docs/media.md, "Matching"):
 *
 * - **The index**: per project and per store, in memory (hash-index.ts): the enabled banks'
 *   entries not quarantined, exact digests by lookup, PDQ hashes by a scan with each entry's
 *   bank's distance. Before every match the project's banks' version (one row by its key) is
 *   read; when it moved (any change to a bank or an entry, on any instance), the index is built
 *   again. An entry added on one instance is therefore matched on every other from the next
 *   media item each matches (no cache lives longer than one version read).
 * - **A match**: exact by lookup; PDQ at the bank's distance or less and only when the media's
 *   quality reaches the bank's floor. Each is recorded (bank, entry, distance, quality) and
 *   audited (MEDIA_MATCHED).
 * - **Negative banks**: a negative bank's match suppresses the other banks' matches of the same
 *   media (recorded, `suppressed`, no action).
 * - **Quarantine**: an entry that matches more than its bank's count within its window is
 *   quarantined (MEDIA_BANK_ENTRY_QUARANTINED): the match that crossed the count takes no action,
 *   and the entry matches nothing more until a person releases it (banks.ts, releaseEntry).
 * - **The action**: a bank's match routes the case to a queue, raises its bucket, tags it,
 *   escalates it, or only records, by the system as the bank's automation (its audit events say
 *   so), through the domain functions a moderator's decision goes through. A route never widens
 *   who may see a case that holds more than one report (moveCaseToQueue's rule for automation).
 * - **Verdicts**: a moderator who may work the case confirms or rejects each match (audited);
 *   the bank's precision is confirmed / (confirmed + rejected) (banks.ts).
 */
import { and, asc, count, eq, gt, gte, isNotNull } from "drizzle-orm";
import { forUpdate } from "../../db/prepared.ts";
import { attachments, caseMedia, organizations, mediaBankEntries, mediaBanks, mediaMatches } from "../../db/schema.ts";
import { recordAudit, systemActor } from "../core/audit.ts";
import { iso, isoOrNull } from "../core/clock.ts";
import { ROW_LOCKED, transaction, type DomainContext } from "../core/context.ts";
import { conflict, DomainError, notFound, unlessRefused } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { hashMediaOffThread } from "../media/preview-thread.ts";
import { hashVideo } from "../media/hash-video.ts";
import { sniffType } from "../media/sniff.ts";
import { isVideoType, type VideoSettings, type VideoType } from "../media/video-frames.ts";
import { formatVpdq, parseVpdq } from "../media/vpdq.ts";
import { ScanFailedError, ScanRefusedError, safeFetch } from "../plumbing/safe-fetch.ts";
import { requireCase, raiseCaseBucket } from "../cases/cases.ts";
import { isLiveProject } from "../accounts/projects.ts";
import { userEmails } from "../accounts/users.ts";
import { addCaseTag } from "../cases/tags.ts";
import { moveCaseToQueue } from "../review/queues.ts";
import { applyTransition } from "../review/workflow-engine.ts";
import { runRules } from "../rules/rule-engine.ts";
import { attachmentFileForHashing, uploadAttachment, type AttachmentLimits } from "../attachments/attachments.ts";
import { mediaOfCase, type CaseMediaRow } from "../intake/case-media.ts";
import { hitsOf, projectIndex } from "../intake/signal-index.ts";
import { CASE_MATCHES_MAX, CASE_MEDIA_PAGE, matchTakesAction, type BankAction, type BankActionType, type CaseMediaMatchesView, type CaseMediaView, type MatchStatus, type MatchView, type MediaMatchedEvent } from "../views/media-bank.ts";
import { EVENT_TYPE } from "../views/webhook.ts";
import { enqueueWebhookEvent } from "../webhooks/outbox.ts";
import { bumpBankVersion, liveBank, metadataOf, parseAction, type BankRow } from "./banks.ts";

// ---------------------------------------------------------------------------------------------
// The job: fetch (a URL), hash, match

export interface MediaJobOptions {
  /** The link scanner's settings: FLAGSTAFF_SCAN_ALLOW_PRIVATE and FLAGSTAFF_SCAN_TIMEOUT_MS. */
  allowPrivate: boolean;
  timeoutMs: number;
  /** The attachments' limits: the largest file fetched (FLAGSTAFF_ATTACHMENT_MAX_BYTES) and image decoded, and where a kept file goes. */
  attachmentLimits: AttachmentLimits;
  /** Videos' frames: the ffmpeg found (null: none, SHA-256 and MD5 only) and its bounds. */
  video: VideoSettings;
}

/** The job of JOB_KIND.mediaMatch: a URL fetched and hashed first when it has not been; then the media matched. */
export async function processMedia(ctx: DomainContext, input: { mediaId: string } & MediaJobOptions): Promise<void> {
  let [row] = await ctx.db.select().from(caseMedia).where(eq(caseMedia.id, input.mediaId));
  if (!row) return; // deleted with its case or attachment
  // Its project deleted, its rows going by slices: nothing fetched, matched or announced for it.
  if (!(await isLiveProject(ctx, row.projectId))) return;
  if (row.status === "pending" && row.url !== null) row = await fetchAndHash(ctx, row, input);
  else if (row.attachmentId !== null && row.frameHashing === null && row.status === "hashed") row = await hashAttachmentVideo(ctx, row, input);
  // An attachment waiting for its preview's PDQ hash: that job enqueues the matching again.
  if (row.status === "pending" || row.status === "failed") return;
  await matchMedia(ctx, row);
}

/** Fetches a media item's URL through the link scanner's safe fetch, hashes it off the request thread, keeps it only when asked. */
async function fetchAndHash(ctx: DomainContext, row: CaseMediaRow, opts: MediaJobOptions): Promise<CaseMediaRow> {
  const maxBytes = opts.attachmentLimits.maxBytes;
  let outcome: Partial<CaseMediaRow>;
  let body: Uint8Array | null = null;
  try {
    const res = await safeFetch(row.url!, { allowPrivate: opts.allowPrivate, timeoutMs: opts.timeoutMs, maxBytes: maxBytes + 1 });
    if (res.truncated || res.body.byteLength > maxBytes) {
      outcome = { status: "refused", error: `The file is larger than ${maxBytes} bytes (FLAGSTAFF_ATTACHMENT_MAX_BYTES): not hashed` };
    } else if (res.body.byteLength === 0) {
      outcome = { status: "refused", error: "The URL answered an empty file" };
    } else {
      body = res.body;
      // The bytes go to the thread (transferred): a copy stays here when they are to be kept, or are a video's for ffmpeg (its type from its header).
      const headerType = sniffType(body.subarray(0, 4096));
      const video = isVideoType(headerType) ? body.slice() : null;
      const kept = row.keep === 1 ? (video ?? body.slice()) : null;
      const h = await hashMediaOffThread(body, { maxPixels: opts.attachmentLimits.maxPixels });
      outcome = {
        sha256: h.sha256,
        md5: h.md5,
        pdq: h.pdq?.hash ?? null,
        pdqQuality: h.pdq?.quality ?? null,
        status: h.refusal ? "refused" : "hashed",
        error: h.refusal ? `${h.refusal.message} (${h.refusal.reason}): matched by SHA-256 and MD5 only` : null,
      };
      if (video && isVideoType(h.type)) outcome = { ...outcome, ...((await framesHashedBefore(ctx, row.orgId, h.sha256)) ?? (await videoOutcome(video, h.type, opts))) };
      if (kept) outcome = { ...outcome, ...(await keepAsAttachment(ctx, row, kept, opts)) };
    }
  } catch (err) {
    if (err instanceof ScanRefusedError) outcome = { status: "failed", error: `The URL was refused: ${err.message}` };
    else if (err instanceof ScanFailedError) outcome = { status: "failed", error: err.message.slice(0, 500) };
    else throw err;
  }
  const done = { ...outcome, error: outcome.error?.slice(0, 500) ?? null, hashedAt: ctx.clock.now() };
  await transaction(ctx, () => ctx.db.update(caseMedia).set(done).where(eq(caseMedia.id, row.id)), ROW_LOCKED);
  return { ...row, ...done };
}

/**
 * A video's frames hashed (vPDQ, one a second, by ffmpeg: hash-video.ts), or why not: the host
 * has no ffmpeg, or it refused the file (its digests still match). A refused video keeps the
 * frames read before the refusal (the first FLAGSTAFF_VIDEO_MAX_SECONDS of a longer one).
 */
async function videoOutcome(source: Uint8Array | ((path: string) => Promise<unknown>), type: VideoType, opts: MediaJobOptions): Promise<Partial<CaseMediaRow>> {
  const v = await hashVideo(source, type, { ...opts.video, maxPixels: opts.attachmentLimits.maxPixels });
  // No ffmpeg on this host: not a refusal of the file (`error` stays empty), the server's limit.
  if (v === null) return { frameHashing: "exact_only" };
  return {
    frameHashing: v.frames.length > 0 ? "vpdq" : "exact_only",
    vpdq: v.frames.length > 0 ? formatVpdq(v.frames) : null,
    status: v.refusal ? "refused" : "hashed",
    error: v.refusal ? `${v.refusal.message} (${v.refusal.reason}): ${v.frames.length > 0 ? `${v.frames.length} frames hashed` : "matched by SHA-256 and MD5 only"}` : null,
  };
}

/**
 * The frames of the same bytes (by SHA-256) hashed before in this organization, all of them
 * (`hashed`, not cut short by a refusal): a video reported again and again (a URL or an upload)
 * costs ffmpeg once, not a child process of up to FLAGSTAFF_VIDEO_TIMEOUT_MS each time. Null:
 * none yet.
 */
async function framesHashedBefore(ctx: DomainContext, orgId: string, sha256: string): Promise<Partial<CaseMediaRow> | null> {
  const [before] = await ctx.db
    .select({ vpdq: caseMedia.vpdq })
    .from(caseMedia)
    .where(and(eq(caseMedia.orgId, orgId), eq(caseMedia.sha256, sha256), isNotNull(caseMedia.vpdq), eq(caseMedia.frameHashing, "vpdq"), eq(caseMedia.status, "hashed")))
    .limit(1);
  return before ? { frameHashing: "vpdq", vpdq: before.vpdq, status: "hashed", error: null } : null;
}

/**
 * An attachment that is a video: its frames hashed from the stored object, streamed to ffmpeg's
 * file (never whole in memory: a 50 MB upload's job held 50 MB), once: `frame_hashing` is set
 * after. The same bytes' frames hashed before are taken instead (framesHashedBefore).
 */
async function hashAttachmentVideo(ctx: DomainContext, row: CaseMediaRow, opts: MediaJobOptions): Promise<CaseMediaRow> {
  const stored = await attachmentFileForHashing(ctx, { attachmentId: row.attachmentId!, types: ["mp4", "webm"] satisfies VideoType[] });
  if (!stored || !isVideoType(stored.mediaType)) return row;
  const outcome = (row.sha256 !== null ? await framesHashedBefore(ctx, row.orgId, row.sha256) : null) ?? (await videoOutcome(stored.writeTo, stored.mediaType, opts));
  const done = { ...outcome, error: outcome.error?.slice(0, 500) ?? null, hashedAt: ctx.clock.now() };
  await transaction(ctx, () => ctx.db.update(caseMedia).set(done).where(eq(caseMedia.id, row.id)), ROW_LOCKED);
  return { ...row, ...done };
}

/** A fetched file kept as an attachment of its report (`keep: true`); a refusal (a type not allowed, the case full) is said in the media item's error. */
async function keepAsAttachment(ctx: DomainContext, row: CaseMediaRow, bytes: Uint8Array, opts: MediaJobOptions): Promise<Partial<CaseMediaRow>> {
  const fileName = new URL(row.url!).pathname.split("/").pop() || "media";
  const [org] = await ctx.db.select({ slug: organizations.slug }).from(organizations).where(eq(organizations.id, row.orgId));
  if (!org) return {};
  try {
    const attachment = await uploadAttachment(
      { ...ctx, actor: systemActor },
      {
        target: row.reportId ? { reportId: row.reportId } : { caseId: row.caseId },
        orgSlug: org.slug,
        fileName,
        declaredType: null,
        declaredLength: bytes.byteLength,
        body: new Blob([bytes as Uint8Array<ArrayBuffer>]).stream(),
        limits: opts.attachmentLimits,
        asMedia: false,
      },
    );
    return { attachmentId: attachment.id };
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return { error: `Not kept: ${err.message}` };
  }
}

// ---------------------------------------------------------------------------------------------
// Matching one media item

/** The actions a bank's match takes, by type: through the domain function a moderator's decision goes through. */
const ACTIONS: { [T in BankActionType]: (ctx: DomainContext, action: Extract<BankAction, { type: T }>, on: { caseId: string; reportId: string | null; bankName: string }) => Promise<unknown> } = {
  record: async () => {},
  route: (ctx, a, on) => moveCaseToQueue(ctx, { caseId: on.caseId, queueId: a.queueId }),
  bucket: (ctx, a, on) => raiseCaseBucket(ctx, { caseId: on.caseId, bucket: a.bucket }),
  tag: (ctx, a, on) => addCaseTag(ctx, { caseId: on.caseId, tag: a.tag }),
  escalate: (ctx, a, on) =>
    applyTransition(ctx, {
      target: on.reportId ? { reportId: on.reportId } : { caseId: on.caseId },
      move: { action: "escalate", team: a.team, note: `Media matched the bank "${on.bankName}"` },
      refused: "skip",
    }),
};

const takeAction = (ctx: DomainContext, action: BankAction, on: { caseId: string; reportId: string | null; bankName: string }) =>
  (ACTIONS[action.type] as (ctx: DomainContext, a: BankAction, on: { caseId: string; reportId: string | null; bankName: string }) => Promise<unknown>)(ctx, action, on);

/**
 * Matches one hashed media item and records what matched, in one transaction (a retried job
 * records nothing twice: one match per media item and entry). Answers the matches recorded.
 * `onlyEntries`: the past media check (past-check.ts) records the matches of the entries it
 * checks for, and no other (a negative bank's match of the item still suppresses them).
 */
export async function matchMedia(ctx: DomainContext, media: CaseMediaRow, opts: { onlyEntries?: ReadonlySet<string> } = {}): Promise<{ matchId: string; acted: boolean }[]> {
  const index = await projectIndex(ctx, media.projectId);
  const all = hitsOf(index, media);
  const negative = all.some((h) => h.bank.negative === 1);
  const only = opts.onlyEntries;
  const hits = only ? all.filter((h) => only.has(h.entryId)) : all;
  const now = ctx.clock.now();
  return transaction(
    ctx,
    async () => {
      await ctx.db.update(caseMedia).set({ matchedAt: now }).where(eq(caseMedia.id, media.id));
      const recorded: { matchId: string; acted: boolean }[] = [];
      const toTake: { bank: BankRow; entryId: string }[] = [];
      for (const hit of hits) {
        // The entry's lock: two matches of it count each other against its quarantine.
        const [entry] = await forUpdate(ctx.db.select({ id: mediaBankEntries.id, quarantinedAt: mediaBankEntries.quarantinedAt, value: mediaBankEntries.value, origin: mediaBankEntries.origin }).from(mediaBankEntries).where(eq(mediaBankEntries.id, hit.entryId)));
        if (!entry || entry.quarantinedAt !== null) continue; // removed or quarantined since the index was built
        const bank = hit.bank;
        let quarantined = false;
        if (bank.negative === 0 && bank.quarantineCount != null && bank.quarantineWindowMs != null) {
          const [recent] = await ctx.db.select({ n: count() }).from(mediaMatches).where(and(eq(mediaMatches.entryId, entry.id), gte(mediaMatches.createdAt, now - bank.quarantineWindowMs)));
          quarantined = Number(recent?.n ?? 0) + 1 > bank.quarantineCount;
        }
        const suppressed = negative && bank.negative === 0;
        const id = newId();
        const inserted = await ctx.db
          .insert(mediaMatches)
          .values({
            id,
            orgId: media.orgId,
            projectId: media.projectId,
            caseId: media.caseId,
            reportId: media.reportId,
            mediaId: media.id,
            bankId: bank.id,
            entryId: entry.id,
            distance: hit.distance,
            quality: hit.quality,
            suppressed: suppressed ? 1 : 0,
            quarantined: quarantined ? 1 : 0,
            status: "pending",
            decidedById: null,
            decidedAt: null,
            createdAt: now,
          })
          .onConflictDoNothing()
          .returning({ id: mediaMatches.id });
        if (inserted.length === 0) continue; // recorded by an earlier attempt of this job
        const action = parseAction(bank.action);
        const acted = matchTakesAction({ negative: bank.negative === 1, suppressed, quarantined });
        await recordAudit(ctx, {
          projectId: media.projectId,
          action: "MEDIA_MATCHED",
          entityType: "case",
          entityId: media.caseId,
          data: { matchId: id, mediaId: media.id, reportId: media.reportId, bankId: bank.id, entryId: entry.id, signalType: hit.signalType, distance: hit.distance, quality: hit.quality, suppressed, quarantined, action: acted ? action.type : "none" },
        });
        const event: MediaMatchedEvent = {
          matchId: id,
          projectId: media.projectId,
          caseId: media.caseId,
          reportId: media.reportId,
          mediaId: media.id,
          bank: { id: bank.id, name: bank.name, negative: bank.negative === 1 },
          entry: { id: entry.id, signalType: hit.signalType, origin: entry.origin },
          distance: hit.distance,
          quality: hit.quality,
          suppressed,
          quarantined,
          action: acted ? action.type : "none",
        };
        await enqueueWebhookEvent(ctx, { type: EVENT_TYPE.mediaMatched, data: event, now });
        if (quarantined) {
          const reason = `Matched more than ${bank.quarantineCount} times within ${Math.round(bank.quarantineWindowMs! / 1000)} seconds`;
          await ctx.db.update(mediaBankEntries).set({ quarantinedAt: now, quarantineReason: reason }).where(eq(mediaBankEntries.id, entry.id));
          await bumpBankVersion(ctx, media.projectId, "reshaped");
          await recordAudit(ctx, { projectId: media.projectId, action: "MEDIA_BANK_ENTRY_QUARANTINED", entityType: "media_bank", entityId: bank.id, data: { entryId: entry.id, signalType: hit.signalType, value: entry.value, origin: entry.origin, reason } });
        }
        if (acted) toTake.push({ bank, entryId: entry.id });
        recorded.push({ matchId: id, acted });
      }
      // Each bank acts once on the case, whatever number of its entries matched.
      const taken = new Set<string>();
      for (const { bank, entryId } of toTake) {
        if (taken.has(bank.id)) continue;
        taken.add(bank.id);
        const auto: DomainContext = { ...ctx, actor: systemActor, automation: { mediaMatch: { bankId: bank.id, entryId } } };
        await unlessRefused(transaction(auto, () => takeAction(auto, parseAction(bank.action), { caseId: media.caseId, reportId: media.reportId, bankName: bank.name })));
      }
      // The organization's report.media_matched rules (src/domain/rules/rule-engine.ts), on the report the media came with: they read the case's media facts.
      if (recorded.length > 0 && media.reportId !== null) await runRules(ctx, { trigger: "report.media_matched", reportId: media.reportId });
      return recorded;
    },
    ROW_LOCKED,
  );
}

// ---------------------------------------------------------------------------------------------
// What a case's page shows, and verdicts

const mediaView = (m: CaseMediaRow, attachment: { fileName: string; mediaType: CaseMediaView["mediaType"] } | null): CaseMediaView => ({
  id: m.id,
  reportId: m.reportId,
  attachmentId: m.attachmentId,
  url: m.url,
  sha256: m.sha256,
  md5: m.md5,
  pdq: m.pdq,
  pdqQuality: m.pdqQuality,
  fileName: attachment?.fileName ?? null,
  mediaType: attachment?.mediaType ?? null,
  frameHashing: m.frameHashing,
  frames: m.vpdq ? parseVpdq(m.vpdq).length : null,
  status: m.status,
  error: m.error,
  createdAt: iso(m.createdAt),
  matchedAt: isoOrNull(m.matchedAt),
});

/** A match's bank, when it is not deleted: a deleted bank's matches are gone with it, though their rows go a slice at a time (bank-deletion.ts). */
const liveBankOfMatch = () => and(eq(mediaBanks.id, mediaMatches.bankId), liveBank());

async function matchViews(ctx: Pick<DomainContext, "db" | "orgId">, where: ReturnType<typeof eq>, limit?: number): Promise<MatchView[]> {
  const query = ctx.db
    .select({ m: mediaMatches, bankName: mediaBanks.name, bankNegative: mediaBanks.negative, signalType: mediaBankEntries.signalType, origin: mediaBankEntries.origin, metadata: mediaBankEntries.metadata })
    .from(mediaMatches)
    .innerJoin(mediaBanks, liveBankOfMatch())
    .innerJoin(mediaBankEntries, eq(mediaBankEntries.id, mediaMatches.entryId))
    .where(where)
    .orderBy(asc(mediaMatches.id));
  const rows = await (limit === undefined ? query : query.limit(limit));
  const emails = await userEmails(ctx, { ids: rows.map((r) => r.m.decidedById) });
  return rows.map(({ m, ...r }) => ({
    id: m.id,
    caseId: m.caseId,
    reportId: m.reportId,
    mediaId: m.mediaId,
    bank: { id: m.bankId, name: r.bankName, negative: r.bankNegative === 1 },
    entry: { id: m.entryId, signalType: r.signalType, origin: r.origin, metadata: metadataOf(r.metadata) },
    distance: m.distance,
    quality: m.quality,
    suppressed: m.suppressed === 1,
    quarantined: m.quarantined === 1,
    actionTaken: matchTakesAction({ negative: r.bankNegative === 1, suppressed: m.suppressed === 1, quarantined: m.quarantined === 1 }),
    status: m.status,
    decidedBy: m.decidedById,
    decidedByEmail: m.decidedById ? (emails.get(m.decidedById) ?? null) : null,
    decidedAt: isoOrNull(m.decidedAt),
    createdAt: iso(m.createdAt),
  }));
}

/**
 * A case's media items, a page at a time (oldest first, from `cursor`: the last id of the page
 * before), and its matches (the bank, the entry's origin and metadata, the distance: never the
 * banked item itself), at most CASE_MATCHES_MAX, with how many there are of each: a case of a
 * flood of reports may hold thousands, and the case page reads this every second while one is
 * being matched.
 */
export async function caseMediaMatches(ctx: DomainContext, input: { caseId: string; limit?: number; cursor?: string }): Promise<CaseMediaMatchesView> {
  const c = await requireCase(ctx, input.caseId);
  const limit = input.limit ?? CASE_MEDIA_PAGE.default;
  const ofCase = mediaOfCase(ctx, c.id);
  const rows = await ctx.db
    .select({ m: caseMedia, fileName: attachments.fileName, mediaType: attachments.mediaType })
    .from(caseMedia)
    .leftJoin(attachments, eq(attachments.id, caseMedia.attachmentId))
    .where(input.cursor === undefined ? ofCase : and(ofCase, gt(caseMedia.id, input.cursor)))
    .orderBy(asc(caseMedia.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const [media] = await ctx.db.select({ n: count() }).from(caseMedia).where(ofCase);
  const [matches] = await ctx.db
    .select({ n: count() })
    .from(mediaMatches)
    .innerJoin(mediaBanks, liveBankOfMatch())
    .where(eq(mediaMatches.caseId, c.id));
  return {
    media: page.map(({ m, fileName, mediaType }) => mediaView(m, fileName !== null && mediaType !== null ? { fileName, mediaType } : null)),
    mediaTotal: media!.n,
    nextCursor: rows.length > limit ? page.at(-1)!.m.id : null,
    matches: await matchViews(ctx, eq(mediaMatches.caseId, c.id), CASE_MATCHES_MAX),
    matchesTotal: matches!.n,
  };
}

/** A moderator's verdict on a match: confirmed or rejected (a verdict may be changed); audited. */
export async function decideMatch(ctx: DomainContext, input: { matchId: string; verdict: Exclude<MatchStatus, "pending"> }): Promise<MatchView> {
  await transaction(
    ctx,
    async () => {
      const [m] = await forUpdate(ctx.db.select().from(mediaMatches).where(and(eq(mediaMatches.id, input.matchId), eq(mediaMatches.orgId, ctx.orgId))));
      // A deleted bank's match is gone with it (its rows go a slice at a time: bank-deletion.ts).
      const [bank] = m ? await ctx.db.select({ id: mediaBanks.id }).from(mediaBanks).where(and(eq(mediaBanks.id, m.bankId), liveBank())) : [];
      if (!m || !bank) throw notFound("Match not found");
      // The case's wall: a match of a case the caller may not work is a 404 like a missing one.
      await requireCase(ctx, m.caseId);
      if (m.status === input.verdict) throw conflict(`The match is ${input.verdict} already`);
      await ctx.db.update(mediaMatches).set({ status: input.verdict, decidedById: ctx.actor.id, decidedAt: ctx.clock.now() }).where(eq(mediaMatches.id, m.id));
      await recordAudit(ctx, {
        projectId: m.projectId,
        action: input.verdict === "confirmed" ? "MEDIA_MATCH_CONFIRMED" : "MEDIA_MATCH_REJECTED",
        entityType: "case",
        entityId: m.caseId,
        data: { matchId: m.id, bankId: m.bankId, entryId: m.entryId, before: m.status },
      });
    },
    ROW_LOCKED,
  );
  return (await matchViews(ctx, eq(mediaMatches.id, input.matchId)))[0]!;
}
