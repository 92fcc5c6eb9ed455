/**
 * A project's banks of known harmful media (issue 43, docs/media.md): created, listed, changed
 * and deleted by admins, read by moderators; their entries added one by one, imported from and
 * exported to files (CSV as Meta's Hasher-Matcher-Actioner exchanges them, `signal_type,
 * signal_value` and metadata columns; or JSON), each with its origin. Every change counts the
 * project's banks' version up (media_bank_versions) in its own transaction: the in-memory index
 * of every instance reloads when it moved (matching.ts).
 */
import { and, asc, count, eq, gt, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import { forUpdate } from "../../db/prepared.ts";
import { mediaBankAdditions, mediaBankEntries, mediaBanks, mediaBankVersions, mediaMatches } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { iso, isoOrNull } from "../core/clock.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { badRequest, conflict, DomainError, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { requireProject } from "../accounts/projects.ts";
import { checkRouteQueues } from "../review/queues.ts";
import { csvRows, csvText } from "../plumbing/csv.ts";
import { enqueueJob } from "../plumbing/jobs.ts";
import { bankVersionMoving, entryPages } from "../intake/signal-index.ts";
import { breathe, slicer } from "../plumbing/event-loop.ts";
import { JOB_KIND } from "../views/job.ts";
import { formatVpdq, parseVpdq, type VpdqFrame } from "../media/vpdq.ts";
import {
  bankActionSchema, DEFAULT_BANK_PDQ_DISTANCE, DEFAULT_BANK_QUALITY_FLOOR, entryInputSchema, entryMetadataInputSchema, entryMetadataSchema, MAX_CSV_METADATA_COLUMNS, MAX_ENTRY_METADATA_KEYS, MAX_IMPORT_CHARS, MAX_IMPORT_ENTRIES, MAX_INLINE_EXPORT_ENTRIES, normalizeSignal, SIGNAL_TYPE_SPECS, SIGNAL_TYPES,
  type BankAction, type BankCreate, type BankFileEntry, type BankFileFormat, type BankPatch, type BankView, type EntryInput, type EntryView, type ImportResult, type SignalType,
} from "../views/media-bank.ts";
import { containsNul } from "../views/validation.ts";

export type BankRow = typeof mediaBanks.$inferSelect;
export type EntryRow = typeof mediaBankEntries.$inferSelect;

/** The bank's settings as the audit trail records them. */
export const auditFields = (b: BankRow) => ({
  name: b.name,
  enabled: b.enabled === 1,
  negative: b.negative === 1,
  action: parseAction(b.action),
  pdqDistance: b.pdqDistance,
  qualityFloor: b.qualityFloor,
  quarantine: quarantineOf(b),
});

export const parseAction = (text: string): BankAction => bankActionSchema.parse(JSON.parse(text));
const quarantineOf = (b: BankRow) => (b.quarantineCount != null && b.quarantineWindowMs != null ? { count: b.quarantineCount, windowSeconds: Math.round(b.quarantineWindowMs / 1000) } : null);

/**
 * What a change did to a project's banks: `entries_added` (an index older than it takes those
 * entries, its `added_version`), or anything else, `reshaped` (an index older than it is built
 * again).
 */
export type BankChange = "entries_added" | "reshaped";

/**
 * Counts the project's banks' version up (inside the change's transaction, before the entries it
 * adds are written: they carry the version it answers): every instance's index follows on its
 * next match. The version's row stays locked to the COMMIT, so versions commit in their order.
 */
export async function bumpBankVersion(ctx: Pick<DomainContext, "db" | "store">, projectId: string, change: BankChange): Promise<number> {
  bankVersionMoving(ctx, projectId);
  const v = mediaBankVersions;
  const reshaped = change === "reshaped";
  const [row] = await ctx.db
    .insert(v)
    .values({ projectId, version: 1, reshapedVersion: reshaped ? 1 : 0 })
    .onConflictDoUpdate({ target: v.projectId, set: { version: sql`${v.version} + 1`, ...(reshaped ? { reshapedVersion: sql`${v.version} + 1` } : {}) } })
    .returning({ version: v.version });
  return row!.version;
}

/**
 * A deleted bank is gone for every caller at once, while its entries are deleted by slices
 * (bank-deletion.ts): each lookup of banks adds this (the index built for matching says it too:
 * intake/signal-index.ts, buildIndex).
 */
export const liveBank = () => isNull(mediaBanks.deletedAt);

/** A bank of the caller's organization (another organization's is a 404 like a missing one). */
export async function requireBank(ctx: Pick<DomainContext, "db" | "orgId">, bankId: string): Promise<BankRow> {
  const [row] = await ctx.db.select().from(mediaBanks).where(and(eq(mediaBanks.id, bankId), eq(mediaBanks.orgId, ctx.orgId), liveBank()));
  if (!row) throw notFound("Media bank not found");
  return row;
}

/** The figures of each bank: entries, quarantined entries, matches and their verdicts. */
async function figuresOf(ctx: Pick<DomainContext, "db">, bankIds: string[]) {
  const empty = () => ({ entries: 0, quarantinedEntries: 0, matches: 0, confirmed: 0, rejected: 0 });
  const figures = new Map(bankIds.map((id) => [id, empty()]));
  if (bankIds.length === 0) return figures;
  const [entries, quarantined, matches] = await Promise.all([
    ctx.db.select({ bankId: mediaBankEntries.bankId, n: count() }).from(mediaBankEntries).where(inArray(mediaBankEntries.bankId, bankIds)).groupBy(mediaBankEntries.bankId),
    ctx.db
      .select({ bankId: mediaBankEntries.bankId, n: count() })
      .from(mediaBankEntries)
      .where(and(inArray(mediaBankEntries.bankId, bankIds), isNotNull(mediaBankEntries.quarantinedAt)))
      .groupBy(mediaBankEntries.bankId),
    ctx.db.select({ bankId: mediaMatches.bankId, status: mediaMatches.status, n: count() }).from(mediaMatches).where(inArray(mediaMatches.bankId, bankIds)).groupBy(mediaMatches.bankId, mediaMatches.status),
  ]);
  for (const e of entries) figures.get(e.bankId)!.entries = Number(e.n);
  for (const e of quarantined) figures.get(e.bankId)!.quarantinedEntries = Number(e.n);
  for (const m of matches) {
    const f = figures.get(m.bankId)!;
    f.matches += Number(m.n);
    if (m.status === "confirmed") f.confirmed += Number(m.n);
    if (m.status === "rejected") f.rejected += Number(m.n);
  }
  return figures;
}

/** A bank's precision: the share of its decided matches that were confirmed (null before any is decided). */
export const precisionOf = (confirmed: number, rejected: number): number | null => (confirmed + rejected === 0 ? null : confirmed / (confirmed + rejected));

function toView(b: BankRow, f: { entries: number; quarantinedEntries: number; matches: number; confirmed: number; rejected: number }): BankView {
  return {
    id: b.id,
    projectId: b.projectId,
    name: b.name,
    description: b.description,
    enabled: b.enabled === 1,
    negative: b.negative === 1,
    action: parseAction(b.action),
    pdqDistance: b.pdqDistance,
    qualityFloor: b.qualityFloor,
    quarantine: quarantineOf(b),
    ...f,
    precision: precisionOf(f.confirmed, f.rejected),
    createdAt: iso(b.createdAt),
    updatedAt: iso(b.updatedAt),
  };
}

async function viewOf(ctx: Pick<DomainContext, "db">, b: BankRow): Promise<BankView> {
  return toView(b, (await figuresOf(ctx, [b.id])).get(b.id)!);
}

export async function listBanks(ctx: DomainContext, input: { projectId: string }): Promise<BankView[]> {
  await requireProject(ctx, input.projectId);
  const rows = await ctx.db.select().from(mediaBanks).where(and(eq(mediaBanks.orgId, ctx.orgId), eq(mediaBanks.projectId, input.projectId), liveBank())).orderBy(asc(mediaBanks.name));
  const figures = await figuresOf(ctx, rows.map((r) => r.id));
  return rows.map((r) => toView(r, figures.get(r.id)!));
}

export async function getBank(ctx: DomainContext, input: { bankId: string }): Promise<BankView> {
  return viewOf(ctx, await requireBank(ctx, input.bankId));
}

const nameTaken = () => conflict("Another media bank of the project has this name");

/**
 * A bank's action that routes to a queue names one of the organization's queues, of the bank's
 * project when the queue has one (400 otherwise, as for a rule's route effect: checkRouteQueues):
 * another organization's queue was taken, and the bank's matches then routed nowhere, silently.
 */
const checkActionQueue = (ctx: DomainContext, action: BankAction | undefined, projectId: string): Promise<void> =>
  checkRouteQueues(ctx, action?.type === "route" ? [{ path: "action.queueId", queueId: action.queueId }] : [], projectId, "bank");

export async function createBank(ctx: DomainContext, input: BankCreate & { projectId: string }): Promise<BankView> {
  await requireProject(ctx, input.projectId);
  await checkActionQueue(ctx, input.action, input.projectId);
  const now = ctx.clock.now();
  const row: BankRow = {
    id: newId(),
    orgId: ctx.orgId,
    projectId: input.projectId,
    name: input.name,
    description: input.description ?? null,
    enabled: input.enabled === false ? 0 : 1,
    negative: input.negative ? 1 : 0,
    action: JSON.stringify(input.action ?? { type: "record" }),
    pdqDistance: input.pdqDistance ?? DEFAULT_BANK_PDQ_DISTANCE,
    qualityFloor: input.qualityFloor ?? DEFAULT_BANK_QUALITY_FLOOR,
    quarantineCount: input.quarantine?.count ?? null,
    quarantineWindowMs: input.quarantine ? input.quarantine.windowSeconds * 1000 : null,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  await transaction(ctx, async () => {
    const inserted = await ctx.db.insert(mediaBanks).values(row).onConflictDoNothing().returning({ id: mediaBanks.id });
    if (inserted.length === 0) throw nameTaken();
    await bumpBankVersion(ctx, row.projectId, "reshaped");
    await recordAudit(ctx, { projectId: row.projectId, action: "MEDIA_BANK_CREATED", entityType: "media_bank", entityId: row.id, after: auditFields(row) });
  });
  return viewOf(ctx, row);
}

export async function updateBank(ctx: DomainContext, input: BankPatch & { bankId: string }): Promise<BankView> {
  const updated = await transaction(ctx, async () => {
    const before = await requireBank(ctx, input.bankId);
    await checkActionQueue(ctx, input.action, before.projectId);
    const patch: Partial<BankRow> = { updatedAt: ctx.clock.now() };
    if (input.name !== undefined) patch.name = input.name;
    if (input.description !== undefined) patch.description = input.description;
    if (input.enabled !== undefined) patch.enabled = input.enabled ? 1 : 0;
    if (input.negative !== undefined) patch.negative = input.negative ? 1 : 0;
    if (input.action !== undefined) patch.action = JSON.stringify(input.action);
    if (input.pdqDistance !== undefined) patch.pdqDistance = input.pdqDistance;
    if (input.qualityFloor !== undefined) patch.qualityFloor = input.qualityFloor;
    if (input.quarantine !== undefined) {
      patch.quarantineCount = input.quarantine?.count ?? null;
      patch.quarantineWindowMs = input.quarantine ? input.quarantine.windowSeconds * 1000 : null;
    }
    if (patch.name !== undefined && patch.name !== before.name) {
      const [other] = await ctx.db.select({ id: mediaBanks.id }).from(mediaBanks).where(and(eq(mediaBanks.projectId, before.projectId), eq(mediaBanks.name, patch.name), liveBank()));
      if (other) throw nameTaken();
    }
    await ctx.db.update(mediaBanks).set(patch).where(eq(mediaBanks.id, before.id));
    const after = { ...before, ...patch };
    await bumpBankVersion(ctx, before.projectId, "reshaped");
    await recordAudit(ctx, { projectId: before.projectId, action: "MEDIA_BANK_UPDATED", entityType: "media_bank", entityId: before.id, before: auditFields(before), after: auditFields(after) });
    return after;
  });
  return viewOf(ctx, updated);
}

// ---------------------------------------------------------------------------------------------
// Entries

/** Each entry's matches and their verdicts. */
async function entryFigures(ctx: Pick<DomainContext, "db">, entryIds: string[]) {
  const figures = new Map(entryIds.map((id) => [id, { matches: 0, confirmed: 0, rejected: 0 }]));
  if (entryIds.length === 0) return figures;
  const rows = await ctx.db.select({ entryId: mediaMatches.entryId, status: mediaMatches.status, n: count() }).from(mediaMatches).where(inArray(mediaMatches.entryId, entryIds)).groupBy(mediaMatches.entryId, mediaMatches.status);
  for (const r of rows) {
    const f = figures.get(r.entryId)!;
    f.matches += Number(r.n);
    if (r.status === "confirmed") f.confirmed += Number(r.n);
    if (r.status === "rejected") f.rejected += Number(r.n);
  }
  return figures;
}

export const metadataOf = (text: string | null) => (text === null ? null : entryMetadataSchema.parse(JSON.parse(text)));

function entryView(e: EntryRow, f: { matches: number; confirmed: number; rejected: number }): EntryView {
  return {
    id: e.id,
    bankId: e.bankId,
    signalType: e.signalType,
    value: e.value,
    frames: e.frames === null ? null : frameCount(e.frames),
    origin: e.origin,
    metadata: metadataOf(e.metadata),
    addedBy: { type: e.addedByType, id: e.addedById },
    quarantinedAt: isoOrNull(e.quarantinedAt),
    quarantineReason: e.quarantineReason,
    ...f,
    createdAt: iso(e.createdAt),
  };
}

/** A vpdq entry's frames counted (its text is HMA's JSON array, one string a frame, written by vpdqSignal). */
const frameCount = (frames: string): number => (JSON.parse(frames) as unknown[]).length;

/** The stored form of a signal: its value (the unique key), and a vpdq entry's frames beside it. */
export interface StoredSignal {
  value: string;
  frames: string | null;
}

/**
 * A vPDQ signal's stored form: its frames in HMA's text, and as value their SHA-256 (the entry's
 * unique key: a btree row cannot hold a long video's frames; the same video banked twice gives
 * the same digest, whatever the case of its hex or its form as given).
 */
export function vpdqSignal(frames: readonly VpdqFrame[]): StoredSignal {
  const text = formatVpdq(frames);
  return { value: new Bun.CryptoHasher("sha256").update(text).digest("hex"), frames: text };
}

/**
 * A signal as given (by a person, a file) in its stored form, or why it is refused: a hex hash
 * trimmed and lower-cased; a vPDQ signal read (HMA's JSON or vpdq-hash-video's lines, 1 to
 * VPDQ_MAX_FRAMES frames, each a 64-digit hash, a quality from 0 to 100 and a time).
 */
export function storedSignal(type: SignalType, given: string): StoredSignal | { error: string } {
  if (type === "vpdq") {
    try {
      return vpdqSignal(parseVpdq(given));
    } catch (e) {
      if (e instanceof RangeError) return { error: `not a vpdq signal: ${e.message}` };
      throw e;
    }
  }
  const value = normalizeSignal(type, given);
  return value === null ? { error: `not a ${type} hash (${SIGNAL_TYPE_SPECS[type].hexDigits} hexadecimal digits)` } : { value, frames: null };
}

/** A bank's entries in the order they were added, a page at a time (`after`: the last entry id of the previous page). */
export async function listEntries(ctx: DomainContext, input: { bankId: string; limit: number; after?: string; quarantined?: boolean }): Promise<{ entries: EntryView[]; next: string | null }> {
  const bank = await requireBank(ctx, input.bankId);
  const rows = await ctx.db
    .select()
    .from(mediaBankEntries)
    .where(and(eq(mediaBankEntries.bankId, bank.id), input.after ? gt(mediaBankEntries.id, input.after) : undefined, input.quarantined ? isNotNull(mediaBankEntries.quarantinedAt) : undefined))
    .orderBy(asc(mediaBankEntries.id))
    .limit(input.limit + 1);
  const page = rows.slice(0, input.limit);
  const figures = await entryFigures(ctx, page.map((r) => r.id));
  return { entries: page.map((r) => entryView(r, figures.get(r.id)!)), next: rows.length > input.limit ? page[page.length - 1]!.id : null };
}

/** An entry's row as stored, from an input already checked (its value normalized), with the addition it comes with. */
export function entryRow(ctx: DomainContext, bank: BankRow, e: { signalType: SignalType; value: string; frames?: string | null; origin: string | null; metadata: Record<string, unknown> | null }, now: number, added: { additionId: string; version: number }): EntryRow {
  return {
    id: newId(),
    orgId: bank.orgId,
    projectId: bank.projectId,
    bankId: bank.id,
    signalType: e.signalType,
    value: e.value,
    origin: e.origin,
    metadata: e.metadata && Object.keys(e.metadata).length > 0 ? JSON.stringify(e.metadata) : null,
    addedByType: ctx.actor.type,
    addedById: ctx.actor.id,
    quarantinedAt: null,
    quarantineReason: null,
    createdAt: now,
    additionId: added.additionId,
    frames: e.frames ?? null,
    addedVersion: added.version,
  };
}

// ---------------------------------------------------------------------------------------------
// Additions: entries added together, and the check of the project's past media against them

export type AdditionRow = typeof mediaBankAdditions.$inferSelect;

/** A new addition's row (its check waiting for its first batch). */
export function additionRow(ctx: DomainContext, bank: BankRow, fields: Pick<AdditionRow, "id" | "kind" | "caseId" | "reason" | "added" | "unchanged" | "belowFloor">, now: number): AdditionRow {
  return {
    ...fields,
    orgId: bank.orgId,
    projectId: bank.projectId,
    bankId: bank.id,
    addedByType: ctx.actor.type,
    addedById: ctx.actor.id,
    createdAt: now,
    undoneAt: null,
    undoneByType: null,
    undoneById: null,
    removed: null,
    checkThrough: null,
    checkAfter: null,
    checked: 0,
    checkMatches: 0,
    checkedAt: null,
  };
}

/**
 * Records an addition and enqueues the check of the project's past media against its entries
 * (past-check.ts), inside the change's transaction: the job exists exactly when the entries do.
 */
export async function startAddition(ctx: DomainContext, row: AdditionRow): Promise<void> {
  await ctx.db.insert(mediaBankAdditions).values(row);
  await enqueuePastCheck(ctx, row, { after: null });
}

/**
 * A job of an addition's past media check (past-check.ts): the batch after the cursor `after`
 * (null: the first), `settled` once the reports in flight were waited for, from `runAt` (now).
 */
export function enqueuePastCheck(ctx: DomainContext, addition: Pick<AdditionRow, "id" | "orgId">, job: { after: string | null; settled?: true; runAt?: number }): Promise<string> {
  const payload = { additionId: addition.id, after: job.after, ...(job.settled ? { settled: true } : {}) };
  return enqueueJob(ctx, { orgId: addition.orgId, kind: JOB_KIND.mediaPastCheck, payload, runAt: job.runAt, entityId: addition.id, maxAttempts: 50 });
}

/**
 * The addition that entries added one by one or imported go with: one of the bank's whose check
 * has not started yet, when there is one (locked: its check starts after this change commits, so
 * it reads these entries too), else a new one. Entries added one after another thus share one
 * check of the past media rather than each scanning them all: the check's lane holds at most
 * one waiting job per bank for them. Answers its id and whether it is new (then `startAddition`
 * it once the entries are in).
 */
async function entriesAddition(ctx: DomainContext, bank: BankRow): Promise<{ id: string; isNew: boolean }> {
  const [waiting] = await forUpdate(
    ctx.db
      .select({ id: mediaBankAdditions.id })
      .from(mediaBankAdditions)
      .where(and(eq(mediaBankAdditions.bankId, bank.id), eq(mediaBankAdditions.kind, "entries"), isNull(mediaBankAdditions.checkThrough), isNull(mediaBankAdditions.checkedAt)))
      .limit(1),
  );
  return waiting ? { id: waiting.id, isNew: false } : { id: newId(), isNew: true };
}

/** Counts entries into an addition: a new one is recorded with its check; one waiting is counted up. */
async function countAddition(ctx: DomainContext, bank: BankRow, addition: { id: string; isNew: boolean }, added: number, unchanged: number, now: number): Promise<void> {
  if (addition.isNew) {
    if (added > 0) await startAddition(ctx, additionRow(ctx, bank, { id: addition.id, kind: "entries", caseId: null, reason: null, added, unchanged, belowFloor: 0 }, now));
    return;
  }
  await ctx.db
    .update(mediaBankAdditions)
    .set({ added: sql`${mediaBankAdditions.added} + ${added}`, unchanged: sql`${mediaBankAdditions.unchanged} + ${unchanged}` })
    .where(eq(mediaBankAdditions.id, addition.id));
}

export async function addEntry(ctx: DomainContext, input: EntryInput & { bankId: string }): Promise<EntryView> {
  const signal = storedSignal(input.signalType, input.value);
  if ("error" in signal) throw badRequest(`value: ${signal.error}`);
  const row = await transaction(ctx, async () => {
    const bank = await requireBank(ctx, input.bankId);
    const now = ctx.clock.now();
    const addition = await entriesAddition(ctx, bank);
    const version = await bumpBankVersion(ctx, bank.projectId, "entries_added");
    const row = entryRow(ctx, bank, { signalType: input.signalType, ...signal, origin: input.origin ?? null, metadata: input.metadata ?? null }, now, { additionId: addition.id, version });
    const inserted = await ctx.db.insert(mediaBankEntries).values(row).onConflictDoNothing().returning({ id: mediaBankEntries.id });
    if (inserted.length === 0) throw conflict("The bank holds this signal already");
    await countAddition(ctx, bank, addition, 1, 0, now);
    await recordAudit(ctx, { projectId: bank.projectId, action: "MEDIA_BANK_ENTRIES_ADDED", entityType: "media_bank", entityId: bank.id, data: { added: 1, entryId: row.id, signalType: row.signalType, origin: row.origin, additionId: addition.id } });
    return row;
  });
  return entryView(row, { matches: 0, confirmed: 0, rejected: 0 });
}

async function requireEntry(ctx: DomainContext, bank: BankRow, entryId: string): Promise<EntryRow> {
  const [row] = await ctx.db.select().from(mediaBankEntries).where(and(eq(mediaBankEntries.id, entryId), eq(mediaBankEntries.bankId, bank.id)));
  if (!row) throw notFound("Media bank entry not found");
  return row;
}

const entryData = (e: EntryRow) => ({ entryId: e.id, signalType: e.signalType, value: e.value, origin: e.origin });

export async function removeEntry(ctx: DomainContext, input: { bankId: string; entryId: string }): Promise<{ deleted: true }> {
  await transaction(ctx, async () => {
    const bank = await requireBank(ctx, input.bankId);
    const entry = await requireEntry(ctx, bank, input.entryId);
    await ctx.db.delete(mediaBankEntries).where(eq(mediaBankEntries.id, entry.id));
    await bumpBankVersion(ctx, bank.projectId, "reshaped");
    await recordAudit(ctx, { projectId: bank.projectId, action: "MEDIA_BANK_ENTRY_REMOVED", entityType: "media_bank", entityId: bank.id, data: entryData(entry) });
  });
  return { deleted: true };
}

/** Lifts an entry's quarantine (a person looked at its matches): it matches again. */
export async function releaseEntry(ctx: DomainContext, input: { bankId: string; entryId: string }): Promise<EntryView> {
  const row = await transaction(ctx, async () => {
    const bank = await requireBank(ctx, input.bankId);
    const entry = await requireEntry(ctx, bank, input.entryId);
    if (entry.quarantinedAt === null) throw conflict("The entry is not quarantined");
    await ctx.db.update(mediaBankEntries).set({ quarantinedAt: null, quarantineReason: null }).where(eq(mediaBankEntries.id, entry.id));
    await bumpBankVersion(ctx, bank.projectId, "reshaped");
    await recordAudit(ctx, { projectId: bank.projectId, action: "MEDIA_BANK_ENTRY_RELEASED", entityType: "media_bank", entityId: bank.id, data: entryData(entry) });
    return { ...entry, quarantinedAt: null, quarantineReason: null };
  });
  return entryView(row, (await entryFigures(ctx, [row.id])).get(row.id)!);
}

// ---------------------------------------------------------------------------------------------
// Files: import and export

/** HMA's names of signal types, beside ours: `video_md5` is an MD5 (of a video file). */
const SIGNAL_ALIASES: Record<string, SignalType> = { ...Object.fromEntries(SIGNAL_TYPES.map((t) => [t, t])), video_md5: "md5", pdq_hash: "pdq" };
/** The refused lines listed at most (the count of the others is still right). */
const MAX_LISTED_ERRORS = 100;

interface ParsedEntry {
  line: number;
  signalType: SignalType;
  value: string;
  frames: string | null;
  origin: string | null;
  metadata: Record<string, string | number | boolean | null> | null;
}

/**
 * Parses a file's lines: each good one an entry, each bad one an error naming its line (1 = the
 * CSV's header; JSON: the entry's position from 1). A file that cannot be read at all (no
 * header, not JSON) is a 400.
 */
async function parseBankFile(format: BankFileFormat, content: string, defaultOrigin: string | null): Promise<{ entries: ParsedEntry[]; errors: { line: number; error: string }[] }> {
  if (content.length > MAX_IMPORT_CHARS) throw new DomainError("too_large", `The file is longer than ${MAX_IMPORT_CHARS} characters: split it`);
  const entries: ParsedEntry[] = [];
  const errors: { line: number; error: string }[] = [];
  const slices = slicer();
  const take = (line: number, raw: { signalType: unknown; value: unknown; origin?: unknown; metadata?: unknown }) => {
    if (containsNul(raw)) return errors.push({ line, error: "NUL character" });
    const type = typeof raw.signalType === "string" ? SIGNAL_ALIASES[raw.signalType.trim().toLowerCase()] : undefined;
    if (!type) return errors.push({ line, error: `unknown signal type ${JSON.stringify(String(raw.signalType ?? "").slice(0, 40))} (${SIGNAL_TYPES.join(", ")}, video_md5)` });
    const signal = typeof raw.value === "string" ? storedSignal(type, raw.value) : { error: `no ${type} value` };
    if ("error" in signal) return errors.push({ line, error: signal.error });
    const origin = raw.origin === undefined || raw.origin === null || raw.origin === "" ? defaultOrigin : String(raw.origin).trim().slice(0, 500);
    const metadata = raw.metadata === undefined || raw.metadata === null ? null : entryMetadataInputSchema.safeParse(raw.metadata);
    if (metadata && !metadata.success) return errors.push({ line, error: `metadata must be an object of at most ${MAX_ENTRY_METADATA_KEYS} short values` });
    if (entries.length >= MAX_IMPORT_ENTRIES) return errors.push({ line, error: `more than ${MAX_IMPORT_ENTRIES} entries in one file` });
    return entries.push({ line, signalType: type, ...signal, origin, metadata: metadata ? metadata.data : null });
  };
  if (format === "json") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(content);
    } catch {
      throw badRequest("The file is not JSON: an array of entries { signalType, value, origin?, metadata? } was expected");
    }
    const list = Array.isArray(parsed) ? parsed : parsed && typeof parsed === "object" && Array.isArray((parsed as { entries?: unknown }).entries) ? (parsed as { entries: unknown[] }).entries : null;
    if (!list) throw badRequest("The file is not an array of entries (or { entries: [...] })");
    for (let i = 0; i < list.length; i++) {
      if (slices.due()) await slices.breathe();
      const e = entryInputSchema.omit({ metadata: true }).partial().passthrough().safeParse(list[i]); // metadata checked by take, naming the line
      const raw = (e.success ? e.data : {}) as Record<string, unknown>;
      take(i + 1, { signalType: raw.signalType ?? raw.signal_type, value: raw.value ?? raw.signal_value, origin: raw.origin, metadata: raw.metadata });
    }
    return { entries, errors };
  }
  const rows = csvRows(content.replace(/^\uFEFF/, ""));
  const header = rows.next().value;
  if (!header) throw badRequest("Line 1: the CSV needs a header line (signal_type,signal_value[,origin][,metadata columns…])");
  const names = header.cells.map((c) => c.trim().toLowerCase());
  const typeAt = names.indexOf("signal_type");
  const valueAt = names.indexOf("signal_value");
  if (typeAt < 0 || valueAt < 0) throw badRequest("Line 1: the header must name the columns signal_type and signal_value (HMA's file exchange)");
  const originAt = names.indexOf("origin");
  const metadataColumns = names.filter((n, i) => i !== typeAt && i !== valueAt && i !== originAt && n !== "").length;
  if (metadataColumns > MAX_ENTRY_METADATA_KEYS) throw badRequest(`Line 1: ${metadataColumns} metadata columns; an entry has at most ${MAX_ENTRY_METADATA_KEYS}`);
  for (const { line, cells } of rows) {
    if (slices.due()) await slices.breathe();
    if (cells.length === 1 && cells[0]!.trim() === "") continue; // a blank line
    if (cells.length !== names.length) {
      errors.push({ line, error: `${cells.length} cells where the header has ${names.length}` });
      continue;
    }
    const metadata: Record<string, string> = {};
    names.forEach((name, i) => {
      if (i !== typeAt && i !== valueAt && i !== originAt && name !== "" && cells[i]!.trim() !== "") metadata[name.slice(0, 64)] = cells[i]!.slice(0, 1000);
    });
    take(line, { signalType: cells[typeAt], value: cells[valueAt], origin: originAt >= 0 ? cells[originAt] : undefined, metadata: Object.keys(metadata).length ? metadata : null });
  }
  return { entries, errors };
}

