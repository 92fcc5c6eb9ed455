/**
 * In-memory matching of media against one project's banks of known harmful media (issue 43):
 * exact hashes (SHA-256, MD5) by lookup, PDQ hashes by multi-index hashing (Norouzi, Punjani and
 * Fleet, "Fast exact search in Hamming space with multi-index hashing", 2014; what Meta's HMA
 * does through faiss's IndexBinaryMultiHash). Storage loads the banks into an index per project
 * and tells it of every change; the index holds a number per entry (`id`, the caller's to map
 * back to a bank entry), its hash and its distance, and buckets of positions built from them.
 *
 * Why not a scan: a scan with early exit costs about 7 ms of CPU at a million entries (0.35 ms at
 * 50,000), and hash-only media is matched inline at report intake, where a lookup must cost tens
 * of microseconds. docs/media.md ("Matching a project's banks", "Figures") has the figures.
 */
import { PDQ_MATCH_DISTANCE, pdqWords } from "./pdq.ts";
import { normalizeSignal } from "../views/media-bank.ts";

export interface PdqMatch {
  id: number;
  distance: number;
}

/** The largest per-entry distance: 255 bits of 256 (a threshold must still exclude something). */
export const MAX_PDQ_DISTANCE = 255;

/** The hash's 256 bits cut into 16 chunks of 16 (chunk c: word c >> 1, its low half for even c). */
const CHUNKS = 16;
const CHUNK_VALUES = 1 << 16;
/**
 * Entries are bucketed in tiers by their distance's probe radius, floor(distance / 16): 0-15,
 * 16-31 (the default, 31), 32-47; a tier is probed at its own entries' radius, so one bank at 40
 * does not make every lookup probe at 2. Above 47 the probes (11,000 and more a lookup) and the candidates
 * they bring cost more than scanning those entries: they are scanned.
 */
const TIER_MAX_DISTANCE = [15, 31, 47] as const;
/** Each distance's tier (-1: scanned). */
const TIER_OF_DISTANCE = Int8Array.from({ length: MAX_PDQ_DISTANCE + 1 }, (_, d) => TIER_MAX_DISTANCE.findIndex((max) => d <= max));
/** A tier is bucketed from this many entries (below, its 4 MB of bucket starts are not worth it: scanned). */
const MIN_TIER_ENTRIES = 2048;
/**
 * The buckets are filled this many entries a slice (bucketsInSlices): a pass over a million
 * entries took about 10 ms of the serving thread in one piece; a slice of this many, about 2.
 */
export const FILL_SLICE_ENTRIES = 1 << 17;
/** Entries added since the buckets were built are scanned; past this many the next lookup builds them again. */
const MAX_PENDING_ENTRIES = 2048;

/** Every 16-bit mask of 0, 1 then 2 bits: a chunk's probes within radius r are the first PROBES[r] of them. */
const FLIPS: Uint16Array = (() => {
  const masks = [0];
  for (let a = 0; a < 16; a++) masks.push(1 << a);
  for (let a = 0; a < 16; a++) for (let b = a + 1; b < 16; b++) masks.push((1 << a) | (1 << b));
  return Uint16Array.from(masks);
})();
const PROBES = [1, 17, 137] as const;

/**
 * One tier's buckets: for each chunk, the positions of the tier's entries grouped by that chunk's
 * value (a counting sort), `starts[c * 65537 + v]` to `starts[c * 65537 + v + 1]` indexing
 * `members[c * size ...]`.
 */
interface Tier {
  size: number;
  starts: Uint32Array;
  members: Uint32Array;
  /**
   * Each chunk's probe radius (-1: not probed). With the tier's largest distance L = 16r + a
   * (0 ≤ a < 16), an entry within L of the query has one of chunks 0..a within r bits of the
   * query's, or one of the others within r - 1 (were they all further, the distance would be at
   * least (a + 1)(r + 1) + (15 - a)r = L + 1): the pigeonhole principle, with the remainder
   * spent on the first chunks.
   */
  radius: Int8Array;
  /** The largest distance of the tier's entries. */
  largest: number;
}

