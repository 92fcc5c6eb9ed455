import { AsyncLocalStorage } from "node:async_hooks";
import type { Database } from "bun:sqlite";
import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeGate } from "./checkpoint.ts";
import { noteWriteSucceeded } from "./faults.ts";
import { DEFAULT_AUDIT_CHAIN_LANES, type ChainAppender, type UnchainedEvent } from "./audit-append.ts";
import { sqliteChainAppender } from "./audit-append-sqlite.ts";
import type { BlobStore } from "./blobs.ts";
import { openDatabase, type Db } from "./client.ts";
import type { Engine } from "./engine.ts";
import { sqliteTextSearch, type SearchIndex } from "./search.ts";

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
 *
 * On PostgreSQL (src/db/store-pg.ts) instances write side by side. Transactions that say
 * `exclusive: false` (the domain's ROW_LOCKED: every path that carries load, from report intake
 * to decisions, rule effects, enrichment, enforcement, statements and appeals) run beside each
 * other and beside other instances' at READ COMMITTED; the rest (rare administrative writes)
 * still take the database-wide write lock. What writing alone used to keep, each invariant is
 * now kept by the narrowest mechanism, the same domain code on both engines:
 *
 * | Invariant | Kept by |
 * |---|---|
 * | one identity per project, type and external id; its report count | INSERT … ON CONFLICT DO NOTHING, then its row read FOR UPDATE, the merge written by the holder (upsertIdentity) |
 * | one open case per target (else per subject), its report count and bucket | one INSERT … ON CONFLICT … DO UPDATE on the partial unique index, which leaves the case's row locked until commit (claimCase) |
 * | a decision and new reports on one case: no report left open in a case a decision closed | the case's row, locked (FOR UPDATE) by every transaction that reads a case's reports or status before writing them (src/domain/cases/case-lock.ts) and by intake's upsert; the case first, then reporters' identities |
 * | a reporter's tally (upheld, decided) | the reporters' rows locked in the order of ids before the recount (recountCaseReporters) |
 * | a strike ladder's step reached once per threshold crossing | the subject identity's row, locked after the case's before its strikes in force are counted (addDecisionStrike); the step's action taken once: the strike's row, locked by its job (takeLadderStep) |
 * | one pending appeal per action; an action revoked or changed once | the action's row, locked before its case's (requireAction `lock`) |
 * | report creation times unique in an organization | the unique index (org_id, created_us): each instance hands out its own increasing times; two meeting in one microsecond is a conflict that runs the transaction again |
 * | an ascending listing never skips a report | reports commit within LISTING_HORIZON_MS / 2 of their time (else run again); ascending pages stop LISTING_HORIZON_MS back (src/domain/intake/report-time.ts) |
 * | rate windows, the job queue, sessions, audit rows | atomic upserts, FOR UPDATE SKIP LOCKED claims, rows of their own (unchanged) |
 * | report media matched at intake against a bank's version before an entry was added, all met by that entry's past media check | the check's first batch `reportsSettleMs` after its job first ran: every report begun before has committed by then, or run again (src/domain/banks/past-check.ts) |
 * | a lane of an organization's audit chain: sequences without gaps, each hash over the one before | the lane held by one instance (a session advisory lock, src/db/audit-lanes-pg.ts) and in it by one transaction at a time, its head moved with the COMMIT (Store.appendAudit); the unique index (org_id, chain_lane, chain_seq) when a lock was lost; the fallback and the straggler pass take a transaction-level advisory lock on the lane; one lane per organization per transaction, nothing waited for after it (src/db/audit-append.ts) |
 *
 * A transaction PostgreSQL aborts for a deadlock (40P01) or a serialization failure (40001),
 * or one that raced on a unique index named above, or one that throws TransactionConflict,
 * runs again, up to MAX_TRANSACTION_ATTEMPTS, after a random pause: never a 500 for a race.
 */
