import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import type { Db } from "./client.ts";
import * as pgSchema from "./schema-pg.ts";
import { postgresTextSearch } from "./search.ts";
import { Lock, transactionScope, type Singleton, type Store, type TxScope } from "./store.ts";

/**
 * The PostgreSQL engine of the store (src/db/store.ts says what every engine promises).
 *
 * - Every write transaction of the domain first takes one transaction-level advisory lock (the
 *   database's write lock), so write transactions run one at a time across every instance, as
 *   they do on SQLite: the domain's rules (one open case per target, identity upserts, the
 *   state table's checks) were written for serial writes and stay exactly as true. Reads never
 *   wait: they run outside transactions, each statement on a snapshot of what was committed.
 *   Group commit still applies (one transaction, one commit, for many reports).
 * - Transactions declared `exclusive: false` skip the write lock: they touch only rows they lock
 *   themselves (the job queue: a claim with FOR UPDATE SKIP LOCKED, then updates of the rows it
 *   leased), so two instances claim jobs at the same moment without waiting for each other.
 * - Inside a transaction, `store.db` is the transaction's handle (found through the async
 *   context); a nested transaction is a SAVEPOINT.
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
}

export type PostgresClient = postgres.Sql;

/** The postgres.js client with our settings: int8 (counts, times) read as numbers. */
export function postgresClient(url: string, max: number): PostgresClient {
  return postgres(url, {
    max,
    onnotice: () => {},
    connect_timeout: 10,
    // Times in ms and µs are bigint columns: well within 2^53, so numbers, as on SQLite.
    types: { int8: { to: 20, from: [20], serialize: (x: unknown) => String(x), parse: (x: string) => Number(x) } },
    connection: { application_name: "flagstaff" },
  });
}

/** What the store keeps about a transaction: its postgres.js client too (see `routed`). */
interface PgScope extends TxScope {
  sql: postgres.Sql;
}

export function openPostgresStore(opts: PostgresStoreOptions): Store {
  const client = postgresClient(opts.url, opts.poolSize);
  const pool = drizzle(client, { schema: pgSchema }) as unknown as Db;
  // Prepared statements (src/db/prepared.ts) are built once, on a Drizzle handle whose client
  // sends each query to the transaction of the moment (else to the pool): built per transaction
  // handle instead, every report would build its statements again, which costs far more CPU
  // than running them. postgres.js keeps them prepared per connection by their SQL text.
  const routed = drizzle(
    {
      unsafe: (query: string, params?: unknown[], queryOptions?: unknown) =>
        (current.getStore()?.sql ?? client).unsafe(query, params as postgres.ParameterOrJSON<never>[], queryOptions as postgres.UnsafeQueryOptions),
      options: client.options,
    } as unknown as postgres.Sql,
    { schema: pgSchema },
  ) as unknown as Db;
  // Outside a transaction, `db` is the pool; inside, the transaction's handle.
  const { current, shared } = transactionScope<PgScope>(pool, { statementHandle: routed });
  const lock = new Lock();
  const singletons: Singleton[] = [];

  type PgTx = { transaction<T>(fn: (tx: PgTx) => Promise<T>): Promise<T>; execute(q: SQL): Promise<unknown> };
  const poolTx = pool as unknown as PgTx;

  async function transaction<T>(fn: () => Promise<T>, opts: { exclusive?: boolean; durable?: boolean; detached?: boolean } = {}): Promise<T> {
    const active = current.getStore();
    // A detached transaction never joins the open one: it runs on a connection of its own, as if
    // no transaction were open (it touches only rows the open one does not: rate windows).
    if (active && opts.detached) return current.exit(() => transaction(fn, { ...opts, detached: false }));
    if (active) {
      return (active.handle as unknown as PgTx).transaction((sp) => current.run({ handle: sp as unknown as Db, sql: clientOf(sp), afterCommit: active.afterCommit }, fn));
    }
    const exclusive = opts.exclusive !== false;
    // One write transaction of this instance at a time waits for the database's write lock:
    // the others wait here, not holding a connection of the pool each.
    const wait = exclusive ? lock.acquire() : null;
    if (wait) await wait;
    const hooks: (() => void)[] = [];
    let result: T;
    try {
      result = await poolTx.transaction(async (tx) => {
        if (exclusive) await tx.execute(sql`SELECT pg_advisory_xact_lock(${WRITE_LOCK})`);
        if (opts.durable === false) await tx.execute(sql`SET LOCAL synchronous_commit = off`);
        return current.run({ handle: tx as unknown as Db, sql: clientOf(tx), afterCommit: hooks }, fn);
      });
    } finally {
      if (exclusive) lock.release();
    }
    for (const hook of hooks) hook();
    return result;
  }

  return {
    ...shared,
    engine: "postgres",
    soleWriter: false,
    writer: pool,
    transaction,
    skipLocked: (subquery: SQLWrapper) => sql`(${subquery} FOR UPDATE SKIP LOCKED)`,
    textSearch: postgresTextSearch,
    async ping() {
      await client`SELECT 1`;
    },
    singleton(name, start) {
      const s = electedSingleton(client, name, start);
      singletons.push(s);
      return s;
    },
    async close() {
      for (const s of singletons) await s.stop();
      await client.end({ timeout: 5 });
    },
  };
}

