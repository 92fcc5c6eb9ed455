/**
 * A project's banked signals in memory (issue 43, docs/media.md, "Matching"): the enabled banks'
 * entries not quarantined, exact digests by lookup and PDQ hashes in a multi-index
 * (src/domain/media/hash-index.ts), each PDQ entry with its bank's distance.
 *
 * Per project and per store, kept at the version of the project's banks it was built from (one
 * row counted up in the transaction of every change to a bank or an entry, on any instance).
 * Two readers:
 * - the media job (src/domain/banks/matching.ts) reads the version before every match and
 *   builds the index again when it moved: an entry added on one instance is matched on every
 *   other from the next media item;
 * - report intake (case-media.ts) matches the hashes a platform sent with a report at once, but
 *   only against an index already held at the current version (`heldIndex`): it never builds
 *   one (seconds at a million entries) while a report waits. Media that match nothing there are
 *   done; the others, and any when no current index is held, go to the media job.
 *
 * It lives here, under intake, because intake reads it and the banks' folder stands on intake.
 */
import { and, asc, eq, gt, inArray, isNull, lte, or, sql, type SQL } from "drizzle-orm";
import type { Store } from "../../db/store.ts";
import { statements } from "../../db/prepared.ts";
import { caseMedia, mediaBankEntries, mediaBanks, mediaBankVersions } from "../../db/schema.ts";
import type { DomainContext } from "../core/context.ts";
import { ExactHashIndex, PdqIndex } from "../media/hash-index.ts";
import { parseVpdq, VpdqIndex, type VpdqFrame } from "../media/vpdq.ts";
import { SIGNAL_TYPES, type SignalType } from "../views/media-bank.ts";
import { breathe } from "../plumbing/event-loop.ts";

export type BankRow = typeof mediaBanks.$inferSelect;

interface IndexedEntry {
  entryId: string;
  bankId: string;
  signalType: SignalType;
}

/** A UUID as row ids are (core/ids.ts): 32 hex digits in 8-4-4-4-12. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The index's entries by position (the ids its hash indexes answer), in typed arrays: each
 * entry's id as 16 bytes, its bank's place and its signal type. An object is made only for an
 * entry a media item matched (`at`): a bank of a million entries adds no million objects for
 * the garbage collector to walk on every full collection (docs/media.md, "Figures").
 */
export class EntryTable {
  private idBytes = new Uint8Array(16 * 64);
  private bankAt = new Uint32Array(64);
  private signalAt = new Uint8Array(64);
  /** Ids not in a UUID's form (written by hand, say), by position: kept as they are. */
  private readonly otherIds = new Map<number, string>();
  private readonly bankIds: string[] = [];
  private readonly bankPlace = new Map<string, number>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds an entry; answers its position. */
  add(entryId: string, bankId: string, signalType: SignalType): number {
    const at = this.count;
    if (at === this.bankAt.length) this.grow();
    if (UUID.test(entryId)) Buffer.from(entryId.replaceAll("-", ""), "hex").copy(this.idBytes, at * 16);
    else this.otherIds.set(at, entryId);
    let bank = this.bankPlace.get(bankId);
    if (bank === undefined) {
      bank = this.bankIds.push(bankId) - 1;
      this.bankPlace.set(bankId, bank);
    }
    this.bankAt[at] = bank;
    this.signalAt[at] = SIGNAL_TYPES.indexOf(signalType);
    this.count++;
    return at;
  }

  at(position: number): IndexedEntry {
    if (position >= this.count) throw new RangeError(`no entry at ${position}`);
    return { entryId: this.entryIdAt(position), bankId: this.bankIds[this.bankAt[position]!]!, signalType: SIGNAL_TYPES[this.signalAt[position]!]! };
  }

