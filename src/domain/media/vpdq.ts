/**
 * vPDQ, Meta's video similarity by PDQ (ThreatExchange's `vpdq/README.md`, and the defaults of
 * `python-threatexchange`'s vpdq extension, which Hasher-Matcher-Actioner uses): a video is the
 * bag of the PDQ hashes of frames sampled from it (one a second here: video-frames.ts), each
 * with its quality and timestamp. Pure arithmetic, no storage, no process: the signal's text
 * form, the comparison of two videos, and an index of a project's banked videos.
 *
 * The comparison (README, "Comparison (Matching) Algorithm"): both videos' frames are taken once
 * each (the same hash twice counts once) and only when their quality reaches the floor; a query
 * frame is matched when some frame of the other video lies within the PDQ distance, and the other
 * way round. The query matches when the share of its frames matched is at least
 * VPDQ_QUERY_MATCH_PERCENT and the share of the banked video's frames matched at least
 * VPDQ_ENTRY_MATCH_PERCENT. Frame order and timestamps play no part: a clip cut from a banked
 * video matches it (all the clip's frames are in it), a banked video padded with other footage
 * matches when the padding is under a fifth of the whole.
 */
import { PdqIndex } from "./hash-index.ts";
import { hammingDistance, isPdqHex, PDQ_MATCH_DISTANCE, PDQ_MIN_QUALITY } from "./pdq.ts";

/** One sampled frame: its PDQ hash (64 lower-case hex digits), quality (0..100) and time in seconds. */
export interface VpdqFrame {
  hash: string;
  quality: number;
  timestamp: number;
}

/** Frames are sampled one a second (the reference's `seconds_per_hash` default). */
export const VPDQ_SECONDS_PER_FRAME = 1;
/** The share of the query's frames (in percent) that must match: HMA's VPDQ_QUERY_MATCH_THRESHOLD_PERCENT. */
export const VPDQ_QUERY_MATCH_PERCENT = 80;
/** The share of the banked video's frames (in percent) that must match: HMA's VPDQ_INDEX_MATCH_THRESHOLD_PERCENT. */
export const VPDQ_ENTRY_MATCH_PERCENT = 0;
/** The most frames a vPDQ signal may hold when read (a 2-hour video at one a second). */
export const VPDQ_MAX_FRAMES = 7_200;

export interface VpdqThresholds {
  /** A frame matches another at this Hamming distance or less (PDQ's 31 by default). */
  distance: number;
  /** Frames of lower quality are left out on both sides (PDQ's 50 by default). */
  qualityFloor: number;
}

export const VPDQ_DEFAULT_THRESHOLDS: VpdqThresholds = { distance: PDQ_MATCH_DISTANCE, qualityFloor: PDQ_MIN_QUALITY };

export interface VpdqComparison {
  /** Percent of the query's (distinct, good enough) frames within the distance of one of the other's. */
  queryPercent: number;
  /** Percent of the other video's frames within the distance of one of the query's. */
  entryPercent: number;
}

// ---------------------------------------------------------------------------------------------
// The signal's text: HMA's form

/**
 * The signal as Hasher-Matcher-Actioner stores and exchanges it (`VPDQSignal`, `vpdq_to_json`):
 * a JSON array of strings `"<pdq hex>,<quality>,<timestamp in seconds>"`, one a frame. The
 * timestamp is written with three decimals (as the C++ reference writes it).
 */
export function formatVpdq(frames: readonly VpdqFrame[]): string {
  return JSON.stringify(frames.map((f) => `${f.hash},${f.quality},${f.timestamp.toFixed(3)}`));
}

/**
 * Reads a vPDQ signal: HMA's JSON array (above), or the C++ reference's `vpdq-hash-video` output,
 * a line a frame `<frame number>,<quality>,<pdq hex>,<timestamp>`. Hex digits of any case; the
 * answer's hashes are lower-case. Throws a RangeError saying what is wrong.
 */
