/**
 * Assignment (issue 27): a case is given to a named moderator who may work its queue, or taken by
 * oneself (a claim), reassigned or released; every change is audited (CASE_ASSIGNED with whose it
 * was and whose it is, CASE_UNASSIGNED). Claims, assignments and review mode's claims are one
 * thing, the case's holder (src/domain/cases/claims.ts): an assignment holds until released,
 * reassigned or decided, a review-mode claim until it lapses.
 *
 * Who may hold a case: an enabled user of the organization, moderator or admin, who may work
 * the case's queue (the one check, src/domain/access/queue-access.ts); anyone else is a 400 naming
 * why (a user id the organization does not have: 404). A case the caller may not work is a 404,
 * as everywhere.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import { cases, queues, users } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { rowLockedTransaction, type DomainContext } from "../core/context.ts";
import { badRequest, notFound } from "../core/errors.ts";
import { requireCase, toCaseView, type CaseView } from "../cases/cases.ts";
import { hasRole, ROLES, type Role } from "../views/user.ts";
import { isClaimedBy } from "../cases/claims.ts";
import { listableCases, mayWork, userMayWorkQueueOf, type AccessContext } from "../access/queue-access.ts";

const roleOf = (role: string): Role => ((ROLES as readonly string[]).includes(role) ? (role as Role) : "viewer");

/** Why a user cannot hold a case of a queue (null: they can). */
export function unfitAssignee(user: { role: string; disabledAt: number | null }): string | null {
  if (user.disabledAt !== null) return "assigneeId: this user is disabled";
  if (!hasRole(roleOf(user.role), "moderator")) return "assigneeId: a viewer cannot work cases (moderators and admins can)";
  return null;
}

/**
 * Assigns a case to a moderator (oneself: a claim) or releases it (null), so two people never
 * work it unknowingly. An assignment holds until released: it replaces a review-mode claim.
 */
export function assignCase(ctx: DomainContext, input: { caseId: string; assigneeId: string | null }): Promise<CaseView> {
  const { assigneeId } = input;
  return rowLockedTransaction(ctx, async () => {
    const c = await requireCase(ctx, input.caseId, undefined, { lock: true });
    if (assigneeId) {
      const [user] = await ctx.db.select().from(users).where(and(eq(users.id, assigneeId), eq(users.orgId, ctx.orgId))).limit(1);
      if (!user) throw notFound("User not found");
      const unfit = unfitAssignee(user);
      if (unfit) throw badRequest(unfit);
      if (!(await userMayWorkQueueOf(ctx, user, c.queueId))) throw badRequest("assigneeId: this user may not work the case's queue");
    }
    const now = ctx.clock.now();
    const after = { ...c, assigneeId, assignedAt: assigneeId ? now : null, claimExpiresAt: null, updatedAt: now };
    await ctx.db.update(cases).set({ assigneeId, assignedAt: after.assignedAt, claimExpiresAt: null, updatedAt: now }).where(eq(cases.id, c.id));
    await recordAudit(ctx, {
      projectId: c.projectId, action: assigneeId ? "CASE_ASSIGNED" : "CASE_UNASSIGNED",
      entityType: "case", entityId: c.id, before: { assigneeId: c.assigneeId }, after: { assigneeId },
    });
    return toCaseView(after, ctx.clock.now());
  });
}

export interface Assignee {
  id: string;
  email: string;
  role: Role;
}

/** Who may be given a case: the enabled moderators and admins who may work its queue (the assign picker). */
export async function assigneesOf(ctx: DomainContext, input: { caseId: string }): Promise<{ assignees: Assignee[] }> {
  const c = await requireCase(ctx, input.caseId);
  const [rows, [queue]] = await Promise.all([
    ctx.db.select({ id: users.id, email: users.email, role: users.role, disabledAt: users.disabledAt }).from(users).where(and(eq(users.orgId, ctx.orgId), isNull(users.disabledAt))),
    ctx.db
      .select({ access: queues.access })
      .from(queues)
      .where(and(eq(queues.orgId, ctx.orgId), c.queueId === null ? eq(queues.isDefault, 1) : eq(queues.id, c.queueId)))
      .limit(1),
  ]);
  const assignees = rows
    .filter((u) => unfitAssignee(u) === null && (!queue || mayWork(queue, u.id, roleOf(u.role))))
    .map((u) => ({ id: u.id, email: u.email, role: roleOf(u.role) }))
    .sort((a, b) => a.email.localeCompare(b.email));
  return { assignees };
}

/** How many open cases the caller holds now (the navigation's "Assigned to me" count): those its list shows (listableCases). */
export async function assignedToMeCount(ctx: Pick<DomainContext, "db" | "orgId" | "clock"> & AccessContext): Promise<number> {
  const me = ctx.actor?.type === "user" ? ctx.actor.id : null;
  if (!me) return 0;
  const [row] = await ctx.db
    .select({ n: sql<number>`count(*)` })
    .from(cases)
    .where(and(eq(cases.orgId, ctx.orgId), eq(cases.isOpen, 1), isClaimedBy(me, ctx.clock.now()), await listableCases(ctx)));
  return Number(row?.n ?? 0);
}
