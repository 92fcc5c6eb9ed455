import { count, sql, type SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./client.ts";

/**
 * Rows of `table` under `where`, counted up to `upTo`: an answer of `upTo` means "that many or
 * more" (ask for one past a cap to tell "more than" the cap). A range of an index no longer than
 * that, however many rows match: a count asked often (a dashboard's poll, a job lane's depth)
 * costs the same at a million rows as at a thousand, where an exact count scans them all (on
 * SQLite, in the serving thread).
 */
export async function countUpTo(db: Db, table: SQLiteTable, where: SQL | undefined, upTo: number): Promise<number> {
  const rows = db.select({ one: sql`1` }).from(table).where(where).limit(upTo).as("up_to");
  const [row] = await db.select({ n: count() }).from(rows);
  return Number(row?.n ?? 0);
}
