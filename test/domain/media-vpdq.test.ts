/**
 * vPDQ's arithmetic (src/domain/media/vpdq.ts): the signal's text in HMA's form and the C++
 * reference's lines, the comparison of two videos as the README's pseudocode gives it (distinct
 * frames, the quality floor on both sides, the two shares and HMA's thresholds), and the index of
 * banked videos giving the same shares as the brute-force comparison on random videos. Pure: the
 * same on either engine, no server, no ffmpeg.
 */
import { describe, expect, test } from "bun:test";
import { compareVpdq, formatVpdq, isVpdqMatch, normalizeVpdq, parseVpdq, VpdqIndex, VPDQ_DEFAULT_THRESHOLDS, VPDQ_ENTRY_MATCH_PERCENT, VPDQ_QUERY_MATCH_PERCENT, type VpdqFrame } from "../../src/domain/media/vpdq.ts";
import { seededPdq, videoOf as video } from "../helpers/pdq-hashes.ts";

const { nextWord, randomHash, flip } = seededPdq(43);

describe("the signal's text (pure: the same on either engine)", () => {
  const a = randomHash();
  const b = randomHash();

  test("HMA's form: a JSON array of \"hash,quality,timestamp\", three decimals; read back the same", () => {
    const frames = [
      { hash: a, quality: 100, timestamp: 0 },
      { hash: b, quality: 42, timestamp: 1.5 },
    ];
    const text = formatVpdq(frames);
    expect(text).toBe(`["${a},100,0.000","${b},42,1.500"]`);
    expect(parseVpdq(text)).toEqual(frames);
  });

  test("HMA's own timestamps (Python's '.3' format: 1.0, 1.23e+02) and upper-case hex are read and normalized", () => {
    const text = JSON.stringify([`${a.toUpperCase()},90,1.0`, `${b},80,1.23e+02`]);
    expect(parseVpdq(text)).toEqual([
      { hash: a, quality: 90, timestamp: 1 },
      { hash: b, quality: 80, timestamp: 123 },
    ]);
    expect(normalizeVpdq(text)).toBe(`["${a},90,1.000","${b},80,123.000"]`);
  });

  test("the C++ reference's lines (frame,quality,hash,timestamp) are read too", () => {
    expect(parseVpdq(`0,100,${a},0.000\n30,77,${b},1.000\n`)).toEqual([
      { hash: a, quality: 100, timestamp: 0 },
      { hash: b, quality: 77, timestamp: 1 },
    ]);
  });

  test.each([
    ["not JSON", "[not json", /JSON array/],
    ["not an array", "{}", /JSON array/],
    ["empty", "[]", /at least one frame/],
    ["a number for a frame", "[1]", /frame 1: a string/],
    ["two fields", JSON.stringify([`${a},100`]), /frame 1: "hash,quality,timestamp"/],
    ["a short hash", JSON.stringify([`${a.slice(1)},100,0`]), /frame 1: the hash/],
    ["quality 101", JSON.stringify([`${a},101,0`]), /quality/],
    ["quality -1", JSON.stringify([`${a},-1,0`]), /quality/],
    ["a negative timestamp", JSON.stringify([`${a},100,-1`]), /timestamp/],
    ["a timestamp that is no number", JSON.stringify([`${a},100,soon`]), /timestamp/],
    ["a line of three fields", `0,100,${a}`, /frame 1: "frame,quality,hash,timestamp"/],
  ])("refused, saying why: %s", (_, text, message) => {
    expect(() => parseVpdq(text)).toThrow(message);
    expect(normalizeVpdq(text)).toBeNull();
  });

  test("more frames than the bound are refused", () => {
    expect(() => parseVpdq(JSON.stringify(Array.from({ length: 7_201 }, () => `${a},100,0`)))).toThrow(/at most 7200 frames/);
  });
});