/**
 * PDQ hashes packed as eight 32-bit words each, with a per-entry distance (an entry matches a
 * query at that Hamming distance or less: a bank's setting, given when the entry is added). Ids
 * are the caller's: an id added twice is two entries, and `remove` removes every entry of it.
 *
 * Lookups go through buckets built lazily, by the first lookup after the entries changed: per
 * tier of distances (TIER_MAX_DISTANCE), for each of the hash's 16 chunks, the entries' positions
 * by the chunk's value. A lookup probes each chunk's values within the tier's radius of the
 * query's (17 probes a chunk at the default distance), and counts the whole distance of each entry
 * found there against that entry's own. Entries beyond the tiers, of tiers too small to bucket,
 * and added since the buckets were built (up to MAX_PENDING_ENTRIES, or any number while
 * `deferBuckets` is set) are scanned.
 */
export class PdqIndex {
  private words: Uint32Array;
  private ids: Uint32Array;
  private limits: Uint8Array;
  private count = 0;
  /** Positions below this are in `tiers` or `scanned`; the rest, added since, are scanned. */
  private bucketed = 0;
  private tiers: Tier[] = [];
  /** Positions below `bucketed` that no tier holds: scanned by every lookup. */
  private scanned = new Uint32Array(0);
  /** Counts the removals (positions moved): buckets being built in slices across one are not kept. */
  private removals = 0;
  /** A lookup's candidates from one chunk's buckets (reused: grown as needed). */
  private candidates = new Uint32Array(1024);
  /**
   * @internal What the reads ahead of the last lookup read: meaningless, kept (not private, so
   * that the compiler does not call it unused) so that the engine cannot leave those reads out.
   */
  touched = 0;

  constructor(capacity = 1024) {
    const c = Math.max(16, Math.ceil(capacity));
    this.words = new Uint32Array(c * 8);
    this.ids = new Uint32Array(c);
    this.limits = new Uint8Array(c);
  }

  get size(): number {
    return this.count;
  }

  /**
   * While set, a lookup checks every entry added since the buckets were built one by one, however
   * many, instead of building the buckets at once first (past MAX_PENDING_ENTRIES). signal-index.ts
   * sets it while it adds a batch of entries to an index in use and builds the buckets in slices
   * after: a lookup that comes meanwhile (a media job holding the index) pays a scan of the batch
   * (about 1 ms for 100,000 entries) rather than holding its thread for a whole build (about 1 s at
   * a million entries).
   */
  deferBuckets = false;

  /** Entries added since the buckets were built: each lookup checks them one by one. */
  get pending(): number {
    return this.count - this.bucketed;
  }

  /** Bytes held by the index's arrays (their capacity, not only the entries in use), buckets included. */
  get bytes(): number {
    let n = this.words.byteLength + this.ids.byteLength + this.limits.byteLength + this.scanned.byteLength;
    for (const t of this.tiers) n += t.starts.byteLength + t.members.byteLength + t.radius.byteLength;
    return n;
  }

  /** Adds an entry: `id` a whole number from 0 to 2^32 - 1, `hash` 64 hex digits, `maxDistance` 0..255. */
  add(id: number, hash: string, maxDistance: number = PDQ_MATCH_DISTANCE): void {
    if (!Number.isInteger(id) || id < 0 || id > 0xffffffff) throw new RangeError(`id must be a whole number from 0 to 2^32 - 1: ${id}`);
    if (!Number.isInteger(maxDistance) || maxDistance < 0 || maxDistance > MAX_PDQ_DISTANCE) throw new RangeError(`maxDistance must be a whole number from 0 to ${MAX_PDQ_DISTANCE}: ${maxDistance}`);
    if (this.count === this.ids.length) this.grow();
    pdqWords(hash, this.words, this.count * 8);
    this.ids[this.count] = id;
    this.limits[this.count] = maxDistance;
    this.count++;
  }

  /**
   * Removes every entry of these ids in one pass over the index (a bank deleted at once costs
   * one pass, not one per entry); the order of the others is kept. Returns how many went. The
   * buckets are dropped when any went (positions moved): the next lookup builds them again.
   */
  remove(ids: Iterable<number> | number): number {
    const gone = typeof ids === "number" ? new Set([ids]) : new Set(ids);
    if (gone.size === 0) return 0;
    let kept = 0;
    for (let i = 0; i < this.count; i++) {
      if (gone.has(this.ids[i]!)) continue;
      if (kept !== i) {
        this.words.copyWithin(kept * 8, i * 8, i * 8 + 8);
        this.ids[kept] = this.ids[i]!;
        this.limits[kept] = this.limits[i]!;
      }
      kept++;
    }
    const removed = this.count - kept;
    this.count = kept;
    if (removed > 0) {
      this.removals++;
      this.bucketed = 0;
      this.tiers = [];
      this.scanned = new Uint32Array(0);
    }
    return removed;
  }

