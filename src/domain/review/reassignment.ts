/**
 * Moving a moderator's cases in one step (issue 45): a lead picks a moderator (one who is
 * leaving, or away) and gives every open case they hold to another moderator, or back to the
 * queue (held by nobody). docs/workflow.md, "Reassigning a moderator's cases".
 *
 * - The cases are those the moderator holds now (claims.ts: an assignment, or a review-mode claim
 *   that has not lapsed) that the caller may see in a list (listableCases: a lead held to some
 *   queues moves their queues' cases only), oldest hold first, MAX_REASSIGNED at most per step.
 * - The receiver must be able to hold cases, as for one assignment (an enabled moderator or
 *   admin: else 400 naming why; an unknown user 404), and to work each case's queue: a case of a
 *   queue they may not work stays with its holder and is named back (`refused`), never moved.
 * - Planning (`planReassignment`) reads what the step would do, for the confirmation dialog;
 *   the step (`reassignHeldCases`) is one transaction that holds the cases' rows, takes again
 *   only those still held by the moderator, and writes, per case, what a single assignment
 *   writes: the holder, and `CASE_ASSIGNED` (or `CASE_UNASSIGNED` back to the queue) with whose
 *   it was and whose it is, all its events naming the step's `reassignmentId`.
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import { forUpdate } from "../../db/prepared.ts";
import { cases, queues, users } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { rowLockedTransaction, type DomainContext } from "../core/context.ts";
import { badRequest, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { ROLES, type Role } from "../views/user.ts";
import { MAX_REASSIGNED, type Reassignment } from "../views/workload.ts";
import { unfitAssignee } from "./assignment.ts";
import { holderOf, isClaimedBy } from "../cases/claims.ts";
import { listableCases, mayWork, type AccessContext } from "../access/queue-access.ts";

type UserRow = { id: string; email: string; role: string; disabledAt: number | null };
type HeldCase = { id: string; projectId: string; queueId: string | null; assigneeId: string | null; claimExpiresAt: number | null };

const roleOf = (role: string): Role => ((ROLES as readonly string[]).includes(role) ? (role as Role) : "viewer");
const memberOf = (u: UserRow) => ({ id: u.id, email: u.email, role: roleOf(u.role), disabled: u.disabledAt !== null });

async function requireUser(ctx: Pick<DomainContext, "db" | "orgId">, userId: string): Promise<UserRow> {
  const [u] = await ctx.db
    .select({ id: users.id, email: users.email, role: users.role, disabledAt: users.disabledAt })
    .from(users)
    .where(and(eq(users.id, userId), eq(users.orgId, ctx.orgId)))
    .limit(1);
  if (!u) throw notFound("User not found");
  return u;
}

/** The two users of a reassignment, checked: the receiver must be able to hold cases, and be someone else. */
async function parties(ctx: Pick<DomainContext, "db" | "orgId">, input: { fromUserId: string; toUserId: string | null }): Promise<{ from: UserRow; to: UserRow | null }> {
  const from = await requireUser(ctx, input.fromUserId);
  if (input.toUserId === null) return { from, to: null };
  const to = await requireUser(ctx, input.toUserId);
  const unfit = unfitAssignee(to);
  if (unfit) throw badRequest(unfit.replace(/^assigneeId:/, "toUserId:"));
  if (to.id === from.id) throw badRequest("toUserId: these cases are held by this user already");
  return { from, to };
}

/** The open cases `fromId` holds now that the caller may see, oldest hold first (all: a step takes the first MAX_REASSIGNED). */
async function heldBy(ctx: Pick<DomainContext, "db" | "orgId" | "clock"> & AccessContext, fromId: string): Promise<HeldCase[]> {
  return ctx.db
    .select({ id: cases.id, projectId: cases.projectId, queueId: cases.queueId, assigneeId: cases.assigneeId, claimExpiresAt: cases.claimExpiresAt })
    .from(cases)
    .where(and(eq(cases.orgId, ctx.orgId), eq(cases.isOpen, 1), isClaimedBy(fromId, ctx.clock.now()), await listableCases(ctx)))
    .orderBy(asc(cases.assignedAt), asc(cases.id));
}

