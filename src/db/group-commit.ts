import { errorFields, log } from "../log.ts";
import { writeGate } from "./checkpoint.ts";
import type { Db } from "./client.ts";

/**
 * Group commit for the busiest writes (report creation and identity upserts over REST).
 *
 * A SQLite commit in WAL mode appends every page the transaction changed to the log: a report
 * touches ~28 pages (the reports table and its ten indexes, reasons, audit, identities, case),
 * so one commit per report writes ~110 KB, and the checkpoints that follow have to fsync all of
 * it. Writes that arrive in the same turn of the event loop are therefore run together: one
 * BEGIN, each write in its own SAVEPOINT (the domain's `transaction()` nests), one COMMIT.
 * Pages that several reports share (the right edge of every time-ordered index) are written
 * once per group instead of once per report.
 *
 * Nothing is acknowledged before it is durable: a caller's promise settles only after the
 * COMMIT returned. A write that fails rolls back its own savepoint and fails alone, exactly as
 * its own transaction would have; if the COMMIT itself fails, every write of the group fails.
 *
 * Before a group, the checkpointer may ask the writes to wait for one pass of its own (when the
 * WAL should restart, see src/db/checkpoint.ts); the event loop goes on meanwhile.
 *
 * The work of a group must finish without waiting on I/O (the tRPC procedures of these routes
 * run on microtasks only), so that nothing else (another request, a timer) runs while the
 * transaction is open and slips a write into it. `run` checks this: if the event loop turned
 * while a group was open, it logs an error and stops grouping for the life of the process.
 */
export interface CommitGroup {
  /** Runs `work` in the next group and settles after that group's COMMIT. */
  run<T>(work: () => Promise<T>): Promise<T>;
}

interface Pending {
  work: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/** Most writes in one transaction; the rest wait for the next group. */
const MAX_GROUP = 128;

export function createCommitGroup(db: Db): CommitGroup {
  const sqlite = db.$client;
  let queue: Pending[] = [];
  let scheduled = false;
  let flushing = false;
  let disabled = false;

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => void flush());
  }

  async function flush(): Promise<void> {
    scheduled = false;
    if (flushing) return; // the group in progress schedules the next one when it ends
    flushing = true;
    try {
      const gate = writeGate(db);
      if (gate) await gate;
      await runGroup();
    } finally {
      flushing = false;
      if (queue.length) schedule();
    }
  }

  async function runGroup(): Promise<void> {
    const group = queue.length > MAX_GROUP ? queue.splice(0, MAX_GROUP) : queue;
    if (group === queue) queue = [];

    if (disabled || sqlite.inTransaction) {
      // Not grouping: each write commits in its own transaction, as without this module.
      for (const p of group) p.work().then(p.resolve, p.reject);
      return;
    }

    let loopTurned = false;
    const sentinel = setImmediate(() => (loopTurned = true));
    const outcomes: { ok: boolean; value: unknown }[] = [];
    sqlite.run("BEGIN");
    try {
      for (const p of group) {
        try {
          outcomes.push({ ok: true, value: await p.work() });
        } catch (err) {
          outcomes.push({ ok: false, value: err });
        }
        // Some SQLite errors (disk full, I/O) roll back the whole transaction: then nothing of
        // the group may be acknowledged, and the rest must not run outside a transaction.
        if (!sqlite.inTransaction) throw new Error("the group's transaction was rolled back by SQLite");
      }
      sqlite.run("COMMIT");
    } catch (err) {
      if (sqlite.inTransaction) sqlite.run("ROLLBACK");
      log.error("group commit failed", errorFields(err));
      for (const p of group) p.reject(err);
      return;
    } finally {
      clearImmediate(sentinel);
      if (loopTurned && !disabled) {
        disabled = true;
        log.error("group commit: the event loop turned while a group was open; grouping is off from now on");
      }
    }
    group.forEach((p, i) => {
      const o = outcomes[i]!;
      if (o.ok) p.resolve(o.value);
      else p.reject(o.value);
    });
  }

  return {
    run<T>(work: () => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
        schedule();
      });
    },
  };
}
