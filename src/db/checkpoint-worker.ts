/**
 * The background checkpointer (a Worker thread, started by src/db/checkpoint.ts for `serve`).
 *
 * In WAL mode a commit only appends to the -wal file; a checkpoint later copies those pages into
 * the database file and, with synchronous=NORMAL, fsyncs both files. Run by the serving
 * connection (wal_autocheckpoint) that fsync stalls every request for milliseconds; run here,
 * on a connection of its own, it happens beside the requests. PASSIVE never blocks the writer.
 *
 * Messages in: `{ path, intervalMs }` to start, `"stop"` to run a last checkpoint and close.
 * Messages out: `{ type: "error", message }`, `{ type: "stopped" }`.
 */
import { Database } from "bun:sqlite";

declare const self: Worker;

let db: Database | null = null;
let timer: ReturnType<typeof setInterval> | null = null;

function checkpoint(): void {
  try {
    db?.query("PRAGMA wal_checkpoint(PASSIVE)").get();
  } catch (err) {
    self.postMessage({ type: "error", message: err instanceof Error ? err.message : String(err) });
  }
}

self.onmessage = (event: MessageEvent) => {
  const msg = event.data as { path: string; intervalMs: number } | "stop";
  if (msg === "stop") {
    if (timer) clearInterval(timer);
    checkpoint();
    db?.close();
    db = null;
    self.postMessage({ type: "stopped" });
    return;
  }
  db = new Database(msg.path);
  // The checkpoint's fsyncs follow this connection's setting: NORMAL syncs the WAL before
  // copying it and the database before the WAL may be reused (never OFF here).
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA busy_timeout = 5000");
  timer = setInterval(checkpoint, msg.intervalMs);
};
