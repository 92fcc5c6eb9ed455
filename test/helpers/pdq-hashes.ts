/**
 * Random PDQ hashes for the media tests, the same each run: a seeded generator (a linear
 * congruential one, two steps a 32-bit word), hashes of eight of its words, a hash with some
 * of its bits flipped (distinct positions), and a video of frames from hashes.
 */
import { hexOfWords } from "../../src/domain/media/pdq.ts";
import type { VpdqFrame } from "../../src/domain/media/vpdq.ts";

export function seededPdq(seed: number) {
  let state = seed >>> 0;
  const nextWord = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const hi = state >>> 16;
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return ((hi << 16) | (state >>> 16)) >>> 0;
  };
  const randomHash = (): string => hexOfWords(Uint32Array.from({ length: 8 }, nextWord));
  /** `hash` with `bits` distinct bits flipped. */
  const flip = (hash: string, bits: number): string => {
    const positions = new Set<number>();
    while (positions.size < bits) positions.add(nextWord() % 256);
    const digits = [...hash].map((c) => Number.parseInt(c, 16));
    for (const k of positions) digits[63 - (k >> 2)]! ^= 1 << (k & 3);
    return digits.map((d) => d.toString(16)).join("");
  };
  return { nextWord, randomHash, flip };
}

/** A video of these frame hashes, one a second, all of one quality. */
export const videoOf = (hashes: string[], quality = 100): VpdqFrame[] => hashes.map((hash, i) => ({ hash, quality, timestamp: i }));
