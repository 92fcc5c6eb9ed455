import { AsyncLocalStorage } from "node:async_hooks";
import type { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeGate } from "./checkpoint.ts";
import { openDatabase, type Db } from "./client.ts";

/**
 * The storage boundary the domain stands on. Domain code reads and writes through `store.db`
 * with Drizzle's awaitable queries, and wraps every write in `store.transaction(fn)`; it never
 * touches a connection, a dialect-specific method (`.get()`, `.all()`, `.run()`) or SQL
 * transaction statements. This file holds the SQLite engine; the PostgreSQL engine implements
 * the same interface (its `db` a pooled Drizzle handle, its transactions Drizzle's own).
 *
 * On SQLite:
 * - Writes go through one connection, one transaction at a time: `transaction` takes an async
 *   lock, so no two requests ever interleave inside a transaction, even though the domain is
 *   async and other requests run while one awaits.
 * - Reads outside a transaction use a second connection, set `query_only`: they see only
 *   committed data (WAL snapshots), never another request's open transaction, and a write
 *   attempted outside a transaction fails loudly ("attempt to write a readonly database")
 *   instead of slipping into someone else's.
 * - Inside a transaction, `store.db` is the writing connection (found through the async
 *   context), so the transaction reads its own writes; a nested `transaction` is a SAVEPOINT.
 * - `afterCommit` hooks run once the outermost transaction committed (job queue wake-ups).
 */
export interface Store {
  /** The handle for every query: the current transaction's inside one, else the reader. */
  readonly db: Db;
  /**
   * Runs `fn` in a transaction (a savepoint inside another) and settles after COMMIT. `fn` must
   * not wait on anything but the database (no network calls inside a transaction).
   */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  /** True inside a transaction of the current async flow. */
  inTransaction(): boolean;
  /** Runs `fn` after the current transaction commits (at once when there is none). */
  afterCommit(fn: () => void): void;
  /** Says that a job was enqueued: the job workers are woken once it is committed. */
  jobEnqueued(): void;
  /** Who to wake when jobs were enqueued (the worker pool, once it runs). */
  onJobsEnqueued(listener: () => void): void;
  /** The writing connection, for what is not domain work: migrations, checkpoints, backups. */
  readonly writer: Db;
  close(): void;
}

interface TxState {
  afterCommit: (() => void)[];
  savepoints: number;
}

/** A FIFO async lock: one holder at a time, waiters in arrival order. */
class Lock {
  private held = false;
  private readonly waiters: (() => void)[] = [];

  acquire(): Promise<void> | null {
    if (!this.held) {
      this.held = true;
      return null;
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held = false;
  }
}


/** `store.db[CONNECTION]`: the real handle behind the store's handle at this moment. */
export const CONNECTION = Symbol("connection");

/**
 * The connection a handle stands for now (prepared statements belong to one connection:
 * src/db/prepared.ts keys them by it).
 */
export const connectionOf = (db: Db): Db => ((db as unknown as Record<symbol, Db | undefined>)[CONNECTION] ?? db);

/**
 * Opens the SQLite store at `path`. `:memory:` (in-process tests) gives a private database in a
 * temporary folder, removed on close: two connections cannot share a plain in-memory database,
 * and a real file keeps WAL and its isolation exactly as in production.
 */
export function openSqliteStore(path: string): Store {
  const scratch = path === ":memory:" ? mkdtempSync(join(tmpdir(), "flagstaff-store-")) : null;
  const file = scratch ? join(scratch, "flagstaff.db") : path;
  const writer = openDatabase(file);
  const reader = openDatabase(file, { queryOnly: true });
  const store = sqliteStore(writer, reader);
  if (!scratch) return store;
  return {
    ...store,
    close() {
      store.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

function sqliteStore(writer: Db, reader: Db): Store {
  const current = new AsyncLocalStorage<TxState>();
  const lock = new Lock();
  let jobsListener: (() => void) | null = null;
  let savepointNames = 0;

  // Drizzle's handle, resolved per access: every method runs on the connection of the moment.
  const db = new Proxy(reader, {
    get(_target, prop) {
      const handle = current.getStore() ? writer : reader;
      if (prop === CONNECTION) return handle;
      const value: unknown = Reflect.get(handle, prop, handle);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(handle) : value;
    },
  }) as Db;

  const sqlite: Database = writer.$client;

  async function nested<T>(state: TxState, fn: () => Promise<T>): Promise<T> {
    const name = `sp${++savepointNames}`;
    sqlite.run(`SAVEPOINT ${name}`);
    state.savepoints++;
    try {
      const result = await fn();
      sqlite.run(`RELEASE ${name}`);
      return result;
    } catch (err) {
      if (sqlite.inTransaction) {
        sqlite.run(`ROLLBACK TO ${name}`);
        sqlite.run(`RELEASE ${name}`);
      }
      throw err;
    } finally {
      state.savepoints--;
    }
  }

  async function transaction<T>(fn: () => Promise<T>): Promise<T> {
    const active = current.getStore();
    if (active) return nested(active, fn);

    const wait = lock.acquire();
    if (wait) await wait;
    const state: TxState = { afterCommit: [], savepoints: 0 };
    let result: T;
    try {
      // The checkpointer may ask writes to wait for one pass of its own (src/db/checkpoint.ts).
      const gate = writeGate(writer);
      if (gate) await gate;
      sqlite.run("BEGIN IMMEDIATE");
      try {
        result = await current.run(state, fn);
        // Some SQLite errors (disk full, I/O) roll back the whole transaction on their own.
        if (!sqlite.inTransaction) throw new Error("the transaction was rolled back by SQLite");
        sqlite.run("COMMIT");
      } catch (err) {
        if (sqlite.inTransaction) sqlite.run("ROLLBACK");
        throw err;
      }
    } finally {
      lock.release();
    }
    for (const hook of state.afterCommit) hook();
    return result;
  }

  return {
    db,
    writer,
    transaction,
    inTransaction: () => current.getStore() !== undefined,
    afterCommit(fn) {
      const active = current.getStore();
      if (active) {
        if (!active.afterCommit.includes(fn)) active.afterCommit.push(fn);
      } else fn();
    },
    jobEnqueued() {
      if (jobsListener) this.afterCommit(jobsListener);
    },
    onJobsEnqueued(listener) {
      jobsListener = listener;
    },
    close() {
      reader.$client.close();
      writer.$client.close();
    },
  };
}
