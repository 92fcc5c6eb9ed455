import { z } from "zod";
import { caseDetail, changeVersion, identityProfile, overview, people, queue, withActorEmails } from "../../domain/dashboard.ts";
import { listAudit } from "../../domain/audit.ts";
import { auditFilters } from "./audit.ts";
import { BUCKETS } from "../../domain/views/severity.ts";
import { OPEN_STATUSES, type Status } from "../../domain/workflow.ts";
import { limitSchema } from "../schemas.ts";
import { authedProcedure, projectProcedure, router, secretProcedure } from "../trpc.ts";

const id = z.string().min(1).max(64);

/**
 * What the moderators' dashboard reads beyond the other routers (tRPC only). Every procedure
 * here is a query: viewers and up.
 */
export const dashboardRouter = router({
  /**
   * The change counter the dashboard polls every two seconds: the id of the organization's
   * newest audit event. Unchanged means nothing to refetch.
   */
  changes: authedProcedure.query(async ({ ctx }) => ({ version: await changeVersion(ctx.domain) })),

  /** Open cases by severity bucket then age, with filters, counts and who claimed each. */
  queue: projectProcedure(
    z.object({
      projectId: id.optional(),
      status: z.enum(OPEN_STATUSES as [Status, ...Status[]]).optional(),
      category: z.string().min(1).max(100).optional(),
      bucket: z.enum(BUCKETS).optional(),
      assigned: z.enum(["me", "unclaimed"]).optional(),
      limit: limitSchema(100),
    }),
  )
    .query(({ ctx, input }) => queue(ctx.domain, { ...input, userId: ctx.caller.user?.id ?? null })),

  /** A case with its reports, subject and reporters with their history, AI, link scans, notes and audit trail. */
  case: secretProcedure.input(z.object({ caseId: id })).query(({ ctx, input }) => caseDetail(ctx.domain, input.caseId)),

  /** An identity with the cases and reports about it, the reports it filed and enforcement against it. */
  identity: secretProcedure.input(z.object({ identityId: id })).query(({ ctx, input }) => identityProfile(ctx.domain, input.identityId)),

  /** Report volume per day by severity and category, and the team lead's figures. */
  overview: projectProcedure(z.object({ projectId: id.optional(), days: z.number().int().min(1).max(90).default(14) }))
    .query(({ ctx, input }) => overview(ctx.domain, { projectId: input.projectId, days: input.days })),

  /** The organization's dashboard users (id, email, role): who claimed a case, who wrote a note. */
  people: secretProcedure.query(async ({ ctx }) => ({ people: await people(ctx.domain) })),

  /** The audit log with user emails, for the audit page. */
  audit: secretProcedure
    .input(z.object(auditFilters))
    .query(async ({ ctx, input }) => {
      const page = await listAudit(ctx.domain, input);
      return { events: await withActorEmails(ctx.domain, { events: page.events }), nextCursor: page.nextCursor };
    }),
});
