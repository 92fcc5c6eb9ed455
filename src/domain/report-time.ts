/**
 * Report creation times in microseconds, strictly increasing within the database. Many reports
 * can share a millisecond; giving each its own microsecond makes the time a unique sort key,
 * so a cursor that is an ISO timestamp pages without skipping or repeating anything.
 */
import { eq, max } from "drizzle-orm";
import type { Store } from "../db/store.ts";
import { reports } from "../db/schema.ts";
import type { DomainContext } from "./context.ts";
import { badRequest } from "./errors.ts";

/**
 * The last time handed out, per database connection that writes (one process may open several
 * stores: tests, the CLI; stores over the same connection share it).
 */
const lastUsOf = new WeakMap<Store["writer"], number>();

/**
 * The next creation time of a report of the organization: `nowMs` in microseconds, or one past
 * the organization's last one. Called inside the report's transaction, which the store
 * serializes (across instances on PostgreSQL), so times never repeat within an organization
 * (a unique index says so) and follow the order of the commits. A sole writer remembers the
 * last time it handed out (across organizations: still strictly increasing for each); with
 * other instances writing, the organization's last time is read in the transaction (one step
 * down the unique index (org_id, created_us)).
 */
export async function nextCreatedUs(ctx: Pick<DomainContext, "store" | "db" | "orgId">, input: { nowMs: number }): Promise<number> {
  let lastUs = ctx.store.soleWriter ? lastUsOf.get(ctx.store.writer) : undefined;
  if (lastUs === undefined) {
    const where = ctx.store.soleWriter ? undefined : eq(reports.orgId, ctx.orgId);
    const [row] = await ctx.db.select({ m: max(reports.createdUs) }).from(reports).where(where);
    lastUs = row?.m ?? 0;
  }
  const us = Math.max(input.nowMs * 1000, lastUs + 1);
  if (ctx.store.soleWriter) lastUsOf.set(ctx.store.writer, us);
  return us;
}

/** `2026-11-21T10:00:00.123456Z`: an ISO 8601 timestamp with microseconds. */
export function formatCursor(us: number): string {
  const ms = Math.floor(us / 1000);
  const micros = String(us % 1000).padStart(3, "0");
  return new Date(ms).toISOString().replace("Z", `${micros}Z`);
}

const ISO = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?)(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})$/;

/** Parses an ISO timestamp (any precision, any offset) into microseconds; 400 when it is not one. */
export function parseCursor(cursor: string): number {
  const m = ISO.exec(cursor);
  const base = m ? Date.parse(`${m[1]}${m[3]}`) : Number.NaN;
  if (!m || Number.isNaN(base)) {
    throw badRequest("cursor must be an ISO 8601 timestamp such as 2026-01-31T12:00:00.000Z (use nextCursor)");
  }
  const fraction = (m[2] ?? "").padEnd(6, "0").slice(0, 6);
  return base * 1000 + Number(fraction);
}

export const isoFromUs = (us: number): string => new Date(Math.floor(us / 1000)).toISOString();
