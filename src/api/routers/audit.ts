import { z } from "zod";
import { listAudit } from "../../domain/audit.ts";
import { isoDateTime, limitSchema } from "../schemas.ts";
import { organizationFor, router, secretProcedure } from "../trpc.ts";

const auditEventSchema = z
  .object({
    id: z.string(),
    projectId: z.string().nullable(),
    actor: z.object({ type: z.enum(["api_key", "user", "system"]), id: z.string().nullable() }),
    action: z.string(),
    entityType: z.string(),
    entityId: z.string(),
    before: z.unknown(),
    after: z.unknown(),
    data: z.unknown(),
    createdAt: isoDateTime,
  })
  .meta({ id: "AuditEvent" });

/** The audit log's filters and paging, shared with the dashboard's audit page. */
export const auditFilters = {
  action: z.string().max(64).optional(),
  entityType: z.string().max(64).optional(),
  entityId: z.string().max(64).optional(),
  projectId: z.string().max(64).optional(),
  cursor: z.string().max(64).optional(),
  limit: limitSchema(50),
};

export const auditRouter = router({
  list: secretProcedure
    .meta({
      family: "org",
      openapi: {
        method: "GET",
        path: "/organizations/{orgSlug}/audit-events",
        summary: "List audit events",
        description: "Newest first. Filters: action (e.g. REPORT_RESOLVED, AI_ANALYZED), entityType (report, case, category, …), entityId, projectId. Pass nextCursor back as cursor.",
        tags: ["audit"],
      },
    })
    .input(
      z.object({ orgSlug: z.string().min(1).max(64), ...auditFilters }),
    )
    .output(z.object({ events: z.array(auditEventSchema), nextCursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => {
      const { orgSlug, ...query } = input;
      await organizationFor(ctx, orgSlug);
      return listAudit(ctx.domain, query);
    }),
});
