import { sql, type SQL } from "drizzle-orm";
import type { Db } from "./client.ts";
import { connectionOf } from "./store.ts";

/**
 * Statements on the hot paths (API key lookup, report creation) are built once per database
 * and kept prepared: building a drizzle query and having SQLite compile it again cost more than
 * running it. `statements(build)` returns a function giving the prepared set for a database,
 * built on first use (drizzle `.prepare()` with `sql.placeholder(...)` values).
 */
export function statements<T>(build: (db: Db) => T): (db: Db) => T {
  const cache = new WeakMap<Db, T>();
  return (handle) => {
    // A statement is compiled on one connection: the store's handle names the one of the moment.
    const db = connectionOf(handle);
    let s = cache.get(db);
    if (s === undefined) {
      s = build(db);
      cache.set(db, s);
    }
    return s;
  };
}

/**
 * Like `statements`, for queries whose SQL depends on which options are given (a list's
 * filters): `shaped(build)(db, shape, q)` prepares `build(db, q)` once per connection and shape,
 * where `shape` names what the SQL depends on (which filters are present, not their values,
 * which are placeholders).
 */
export function shapedStatements<Q, T>(build: (db: Db, q: Q) => T): (handle: Db, shape: string, q: Q) => T {
  const cache = new WeakMap<Db, Map<string, T>>();
  return (handle, shape, q) => {
    const db = connectionOf(handle);
    let byShape = cache.get(db);
    if (byShape === undefined) {
      byShape = new Map();
      cache.set(db, byShape);
    }
    let s = byShape.get(shape);
    if (s === undefined) {
      s = build(db, q);
      byShape.set(shape, s);
    }
    return s;
  };
}

/** A named placeholder usable where drizzle wants an SQL value (`.set({...})`, `.values({...})`). */
export const param = (name: string): SQL => sql`${sql.placeholder(name)}`;

/**
 * `select` (a Drizzle select of `db`) with its rows locked until the transaction ends: FOR
 * UPDATE on PostgreSQL, where transactions run side by side; as is on SQLite, where one writer
 * runs at a time (its select builder has no locking clause). Transactions that read rows and
 * then write what they read lock them first (a case before its reports are decided), so that
 * two of them never both act on what they read. Use it inside a transaction.
 */
export function forUpdate<Q extends object>(select: Q): Q {
  // The domain's handle is typed as SQLite's; on PostgreSQL its selects have `for`.
  const lockable = select as Q & { for?: (strength: "update") => Q };
  return typeof lockable.for === "function" ? lockable.for("update") : select;
}
