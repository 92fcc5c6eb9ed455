/**
 * The background checkpointer (a Worker thread, started by src/db/checkpoint.ts for `serve`).
 *
 * In WAL mode a commit only appends to the -wal file; a checkpoint later copies those pages into
 * the database file and, with synchronous=NORMAL, fsyncs both files. Run by the serving
 * connection (wal_autocheckpoint) that fsync stalls every request for milliseconds; run here,
 * on a connection of its own, it happens beside the requests. PASSIVE never blocks the writer.
 *
 * Messages in: `{ path, intervalMs }` to start; `"catchup"` for a pass right now (the serving
 * thread holds its writes meanwhile, so the pass can reach the end of the log and the next
 * write restarts it); `"stop"` for a last pass, then the connection closes.
 * Messages out: `{ type: "pass", log, checkpointed, requested }` after each pass that had work
 * (`log`: frames in the WAL, `checkpointed`: frames copied), `{ type: "error", message }`,
 * `{ type: "stopped" }`.
 */
import { Database } from "bun:sqlite";

declare const self: Worker;

let db: Database | null = null;
let timer: ReturnType<typeof setInterval> | null = null;

function pass(requested: boolean): void {
  if (!db) return;
  try {
    const r = db.query("PRAGMA wal_checkpoint(PASSIVE)").get() as { busy: number; log: number; checkpointed: number };
    if (requested || r.log > 0) self.postMessage({ type: "pass", log: r.log, checkpointed: r.checkpointed, requested });
  } catch (err) {
    self.postMessage({ type: "error", message: err instanceof Error ? err.message : String(err) });
    if (requested) self.postMessage({ type: "pass", log: -1, checkpointed: -1, requested });
  }
}

self.onmessage = (event: MessageEvent) => {
  const msg = event.data as { path: string; intervalMs: number } | "catchup" | "stop";
  if (msg === "catchup") return pass(true);
  if (msg === "stop") {
    if (timer) clearInterval(timer);
    pass(false);
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
  timer = setInterval(() => pass(false), msg.intervalMs);
};
