/**
 * Report creation times in microseconds, strictly increasing within the database. Many reports
 * can share a millisecond; giving each its own microsecond makes the time a unique sort key,
 * so a cursor that is an ISO timestamp pages without skipping or repeating anything.
 */
import { max } from "drizzle-orm";
import { reports } from "../../db/schema.ts";
import { TransactionConflict, type Store } from "../../db/store.ts";
import type { DomainContext } from "../core/context.ts";
import { badRequest } from "../core/errors.ts";
import { clientDateTime } from "../views/common.ts";

/**
 * The last time handed out, per database connection that writes (one process may open several
 * stores: tests, the CLI; stores over the same connection share it).
 */
const lastUsOf = new WeakMap<Store["writer"], number>();

/**
 * How long after its creation time a report's transaction may still commit, on engines where
 * several instances write (PostgreSQL); ascending listings show reports once their creation
 * time is `LISTING_HORIZON_MS` old, so that no report commits behind a reader's cursor
 * (`listingHorizonUs`). A report whose transaction would commit later runs again with a new
 * time (`assertCommitsInTime`).
 */
export const LISTING_HORIZON_MS = 2_000;
const COMMIT_WITHIN_MS = LISTING_HORIZON_MS / 2;

/**
 * The next creation time of a report: `nowMs` in microseconds, or one past the last time this
 * process handed out. Times are unique in an organization (a unique index says so):
 * - a sole writer (SQLite) remembers the last time it handed out (at first, the database's
 *   last), and its transactions commit in order, so times follow the order of the commits;
 * - where instances write side by side (PostgreSQL), each hands out its own increasing times
 *   without asking the database; two instances meeting in one microsecond is a conflict the
 *   report's insert meets (reports_org_created_idx: the transaction runs again, src/db/store-pg.ts),
 *   and a transaction commits within COMMIT_WITHIN_MS of its time (assertCommitsInTime), which
 *   ascending listings wait out.
 */
export async function nextCreatedUs(ctx: Pick<DomainContext, "store" | "db">, input: { nowMs: number }): Promise<number> {
  let lastUs = lastUsOf.get(ctx.store.writer);
  if (lastUs === undefined && ctx.store.soleWriter) {
    // A sole writer's first report after it started: after the database's last one.
    const [row] = await ctx.db.select({ m: max(reports.createdUs) }).from(reports);
    lastUs = row?.m ?? 0;
  }
  // The clock gives milliseconds: the microsecond within is made up. A sole writer counts up
  // from the millisecond's first, one at a time; instances side by side start at a random one
  // and step on by a random few, so that two of them rarely meet in one microsecond, and never
  // keep meeting in step after they did.
  const sole = ctx.store.soleWriter;
  const withinMs = sole ? 0 : Math.floor(Math.random() * 1000);
  const step = sole ? 1 : 1 + Math.floor(Math.random() * 64);
  const us = Math.max(input.nowMs * 1000 + withinMs, (lastUs ?? 0) + step);
  lastUsOf.set(ctx.store.writer, us);
  return us;
}

/**
 * Where instances write side by side: a report still uncommitted COMMIT_WITHIN_MS after its
 * creation time is taken again with a new time (TransactionConflict), so that it can never
 * commit behind an ascending reader (listingHorizonUs).
 */
export function assertCommitsInTime(ctx: Pick<DomainContext, "store" | "clock">, createdUs: number): void {
  if (ctx.store.soleWriter) return;
  if (ctx.clock.now() * 1000 - createdUs > COMMIT_WITHIN_MS * 1000) {
    throw new TransactionConflict("the report took too long to commit for its creation time");
  }
}

/**
 * The newest creation time an ascending listing may show (exclusive), or null for no bound: a
 * sole writer's reports commit in the order of their times, so every time is safe at once;
 * where instances write side by side, a report may still commit up to COMMIT_WITHIN_MS after
 * its time, so a listing stops LISTING_HORIZON_MS back (twice that, for clocks of instances
 * that differ a little).
 */
export function listingHorizonUs(ctx: Pick<DomainContext, "store" | "clock">): number | null {
  return ctx.store.soleWriter ? null : (ctx.clock.now() - LISTING_HORIZON_MS) * 1000;
}

/**
 * How long after a moment every report transaction begun before it has committed, or been run
 * again from its start (assertCommitsInTime), on this store: nothing to wait for a sole writer,
 * whose transactions run one at a time; LISTING_HORIZON_MS where instances write side by side
 * (COMMIT_WITHIN_MS, and as much again for clocks of instances that differ a little, as
 * ascending listings wait). A reader that must see every report (and its media) begun before
 * that moment reads after it (the past media check, src/domain/banks/past-check.ts).
 */
export function reportsSettleMs(store: Pick<Store, "soleWriter">): number {
  return store.soleWriter ? 0 : LISTING_HORIZON_MS;
}

/** `2026-11-21T10:00:00.123456Z`: an ISO 8601 timestamp with microseconds. */
export function formatCursor(us: number): string {
  const ms = Math.floor(us / 1000);
  const micros = String(us % 1000).padStart(3, "0");
  return new Date(ms).toISOString().replace("Z", `${micros}Z`);
}

/** The parts of a checked date-time: up to the seconds, the fraction, the zone. */
const PARTS = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/;

/** Parses a cursor, a client's date-time (clientDateTime: any precision, any offset), into microseconds; 400 when it is not one. */
export function parseCursor(cursor: string): number {
  const checked = clientDateTime.safeParse(cursor);
  const m = checked.success ? PARTS.exec(checked.data) : null;
  if (!m) throw badRequest(`cursor: ${checked.error?.issues[0]?.message ?? "not a date-time"} (pass back nextCursor as it came)`);
  const base = Date.parse(`${m[1]}${m[3]}`);
  const fraction = (m[2] ?? "").padEnd(6, "0").slice(0, 6);
  return base * 1000 + Number(fraction);
}
