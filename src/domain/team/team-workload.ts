/**
 * The team's workload as a lead reads it (issue 45, docs/dashboard.md "Team"): the queries. What
 * counts as a decision, how long it took and what the agreement figure is, is the arithmetic of
 * workload.ts; this module reads the rows it needs:
 *
 * - the open cases each user holds now (claims.ts: a lapsed review-mode claim is nobody's);
 * - the period's case status changes from the audit trail (by the (org, action, id) index: the
 *   id bound keeps it a range search, as the overview's decisions are read), and the holder
 *   changes of the cases decided in it (by the (org, entity) index);
 * - the second reviews committed in the period (quality review), labelled as the agreement
 *   figures label them (decisionLabel).
 *
 * Everything is counted over the cases the caller may work (queue access): a lead held to some
 * queues sees their queues' work only. These are figures, not lists of cases, so a case the
 * caller reviews blind counts with the others (src/domain/access/queue-access.ts says why).
 */
import { and, eq, gte, inArray, isNotNull, lt, lte } from "drizzle-orm";
import { auditEvents, cases, qualityReviews, users } from "../../db/schema.ts";
import { DAY_MS, iso, isoOrNull } from "../core/clock.ts";
import type { DomainContext } from "../core/context.ts";
import { uuidV7Floor } from "../core/ids.ts";
import type { ActionKind } from "../views/enforcement.ts";
import { decisionLabel, type ReviewedAction } from "../views/quality.ts";
import { hasRole, ROLES, type Role } from "../views/user.ts";
import type { Workload } from "../views/workload.ts";
import { isClaimedByAnyone } from "../cases/claims.ts";
import { isCountedFor, workableCases, type AccessContext } from "../access/queue-access.ts";
import { decisionsOf, heldSince, workloadFigures, type HolderChange, type StatusChange } from "./workload.ts";

const roleOf = (role: string): Role => ((ROLES as readonly string[]).includes(role) ? (role as Role) : "viewer");
/** Cases whose holder changes are read in one query. */
const CHUNK = 500;

