/**
 * The strike policy's ladder taking its step (docs/enforcement.md, "Strikes"): the action a
 * strike's decision reached, made through createEnforcementAction like a moderator's (statement
 * of reasons, webhook, audit), by Flagstaff itself (actor `system`, so the statement says
 * AUTOMATED_DECISION_FULLY) with `strikePolicy: { strikeId, threshold }` and `automated: true`
 * in every audit event it writes (DomainContext.automation).
 *
 * The step was decided in the decision's transaction (src/domain/strikes/strikes.ts) and its
 * job enqueued there; the job runs this once the decision has committed. The strike's row is
 * locked and its `action_id` written with the action, so a job run twice (a retry, a lease that
 * ran out) takes the step once.
 */
import { eq } from "drizzle-orm";
import { forUpdate } from "../../db/prepared.ts";
import { identities, strikes } from "../../db/schema.ts";
import { requireProject } from "../accounts/projects.ts";
import { systemActor } from "../core/audit.ts";
import { rowLockedTransaction, type DomainContext } from "../core/context.ts";
import { REFUSED, unlessRefused } from "../core/errors.ts";
import type { AccessContext } from "../access/queue-access.ts";
import type { EnforcementActionView } from "../views/enforcement.ts";
import type { IdentityStrikes } from "../views/strikes.ts";
import { createEnforcementAction, listIdentityActions, requireIdentityId, type ActionQuery } from "./enforcement.ts";
import { stepOf, strikesOfIdentity } from "../strikes/strikes.ts";

/** The action's reason when the step names none. */
export const stepReason = (threshold: number): string => `Strike policy: ${threshold} strike${threshold === 1 ? "" : "s"}`;

/**
 * Takes the ladder step a strike reached, once: null when it has none, was taken already, or the
 * strike was removed meanwhile (its decision overturned or undone before the job ran).
 */
export function takeLadderStep(ctx: DomainContext, input: { strikeId: string }): Promise<EnforcementActionView | null> {
  return rowLockedTransaction(ctx, async () => {
    const [strike] = await forUpdate(ctx.db.select().from(strikes).where(eq(strikes.id, input.strikeId)));
    const step = strike ? stepOf(strike) : null;
    if (!strike || !step || strike.actionId !== null || strike.removedAt !== null || strike.orgId !== ctx.orgId) return null;
    const [identity] = await ctx.db.select({ type: identities.type, externalId: identities.externalId }).from(identities).where(eq(identities.id, strike.identityId)).limit(1);
    if (!identity) return null;
    // Its project deleted, its rows going by slices: no action taken (nor a retry).
    const project = await unlessRefused(requireProject(ctx, strike.projectId));
    if (project === REFUSED) return null;
    const auto: DomainContext = { ...ctx, actor: systemActor, automation: { strikePolicy: { strikeId: strike.id, threshold: step.threshold } } };
    const action = await createEnforcementAction(auto, {
      project,
      kind: step.kind,
      reason: step.reason ?? stepReason(step.threshold),
      note: `Taken by the strike policy at ${step.threshold} strike${step.threshold === 1 ? "" : "s"} (strike ${strike.id})`,
      identity,
      reportId: strike.reportId,
      endsAt: step.durationSeconds === undefined ? null : ctx.clock.now() + step.durationSeconds * 1000,
    });
    await ctx.db.update(strikes).set({ actionId: action.id }).where(eq(strikes.id, strike.id));
    return action;
  });
}

/**
 * The SDK's pull of an identity's actions (listIdentityActions), with its strikes beside them:
 * `strikes` is an addition to the answer, which keeps every field it had.
 */
export async function identityActionsWithStrikes(
  ctx: Pick<DomainContext, "db" | "clock"> & AccessContext,
  q: Omit<ActionQuery, "identityId"> & { type: string; externalId: string },
): Promise<{ actions: EnforcementActionView[]; nextCursor: string | null; strikes: IdentityStrikes }> {
  const page = await listIdentityActions(ctx, q);
  const id = await requireIdentityId(ctx, q);
  return { ...page, strikes: await strikesOfIdentity(ctx, { projectId: q.projectId, identity: { id, type: q.type, externalId: q.externalId } }) };
}
