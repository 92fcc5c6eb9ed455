import { log } from "../log.ts";
import type { Db } from "./client.ts";

export interface Checkpointer {
  /** Runs a last checkpoint and stops the thread. */
  stop(): Promise<void>;
}

/** How often the background thread checkpoints the WAL into the database file. */
const INTERVAL_MS = 100;
/**
 * The serving connection still checkpoints by itself once the WAL holds this many pages (64 MB)
 * without a reset: a safety net should the thread fall behind or die. Under steady writes the
 * WAL cannot restart while the thread copies it (a writer is always appending), so this also
 * bounds its size; by then the thread has synced most of it, so the net is cheap.
 */
const FALLBACK_AUTOCHECKPOINT_PAGES = 16_384;

/**
 * Moves WAL checkpointing of a file database off the serving thread (see checkpoint-worker.ts).
 * The durability of a commit does not change: WAL + synchronous=NORMAL either way.
 */
export function startCheckpointer(db: Db, path: string): Checkpointer {
  if (path === ":memory:" || path === "") return { stop: async () => {} };
  const worker = new Worker(new URL("./checkpoint-worker.ts", import.meta.url).href);
  let stopped: (() => void) | null = null;
  worker.onmessage = (event: MessageEvent) => {
    const msg = event.data as { type: string; message?: string };
    if (msg.type === "error") log.warn("background checkpoint failed", { error: msg.message });
    if (msg.type === "stopped") stopped?.();
  };
  worker.onerror = (event) => log.error("background checkpointer died", { error: event.message });
  worker.postMessage({ path, intervalMs: INTERVAL_MS });
  (worker as unknown as { unref(): void }).unref(); // never keeps the process alive
  db.$client.exec(`PRAGMA wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
  return {
    async stop() {
      const done = new Promise<void>((resolve) => (stopped = resolve));
      worker.postMessage("stop");
      await Promise.race([done, Bun.sleep(5_000)]);
      worker.terminate();
    },
  };
}
