/**
 * The in-memory matcher of a project's banks (src/domain/media/hash-index.ts): exact digests by
 * lookup, PDQ within each entry's distance, removal (one id, many at once), growth, and the
 * scan's early exit checked against a brute-force count of every bit on random hashes with
 * planted near ones. Pure: the same on either engine, no server or database.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ExactHashIndex, FILL_SLICE_ENTRIES, PdqIndex, type PdqMatch } from "../../src/domain/media/hash-index.ts";
import { EntryTable } from "../../src/domain/intake/signal-index.ts";
import { hexOfWords, PDQ_MATCH_DISTANCE, pdqWords, popcount32 } from "../../src/domain/media/pdq.ts";
import { seededPdq } from "../helpers/pdq-hashes.ts";

const { nextWord, randomHash, flip } = seededPdq(2024);

describe("exact digests (pure: the same on either engine)", () => {
  const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
  const md5 = "098f6bcd4621d373cade4e832627b4f6";

  test("found by lookup, in any case; a digest in two banks gives both ids; kinds are apart", () => {
    const index = new ExactHashIndex();
    index.add("sha256", sha, 1);
    index.add("sha256", sha.toUpperCase(), 2);
    index.add("md5", md5, 3);
    expect(index.match("sha256", sha)).toEqual([1, 2]);
    expect(index.match("md5", md5.toUpperCase())).toEqual([3]);
    expect(index.match("sha256", "0".repeat(64))).toEqual([]);
    expect(index.match("md5", sha.slice(0, 32))).toEqual([]);
    expect(index.size).toBe(3);
  });

  test("removal takes one id from one digest", () => {
    const index = new ExactHashIndex();
    index.add("sha256", sha, 1);
    index.add("sha256", sha, 2);
    expect(index.remove("sha256", sha, 1)).toBe(true);
    expect(index.remove("sha256", sha, 1)).toBe(false);
    expect(index.match("sha256", sha)).toEqual([2]);
    expect(index.remove("sha256", sha, 2)).toBe(true);
    expect(index.match("sha256", sha)).toEqual([]);
    expect(index.size).toBe(0);
  });

  test("many digests, some in several banks, some in upper case, some removed: every lookup answers what a reference Map of the same adds and removals does, in the order added", () => {
    // A seeded generator, so that a failure is the same on every run.
    let x = 0x2545f491;
    const next = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
    const hexOf = (words: number) => Array.from({ length: words }, () => next().toString(16).padStart(8, "0")).join("");
    const index = new ExactHashIndex();
    const reference = new Map<string, number[]>();
    const digests: [("sha256" | "md5"), string][] = [];
    for (let id = 0; id < 20_000; id++) {
      // One digest in five again (a digest in several banks), some in upper case.
      const again = id % 5 === 4 && digests.length > 0;
      const [kind, hex] = again ? digests[next() % digests.length]! : ([id % 2 ? "md5" : "sha256", ""] as const);
      const value = again ? hex : hexOf(kind === "md5" ? 4 : 8);
      if (!again) digests.push([kind, value]);
      index.add(kind, id % 7 === 0 ? value.toUpperCase() : value, id);
      const key = `${kind}:${value}`;
      reference.set(key, [...(reference.get(key) ?? []), id]);
    }
    // A third of the digests lose their first id.
    for (const [kind, hex] of digests.filter((_, k) => k % 3 === 0)) {
      const key = `${kind}:${hex}`;
      const [first, ...rest] = reference.get(key)!;
      expect(index.remove(kind, hex, first!)).toBe(true);
      expect(index.remove(kind, hex, first!)).toBe(false);
      reference.set(key, rest);
    }
    // Added after the removals.
    for (let id = 20_000; id < 30_000; id++) {
      const hex = hexOf(8);
      digests.push(["sha256", hex]);
      index.add("sha256", hex, id);
      reference.set(`sha256:${hex}`, [id]);
    }
    for (const [kind, hex] of digests) expect(index.match(kind, hex)).toEqual(reference.get(`${kind}:${hex}`)!);
    expect(index.match("sha256", hexOf(8))).toEqual([]);
    expect(index.size).toBe([...reference.values()].reduce((n, ids) => n + ids.length, 0));
  });

  test("a malformed digest is refused", () => {
    const index = new ExactHashIndex();
    expect(() => index.add("md5", sha, 1)).toThrow(RangeError);
    expect(() => index.match("sha256", "xyz")).toThrow(RangeError);
  });
});

describe("PDQ hashes (pure: the same on either engine)", () => {
  test(`a hash matches within the entry's distance (${PDQ_MATCH_DISTANCE} by default), not beyond; nearest first`, () => {
    const bank = randomHash();
    const index = new PdqIndex();
    index.add(7, bank);
    index.add(8, bank, 10);
    expect(index.match(bank)).toEqual([
      { id: 7, distance: 0 },
      { id: 8, distance: 0 },
    ]);
    const at10 = flip(bank, 10);
    expect(index.match(at10)).toEqual([
      { id: 7, distance: 10 },
      { id: 8, distance: 10 },
    ]);
    expect(index.match(flip(bank, 11))).toEqual([{ id: 7, distance: 11 }]);
    expect(index.match(flip(bank, 31))).toEqual([{ id: 7, distance: 31 }]);
    expect(index.match(flip(bank, 32))).toEqual([]);
    const other = flip(bank, 5);
    index.add(9, other);
    expect(index.match(other).map((m) => m.id)).toEqual([9, 7, 8]);
  });

  test("removal: one id, every entry of it, many ids in one pass; the rest keep matching", () => {
    const index = new PdqIndex(16);
    const hashes = Array.from({ length: 50 }, randomHash);
    hashes.forEach((h, i) => index.add(i, h));
    index.add(3, hashes[4]!); // id 3 twice
    expect(index.size).toBe(51);
    expect(index.remove(3)).toBe(2);
    expect(index.remove(3)).toBe(0);
    expect(index.remove([10, 11, 12, 999])).toBe(3);
    expect(index.size).toBe(46);
    for (const [i, h] of hashes.entries()) {
      const ids = index.match(h).map((m) => m.id);
      expect({ i, ids }).toEqual({ i, ids: [3, 10, 11, 12].includes(i) ? [] : [i] });
    }
  });

  test("it grows past its first capacity and keeps every entry", () => {
    const index = new PdqIndex(16);
    const hashes = Array.from({ length: 1000 }, randomHash);
    hashes.forEach((h, i) => index.add(i, h));
    expect(index.size).toBe(1000);
    expect(index.bytes).toBeGreaterThanOrEqual(1000 * 37);
    for (const [i, h] of hashes.entries()) expect(index.match(h)[0]).toEqual({ id: i, distance: 0 });
  });

  test("the early exit finds exactly what a brute-force count of every bit finds", () => {
    const index = new PdqIndex();
    const entries: { id: number; hash: string; words: Uint32Array; limit: number }[] = [];
    const limits = [0, 8, 31, 45, 70, 96, 128, 200, 255];
    for (let id = 0; id < 4000; id++) {
      const hash = randomHash();
      const limit = limits[id % limits.length]!;
      entries.push({ id, hash, words: pdqWords(hash), limit });
      index.add(id, hash, limit);
    }
    /** Every bit counted, no exit. */
    const distance = (a: Uint32Array, b: Uint32Array) => {
      let d = 0;
      for (let w = 0; w < 8; w++) d += popcount32(a[w]! ^ b[w]!);
      return d;
    };
    // Queries: random ones, and ones planted at every distance from 0 to 100 of some entries,
    // so that matches fall just inside and just outside each limit, in every word.
    const queries = Array.from({ length: 40 }, randomHash);
    for (let d = 0; d <= 100; d++) queries.push(flip(entries[(d * 37) % entries.length]!.hash, d));
    let matched = 0;
    for (const q of queries) {
      const words = pdqWords(q);
      const expected: PdqMatch[] = entries
        .map((e) => ({ id: e.id, distance: distance(words, e.words), limit: e.limit }))
        .filter((e) => e.distance <= e.limit)
        .map(({ id, distance }) => ({ id, distance }))
        .sort((a, b) => a.distance - b.distance || a.id - b.id);
      expect(index.match(q)).toEqual(expected);
      matched += expected.length;
    }
    // Entries at distance 200 and 255 match most random queries; planted ones match at their distance.
    expect(matched).toBeGreaterThan(queries.length * 400);
  });

  test("bad ids, distances and hashes are refused", () => {
    const index = new PdqIndex();
    expect(() => index.add(-1, randomHash())).toThrow(RangeError);
    expect(() => index.add(2 ** 32, randomHash())).toThrow(RangeError);
    expect(() => index.add(1.5, randomHash())).toThrow(RangeError);
    expect(() => index.add(1, randomHash(), 256)).toThrow(RangeError);
    expect(() => index.add(1, "0".repeat(63))).toThrow(RangeError);
    expect(() => index.match("z".repeat(64))).toThrow(RangeError);
    expect(index.size).toBe(0);
  });
});

