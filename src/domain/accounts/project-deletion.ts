/**
 * Deleting a project (docs/dashboard.md, "Projects"): hidden at once, its rows deleted a slice at
 * a time in the background.
 *
 * Deleting every row of a large project in one transaction held the writer for as long as the
 * cascade took (5 s for 109,000 reports on SQLite; minutes for millions), and every report of
 * every other project waited behind it. So:
 *
 * - **At once** (`deleteProject`, one short transaction): the project is marked deleted, which
 *   every lookup of a project honours (`requireProject`, the lists), so no call finds it any more
 *   (404), and its API keys are deleted, so they stop authenticating. The audit event is written
 *   then, and the first slice's job enqueued.
 * - **In slices** (`deleteProjectSlice`, the `project.delete` job, one slot): each job deletes
 *   rows of one step in a transaction of its own and enqueues the next job with it, so a crash
 *   resumes where the last commit left off. The steps' order (PROJECT_DELETION_STEPS) puts each
 *   table before those its rows refer to, so that what the foreign keys delete along with a
 *   slice belongs to its rows alone (a report's reasons and search entry, a case's notes). When no
 *   step has rows left, the project's row goes, with the small tables the cascade takes along
 *   (its categories, queues, rules, banks, templates).
 * - **Paced**: a slice's rows are sized for its statements to take about SLICE_TARGET_MS (the
 *   next job's payload carries the size, from what the last slice took: a row costs more in a
 *   large database), and the next slice waits as long as the last one held the writer, so the
 *   deletion holds it about half the time and a report waits for at most one slice.
 *
 * Until its slices are done, what is left of the project's cases may still show in the
 * organization-wide lists (a queue, the overview): about 10 s for 100,000 reports with their
 * cases, subjects and media on SQLite (scripts/bench/project-delete.ts).
 */
import { and, eq, inArray, isNotNull } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { apiKeys, caseMedia, cases, contentAnalyses, enforcementActions, evalRuns, evalSets, identities, mediaBankEntries, projects, reports, shadowAnalyses } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { enqueueJob } from "../plumbing/jobs.ts";
import { JOB_KIND } from "../views/job.ts";
import { requireProject, toProjectView } from "./projects.ts";

/** A table a project's rows are deleted from by slices: its rows have an id and name their project. */
type ProjectTable = SQLiteTable & { id: SQLiteColumn; projectId: SQLiteColumn };

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
const MAX_SLICE_ROWS = 2_000;

interface DeletionStep {
  table: ProjectTable;
  /** Rows of the table a slice deletes at most (with what the foreign keys take along). */
  rows: number;
  /** Why the step comes where it does, and what goes with its rows. */
  why: string;
}

/**
 * The tables of a project too large to delete at once, in the order their rows go. Every table
 * with a project is in this list or goes with the project's row at the end (a few rows each);
 * test/architecture.test.ts checks that each table that names a project is in one of the two
 * (PROJECT_ROW_TABLES).
 */
export const PROJECT_DELETION_STEPS: readonly DeletionStep[] = [
  { table: caseMedia, rows: MAX_SLICE_ROWS, why: "media items first (they name a report and a case): with each go its matches" },
  { table: contentAnalyses, rows: MAX_SLICE_ROWS, why: "AI analyses refer to nothing of the project's but it" },
  { table: shadowAnalyses, rows: MAX_SLICE_ROWS, why: "shadow analyses, likewise" },
  { table: reports, rows: MAX_SLICE_ROWS, why: "reports before their cases: with each go its reasons, search entry and attachments" },
  { table: cases, rows: MAX_SLICE_ROWS, why: "cases once their reports are gone: with each go its notes, tags and attachments" },
  { table: enforcementActions, rows: MAX_SLICE_ROWS, why: "actions before the identities they name: with each go its statement and appeals" },
  { table: identities, rows: MAX_SLICE_ROWS, why: "identities once nothing names them: with each go its strikes and search entry" },
  { table: mediaBankEntries, rows: MAX_SLICE_ROWS, why: "bank entries before their banks: with each go its matches" },
  { table: evalRuns, rows: 1, why: "an evaluation run goes with its items (at most an evaluation set's)" },
  { table: evalSets, rows: 1, why: "an evaluation set goes with its items and versions" },
];

