import { z } from "zod";
import { caseFile } from "../../domain/dashboard/case-file.ts";
import { decideInBulk, MAX_BULK_CASES, undoBulkDecision } from "../../domain/review/bulk.ts";
import { addCaseNote, reviewQueue } from "../../domain/cases/cases.ts";
import { triageCase } from "../../domain/review/decisions.ts";
import { reporterSummary } from "../../domain/cases/reporter-summary.ts";
import { assignCase, assigneesOf } from "../../domain/review/assignment.ts";
import { setCaseTags } from "../../domain/cases/tags.ts";
import { reporterSummarySchema } from "../../domain/views/case.ts";
import { DEFAULT_TEAM, DISMISSAL_REASONS, RESOLUTION_CODES, TEAMS } from "../../domain/views/report.ts";
import { MAX_TAGS_PER_CASE, tagSchema } from "../../domain/views/tag.ts";
import { limitSchema } from "../schemas.ts";
import { projectProcedure, router, secretProcedure } from "../trpc.ts";

const caseId = z.string().min(1).max(64);

/** What the dashboard needs to review cases (tRPC only: these are not SDK routes). */
export const casesRouter = router({
  queue: projectProcedure(z.object({ projectId: z.string().max(64).optional(), limit: limitSchema(50) }))
    .query(({ ctx, input }) => reviewQueue(ctx.domain, { projectId: input.projectId, limit: input.limit })),

  detail: secretProcedure.input(z.object({ caseId })).query(({ ctx, input }) => caseFile(ctx.domain, input.caseId)),

  /**
   * Who reported the case, in figures counted over all its reports: distinct reporters, new,
   * trusted and muted ones, their accuracy spread, the reasons' counts (the case page shows it
   * first on a case of many reports).
   */
  reporterSummary: secretProcedure
    .input(z.object({ caseId }))
    .output(reporterSummarySchema)
    .query(({ ctx, input }) => reporterSummary(ctx.domain, input)),

  triage: secretProcedure.input(z.object({ caseId, takeOver: z.boolean().optional() })).mutation(async ({ ctx, input }) => {
    await triageCase(ctx.domain, input.caseId, { takeOver: input.takeOver });
    return { ok: true as const };
  }),

  /** Who may be given the case: enabled moderators and admins who may work its queue (the assign picker). */
  assignees: secretProcedure.input(z.object({ caseId })).query(({ ctx, input }) => assigneesOf(ctx.domain, input)),

  /** Assigns the case to a moderator who may work its queue (oneself: a claim), or releases it (null); audited. */
  assign: secretProcedure
    .input(z.object({ caseId, assigneeId: z.string().min(1).max(64).nullable() }))
    .mutation(async ({ ctx, input }) => ({
      case: await assignCase(ctx.domain, { caseId: input.caseId, assigneeId: input.assigneeId }),
    })),

  /**
   * One decision on many cases (the queue's bulk bar), undoable for a while (cases.undoBulk).
   * Cases claimed by another moderator are skipped unless `othersClaims` is "take_over".
   */
  bulkDecide: secretProcedure
    .input(
      z.object({
        caseIds: z.array(caseId).min(1).max(MAX_BULK_CASES),
        decision: z.discriminatedUnion("action", [
          z.object({ action: z.literal("resolve"), code: z.enum(RESOLUTION_CODES).optional(), note: z.string().max(2000).optional() }),
          z.object({ action: z.literal("dismiss"), reason: z.enum(DISMISSAL_REASONS), note: z.string().max(2000).optional() }),
          z.object({ action: z.literal("escalate"), team: z.enum(TEAMS).default(DEFAULT_TEAM), note: z.string().max(2000).optional() }),
        ]),
        othersClaims: z.enum(["skip", "take_over"]).default("skip"),
      }),
    )
    .mutation(({ ctx, input }) => decideInBulk(ctx.domain, input)),

  /** Undoes a bulk decision of the caller's within its window: what it changed goes back. */
  undoBulk: secretProcedure.input(z.object({ bulkId: caseId })).mutation(({ ctx, input }) => undoBulkDecision(ctx.domain, input)),

  /** Replaces a case's tags. */
  setTags: secretProcedure
    .input(z.object({ caseId, tags: z.array(tagSchema).max(MAX_TAGS_PER_CASE) }))
    .mutation(async ({ ctx, input }) => ({ tags: await setCaseTags(ctx.domain, input) })),

  addNote: secretProcedure
    .input(z.object({ caseId, body: z.string().trim().min(1).max(5000) }))
    .mutation(async ({ ctx, input }) => ({
      note: await addCaseNote(ctx.domain, { caseId: input.caseId, body: input.body }),
    })),
});
