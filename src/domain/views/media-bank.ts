/**
 * Banks of known harmful media (issue 43, docs/media.md): what a bank, its entries, a media item
 * of a case and a match look like to the API, and their vocabularies. Pure (zod only): storage
 * types its columns by these lists and the dashboard imports the schemas.
 */
import { z } from "zod";
import { isoDateTime } from "./common.ts";
import { MEDIA_TYPES } from "./attachment.ts";
import { BUCKETS } from "./severity.ts";
import { TEAMS } from "./report.ts";

/**
 * The kinds of signal a bank entry holds, each with the form of its value: lower-case hex of
 * `hexDigits` digits, or (`hexDigits: null`) vPDQ's text, a whole video's frame hashes
 * (src/domain/media/vpdq.ts; stored beside the entry, its value a digest of it: banks.ts). The
 * names are those of Meta's Hasher-Matcher-Actioner file exchange (`signal_type`), so a list
 * exported from HMA imports as it is: `pdq`, `md5`, `vpdq`, and `sha256` (ours).
 */
export const SIGNAL_TYPE_SPECS = {
  sha256: { hexDigits: 64, label: "SHA-256", perceptual: false },
  md5: { hexDigits: 32, label: "MD5", perceptual: false },
  pdq: { hexDigits: 64, label: "PDQ", perceptual: true },
  vpdq: { hexDigits: null, label: "vPDQ", perceptual: true },
} as const satisfies Record<string, { hexDigits: number | null; label: string; perceptual: boolean }>;
export type SignalType = keyof typeof SIGNAL_TYPE_SPECS;
export const SIGNAL_TYPES = Object.keys(SIGNAL_TYPE_SPECS) as [SignalType, ...SignalType[]];
/** The signal types whose value is a hash in hex (a media item's columns of the same names hold them). */
export type HexSignalType = { [T in SignalType]: (typeof SIGNAL_TYPE_SPECS)[T]["hexDigits"] extends number ? T : never }[SignalType];
export const HEX_SIGNAL_TYPES = SIGNAL_TYPES.filter((t): t is HexSignalType => SIGNAL_TYPE_SPECS[t].hexDigits !== null);

/** Each hex type's form, compiled once: a report's media and every line of an import are checked against it. */
const SIGNAL_FORMS = Object.fromEntries(HEX_SIGNAL_TYPES.map((t) => [t, new RegExp(`^[0-9a-f]{${SIGNAL_TYPE_SPECS[t].hexDigits}}$`)])) as Record<HexSignalType, RegExp>;

/** A hex signal's value as given: trimmed, lower-cased, then checked against its type's form. */
export function normalizeSignal(type: HexSignalType, value: string): string | null {
  const v = value.trim().toLowerCase();
  return SIGNAL_FORMS[type].test(v) ? v : null;
}

/** The longest value of an entry as given, in characters: a vPDQ signal of 7,200 frames (two hours at one a second) is about 600,000. */
export const MAX_SIGNAL_VALUE_CHARS = 1_000_000;

/** The default PDQ distance of a bank (PDQ's README: 31 bits of 256 or fewer is the same picture). */
export const DEFAULT_BANK_PDQ_DISTANCE = 31;
/** The default quality floor of a bank (PDQ's README: a hash of quality under 50 is too weak to match on). */
export const DEFAULT_BANK_QUALITY_FLOOR = 50;

/**
 * What a match of a bank does to the case of the media (a negative bank's matches do nothing but
 * suppress the others'): move it to a queue, raise its bucket, tag it, escalate its reports, or
 * only record the match.
 */
