/**
 * The strike a resolution would add, shown before the decision (the resolve dialog, issue 45):
 * "This decision adds a strike (3 in the last 90 days) and reaches step 2: 24-hour suspension",
 * or why it adds none. It reads what decisionStrike (strikes.ts) answers for the case's open
 * reports, the reports a resolution of the case decides (docs/workflow.md): the rule the
 * decision applies, not a second copy of it. It writes nothing and takes no lock, so a decision
 * on the same account meanwhile may make the real count differ by that decision.
 *
 * A case the caller may not work is a 404 and one they review blind a 403 (requireCase); so is
 * an account they review a case about blind (the case's subject, or the one its reports name).
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import { reports } from "../../db/schema.ts";
import type { DomainContext } from "../core/context.ts";
import { requireCase } from "../cases/cases.ts";
import { assertMaySeeSubject, type AccessContext } from "../access/queue-access.ts";
import { OPEN_STATUSES } from "../views/workflow.ts";
import type { ResolutionCode } from "../views/report.ts";
import type { LadderStep, StrikePreview } from "../views/strikes.ts";
import { decisionStrike, strikesInForce } from "../strikes/strikes.ts";

/** A ladder step with its place on the ladder (1: the first). */
const numbered = (ladder: readonly LadderStep[], step: LadderStep | null | undefined) =>
  step ? { ...step, number: ladder.findIndex((s) => s.threshold === step.threshold) + 1 } : null;

/** What resolving the case with `code` now would add to its subject's strikes, and the ladder step it would reach. */
export async function strikePreview(ctx: Pick<DomainContext, "db" | "clock"> & AccessContext, input: { caseId: string; code: ResolutionCode }): Promise<StrikePreview> {
  const c = await requireCase(ctx, input.caseId);
  const open = await ctx.db
    .select({ id: reports.id })
    .from(reports)
    .where(and(eq(reports.caseId, c.id), inArray(reports.status, [...OPEN_STATUSES])))
    .orderBy(asc(reports.createdUs));
  const now = ctx.clock.now();
  const strike = await decisionStrike(ctx, { projectId: c.projectId, caseId: c.id, code: input.code, reportIds: open.map((r) => r.id), at: now }, { lock: false });
  await assertMaySeeSubject(ctx, strike.identityId);
  const { policy } = strike;
  const nextAbove = (total: number) => (policy.enabled ? numbered(policy.ladder, policy.ladder.find((s) => s.threshold > total)) : null);
  if (strike.adds) {
    return {
      adds: true, noStrike: null, count: strike.count, before: strike.before, total: strike.total, windowDays: policy.windowDays,
      step: numbered(policy.ladder, strike.step), nextStep: nextAbove(strike.total),
    };
  }
  // Adding none, the account's standing still shows: the case's subject when the rule stopped before naming it.
  const identityId = strike.identityId ?? c.subjectIdentityId;
  const inForce = identityId === null ? 0 : await strikesInForce(ctx, { identityId, now });
  return { adds: false, noStrike: strike.noStrike, count: 0, before: inForce, total: inForce, windowDays: policy.windowDays, step: null, nextStep: nextAbove(inForce) };
}
