/**
 * A Worker that answers requests, one thread per process (rule tests, upload inspection,
 * previews and media hashing each have theirs): started on the first request, taken in turn,
 * holding the process open only while a request waits on it. A thread that dies (out of
 * memory, say) fails what it held, and the next request starts another.
 */

import { currentBackgroundThreadNiceness, type NicenessMessage } from "./thread-priority.ts";

/** Bun's Worker, which can let the process exit while it runs (the DOM's type lacks it). */
type Thread = Worker & { ref(): void; unref(): void };

export interface RequestThreadSpec<Answer extends { id: number }, Result> {
  /**
   * The thread's module: `source` beside the caller when running from the sources
   * (`new URL("./x-worker.ts", import.meta.url).href`); in the single-file binary, `bundled`, the
   * entrypoint scripts/build.ts embeds under its path from the project's root
   * (`src/…/x-worker.js`: there import.meta.url still names the machine that built the binary).
   */
  source: string;
  bundled: string;
  /** What the thread is, in the error of a thread that died ("preview thread failed: …"). */
  name: string;
  /**
   * Work that may wait for the machine (hashing uploads, previews): the thread is started at the
   * background niceness (thread-priority.ts, FLAGSTAFF_MEDIA_THREAD_NICE), below the serving thread's.
   */
  background?: boolean;
  /** An answer's result, or the error to reject its request with. */
  settle(answer: Answer): { result: Result } | { error: Error };
}

/** Sends a message built with its request id (transferring `transfer`); answers its result. */
export type AskThread<Message, Result> = (message: (id: number) => Message, transfer?: (m: Message) => Transferable[]) => Promise<Result>;

export function requestThread<Message, Answer extends { id: number }, Result>(spec: RequestThreadSpec<Answer, Result>): AskThread<Message, Result> {
  const module = Bun.main.startsWith("/$bunfs/") ? `/$bunfs/root/${spec.bundled}` : spec.source;
  let worker: Thread | null = null;
  let lastId = 0;
  const waiting = new Map<number, { resolve: (r: Result) => void; reject: (e: Error) => void }>();

  const settle = (id: number): void => {
    waiting.delete(id);
    if (waiting.size === 0) worker?.unref();
  };

  const thread = (): Thread => {
    if (worker) return worker;
    const started = new Worker(module) as Thread;
    started.onmessage = (event: MessageEvent) => {
      const answer = event.data as Answer;
      const w = waiting.get(answer.id);
      if (!w) return;
      settle(answer.id);
      const outcome = spec.settle(answer);
      if ("error" in outcome) w.reject(outcome.error);
      else w.resolve(outcome.result);
    };
    started.onerror = (event) => {
      if (worker === started) worker = null;
      started.terminate();
      for (const [id, w] of waiting) {
        settle(id);
        w.reject(new Error(`${spec.name} failed: ${event.message}`));
      }
    };
    const niceness = spec.background ? currentBackgroundThreadNiceness() : 0;
    if (niceness > 0) started.postMessage({ niceness } satisfies NicenessMessage);
    started.unref();
    worker = started;
    return started;
  };

  return (build, transfer) => {
    const t = thread();
    const id = ++lastId;
    return new Promise<Result>((resolve, reject) => {
      if (waiting.size === 0) t.ref();
      waiting.set(id, { resolve, reject });
      const message = build(id);
      t.postMessage(message, transfer?.(message) ?? []);
    });
  };
}
