/**
 * The ffmpeg runner (src/domain/media/video-frames.ts) in process, with Debian's ffmpeg
 * (scripts/ensure-ffmpeg.sh installs it for the tests): one frame a second read from its pipe a
 * frame at a time, the length bound, a cut or false video refused with ffmpeg's reason, the pixel
 * bound, ffmpeg killed on the time bound (its process gone), and no more processes at once than
 * the setting. The videos are made by ffmpeg itself from lavfi's test pattern and ThreatExchange's
 * bridge photograph. No database: the same on either engine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeImage } from "../src/domain/media/decode.ts";
import { hammingDistance, pdqHash, type PdqResult, type RgbaImage } from "../src/domain/media/pdq.ts";
import { makeVideo } from "./helpers/video.ts";
import { ffmpegArguments, resolveFfmpeg, sampleVideoFrames, videoProcessesRunning, type VideoSettings } from "../src/domain/media/video-frames.ts";

const FFMPEG = resolveFfmpeg(null);
const dir = mkdtempSync(join(tmpdir(), "video-frames-"));
const BRIDGE = join(import.meta.dir, "fixtures", "pdq", "bridge-aaa-orig.jpg");

const settings = (over: Partial<Omit<VideoSettings, "ffmpegPath"> & { maxPixels: number }> = {}): VideoSettings & { ffmpegPath: string; maxPixels: number } => ({ maxSeconds: 10, timeoutMs: 20_000, concurrency: 1, maxPixels: 50_000_000, ...over, ffmpegPath: FFMPEG! });
const hashHere = async (image: RgbaImage): Promise<PdqResult> => pdqHash(image);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

let pattern: string; // 5 s of lavfi's test pattern, H.264
let bridge: string; // 4 s of the bridge photograph, VP8
beforeAll(async () => {
  expect(FFMPEG, "ffmpeg on the PATH (bash scripts/ensure-ffmpeg.sh installs it)").not.toBeNull();
  pattern = await makeVideo(FFMPEG!, ["-f", "lavfi", "-i", "testsrc=duration=5:size=320x240:rate=10", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast"], join(dir, "pattern.mp4"));
  bridge = await makeVideo(FFMPEG!, ["-loop", "1", "-framerate", "10", "-t", "4", "-i", BRIDGE, "-vf", "scale=240:180", "-c:v", "libvpx", "-b:v", "100k", "-deadline", "realtime"], join(dir, "bridge.webm"));
}, 60_000); // two encodings by ffmpeg, on a shared machine
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("sampling a video with ffmpeg (no database: the same on either engine)", () => {
  test("one frame a second, each hashed as it is read: 5 frames of a 5-second pattern, 4 of the bridge within PDQ's distance of the photograph", async () => {
    const p = await sampleVideoFrames(pattern, "mp4", settings(), hashHere);
    expect(p.refusal).toBeNull();
    expect(p.frames.map((f) => f.timestamp)).toEqual([0, 1, 2, 3, 4]);
    expect(p.frames.every((f) => f.quality >= 50 && /^[0-9a-f]{64}$/.test(f.hash))).toBe(true);
    expect(new Set(p.frames.map((f) => f.hash)).size).toBe(5); // the pattern's counter moves

    const photo = pdqHash(decodeImage(new Uint8Array(readFileSync(BRIDGE)))).hash;
    const b = await sampleVideoFrames(bridge, "webm", settings(), hashHere);
    expect(b.refusal).toBeNull();
    expect(b.frames).toHaveLength(4);
    const distances = b.frames.map((f) => hammingDistance(f.hash, photo));
    console.log(`bridge video's frames: distances to the photograph ${distances.join(", ")}`);
    expect(Math.max(...distances)).toBeLessThanOrEqual(31);
    expect(Math.min(...p.frames.map((f) => hammingDistance(f.hash, photo)))).toBeGreaterThan(31);
  });

  test("longer than the bound: the first seconds' frames kept, refused too_long", async () => {
    const r = await sampleVideoFrames(pattern, "mp4", settings({ maxSeconds: 3 }), hashHere);
    expect(r.frames).toHaveLength(3);
    expect(r.refusal?.reason).toBe("too_long");
    expect(r.refusal?.message).toContain("longer than 3 seconds (FLAGSTAFF_VIDEO_MAX_SECONDS)");
  });

  test("a cut file, and bytes that only start like an MP4: refused corrupt with ffmpeg's reason, the temporary path not shown", async () => {
    const whole = new Uint8Array(readFileSync(pattern));
    const cut = join(dir, "cut.mp4");
    writeFileSync(cut, whole.subarray(0, Math.floor(whole.length / 2)));
    const c = await sampleVideoFrames(cut, "mp4", settings(), hashHere);
    expect(c.frames).toEqual([]);
    expect(c.refusal?.reason).toBe("corrupt");
    expect(c.refusal?.message).toMatch(/^ffmpeg could not read the video: .+/);
    expect(c.refusal?.message).not.toContain(dir);

    const fake = join(dir, "fake.mp4");
    writeFileSync(fake, new Uint8Array([0, 0, 0, 0x18, ...new TextEncoder().encode("ftypisom"), 0, 0, 2, 0, ...new TextEncoder().encode("isomiso2"), ...crypto.getRandomValues(new Uint8Array(5000))]));
    const f = await sampleVideoFrames(fake, "mp4", settings(), hashHere);
    expect(f.frames).toEqual([]);
    expect(f.refusal?.reason).toBe("corrupt");
  });

  test("a WebM read as an MP4 is refused (the demuxer is the sniffed type's, never ffmpeg's guess)", async () => {
    const r = await sampleVideoFrames(bridge, "mp4", settings(), hashHere);
    expect(r.frames).toEqual([]);
    expect(r.refusal?.reason).toBe("corrupt");
  });

  test("pictures over the pixel bound: refused too_many_pixels before any frame", async () => {
    const r = await sampleVideoFrames(pattern, "mp4", settings({ maxPixels: 320 * 240 - 1 }), hashHere);
    expect(r.frames).toEqual([]);
    expect(r.refusal).toEqual({ reason: "too_many_pixels", message: `The video's pictures have more pixels than the limit of ${320 * 240 - 1} (FLAGSTAFF_ATTACHMENT_MAX_PIXELS)` });
  });

  test("the time bound: ffmpeg killed (its process gone), the frames read before kept, refused timed_out", async () => {
    let pid = 0;
    // Each frame's hash takes 400 ms: ffmpeg waits on its full pipe until the bound kills it.
    const slow = async (image: RgbaImage) => {
      await Bun.sleep(400);
      return pdqHash(image);
    };
    const started = performance.now();
    const r = await sampleVideoFrames(pattern, "mp4", settings({ timeoutMs: 300 }), slow, (p) => (pid = p));
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(false);
    expect(r.refusal?.reason).toBe("timed_out");
    expect(r.refusal?.message).toContain("not decoded within 300 ms (FLAGSTAFF_VIDEO_TIMEOUT_MS): ffmpeg was stopped");
    expect(r.frames.length).toBeLessThan(5);
    expect(performance.now() - started).toBeLessThan(5 * 400);
  });

  test("no more ffmpeg processes at once than the setting", async () => {
    let most = 0;
    const watch = async (image: RgbaImage) => {
      most = Math.max(most, videoProcessesRunning());
      await Bun.sleep(20);
      return pdqHash(image);
    };
    const all = await Promise.all([1, 2, 3].map(() => sampleVideoFrames(pattern, "mp4", settings({ concurrency: 1 }), watch)));
    expect(all.map((r) => r.frames.length)).toEqual([5, 5, 5]);
    expect(most).toBe(1);
    expect(videoProcessesRunning()).toBe(0);
    most = 0;
    await Promise.all([1, 2, 3].map(() => sampleVideoFrames(pattern, "mp4", settings({ concurrency: 2 }), watch)));
    expect(most).toBe(2);
  });

  test("the arguments: no standard input, the file protocol only, the demuxer forced, one thread, the bounds", () => {
    const args = ffmpegArguments("/tmp/x.mp4", "mp4", { maxPixels: 1000, maxFrames: 11 });
    const after = (flag: string) => args[args.indexOf(flag) + 1];
    expect(args[0]).toBe("-nostdin");
    expect(after("-protocol_whitelist")).toBe("file");
    expect(after("-f")).toBe("mov");
    expect(after("-threads")).toBe("1");
    expect(after("-max_pixels")).toBe("1000");
    expect(after("-frames:v")).toBe("11");
    expect(after("-vf")).toBe("fps=1/1,scale=512:512");
    expect(args.indexOf("-protocol_whitelist")).toBeLessThan(args.indexOf("-i"));
    expect(ffmpegArguments("/tmp/x.webm", "webm", { maxPixels: 1, maxFrames: 1 })).toContain("matroska");
  });

  test("FLAGSTAFF_FFMPEG_PATH naming no executable: no ffmpeg (video then gets SHA-256 and MD5 only)", () => {
    expect(resolveFfmpeg(join(dir, "no-such-ffmpeg"))).toBeNull();
    expect(resolveFfmpeg(dir)).toBeNull(); // a directory
    expect(resolveFfmpeg(FFMPEG)).toBe(FFMPEG);
  });
});
