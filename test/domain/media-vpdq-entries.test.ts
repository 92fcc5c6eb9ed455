/**
 * Bank entries of signal type vpdq, a whole banked video (issue 43, docs/media.md, "Video"), in
 * process: the entry's value read and refused with its reason, stored as its frames and their
 * digest (the same video banked twice is one entry), counted in its view and exported whole; the
 * index matching a video by vPDQ's rule with its bank's distance and floor, a video's frames
 * still matching PDQ entries, and no frame read when the index holds neither; banking a video's
 * frames from a decision at the bank's floor.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { caseMedia, mediaMatches } from "../../src/db/schema.ts";
import { signalsToBank } from "../../src/domain/banks/banking.ts";
import { addEntry, createBank, exportEntries, importEntries, listEntries, storedSignal, type BankRow } from "../../src/domain/banks/banks.ts";
import { matchMedia } from "../../src/domain/banks/matching.ts";
import { transaction } from "../../src/domain/core/context.ts";
import { DomainError } from "../../src/domain/core/errors.ts";
import { createReport } from "../../src/domain/intake/reports.ts";
import { hitsOf, indexOf } from "../../src/domain/intake/signal-index.ts";
import { formatVpdq, parseVpdq } from "../../src/domain/media/vpdq.ts";
import { domainWorld, type DomainWorld } from "../helpers/builders.ts";
import { seededPdq, videoOf as video } from "../helpers/pdq-hashes.ts";

const { randomHash, flip } = seededPdq(0x9e3779b9);

const bankRow = (id: string, pdqDistance = 31, qualityFloor = 50): BankRow => ({
  id,
  orgId: "o",
  projectId: "p",
  name: id,
  description: null,
  enabled: 1,
  negative: 0,
  action: JSON.stringify({ type: "record" }),
  pdqDistance,
  qualityFloor,
  quarantineCount: null,
  quarantineWindowMs: null,
  createdAt: 0,
  updatedAt: 0,
  deletedAt: null,
});
const noHashes = { sha256: null, md5: null, pdq: null, pdqQuality: null };

describe("a vpdq entry's value (pure: the same on either engine)", () => {
  test("read from HMA's JSON or vpdq-hash-video's lines into one stored form: the frames, and their SHA-256 as value", () => {
    const frames = video([randomHash(), randomHash(), randomHash()], 90);
    const json = storedSignal("vpdq", formatVpdq(frames).toUpperCase().replace(/"([0-9A-F]{64}),/g, (_, h: string) => `"${h},`));
    const lines = storedSignal("vpdq", frames.map((f, i) => `${i},${f.quality},${f.hash.toUpperCase()},${f.timestamp}`).join("\n"));
    expect("error" in json).toBe(false);
    expect(lines).toEqual(json);
    if ("error" in json) return;
    expect(json.frames).toBe(formatVpdq(frames));
    expect(json.value).toBe(new Bun.CryptoHasher("sha256").update(formatVpdq(frames)).digest("hex"));
    expect(parseVpdq(json.frames!)).toEqual(frames);
  });

  test("refused with what is wrong: not JSON, an empty list, a short hash, a quality over 100, too many frames; hex types keep their form", () => {
    const h = randomHash();
    expect(storedSignal("vpdq", "nope")).toEqual({ error: 'not a vpdq signal: frame 1: "frame,quality,hash,timestamp" was expected' });
    expect(storedSignal("vpdq", "[]")).toEqual({ error: "not a vpdq signal: a vPDQ signal holds at least one frame" });
    expect(storedSignal("vpdq", JSON.stringify([`${h},100,0.000`, `${h.slice(2)},100,1.000`]))).toEqual({ error: "not a vpdq signal: frame 2: the hash is not 64 hexadecimal digits" });
    expect(storedSignal("vpdq", JSON.stringify([`${h},101,0.000`]))).toEqual({ error: "not a vpdq signal: frame 1: the quality is not a whole number from 0 to 100" });
    expect(storedSignal("vpdq", JSON.stringify(Array.from({ length: 7_201 }, (_, i) => `${h},100,${i}.000`)))).toEqual({ error: "not a vpdq signal: a vPDQ signal holds at most 7200 frames" });
    expect(storedSignal("md5", "ab")).toEqual({ error: "not a md5 hash (32 hexadecimal digits)" });
    expect(storedSignal("pdq", h.toUpperCase())).toEqual({ value: h, frames: null });
  });
});

describe("the index with banked videos (pure: the same on either engine)", () => {
  const banked = video(Array.from({ length: 20 }, randomHash));
  const other = video(Array.from({ length: 20 }, randomHash));
  const picture = randomHash();
  const rows = [
    { id: "video", bankId: "b", signalType: "vpdq" as const, ...(storedSignal("vpdq", formatVpdq(banked)) as { value: string; frames: string }) },
    { id: "picture", bankId: "b", signalType: "pdq" as const, value: picture, frames: null },
  ];
  const index = indexOf(1, [bankRow("b", 31, 50)], rows);

  test("a re-encoded copy (each frame a few bits off) and a clip cut from it match the banked video; the distance is the nearest pair of frames', no quality", () => {
    const copy = banked.map((f) => ({ ...f, hash: flip(f.hash, 8), quality: 80 }));
    const hits = hitsOf(index, { ...noHashes, vpdq: formatVpdq(copy) });
    expect(hits.map((h) => [h.entryId, h.signalType, h.quality])).toEqual([["video", "vpdq", null]]);
    expect(hits[0]!.distance).toBe(8);
    const clip = banked.slice(5, 9).map((f, i) => ({ ...f, timestamp: i }));
    expect(hitsOf(index, { ...noHashes, vpdq: formatVpdq(clip) }).map((h) => h.entryId)).toEqual(["video"]);
  });

  test("another video does not match; a video of which under 80 % of the frames are the banked one's does not either; a frame showing a banked picture still matches its PDQ entry", () => {
    expect(hitsOf(index, { ...noHashes, vpdq: formatVpdq(other) })).toEqual([]);
    const mixed = [...banked.slice(0, 15), ...other.slice(0, 5)]; // 75 %
    expect(hitsOf(index, { ...noHashes, vpdq: formatVpdq(mixed) })).toEqual([]);
    const padded = [...banked.slice(0, 16), ...other.slice(0, 4)]; // 80 %
    expect(hitsOf(index, { ...noHashes, vpdq: formatVpdq(padded) }).map((h) => h.entryId)).toEqual(["video"]);
    const withPicture = [...other, { hash: flip(picture, 3), quality: 70, timestamp: 20 }];
    expect(hitsOf(index, { ...noHashes, vpdq: formatVpdq(withPicture) }).map((h) => [h.entryId, h.distance, h.quality])).toEqual([["picture", 3, 70]]);
  });

  test("each banked video with its bank's distance and quality floor", () => {
    const strict = indexOf(1, [bankRow("b", 4, 95)], rows);
    const copy = banked.map((f) => ({ ...f, hash: flip(f.hash, 8) }));
    expect(hitsOf(strict, { ...noHashes, vpdq: formatVpdq(copy) })).toEqual([]); // 8 bits off, 4 allowed
    expect(hitsOf(strict, { ...noHashes, vpdq: formatVpdq(banked.map((f) => ({ ...f, quality: 90 }))) })).toEqual([]); // under the floor
    expect(hitsOf(strict, { ...noHashes, vpdq: formatVpdq(banked) }).map((h) => h.entryId)).toEqual(["video"]);
  });

  test("no frame is read when the index holds no PDQ nor vpdq entry (intake's hash-only media cost nothing more)", () => {
    const exactOnly = indexOf(1, [bankRow("b")], [{ id: "digest", bankId: "b", signalType: "sha256", value: "a".repeat(64), frames: null }]);
    expect(hitsOf(exactOnly, { ...noHashes, sha256: "a".repeat(64), vpdq: "not frames at all" }).map((h) => h.entryId)).toEqual(["digest"]);
    expect(() => hitsOf(index, { ...noHashes, vpdq: "not frames at all" })).toThrow();
  });
});

describe("banking a video from a decision (pure)", () => {
  test("its frames of quality at the bank's floor or above as one vpdq entry, with its digests; a video with none there counted under the floor", () => {
    const frames = [...video([randomHash(), randomHash()], 80), ...video([randomHash()], 20)];
    const { signals, belowFloor } = signalsToBank([{ ...noHashes, sha256: "b".repeat(64), md5: "c".repeat(32), vpdq: formatVpdq(frames) }], 50);
    expect(belowFloor).toBe(0);
    expect(signals.map((s) => s.signalType)).toEqual(["sha256", "md5", "vpdq"]);
    const banked = signals.find((s) => s.signalType === "vpdq")!;
    expect(banked).toEqual({ signalType: "vpdq", ...(storedSignal("vpdq", formatVpdq(frames.slice(0, 2))) as { value: string; frames: string }) });
    expect(signalsToBank([{ ...noHashes, vpdq: formatVpdq(frames) }], 90)).toEqual({ signals: [], belowFloor: 1 });
  });
});

describe("vpdq entries stored, listed, exported and matched (both engines)", () => {
  let w: DomainWorld;
  beforeAll(async () => {
    w = await domainWorld();
  });
  afterAll(async () => {
    await w.close();
  });

  test("added with its frames counted; the same video again (another form) is a 409; a bad one a 400 naming the frame; export writes the frames, which import again", async () => {
    const bank = await createBank(w.ctx, { projectId: w.project.id, name: `Videos ${crypto.randomUUID()}` });
    const frames = video(Array.from({ length: 12 }, randomHash));
    const entry = await addEntry(w.ctx, { bankId: bank.id, signalType: "vpdq", value: formatVpdq(frames), origin: "test" });
    expect(entry).toMatchObject({ signalType: "vpdq", frames: 12, value: (storedSignal("vpdq", formatVpdq(frames)) as { value: string }).value });
    const lines = frames.map((f, i) => `${i},${f.quality},${f.hash.toUpperCase()},${f.timestamp}`).join("\n");
    const again = await addEntry(w.ctx, { bankId: bank.id, signalType: "vpdq", value: lines }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(DomainError);
    expect((again as DomainError).message).toBe("The bank holds this signal already");
    const bad = await addEntry(w.ctx, { bankId: bank.id, signalType: "vpdq", value: JSON.stringify([`${frames[0]!.hash},100,0.000`, "zz,100,1.000"]) }).catch((e: unknown) => e);
    expect((bad as DomainError).message).toBe("value: not a vpdq signal: frame 2: the hash is not 64 hexadecimal digits");
    expect((await listEntries(w.ctx, { bankId: bank.id, limit: 10 })).entries.map((e) => [e.signalType, e.frames])).toEqual([["vpdq", 12]]);

    for (const format of ["csv", "json"] as const) {
      const file = await exportEntries(w.ctx, { bankId: bank.id, format });
      expect(file.content).toContain(frames[11]!.hash);
      const copy = await createBank(w.ctx, { projectId: w.project.id, name: `Copy ${format} ${crypto.randomUUID()}` });
      expect(await importEntries(w.ctx, { bankId: copy.id, format, content: file.content })).toEqual({ added: 1, unchanged: 0, errors: [] });
      const [imported] = (await listEntries(w.ctx, { bankId: copy.id, limit: 10 })).entries;
      expect(imported).toMatchObject({ signalType: "vpdq", value: entry.value, frames: 12, origin: "test" });
    }
  });

  test("a case's video whose frames are a copy of a banked video's is matched by it", async () => {
    const bank = await createBank(w.ctx, { projectId: w.project.id, name: `Match ${crypto.randomUUID()}` });
    const frames = video(Array.from({ length: 10 }, randomHash));
    const entry = await addEntry(w.ctx, { bankId: bank.id, signalType: "vpdq", value: formatVpdq(frames) });
    const created = await createReport(w.platform, { project: w.project, subject: { type: "user", externalId: `u-${crypto.randomUUID()}` }, reasonNames: ["spam"], automated: false, media: [{ sha256: randomHash() }] });
    const [row] = await w.platform.db.select().from(caseMedia).where(eq(caseMedia.reportId, created.report.id));
    const copy = frames.map((f) => ({ ...f, hash: flip(f.hash, 6), quality: 70 }));
    const media = { ...row!, vpdq: formatVpdq(copy), frameHashing: "vpdq" as const };
    await transaction(w.ctx, () => w.ctx.db.update(caseMedia).set({ vpdq: media.vpdq, frameHashing: "vpdq" }).where(eq(caseMedia.id, row!.id))); // as the media job records a video's frames
    expect(await matchMedia(w.platform, media)).toHaveLength(1);
    const matches = await w.platform.db.select().from(mediaMatches).where(eq(mediaMatches.mediaId, row!.id));
    expect(matches.map((m) => [m.entryId, m.distance, m.quality])).toEqual([[entry.id, 6, null]]);
  });
});