  /**
   * Every entry within its distance of `hash`, nearest first (then by id): the tiers' candidates,
   * then the scanned entries. The caller checks the query's quality first (pdq.ts,
   * PDQ_MIN_QUALITY).
   */
  match(hash: string): PdqMatch[] {
    const q = pdqWords(hash);
    if (!this.deferBuckets && this.count - this.bucketed > MAX_PENDING_ENTRIES) for (const _ of this.bucketSlices());
    const found: PdqMatch[] = [];
    for (const tier of this.tiers) this.probe(tier, q, found);
    const scanned = this.scanned;
    for (let k = 0; k < scanned.length; k++) this.check(scanned[k]!, q, found);
    for (let i = this.bucketed; i < this.count; i++) this.check(i, q, found);
    return found.sort((a, b) => a.distance - b.distance || a.id - b.id);
  }

  /**
   * The entry at position `i` when within its distance of `q`. The first 96 bits' distance
   * leaves an entry there when it already exceeds the entry's: an unrelated hash differs in about
   * 48 of them, so nearly every entry is left after three words, with one branch the processor
   * predicts (a test after every word or two mispredicts often and measured slower).
   */
  private check(i: number, q: Uint32Array, found: PdqMatch[]): void {
    const words = this.words;
    const w = i * 8;
    const limit = this.limits[i]!;
    let d = bits(words[w]! ^ q[0]!) + bits(words[w + 1]! ^ q[1]!) + bits(words[w + 2]! ^ q[2]!);
    if (d > limit) return;
    d += bits(words[w + 3]! ^ q[3]!) + bits(words[w + 4]! ^ q[4]!) + bits(words[w + 5]! ^ q[5]!) + bits(words[w + 6]! ^ q[6]!) + bits(words[w + 7]! ^ q[7]!);
    if (d <= limit) found.push({ id: this.ids[i]!, distance: d });
  }

  /**
   * The tier's entries within their distance of `q`, chunk by chunk: the positions in the
   * buckets of the chunk's probes are gathered, then each counted. At a million entries of
   * distance 31 a lookup meets about 4,000 candidates, each a read from a random place of 32 MB,
   * so memory latency is the cost: a first pass reads only the bucket starts it will need, and
   * one per chunk only each candidate's first word, loops small enough that the processor has
   * many reads in flight at once; the counting after reads from cache (measured: about half the
   * time of counting in one pass).
   *
   * An entry may sit in the buckets probed of several chunks: it is counted from the first of
   * them only (no chunk before it within its radius of the query's), which needs no set of those
   * seen, and the test runs only for entries within their distance, a handful a lookup.
   */
  private probe(tier: Tier, q: Uint32Array, found: PdqMatch[]): void {
    const { starts, members, radius, size, largest } = tier;
    const words = this.words;
    const q0 = q[0]!, q1 = q[1]!, q2 = q[2]!;
    let touched = 0;
    for (let c = 0; c < CHUNKS; c++) {
      const r = radius[c]!;
      const base = c * (CHUNK_VALUES + 1);
      const value = chunkOf(q, c);
      for (let k = 0, probes = r < 0 ? 0 : PROBES[r]!; k < probes; k++) touched ^= starts[base + (value ^ FLIPS[k]!)]!;
    }
    let candidates = this.candidates;
    for (let c = 0; c < CHUNKS; c++) {
      const r = radius[c]!;
      if (r < 0) continue;
      const base = c * (CHUNK_VALUES + 1);
      const value = chunkOf(q, c);
      const first = c * size;
      let n = 0;
      for (let k = 0, probes = PROBES[r]!; k < probes; k++) {
        const v = base + (value ^ FLIPS[k]!);
        const from = first + starts[v]!;
        const to = first + starts[v + 1]!;
        if (n + to - from > candidates.length) {
          const more = new Uint32Array(Math.max(2 * candidates.length, n + to - from));
          more.set(candidates.subarray(0, n));
          this.candidates = candidates = more;
        }
        for (let m = from; m < to; m++) candidates[n++] = members[m]!;
      }
      for (let j = 0; j < n; j++) touched ^= words[candidates[j]! * 8]!;
      // Nearly every candidate is left here, after 96 bits, by the tier's largest distance: no
      // read of its own distance (another random place) until it is likely a match.
      for (let j = 0; j < n; j++) {
        const w = candidates[j]! * 8;
        if (bits(words[w]! ^ q0) + bits(words[w + 1]! ^ q1) + bits(words[w + 2]! ^ q2) > largest) continue;
        const i = candidates[j]!;
        let d = 0;
        for (let k = 0; k < 8; k++) d += bits(words[w + k]! ^ q[k]!);
        if (d <= this.limits[i]! && !foundEarlier(words, w, q, radius, c)) found.push({ id: this.ids[i]!, distance: d });
      }
    }
    this.touched = touched; // kept, so that the reads above are not left out as unused
  }

