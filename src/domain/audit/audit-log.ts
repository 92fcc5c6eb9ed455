/**
 * Reading the audit log: a page of the organization's events, newest first, of the cases the
 * caller may see (queue access and the blind-review wall). Writing it is recordAudit (src/domain/core/audit.ts), which
 * every concept calls; reading it needs the queue-access check, so it lives here, with it.
 */
import { and, desc, eq, lt, type SQL } from "drizzle-orm";
import { auditEvents } from "../../db/schema.ts";
import { toAuditEventView } from "../core/audit.ts";
import type { AuditAction, AuditEventView } from "../views/audit.ts";
import { auditEventIsWorkable, type AccessContext } from "../access/queue-access.ts";

export interface AuditQuery {
  action?: AuditAction;
  entityType?: string;
  entityId?: string;
  projectId?: string;
  /** The id of the last event of the previous page (events come newest first). */
  cursor?: string;
  limit: number;
}

/** A page of the organization's audit events, newest first: those the caller may see (auditEventIsWorkable). */
export async function listAudit(ctx: AccessContext, q: AuditQuery): Promise<{ events: AuditEventView[]; nextCursor: string | null }> {
  const where: SQL[] = [eq(auditEvents.orgId, ctx.orgId)];
  const visible = await auditEventIsWorkable(ctx);
  if (visible) where.push(visible);
  if (q.action) where.push(eq(auditEvents.action, q.action));
  if (q.entityType) where.push(eq(auditEvents.entityType, q.entityType));
  if (q.entityId) where.push(eq(auditEvents.entityId, q.entityId));
  if (q.projectId) where.push(eq(auditEvents.projectId, q.projectId));
  if (q.cursor) where.push(lt(auditEvents.id, q.cursor));
  const rows = await ctx.db
    .select()
    .from(auditEvents)
    .where(and(...where))
    .orderBy(desc(auditEvents.id))
    .limit(q.limit + 1);
  const page = rows.slice(0, q.limit);
  return {
    events: page.map(toAuditEventView),
    nextCursor: rows.length > q.limit ? (page.at(-1)?.id ?? null) : null,
  };
}