/**
 * Tables of a project's rows that go with the project's row, by the foreign keys, once the steps
 * are done: a project holds few of them (or, for attachments, statements and strikes, none by
 * then: they went with their report, case, action or identity).
 */
export const PROJECT_ROW_TABLES = [
  "api_keys",
  "report_categories",
  "category_policies",
  "decision_templates",
  "queues",
  "rules",
  "media_banks",
  "media_bank_versions",
  "media_bank_additions",
  "media_matches",
  "attachments",
  "statements",
  "strikes",
] as const;

/** Attempts a slice's job gets (a database that is away for a while). */
const SLICE_ATTEMPTS = 20;

/**
 * Deletes a project for its callers at once (hidden, its keys gone, audited) and enqueues the
 * deletion of its rows by slices.
 */
export function deleteProject(ctx: DomainContext, input: { projectId: string }): Promise<void> {
  return transaction(ctx, async () => {
    const before = await requireProject(ctx, input.projectId);
    await ctx.db.update(projects).set({ deletedAt: ctx.clock.now() }).where(eq(projects.id, before.id));
    await ctx.db.delete(apiKeys).where(eq(apiKeys.projectId, before.id));
    await recordAudit(ctx, {
      projectId: before.id, action: "PROJECT_DELETED", entityType: "project", entityId: before.id, before: toProjectView(before),
    });
    await enqueueSlice(ctx, before.id);
  });
}

function enqueueSlice(ctx: DomainContext, projectId: string, next: { rows: number; runAt?: number } = { rows: FIRST_SLICE_ROWS }): Promise<string> {
  return enqueueJob(ctx, { orgId: ctx.orgId, kind: JOB_KIND.projectDelete, payload: { projectId, rows: next.rows }, maxAttempts: SLICE_ATTEMPTS, entityId: projectId, runAt: next.runAt });
}

/** The next slice's rows, from what the last one took (`ms` for `rows`): about SLICE_TARGET_MS' worth. */
export function nextSliceRows(rows: number, ms: number): number {
  const scaled = Math.round((rows * SLICE_TARGET_MS) / Math.max(ms, 1));
  return Math.min(MAX_SLICE_ROWS, Math.max(MIN_SLICE_ROWS, Math.min(scaled, rows * 2)));
}

/**
 * One slice of a deleted project's rows, in a transaction of its own: at most `rows` of the first
 * step's rows that are left (at most the step's own bound), and the next slice's job, sized and
 * delayed by what this one took; or, no step having rows left, the project's row. Answers
 * `continued`, `done`, or `gone` (no deleted project of that id: done before, or never deleted).
 */
export function deleteProjectSlice(ctx: DomainContext, input: { projectId: string; rows?: number }): Promise<"continued" | "done" | "gone"> {
  const rows = input.rows ?? FIRST_SLICE_ROWS;
  return transaction(ctx, async () => {
    const [project] = await ctx.db
      .select({ id: projects.id })
      .from(projects)
      .where(and(eq(projects.id, input.projectId), eq(projects.orgId, ctx.orgId), isNotNull(projects.deletedAt)));
    if (!project) return "gone";
    for (const step of PROJECT_DELETION_STEPS) {
      // Wall time, not the context's clock: the pace is the writer's, whatever time it is.
      const started = performance.now();
      const slice = await ctx.db.select({ id: step.table.id }).from(step.table).where(eq(step.table.projectId, project.id)).limit(Math.min(rows, step.rows));
      if (slice.length === 0) continue;
      await ctx.db.delete(step.table).where(inArray(step.table.id, slice.map((r) => r.id)));
      const took = performance.now() - started;
      const size = step.rows < rows ? rows : nextSliceRows(rows, took);
      // The pause: as long as the slice held the writer, its COMMIT included (about as long again).
      await enqueueSlice(ctx, project.id, { rows: size, runAt: ctx.clock.now() + Math.ceil(2 * took) });
      return "continued";
    }
    await ctx.db.delete(projects).where(eq(projects.id, project.id));
    return "done";
  });
}
