import { z } from "zod";
import { caseDetail, changeVersion, identityProfile, overview, people, queue, withActorEmails } from "../../domain/dashboard/dashboard.ts";
import { listAudit } from "../../domain/audit/audit-log.ts";
import { assignedToMeCount } from "../../domain/review/assignment.ts";
import { tagsInUse } from "../../domain/cases/tags.ts";
import { auditFilters } from "../../domain/views/audit.ts";
import { QUEUE_PAGE_SIZE, QUEUE_VIEWS } from "../../domain/views/queue.ts";
import { BUCKETS } from "../../domain/views/severity.ts";
import { tagSchema } from "../../domain/views/tag.ts";
import { OPEN_STATUSES, type Status } from "../../domain/views/workflow.ts";
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

  /**
   * One page of the queue: open cases by severity bucket then age (or the appealed ones), with
   * filters, counts, each view's count, who claimed each case and where the next page starts.
   */
  queue: projectProcedure(
    z.object({
      projectId: id.optional(),
      view: z.enum(QUEUE_VIEWS).optional(),
      status: z.enum(OPEN_STATUSES as [Status, ...Status[]]).optional(),
      category: z.string().min(1).max(100).optional(),
      bucket: z.enum(BUCKETS).optional(),
      assigned: z.enum(["me", "unclaimed"]).optional(),
      tag: tagSchema.optional(),
      queueId: id.optional(),
      cursor: z.string().max(120).optional(),
      limit: limitSchema(QUEUE_PAGE_SIZE),
    }),
  )
    .query(({ ctx, input }) => queue(ctx.domain, { ...input, userId: ctx.caller.user?.id ?? null })),

  /** How many open cases the caller holds (assigned or claimed): the navigation's "Assigned to me" count. */
  assignedToMe: secretProcedure.query(async ({ ctx }) => ({ count: await assignedToMeCount(ctx.domain) })),

  /** The organization's case tags in use, most used first (the queue's tag filter). */
  tags: secretProcedure.query(async ({ ctx }) => ({ tags: await tagsInUse(ctx.domain) })),

  /** A case with its reports, subject and reporters with their history, AI, link scans, notes and audit trail. */
  case: secretProcedure
    // `report`: a report a link named (`#/cases/<id>?report=<id>`), answered too when it is older than the newest shown.
    .input(z.object({ caseId: id, report: id.optional() }))
    .query(({ ctx, input }) => caseDetail(ctx.domain, input.caseId, { report: input.report })),

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
