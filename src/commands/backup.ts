import { Database } from "bun:sqlite";
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
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

export interface AttachmentsBackup {
  dir: string;
  files: number;
  bytes: number;
}

/**
 * The local attachment store copied beside a database backup (`<file>.attachments/`): its
 * originals, previews and `store-id` (docs/attachments.md). Taken after the database's snapshot,
 * so every file the snapshot's rows name is there, unless an erasure deleted it in between (as it
 * should); files added since are there too, and the sweep deletes them after a restore (no row
 * names them). Each file is copied, synced, and the copy is written under a temporary name and
 * renamed, like the database's. Files are content-addressed and never change once stored.
 */
export function backupAttachments(storeDir: string, backupFile: string): AttachmentsBackup | null {
  const source = resolve(storeDir);
  if (!existsSync(source)) return null;
  const target = `${resolve(backupFile)}.attachments`;
  if (existsSync(target)) throw new UsageError(`${target} already exists: choose a new file name (a backup never replaces a file)`);
  const partial = `${target}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  let files = 0;
  let bytes = 0;
  try {
    mkdirSync(partial);
    if (existsSync(join(source, "store-id"))) copyFileSync(join(source, "store-id"), join(partial, "store-id"));
    for (const area of ["blobs", "previews"]) {
      if (!existsSync(join(source, area))) continue;
      for (const shard of readdirSync(join(source, area))) {
        mkdirSync(join(partial, area, shard), { recursive: true });
        for (const name of readdirSync(join(source, area, shard))) {
          const from = join(source, area, shard, name);
          const to = join(partial, area, shard, name);
          try {
            copyFileSync(from, to);
          } catch (err) {
            // Deleted since it was listed (an erasure): not in the backup, as it should not be.
            if ((err as { code?: string }).code === "ENOENT") continue;
            throw err;
          }
          syncFile(to);
          files++;
          bytes += statSync(to).size;
        }
        syncFile(join(partial, area, shard));
      }
    }
    syncFile(partial);
    renameSync(partial, target);
    syncFile(dirname(target));
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
  return { dir: target, files, bytes };
}

export function formatAttachmentsBackup(r: AttachmentsBackup): string {
  return `attachments copied to ${r.dir} (${r.files} files, ${(r.bytes / 1e6).toFixed(1)} MB)`;
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
