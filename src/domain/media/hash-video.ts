/**
 * A video's vPDQ frame hashes (docs/media.md, "Video"): its bytes written to a private temporary
 * file (ffmpeg needs to seek in an MP4), sampled by ffmpeg in a child process (video-frames.ts),
 * each frame's PDQ hash computed on the preview thread: nothing of it on the thread that serves
 * requests. Null when the host has no ffmpeg: the video is matched by SHA-256 and MD5 only.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pdqFrameOffThread } from "./preview-thread.ts";
import { sampleVideoFrames, type VideoFrames, type VideoSettings, type VideoType } from "./video-frames.ts";

export async function hashVideo(
  source: Uint8Array | ((path: string) => Promise<unknown>),
  type: VideoType,
  settings: VideoSettings & { maxPixels: number },
  onSpawn?: (pid: number) => void,
): Promise<VideoFrames | null> {
  if (settings.ffmpegPath === null) return null;
  const dir = await mkdtemp(join(tmpdir(), "flagstaff-video-"));
  try {
    const path = join(dir, `video.${type}`);
    // The bytes in hand (a fetched URL's), or written by the caller (a stored attachment, streamed).
    if (typeof source === "function") await source(path);
    else await writeFile(path, source, { mode: 0o600 });
    return await sampleVideoFrames(path, type, { ...settings, ffmpegPath: settings.ffmpegPath }, pdqFrameOffThread, onSpawn);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
