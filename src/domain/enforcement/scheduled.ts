/**
 * Scheduled actions: an enforcement action created to start later (at the end of a grace period,
 * say) is `scheduled` until its start and may be cancelled until then. The start itself is
 * recorded and announced by the scheduler (startDueActions, enforcement.ts); this is the
 * cancellation. docs/enforcement.md, "Scheduled actions", describes the rules for people.
 */
import { rowLockedTransaction, type DomainContext } from "../core/context.ts";
import { conflict } from "../core/errors.ts";
import { iso } from "../core/clock.ts";
import { revokeActionSettlingAppeal } from "./appeals.ts";
import { actionStatus, requireAction, type EnforcementActionView } from "./enforcement.ts";

/**
 * Cancels a scheduled action before it takes effect: it is revoked before its start, so its
 * status is `cancelled`, it never restricts, gets no statement of reasons and no start is
 * announced; `enforcement_action.revoked` says so (status cancelled), with the audit event
 * ENFORCEMENT_ACTION_CANCELLED. A pending appeal of it is settled as on any revocation. 409 once
 * it took effect (revoke it then), or when it is already cancelled, revoked or over.
 */
export function cancelScheduledAction(
  ctx: DomainContext,
  input: { actionId: string; projectId: string; reason?: string | null },
): Promise<EnforcementActionView> {
  return rowLockedTransaction(ctx, async () => {
    const row = await requireAction(ctx, { actionId: input.actionId, projectId: input.projectId, lock: true });
    const status = actionStatus(row, ctx.clock.now());
    if (status === "active") throw conflict(`The action took effect at ${iso(row.startsAt)}: revoke it instead`);
    if (status !== "scheduled") throw conflict(`The action is ${status}: only a scheduled action can be cancelled`);
    // The row stays locked in this transaction: the revocation below sees it still scheduled.
    return (await revokeActionSettlingAppeal(ctx, { actionId: row.id, projectId: input.projectId, reason: input.reason })).action;
  });
}
