import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import type { Db } from "./client.ts";
import * as pgSchema from "./schema-pg.ts";
import { postgresTextSearch } from "./search.ts";
import { noteWriteSucceeded } from "./faults.ts";
import { keepAudit, Lock, settleAll, TransactionConflict, transactionScope, type Singleton, type Store, type TxScope } from "./store.ts";
import { DEFAULT_AUDIT_CHAIN_LANES } from "./audit-append.ts";
import { AUDIT_CHAIN_INDEX, pgChainAppender, type TransactionEnd } from "./audit-append-pg.ts";
import { openAuditLanes } from "./audit-lanes-pg.ts";
import { VERSION } from "../version.ts";

/**
 * The PostgreSQL engine of the store (src/db/store.ts says what every engine promises, and
 * which lock keeps each invariant now that instances write side by side).
 *
 * - Transactions of the paths that carry load (`exclusive: false`: the domain's ROW_LOCKED) run
 *   beside each other, on every instance, at READ COMMITTED: the rows they touch and unique
 *   indexes keep the domain's invariants. Other write transactions (rare administrative ones)
 *   first take one transaction-level advisory lock, the database's write lock, so they run one
 *   at a time across every instance, as on SQLite. Reads never wait: they run outside
 *   transactions, each statement on a snapshot of what was committed.
 * - Every query with parameters is prepared (one round trip, pipelined; `preparing`). A
 *   transaction runs on a connection of its own: its BEGIN travels with its first statements,
 *   and the writes it leaves to the commit (Store.atCommit) with its COMMIT, so that a report on
 *   a new target with two new identities costs two round trips for its transaction.
 * - Deadlocks, serialization failures and races on the unique indexes that keep "one of a kind"
 *   run the transaction again (MAX_TRANSACTION_ATTEMPTS).
 * - Inside a transaction, `store.db` is the transaction's handle (found through the async
 *   context); a nested transaction is a SAVEPOINT.
 * - Counters that may forget their last moments (rate windows) run each statement as its own
 *   transaction, on a small pool whose sessions do not wait for the disk at commit.
 * - Singletons are elected with session-level advisory locks held on a connection of their
 *   own: when the instance holding one dies, its connection closes, the lock is free, and
 *   another instance takes it at its next try (every `SINGLETON_RETRY_MS`).
 */

/** Keys of the advisory locks (one 64-bit space per database: ours start with "FLAG"). */
export const WRITE_LOCK = 0x464c4147_0001n;
const MIGRATION_LOCK = 0x464c4147_0002n;
/** Singletons take `SINGLETON_BASE + hash(name)`. */
const SINGLETON_BASE = 0x464c4147_1000n;
export const SINGLETON_RETRY_MS = 2_000;

export interface PostgresStoreOptions {
  url: string;
  /** Most connections this instance opens (FLAGSTAFF_DATABASE_POOL). */
  poolSize: number;
  /**
   * Longest a statement may run, a lock be waited for, or a transaction stay idle (ms;
   * FLAGSTAFF_DB_STATEMENT_TIMEOUT_MS, default 10 s): PostgreSQL then cancels it (a 503), so a
   * lock held by another client or a stalled network never holds a request, or a job's lease,
   * for ever.
   */
  statementTimeoutMs?: number;
  /** Lanes of each organization's audit chain (FLAGSTAFF_AUDIT_CHAIN_LANES; src/db/audit-append.ts). */
  auditChainLanes?: number;
}

export type PostgresClient = postgres.Sql;

/** The postgres.js client with our settings: int8 (counts, times) read as numbers; `settings` are session settings. */
export function postgresClient(url: string, max: number, settings: Record<string, string> = {}, opts: { keep?: boolean } = {}): PostgresClient {
  return postgres(url, {
    max,
    // A connection that holds session locks (`keep`) is never renewed: the locks would go with it.
    ...(opts.keep ? { max_lifetime: 0 } : {}),
    onnotice: () => {},
    connect_timeout: 10,
    // While PostgreSQL cannot be reached, each new try to connect waits a little longer, up to a
    // second (postgres.js's default grows to 20 s, so that requests waited that long for their
    // 503 and an instance came back that long after PostgreSQL did).
    backoff: (attempts: number) => Math.min(0.05 * 2 ** attempts, 1),
    // Times in ms and µs are bigint columns: well within 2^53, so numbers, as on SQLite.
    types: { int8: { to: 20, from: [20], serialize: (x: unknown) => String(x), parse: (x: string) => Number(x) } },
    // `flagstaff VERSION`: the releases before the audit chain said `flagstaff` alone, and the chain's
    // straggler pass looks for those (src/db/audit-stragglers.ts, PRE_CHAIN_APPLICATION_NAME).
    connection: { application_name: `flagstaff ${VERSION}`, ...settings },
  });
}

