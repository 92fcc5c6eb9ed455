import type { Store } from "./store.ts";

/**
 * Group commit for the busiest writes (report creation and identity upserts over REST), on
 * SQLite.
 *
 * A SQLite commit in WAL mode appends every page the transaction changed to the log: a report
 * touches ~28 pages (the reports table and its ten indexes, reasons, audit, identities, case),
 * so one commit per report writes ~110 KB, and the checkpoints that follow have to fsync all of
 * it. Writes that arrive in the same turn of the event loop are therefore run together: one
 * transaction of the store, each write's own transaction a savepoint inside it (the domain's
 * `transaction()` nests), one COMMIT. Pages that several reports share (the right edge of every time-ordered
 * index) are written once per group instead of once per report.
 *
 * Nothing is acknowledged before it is durable: a caller's promise settles only after the
 * COMMIT returned. A write that fails rolls back its own savepoint and fails alone, exactly as
 * its own transaction would have; if the COMMIT itself fails, every write of the group fails.
 * The store's lock keeps every other write out of the group's transaction while it is open.
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

export function createCommitGroup(store: Store): CommitGroup {
  // Where instances write side by side (PostgreSQL), each write is a transaction of its own on a
  // connection of the pool, run at once beside the others: grouping them would run them one
  // after another on one connection, each waiting its round trips.
  if (!store.soleWriter) return { run: (work) => work() };
  let queue: Pending[] = [];
  let scheduled = false;
  let flushing = false;

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
      await runGroup();
    } finally {
      flushing = false;
      if (queue.length) schedule();
    }
  }

  async function runGroup(): Promise<void> {
    const group = queue.length > MAX_GROUP ? queue.splice(0, MAX_GROUP) : queue;
    if (group === queue) queue = [];
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      await store.transaction(async () => {
        for (const p of group) {
          // No savepoint of the group's own: a write's domain function opens its transaction,
          // which is a savepoint here, so a failed write undoes exactly its own changes.
          try {
            outcomes.push({ ok: true, value: await p.work() });
          } catch (err) {
            outcomes.push({ ok: false, value: err });
          }
        }
      });
    } catch (err) {
      for (const p of group) p.reject(err);
      return;
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
