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
 * - **Paced** (src/domain/plumbing/sliced-deletion.ts): a slice is sized to hold the writer about
 *   20 ms, from what the last one took, and the next waits as long, so a report waits for at most
 *   one slice.
 *
 * Until its slices are done (about 23 s for 100,000 reports with their cases, subjects and media
 * on SQLite: scripts/bench/project-delete.ts), what is left of the project's cases is gone for
 * every caller as the project is: queue access (src/domain/access/queue-access.ts) reads the
 * organization's projects being deleted with the queues a caller may work, so a lookup is a 404
 * and the lists and figures leave them out. Flagstaff's own jobs still reach them, and do nothing
 * for them (isLiveProject, projects.ts): no URL fetched, no media matched, no model asked, no
 * strike step taken, no scheduled action started or expired, nothing announced.
 */
import { eq } from "drizzle-orm";
import { apiKeys, caseMedia, cases, contentAnalyses, enforcementActions, evalRuns, evalSets, identities, mediaBankEntries, projects, reports, shadowAnalyses } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { deleteNextSlice, enqueueDeletionSlice, MAX_SLICE_ROWS, type DeletionStep, type SlicedDeletion } from "../plumbing/sliced-deletion.ts";
import { JOB_KIND } from "../views/job.ts";
import { requireProject, toProjectView } from "./projects.ts";

/**
 * The tables of a project too large to delete at once, in the order their rows go. Every table
 * with a project is in this list or goes with the project's row at the end (a few rows each,
 * PROJECT_ROW_TABLES): test/domain/project-deletion.test.ts checks each table whose foreign key
 * names a project against the two lists.
 */
export const PROJECT_DELETION_STEPS: readonly DeletionStep[] = [
  { table: caseMedia, owner: caseMedia.projectId, rows: MAX_SLICE_ROWS, why: "media items first (they name a report and a case): with each go its matches" },
  { table: contentAnalyses, owner: contentAnalyses.projectId, rows: MAX_SLICE_ROWS, why: "AI analyses refer to nothing of the project's but it" },
  { table: shadowAnalyses, owner: shadowAnalyses.projectId, rows: MAX_SLICE_ROWS, why: "shadow analyses, likewise" },
  { table: reports, owner: reports.projectId, rows: MAX_SLICE_ROWS, why: "reports before their cases: with each go its reasons, search entry and attachments" },
  { table: cases, owner: cases.projectId, rows: MAX_SLICE_ROWS, why: "cases once their reports are gone: with each go its notes, tags and attachments" },
  { table: enforcementActions, owner: enforcementActions.projectId, rows: MAX_SLICE_ROWS, why: "actions before the identities they name: with each go its statement and appeals" },
  { table: identities, owner: identities.projectId, rows: MAX_SLICE_ROWS, why: "identities once nothing names them: with each go its strikes and search entry" },
  { table: mediaBankEntries, owner: mediaBankEntries.projectId, rows: MAX_SLICE_ROWS, why: "bank entries before their banks: with each go its matches" },
  { table: evalRuns, owner: evalRuns.projectId, rows: 1, why: "an evaluation run goes with its items (at most an evaluation set's)" },
  { table: evalSets, owner: evalSets.projectId, rows: 1, why: "an evaluation set goes with its items and versions" },
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

/** A project's rows, deleted by slices on the `project.delete` lane. */
export const PROJECT_DELETION: SlicedDeletion = { owner: projects, idKey: "projectId", kind: JOB_KIND.projectDelete, steps: PROJECT_DELETION_STEPS };

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
    await enqueueDeletionSlice(ctx, PROJECT_DELETION, before.id);
  });
}

/** One slice of a deleted project's rows (deleteNextSlice), as its job runs it. */
export function deleteProjectSlice(ctx: DomainContext, input: { projectId: string; rows?: number }): Promise<"continued" | "done" | "gone"> {
  return deleteNextSlice(ctx, PROJECT_DELETION, { ownerId: input.projectId, rows: input.rows });
}
