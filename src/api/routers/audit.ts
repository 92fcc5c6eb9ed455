import { z } from "zod";
import { listAudit } from "../../domain/audit.ts";
import { auditActionSchema, auditEventViewSchema } from "../../domain/views/audit.ts";
import { limitSchema } from "../schemas.ts";
import { orgProcedure, router } from "../trpc.ts";

/** The audit log's filters and paging, shared with the dashboard's audit page. */
export const auditFilters = {
  /** One action of the catalogue (src/domain/views/audit.ts): an unknown one is a 400, not an empty page. */
  action: auditActionSchema.optional(),
  entityType: z.string().max(64).optional(),
  entityId: z.string().max(64).optional(),
  projectId: z.string().max(64).optional(),
  cursor: z.string().max(64).optional(),
  limit: limitSchema(50),
};

export const auditRouter = router({
  list: orgProcedure(z.object({ orgSlug: z.string().min(1).max(64), ...auditFilters }))
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
    .output(z.object({ events: z.array(auditEventViewSchema), nextCursor: z.string().nullable() }))
    .query(({ ctx, input }) => listAudit(ctx.domain, input)),
});
