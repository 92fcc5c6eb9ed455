/**
 * A spooled upload inspected off the serving thread (./inspect-worker.ts): its SHA-256 (a few
 * hundred milliseconds of CPU for 50 MB on the benchmark machine), its first bytes and whether
 * the rest is text, read from the file the upload was written to, so that no request waits
 * behind an upload's hashing. One thread per process, started on the first upload; uploads take
 * it in turn. It holds the process open only while an upload waits on it.
 */
import type { InspectAnswer, InspectTask } from "./inspect-worker.ts";

export interface Inspection {
  size: number;
  sha256: string;
  head: Uint8Array;
  tailIsText: boolean;
}

/** A file the thread could not read (its code, ENOENT or EIO, kept for the caller). */
export class InspectionFailed extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

type Thread = Worker & { ref(): void; unref(): void };

let worker: Thread | null = null;
let lastId = 0;
const waiting = new Map<number, { resolve: (i: Inspection) => void; reject: (e: Error) => void }>();

/** Beside this module from the sources; in the single-file binary, the entrypoint scripts/build.ts embeds. */
const WORKER_MODULE = Bun.main.startsWith("/$bunfs/") ? "/$bunfs/root/src/domain/media/inspect-worker.js" : new URL("./inspect-worker.ts", import.meta.url).href;

function thread(): Thread {
  if (worker) return worker;
  const started = new Worker(WORKER_MODULE) as Thread;
  started.onmessage = (event: MessageEvent) => {
    const answer = event.data as InspectAnswer;
    const w = waiting.get(answer.id);
    if (!w) return;
    settle(answer.id);
    if ("error" in answer) w.reject(new InspectionFailed(`inspecting an upload: ${answer.error}`, answer.code));
    else w.resolve({ size: answer.size, sha256: answer.sha256, head: answer.head, tailIsText: answer.tailIsText });
  };
  started.onerror = (event) => {
    if (worker === started) worker = null;
    started.terminate();
    for (const [id, w] of waiting) {
      settle(id);
      w.reject(new Error(`inspection thread failed: ${event.message}`));
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

/** Size, SHA-256, the first `headBytes` bytes and whether the rest is text, of the file at `path`. */
export function inspectFileOffThread(path: string, headBytes: number): Promise<Inspection> {
  const t = thread();
  const id = ++lastId;
  return new Promise((resolve, reject) => {
    if (waiting.size === 0) t.ref();
    waiting.set(id, { resolve, reject });
    t.postMessage({ id, path, headBytes } satisfies InspectTask);
  });
}
