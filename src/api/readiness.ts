/**
 * Readiness beyond "the database answers a read": while writes have been failing (a full or
 * read-only disk, a lost database: src/db/faults.ts), the instance is not ready, so that a load
 * balancer sends its traffic elsewhere. It is checked cheaply: nothing at all while writes go
 * through; while they fail, one tiny write (Store.probeWrite) at most once a second, which ends
 * the failing state when it goes through (space freed, the disk writable again).
 */
import { databaseFault, failingWritesFault, noteDatabaseFault, type DatabaseFault } from "../db/faults.ts";
import type { Store } from "../db/store.ts";

const PROBE_EVERY_MS = 1_000;
let lastProbeAt = 0;

const REASONS: Record<DatabaseFault, string> = {
  connection: "database unavailable",
  unavailable: "database unavailable",
  timeout: "database too slow",
  busy: "database busy",
  disk_full: "database out of disk space: writes fail",
  read_only: "database read-only: writes fail",
  io: "database I/O errors: writes fail",
};

/** Why writes fail now, or null when they go through (see above). */
export async function writesFailing(store: Store, now = Date.now()): Promise<string | null> {
  const failing = failingWritesFault();
  if (!failing) return null;
  if (now - lastProbeAt >= PROBE_EVERY_MS) {
    lastProbeAt = now;
    try {
      // Its COMMIT ends the failing state (noteWriteSucceeded).
      await store.probeWrite();
    } catch (err) {
      noteDatabaseFault(databaseFault(err) ?? failing.kind);
    }
  }
  const still = failingWritesFault();
  return still ? REASONS[still.kind] : null;
}