export interface Store {
  readonly engine: Engine;
  /**
   * True when this process is the only one writing the database (SQLite): what it wrote last is
   * what the database holds last, so the domain may remember such things instead of asking
   * (report-time.ts). False on PostgreSQL, where other instances write too.
   */
  readonly soleWriter: boolean;
  /**
   * The database file this process opened, as configured (":memory:" for a scratch one): its
   * size is a metric and its write-ahead log is checkpointed on a thread of its own
   * (checkpoint.ts). Null when the database is a server's (PostgreSQL).
   */
  readonly file: string | null;
  /** The handle for every query: the current transaction's inside one, else the reader. */
  readonly db: Db;
  /**
   * Runs `fn` in a transaction (a savepoint inside another) and settles after COMMIT. `fn` must
   * not wait on anything but the database (no network calls inside a transaction), and may run
   * more than once (on PostgreSQL, after a conflict: see above). Write transactions run one at a
   * time (on PostgreSQL across every instance) unless `exclusive: false`: work that keeps its
   * invariants by the rows it locks and by unique indexes (the job queue's claims, the domain's
   * ROW_LOCKED paths) runs beside other transactions on PostgreSQL; on SQLite it changes nothing.
   * `durable: false` with `exclusive: false` is for counters whose last moments may be lost in
   * a crash (rate-limit windows): on PostgreSQL each statement is its own transaction on
   * sessions that do not wait for the disk at commit; alone, `durable: false` turns
   * synchronous_commit off for that transaction. On SQLite (synchronous=NORMAL for every
   * commit) it changes nothing. It applies to an outermost transaction only.
   * `detached: true` never joins a transaction open in the caller's flow: on PostgreSQL it is a
   * transaction of its own on another connection, committed at once, so the open one neither
   * waits for it nor holds its row locks; on SQLite, where one connection writes, it is a
   * savepoint of the open one.
   */
  transaction<T>(fn: () => Promise<T>, opts?: { exclusive?: boolean; durable?: boolean; detached?: boolean }): Promise<T>;
  /** True inside a transaction of the current async flow. */
  inTransaction(): boolean;
  /** Runs `fn` after the current transaction commits (at once when there is none). */
  afterCommit(fn: () => void): void;
  /**
   * Writes whose answers nobody reads: issued now, awaited with the end of the current
   * transaction (or savepoint), whose outcome a failure among them is. On PostgreSQL they
   * travel with the COMMIT instead of costing round trips of their own. Outside a transaction
   * they are simply awaited.
   */
  atCommit(...work: Promise<unknown>[]): Promise<void>;
  /**
   * Hands an audit event to the chain (recordAudit, src/domain/core/audit.ts): the store keeps
   * the outermost transaction's events and gives them all, once, to its engine's ChainAppender
   * (src/db/audit-append.ts), inside that transaction and just before its COMMIT (after `fn`
   * returned; events of a savepoint that rolled back are dropped with it). So the lane of the
   * chain an organization's events take is held from there to the COMMIT only, not for the
   * whole transaction. Inside a transaction only.
   */
  appendAudit(event: UnchainedEvent): void;
  /** Says that a job was enqueued: the job workers are woken once it is committed. */
  jobEnqueued(): void;
  /** Who to wake when jobs were enqueued (the worker pool, once it runs). */
  onJobsEnqueued(listener: () => void): void;
  /**
   * `subquery`, its rows locked for this transaction and rows locked by others skipped
   * (FOR UPDATE SKIP LOCKED on PostgreSQL; on SQLite, where one writer runs at a time, as is).
   */
  skipLocked(subquery: SQLWrapper): SQL;
  /**
   * The condition "this row of `index`'s table holds every word" (full-text search, case and
   * accents ignored, each word the start of a word of the text), as the engine's index answers
   * it: FTS5 on SQLite, GIN over tsvectors on PostgreSQL (src/db/search.ts).
   */
  textSearch(index: SearchIndex, words: readonly string[]): SQL;
  /** Throws when the database does not answer (health checks). */
  ping(): Promise<void>;
  /**
   * Throws when a write cannot go through now (readiness, while writes have been failing: a
   * full or read-only disk): a tiny write transaction, rolled back.
   */
  probeWrite(): Promise<void>;
  /**
   * Runs `start` on one instance only (the expiry scheduler, say): at once on SQLite, where one
   * process serves; on PostgreSQL on the instance elected through an advisory lock, and on
   * another within seconds when that one dies.
   */
  singleton(name: string, start: () => { stop(): Promise<void> | void }): Singleton;
  /** The writing connection, for what is not domain work: migrations, checkpoints, backups. */
  readonly writer: Db;
  /**
   * Where attachments' bytes are kept (src/db/blobs.ts), set once at start-up by the process
   * that serves them (createServices); null in a store opened for other work (a migration, a
   * backup, a test of the domain), where attachments answer 503.
   */
  blobs: BlobStore | null;
  close(): Promise<void>;
}

