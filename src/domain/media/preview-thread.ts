/**
 * Previews off the serving thread: images are decoded, scaled and encoded on a Worker
 * (./preview-worker.ts), so that no request waits behind a decoding (about 80 ms of CPU a
 * megapixel for JPEG, 190 for PNG: docs/media.md). One thread per process, started on the first
 * preview; previews take it in turn. It holds the process open only while a preview waits on it.
 */
import { requestThread } from "../plumbing/request-thread.ts";
import type { PreviewAnswer, PreviewTask } from "./preview-worker.ts";
import { MediaRefusal } from "./refusals.ts";
import type { Preview } from "./preview.ts";
import type { MediaHashes } from "./hash-media.ts";
import type { PdqResult, RgbaImage } from "./pdq.ts";

const ask = requestThread<PreviewTask, PreviewAnswer, Preview | MediaHashes | PdqResult>({
  source: new URL("./preview-worker.ts", import.meta.url).href,
  bundled: "src/domain/media/preview-worker.js",
  name: "preview thread",
  background: true,
  settle: (answer) => {
    if ("jpeg" in answer) return { result: { jpeg: answer.jpeg, width: answer.width, height: answer.height, pdq: answer.pdq } };
    if ("hashes" in answer) return { result: answer.hashes };
    if ("frame" in answer) return { result: answer.frame };
    if ("refused" in answer) return { error: new MediaRefusal(answer.refused, answer.message) };
    return { error: new Error(`preview: ${answer.error}`) };
  },
});

/** The preview of `bytes`, made on the thread (a MediaRefusal when the image is refused). */
export function makePreviewOffThread(bytes: Uint8Array, options: { maxPixels: number; maxSide: number }): Promise<Preview> {
  return run((id) => ({ id, kind: "preview", bytes, maxPixels: options.maxPixels, maxSide: options.maxSide })) as Promise<Preview>;
}

/** The hashes of a fetched file (hash-media.ts), computed on the thread. */
export function hashMediaOffThread(bytes: Uint8Array, options: { maxPixels: number }): Promise<MediaHashes> {
  return run((id) => ({ id, kind: "hash", bytes, maxPixels: options.maxPixels })) as Promise<MediaHashes>;
}

/** A video frame's PDQ hash (video-frames.ts), computed on the thread; the frame's pixels are handed over, not copied. */
export function pdqFrameOffThread(image: RgbaImage): Promise<PdqResult> {
  return ask((id) => ({ id, kind: "frame", rgba: image.rgba, width: image.width, height: image.height }), (message) => [(message as { rgba: Uint8Array }).rgba.buffer as ArrayBuffer]) as Promise<PdqResult>;
}

/** The task, its bytes handed over to the thread rather than copied. */
function run(task: (id: number) => PreviewTask): Promise<Preview | MediaHashes> {
  return ask(task, (message) => ("bytes" in message ? [message.bytes.buffer as ArrayBuffer] : [])) as Promise<Preview | MediaHashes>;
}