/** Adds a file's entries to a bank: the good lines are added (or found there already), each bad line reported with its number. */
export async function importEntries(ctx: DomainContext, input: { bankId: string; format: BankFileFormat; content: string; origin?: string | null }): Promise<ImportResult> {
  const bank = await requireBank(ctx, input.bankId);
  const { entries, errors } = await parseBankFile(input.format, input.content, input.origin?.trim() || null);
  let added = 0;
  const now = ctx.clock.now();
  await transaction(ctx, async () => {
    await requireBank(ctx, bank.id);
    const addition = await entriesAddition(ctx, bank);
    // (An import that adds nothing moves the version too: the indexes then take nothing.)
    const version = await bumpBankVersion(ctx, bank.projectId, "entries_added");
    for (let i = 0; i < entries.length; i += 500) {
      const rows = entries.slice(i, i + 500).map((e) => entryRow(ctx, bank, e, now, { additionId: addition.id, version }));
      const inserted = await ctx.db.insert(mediaBankEntries).values(rows).onConflictDoNothing().returning({ id: mediaBankEntries.id });
      added += inserted.length;
    }
    if (added > 0) {
      await countAddition(ctx, bank, addition, added, entries.length - added, now);
      await recordAudit(ctx, { projectId: bank.projectId, action: "MEDIA_BANK_ENTRIES_ADDED", entityType: "media_bank", entityId: bank.id, data: { added, imported: true, origin: input.origin ?? null, additionId: addition.id } });
    }
  });
  return { added, unchanged: entries.length - added, errors: errors.slice(0, MAX_LISTED_ERRORS) };
}

