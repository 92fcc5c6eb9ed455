import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import * as schema from "./schema-sqlite.ts";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** How much of the database file is read through a memory map (see openDatabase). */
const MMAP_BYTES = 256 * 1024 * 1024;

/**
 * Opens the database with the settings every process of Flagstaff shares:
 * - WAL: readers never block the writer, and a commit is one append to the log.
 * - synchronous=NORMAL: in WAL mode a commit survives a crash of the process (the OS has
 *   the pages); only a power loss or kernel crash can lose the last commits, never corrupting
 *   the database. FULL would fsync on every commit and cost most of our write throughput.
 *   (docs/operations.md, "What survives"; `bun run chaos` kills the server under load.)
 * - busy_timeout: a second process (the CLI while the server runs) waits instead of failing.
 * - mmap_size: the database file is read through a memory map of up to MMAP_BYTES rather than
 *   copied page by page into SQLite's cache, so reads that miss that cache (the history a rule's
 *   facts look up: a reporter's past reports, a target's reports) cost no system call. The
 *   mapped pages are the kernel's page cache, which it reclaims under memory pressure; writes
 *   still go through the WAL. (Rails 8 ships SQLite with the same setting, at 128 MB.)
 * - foreign_keys: SQLite leaves them off unless asked.
 */
export function openDatabase(path: string, opts: { queryOnly?: boolean } = {}): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path, { create: true, strict: true });
  if (opts.queryOnly) {
    // The store's reading connection (src/db/store.ts): any write through it is an error.
    sqlite.exec("PRAGMA busy_timeout = 5000");
    sqlite.exec("PRAGMA cache_size = -32000");
    sqlite.exec("PRAGMA temp_store = MEMORY");
    sqlite.exec("PRAGMA query_only = ON");
    sqlite.exec(`PRAGMA mmap_size = ${MMAP_BYTES}`);
    return drizzle(sqlite, { schema }) as Db;
  }
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA foreign_keys = ON");
  // Let the WAL grow to ~4000 pages (16 MB) before an automatic checkpoint folds it back into
  // the database file (and fsyncs both). `serve` moves checkpoints to a thread of its own and
  // raises this to a safety net (src/db/checkpoint.ts); the CLI commands keep it.
  sqlite.exec("PRAGMA wal_autocheckpoint = 4000");
  sqlite.exec("PRAGMA cache_size = -32000");
  sqlite.exec("PRAGMA temp_store = MEMORY");
  sqlite.exec(`PRAGMA mmap_size = ${MMAP_BYTES}`);
  return drizzle(sqlite, { schema }) as Db;
}