  /**
   * Builds the buckets now, a slice of work at a time with `pause()` awaited between slices
   * (each a pass over at most FILL_SLICE_ENTRIES entries: about 2 ms), so that a thread
   * serving requests can build a large index without holding them up (signal-index.ts). A
   * lookup made meanwhile builds them itself at once, unless `deferBuckets` is set. Without
   * entries added since, nothing to do.
   */
  async bucketsInSlices(pause: () => Promise<void>): Promise<void> {
    if (this.count === this.bucketed) return;
    for (const _ of this.bucketSlices()) await pause();
  }

  /**
   * Sorts every entry into its tier's buckets, or into those scanned, yielding after each part of
   * a pass over the entries (FILL_SLICE_ENTRIES; bucketsInSlices; a lookup runs it through). Nothing is published before
   * the end, and nothing when entries were removed meanwhile (their positions moved): a lookup
   * between two slices sees the buckets built before, and the entries added since scanned.
   */
  private *bucketSlices(): Generator<void, void, void> {
    const count = this.count;
    const removals = this.removals;
    const limits = this.limits;
    const sizes = TIER_MAX_DISTANCE.map(() => 0);
    const largest = TIER_MAX_DISTANCE.map(() => 0);
    for (let i = 0; i < count; i++) {
      const limit = limits[i]!;
      const t = TIER_OF_DISTANCE[limit]!;
      if (t < 0) continue;
      sizes[t]!++;
      if (limit > largest[t]!) largest[t] = limit;
    }
    const tiers: Tier[] = [];
    /** Each tier's place in `tiers` (-1: not bucketed), then each distance's. */
    const tierAt = new Int8Array(TIER_MAX_DISTANCE.length).fill(-1);
    for (let t = 0; t < sizes.length; t++) {
      if (sizes[t]! < MIN_TIER_ENTRIES) continue;
      tierAt[t] = tiers.length;
      tiers.push({ size: sizes[t]!, starts: new Uint32Array(CHUNKS * (CHUNK_VALUES + 1)), members: new Uint32Array(CHUNKS * sizes[t]!), radius: radii(largest[t]!), largest: largest[t]! });
    }
    const placeOf = Int8Array.from(TIER_OF_DISTANCE, (t) => (t < 0 ? -1 : tierAt[t]!));
    let unbucketed = 0;
    for (let i = 0; i < count; i++) if (placeOf[limits[i]!]! < 0) unbucketed++;
    const scanned = new Uint32Array(unbucketed);
    const positions = tiers.map((t) => new Uint32Array(t.size));
    const filled = new Uint32Array(tiers.length);
    for (let i = 0, s = 0; i < count; i++) {
      const at = placeOf[limits[i]!]!;
      if (at < 0) scanned[s++] = i;
      else positions[at]![filled[at]!++] = i;
    }
    yield;
    for (let k = 0; k < tiers.length; k++) yield* this.fillBuckets(tiers[k]!, positions[k]!);
    if (this.removals !== removals || this.bucketed >= count) return; // positions moved since, or a lookup built them meanwhile
    this.tiers = tiers;
    this.scanned = scanned;
    this.bucketed = count;
  }