describe("comparing two videos (pure: the same on either engine)", () => {
  test("HMA's thresholds: distance 31, quality 50, 80 % of the query, 0 % of the banked video", () => {
    expect(VPDQ_DEFAULT_THRESHOLDS).toEqual({ distance: 31, qualityFloor: 50 });
    expect(VPDQ_QUERY_MATCH_PERCENT).toBe(80);
    expect(VPDQ_ENTRY_MATCH_PERCENT).toBe(0);
  });

  test("the same video re-encoded (every frame a few bits off) matches 100 % both ways", () => {
    const banked = Array.from({ length: 10 }, randomHash);
    const c = compareVpdq(video(banked.map((h) => flip(h, 12))), video(banked));
    expect(c).toEqual({ queryPercent: 100, entryPercent: 100 });
    expect(isVpdqMatch(c)).toBe(true);
  });

  test("a frame 31 bits off matches, 32 does not", () => {
    const h = randomHash();
    expect(compareVpdq(video([flip(h, 31)]), video([h])).queryPercent).toBe(100);
    expect(compareVpdq(video([flip(h, 32)]), video([h])).queryPercent).toBe(0);
  });

  test("a clip of a banked video matches (all the clip's frames are in it); the banked video's share is the clip's length", () => {
    const banked = Array.from({ length: 20 }, randomHash);
    const c = compareVpdq(video(banked.slice(5, 9)), video(banked));
    expect(c).toEqual({ queryPercent: 100, entryPercent: 20 });
    expect(isVpdqMatch(c)).toBe(true);
  });

  test("padding: 8 banked frames of 10 match (80 %), 7 of 10 do not", () => {
    const banked = Array.from({ length: 8 }, randomHash);
    const padded = (n: number) => video([...banked.slice(0, n), ...Array.from({ length: 10 - n }, randomHash)]);
    expect(compareVpdq(padded(8), video(banked)).queryPercent).toBe(80);
    expect(isVpdqMatch(compareVpdq(padded(8), video(banked)))).toBe(true);
    expect(compareVpdq(padded(7), video(banked)).queryPercent).toBe(70);
    expect(isVpdqMatch(compareVpdq(padded(7), video(banked)))).toBe(false);
  });

  test("an unrelated video matches nothing", () => {
    const c = compareVpdq(video(Array.from({ length: 10 }, randomHash)), video(Array.from({ length: 10 }, randomHash)));
    expect(c).toEqual({ queryPercent: 0, entryPercent: 0 });
    expect(isVpdqMatch(c)).toBe(false);
  });

  test("repeated frames count once (a still shot held for a minute is one frame)", () => {
    const banked = Array.from({ length: 4 }, randomHash);
    const other = randomHash();
    // 1 matching hash repeated 9 times and 1 other: 50 %, not 90 %.
    const c = compareVpdq(video([...Array.from({ length: 9 }, () => banked[0]!), other]), video(banked));
    expect(c.queryPercent).toBe(50);
    expect(c.entryPercent).toBe(25);
  });

  test("frames under the quality floor are left out on both sides; none left is no match", () => {
    const banked = Array.from({ length: 5 }, randomHash);
    const query: VpdqFrame[] = [...video(banked.slice(0, 4)), { hash: randomHash(), quality: 49, timestamp: 9 }];
    expect(compareVpdq(query, video(banked)).queryPercent).toBe(100); // the dark frame does not count against it
    expect(compareVpdq(video(banked, 49), video(banked))).toEqual({ queryPercent: 0, entryPercent: 0 });
    expect(compareVpdq(video(banked), video(banked, 10))).toEqual({ queryPercent: 0, entryPercent: 0 });
    expect(compareVpdq(video(banked, 10), video(banked), { distance: 31, qualityFloor: 0 }).queryPercent).toBe(100);
  });

  test("shares other than HMA's", () => {
    const banked = Array.from({ length: 10 }, randomHash);
    const clip = compareVpdq(video(banked.slice(0, 3)), video(banked));
    expect(isVpdqMatch(clip, { queryPercent: 80, entryPercent: 50 })).toBe(false);
    expect(isVpdqMatch(clip, { queryPercent: 0, entryPercent: 30 })).toBe(true);
  });
});

describe("the index of banked videos (pure: the same on either engine)", () => {
  test("gives the brute-force comparison's shares, each video at its own distance and floor, on random videos", () => {
    const base = Array.from({ length: 40 }, randomHash);
    const pick = (n: number) => Array.from({ length: n }, () => base[nextWord() % base.length]!);
    const banked = Array.from({ length: 30 }, (_, i) => ({
      frames: pick(1 + (nextWord() % 12)).map((h, j) => ({ hash: flip(h, nextWord() % 20), quality: 30 + (nextWord() % 71), timestamp: j })),
      thresholds: { distance: [10, 31, 40][i % 3]!, qualityFloor: [0, 50, 80][i % 3]! },
    }));
    const index = new VpdqIndex();
    banked.forEach((b, id) => index.add(id, b.frames, b.thresholds));
    let matched = 0;
    for (let round = 0; round < 40; round++) {
      const query = pick(1 + (nextWord() % 10)).map((h, j) => ({ hash: flip(h, nextWord() % 20), quality: 30 + (nextWord() % 71), timestamp: j }));
      const any = { queryPercent: 0, entryPercent: 0 };
      const got = new Map(index.match(query, any).map((m) => [m.id, m]));
      banked.forEach((b, id) => {
        const c = compareVpdq(query, b.frames, b.thresholds);
        if (c.queryPercent === 0) return expect(got.has(id)).toBe(false);
        expect(got.get(id)).toMatchObject({ queryPercent: expect.closeTo(c.queryPercent, 9), entryPercent: expect.closeTo(c.entryPercent, 9) });
      });
      matched += got.size;
      // HMA's shares: exactly those the brute force says match.
      const hma = new Set(index.match(query).map((m) => m.id));
      banked.forEach((b, id) => expect(hma.has(id)).toBe(isVpdqMatch(compareVpdq(query, b.frames, b.thresholds))));
    }
    expect(matched).toBeGreaterThan(40); // the random videos share frames: the check is not vacuous
  });

  test("a match says the nearest pair of frames' distance", () => {
    const h = randomHash();
    const index = new VpdqIndex();
    index.add(7, video([h]), VPDQ_DEFAULT_THRESHOLDS);
    expect(index.match(video([flip(h, 9), flip(h, 4)]))).toEqual([{ id: 7, distance: 4, queryPercent: 100, entryPercent: 100 }]);
  });

  test("a banked video with no frame of quality is not indexed", () => {
    const index = new VpdqIndex();
    index.add(1, video([randomHash()], 20), VPDQ_DEFAULT_THRESHOLDS);
    expect(index.size).toBe(0);
  });
});
