/**
 * Deleting many rows without holding the writer: a slice at a time, each in a transaction of its
 * own, sized and paced by what the last one took. What is deleted this way (a project, a bank of
 * known media) is hidden from every caller first; its rows then go by a job per slice, the next
 * slice's job enqueued in the slice's transaction, so a crash resumes where the last commit left
 * off (src/domain/accounts/project-deletion.ts, src/domain/banks/bank-deletion.ts).
 *
 * Deleting a large project in one transaction held the writer for seconds (3.5 s for 100,000
 * reports on SQLite; a bank of 1,000,000 entries 15 to 20 s), and every report of every other
 * project waited behind it (scripts/bench/project-delete.ts, index-rebuild.ts --during delete).
 */
import { and, eq, inArray, isNotNull } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { z } from "zod";
import { transaction, type DomainContext } from "../core/context.ts";
import type { JobKind } from "../views/job.ts";
import { enqueueJob } from "./jobs.ts";

/**
 * What a slice's statements aim to take. Its COMMIT comes on top (SQLite writes the pages, the
 * search index its deletions), about as much again in a large database: so a slice holds the
 * writer about 20 ms, the retention pass's pause (src/jobs/retention.ts), and a report waits
 * about that long at most.
 */
export const SLICE_TARGET_MS = 10;
/** A first slice's rows, before one has been timed. */
export const FIRST_SLICE_ROWS = 200;
/** Bounds of a slice's rows, whatever the last one took. */
const MIN_SLICE_ROWS = 10;
export const MAX_SLICE_ROWS = 2_000;

/** A table whose rows are deleted by slices: its rows have an id and name their owner (`owner`). */
export interface DeletionStep {
  table: SQLiteTable & { id: SQLiteColumn };
  /** The column naming what is deleted (a project, a bank). */
  owner: SQLiteColumn;
  /** Rows of the table a slice deletes at most (with what the foreign keys take along). */
  rows: number;
  /** Why the step comes where it does, and what goes with its rows. */
  why: string;
}

/** The next slice's rows, from what the last one took (`ms` for `rows`): about SLICE_TARGET_MS' worth, growing at most twofold. */
export function nextSliceRows(rows: number, ms: number): number {
  const scaled = Math.round((rows * SLICE_TARGET_MS) / Math.max(ms, 1));
  return Math.min(MAX_SLICE_ROWS, Math.max(MIN_SLICE_ROWS, Math.min(scaled, rows * 2)));
}

/**
 * Inside the caller's transaction: at most `rows` of the first step's rows owned by `ownerId`
 * that are left (at most the step's own bound). Answers the next slice's size and the pause
 * before it (as long as this one held the writer, its COMMIT included: about twice its
 * statements), or null when no step has rows left.
 */
async function deleteSlice(ctx: Pick<DomainContext, "db">, steps: readonly DeletionStep[], ownerId: string, rows: number): Promise<{ rows: number; pauseMs: number } | null> {
  for (const step of steps) {
    // Wall time, not the context's clock: the pace is the writer's, whatever time it is.
    const started = performance.now();
    const slice = await ctx.db.select({ id: step.table.id }).from(step.table).where(eq(step.owner, ownerId)).limit(Math.min(rows, step.rows));
    if (slice.length === 0) continue;
    await ctx.db.delete(step.table).where(inArray(step.table.id, slice.map((r) => r.id)));
    const took = performance.now() - started;
    return { rows: step.rows < rows ? rows : nextSliceRows(rows, took), pauseMs: Math.ceil(2 * took) };
  }
  return null;
}

/** What is deleted by slices (a project, a bank): its rows have an id, an organization, and when they were deleted. */
type OwnerTable = SQLiteTable & { id: SQLiteColumn; orgId: SQLiteColumn; deletedAt: SQLiteColumn };

/** What is deleted by slices: its table, the name of its id in a slice's job payload, its job kind and its steps. */
export interface SlicedDeletion {
  /** The owner's table: its row, marked deleted at once, goes last, with what its foreign keys take along. */
  owner: OwnerTable;
  /** The owner's id in a slice's job payload (`projectId`, `bankId`): what an operator reads in the jobs list. */
  idKey: string;
  kind: JobKind;
  steps: readonly DeletionStep[];
}

/** Attempts a slice's job gets (a database that is away for a while). */
const SLICE_ATTEMPTS = 20;

/** Enqueues a slice's job (the first one: FIRST_SLICE_ROWS, at once). */
export function enqueueDeletionSlice(ctx: DomainContext, d: SlicedDeletion, ownerId: string, next: { rows: number; runAt?: number } = { rows: FIRST_SLICE_ROWS }): Promise<string> {
  return enqueueJob(ctx, { orgId: ctx.orgId, kind: d.kind, payload: { [d.idKey]: ownerId, rows: next.rows }, maxAttempts: SLICE_ATTEMPTS, entityId: ownerId, runAt: next.runAt });
}

/** A slice's job payload read back: the owner's id and the slice's size (absent on the first). */
export function slicePayload(d: SlicedDeletion, payload: unknown): { ownerId: string; rows?: number } {
  const ownerId = z.object({ [d.idKey]: z.string() }).parse(payload)[d.idKey]!;
  return { ownerId, rows: sliceRows.parse(payload).rows };
}
const sliceRows = z.object({ rows: z.number().int().min(1).optional() });

/**
 * One slice of a deleted owner's rows, in a transaction of its own: at most `rows` of the first
 * step's rows that are left, and the next slice's job, sized and delayed by what this one took
 * (`continued`); or, no step having rows left, the owner's row (`done`). `gone`: no deleted owner
 * of that id in the context's organization (done before, or never deleted).
 */
export function deleteNextSlice(ctx: DomainContext, d: SlicedDeletion, input: { ownerId: string; rows?: number }): Promise<"continued" | "done" | "gone"> {
  return transaction(ctx, async () => {
    const [owner] = await ctx.db
      .select({ id: d.owner.id })
      .from(d.owner)
      .where(and(eq(d.owner.id, input.ownerId), eq(d.owner.orgId, ctx.orgId), isNotNull(d.owner.deletedAt)));
    if (!owner) return "gone";
    const next = await deleteSlice(ctx, d.steps, input.ownerId, input.rows ?? FIRST_SLICE_ROWS);
    if (next) {
      await enqueueDeletionSlice(ctx, d, input.ownerId, { rows: next.rows, runAt: ctx.clock.now() + next.pauseMs });
      return "continued";
    }
    await ctx.db.delete(d.owner).where(eq(d.owner.id, input.ownerId));
    return "done";
  });
}