export const bankActionSchema = z
  .discriminatedUnion("type", [
    z.strictObject({ type: z.literal("record") }),
    z.strictObject({ type: z.literal("route"), queueId: z.string().min(1).max(64) }),
    z.strictObject({ type: z.literal("bucket"), bucket: z.enum(BUCKETS) }),
    z.strictObject({ type: z.literal("tag"), tag: z.string().trim().min(1).max(64) }),
    z.strictObject({ type: z.literal("escalate"), team: z.enum(TEAMS) }),
  ])
  .meta({ id: "MediaBankAction", description: "What a match does to the case: `record` only, `route` to a queue, raise its `bucket`, add a `tag`, or `escalate` its open reports to a team." });
export type BankAction = z.infer<typeof bankActionSchema>;
export type BankActionType = BankAction["type"];

/** A quarantine setting: an entry matching more than `count` times within `windowSeconds` stops acting until a person releases it. */
const quarantineSchema = z
  .strictObject({
    count: z.number().int().min(1).max(1_000_000),
    windowSeconds: z.number().int().min(60).max(90 * 24 * 3600),
  })
  .meta({ description: "An entry matching more than `count` times within `windowSeconds` is quarantined: it stops matching until a person releases it. Null: never." });

const bankFields = {
  name: z.string().trim().min(1).max(100),
  description: z.string().trim().max(2000).nullable().optional(),
  enabled: z.boolean().optional().meta({ description: "Default true. A disabled bank matches nothing." }),
  negative: z.boolean().optional().meta({ description: "Default false. A negative bank's match suppresses the other banks' matches of the same media (a list of known false positives)." }),
  action: bankActionSchema.optional().meta({ description: "Default `{ type: \"record\" }`. Ignored for a negative bank." }),
  pdqDistance: z.number().int().min(0).max(128).optional().meta({ description: "A PDQ entry matches a hash at this Hamming distance or less (default 31)." }),
  qualityFloor: z.number().int().min(0).max(100).optional().meta({ description: "A PDQ hash of lower quality is not matched against this bank (default 50)." }),
  quarantine: quarantineSchema.nullable().optional(),
};

export const bankCreateSchema = z.object(bankFields);
export type BankCreate = z.infer<typeof bankCreateSchema>;
export const bankPatchSchema = z.object({ ...bankFields, name: bankFields.name.optional() });
export type BankPatch = z.infer<typeof bankPatchSchema>;

export const bankViewSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    enabled: z.boolean(),
    negative: z.boolean(),
    action: bankActionSchema,
    pdqDistance: z.number().int(),
    qualityFloor: z.number().int(),
    quarantine: quarantineSchema.nullable(),
    entries: z.number().int().meta({ description: "Entries in the bank" }),
    quarantinedEntries: z.number().int(),
    matches: z.number().int().meta({ description: "Matches recorded against the bank's entries" }),
    confirmed: z.number().int(),
    rejected: z.number().int(),
    precision: z.number().nullable().meta({ description: "confirmed / (confirmed + rejected); null before any match is decided" }),
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
  })
  .meta({ id: "MediaBank" });
export type BankView = z.infer<typeof bankViewSchema>;

/** Free-form facts about an entry (where it came from, a case number, a category): a flat object of short values. */
export const entryMetadataSchema = z.record(z.string().min(1).max(64), z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]));

/**
 * The keys an entry's metadata may have when it is given (an entry added, a file imported: a
 * CSV's metadata columns). A bank's CSV has a column per key of any entry: an entry of 30,000
 * keys made a bank of 12,000 entries a CSV that ran the server out of memory.
 */
export const MAX_ENTRY_METADATA_KEYS = 50;

/** An entry's metadata as given: entryMetadataSchema, of at most MAX_ENTRY_METADATA_KEYS keys (what is stored is read with entryMetadataSchema). */
export const entryMetadataInputSchema = entryMetadataSchema
  .refine((m) => Object.keys(m).length <= MAX_ENTRY_METADATA_KEYS, `at most ${MAX_ENTRY_METADATA_KEYS} keys`)
  .meta({ description: `At most ${MAX_ENTRY_METADATA_KEYS} keys` });

