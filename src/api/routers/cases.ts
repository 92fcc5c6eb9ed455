import { z } from "zod";
import { listAudit } from "../../domain/audit.ts";
import {
  addCaseNote,
  assignCase,
  listCaseNotes,
  reportsOfCase,
  requireCase,
  reviewQueue,
  subjectHistory,
  toCaseView,
  triageCase,
} from "../../domain/cases.ts";
import { toIdentityView } from "../../domain/identities.ts";
import { requireProject } from "../../domain/projects.ts";
import { toReportViews } from "../../domain/reports.ts";
import { identities } from "../../db/schema.ts";
import { eq } from "drizzle-orm";
import { limitSchema } from "../schemas.ts";
import { router, secretProcedure } from "../trpc.ts";

const caseId = z.string().min(1).max(64);

/** What the dashboard needs to review cases (tRPC only: these are not SDK routes). */
export const casesRouter = router({
  queue: secretProcedure
    .input(z.object({ projectId: z.string().max(64).optional(), limit: limitSchema(50) }))
    .query(async ({ ctx, input }) => {
      if (input.projectId) await requireProject(ctx.domain, input.projectId);
      return reviewQueue(ctx.domain, { projectId: input.projectId, limit: input.limit });
    }),

  detail: secretProcedure.input(z.object({ caseId })).query(async ({ ctx, input }) => {
    const c = await requireCase(ctx.domain, input.caseId);
    const [subject] = c.subjectIdentityId
      ? await ctx.domain.db.select().from(identities).where(eq(identities.id, c.subjectIdentityId)).limit(1)
      : [];
    return {
      case: toCaseView(c),
      reports: await toReportViews(ctx.domain, { rows: await reportsOfCase(ctx.domain, c.id) }),
      subject: subject ? toIdentityView(subject) : null,
      subjectHistory: c.subjectIdentityId ? await subjectHistory(ctx.domain, { subjectIdentityId: c.subjectIdentityId, exceptCaseId: c.id }) : [],
      notes: await listCaseNotes(ctx.domain, c.id),
      audit: (await listAudit(ctx.domain, { entityType: "case", entityId: c.id, limit: 100 })).events,
    };
  }),

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
