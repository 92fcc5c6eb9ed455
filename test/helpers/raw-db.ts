/**
 * Plain SQL on a test server's database, whatever the pass's engine, for what a test must see
 * below the API (that only hashes are stored, say) or set up behind it (a session grown old).
 * Write the SQL with `?` placeholders; on PostgreSQL they become $1, $2, …
 */
import { Database } from "bun:sqlite";
import { postgresClient } from "../../src/db/store-pg.ts";
import { databaseForPath, TEST_PG_URL } from "./pg.ts";

export interface RawDb {
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  run(sql: string, ...params: unknown[]): Promise<void>;
  close(): Promise<void>;
}

/** The database a server (or CLI) was given as FLAGSTAFF_DB `path`. */
export async function rawDb(path: string, opts: { readonly?: boolean } = {}): Promise<RawDb> {
  if (!TEST_PG_URL) {
    const db = new Database(path, { readonly: opts.readonly ?? false });
    db.exec("PRAGMA busy_timeout = 5000");
    return {
      all: async <T>(q: string, ...p: unknown[]) => db.query(q).all(...(p as never[])) as T[],
      get: async <T>(q: string, ...p: unknown[]) => (db.query(q).get(...(p as never[])) ?? undefined) as T | undefined,
      run: async (q: string, ...p: unknown[]) => void db.query(q).run(...(p as never[])),
      close: async () => db.close(),
    };
  }
  // The server's own client settings (int8 counts and times read as numbers).
  const sql = postgresClient((await databaseForPath(path)).url, 1);
  let n = 0;
  const numbered = (q: string) => q.replace(/\?/g, () => `$${++n}`);
  const exec = (q: string, p: unknown[]) => {
    n = 0;
    return sql.unsafe(numbered(q), p as never[]);
  };
  return {
    all: async <T>(q: string, ...p: unknown[]) => [...(await exec(q, p))] as T[],
    get: async <T>(q: string, ...p: unknown[]) => (await exec(q, p))[0] as T | undefined,
    run: async (q: string, ...p: unknown[]) => void (await exec(q, p)),
    close: () => sql.end({ timeout: 5 }),
  };
}
