/**
 * The preview thread's module (preview-thread.ts): makes one preview at a time, off the thread
 * that serves requests, and answers it or the refusal's reason and message.
 */
import { makePreview } from "./preview.ts";
import { MediaRefusal, type MediaRefusalReason } from "./refusals.ts";

export interface PreviewTask {
  id: number;
  bytes: Uint8Array;
  maxPixels: number;
  maxSide: number;
}

export type PreviewAnswer =
  | { id: number; jpeg: Uint8Array; width: number; height: number }
  | { id: number; refused: MediaRefusalReason; message: string }
  | { id: number; error: string };

declare const self: Worker;

self.onmessage = (event: MessageEvent<PreviewTask>) => {
  const task = event.data;
  let answer: PreviewAnswer;
  try {
    const p = makePreview(task.bytes, { maxPixels: task.maxPixels, maxSide: task.maxSide });
    answer = { id: task.id, jpeg: p.jpeg, width: p.width, height: p.height };
  } catch (err) {
    answer = err instanceof MediaRefusal ? { id: task.id, refused: err.reason, message: err.message } : { id: task.id, error: err instanceof Error ? err.message : String(err) };
  }
  self.postMessage(answer);
};
