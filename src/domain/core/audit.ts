import { param, statements } from "../../db/prepared.ts";
import { auditEvents } from "../../db/schema.ts";
import { iso } from "./clock.ts";
import type { DomainContext } from "./context.ts";
import { newId } from "./ids.ts";
import type { AuditAction, AuditEntityOf, AuditEventView, AuditPart } from "../views/audit.ts";
import type { Actor } from "../views/common.ts";

export type { Actor } from "../views/common.ts";
export type { AuditAction, AuditEventView } from "../views/audit.ts";

export const systemActor: Actor = { type: "system", id: null };

/**
 * An audit event; the organization and the actor are the context's. The action is one of the
 * catalogue's (AUDIT_ACTIONS in src/domain/views/audit.ts), and so are the entity type and the
 * shapes of `before`, `after` and `data` when the action is named at the call site.
 */
export interface AuditInput<A extends AuditAction = AuditAction> {
  projectId?: string | null;
  action: A;
  entityType: AuditEntityOf<A>;
  entityId: string;
  before?: AuditPart<A, "before">;
  after?: AuditPart<A, "after">;
  data?: AuditPart<A, "data">;
}

const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
const parse = (v: string | null): unknown => (v == null ? null : JSON.parse(v));

/** Writes one audit event. Call it inside the transaction of the change it records. */
export async function recordAudit<A extends AuditAction>(ctx: DomainContext, e: AuditInput<A>): Promise<void> {
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
    // A rule's effect names the rule and its version, a strike policy's step its strike (DomainContext.automation).
    data: json(ctx.automation ? { ...(e.data as object | undefined), ...ctx.automation, automated: true } : e.data),
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
