import { and, desc, eq, lt, type SQL } from "drizzle-orm";
import { param, statements } from "../db/prepared.ts";
import { auditEvents } from "../db/schema.ts";
import { iso } from "./clock.ts";
import type { DomainContext } from "./context.ts";
import { newId } from "./ids.ts";

/** Who did something: an API key, a dashboard user, or Flagstaff itself (jobs, AI). */
export interface Actor {
  type: "api_key" | "user" | "system";
  id: string | null;
}

export const systemActor: Actor = { type: "system", id: null };

/** An audit event; the organization and the actor are the context's. */
export interface AuditInput {
  projectId?: string | null;
  action: string;
  entityType: string;
  entityId: string;
  before?: unknown;
  after?: unknown;
  data?: unknown;
}

export interface AuditEventView {
  id: string;
  projectId: string | null;
  actor: Actor;
  action: string;
  entityType: string;
  entityId: string;
  before: unknown;
  after: unknown;
  data: unknown;
  createdAt: string;
}

const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
const parse = (v: string | null): unknown => (v == null ? null : JSON.parse(v));

/** Writes one audit event. Call it inside the transaction of the change it records. */
export async function recordAudit(ctx: DomainContext, e: AuditInput): Promise<void> {
  await insertAudit(ctx.db).execute({
    id: newId(),
    orgId: ctx.orgId,
    projectId: e.projectId ?? null,
    actorType: ctx.actor.type,
    actorId: ctx.actor.id,
    action: e.action,
    entityType: e.entityType,
    entityId: e.entityId,
    before: json(e.before),
    after: json(e.after),
    data: json(e.data),
    createdAt: ctx.clock.now(),
  });
}

/** Every change writes an audit event (each report creation at least one): kept prepared (src/db/prepared.ts). */
const insertAudit = statements((db) =>
  db
    .insert(auditEvents)
    .values({
      id: param("id"),
      orgId: param("orgId"),
      projectId: param("projectId"),
      actorType: param("actorType"),
      actorId: param("actorId"),
      action: param("action"),
      entityType: param("entityType"),
      entityId: param("entityId"),
      before: param("before"),
      after: param("after"),
      data: param("data"),
      createdAt: param("createdAt"),
    })
    .prepare(),
);

export const toAuditEventView = (r: typeof auditEvents.$inferSelect): AuditEventView => ({
  id: r.id,
  projectId: r.projectId,
  actor: { type: r.actorType as Actor["type"], id: r.actorId },
  action: r.action,
  entityType: r.entityType,
  entityId: r.entityId,
  before: parse(r.before),
  after: parse(r.after),
  data: parse(r.data),
  createdAt: iso(r.createdAt),
});

export interface AuditQuery {
  action?: string;
  entityType?: string;
  entityId?: string;
  projectId?: string;
  /** The id of the last event of the previous page (events come newest first). */
  cursor?: string;
  limit: number;
}

export async function listAudit(ctx: Pick<DomainContext, "db" | "orgId">, q: AuditQuery): Promise<{ events: AuditEventView[]; nextCursor: string | null }> {
  const where: SQL[] = [eq(auditEvents.orgId, ctx.orgId)];
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