/** A task elected to run once across instances (Store.singleton). */
export interface Singleton {
  /** True while this instance runs the task. */
  readonly leading: boolean;
  stop(): Promise<void>;
}

interface TxState extends TxScope {
  savepoints: number;
}

/** What every engine keeps about the transaction of an async flow. */
export interface TxScope {
  /** The Drizzle handle of the transaction (SQLite: the writing connection). */
  handle: Db;
  /** Run once the outermost transaction committed. */
  afterCommit: (() => void)[];
  /** Writes awaited at the end of this transaction or savepoint (Store.atCommit). */
  atCommit: Promise<unknown>[];
  /** Audit events handed to the chain (Store.appendAudit), in the order written: appended just before the COMMIT. */
  audit: UnchainedEvent[];
}

/** A savepoint that ended well hands its audit events to the scope it was opened in. */
export function keepAudit(into: TxScope, from: TxScope): void {
  if (from.audit.length) into.audit.push(...from.audit);
}

/**
 * Thrown by the domain when a transaction met a conflict that running it again resolves (a
 * report's creation time taken by another instance in the same microsecond): the store runs
 * the outermost transaction again, as it does after a deadlock (PostgreSQL).
 */
export class TransactionConflict extends Error {}

/**
 * The parts of a store that follow the current transaction through the async context, the same
 * on every engine: `db`, whose every method runs on the transaction's handle inside one and on
 * `outside` otherwise; `inTransaction`, `afterCommit` and the job workers' wake-up. The engine
 * runs each transaction's body in `current.run(scope, fn)`. `statementHandle`, when given, is the
 * handle prepared statements are built on whatever the transaction (`connectionOf`): one that
 * finds the current transaction's connection itself at each execution (PostgreSQL).
 */
export function transactionScope<S extends TxScope>(outside: Db, opts: { statementHandle?: Db } = {}) {
  const current = new AsyncLocalStorage<S>();
  let jobsListener: (() => void) | null = null;
  // Methods are bound once per handle, not on every access (this runs for every query).
  const bound = new WeakMap<Db, Map<PropertyKey, unknown>>();
  const db = new Proxy(outside, {
    get(_target, prop) {
      const handle = current.getStore()?.handle ?? outside;
      if (prop === CONNECTION) return opts.statementHandle ?? handle;
      let methods = bound.get(handle);
      if (!methods) bound.set(handle, (methods = new Map()));
      const known = methods.get(prop);
      if (known !== undefined) return known;
      const value: unknown = Reflect.get(handle, prop, handle);
      if (typeof value !== "function") return value;
      const method = (value as (...a: unknown[]) => unknown).bind(handle);
      methods.set(prop, method);
      return method;
    },
  }) as Db;

  const afterCommit = (fn: () => void): void => {
    const active = current.getStore();
    if (active) {
      if (!active.afterCommit.includes(fn)) active.afterCommit.push(fn);
    } else fn();
  };
  const shared: Pick<Store, "db" | "inTransaction" | "afterCommit" | "atCommit" | "appendAudit" | "jobEnqueued" | "onJobsEnqueued"> = {
    db,
    inTransaction: () => current.getStore() !== undefined,
    afterCommit,
    async atCommit(...work) {
      // Drizzle's SQLite queries run at each `then`: each is made one promise, once.
      const promises = work.map((w) => Promise.resolve(w));
      for (const p of promises) p.catch(() => {});
      const active = current.getStore();
      if (active) active.atCommit.push(...promises);
      else await settleAll(promises);
    },
    appendAudit(event) {
      const active = current.getStore();
      if (!active) throw new Error("Store.appendAudit runs inside a transaction");
      active.audit.push(event);
    },
    jobEnqueued() {
      if (jobsListener) afterCommit(jobsListener);
    },
    onJobsEnqueued(listener) {
      jobsListener = listener;
    },
  };
  return { current, shared };
}

/** Waits for every promise; throws the first failure (in order) once all settled. */
export async function settleAll(work: readonly Promise<unknown>[]): Promise<void> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
}