/** The metadata columns a bank's CSV has at most (the distinct keys of its entries): past them, its JSON file holds it. */
export const MAX_CSV_METADATA_COLUMNS = 200;

export const entryInputSchema = z.object({
  signalType: z.enum(SIGNAL_TYPES),
  value: z
    .string()
    .min(1)
    .max(MAX_SIGNAL_VALUE_CHARS)
    .meta({ description: "Lower- or upper-case hex: 64 digits for sha256 and pdq, 32 for md5. For vpdq, a whole video's frame hashes as Hasher-Matcher-Actioner writes them: a JSON array of \"<pdq hex>,<quality>,<seconds>\" strings, one a frame (1 to 7,200 frames)" }),
  origin: z.string().trim().max(500).nullable().optional().meta({ description: "Where the entry came from (a list's name, a decision), kept and exported" }),
  metadata: entryMetadataInputSchema.nullable().optional(),
});
export type EntryInput = z.infer<typeof entryInputSchema>;

export const entryViewSchema = z
  .object({
    id: z.string(),
    bankId: z.string(),
    signalType: z.enum(SIGNAL_TYPES),
    value: z.string().meta({ description: "The hash; for vpdq, the SHA-256 of the video's frame hashes as stored (the export writes the frames themselves)" }),
    frames: z.number().int().nullable().meta({ description: "A vpdq entry's frames; null for the other types" }),
    origin: z.string().nullable(),
    metadata: entryMetadataSchema.nullable(),
    addedBy: z.object({ type: z.string(), id: z.string().nullable() }),
    quarantinedAt: isoDateTime.nullable(),
    quarantineReason: z.string().nullable(),
    matches: z.number().int(),
    confirmed: z.number().int(),
    rejected: z.number().int(),
    createdAt: isoDateTime,
  })
  .meta({ id: "MediaBankEntry" });
export type EntryView = z.infer<typeof entryViewSchema>;

/** An entry as a bank's JSON file holds it (`GET …/export`, `GET …/export/download`): a vpdq entry's `value` is its frames, so that it imports again as the same entry. */
export const bankFileEntrySchema = z.object({
  signalType: z.enum(SIGNAL_TYPES),
  value: z.string().meta({ description: "The hash in hex; for vpdq, the video's frames as vPDQ text" }),
  origin: z.string().nullable(),
  metadata: entryMetadataSchema.nullable(),
});
export type BankFileEntry = z.infer<typeof bankFileEntrySchema>;

/** The file formats of a bank's import and export. */
export const BANK_FILE_FORMATS = ["csv", "json"] as const;
export type BankFileFormat = (typeof BANK_FILE_FORMATS)[number];
/** The largest file imported at once, in characters, and its most entries. */
export const MAX_IMPORT_CHARS = 5_000_000;
export const MAX_IMPORT_ENTRIES = 50_000;
/**
 * The most entries `GET …/export` answers inside its JSON (about 10 MB of CSV): the answer is
 * built whole in memory and serialized in one piece, which at a million entries took the server
 * from 137 to 550 MB and held every other request for about 320 ms. A larger bank's file comes
 * from `GET …/export/download`, written a page at a time.
 */
export const MAX_INLINE_EXPORT_ENTRIES = 100_000;

export const importLineErrorSchema = z.object({ line: z.number().int().meta({ description: "1 is the first line (the CSV header); for JSON, the entry's position from 1" }), error: z.string() });
export const importResultSchema = z.object({
  added: z.number().int(),
  unchanged: z.number().int().meta({ description: "Lines whose signal the bank held already" }),
  errors: z.array(importLineErrorSchema).meta({ description: "Each refused line with why (at most 100 listed); the other lines are added" }),
});
export type ImportResult = z.infer<typeof importResultSchema>;

// ---------------------------------------------------------------------------------------------
// Additions of entries, and banking a case's media from a decision

/**
 * How entries came into a bank together (media_bank_additions): added one by one or imported
 * (`entries`), or a case's media banked by a moderator's decision (`case`, undoable).
 */
