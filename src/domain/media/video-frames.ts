/**
 * A video's frames, one a second, by Debian's `ffmpeg` in a child process (docs/media.md,
 * "Video"): the process decodes, samples (`fps=1`) and scales each frame to 512 x 512 RGBA,
 * written raw to its standard output, read here a frame at a time and handed to `hashFrame`
 * (PDQ on the preview thread) before the next is read, so that at most one frame is held and
 * ffmpeg waits on its pipe meanwhile. No shell: an argument array; no network (the input's
 * protocols are `file` alone, its demuxer forced to the one its sniffed type names, so a
 * playlist or a reference to another file is not followed); no standard input; one decoding
 * thread; at most `maxPixels` a decoded picture; at most `maxSeconds` frames read; killed after
 * `timeoutMs`; at most `concurrency` processes at once in this process.
 *
 * Without ffmpeg (not on the PATH, or FLAGSTAFF_FFMPEG_PATH not an executable) a video gets its
 * SHA-256 and MD5 only: `resolveFfmpeg` answers null and callers do not call `sampleVideoFrames`.
 */
import { accessSync, constants, statSync } from "node:fs";
import type { PdqResult, RgbaImage } from "./pdq.ts";
import type { MediaRefusalReason } from "./refusals.ts";
import { VPDQ_SECONDS_PER_FRAME, type VpdqFrame } from "./vpdq.ts";

/** Each sampled frame is scaled to this many pixels a side: PDQ's own resampling size (pdq.ts). */
export const VIDEO_FRAME_SIDE = 512;
const FRAME_BYTES = VIDEO_FRAME_SIDE * VIDEO_FRAME_SIDE * 4;
/** The end of ffmpeg's error output kept for the refusal's message. */
const STDERR_KEPT = 4096;

export interface VideoSettings {
  /** The ffmpeg executable (resolveFfmpeg), or null: video is matched by SHA-256 and MD5 only. */
  ffmpegPath: string | null;
  /** The most seconds (frames) of a video hashed (FLAGSTAFF_VIDEO_MAX_SECONDS); a longer one keeps these and is refused `too_long`. */
  maxSeconds: number;
  /** ffmpeg is killed after this long (FLAGSTAFF_VIDEO_TIMEOUT_MS). */
  timeoutMs: number;
  /** ffmpeg processes at once in this process (FLAGSTAFF_VIDEO_CONCURRENCY). */
  concurrency: number;
}

/** The video types of the allowlist (sniff.ts) and the demuxer ffmpeg is told to use for each. */
export const VIDEO_DEMUXERS = { mp4: "mov", webm: "matroska" } as const satisfies Record<string, string>;
export type VideoType = keyof typeof VIDEO_DEMUXERS;
export const isVideoType = (type: string): type is VideoType => Object.hasOwn(VIDEO_DEMUXERS, type);

export interface VideoFrames {
  frames: VpdqFrame[];
  /** Why the video was not hashed whole (its frames read before it, if any, are kept), or null. */
  refusal: { reason: MediaRefusalReason; message: string } | null;
}

// ---------------------------------------------------------------------------------------------
// Finding ffmpeg

const resolved = new Map<string, string | null>();

/**
 * The ffmpeg to run: `configured` (FLAGSTAFF_FFMPEG_PATH) when set, which must be an executable
 * file, else `ffmpeg` on the PATH; null when there is none. Answered once per setting.
 */
export function resolveFfmpeg(configured: string | null): string | null {
  const key = configured ?? "";
  if (resolved.has(key)) return resolved.get(key)!;
  let found: string | null = null;
  if (configured) {
    try {
      if (statSync(configured).isFile()) {
        accessSync(configured, constants.X_OK);
        found = configured;
      }
    } catch {
      found = null;
    }
  } else {
    found = Bun.which("ffmpeg");
  }
  resolved.set(key, found);
  return found;
}

// ---------------------------------------------------------------------------------------------
// The processes at once

let running = 0;
const waiting: (() => void)[] = [];