/** What a bank's file is written from, an entry's columns. */
type FileRow = Pick<EntryRow, "signalType" | "value" | "frames" | "origin" | "metadata">;

/** A bank's file (exportEntries, and the download route that streams it): its bank, its text a piece at a time, and how many entries the pieces held so far. */
export interface BankFile {
  bank: BankRow;
  chunks: AsyncGenerator<string, void>;
  entries: () => number;
}

/**
 * A bank's entries as a file (CSV: signal_type,signal_value,origin and a column per metadata key;
 * JSON: an array), in the order of the bank's unique index (by signal type, then value), a piece
 * a page of entries (ENTRY_PAGE, keyset on that index), giving the event loop back after each
 * page: read and written in one piece, a bank of 150,000 entries held every other request for a
 * second on SQLite (scripts/bench/index-rebuild.ts --during export). A CSV's columns are known only once
 * every entry's metadata has been read: it reads the pages twice, the first time their metadata
 * alone. 404 for a bank that is not the caller's organization's (checked before any piece).
 */
export async function openBankFile(ctx: DomainContext, input: { bankId: string; format: BankFileFormat }, pageSize?: number): Promise<BankFile> {
  const bank = await requireBank(ctx, input.bankId);
  const e = mediaBankEntries;
  let entries = 0;
  // A CSV's columns: every entry's metadata keys, read first (a 400 before any piece when there
  // are more than a CSV holds here).
  const keys = input.format === "csv" ? await csvMetadataKeys(ctx, bank.id, pageSize) : [];
  async function* chunks(): AsyncGenerator<string, void> {
    // A vpdq entry's value is its frames (its digest alone could not be matched nor imported again).
    const columns = { signalType: e.signalType, value: e.value, frames: e.frames, origin: e.origin, metadata: e.metadata };
    const itemOf = (r: FileRow): BankFileEntry => ({ signalType: r.signalType, value: r.frames ?? r.value, origin: r.origin, metadata: metadataOf(r.metadata) });
    if (input.format === "json") {
      yield "[";
      for await (const rows of entryPages<FileRow>(ctx, { bankId: bank.id, columns, pageSize })) {
        yield (entries > 0 ? "," : "") + rows.map((r) => JSON.stringify(itemOf(r))).join(",");
        entries += rows.length;
        await breathe();
      }
      yield "]";
      return;
    }
    yield csvText([["signal_type", "signal_value", "origin", ...keys]]);
    for await (const rows of entryPages<FileRow>(ctx, { bankId: bank.id, columns, pageSize })) {
      yield rows
        .map((r) => {
          const i = itemOf(r);
          return csvText([[i.signalType, i.value, i.origin, ...keys.map((k) => i.metadata?.[k] ?? null)]]);
        })
        .join("");
      entries += rows.length;
      await breathe();
    }
  }
  return { bank, chunks: chunks(), entries: () => entries };
}

