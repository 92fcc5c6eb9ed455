/**
 * A moderator's decisions on a report, and a case's triage, through the workflow engine
 * (workflow-engine.ts): a decision on a report applies to its case and to every open report in
 * it.
 */
import { and, eq } from "drizzle-orm";
import { reports } from "../../db/schema.ts";
import { rowLockedTransaction, type DomainContext } from "../core/context.ts";
import { conflict } from "../core/errors.ts";
import { requireCase } from "../cases/cases.ts";
import { applyTransition, type Move } from "./workflow-engine.ts";

/** A moderator's decision on a report: one move of the workflow table with its data. */
export type Decision = Move<"escalate" | "resolve" | "dismiss" | "triage" | "enrich">;

/**
 * Applies a decision to a report, its case and every other open report of that case, through
 * the workflow engine. Refused (409) when the report's own status does not allow it.
 * Escalating a RESOLVED report changes no status but is still recorded.
 */
export async function decideOnReport(ctx: DomainContext, input: { reportId: string; decision: Decision; takeOver?: boolean }): Promise<{ changed: boolean }> {
  const t = await applyTransition(ctx, { target: { reportId: input.reportId }, move: input.decision, claim: input.takeOver ? "take_over" : "respect" });
  return { changed: t.changed };
}

/** Triages a case: its first OPEN report is triaged, and with it the case and its other open reports. */
export function triageCase(ctx: DomainContext, caseId: string, opts: { takeOver?: boolean } = {}): Promise<void> {
  return rowLockedTransaction(ctx, async () => {
    const c = await requireCase(ctx, caseId, undefined, { lock: true });
    const [first] = await ctx.db
      .select({ id: reports.id })
      .from(reports)
      .where(and(eq(reports.caseId, c.id), eq(reports.status, "OPEN")))
      .limit(1);
    if (!first) throw conflict(`Case is ${c.status}: only cases with OPEN reports can be triaged`);
    await applyTransition(ctx, { target: { reportId: first.id }, move: { action: "triage" }, claim: opts.takeOver ? "take_over" : "respect" });
  });
}

/**
 * An OPEN case goes to IN_REVIEW (AI enrichment found likely violations in one of its reports),
 * through the workflow engine (action `enrich`); a case in any other status is left as it is.
 */
export async function moveOpenCaseToReview(ctx: DomainContext, caseId: string): Promise<void> {
  await applyTransition(ctx, { target: { caseId }, move: { action: "enrich" }, refused: "skip" });
}