  private entryIdAt(position: number): string {
    const other = this.otherIds.get(position);
    if (other !== undefined) return other;
    const hex = Buffer.from(this.idBytes.buffer, this.idBytes.byteOffset + position * 16, 16).toString("hex");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  private grow(): void {
    const capacity = this.bankAt.length * 2;
    const idBytes = new Uint8Array(16 * capacity);
    idBytes.set(this.idBytes);
    const bankAt = new Uint32Array(capacity);
    bankAt.set(this.bankAt);
    const signalAt = new Uint8Array(capacity);
    signalAt.set(this.signalAt);
    this.idBytes = idBytes;
    this.bankAt = bankAt;
    this.signalAt = signalAt;
  }
}

export interface ProjectIndex {
  version: number;
  banks: Map<string, BankRow>;
  /** Index ids (positions) to entries. */
  entries: EntryTable;
  exact: ExactHashIndex;
  pdq: PdqIndex;
  /** Banked videos (vpdq entries), each with its bank's PDQ distance and quality floor as vPDQ's frame thresholds. */
  vpdq: VpdqIndex;
}

/** Per store (a process may open several: tests, a backup), per project: the index and the version it was built at. */
const indexes = new WeakMap<Store, Map<string, Promise<ProjectIndex>>>();
/** The same indexes once built (a promise cannot be looked into without waiting): what intake reads. */
const built = new WeakMap<Store, Map<string, ProjectIndex>>();

/** A project's banks' version (media_bank_versions; 0: never had a bank) and the last version a change other than entries added moved it to. */
export interface BankVersion {
  version: number;
  reshaped: number;
}

/** Read on every report with media: kept prepared (src/db/prepared.ts). */
const versionStatements = statements((db) => ({
  version: db
    .select({ version: mediaBankVersions.version, reshaped: mediaBankVersions.reshapedVersion })
    .from(mediaBankVersions)
    .where(eq(mediaBankVersions.projectId, sql.placeholder("projectId")))
    .prepare(),
}));

/**
 * The banks' version as this process last read it, per database and project: kept only where this
 * process is the database's sole writer (SQLite, Store.soleWriter; report-time.ts remembers times
 * likewise). There every change to a bank passes through `bankVersionMoving`, so a report with
 * media need not read the version (a statement: about 15 µs of the ~110 µs a media item costs
 * intake). Elsewhere (PostgreSQL) other instances change banks too: read every time.
 */
const versionsRead = new WeakMap<Store["writer"], Map<string, BankVersion>>();
/** Counts the changes begun and committed per writing connection: a read that one overlapped is not kept. */
const changesSeen = new WeakMap<Store["writer"], { n: number }>();

// Both by the store's writing connection, as report-time.ts keeps its times: every handle on
// the one SQLite database of this process shares them.
const changesOf = (store: Store): { n: number } => {
  let seen = changesSeen.get(store.writer);
  if (!seen) changesSeen.set(store.writer, (seen = { n: 0 }));
  return seen;
};

/**
 * A change to the project's banks in the caller's transaction (banks.ts, bumpBankVersion): the
 * version read is forgotten now and again once the transaction commits, so that no read made
 * before the commit is kept after it.
 */
export function bankVersionMoving(ctx: Pick<DomainContext, "store">, projectId: string): void {
  if (!ctx.store.soleWriter) return; // nothing remembered (versionOf)
  const forget = () => {
    changesOf(ctx.store).n++;
    versionsRead.get(ctx.store.writer)?.delete(projectId);
  };
  forget();
  ctx.store.afterCommit(forget);
}

async function readVersion(ctx: Pick<DomainContext, "db">, projectId: string): Promise<BankVersion> {
  const [row] = await versionStatements(ctx.db).version.execute({ projectId });
  return row ?? { version: 0, reshaped: 0 };
}

async function versionOf(ctx: Pick<DomainContext, "db" | "store">, projectId: string): Promise<BankVersion> {
  if (!ctx.store.soleWriter) return readVersion(ctx, projectId);
  const known = versionsRead.get(ctx.store.writer)?.get(projectId);
  if (known !== undefined) return known;
  const before = changesOf(ctx.store).n;
  const version = await readVersion(ctx, projectId);
  if (changesOf(ctx.store).n === before) {
    let read = versionsRead.get(ctx.store.writer);
    if (!read) versionsRead.set(ctx.store.writer, (read = new Map()));
    read.set(projectId, version);
  }
  return version;
}

/**
 * The project's index at its banks' current version: the one held when the version has not
 * moved; the one held with the entries added since when only entries were added since
 * (addedSince: a banking, an entry added, an import); else built again. One build at a
 * time per project: a caller that finds one under way waits for it (a list being imported in
 * parts moves the version many times; each build of a million entries holds about 100 MB until
 * it is done).
 */
export async function projectIndex(ctx: Pick<DomainContext, "db" | "store">, projectId: string): Promise<ProjectIndex> {
  let perStore = indexes.get(ctx.store);
  if (!perStore) indexes.set(ctx.store, (perStore = new Map()));
  let current: BankVersion;
  let base: ProjectIndex | null = null;
  for (;;) {
    current = await versionOf(ctx, projectId);
    const held = perStore.get(projectId);
    if (!held) break;
    const index = await held.catch(() => null);
    if (index && index.version >= current.version) return index;
    // No other caller started a build meanwhile: this one does.
    if (perStore.get(projectId) === held) {
      base = index;
      break;
    }
  }
  const building = base && base.version >= current.reshaped ? addedSince(ctx, projectId, base, current.version) : buildIndex(ctx, projectId, current.version);
  perStore.set(projectId, building);
  building.then(
    (index) => {
      let done = built.get(ctx.store);
      if (!done) built.set(ctx.store, (done = new Map()));
      const current = done.get(projectId);
      if (!current || current.version <= index.version) done.set(projectId, index);
    },
    () => {
      if (perStore.get(projectId) === building) perStore.delete(projectId);
    },
  );
  return building;
}

/** A project that never had a bank (its version row does not exist): nothing to match. */
const NO_BANKS: ProjectIndex = { version: 0, banks: new Map(), entries: new EntryTable(), exact: new ExactHashIndex(), pdq: new PdqIndex(16), vpdq: new VpdqIndex() };

/**
 * The project's index if one is held at its banks' current version, else null (none built yet
 * on this instance, or the banks changed since): never builds one. A project that never had a
 * bank matches against an empty index.
 */
export async function heldIndex(ctx: Pick<DomainContext, "db" | "store">, projectId: string): Promise<ProjectIndex | null> {
  const { version } = await versionOf(ctx, projectId);
  if (version === 0) return NO_BANKS;
  const index = built.get(ctx.store)?.get(projectId);
  return index && index.version >= version ? index : null;
}

/**
 * Entries read a page at a time when an index is built or a bank's file written (banks.ts), per
 * bank and signal type, in the order of their unique index, the event loop given back after each
 * page. A page is one slice of this thread's work: reading an entry and indexing it, or writing it
 * out, costs about 2 to 6 µs at a million, so pages of 1,000 held every request for several ms,
 * and a report waits behind one at each of its steps: reports filed during a build of a million
 * entries waited 11 to 12 ms at the median, during a download of its file 22 ms
 * (scripts/bench/index-rebuild.ts; docs/media.md, "Banks" and "A build does not hold requests
 * up"). A vpdq entry carries a whole video's frames (up to about 600 KB): two a page.
 */
export const ENTRY_PAGE: Record<SignalType, number> = { sha256: 200, md5: 200, pdq: 200, vpdq: 2 };

/**
 * Lets the requests waiting run between two slices of a build: a build of a million entries is
 * about 2 s of this thread's CPU, which in one piece held every request up as long
 * (docs/media.md, "Matching a project's banks"); in slices of a page (ENTRY_PAGE) or a part of a
 * pass over the PDQ entries (about 2 ms each) they go on meanwhile.
 */
const pause = breathe;

/** What an index holds of an entry (the columns buildIndex reads). */
type EntryRow = Pick<typeof mediaBankEntries.$inferSelect, "id" | "bankId" | "signalType" | "value" | "frames">;

type EntryColumns = typeof mediaBankEntries.$inferSelect;

/**
 * A bank's entries a page at a time (ENTRY_PAGE; `pageSize` in tests), the columns asked for, by
 * signal type then value: a keyset page a statement on the bank's unique index, so that no
 * statement reads a whole list of millions, and the caller gives the event loop back between
 * pages. `where` narrows them (an index build leaves out the quarantined). Pages are never empty.
 * An index build (buildIndex) and a bank's file (banks.ts, openBankFile) read them so.
 */
export async function* entryPages<T extends Partial<EntryColumns> & { value: string }>(
  ctx: Pick<DomainContext, "db">,
  input: { bankId: string; columns: { [K in keyof T]: (typeof mediaBankEntries)[K & keyof EntryColumns] }; where?: SQL; pageSize?: number },
): AsyncGenerator<T[]> {
  const e = mediaBankEntries;
  for (const signalType of SIGNAL_TYPES) {
    const limit = input.pageSize ?? ENTRY_PAGE[signalType];
    for (let after: string | null = null; ; ) {
      const rows = (await ctx.db
        .select(input.columns as never)
        .from(e)
        .where(and(eq(e.bankId, input.bankId), eq(e.signalType, signalType), input.where, after === null ? undefined : gt(e.value, after)))
        .orderBy(asc(e.value))
        .limit(limit)) as T[];
      if (rows.length) yield rows;
      if (rows.length < limit) break;
      after = rows[rows.length - 1]!.value;
    }
  }
}

/**
 * Builds the project's index from its enabled banks' entries not quarantined, a page at a time
 * (ENTRY_PAGE, pausing between pages and between the PDQ buckets' passes). The pages need no
 * snapshot: every change to a bank moves the version (read before the build), so an entry
 * changed while the pages were read makes the next reader build again. `pageSize` overrides
 * ENTRY_PAGE (tests: many pages from a few entries).
 */
export async function buildIndex(ctx: Pick<DomainContext, "db">, projectId: string, version: number, pageSize?: number): Promise<ProjectIndex> {
  // Not a deleted bank (banks/banks.ts, liveBank: a folder this one does not import).
  const banks = await ctx.db.select().from(mediaBanks).where(and(eq(mediaBanks.projectId, projectId), eq(mediaBanks.enabled, 1), isNull(mediaBanks.deletedAt)));
  const index = emptyIndex(version, banks);
  const e = mediaBankEntries;
  const columns = { id: e.id, bankId: e.bankId, signalType: e.signalType, value: e.value, frames: e.frames };
  for (const bank of banks) {
    for await (const rows of entryPages<EntryRow>(ctx, { bankId: bank.id, columns, where: isNull(e.quarantinedAt), pageSize })) {
      addEntries(index, rows);
      await pause();
    }
  }
  await index.pdq.bucketsInSlices(pause);
  return index;
}

/** PDQ entries left to each lookup's one-by-one check after entries are added (PdqIndex.pending): about 2 µs of a lookup. */
const PENDING_KEPT = 512;

/** Entries added since a held index's version read a page at a time, without a banked video's frames (withFrames reads those). */
const ADDED_PAGE = ENTRY_PAGE.sha256;

/**
 * The held index with the entries added since its version (up to `version`: every change since
 * added entries only, BankVersion.reshaped), changed in place: a banking, an entry added or a list
 * imported in parts no longer builds the whole index again (about 2 s of this thread and a read of
 * every entry at a million), however many were added: reading them costs no more than reading
 * them in a build. A lookup meanwhile (a media job holding the index; intake takes it only at its
 * new version) checks the PDQ entries added one by one (PdqIndex.deferBuckets) until the buckets
 * are built again, in slices, at the end. The version is moved last, so that intake (heldIndex)
 * takes the index only once it holds them; a failure leaves it unusable (version -1), and the
 * next caller builds it again.
 */
async function addedSince(ctx: Pick<DomainContext, "db">, projectId: string, index: ProjectIndex, version: number): Promise<ProjectIndex> {
  const e = mediaBankEntries;
  const since = and(eq(e.projectId, projectId), gt(e.addedVersion, index.version), lte(e.addedVersion, version), isNull(e.quarantinedAt));
  index.pdq.deferBuckets = true;
  try {
    let after: { addedVersion: number; id: string } | null = null;
    for (;;) {
      const rows: (Omit<EntryRow, "frames"> & { addedVersion: number | null })[] = await ctx.db
        .select({ id: e.id, bankId: e.bankId, signalType: e.signalType, value: e.value, addedVersion: e.addedVersion })
        .from(e)
        .where(and(since, after === null ? undefined : or(gt(e.addedVersion, after.addedVersion), and(eq(e.addedVersion, after.addedVersion), gt(e.id, after.id)))))
        .orderBy(asc(e.addedVersion), asc(e.id))
        .limit(ADDED_PAGE);
      addEntries(index, await withFrames(ctx, rows));
      if (rows.length < ADDED_PAGE) break;
      const last = rows[rows.length - 1]!;
      after = { addedVersion: last.addedVersion!, id: last.id };
      await pause();
    }
    // Entries checked one by one by every lookup (intake's included): past a few hundred, the
    // buckets are built again (in slices) before the index is handed on.
    if (index.pdq.pending > PENDING_KEPT) await index.pdq.bucketsInSlices(pause);
  } catch (err) {
    index.version = -1;
    throw err;
  } finally {
    index.pdq.deferBuckets = false;
  }
  index.version = version;
  return index;
}

/** A page of entries with their frames: a banked video's (up to about 600 KB each) read ENTRY_PAGE.vpdq at a time. */
async function withFrames(ctx: Pick<DomainContext, "db">, rows: readonly Omit<EntryRow, "frames">[]): Promise<EntryRow[]> {
  const videos = rows.filter((r) => r.signalType === "vpdq").map((r) => r.id);
  const frames = new Map<string, string | null>();
  for (let i = 0; i < videos.length; i += ENTRY_PAGE.vpdq) {
    if (i > 0) await pause();
    const page = await ctx.db
      .select({ id: mediaBankEntries.id, frames: mediaBankEntries.frames })
      .from(mediaBankEntries)
      .where(inArray(mediaBankEntries.id, videos.slice(i, i + ENTRY_PAGE.vpdq)));
    for (const f of page) frames.set(f.id, f.frames);
  }
  return rows.map((r) => ({ ...r, frames: frames.get(r.id) ?? null }));
}

function emptyIndex(version: number, banks: readonly BankRow[]): ProjectIndex {
  return { version, banks: new Map(banks.map((b) => [b.id, b])), entries: new EntryTable(), exact: new ExactHashIndex(), pdq: new PdqIndex(1024), vpdq: new VpdqIndex() };
}

/** Adds entries of the index's banks to it (those of other banks are left out). */
function addEntries(index: ProjectIndex, rows: readonly EntryRow[]): void {
  for (const r of rows) {
    const bank = index.banks.get(r.bankId);
    if (!bank) continue;
    const id = index.entries.add(r.id, r.bankId, r.signalType);
    if (r.signalType === "pdq") index.pdq.add(id, r.value, Math.min(255, bank.pdqDistance));
    else if (r.signalType === "vpdq") {
      // Stored by banks.ts's vpdqSignal, so readable; one that is not (written by hand) matches nothing rather than stop the index.
      const frames = r.frames === null ? null : framesOf(r.frames);
      if (frames) index.vpdq.add(id, frames, { distance: bank.pdqDistance, qualityFloor: bank.qualityFloor });
    } else index.exact.add(r.signalType, r.value, id);
  }
}

/**
 * An index of entries of the given banks (those of other banks are left out): a project's whole
 * index, or the few entries of one addition that the past media check looks for
 * (src/domain/banks/past-check.ts). Pure of storage.
 */
export function indexOf(version: number, banks: readonly BankRow[], rows: readonly EntryRow[]): ProjectIndex {
  const index = emptyIndex(version, banks);
  addEntries(index, rows);
  return index;
}

function framesOf(text: string): VpdqFrame[] | null {
  try {
    return parseVpdq(text);
  } catch {
    return null;
  }
}

/** One entry a media item matched. */
export interface Hit {
  entryId: string;
  bank: BankRow;
  signalType: SignalType;
  /** PDQ: the Hamming distance; vPDQ: the smallest between a matched pair of frames; exact digests: null. */
  distance: number | null;
  /** PDQ: the quality of the media's hash (a video's: of its nearest frame); vPDQ and exact digests: null. */
  quality: number | null;
}

/**
 * The entries a media item's hashes match in the index: exact digests by lookup, PDQ within the
 * entry's bank's distance when the media's quality reaches the bank's floor; a video's frames
 * (vPDQ) each against the PDQ entries likewise, a banked picture found in any frame (the nearest
 * frame's distance and quality kept); and a video's frames against the banked videos (vpdq
 * entries) by vPDQ's rule (vpdq.ts: at least 80 % of the video's good frames within the bank's
 * distance of the banked video's): a copy re-encoded, resized or cut from a banked video. Its
 * frames are read only when the index holds PDQ or vpdq entries (intake's hash-only media have
 * none: nothing more to do there). Pure of storage.
 */
export function hitsOf(index: ProjectIndex, media: Pick<typeof caseMedia.$inferSelect, "sha256" | "md5" | "pdq" | "pdqQuality" | "vpdq">): Hit[] {
  const hits = new Map<string, Hit>();
  const add = (id: number, distance: number | null, quality: number | null) => {
    const e = index.entries.at(id);
    const bank = index.banks.get(e.bankId)!;
    if (e.signalType === "pdq" && (quality ?? 0) < bank.qualityFloor) return;
    const held = hits.get(e.entryId);
    if (!held || (distance !== null && held.distance !== null && distance < held.distance)) hits.set(e.entryId, { entryId: e.entryId, bank, signalType: e.signalType, distance, quality });
  };
  if (media.sha256) for (const id of index.exact.match("sha256", media.sha256)) add(id, null, null);
  if (media.md5) for (const id of index.exact.match("md5", media.md5)) add(id, null, null);
  if (media.pdq) for (const m of index.pdq.match(media.pdq)) add(m.id, m.distance, media.pdqQuality);
  if (media.vpdq && (index.pdq.size > 0 || index.vpdq.size > 0)) {
    const frames = parseVpdq(media.vpdq);
    if (index.pdq.size > 0) {
      const seen = new Set<string>();
      for (const frame of frames) {
        if (seen.has(frame.hash)) continue;
        seen.add(frame.hash);
        for (const m of index.pdq.match(frame.hash)) add(m.id, m.distance, frame.quality);
      }
    }
    if (index.vpdq.size > 0) for (const m of index.vpdq.match(frames)) add(m.id, m.distance, null);
  }
  return [...hits.values()];
}