/** Which of the held cases the receiver may work (all of them, back to the queue), in one read of the queues. */
async function split(ctx: Pick<DomainContext, "db" | "orgId">, held: readonly HeldCase[], to: UserRow | null): Promise<Pick<Reassignment, "moved" | "refused">> {
  if (!to) return { moved: held.map((c) => c.id), refused: [] };
  const rows = await ctx.db.select({ id: queues.id, access: queues.access, isDefault: queues.isDefault }).from(queues).where(eq(queues.orgId, ctx.orgId));
  const byId = new Map(rows.map((q) => [q.id, q] as const));
  const fallback = rows.find((q) => q.isDefault === 1);
  const moved: string[] = [];
  const refused: Reassignment["refused"] = [];
  for (const c of held) {
    const q = c.queueId === null ? fallback : (byId.get(c.queueId) ?? fallback);
    // No queue row (no default queue yet): it starts open to everyone, as assignment reads it.
    if (!q || mayWork(q, to.id, roleOf(to.role))) moved.push(c.id);
    else refused.push({ caseId: c.id, reason: "queue" });
  }
  return { moved, refused };
}

/** What reassigning `fromUserId`'s cases to `toUserId` (null: back to the queue) would do now; changes nothing. */
export async function planReassignment(ctx: Pick<DomainContext, "db" | "orgId" | "clock"> & AccessContext, input: { fromUserId: string; toUserId: string | null }): Promise<Reassignment> {
  const { from, to } = await parties(ctx, input);
  const held = await heldBy(ctx, from.id);
  const taken = held.slice(0, MAX_REASSIGNED);
  return { from: memberOf(from), to: to && memberOf(to), ...(await split(ctx, taken, to)), left: held.length - taken.length };
}

/**
 * Gives `fromUserId`'s held cases to `toUserId` (null: back to the queue), in one transaction,
 * each audited as one assignment is; a case of a queue the receiver may not work stays.
 */
export function reassignHeldCases(ctx: DomainContext, input: { fromUserId: string; toUserId: string | null }): Promise<Reassignment> {
  return rowLockedTransaction(ctx, async () => {
    const { from, to } = await parties(ctx, input);
    const held = await heldBy(ctx, from.id);
    const taken = held.slice(0, MAX_REASSIGNED);
    // The cases' rows, in the order of their ids (as a bulk decision takes them), then only those
    // still held by `from` (a decision or a release a moment ago leaves a case where it is).
    const locked = taken.length
      ? await forUpdate(ctx.db.select().from(cases).where(and(eq(cases.orgId, ctx.orgId), inArray(cases.id, taken.map((c) => c.id)))).orderBy(asc(cases.id)))
      : [];
    const now = ctx.clock.now();
    const stillHeld = new Set(locked.filter((c) => c.isOpen === 1 && holderOf(c, now) === from.id).map((c) => c.id));
    const { moved, refused } = await split(ctx, taken.filter((c) => stillHeld.has(c.id)), to);
    const reassignmentId = newId();
    const assigneeId = to?.id ?? null;
    for (const caseId of moved) {
      const c = taken.find((x) => x.id === caseId)!;
      await ctx.db.update(cases).set({ assigneeId, assignedAt: assigneeId ? now : null, claimExpiresAt: null, updatedAt: now }).where(eq(cases.id, caseId));
      await recordAudit(ctx, {
        projectId: c.projectId, action: assigneeId ? "CASE_ASSIGNED" : "CASE_UNASSIGNED",
        entityType: "case", entityId: caseId, before: { assigneeId: from.id }, after: { assigneeId }, data: { reassignmentId },
      });
    }
    return { from: memberOf(from), to: to && memberOf(to), moved, refused, left: held.length - taken.length };
  });
}