export function parseVpdq(text: string): VpdqFrame[] {
  const trimmed = text.trim();
  let frames: VpdqFrame[];
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
    let items: unknown;
    try {
      items = JSON.parse(trimmed);
    } catch {
      throw new RangeError("not a vPDQ signal: a JSON array of \"hash,quality,timestamp\" strings (or vpdq-hash-video's lines) was expected");
    }
    if (!Array.isArray(items)) throw new RangeError("not a vPDQ signal: a JSON array was expected");
    if (items.length > VPDQ_MAX_FRAMES) throw new RangeError(`a vPDQ signal holds at most ${VPDQ_MAX_FRAMES} frames`);
    frames = items.map((item, i) => {
      if (typeof item !== "string") throw new RangeError(`frame ${i + 1}: a string "hash,quality,timestamp" was expected`);
      const parts = item.split(",");
      if (parts.length !== 3) throw new RangeError(`frame ${i + 1}: "hash,quality,timestamp" was expected`);
      return frameOf(parts[0]!, parts[1]!, parts[2]!, i + 1);
    });
  } else {
    const lines = trimmed.split(/\r?\n/).filter((l) => l.trim() !== "");
    if (lines.length > VPDQ_MAX_FRAMES) throw new RangeError(`a vPDQ signal holds at most ${VPDQ_MAX_FRAMES} frames`);
    frames = lines.map((line, i) => {
      const parts = line.split(",");
      if (parts.length !== 4 || !/^\s*\d+\s*$/.test(parts[0]!)) throw new RangeError(`frame ${i + 1}: "frame,quality,hash,timestamp" was expected`);
      return frameOf(parts[2]!, parts[1]!, parts[3]!, i + 1);
    });
  }
  if (frames.length === 0) throw new RangeError("a vPDQ signal holds at least one frame");
  return frames;
}

function frameOf(hash: string, quality: string, timestamp: string, n: number): VpdqFrame {
  const h = hash.trim();
  if (!isPdqHex(h)) throw new RangeError(`frame ${n}: the hash is not 64 hexadecimal digits`);
  const q = quality.trim();
  if (!/^\d{1,3}$/.test(q) || Number(q) > 100) throw new RangeError(`frame ${n}: the quality is not a whole number from 0 to 100`);
  const t = Number(timestamp.trim());
  if (timestamp.trim() === "" || !Number.isFinite(t) || t < 0) throw new RangeError(`frame ${n}: the timestamp is not a number of seconds, 0 or more`);
  return { hash: h.toLowerCase(), quality: Number(q), timestamp: t };
}

