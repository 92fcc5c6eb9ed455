import { z } from "zod";
import { listAudit } from "../../domain/audit/audit-log.ts";
import { auditEventViewSchema, auditFilters } from "../../domain/views/audit.ts";
import { orgProcedure, router } from "../trpc.ts";

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