/**
 * The postgres.js client of a Drizzle transaction (the reserved connection of a BEGIN, or a
 * SAVEPOINT's): Drizzle 0.45's PostgresJsTransaction keeps it as `session.client`.
 */
function clientOf(tx: unknown): postgres.Sql {
  const sql = (tx as { session?: { client?: postgres.Sql } }).session?.client;
  if (!sql) throw new Error("a Drizzle postgres-js transaction without session.client: check the Drizzle version");
  return sql;
}

/** A stable 32-bit hash of a singleton's name (FNV-1a). */
function nameHash(name: string): bigint {
  let h = 0x811c9dc5;
  for (const ch of new TextEncoder().encode(name)) h = Math.imul(h ^ ch, 0x01000193) >>> 0;
  return BigInt(h);
}

/**
 * Runs `start` on exactly one instance at a time: the one holding the session advisory lock
 * of `name`, on a connection reserved for it. The others try again every SINGLETON_RETRY_MS.
 * If the holder's connection breaks, it stops its task and competes again.
 */
function electedSingleton(client: PostgresClient, name: string, start: () => { stop(): Promise<void> | void }): Singleton {
  const key = SINGLETON_BASE + nameHash(name);
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let held: { conn: postgres.ReservedSql; task: { stop(): Promise<void> | void }; watch: ReturnType<typeof setInterval> } | null = null;

  async function release(): Promise<void> {
    const h = held;
    held = null;
    if (!h) return;
    clearInterval(h.watch);
    await h.task.stop();
    try {
      await h.conn`SELECT pg_advisory_unlock(${String(key)}::bigint)`;
    } catch {
      // the connection is gone: so is the lock
    }
    h.conn.release();
  }

  async function attempt(): Promise<void> {
    timer = null;
    if (stopped || held) return;
    let conn: postgres.ReservedSql | null = null;
    try {
      conn = await client.reserve();
      const [row] = await conn<{ ok: boolean }[]>`SELECT pg_try_advisory_lock(${String(key)}::bigint) AS ok`;
      if (row?.ok && !stopped) {
        const task = start();
        const c = conn;
        // The lock lives as long as this connection: check it now and then; if it broke,
        // stop the task (another instance may hold the lock already) and compete again.
        const watch = setInterval(() => {
          c`SELECT 1`.catch(() => void release().then(schedule));
        }, SINGLETON_RETRY_MS);
        held = { conn, task, watch };
        conn = null;
        return;
      }
    } catch {
      // the database is unreachable for now: try again later
    } finally {
      conn?.release();
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