/** What the store keeps about a transaction: its postgres.js client too (see `routed`). */
interface PgScope extends TxScope {
  sql: postgres.Sql;
  /** The savepoint depth of this scope (0: the transaction itself). */
  depth: number;
  /**
   * Run once the outermost transaction ended, committed or not (PgTransactionAccess.afterEnd); shared by
   * its savepoints. `over` once they ran: a hook added after that (by a transaction that went on
   * running after it was given up, withDeadline) runs at once, as not committed.
   */
  ended: { hooks: ((end: TransactionEnd) => void)[]; over: boolean };
}

/** Attempts of a transaction that PostgreSQL aborted for a conflict (a deadlock, a serialization failure). */
export const MAX_TRANSACTION_ATTEMPTS = 5;

/**
 * postgres.js prepares (and keeps prepared, per connection) only the queries sent with
 * `prepare: true`; Drizzle asks for it only for queries prepared with a name. Unprepared, a
 * query with parameters costs two round trips (Parse and Describe first, then Bind and
 * Execute) and stops the pipeline behind it, and PostgreSQL plans it again each time. This
 * wraps a postgres.js client so that every query with parameters is prepared: one round trip,
 * pipelined, planned once per connection. The statements a connection keeps are the shapes of
 * our queries (values are parameters), and connections are renewed now and then (max_lifetime).
 */