async function slot(limit: number): Promise<() => void> {
  while (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  return () => {
    running--;
    waiting.shift()?.();
  };
}

/** ffmpeg processes running now in this process (for tests and figures). */
export const videoProcessesRunning = (): number => running;

// ---------------------------------------------------------------------------------------------
// Sampling

/** ffmpeg's arguments for a file of `type`: every bound is here. */
export function ffmpegArguments(input: string, type: VideoType, opts: { maxPixels: number; maxFrames: number }): string[] {
  return [
    "-nostdin",
    "-hide_banner",
    "-loglevel", "error",
    // The input: this file only, read by the demuxer of its sniffed type, one decoding thread, a bounded picture.
    "-protocol_whitelist", "file",
    "-threads", "1",
    "-max_pixels", String(opts.maxPixels),
    "-f", VIDEO_DEMUXERS[type],
    "-i", input,
    // The output: the first video stream's frames, one a second, 512 x 512 RGBA, raw to the pipe.
    "-map", "0:v:0",
    "-an", "-sn", "-dn",
    "-filter_threads", "1",
    "-vf", `fps=1/${VPDQ_SECONDS_PER_FRAME},scale=${VIDEO_FRAME_SIDE}:${VIDEO_FRAME_SIDE}`,
    "-frames:v", String(opts.maxFrames),
    "-f", "rawvideo",
    "-pix_fmt", "rgba",
    "pipe:1",
  ];
}

/**
 * The frames of the video at `path` (a file of the sniffed `type`), each hashed by `hashFrame`
 * as it is read. Never throws for a bad video: its refusal says why (ffmpeg's own message, the
 * time bound, the length bound). `onSpawn` sees the process's id (tests check it is gone).
 */
export async function sampleVideoFrames(
  path: string,
  type: VideoType,
  settings: VideoSettings & { ffmpegPath: string; maxPixels: number },
  hashFrame: (image: RgbaImage) => Promise<PdqResult>,
  onSpawn?: (pid: number) => void,
): Promise<VideoFrames> {
  const release = await slot(settings.concurrency);
  try {
    return await run(path, type, settings, hashFrame, onSpawn);
  } finally {
    release();
  }
}

async function run(path: string, type: VideoType, settings: VideoSettings & { ffmpegPath: string; maxPixels: number }, hashFrame: (image: RgbaImage) => Promise<PdqResult>, onSpawn?: (pid: number) => void): Promise<VideoFrames> {
  // One frame past the bound tells that the video is longer than it.
  const maxFrames = settings.maxSeconds;
  const proc = Bun.spawn([settings.ffmpegPath, ...ffmpegArguments(path, type, { maxPixels: settings.maxPixels, maxFrames: maxFrames + 1 })], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" },
  });
  onSpawn?.(proc.pid);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, settings.timeoutMs);
  let stderr = "";
  const stderrRead = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of chunks(proc.stderr)) stderr = (stderr + decoder.decode(chunk, { stream: true })).slice(-STDERR_KEPT);
  })().catch(() => {});

  const frames: VpdqFrame[] = [];
  let tooLong = false;
  try {
    let frame = new Uint8Array(FRAME_BYTES);
    let filled = 0;
    reading: for await (const chunk of chunks(proc.stdout)) {
      let offset = 0;
      while (offset < chunk.byteLength) {
        const n = Math.min(FRAME_BYTES - filled, chunk.byteLength - offset);
        frame.set(chunk.subarray(offset, offset + n), filled);
        filled += n;
        offset += n;
        if (filled < FRAME_BYTES) continue;
        if (frames.length === maxFrames) {
          tooLong = true;
          break reading;
        }
        // The frame's buffer goes to the thread (transferred): the next frame gets its own.
        const pdq = await hashFrame({ width: VIDEO_FRAME_SIDE, height: VIDEO_FRAME_SIDE, rgba: frame });
        frames.push({ hash: pdq.hash, quality: pdq.quality, timestamp: frames.length * VPDQ_SECONDS_PER_FRAME });
        frame = new Uint8Array(FRAME_BYTES);
        filled = 0;
      }
    }
  } finally {
    clearTimeout(timer);
    // Stopped early (too long, a failed hash): the process goes now, not when it is done.
    if (proc.exitCode === null) proc.kill("SIGKILL");
    await proc.exited;
    await stderrRead;
  }

  if (tooLong) return { frames, refusal: { reason: "too_long", message: `The video is longer than ${maxFrames} seconds (FLAGSTAFF_VIDEO_MAX_SECONDS): its first ${maxFrames} seconds' frames are hashed` } };
  if (timedOut) return { frames, refusal: { reason: "timed_out", message: `The video was not decoded within ${settings.timeoutMs} ms (FLAGSTAFF_VIDEO_TIMEOUT_MS): ffmpeg was stopped${frames.length ? ` after ${frames.length} frames` : ""}` } };
  if (proc.exitCode !== 0 && /exceeds specified max pixel count/.test(stderr)) return { frames, refusal: { reason: "too_many_pixels", message: `The video's pictures have more pixels than the limit of ${settings.maxPixels} (FLAGSTAFF_ATTACHMENT_MAX_PIXELS)` } };
  if (proc.exitCode !== 0) return { frames, refusal: { reason: "corrupt", message: `ffmpeg could not read the video: ${lastLine(stderr, path) || `exit status ${proc.exitCode}`}` } };
  if (frames.length === 0) return { frames, refusal: { reason: "corrupt", message: "ffmpeg found no video frame in the file" } };
  return { frames, refusal: null };
}

/** A stream's chunks; the stream cancelled when the loop leaves early. */
async function* chunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** ffmpeg's last line of error, without the temporary file's path, short. */
function lastLine(stderr: string, path: string): string {
  const lines = stderr.split("\n").map((l) => l.split(path).join("<file>").trim()).filter(Boolean);
  return (lines.at(-1) ?? "").slice(0, 300);
}
