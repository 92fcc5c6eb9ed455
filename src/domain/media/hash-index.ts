/**
 * In-memory matching of media against one project's banks of known harmful media (issue 43):
 * exact hashes (SHA-256, MD5) by lookup, PDQ hashes by a linear scan with early exit. Storage
 * loads the banks into an index per project and tells it of every change; the index holds no
 * more than a number per entry (`id`, the caller's to map back to a bank entry) and its hash.
 *
 * Why a scan: on the benchmark machine it answers a query against 1,000,000 hashes within the
 * 25 ms goal (docs/media.md has the figures), with 37 bytes an entry, so multi-index hashing (an
 * index per 16-bit slice, far more memory, slower to change) is not needed.
 */
import { PDQ_MATCH_DISTANCE, pdqWords } from "./pdq.ts";

export interface PdqMatch {
  id: number;
  distance: number;
}

/** The largest per-entry distance: 255 bits of 256 (a threshold must still exclude something). */
export const MAX_PDQ_DISTANCE = 255;

/**
 * PDQ hashes packed as eight 32-bit words each, with a per-entry distance (an entry matches a
 * query at that Hamming distance or less: a bank's setting, given when the entry is added). Ids
 * are the caller's: an id added twice is two entries, and `remove` removes every entry of it.
 */
export class PdqIndex {
  private words: Uint32Array;
  private ids: Uint32Array;
  private limits: Uint8Array;
  private count = 0;

  constructor(capacity = 1024) {
    const c = Math.max(16, Math.ceil(capacity));
    this.words = new Uint32Array(c * 8);
    this.ids = new Uint32Array(c);
    this.limits = new Uint8Array(c);
  }

  get size(): number {
    return this.count;
  }

  /** Bytes held by the index's arrays (their capacity, not only the entries in use). */
  get bytes(): number {
    return this.words.byteLength + this.ids.byteLength + this.limits.byteLength;
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
   * one pass, not one per entry); the order of the others is kept. Returns how many went.
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
    return removed;
  }

  /**
   * Every entry within its distance of `hash`, nearest first (then by id). The scan counts the
   * first 96 bits' distance and leaves an entry there when it already exceeds the entry's: an
   * unrelated hash differs in about 48 of them, so at a distance of 31 (or 70) nearly every entry
   * is left after three words, with one branch the processor predicts (a test after every word
   * or two mispredicts often and measured slower; a full count, twice the work).
   * The caller checks the query's quality first (pdq.ts, PDQ_MIN_QUALITY).
   */
  match(hash: string): PdqMatch[] {
    const q = pdqWords(hash);
    const q0 = q[0]!, q1 = q[1]!, q2 = q[2]!, q3 = q[3]!, q4 = q[4]!, q5 = q[5]!, q6 = q[6]!, q7 = q[7]!;
    const words = this.words;
    const limits = this.limits;
    const found: PdqMatch[] = [];
    for (let i = 0, w = 0; i < this.count; i++, w += 8) {
      const limit = limits[i]!;
      let d = bits(words[w]! ^ q0) + bits(words[w + 1]! ^ q1) + bits(words[w + 2]! ^ q2);
      if (d > limit) continue;
      d += bits(words[w + 3]! ^ q3) + bits(words[w + 4]! ^ q4) + bits(words[w + 5]! ^ q5) + bits(words[w + 6]! ^ q6) + bits(words[w + 7]! ^ q7);
      if (d <= limit) found.push({ id: this.ids[i]!, distance: d });
    }
    return found.sort((a, b) => a.distance - b.distance || a.id - b.id);
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

/** The bits set in a 32-bit word (SWAR; pdq.ts's popcount32, repeated here to stay inlined in the scan). */
function bits(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

export type ExactHashKind = "sha256" | "md5";

const EXACT_HEX: Record<ExactHashKind, RegExp> = { sha256: /^[0-9a-f]{64}$/, md5: /^[0-9a-f]{32}$/ };

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
  const key = hex.toLowerCase();
  if (!EXACT_HEX[kind].test(key)) throw new RangeError(`not a ${kind} digest in hexadecimal: ${JSON.stringify(hex.slice(0, 80))}`);
  return key;
}
