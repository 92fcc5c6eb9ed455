import { Database } from "bun:sqlite";
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { UsageError } from "./keys.ts";

export interface BackupResult {
  file: string;
  bytes: number;
  ms: number;
  /** Rows of the main tables in the copy, read back from it. */
  counts: Record<string, number>;
}

const COUNTED = ["organizations", "projects", "reports", "cases", "identities", "audit_events", "jobs"];

/**
 * `flagstaff backup <file>`: an online, consistent copy of the database, safe while the server
 * runs and writes.
 *
 * `VACUUM INTO` copies the database as one read transaction sees it: in WAL mode that is a
 * snapshot, and the server keeps committing beside it (readers never block the writer). The copy
 * is a complete database on its own (no -wal file) and compacted. It is written under a
 * temporary name beside the target, synced to disk, checked (`PRAGMA quick_check`) and only
 * then renamed to `file`, so a crash or a full disk never leaves a half-written backup under
 * the final name. An existing `file` is refused rather than replaced.
 *
 * The source is opened without creating or migrating anything (a backup must not change what
 * it copies); the copy has the schema version of the database it came from. Run it as the user
 * the server runs as.
 */
export function backupDatabase(dbPath: string, target: string | undefined): BackupResult {
  if (!target) throw new UsageError("usage: flagstaff backup <file>   (an online, consistent copy of FLAGSTAFF_DB)");
  if (dbPath === ":memory:") throw new UsageError("FLAGSTAFF_DB is :memory:, there is nothing to back up");
  const source = resolve(dbPath);
  const file = resolve(target);
  if (!existsSync(source)) throw new UsageError(`no database at ${source} (set FLAGSTAFF_DB)`);
  if (file === source) throw new UsageError("the backup file must not be the database itself");
  if (existsSync(file)) throw new UsageError(`${file} already exists: choose a new file name (a backup never replaces a file)`);
  if (!existsSync(dirname(file))) throw new UsageError(`folder ${dirname(file)} does not exist`);

  const started = performance.now();
  const partial = `${file}.partial-${process.pid}`;
  rmSync(partial, { force: true });
  // Read-write but never created: a read-only connection cannot remove the -wal and -shm files
  // it had to create when the server is not running (left behind, they could belong to the
  // wrong user); as the last connection, this one removes them on close. It only reads.
  const db = new Database(source, { readwrite: true, create: false });
  try {
    // Wait for a writer holding a lock (a checkpoint, a migration) rather than failing.
    db.exec("PRAGMA busy_timeout = 10000");
    db.query("VACUUM INTO ?").run(partial);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  } finally {
    db.close();
  }

  let counts: Record<string, number>;
  try {
    syncFile(partial);
    const copy = new Database(partial, { readonly: true });
    try {
      const check = copy.query("PRAGMA quick_check").values().flat();
      if (check.length !== 1 || check[0] !== "ok") throw new Error(`the copy failed its integrity check: ${check.slice(0, 5).join("; ")}`);
      counts = Object.fromEntries(
        COUNTED.filter((t) => copy.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(t)).map((t) => [
          t,
          (copy.query(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n,
        ]),
      );
    } finally {
      copy.close();
    }
    renameSync(partial, file);
    syncFile(dirname(file)); // the rename itself reaches the disk
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
  return { file, bytes: statSync(file).size, ms: performance.now() - started, counts };
}

function syncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function formatBackup(r: BackupResult): string {
  const counts = Object.entries(r.counts)
    .map(([t, n]) => `${n} ${t}`)
    .join(", ");
  return `backup written to ${r.file} (${(r.bytes / 1e6).toFixed(1)} MB in ${Math.round(r.ms)} ms): ${counts}`;
}
