/**
 * Previews off the serving thread: images are decoded, scaled and encoded on a Worker
 * (./preview-worker.ts), so that no request waits behind a decoding (about 80 ms of CPU a
 * megapixel for JPEG, 190 for PNG: docs/media.md). One thread per process, started on the first
 * preview; previews take it in turn. It holds the process open only while a preview waits on it.
 */
import type { PreviewAnswer, PreviewTask } from "./preview-worker.ts";
import { MediaRefusal } from "./refusals.ts";
import type { Preview } from "./preview.ts";
import type { MediaHashes } from "./hash-media.ts";

interface Waiting {
  resolve: (p: Preview | MediaHashes) => void;
  reject: (e: Error) => void;
}

type Thread = Worker & { ref(): void; unref(): void };

let worker: Thread | null = null;
const waiting = new Map<number, Waiting>();
let lastId = 0;

/** Beside this module from the sources; in the single-file binary, the entrypoint scripts/build.ts embeds. */
const WORKER_MODULE = Bun.main.startsWith("/$bunfs/") ? "/$bunfs/root/src/domain/media/preview-worker.js" : new URL("./preview-worker.ts", import.meta.url).href;

function thread(): Thread {
  if (worker) return worker;
  const started = new Worker(WORKER_MODULE) as Thread;
  started.onmessage = (event: MessageEvent) => {
    const answer = event.data as PreviewAnswer;
    const w = waiting.get(answer.id);
    if (!w) return;
    settle(answer.id);
    if ("jpeg" in answer) w.resolve({ jpeg: answer.jpeg, width: answer.width, height: answer.height, pdq: answer.pdq });
    else if ("hashes" in answer) w.resolve(answer.hashes);
    else if ("refused" in answer) w.reject(new MediaRefusal(answer.refused, answer.message));
    else w.reject(new Error(`preview: ${answer.error}`));
  };
  started.onerror = (event) => {
    // A thread that died (out of memory, say) fails what it held; the next preview starts another.
    if (worker === started) worker = null;
    started.terminate();
    for (const [id, w] of waiting) {
      settle(id);
      w.reject(new Error(`preview thread failed: ${event.message}`));
    }
  };
  started.unref();
  worker = started;
  return started;
}

function settle(id: number): void {
  waiting.delete(id);
  if (waiting.size === 0) worker?.unref();
}

/** The preview of `bytes`, made on the thread (a MediaRefusal when the image is refused). */
export function makePreviewOffThread(bytes: Uint8Array, options: { maxPixels: number; maxSide: number }): Promise<Preview> {
  return run((id) => ({ id, kind: "preview", bytes, maxPixels: options.maxPixels, maxSide: options.maxSide })) as Promise<Preview>;
}

/** The hashes of a fetched file (hash-media.ts), computed on the thread. */
export function hashMediaOffThread(bytes: Uint8Array, options: { maxPixels: number }): Promise<MediaHashes> {
  return run((id) => ({ id, kind: "hash", bytes, maxPixels: options.maxPixels })) as Promise<MediaHashes>;
}

function run(task: (id: number) => PreviewTask): Promise<Preview | MediaHashes> {
  const t = thread();
  const id = ++lastId;
  return new Promise((resolve, reject) => {
    if (waiting.size === 0) t.ref();
    waiting.set(id, { resolve, reject });
    const message = task(id);
    t.postMessage(message, [message.bytes.buffer as ArrayBuffer]);
  });
}