  /**
   * A counting sort of the tier's entries by each chunk: count each value (at v + 1), sum into
   * starts, place (which advances each value's start to the next one's: shifted back after). A
   * word's two chunks at a time, so that the writes of a pass fall in 8 MB of members and 512 KB
   * of starts (one pass over all chunks at once, writing over 64 MB, measured slower).
   */
  private *fillBuckets(tier: Tier, positions: Uint32Array): Generator<void, void, void> {
    const { starts, members, size } = tier;
    const words = this.words;
    for (let w = 0; w < 8; w++) {
      const lo = 2 * w * (CHUNK_VALUES + 1);
      const hi = lo + CHUNK_VALUES + 1;
      for (let from = 0; from < size; from += FILL_SLICE_ENTRIES) {
        for (let k = from, to = Math.min(size, from + FILL_SLICE_ENTRIES); k < to; k++) {
          const x = words[positions[k]! * 8 + w]!;
          starts[lo + (x & 0xffff) + 1]!++;
          starts[hi + (x >>> 16) + 1]!++;
        }
        yield;
      }
      for (let v = lo + 1, end = hi + CHUNK_VALUES + 1; v < end; v++) if (v !== hi) starts[v]! += starts[v - 1]!;
      const loMembers = 2 * w * size;
      const hiMembers = loMembers + size;
      for (let from = 0; from < size; from += FILL_SLICE_ENTRIES) {
        for (let k = from, to = Math.min(size, from + FILL_SLICE_ENTRIES); k < to; k++) {
          const i = positions[k]!;
          const x = words[i * 8 + w]!;
          members[loMembers + starts[lo + (x & 0xffff)]!++] = i;
          members[hiMembers + starts[hi + (x >>> 16)]!++] = i;
        }
        if (from + FILL_SLICE_ENTRIES < size) yield;
      }
      for (const base of [lo, hi]) {
        starts.copyWithin(base + 1, base, base + CHUNK_VALUES);
        starts[base] = 0;
      }
      yield;
    }
  }

  private grow(): void {
    const capacity = Math.ceil(this.ids.length * 1.5);
    const words = new Uint32Array(capacity * 8);
    words.set(this.words);
    const ids = new Uint32Array(capacity);
    ids.set(this.ids);
    const limits = new Uint8Array(capacity);
    limits.set(this.limits);
    this.words = words;
    this.ids = ids;
    this.limits = limits;
  }
}

/** Each chunk's probe radius for a tier whose largest distance is `largest` (Tier.radius). */
function radii(largest: number): Int8Array {
  const r = Math.floor(largest / CHUNKS);
  const spare = largest % CHUNKS;
  return Int8Array.from({ length: CHUNKS }, (_, c) => (c <= spare ? r : r - 1));
}

/** The query's chunk `c` (Tier). */
function chunkOf(q: Uint32Array, c: number): number {
  return (q[c >> 1]! >>> ((c & 1) << 4)) & 0xffff;
}

/** Whether a chunk before `c` of the entry at word `w` is within its radius of the query's. */
function foundEarlier(words: Uint32Array, w: number, q: Uint32Array, radius: Int8Array, c: number): boolean {
  for (let e = 0; e < c; e++) {
    const x = (words[w + (e >> 1)]! ^ q[e >> 1]!) >>> ((e & 1) << 4);
    if (bits(x & 0xffff) <= radius[e]!) return true;
  }
  return false;
}

/** The bits set in a 32-bit word (SWAR; pdq.ts's popcount32, repeated here to stay inlined in the scan). */
function bits(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

export type ExactHashKind = "sha256" | "md5";

/**
 * Exact hashes by lookup: one Map per kind from the lower-case hex digest to the ids holding it
 * (a digest may sit in several banks).
 */
export class ExactHashIndex {
  private readonly maps: Record<ExactHashKind, Map<string, number[]>> = { sha256: new Map(), md5: new Map() };

  get size(): number {
    let n = 0;
    for (const map of Object.values(this.maps)) for (const ids of map.values()) n += ids.length;
    return n;
  }

  add(kind: ExactHashKind, hex: string, id: number): void {
    const key = normalize(kind, hex);
    const ids = this.maps[kind].get(key);
    if (ids) ids.push(id);
    else this.maps[kind].set(key, [id]);
  }

  /** Removes the id from this digest; returns whether it was there. */
  remove(kind: ExactHashKind, hex: string, id: number): boolean {
    const key = normalize(kind, hex);
    const ids = this.maps[kind].get(key);
    const at = ids ? ids.indexOf(id) : -1;
    if (!ids || at < 0) return false;
    ids.splice(at, 1);
    if (ids.length === 0) this.maps[kind].delete(key);
    return true;
  }

  /** The ids holding this digest (none: an empty array). */
  match(kind: ExactHashKind, hex: string): number[] {
    return [...(this.maps[kind].get(normalize(kind, hex)) ?? [])];
  }
}

function normalize(kind: ExactHashKind, hex: string): string {
  const key = normalizeSignal(kind, hex);
  if (key === null) throw new RangeError(`not a ${kind} digest in hexadecimal: ${JSON.stringify(hex.slice(0, 80))}`);
  return key;
}