describe("multi-index hashing answers exactly what a scan answers (pure: the same on either engine)", () => {
  interface Entry {
    id: number;
    hash: string;
    words: Uint32Array;
    limit: number;
  }
  const entry = (id: number, hash: string, limit: number): Entry => ({ id, hash, words: pdqWords(hash), limit });
  /** The reference: every entry's whole distance counted, each against its own distance, sorted as the index sorts. */
  function scan(entries: Entry[], query: string): PdqMatch[] {
    const q = pdqWords(query);
    const q0 = q[0]!, q1 = q[1]!, q2 = q[2]!, q3 = q[3]!, q4 = q[4]!, q5 = q[5]!, q6 = q[6]!, q7 = q[7]!;
    const found: PdqMatch[] = [];
    for (const e of entries) {
      const w = e.words;
      const d =
        popcount32(q0 ^ w[0]!) + popcount32(q1 ^ w[1]!) + popcount32(q2 ^ w[2]!) + popcount32(q3 ^ w[3]!) + popcount32(q4 ^ w[4]!) + popcount32(q5 ^ w[5]!) + popcount32(q6 ^ w[6]!) + popcount32(q7 ^ w[7]!);
      if (d <= e.limit) found.push({ id: e.id, distance: d });
    }
    return found.sort((a, b) => a.distance - b.distance || a.id - b.id);
  }
  /** The index's answer against the scan's: what is missing, what is extra, then the order. */
  function expectSameAsScan(index: PdqIndex, entries: Entry[], query: string, label: string): number {
    const key = (m: PdqMatch) => `${m.id}@${m.distance}`;
    const got = index.match(query).map(key);
    const want = scan(entries, query).map(key);
    const gotKeys = new Set(got);
    const wantKeys = new Set(want);
    const missing = want.filter((k) => !gotKeys.has(k));
    const extra = got.filter((k) => !wantKeys.has(k));
    expect({ label, missing, extra }).toEqual({ label, missing: [], extra: [] });
    expect(got.join(" ")).toBe(want.join(" "));
    return want.length;
  }
  /** `hash` with `perChunk[c]` bits flipped in each 16-bit chunk c (chunk c: bits 16c to 16c + 15, as pdqWords numbers them). */
  function flipChunks(hash: string, perChunk: number[]): string {
    const words = pdqWords(hash);
    perChunk.forEach((n, c) => {
      const positions = new Set<number>();
      while (positions.size < n) positions.add(nextWord() % 16);
      for (const p of positions) words[c >> 1]! ^= 1 << ((c & 1) * 16 + p);
    });
    for (let w = 0; w < 8; w++) words[w] = words[w]! >>> 0;
    return hexOfWords(words);
  }
  /**
   * The hardest query within `limit` of an entry for multi-index hashing over 16 chunks: chunk
   * `only` differs in r bits and every other chunk in one more than the pigeonhole allows it to
   * be found through (r + 1 for chunks up to limit mod 16, r after), so that the entry, exactly at
   * `limit`, can only be found through chunk `only`'s probes.
   */
  function tightest(hash: string, limit: number, only: number): { query: string; distance: number } {
    const r = Math.floor(limit / 16);
    const spare = limit % 16;
    const perChunk = Array.from({ length: 16 }, (_, c) => (c <= spare ? r : r - 1) + (c === only ? 0 : 1));
    if (perChunk[only]! < 0) return { query: flipChunks(hash, perChunk.map((n) => Math.max(0, n))), distance: -1 };
    return { query: flipChunks(hash, perChunk), distance: perChunk.reduce((a, b) => a + b, 0) };
  }

  /** A quarter of the entries in each tier (0-15, 16-31, 32-47), a quarter scanned (64 and 128, this one rarer: it matches half of all hashes). */
  const LIMITS = [0, 10, 0, 10, 31, 31, 31, 31, 32, 47, 32, 47, 64, 128, 64, 64];
  const bucketStarts = 16 * 65537 * 4;

  /** 12,000 random entries at LIMITS's distances, and some of their ids again with another hash and distance (two entries, each answered). */
  function randomIndex(): { index: PdqIndex; entries: Entry[] } {
    const entries: Entry[] = [];
    for (let id = 0; id < 12_000; id++) entries.push(entry(id, randomHash(), LIMITS[id % LIMITS.length]!));
    for (let id = 0; id < 12_000; id += 50) entries.push(entry(id, randomHash(), LIMITS[(id / 50) % LIMITS.length]!));
    const index = new PdqIndex(16);
    for (const e of entries) index.add(e.id, e.hash, e.limit);
    return { index, entries };
  }
  /**
   * Queries near an entry of each distance in LIMITS: at every distance from 0 to its limit + 2
   * (`around` given: only from `around` below the limit), and at its limit as far as the
   * pigeonhole allows from each chunk (`tightest`); and a few random ones.
   */
  function plant(pool: Entry[], around?: number): { query: string; label: string }[] {
    const queries: { query: string; label: string }[] = [];
    for (const limit of new Set(LIMITS)) {
      const withLimit = pool.filter((e) => e.limit === limit);
      const e = withLimit[(limit * 7919) % withLimit.length]!;
      for (let d = around === undefined ? 0 : Math.max(0, limit - around); d <= limit + 2; d++) queries.push({ query: flip(e.hash, d), label: `entry ${e.id} (limit ${limit}) at ${d}` });
      for (let only = 0; only < 16; only++) {
        const t = tightest(e.hash, limit, only);
        if (t.distance === limit) queries.push({ query: t.query, label: `entry ${e.id} (limit ${limit}) at ${limit}, findable through chunk ${only} only` });
      }
    }
    for (let k = 0; k < 10; k++) queries.push({ query: randomHash(), label: `random ${k}` });
    return queries;
  }

  test("random entries at mixed distances (0 to 128), queries planted at every distance up to each limit + 2 and at each chunk's pigeonhole bound", () => {
    const { index, entries } = randomIndex();
    const bytesBefore = index.bytes;
    let matched = 0;
    for (const { query, label } of plant(entries)) matched += expectSameAsScan(index, entries, query, label);
    // The three tiers (0-15, 16-31, 32-47) were bucketed: the lookups did not all go by the scan.
    expect(index.bytes - bytesBefore).toBeGreaterThanOrEqual(3 * bucketStarts);
    expect(matched).toBeGreaterThan(1000);
  });

  test("after removals (the buckets built again), a few adds (scanned until then) and many (built again)", () => {
    const { index, entries } = randomIndex();
    index.match(randomHash()); // the buckets built
    // A fifth of the ids, twice-added ones among them.
    const gone = new Set(entries.filter((e) => e.id % 5 === 1).map((e) => e.id));
    expect(index.remove(gone)).toBe(entries.filter((e) => gone.has(e.id)).length);
    const kept = entries.filter((e) => !gone.has(e.id));
    expect(index.size).toBe(kept.length);
    const bytesBefore = index.bytes;
    for (const { query, label } of plant(kept, 3)) expectSameAsScan(index, kept, query, `${label}, after removals`);
    expect(index.bytes - bytesBefore).toBeGreaterThanOrEqual(3 * bucketStarts);
    // Adds: removed entries back at another distance, and new ones near kept entries.
    const removed = entries.filter((e) => gone.has(e.id));
    const readd = (from: number, to: number) => {
      for (let k = from; k < to; k++) {
        const back = removed[k % removed.length]!;
        const e = k % 2 ? entry(back.id, back.hash, LIMITS[(k * 5) % LIMITS.length]!) : entry(100_000 + k, flip(kept[k % kept.length]!.hash, k % 40), LIMITS[k % LIMITS.length]!);
        kept.push(e);
        index.add(e.id, e.hash, e.limit);
      }
    };
    readd(0, 1500);
    for (const { query, label } of plant(kept.slice(-1500), 3)) expectSameAsScan(index, kept, query, `${label}, after 1,500 adds`);
    readd(1500, 5000);
    for (const { query, label } of plant(kept.slice(-3500), 3)) expectSameAsScan(index, kept, query, `${label}, after 5,000 adds`);
  });

  test("buckets built in slices (a pause between passes) answer what a scan answers; a lookup or a removal during the build leaves nothing stale", async () => {
    // Built alone: many slices, each followed by the caller's pause.
    const alone = randomIndex();
    let pauses = 0;
    await alone.index.bucketsInSlices(async () => {
      pauses++;
    });
    expect(pauses).toBeGreaterThanOrEqual(3 * 8 * 2); // three tiers, eight words, two passes each
    const bytesBefore = alone.index.bytes;
    for (const { query, label } of plant(alone.entries, 2)) expectSameAsScan(alone.index, alone.entries, query, `${label}, built in slices`);
    expect(alone.index.bytes).toBe(bytesBefore); // the lookups found the buckets built: none built again

    // A lookup in the middle builds them at once; the slices then publish nothing over them.
    const looked = randomIndex();
    let step = 0;
    await looked.index.bucketsInSlices(async () => {
      if (++step === 5) for (const { query, label } of plant(looked.entries, 1)) expectSameAsScan(looked.index, looked.entries, query, `${label}, looked up during the build`);
    });
    for (const { query, label } of plant(looked.entries, 1)) expectSameAsScan(looked.index, looked.entries, query, `${label}, after the build a lookup interrupted`);

    // A removal in the middle (positions move): the slices' buckets are dropped, the next lookup builds them again.
    const removed = randomIndex();
    const gone = new Set(removed.entries.filter((e) => e.id % 7 === 3).map((e) => e.id));
    step = 0;
    await removed.index.bucketsInSlices(async () => {
      if (++step === 9) removed.index.remove(gone);
    });
    const kept = removed.entries.filter((e) => !gone.has(e.id));
    for (const { query, label } of plant(kept, 2)) expectSameAsScan(removed.index, kept, query, `${label}, removed during the build`);
  });

  test("with deferBuckets set, a lookup checks any number of entries added since one by one instead of building the buckets; the slices build them after", async () => {
    const { index, entries } = randomIndex();
    index.match(randomHash()); // the buckets built
    index.deferBuckets = true;
    const added = Array.from({ length: 3_000 }, (_, k) => entry(200_000 + k, flip(entries[k % entries.length]!.hash, k % 40), LIMITS[k % LIMITS.length]!));
    for (const e of added) index.add(e.id, e.hash, e.limit);
    const all = [...entries, ...added];
    const bytesBefore = index.bytes;
    for (const { query, label } of plant(added, 2)) expectSameAsScan(index, all, query, `${label}, 3,000 adds, buckets deferred`);
    expect({ pending: index.pending, bytes: index.bytes }).toEqual({ pending: 3_000, bytes: bytesBefore }); // nothing built at once
    await index.bucketsInSlices(async () => {
      // A lookup between two slices: scanned too, nothing built at once.
      expectSameAsScan(index, all, added[7]!.hash, "during the slices");
    });
    expect(index.pending).toBe(0);
    index.deferBuckets = false;
    for (const { query, label } of plant(added, 1)) expectSameAsScan(index, all, query, `${label}, after the slices`);
  });

  test("a tier of more entries than one slice fills (FILL_SLICE_ENTRIES) is filled in parts, each a slice of its own, and answers what a scan answers", async () => {
    const entries = Array.from({ length: FILL_SLICE_ENTRIES + 5_000 }, (_, id) => entry(id, randomHash(), PDQ_MATCH_DISTANCE));
    const index = new PdqIndex(16);
    for (const e of entries) index.add(e.id, e.hash, e.limit);
    let pauses = 0;
    await index.bucketsInSlices(async () => {
      pauses++;
    });
    // One tier, eight words: each count and each placing in two parts (a pass in one piece gave 2 slices a word).
    expect(pauses).toBeGreaterThanOrEqual(8 * 4);
    const bytesBefore = index.bytes;
    for (const e of [entries[3]!, entries[FILL_SLICE_ENTRIES - 1]!, entries[FILL_SLICE_ENTRIES]!, entries.at(-1)!]) {
      for (let d = 0; d <= PDQ_MATCH_DISTANCE + 2; d += 3) expectSameAsScan(index, entries, flip(e.hash, d), `entry ${e.id} at ${d}`);
      for (let only = 0; only < 16; only += 5) {
        const t = tightest(e.hash, PDQ_MATCH_DISTANCE, only);
        expectSameAsScan(index, entries, t.query, `entry ${e.id} findable through chunk ${only} only`);
      }
    }
    expect(index.bytes).toBe(bytesBefore); // the slices' buckets served: none built again
  });

  test("real PDQ hashes (test/fixtures/pdq's reference table) among random entries: the bridge's alterations match its original, the other images do not", () => {
    const FIXTURES = join(import.meta.dir, "..", "fixtures", "pdq");
    const reference = [...readFileSync(join(FIXTURES, "README.md"), "utf8").matchAll(/^\| (\S+\.(?:jpg|png)) \| ([0-9a-f]{64}) \|$/gm)].map((m) => ({ file: m[1]!, hash: m[2]! }));
    expect(reference.length).toBe(11);
    const entries: Entry[] = [];
    for (let id = 0; id < 5000; id++) entries.push(entry(id, randomHash(), PDQ_MATCH_DISTANCE));
    reference.forEach((r, k) => entries.push(entry(10_000 + k, r.hash, PDQ_MATCH_DISTANCE)));
    const index = new PdqIndex(entries.length);
    for (const e of entries) index.add(e.id, e.hash, e.limit);
    const original = 10_000 + reference.findIndex((r) => r.file === "bridge-aaa-orig.jpg");
    for (const r of reference) {
      // Each image's hash a few bits off, as another implementation's decoder gives it.
      for (const query of [r.hash, flip(r.hash, 6)]) {
        expectSameAsScan(index, entries, query, r.file);
        const ids = index.match(query).map((m) => m.id);
        expect({ file: r.file, matchesOriginal: ids.includes(original) }).toEqual({ file: r.file, matchesOriginal: r.file.startsWith("bridge-") });
      }
    }
    expect(index.bytes).toBeGreaterThanOrEqual(entries.length * 37 + bucketStarts);
  });
});

describe("the index's entries in typed arrays (pure)", () => {
  test("each position answers its entry's id (a UUID packed, any other id as it is), bank and signal type", () => {
    const table = new EntryTable();
    const ids = Array.from({ length: 300 }, () => Bun.randomUUIDv7());
    ids[17] = "hand-written-id";
    ids[18] = ids[18]!.toUpperCase(); // not in the form newId gives: kept as it is
    const at = ids.map((id, k) => table.add(id, `bank-${k % 3}`, (["sha256", "md5", "pdq", "vpdq"] as const)[k % 4]!));
    expect(at).toEqual(ids.map((_, k) => k));
    expect(table.size).toBe(300);
    ids.forEach((id, k) => expect(table.at(k)).toEqual({ entryId: id, bankId: `bank-${k % 3}`, signalType: (["sha256", "md5", "pdq", "vpdq"] as const)[k % 4]! }));
    expect(() => table.at(300)).toThrow(RangeError);
  });
});
