/**
 * Known harmful media (issue 43, docs/media.md "Figures"): what hashing an image and matching it
 * against a project's banks cost on this machine.
 *
 * 1. PDQ hash time per megapixel, decoding included (src/domain/media/decode.ts then pdq.ts), of
 *    a JPEG photograph (ThreatExchange's bridge, 1600 x 1004) and a PNG (c.png, 1432 x 812,
 *    RGBA) from test/fixtures/pdq/: rounds alternating which goes first, CPU time of this
 *    process (process.cpuUsage) and wall time, medians. Beside each, decoding alone: the floor
 *    hashing cannot go under. `--large` adds a 12-megapixel JPEG and PNG (4000 x 3000, a phone
 *    photograph), made at start by jpeg-js's and fast-png's encoders from the bridge.
 * 2. One PDQ lookup (hash-index.ts) against 50,000, 100,000 and 1,000,000 random entries at the
 *    default distance (31): median and p99 of --queries random queries, wall and CPU, against
 *    the goal of 25 ms at a million; and the time to build each index as the banks' matcher
 *    does (src/domain/banks/matching.ts: sized for its rows, one add per entry from its hex,
 *    then the first lookup, which may do the index's deferred work); after a warm-up on a
 *    20,000-entry index, so that each size is measured on compiled code.
 * 3. The matcher's memory per million entries: its typed arrays at each size, scaled to a
 *    million; and, for comparison, the exact-digest index (a Map of SHA-256 hex digests),
 *    measured on the JavaScript heap after a full collection.
 *
 * Figures only, no assertion: `bun scripts/bench/pdq.ts [--rounds 7] [--queries 200] [--large]
 * [--lookups-only]` (about a minute). `bun run bench` runs the same (`pdqFigures`) in its media
 * step (scripts/bench/media.ts), beside report intake with media hashes.
 */
import { heapStats } from "bun:jsc";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { encode as encodeJpeg } from "jpeg-js";
import { encode as encodePng } from "fast-png";
import { decodeImage } from "../../src/domain/media/decode.ts";
import { ExactHashIndex, PdqIndex } from "../../src/domain/media/hash-index.ts";
import { hexOfWords, pdqHash } from "../../src/domain/media/pdq.ts";
import { fmtMs, markdownTable, median, ROOT } from "./lib.ts";

export const PDQ_LOOKUP_GOAL_MS = 25;
const GOAL_MS = PDQ_LOOKUP_GOAL_MS;
const LOOKUP_SIZES = [50_000, 100_000, 1_000_000];

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
/** Wall and CPU milliseconds of one call. */
function measure(fn: () => unknown): { wall: number; cpu: number } {
  const c = cpuMs();
  const t = performance.now();
  fn();
  return { wall: performance.now() - t, cpu: cpuMs() - c };
}
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;

// ---------------------------------------------------------------------------------------------
// 1. Hashing

interface Input {
  label: string;
  bytes: Uint8Array;
  megapixels: number;
}
export interface PdqFigures {
  rounds: number;
  queries: number;
  lookupsOnly: boolean;
  /** Per input, medians in ms per megapixel: hashing with decoding, and decoding alone. */
  hashing: { label: string; cpuMsPerMp: number; wallMsPerMp: number; decodeCpuMsPerMp: number; decodeWallMsPerMp: number }[];
  lookups: { entries: number; wall: number[]; cpu: number[]; bytes: number; build: { wall: number; cpu: number } }[];
  /** Heap bytes of an exact SHA-256 index of a million digests. */
  exactBytesPerMillion: number;
}