function preparing(client: postgres.Sql, deadlineMs?: number): postgres.Sql {
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === "unsafe") {
        return (query: string, params?: unknown[], options?: postgres.UnsafeQueryOptions) => {
          const q = target.unsafe(query, params as postgres.ParameterOrJSON<never>[], params?.length ? { ...options, prepare: true } : options);
          return deadlineMs === undefined ? q : withDeadline(q, deadlineMs);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

/**
 * A statement PostgreSQL never received (the network to it cut: no answer, no error) is given
 * up after `ms` with a `timeout` fault (a 503, src/db/faults.ts), as PostgreSQL's own
 * statement_timeout gives up those it did receive. The statement itself stays on its
 * connection until TCP gives up on it; the request does not wait for that.
 */
function withDeadline<Q extends object>(query: Q, ms: number): Q {
  const wrapped: Q = new Proxy(query, {
    get(target, prop, receiver) {
      if (prop === "then") {
        return (onFulfilled?: (v: unknown) => unknown, onRejected?: (e: unknown) => unknown) => {
          let timer: ReturnType<typeof setTimeout> | undefined;
          const late = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(Object.assign(new Error(`PostgreSQL did not answer within ${ms} ms`), { code: "CLIENT_TIMEOUT" })), ms);
          });
          const answered = new Promise((resolve, reject) => (target as unknown as PromiseLike<unknown>).then(resolve, reject));
          answered.catch(() => {});
          return Promise.race([answered, late]).finally(() => clearTimeout(timer)).then(onFulfilled, onRejected);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      // `values()`, `raw()`… set an option and answer the query itself: keep answering this one.
      if (typeof value === "function") return (...args: unknown[]) => {
        const out = (value as (...a: unknown[]) => unknown).apply(target, args);
        return out === target ? wrapped : out;
      };
      return value;
    },
  });
  return wrapped;
}

export function openPostgresStore(opts: PostgresStoreOptions): Store {
  const limits = timeoutSettings(opts.statementTimeoutMs ?? 10_000);
  const client = postgresClient(opts.url, opts.poolSize, limits);
  // Counters that may forget their last moments in a crash (rate windows): a small pool whose
  // sessions do not wait for the disk at commit, each statement its own transaction.
  const counterClient = postgresClient(opts.url, Math.min(4, opts.poolSize), { ...limits, synchronous_commit: "off" });
  // A statement outside a transaction, or a whole transaction, that gets no answer within the
  // statement limit and a little more is given up (withDeadline).
  const deadlineMs = (opts.statementTimeoutMs ?? 10_000) + 2_000;
  const transactionDeadlineMs = 2 * (opts.statementTimeoutMs ?? 10_000) + 2_000;
  const pooled = preparing(client, deadlineMs);
  const pool = drizzle(pooled, { schema: pgSchema }) as unknown as Db;
  // One Drizzle handle whose client sends each query to the transaction of the moment (its
  // connection), else to the pool: every transaction's handle. Building a Drizzle handle per
  // transaction would cost more CPU than a report's statements, and prepared statements
  // (src/db/prepared.ts) are built once, on it.
  const routed = drizzle(
    {
      unsafe: (query: string, params?: unknown[], queryOptions?: unknown) =>
        (current.getStore()?.sql ?? pooled).unsafe(query, params as postgres.ParameterOrJSON<never>[], queryOptions as postgres.UnsafeQueryOptions),
      options: client.options,
    } as unknown as postgres.Sql,
    { schema: pgSchema },
  ) as unknown as Db;
  const counted = preparing(counterClient, deadlineMs);
  // Outside a transaction, `db` is the pool; inside, the transaction's handle.
  const { current, shared } = transactionScope<PgScope>(pool, { statementHandle: routed });
  const lock = new Lock();
  const singletons: Singleton[] = [];
  // The audit chain's append (src/db/audit-append-pg.ts), on the lanes this instance holds; it
  // runs in each transaction just before its COMMIT (Store.appendAudit).
  const chain = pgChainAppender(
    {
      send(text, params) {
        const active = current.getStore();
        if (!active) throw new Error("PgTransactionAccess.send runs inside a transaction");
        return active.sql.unsafe(text, params as postgres.ParameterOrJSON<never>[]);
      },
      // The transaction's handle (the domain's is typed as SQLite's; PostgreSQL's runs a statement with `execute`).
      execute: (q: SQL) => (routed as unknown as { execute(q: SQL): Promise<unknown> }).execute(q),
      atCommit: (...work) => shared.atCommit(...work),
      afterEnd(fn) {
        const active = current.getStore();
        if (!active) throw new Error("PgTransactionAccess.afterEnd runs inside a transaction");
        if (active.ended.over) fn({ committed: false, chainRaced: false });
        else active.ended.hooks.push(fn);
      },
    },
    openAuditLanes(postgresClient(opts.url, 1, limits, { keep: true })),
    opts.auditChainLanes ?? DEFAULT_AUDIT_CHAIN_LANES,
  );

  /**
   * A savepoint inside the scope's transaction. Its SAVEPOINT travels with the first statement
   * of `fn` (not awaited alone); its writes left to the commit are awaited before it is
   * released, so a failure among them rolls back to it, as a failure of `fn` does.
   */
  async function nested<T>(active: PgScope, fn: () => Promise<T>): Promise<T> {
    const name = `sp${active.depth + 1}`;
    const opened = active.sql.unsafe(`SAVEPOINT ${name}`);
    opened.catch(() => {});
    const scope: PgScope = { ...active, depth: active.depth + 1, atCommit: [], audit: [] };
    try {
      const result = await current.run(scope, fn);
      await opened;
      await settleAll(scope.atCommit);
      keepAudit(active, scope);
      // postgres.js sends a query when something waits for it: `catch` sends this one now.
      const released = active.sql.unsafe(`RELEASE SAVEPOINT ${name}`);
      released.catch(() => {});
      active.atCommit.push(released);
      return result;
    } catch (err) {
      await active.sql.unsafe(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => {});
      throw err;
    }
  }

  /**
   * One attempt of an outermost transaction, on a connection of the pool (postgres.js's `begin`,
   * which fails the transaction at once when its connection is lost). The write lock and
   * synchronous_commit travel with the first statements of `fn`; the writes `fn` left to the
   * commit travel with the COMMIT: a report is then one round trip for BEGIN, one for its
   * lookups and upserts, one for the rest and the COMMIT (docs/operations.md, "Round trips").
   */
  async function attempt<T>(fn: () => Promise<T>, opts: { exclusive: boolean; durable: boolean }): Promise<T> {
    let scope: PgScope | null = null;
    // A transaction PostgreSQL stops answering (the network cut) is given up too, once each of its
    // statements would have met PostgreSQL's own limit (withDeadline): its outcome is unknown
    // then, and the request is answered 503, as when the connection is lost during a COMMIT.
    let result: unknown;
    try {
      result = await withDeadline(client.begin(async (tx) => {
        const sql = preparing(tx as unknown as postgres.Sql);
        const s: PgScope = { handle: routed, sql, afterCommit: [], atCommit: [], audit: [], depth: 0, ended: { hooks: [], over: false } };
        scope = s;
        const prelude: Promise<unknown>[] = [];
        if (opts.exclusive) prelude.push(sql.unsafe("SELECT pg_advisory_xact_lock($1)", [String(WRITE_LOCK)]));
        if (!opts.durable) prelude.push(sql.unsafe("SET LOCAL synchronous_commit = off"));
        for (const p of prelude) p.catch(() => {});
        const value = await current.run(s, fn);
        // The audit chain's append (Store.appendAudit: its lane is held from here to the COMMIT).
        if (s.audit.length) await current.run(s, () => chain.append(s.audit));
        // A statement of the prelude that failed explains the rest.
        await settleAll(prelude);
        // The COMMIT goes behind the writes left to it (postgres.js sends it when this returns);
        // when one of them failed, PostgreSQL answers the COMMIT with a ROLLBACK: checked below.
        return value;
      }), transactionDeadlineMs);
    } catch (err) {
      const failed = scope as PgScope | null;
      if (failed) endedAs(failed, false, err);
      throw err;
    }
    const done = scope as PgScope | null;
    if (done) {
      const failure = await firstFailure(done.atCommit);
      endedAs(done, !failure, failure);
      if (failure) throw failure;
      noteWriteSucceeded();
      for (const hook of done.afterCommit) hook();
    }
    return result as T;
  }

  async function transaction<T>(fn: () => Promise<T>, opts: { exclusive?: boolean; durable?: boolean; detached?: boolean } = {}): Promise<T> {
    const active = current.getStore();
    // A detached transaction never joins the open one: it runs on a connection of its own, as if
    // no transaction were open (it touches only rows the open one does not: rate windows).
    if (active && opts.detached) return current.exit(() => transaction(fn, { ...opts, detached: false }));
    if (active) return nested(active, fn);
    // A counter (non-durable, on rows only it touches): each statement its own transaction, on
    // the pool that does not wait for the disk; no BEGIN, no COMMIT.
    if (opts.durable === false && opts.exclusive === false) {
      const scope: PgScope = { handle: routed, sql: counted, afterCommit: [], atCommit: [], audit: [], depth: 0, ended: { hooks: [], over: false } };
      try {
        const value = await current.run(scope, fn);
        if (scope.audit.length) await current.run(scope, () => chain.append(scope.audit));
        return value;
      } finally {
        // Its writes are not awaited here: a lane of the audit chain is read again before its next use.
        endedAs(scope, false);
      }
    }
    const exclusive = opts.exclusive !== false;
    for (let n = 1; ; n++) {
      // One write transaction of this instance at a time waits for the database's write lock:
      // the others wait here, not holding a connection of the pool each.
      const wait = exclusive ? lock.acquire() : null;
      if (wait) await wait;
      try {
        return await attempt(fn, { exclusive, durable: opts.durable !== false });
      } catch (err) {
        if (n >= MAX_TRANSACTION_ATTEMPTS || !isConflict(err)) throw err;
      } finally {
        if (exclusive) lock.release();
      }
      // Both sides of a deadlock are retried after a random pause, so they do not meet again.
      await Bun.sleep(Math.random() * 5 * 2 ** n);
    }
  }

  return {
    ...shared,
    engine: "postgres",
    soleWriter: false,
    blobs: null,
    file: null,
    writer: pool,
    transaction,
    skipLocked: (subquery: SQLWrapper) => sql`(${subquery} FOR UPDATE SKIP LOCKED)`,
    textSearch: postgresTextSearch,
    async ping() {
      await client`SELECT 1`;
    },
    async probeWrite() {
      // One statement in a transaction of the write pool: its COMMIT ends the failing state
      // (noteWriteSucceeded). Sent on the transaction's own connection (postgres.js), as the
      // drizzle handle's type is the SQLite one's and has a `run` PostgreSQL's handle lacks.
      await transaction(async () => {
        await current.getStore()!.sql.unsafe("SELECT 1");
      }, { exclusive: false });
    },
    singleton(name, start) {
      const s = electedSingleton(opts.url, name, start);
      singletons.push(s);
      return s;
    },
    async close() {
      for (const s of singletons) await s.stop();
      await Promise.all([client.end({ timeout: 5 }), counterClient.end({ timeout: 5 }), chain.close()]);
    },
  };
}

/** The session settings that bound how long anything may hang (see PostgresStoreOptions.statementTimeoutMs). */
function timeoutSettings(ms: number): Record<string, string> {
  return { statement_timeout: String(ms), lock_timeout: String(ms), idle_in_transaction_session_timeout: String(Math.max(ms, 1_000) * 2) };
}

/** Runs a transaction's end hooks (PgTransactionAccess.afterEnd) once; `failure`: what it failed with, if known. */
function endedAs(scope: PgScope, committed: boolean, failure?: unknown): void {
  scope.ended.over = true;
  const end: TransactionEnd = { committed, chainRaced: !committed && violatedUniqueIndex(failure) === AUDIT_CHAIN_INDEX };
  for (const hook of scope.ended.hooks.splice(0)) hook(end);
}

async function firstFailure(work: readonly Promise<unknown>[]): Promise<unknown> {
  const settled = await Promise.allSettled(work);
  return settled.find((s): s is PromiseRejectedResult => s.status === "rejected")?.reason;
}

/**
 * A conflict PostgreSQL resolved by aborting this transaction, which may simply run again: a
 * deadlock (40P01), a serialization failure (40001), a race on a unique index below, or a
 * conflict the domain detected itself (TransactionConflict).
 */
function isConflict(err: unknown): boolean {
  if (err instanceof TransactionConflict) return true;
  const index = violatedUniqueIndex(err);
  if (index !== null) return RACED_UNIQUE_INDEXES.has(index);
  const code = driverError(err)?.code;
  return code === "40P01" || code === "40001";
}

/** The driver's error of a failure (Drizzle wraps it: DrizzleQueryError, its `cause`). */
function driverError(err: unknown): { code?: unknown; constraint_name?: unknown } | null {
  return ((err as { cause?: unknown } | null)?.cause ?? err) as { code?: unknown; constraint_name?: unknown } | null;
}

/** The unique index a failure violated (23505), else null. */
function violatedUniqueIndex(err: unknown): string | null {
  const e = driverError(err);
  return e?.code === "23505" ? String(e.constraint_name) : null;
}

/**
 * Unique indexes whose violation is a race that running again resolves: two instances'
 * reports meeting in one microsecond (the second takes the next time), or a case reopened
 * while a report opened another for the same target (the reopening report joins that one).
 */
const RACED_UNIQUE_INDEXES = new Set(["reports_org_created_idx", "cases_open_target_idx", "cases_open_subject_idx", AUDIT_CHAIN_INDEX]);

/** A stable 32-bit hash of a singleton's name (FNV-1a). */
function nameHash(name: string): bigint {
  let h = 0x811c9dc5;
  for (const ch of new TextEncoder().encode(name)) h = Math.imul(h ^ ch, 0x01000193) >>> 0;
  return BigInt(h);
}

/**
 * Runs `start` on exactly one instance at a time: the one holding the session advisory lock
 * of `name`, on a connection of its own (a pool of one, so that a lost connection is replaced
 * the way the pool replaces any). The others try again every SINGLETON_RETRY_MS. The holder
 * checks every SINGLETON_RETRY_MS that its session is the one that took the lock (a connection
 * lost and replaced holds no lock): if not, it stops its task and competes again.
 */
function electedSingleton(url: string, name: string, start: () => { stop(): Promise<void> | void }): Singleton {
  const key = String(SINGLETON_BASE + nameHash(name));
  const conn = postgresClient(url, 1, {}, { keep: true });
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let held: { pid: number; task: { stop(): Promise<void> | void }; watch: ReturnType<typeof setInterval> } | null = null;

  async function release(): Promise<void> {
    const h = held;
    held = null;
    if (!h) return;
    clearInterval(h.watch);
    await h.task.stop();
    // On the session that took it (if that one is gone, so is the lock).
    await conn`SELECT pg_advisory_unlock(${key}::bigint) WHERE pg_backend_pid() = ${h.pid}`.catch(() => {});
  }

  async function attempt(): Promise<void> {
    timer = null;
    if (stopped || held) return;
    try {
      const [row] = await conn<{ ok: boolean; pid: number }[]>`SELECT pg_try_advisory_lock(${key}::bigint) AS ok, pg_backend_pid() AS pid`;
      if (row?.ok && !stopped) {
        const pid = row.pid;
        const task = start();
        const watch = setInterval(() => {
          conn<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`.then(
            ([r]) => {
              if (r?.pid !== pid) void release().then(schedule);
            },
            () => void release().then(schedule),
          );
        }, SINGLETON_RETRY_MS);
        held = { pid, task, watch };
        return;
      }
    } catch {
      // the database is unreachable for now: try again later
    }
    schedule();
  }

  function schedule(): void {
    if (stopped || held || timer) return;
    timer = setTimeout(() => void attempt(), SINGLETON_RETRY_MS);
  }

  void attempt();
  return {
    get leading() {
      return held !== null;
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await release();
      await conn.end({ timeout: 5 });
    },
  };
}

/**
 * Applies `run` while holding the migration lock, so that instances started together migrate
 * one after the other (the second finds nothing left to do).
 */
export async function withMigrationLock<T>(url: string, run: () => Promise<T>): Promise<T> {
  const client = postgresClient(url, 1);
  try {
    await client`SELECT pg_advisory_lock(${String(MIGRATION_LOCK)}::bigint)`;
    return await run();
  } finally {
    await client.end({ timeout: 5 });
  }
}
