/**
 * The in-memory matcher of a project's banks (src/domain/media/hash-index.ts): exact digests by
 * lookup, PDQ within each entry's distance, removal (one id, many at once), growth, and the
 * scan's early exit checked against a brute-force count of every bit on random hashes with
 * planted near ones. Pure: the same on either engine, no server or database.
 */
import { describe, expect, test } from "bun:test";
import { ExactHashIndex, PdqIndex, type PdqMatch } from "../../src/domain/media/hash-index.ts";
import { hexOfWords, PDQ_MATCH_DISTANCE, pdqWords, popcount32 } from "../../src/domain/media/pdq.ts";

let seed = 2024;
const nextWord = () => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  const hi = seed >>> 16;
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return ((hi << 16) | (seed >>> 16)) >>> 0;
};
const randomHash = () => hexOfWords(Uint32Array.from({ length: 8 }, nextWord));

/** `hash` with `bits` distinct bits flipped. */
function flip(hash: string, bits: number): string {
  const positions = new Set<number>();
  while (positions.size < bits) positions.add(nextWord() % 256);
  const digits = [...hash].map((c) => Number.parseInt(c, 16));
  for (const k of positions) digits[63 - (k >> 2)]! ^= 1 << (k & 3);
  return digits.map((d) => d.toString(16)).join("");
}

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
