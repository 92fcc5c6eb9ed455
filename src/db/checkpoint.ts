import { log } from "../log.ts";
import type { Db } from "./client.ts";

/**
 * WAL checkpointing for `serve`, off the serving thread (the thread is checkpoint-worker.ts).
 *
 * A checkpoint copies committed pages from the -wal file into the database file and, with
 * synchronous=NORMAL, fsyncs both. SQLite's own wal_autocheckpoint runs it on the connection
 * that just committed, so the fsync stalls the event loop (many milliseconds under load, many
 * times a second). Here a second connection on a Worker thread checkpoints every INTERVAL_MS
 * (PASSIVE: it never blocks the writer).
 *
 * One thing a background checkpoint cannot do alone under steady writes: let the log restart.
 * The WAL goes back to its beginning only when a write starts after a checkpoint reached its last
 * frame, and with a commit every few milliseconds the checkpointer never gets there. So when
 * the log holds RESTART_AFTER_FRAMES, `writeGate()` hands the group committer a promise: grouped
 * writes wait (the event loop goes on serving) while the thread runs one more pass, which now
 * reaches the end; the next write restarts the log. The log stays small, and the serving thread
 * never fsyncs. Durability is the same either way: WAL + synchronous=NORMAL.
 */
export interface Checkpointer {
  /** A promise to wait on before the next grouped write, when the log should restart; else null. */
  writeGate(): Promise<void> | null;
  /** Runs a last checkpoint and stops the thread. */
  stop(): Promise<void>;
}

/** How often the thread checkpoints. */
const INTERVAL_MS = 50;
/** Log size (pages of 4 KB: 16 MB) at which grouped writes pause for the log to restart. */
const RESTART_AFTER_FRAMES = 4_000;
/** Longest pause of grouped writes for one catch-up pass. */
const GATE_TIMEOUT_MS = 100;
/**
 * The serving connection still checkpoints by itself once the log holds this many pages (64 MB):
 * a safety net for writes that do not go through the group committer, or a dead thread.
 */
const FALLBACK_AUTOCHECKPOINT_PAGES = 16_384;

const noCheckpointer: Checkpointer = { writeGate: () => null, stop: async () => {} };
const running = new WeakMap<Db, Checkpointer>();

/** The gate of the checkpointer running for `db` (null when none runs, as in the CLI). */
export const writeGate = (db: Db): Promise<void> | null => running.get(db)?.writeGate() ?? null;

export function startCheckpointer(db: Db, path: string): Checkpointer {
  if (path === ":memory:" || path === "") return noCheckpointer;
  const checkpointer = startThread(db, path);
  running.set(db, checkpointer);
  return checkpointer;
}

/**
 * The worker's module: in the compiled binary, the bundled entrypoint (scripts/build.ts lists it)
 * at its path in the binary's file system; `import.meta.url` there names the folder the binary
 * was built in, which a binary run anywhere else does not have (the checkpointer died at start).
 */
const WORKER_MODULE = Bun.main.startsWith("/$bunfs/") ? "/$bunfs/root/src/db/checkpoint-worker.js" : new URL("./checkpoint-worker.ts", import.meta.url).href;

function startThread(db: Db, path: string): Checkpointer {
  const worker = new Worker(WORKER_MODULE);
  let logFrames = 0;
  let gate: { promise: Promise<void>; open: () => void } | null = null;
  let stopped: (() => void) | null = null;

  worker.onmessage = (event: MessageEvent) => {
    const msg = event.data as { type: string; message?: string; log?: number; checkpointed?: number; requested?: boolean };
    if (msg.type === "pass") {
      logFrames = msg.log ?? 0;
      if (msg.requested) gate?.open();
    } else if (msg.type === "error") {
      log.warn("background checkpoint failed", { error: msg.message });
    } else if (msg.type === "stopped") {
      stopped?.();
    }
  };
  worker.onerror = (event) => log.error("background checkpointer died", { error: event.message });
  worker.postMessage({ path, intervalMs: INTERVAL_MS });
  (worker as unknown as { unref(): void }).unref(); // never keeps the process alive
  db.$client.exec(`PRAGMA wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);

  return {
    writeGate() {
      if (gate) return gate.promise;
      if (logFrames < RESTART_AFTER_FRAMES) return null;
      logFrames = 0; // until the next report: one catch-up per growth of the log
      let open!: () => void;
      const promise = new Promise<void>((resolve) => (open = resolve));
      const timeout = setTimeout(() => current.open(), GATE_TIMEOUT_MS);
      const current = {
        promise,
        open: () => {
          clearTimeout(timeout);
          if (gate === current) gate = null;
          open();
        },
      };
      gate = current;
      worker.postMessage("catchup");
      return promise;
    },
    async stop() {
      gate?.open();
      const done = new Promise<void>((resolve) => (stopped = resolve));
      worker.postMessage("stop");
      await Promise.race([done, Bun.sleep(5_000)]);
      worker.terminate();
    },
  };
}