/** A signal in its one stored form (HMA's JSON, lower-case, three decimals), or null when it cannot be read. */
export function normalizeVpdq(text: string): string | null {
  try {
    return formatVpdq(parseVpdq(text));
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Comparing two videos

/** The frames that take part: quality at the floor or above, each hash once (its best quality kept). */
export function distinctFrames(frames: readonly VpdqFrame[], qualityFloor: number): VpdqFrame[] {
  const byHash = new Map<string, VpdqFrame>();
  for (const f of frames) {
    if (f.quality < qualityFloor) continue;
    const held = byHash.get(f.hash);
    if (!held || held.quality < f.quality) byHash.set(f.hash, f);
  }
  return [...byHash.values()];
}

/**
 * Compares a query video with another (a banked one), by brute force: the README's pseudocode.
 * A side with no frame left after the quality filter matches nothing (0 percent).
 */
export function compareVpdq(query: readonly VpdqFrame[], entry: readonly VpdqFrame[], thresholds: VpdqThresholds = VPDQ_DEFAULT_THRESHOLDS): VpdqComparison {
  const q = distinctFrames(query, thresholds.qualityFloor);
  const e = distinctFrames(entry, thresholds.qualityFloor);
  if (q.length === 0 || e.length === 0) return { queryPercent: 0, entryPercent: 0 };
  const near = (a: VpdqFrame, b: VpdqFrame) => hammingDistance(a.hash, b.hash) <= thresholds.distance;
  const queryMatched = q.filter((a) => e.some((b) => near(a, b))).length;
  const entryMatched = e.filter((b) => q.some((a) => near(a, b))).length;
  return { queryPercent: (queryMatched * 100) / q.length, entryPercent: (entryMatched * 100) / e.length };
}

/** Whether a comparison is a match at the shares given (HMA's defaults: 80 % of the query, 0 % of the banked video). */
export function isVpdqMatch(c: VpdqComparison, shares: { queryPercent: number; entryPercent: number } = { queryPercent: VPDQ_QUERY_MATCH_PERCENT, entryPercent: VPDQ_ENTRY_MATCH_PERCENT }): boolean {
  return c.queryPercent > 0 && c.queryPercent >= shares.queryPercent && c.entryPercent >= shares.entryPercent;
}

// ---------------------------------------------------------------------------------------------
// An index of banked videos

export interface VpdqMatch extends VpdqComparison {
  /** The caller's id of the banked video. */
  id: number;
  /** The smallest distance between a matched pair of frames. */
  distance: number;
}

/**
 * Banked videos, each with its own distance and quality floor (its bank's settings): their
 * distinct good frames in one PdqIndex, so a query costs one scan a query frame rather than a
 * comparison per banked video (the README's "Pruning Candidates", without FAISS). It gives the
 * same shares as compareVpdq with each video's thresholds (a test checks it).
 */
export class VpdqIndex {
  private readonly frames = new PdqIndex(64);
  /** Frame position in the PdqIndex to its video's slot. */
  private readonly frameVideo: number[] = [];
  private readonly videos: { id: number; frames: number; qualityFloor: number }[] = [];

  get size(): number {
    return this.videos.length;
  }

  add(id: number, frames: readonly VpdqFrame[], thresholds: VpdqThresholds): void {
    const distinct = distinctFrames(frames, thresholds.qualityFloor);
    if (distinct.length === 0) return; // nothing of it can match
    const slot = this.videos.length;
    this.videos.push({ id, frames: distinct.length, qualityFloor: thresholds.qualityFloor });
    for (const f of distinct) {
      this.frames.add(this.frameVideo.length, f.hash, Math.min(255, thresholds.distance));
      this.frameVideo.push(slot);
    }
  }

  /** The banked videos the query matches at the shares given (HMA's defaults). */
  match(query: readonly VpdqFrame[], shares: { queryPercent: number; entryPercent: number } = { queryPercent: VPDQ_QUERY_MATCH_PERCENT, entryPercent: VPDQ_ENTRY_MATCH_PERCENT }): VpdqMatch[] {
    const q = distinctFrames(query, 0);
    const queryMatched = new Map<number, Set<number>>();
    const entryMatched = new Map<number, Set<number>>();
    const best = new Map<number, number>();
    q.forEach((frame, qi) => {
      for (const hit of this.frames.match(frame.hash)) {
        const slot = this.frameVideo[hit.id]!;
        if (frame.quality < this.videos[slot]!.qualityFloor) continue;
        (queryMatched.get(slot) ?? queryMatched.set(slot, new Set()).get(slot)!).add(qi);
        (entryMatched.get(slot) ?? entryMatched.set(slot, new Set()).get(slot)!).add(hit.id);
        best.set(slot, Math.min(best.get(slot) ?? 256, hit.distance));
      }
    });
    const goodByFloor = new Map<number, number>();
    const found: VpdqMatch[] = [];
    for (const [slot, matched] of queryMatched) {
      const video = this.videos[slot]!;
      let good = goodByFloor.get(video.qualityFloor);
      if (good === undefined) goodByFloor.set(video.qualityFloor, (good = q.filter((f) => f.quality >= video.qualityFloor).length));
      const c: VpdqComparison = { queryPercent: (matched.size * 100) / good, entryPercent: (entryMatched.get(slot)!.size * 100) / video.frames };
      if (isVpdqMatch(c, shares)) found.push({ id: video.id, distance: best.get(slot)!, ...c });
    }
    return found.sort((a, b) => b.queryPercent - a.queryPercent || a.id - b.id);
  }
}
