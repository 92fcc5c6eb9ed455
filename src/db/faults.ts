/**
 * Which errors mean "the database cannot answer now" rather than "this request is wrong" or "a
 * bug": a lost or refused connection, PostgreSQL shutting down or starting, too many
 * connections, a statement cancelled by its time limit, a conflict retried to the end; SQLite
 * out of disk space, on a read-only file system, or busy past its timeout. The transports answer
 * them 503 with Retry-After (src/api/http-errors.ts), never 500.
 */
import { log } from "../log.ts";

/** The kinds of database faults (a metric label and a log field). */
export type DatabaseFault = "connection" | "unavailable" | "timeout" | "busy" | "disk_full" | "read_only" | "io";

const POSTGRES_CODES: Record<string, DatabaseFault> = {
  // postgres.js and the socket
  ECONNREFUSED: "connection",
  ECONNRESET: "connection",
  EPIPE: "connection",
  ETIMEDOUT: "connection",
  EHOSTUNREACH: "connection",
  CONNECTION_CLOSED: "connection",
  CONNECTION_ENDED: "connection",
  CONNECTION_DESTROYED: "connection",
  CONNECT_TIMEOUT: "connection",
  // src/db/store-pg.ts: a statement or transaction PostgreSQL stopped answering (a network cut)
  CLIENT_TIMEOUT: "timeout",
  // PostgreSQL: connection exceptions (class 08), operator intervention (57), resources (53)
  "08000": "connection",
  "08001": "connection",
  "08003": "connection",
  "08004": "connection",
  "08006": "connection",
  "57P01": "unavailable",
  "57P02": "unavailable",
  "57P03": "unavailable",
  "53300": "unavailable",
  "57014": "timeout",
  "55P03": "timeout",
  "25P04": "timeout",
  "40001": "busy",
  "40P01": "busy",
};

const SQLITE_CODES: Record<string, DatabaseFault> = {
  SQLITE_FULL: "disk_full",
  SQLITE_READONLY: "read_only",
  SQLITE_IOERR: "io",
  SQLITE_BUSY: "busy",
  SQLITE_CANTOPEN: "io",
};

/** The database fault `err` is (looking through wrapping errors' `cause`), or null for any other error. */
export function databaseFault(err: unknown): DatabaseFault | null {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") {
      const pg = POSTGRES_CODES[code];
      if (pg) return pg;
      // SQLite's extended codes (SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED…) name their family first.
      const family = Object.keys(SQLITE_CODES).find((c) => code === c || code.startsWith(`${c}_`));
      if (family) return SQLITE_CODES[family]!;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Whether writes go through: what readiness reports (GET /readyz) besides a read's answer.

/**
 * How long writes must go through without a fault before the instance is ready again: on a full
 * disk some commits still fit in space the database already holds, and readiness must not flap
 * with them.
 */
export const WRITES_QUIET_MS = 5_000;

/** Since when writes have been failing, the last fault and when it came (null: writes go through). */
let failingWrites: { kind: DatabaseFault; since: number; lastAt: number } | null = null;

/** A request met a database fault (the transports, as they answer 503). */
export function noteDatabaseFault(kind: DatabaseFault, now = Date.now()): void {
  // A busy or timed-out statement says nothing of the database's health.
  if (kind === "busy" || kind === "timeout") return;
  if (failingWrites) {
    failingWrites = { ...failingWrites, kind, lastAt: now };
    return;
  }
  failingWrites = { kind, since: now, lastAt: now };
  log.error("database writes failing: not ready until they go through again", { fault: kind });
}

/**
 * A write transaction committed (the stores, after each COMMIT): writes go through again once
 * no fault came for WRITES_QUIET_MS.
 */
export function noteWriteSucceeded(now = Date.now()): void {
  if (!failingWrites || now - failingWrites.lastAt < WRITES_QUIET_MS) return;
  log.warn("database writes go through again", { fault: failingWrites.kind, failedForMs: now - failingWrites.since });
  failingWrites = null;
}

/** Why writes fail now (a full or read-only disk, a lost database), or null when they go through. */
export function failingWritesFault(): { kind: DatabaseFault; since: number } | null {
  return failingWrites;
}