const dataOf = (text: string | null): Record<string, unknown> => {
  try {
    const parsed: unknown = text ? JSON.parse(text) : null;
    return parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

/** Each moderator's workload over [from, to) of the cases the caller may work (docs/dashboard.md, "Team"). */
export async function teamWorkload(ctx: Pick<DomainContext, "db" | "clock"> & AccessContext, input: { from: number; to: number }): Promise<Workload> {
  const now = ctx.clock.now();
  const [caseWorkable, eventWorkable, reviewWorkable] = await Promise.all([
    workableCases(ctx),
    isCountedFor(ctx, "case", auditEvents.entityId, { whenNull: "left out" }),
    isCountedFor(ctx, "case", qualityReviews.caseId, { whenNull: "left out" }),
  ]);
  const people = await ctx.db.select({ id: users.id, email: users.email, role: users.role, disabledAt: users.disabledAt }).from(users).where(eq(users.orgId, ctx.orgId));

  const held = await ctx.db
    .select({ holderId: cases.assigneeId, since: cases.assignedAt })
    .from(cases)
    .where(and(eq(cases.orgId, ctx.orgId), eq(cases.isOpen, 1), isClaimedByAnyone(now), caseWorkable));

  // Audit ids are UUIDv7s of the real time: the bound (a day early, for a clock set apart from it) keeps the search a range.
  const idFloor = uuidV7Floor(input.from - (now - Date.now()) - DAY_MS);
  const changes = await ctx.db
    .select({ caseId: auditEvents.entityId, id: auditEvents.id, at: auditEvents.createdAt, actorType: auditEvents.actorType, actorId: auditEvents.actorId, data: auditEvents.data })
    .from(auditEvents)
    .where(
      and(
        eq(auditEvents.orgId, ctx.orgId),
        eq(auditEvents.action, "CASE_STATUS_CHANGED"),
        gte(auditEvents.id, idFloor),
        gte(auditEvents.createdAt, input.from),
        lt(auditEvents.createdAt, input.to),
        eventWorkable,
      ),
    );
  const decisions = decisionsOf(
    changes.map((c): StatusChange => ({ caseId: c.caseId, id: c.id, at: c.at, userId: c.actorType === "user" ? c.actorId : null, action: String(dataOf(c.data).action ?? "") })),
  );

  // Who held each decided case when, up to the period's end.
  const decidedCases = [...new Set(decisions.map((d) => d.caseId))];
  const holderChanges = new Map<string, HolderChange[]>();
  for (let i = 0; i < decidedCases.length; i += CHUNK) {
    const rows = await ctx.db
      .select({ caseId: auditEvents.entityId, id: auditEvents.id, at: auditEvents.createdAt, action: auditEvents.action, after: auditEvents.after, data: auditEvents.data })
      .from(auditEvents)
      .where(
        and(
          eq(auditEvents.orgId, ctx.orgId),
          eq(auditEvents.entityType, "case"),
          inArray(auditEvents.entityId, decidedCases.slice(i, i + CHUNK)),
          inArray(auditEvents.action, ["CASE_ASSIGNED", "CASE_UNASSIGNED"]),
          lte(auditEvents.createdAt, input.to),
        ),
      );
    for (const r of rows) {
      const holder = r.action === "CASE_ASSIGNED" ? dataOf(r.after).assigneeId : null;
      const change: HolderChange = { caseId: r.caseId, id: r.id, at: r.at, holderId: typeof holder === "string" ? holder : null, byDecision: "takenOverFrom" in dataOf(r.data) };
      holderChanges.set(r.caseId, [...(holderChanges.get(r.caseId) ?? []), change]);
    }
  }

  const reviews = await ctx.db
    .select({
      firstById: qualityReviews.firstById, firstAction: qualityReviews.firstAction, firstCode: qualityReviews.firstCode, firstKind: qualityReviews.firstKind,
      secondAction: qualityReviews.secondAction, secondCode: qualityReviews.secondCode, secondKind: qualityReviews.secondKind,
    })
    .from(qualityReviews)
    .where(
      and(
        eq(qualityReviews.orgId, ctx.orgId),
        gte(qualityReviews.secondDecidedAt, input.from),
        lt(qualityReviews.secondDecidedAt, input.to),
        isNotNull(qualityReviews.reviewerId),
        reviewWorkable,
      ),
    );
  const label = (action: string, code: string | null, kind: string | null) => decisionLabel({ action: action as ReviewedAction, code, actionKind: kind as ActionKind | null });

  const figures = workloadFigures({
    listed: people.filter((u) => u.disabledAt === null && hasRole(roleOf(u.role), "moderator")).map((u) => u.id),
    held: held.flatMap((h) => (h.holderId === null ? [] : [{ holderId: h.holderId, since: h.since ?? now }])),
    decisions: decisions.map((d) => ({ ...d, heldSince: heldSince(d, holderChanges.get(d.caseId) ?? []) })),
    reviews: reviews.map((r) => ({ firstById: r.firstById, first: label(r.firstAction, r.firstCode, r.firstKind), second: label(r.secondAction ?? "dismiss", r.secondCode, r.secondKind) })),
  });
  const byId = new Map(people.map((u) => [u.id, u] as const));
  return {
    from: iso(input.from),
    to: iso(input.to),
    moderators: figures
      .flatMap((f) => {
        const u = byId.get(f.userId);
        if (!u) return [];
        return [{ ...f, user: { id: u.id, email: u.email, role: roleOf(u.role), disabled: u.disabledAt !== null }, heldSince: isoOrNull(f.heldSince) }];
      })
      .map(({ userId: _, ...m }) => m)
      .sort((a, b) => a.user.email.localeCompare(b.user.email)),
  };
}
