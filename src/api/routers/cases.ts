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
    .query(({ ctx, input }) => {
      if (input.projectId) requireProject(ctx.db, ctx.caller.orgId, input.projectId);
      return reviewQueue(ctx.db, { orgId: ctx.caller.orgId, projectId: input.projectId, limit: input.limit });
    }),

  detail: secretProcedure.input(z.object({ caseId })).query(({ ctx, input }) => {
    const c = requireCase(ctx.db, ctx.caller.orgId, input.caseId);
    const subject = c.subjectIdentityId ? ctx.db.select().from(identities).where(eq(identities.id, c.subjectIdentityId)).get() : undefined;
    return {
      case: toCaseView(c),
      reports: toReportViews(ctx.db, reportsOfCase(ctx.db, c.id)),
      subject: subject ? toIdentityView(subject) : null,
      subjectHistory: c.subjectIdentityId ? subjectHistory(ctx.db, c.subjectIdentityId, c.id) : [],
      notes: listCaseNotes(ctx.db, c.id),
      audit: listAudit(ctx.db, { orgId: ctx.caller.orgId, entityType: "case", entityId: c.id, limit: 100 }).events,
    };
  }),

  triage: secretProcedure.input(z.object({ caseId })).mutation(({ ctx, input }) => {
    triageCase(ctx.db, ctx.clock, ctx.caller.actor, ctx.caller.orgId, input.caseId);
    return { ok: true as const };
  }),

  assign: secretProcedure
    .input(z.object({ caseId, assigneeId: z.string().min(1).max(64).nullable() }))
    .mutation(({ ctx, input }) => ({
      case: assignCase(ctx.db, ctx.clock, ctx.caller.actor, ctx.caller.orgId, input.caseId, input.assigneeId),
    })),

  addNote: secretProcedure
    .input(z.object({ caseId, body: z.string().trim().min(1).max(5000) }))
    .mutation(({ ctx, input }) => ({
      note: addCaseNote(ctx.db, ctx.clock, ctx.caller.actor, ctx.caller.orgId, input.caseId, input.body),
    })),
});
