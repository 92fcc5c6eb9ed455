import { z } from "zod";
import { caseFile } from "../../domain/case-file.ts";
import { addCaseNote, assignCase, reviewQueue, triageCase } from "../../domain/cases.ts";
import { limitSchema } from "../schemas.ts";
import { projectProcedure, router, secretProcedure } from "../trpc.ts";

const caseId = z.string().min(1).max(64);

/** What the dashboard needs to review cases (tRPC only: these are not SDK routes). */
export const casesRouter = router({
  queue: projectProcedure(z.object({ projectId: z.string().max(64).optional(), limit: limitSchema(50) }))
    .query(({ ctx, input }) => reviewQueue(ctx.domain, { projectId: input.projectId, limit: input.limit })),

  detail: secretProcedure.input(z.object({ caseId })).query(({ ctx, input }) => caseFile(ctx.domain, input.caseId)),

  triage: secretProcedure.input(z.object({ caseId })).mutation(async ({ ctx, input }) => {
    await triageCase(ctx.domain, input.caseId);
    return { ok: true as const };
  }),

  assign: secretProcedure
    .input(z.object({ caseId, assigneeId: z.string().min(1).max(64).nullable() }))
    .mutation(async ({ ctx, input }) => ({
      case: await assignCase(ctx.domain, { caseId: input.caseId, assigneeId: input.assigneeId }),
    })),

  addNote: secretProcedure
    .input(z.object({ caseId, body: z.string().trim().min(1).max(5000) }))
    .mutation(async ({ ctx, input }) => ({
      note: await addCaseNote(ctx.domain, { caseId: input.caseId, body: input.body }),
    })),
});