/** Sections 1–3 above, measured in this process. */
export function pdqFigures(opts: { rounds: number; queries: number; large?: boolean; lookupsOnly?: boolean }): PdqFigures {
  const ROUNDS = opts.rounds;
  const QUERIES = opts.queries;
  const args = { large: opts.large, "lookups-only": opts.lookupsOnly };
  const fixture = (file: string) => new Uint8Array(readFileSync(join(ROOT, "test", "fixtures", "pdq", file)));
  const inputs: Input[] = [];
  for (const [label, file] of [
    ["JPEG 1600 x 1004 (bridge-aaa-orig.jpg)", "bridge-aaa-orig.jpg"],
    ["PNG 1432 x 812, RGBA (c.png)", "c.png"],
  ] as const) {
    const bytes = fixture(file);
    const img = decodeImage(bytes);
    inputs.push({ label, bytes, megapixels: (img.width * img.height) / 1e6 });
  }
  if (args.large) {
    // 4000 x 3000: the bridge scaled up (nearest neighbour) with a little noise, so that neither
    // encoder meets flat blocks.
    const bridge = decodeImage(fixture("bridge-aaa-orig.jpg"));
    const width = 4000;
    const height = 3000;
    const rgba = new Uint8Array(width * height * 4);
    let seed = 1;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const s = (Math.floor((y * bridge.height) / height) * bridge.width + Math.floor((x * bridge.width) / width)) * 4;
        const o = (y * width + x) * 4;
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        const noise = (seed >>> 28) - 8;
        for (let c = 0; c < 3; c++) rgba[o + c] = Math.max(0, Math.min(255, bridge.rgba[s + c]! + noise));
        rgba[o + 3] = 255;
      }
    }
    inputs.push({ label: "JPEG 4000 x 3000 (generated)", bytes: new Uint8Array(encodeJpeg({ width, height, data: rgba }, 90).data), megapixels: 12 });
    inputs.push({ label: "PNG 4000 x 3000, RGBA (generated)", bytes: encodePng({ width, height, data: rgba, channels: 4, depth: 8 }), megapixels: 12 });
  }

  const hashing = inputs.map(() => ({ wall: [] as number[], cpu: [] as number[], decodeWall: [] as number[], decodeCpu: [] as number[] }));
  if (!args["lookups-only"]) for (const input of inputs) pdqHash(decodeImage(input.bytes)); // warm-up
  for (let round = 0; round < (args["lookups-only"] ? 0 : ROUNDS); round++) {
    const order = inputs.map((_, i) => i);
    if (round % 2) order.reverse();
    for (const i of order) {
      const whole = measure(() => pdqHash(decodeImage(inputs[i]!.bytes)));
      const decodeOnly = measure(() => decodeImage(inputs[i]!.bytes));
      hashing[i]!.wall.push(whole.wall / inputs[i]!.megapixels);
      hashing[i]!.cpu.push(whole.cpu / inputs[i]!.megapixels);
      hashing[i]!.decodeWall.push(decodeOnly.wall / inputs[i]!.megapixels);
      hashing[i]!.decodeCpu.push(decodeOnly.cpu / inputs[i]!.megapixels);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // 2. Lookups, 3. memory

  let seed = 2024;
  const randomWords = (into: Uint32Array) => {
    for (let w = 0; w < 8; w++) {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      const hi = seed >>> 16;
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      into[w] = ((hi << 16) | (seed >>> 16)) >>> 0;
    }
    return into;
  };
  const words = new Uint32Array(8);
  const randomHash = () => hexOfWords(randomWords(words));

  // Warm-up: a small index built and looked up first, so that the figures below are of compiled
  // code at every size (the first index a process builds runs partly in the interpreter).
  {
    const warm = new PdqIndex(20_000);
    for (let i = 0; i < 20_000; i++) warm.add(i, randomHash());
    for (let i = 0; i < 300; i++) warm.match(randomHash());
  }

  const lookups: { entries: number; wall: number[]; cpu: number[]; bytes: number; build: { wall: number; cpu: number } }[] = [];
  for (const entries of LOOKUP_SIZES) {
    // Built as the banks' matcher builds a project's index (src/domain/banks/matching.ts,
    // buildIndex): sized for its rows, then one add per entry from its hex; the first lookup is
    // part of the build (the index may defer work to it).
    const hexes = Array.from({ length: entries }, randomHash);
    const queries = Array.from({ length: QUERIES }, randomHash);
    let index!: PdqIndex;
    const build = measure(() => {
      index = new PdqIndex(entries);
      for (let i = 0; i < entries; i++) index.add(i, hexes[i]!);
      index.match(queries[0]!);
    });
    hexes.length = 0;
    for (let i = 0; i < 10; i++) index.match(queries[i]!); // warm-up
    const wall: number[] = [];
    const cpu: number[] = [];
    for (const q of queries) {
      const m = measure(() => index.match(q));
      wall.push(m.wall);
      cpu.push(m.cpu);
    }
    lookups.push({ entries, wall, cpu, bytes: index.bytes, build });
  }

  function heapBytes(): number {
    Bun.gc(true);
    return heapStats().heapSize;
  }
  const exactBefore = heapBytes();
  const exact = new ExactHashIndex();
  const digest = new Uint8Array(32);
  for (let i = 0; i < 1_000_000; i++) {
    randomWords(words);
    digest.set(new Uint8Array(words.buffer));
    exact.add("sha256", Buffer.from(digest).toString("hex"), i);
  }
  const exactBytes = heapBytes() - exactBefore;
  if (exact.size !== 1_000_000) throw new Error("the exact index lost entries");
  return {
    rounds: ROUNDS,
    queries: QUERIES,
    lookupsOnly: !!opts.lookupsOnly,
    hashing: inputs.map((input, i) => ({
      label: input.label,
      cpuMsPerMp: median(hashing[i]!.cpu),
      wallMsPerMp: median(hashing[i]!.wall),
      decodeCpuMsPerMp: median(hashing[i]!.decodeCpu),
      decodeWallMsPerMp: median(hashing[i]!.decodeWall),
    })),
    lookups,
    exactBytesPerMillion: exactBytes,
  };
}

// ---------------------------------------------------------------------------------------------
// Output

const us = (ms: number) => (ms * 1000).toFixed(ms < 0.1 ? 1 : 0);
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

export function renderPdq(f: PdqFigures): string {
  const lines: string[] = [];
  lines.push(`PDQ on this machine (${f.lookupsOnly ? "lookups only" : `${f.rounds} rounds alternating, medians`}; ${f.queries} lookups per index)`, "");
  if (!f.lookupsOnly) {
    lines.push(
      markdownTable(
        ["Hash, decoding included", "CPU ms / MP", "wall ms / MP", "decoding alone (floor): CPU ms / MP", "wall ms / MP"],
        f.hashing.map((h) => [h.label, fmtMs(h.cpuMsPerMp), fmtMs(h.wallMsPerMp), fmtMs(h.decodeCpuMsPerMp), fmtMs(h.decodeWallMsPerMp)]),
      ),
    );
    lines.push("");
  }
  lines.push(
    markdownTable(
      ["One PDQ lookup (distance 31)", "median µs", "p99 µs", "CPU median µs", "CPU p99 µs", `goal at 1M: ≤ ${GOAL_MS} ms`],
      f.lookups.map((l) => [
        `${l.entries.toLocaleString("en-US")} entries`,
        us(median(l.wall)),
        us(percentile(l.wall, 99)),
        us(median(l.cpu)),
        us(percentile(l.cpu, 99)),
        l.entries === 1_000_000 ? (median(l.wall) <= GOAL_MS ? "met (wall median)" : median(l.cpu) <= GOAL_MS ? "met in CPU, not in wall (a busy machine?)" : "missed") : "—",
      ]),
    ),
  );
  lines.push("");
  lines.push(
    markdownTable(
      ["Building the index (one add per entry, then the first lookup)", "wall ms", "CPU ms"],
      f.lookups.map((l) => [`${l.entries.toLocaleString("en-US")} entries`, fmtMs(l.build.wall), fmtMs(l.build.cpu)]),
    ),
  );
  lines.push("");
  lines.push(
    markdownTable(
      ["Memory per million entries", "bytes"],
      [
        ...f.lookups.map((l) => [`PDQ index of ${l.entries.toLocaleString("en-US")} entries (its typed arrays), per million`, mb((l.bytes * 1_000_000) / l.entries)]),
        ["exact SHA-256 index (Map of hex digests), heap after collection", mb(f.exactBytesPerMillion)],
      ],
    ),
  );
  return lines.join("\n");
}

if (import.meta.main) {
  const { values: args } = parseArgs({
    args: process.argv.slice(2),
    options: { rounds: { type: "string", default: "7" }, queries: { type: "string", default: "200" }, large: { type: "boolean" }, "lookups-only": { type: "boolean" } },
  });
  console.log(renderPdq(pdqFigures({ rounds: Number(args.rounds), queries: Number(args.queries), large: args.large, lookupsOnly: args["lookups-only"] })));
}
