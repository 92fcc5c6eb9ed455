/**
 * The preview thread's module (preview-thread.ts): one task at a time, off the thread that
 * serves requests: an attachment's preview (with its PDQ hash, from the same decoding), or a
 * fetched file's hashes (SHA-256, MD5, its type from its bytes, and an image's PDQ hash), or a
 * video frame's PDQ hash (video-frames.ts reads the frames from ffmpeg). It
 * answers the result or the refusal's reason and message.
 */
import { makePreview } from "./preview.ts";
import { pdqHash } from "./pdq.ts";
import { applyNicenessMessage } from "../plumbing/thread-priority.ts";
import { hashMedia } from "./hash-media.ts";
import { MediaRefusal, type MediaRefusalReason } from "./refusals.ts";
import type { PdqResult } from "./pdq.ts";
import type { MediaHashes } from "./hash-media.ts";

export type PreviewTask =
  | { id: number; kind: "preview"; bytes: Uint8Array; maxPixels: number; maxSide: number }
  | { id: number; kind: "hash"; bytes: Uint8Array; maxPixels: number }
  | { id: number; kind: "frame"; rgba: Uint8Array; width: number; height: number };

export type PreviewAnswer =
  | { id: number; jpeg: Uint8Array; width: number; height: number; pdq: PdqResult }
  | { id: number; hashes: MediaHashes }
  | { id: number; frame: PdqResult }
  | { id: number; refused: MediaRefusalReason; message: string }
  | { id: number; error: string };

declare const self: Worker;

self.onmessage = (event: MessageEvent<PreviewTask>) => {
  if (applyNicenessMessage(event.data)) return;
  const task = event.data;
  let answer: PreviewAnswer;
  try {
    if (task.kind === "frame") {
      answer = { id: task.id, frame: pdqHash({ width: task.width, height: task.height, rgba: task.rgba }) };
    } else if (task.kind === "hash") {
      answer = { id: task.id, hashes: hashMedia(task.bytes, { maxPixels: task.maxPixels }) };
    } else {
      const p = makePreview(task.bytes, { maxPixels: task.maxPixels, maxSide: task.maxSide });
      answer = { id: task.id, jpeg: p.jpeg, width: p.width, height: p.height, pdq: p.pdq };
    }
  } catch (err) {
    answer = err instanceof MediaRefusal ? { id: task.id, refused: err.reason, message: err.message } : { id: task.id, error: err instanceof Error ? err.message : String(err) };
  }
  self.postMessage(answer);
};