/** The metadata keys of a bank's entries, sorted: its CSV's columns after signal_type, signal_value and origin. 400 past MAX_CSV_METADATA_COLUMNS. */
async function csvMetadataKeys(ctx: DomainContext, bankId: string, pageSize?: number): Promise<string[]> {
  const e = mediaBankEntries;
  const keySet = new Set<string>();
  for await (const rows of entryPages<Pick<EntryRow, "value" | "metadata">>(ctx, { bankId, columns: { value: e.value, metadata: e.metadata }, pageSize })) {
    for (const r of rows) for (const k of Object.keys(metadataOf(r.metadata) ?? {})) keySet.add(k);
    if (keySet.size > MAX_CSV_METADATA_COLUMNS) throw badRequest(`the bank's entries have more than ${MAX_CSV_METADATA_COLUMNS} metadata keys, a column each in a CSV: export it as JSON (format=json)`);
    await breathe();
  }
  return [...keySet].filter((k) => !["signal_type", "signal_value", "origin"].includes(k)).sort();
}

/**
 * A bank's file in one answer (`GET …/export`), built whole in memory: a bank of more than
 * MAX_INLINE_EXPORT_ENTRIES (`maxEntries` in tests) is a 400 that names the route streaming its
 * file (`GET …/export/download`, src/api/bank-file-route.ts), found by one step of the bank's
 * index past that many entries, before any is read. `pageSize` overrides ENTRY_PAGE (tests).
 */
export async function exportEntries(
  ctx: DomainContext,
  input: { bankId: string; format: BankFileFormat },
  pageSize?: number,
  maxEntries = MAX_INLINE_EXPORT_ENTRIES,
): Promise<{ format: BankFileFormat; entries: number; content: string }> {
  const file = await openBankFile(ctx, input, pageSize);
  const [beyond] = await ctx.db.select({ one: sql<number>`1` }).from(mediaBankEntries).where(eq(mediaBankEntries.bankId, file.bank.id)).limit(1).offset(maxEntries);
  if (beyond) {
    await file.chunks.return();
    throw badRequest(`the bank holds more than ${maxEntries.toLocaleString("en")} entries, too many for one answer: download its file from GET …/media-banks/${file.bank.id}/export/download?format=${input.format}`);
  }
  const parts: string[] = [];
  for await (const chunk of file.chunks) parts.push(chunk);
  return { format: input.format, entries: file.entries(), content: parts.join("") };
}