export const ADDITION_KINDS = ["entries", "case"] as const;
export type AdditionKind = (typeof ADDITION_KINDS)[number];

/** The longest reason for banking a case's media (kept in each entry's metadata, whose values are at most 1,000 characters). */
export const MAX_BANKING_REASON = 1000;

export const bankCaseMediaInputSchema = z.object({
  bankId: z.string().min(1).max(64),
  reason: z
    .string()
    .trim()
    .min(1, "say why the media are banked")
    .max(MAX_BANKING_REASON)
    .meta({ description: "Why the media are banked: kept on each entry (its metadata) and shown with every match of it, and in the audit trail" }),
});
export type BankCaseMediaInput = z.infer<typeof bankCaseMediaInputSchema>;

/**
 * The past media check of an addition: `waiting` for its first batch, `running` (some media
 * checked), `done`, or `stopped` (the banking was undone, or its entries are gone).
 */
export const PAST_CHECK_STATUSES = ["waiting", "running", "done", "stopped"] as const;
export type PastCheckStatus = (typeof PAST_CHECK_STATUSES)[number];

export const pastCheckViewSchema = z
  .object({
    status: z.enum(PAST_CHECK_STATUSES),
    checked: z.number().int().meta({ description: "Media items of the project checked so far" }),
    matches: z.number().int().meta({ description: "Matches the check recorded" }),
    finishedAt: isoDateTime.nullable(),
  })
  .meta({ description: "The check of the project's past media against the entries added, in the background" });

export const bankingViewSchema = z
  .object({
    id: z.string(),
    caseId: z.string(),
    bank: z.object({ id: z.string(), name: z.string(), negative: z.boolean() }),
    reason: z.string(),
    by: z.object({ type: z.string(), id: z.string().nullable() }),
    entries: z.array(z.object({ id: z.string(), signalType: z.enum(SIGNAL_TYPES), value: z.string() })).meta({ description: "The entries the banking added (and still in the bank)" }),
    added: z.number().int().meta({ description: "Entries the banking added" }),
    unchanged: z.number().int().meta({ description: "Hashes the bank held already (left as they were, and by an undo)" }),
    belowFloor: z.number().int().meta({ description: "PDQ hashes (and videos, vpdq) not banked: their quality (every frame's) is under the bank's floor" }),
    createdAt: isoDateTime,
    undone: z.object({ at: isoDateTime, by: z.object({ type: z.string(), id: z.string().nullable() }), removed: z.number().int() }).nullable(),
    check: pastCheckViewSchema,
  })
  .meta({ id: "MediaBanking" });
export type BankingView = z.infer<typeof bankingViewSchema>;

// ---------------------------------------------------------------------------------------------
// Media of a case, and matches

/**
 * A media item on a report (the report route's optional `media`): a URL Flagstaff fetches and
 * hashes, or hashes the platform computed (so harmful bytes need never reach Flagstaff), or both.
 */
