import type { UnchainedEvent } from "../../db/audit-append.ts";
import type { auditEvents } from "../../db/schema.ts";
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

/**
 * Writes one audit event. Call it inside the transaction of the change it records: the event is
 * written with that transaction, appended to its organization's hash chain just before its
 * COMMIT (Store.appendAudit; docs/audit.md, "How events are appended"). Outside a transaction it
 * opens one of its own.
 */
export async function recordAudit<A extends AuditAction>(ctx: DomainContext, e: AuditInput<A>): Promise<void> {
  const event: UnchainedEvent = {
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
  };
  if (!ctx.store.inTransaction()) return ctx.store.transaction(async () => ctx.store.appendAudit(event), { exclusive: false });
  ctx.store.appendAudit(event);
}

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
