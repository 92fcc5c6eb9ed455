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
import { clientDateTime } from "./views/common.ts";

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

export const isoFromUs = (us: number): string => new Date(Math.floor(us / 1000)).toISOString();