export const mediaInputSchema = z
  .strictObject({
    url: z.string().max(2048).optional().meta({ description: "An http(s) URL fetched in the background (the link scanner's safeguards), hashed, and not kept unless `keep` is true" }),
    sha256: z.string().optional().meta({ description: "SHA-256 of the file, 64 hex digits" }),
    md5: z.string().optional().meta({ description: "MD5 of the file, 32 hex digits" }),
    pdq: z.string().optional().meta({ description: "PDQ hash of the image, 64 hex digits" }),
    pdqQuality: z.number().int().min(0).max(100).optional().meta({ description: "The PDQ hash's quality (0 to 100); required with `pdq`" }),
    keep: z.boolean().optional().meta({ description: "Keep the fetched file as an attachment of the report (default false: hashed and dropped)" }),
  })
  .superRefine((m, ctx) => {
    for (const type of HEX_SIGNAL_TYPES) {
      const v = m[type];
      if (v !== undefined && normalizeSignal(type, v) === null) ctx.addIssue({ code: "custom", path: [type], message: `must be ${SIGNAL_TYPE_SPECS[type].hexDigits} hexadecimal digits` });
    }
    if (m.pdq !== undefined && m.pdqQuality === undefined) ctx.addIssue({ code: "custom", path: ["pdqQuality"], message: "is required with pdq" });
    if (m.url === undefined && m.sha256 === undefined && m.md5 === undefined && m.pdq === undefined) ctx.addIssue({ code: "custom", path: ["url"], message: "a media item needs a url or a hash" });
    if (m.keep && m.url === undefined) ctx.addIssue({ code: "custom", path: ["keep"], message: "keep needs a url" });
    if (m.url !== undefined && !/^https?:\/\//i.test(m.url)) ctx.addIssue({ code: "custom", path: ["url"], message: "must be an http or https URL" });
  });
export type MediaInput = z.infer<typeof mediaInputSchema>;
/** Media items on one report at most. */
export const MAX_REPORT_MEDIA = 20;

/**
 * A media item's hashing: `pending` (a URL not fetched yet, an image not hashed yet), `hashed`,
 * `refused` (the file was refused: `error` says why) or `failed` (the URL could not be fetched).
 */
export const MEDIA_STATUSES = ["pending", "hashed", "refused", "failed"] as const;
export type MediaStatus = (typeof MEDIA_STATUSES)[number];

/**
 * How a video's frames were hashed (docs/media.md, "Video"): `vpdq`, sampled one a second by
 * ffmpeg into PDQ hashes (matched against PDQ entries, a banked picture found in a frame); or
 * `exact_only`, matched by SHA-256 and MD5 alone (the host has no ffmpeg, or it refused the file:
 * `error` says why). Null for a media item that is not a video.
 */
export const FRAME_HASHINGS = ["vpdq", "exact_only"] as const;
export type FrameHashing = (typeof FRAME_HASHINGS)[number];

/** A match is `pending` until a moderator confirms or rejects it. */
export const MATCH_STATUSES = ["pending", "confirmed", "rejected"] as const;
export type MatchStatus = (typeof MATCH_STATUSES)[number];

export const caseMediaViewSchema = z
  .object({
    id: z.string(),
    reportId: z.string().nullable(),
    attachmentId: z.string().nullable(),
    url: z.string().nullable(),
    sha256: z.string().nullable(),
    md5: z.string().nullable(),
    pdq: z.string().nullable(),
    pdqQuality: z.number().int().nullable(),
    fileName: z.string().nullable().meta({ description: "An attachment's file name (as the uploader gave it); null for media sent with a report" }),
    mediaType: z.enum(MEDIA_TYPES).nullable().meta({ description: "An attachment's type, read from its bytes; null for media sent with a report (a URL's type is not kept)" }),
    frameHashing: z.enum(FRAME_HASHINGS).nullable().meta({ description: "A video's: `vpdq` (its frames, one a second, hashed by PDQ and matched) or `exact_only` (SHA-256 and MD5 only: the server has no ffmpeg, or the video was refused: `error` says why). Null for anything else, and for a video not hashed yet." }),
    frames: z.number().int().nullable().meta({ description: "A video's frames hashed (one a second)" }),
    status: z.enum(MEDIA_STATUSES),
    error: z.string().nullable(),
    createdAt: isoDateTime,
    matchedAt: isoDateTime.nullable().meta({ description: "When it was matched against the project's banks (null: not yet)" }),
  })
  .meta({ id: "CaseMedia" });
export type CaseMediaView = z.infer<typeof caseMediaViewSchema>;

/** Whether a match sets off its bank's action: never a negative bank's, nor one suppressed by a negative bank or over the quarantine count. */
export function matchTakesAction(m: { negative: boolean; suppressed: boolean; quarantined: boolean }): boolean {
  return !m.negative && !m.suppressed && !m.quarantined;
}

export const matchViewSchema = z
  .object({
    id: z.string(),
    caseId: z.string(),
    reportId: z.string().nullable(),
    mediaId: z.string(),
    bank: z.object({ id: z.string(), name: z.string(), negative: z.boolean() }),
    entry: z.object({ id: z.string(), signalType: z.enum(SIGNAL_TYPES), origin: z.string().nullable(), metadata: entryMetadataSchema.nullable() }),
    distance: z.number().int().nullable().meta({ description: "PDQ: the Hamming distance; exact hashes: null" }),
    quality: z.number().int().nullable().meta({ description: "PDQ: the media's hash quality" }),
    suppressed: z.boolean().meta({ description: "A negative bank matched the same media: this match took no action" }),
    quarantined: z.boolean().meta({ description: "This match put its entry over the bank's quarantine count: it took no action" }),
    actionTaken: z.boolean().meta({ description: "The match set off its bank's action (false for a negative bank's match, a suppressed or a quarantined one)" }),
    status: z.enum(MATCH_STATUSES),
    decidedBy: z.string().nullable(),
    decidedByEmail: z.string().nullable().meta({ description: "The email of the user who decided; null before a verdict or when an API key gave it" }),
    decidedAt: isoDateTime.nullable(),
    createdAt: isoDateTime,
  })
  .meta({ id: "MediaMatch" });
export type MatchView = z.infer<typeof matchViewSchema>;

/** A case's media items listed a page at a time (by default, and at most): a case of a flood of reports may hold thousands. */
export const CASE_MEDIA_PAGE = { default: 100, max: 500 } as const;
/** A case's matches listed at most: beyond, they are counted (`matchesTotal`), not listed. */
export const CASE_MATCHES_MAX = 500;

export const caseMediaPageInputSchema = z.object({
  limit: z.coerce.number().int().min(1).max(CASE_MEDIA_PAGE.max).optional().meta({ description: `Media items of the page (default ${CASE_MEDIA_PAGE.default}, at most ${CASE_MEDIA_PAGE.max})` }),
  cursor: z.string().min(1).max(64).optional().meta({ description: "The previous page's `nextCursor`" }),
});

export const caseMediaMatchesViewSchema = z.object({
  media: z.array(caseMediaViewSchema).meta({ description: "A page of the case's media items, oldest first" }),
  mediaTotal: z.number().int().meta({ description: "The case's media items in all" }),
  nextCursor: z.string().nullable().meta({ description: "The next page's cursor; null on the last page" }),
  matches: z.array(matchViewSchema).meta({ description: `The case's matches (of every media item, whatever the page), oldest first; at most ${CASE_MATCHES_MAX}` }),
  matchesTotal: z.number().int().meta({ description: "The case's matches in all" }),
});
export type CaseMediaMatchesView = z.infer<typeof caseMediaMatchesViewSchema>;

/**
 * The `data` of a `media.matched` webhook event (docs/enforcement.md): one per match recorded,
 * for endpoints that list the type. The banked item is never sent: its bank, the entry's origin,
 * the distance.
 */
export const mediaMatchedEventSchema = z.object({
  matchId: z.string(),
  projectId: z.string(),
  caseId: z.string(),
  reportId: z.string().nullable(),
  mediaId: z.string(),
  bank: z.object({ id: z.string(), name: z.string(), negative: z.boolean() }),
  entry: z.object({ id: z.string(), signalType: z.enum(SIGNAL_TYPES), origin: z.string().nullable() }),
  distance: z.number().int().nullable(),
  quality: z.number().int().nullable(),
  suppressed: z.boolean(),
  quarantined: z.boolean(),
  /** The bank's action taken, or `none` (a negative bank, suppressed, quarantined). */
  action: z.string(),
});
export type MediaMatchedEvent = z.infer<typeof mediaMatchedEventSchema>;