/** A FIFO async lock: one holder at a time, waiters in arrival order. */
export class Lock {
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
export function openSqliteStore(path: string, opts: { auditChainLanes?: number } = {}): Store {
  const scratch = path === ":memory:" ? mkdtempSync(join(tmpdir(), "flagstaff-store-")) : null;
  const file = scratch ? join(scratch, "flagstaff.db") : path;
  const writer = openDatabase(file);
  const reader = openDatabase(file, { queryOnly: true });
  const store = { ...sqliteStore(writer, reader, sqliteChainAppender(writer.$client, opts.auditChainLanes ?? DEFAULT_AUDIT_CHAIN_LANES)), file: path };
  if (!scratch) return store;
  return {
    ...store,
    async close() {
      await store.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

function sqliteStore(writer: Db, reader: Db, chain: ChainAppender): Omit<Store, "file"> {
  // Outside a transaction, `db` is the reading connection; inside, the writing one.
  const { current, shared } = transactionScope<TxState>(reader);
  const lock = new Lock();

  const sqlite: Database = writer.$client;
  // Transaction statements run for every write (several per report in a group commit): kept
  // compiled (`query` caches the statement) rather than compiled again by each `run`.
  const exec = (statement: string) => sqlite.query(statement).run();

  async function nested<T>(state: TxState, fn: () => Promise<T>): Promise<T> {
    // Named by depth: a finite set of names, so their statements stay cached too.
    const name = `sp${++state.savepoints}`;
    exec(`SAVEPOINT ${name}`);
    const scope: TxState = { ...state, atCommit: [], audit: [] };
    try {
      const result = await current.run(scope, fn);
      await settleAll(scope.atCommit);
      exec(`RELEASE ${name}`);
      keepAudit(state, scope);
      return result;
    } catch (err) {
      if (sqlite.inTransaction) {
        exec(`ROLLBACK TO ${name}`);
        exec(`RELEASE ${name}`);
      }
      throw err;
    } finally {
      state.savepoints--;
    }
  }

  // `exclusive` means nothing here: SQLite has one writer, every transaction is exclusive.
  async function transaction<T>(fn: () => Promise<T>): Promise<T> {
    const active = current.getStore();
    if (active) return nested(active, fn);

    const wait = lock.acquire();
    if (wait) await wait;
    const state: TxState = { handle: writer, afterCommit: [], atCommit: [], audit: [], savepoints: 0 };
    let result: T;
    try {
      // The checkpointer may ask writes to wait for one pass of its own (src/db/checkpoint.ts).
      const gate = writeGate(writer);
      if (gate) await gate;
      exec("BEGIN IMMEDIATE");
      try {
        result = await current.run(state, fn);
        // The audit chain's append (Store.appendAudit), the transaction's last writes.
        if (state.audit.length) await chain.append(state.audit);
        await settleAll(state.atCommit);
        // Some SQLite errors (disk full, I/O) roll back the whole transaction on their own.
        if (!sqlite.inTransaction) throw new Error("the transaction was rolled back by SQLite");
        exec("COMMIT");
        noteWriteSucceeded();
      } catch (err) {
        if (sqlite.inTransaction) exec("ROLLBACK");
        throw err;
      }
    } finally {
      lock.release();
    }
    for (const hook of state.afterCommit) hook();
    return result;
  }

  return {
    ...shared,
    engine: "sqlite",
    soleWriter: true,
    blobs: null,
    writer,
    transaction,
    skipLocked: (subquery) => sql`${subquery}`,
    textSearch: sqliteTextSearch,
    async ping() {
      reader.$client.query("SELECT 1").get();
    },
    async probeWrite() {
      // A write that needs room in the log: what a full or read-only disk refuses.
      await transaction(async () => {
        exec("INSERT OR REPLACE INTO rate_windows (key, window_start, count) VALUES ('readiness-probe', 0, 0)");
        exec("DELETE FROM rate_windows WHERE key = 'readiness-probe'");
      });
    },
    singleton(_name, start) {
      const task = start();
      let leading = true;
      return {
        get leading() {
          return leading;
        },
        async stop() {
          leading = false;
          await task.stop();
        },
      };
    },
    async close() {
      await chain.close();
      reader.$client.close();
      writer.$client.close();
    },
  };
}
