/**
 * Quality review, the sampling (issue 29): which decisions go to a blind second review.
 *
 * A moderator's decision on a case (a resolution or a dismissal that takes the case out of
 * review) is sampled when its queue's always-sample condition takes it (ALWAYS_SAMPLE_SPECS,
 * views/quality.ts: the kind of action it applied) or, failing that, by the queue's rate. The
 * rate's choice is a hash of the case's id, not a random draw: the same case answers the same
 * at a given rate on every instance and in every test, 0 % samples nothing and 100 % everything,
 * and a case sampled at a rate is sampled at every higher one.
 *
 * Not sampled: decisions of API keys (the platform's, with no moderator to compare), of
 * Flagstaff itself and of rules (automation), a sweep's resolutions (they follow an action
 * decided, and sampled, on another case), a muted reporter's dismissal on intake, and bulk
 * decisions undone in their window (the pending review goes with the decision: dropUndoneSamples).
 *
 * Runs as an effect of the workflow engine (ON_DECIDED, workflow-engine.ts), in the decision's
 * transaction; one review per decision of a case (the unique index on case and decision time).
 * It imports nothing that imports the engine (queues are read here directly).
 */
import { and, eq, isNull, or } from "drizzle-orm";
import { cases, qualityReviews, queues, reports } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import type { DomainContext } from "../core/context.ts";
import { newId } from "../core/ids.ts";
import { ALWAYS_SAMPLE, alwaysSampled, type AlwaysSample, type SampleReason } from "../views/quality.ts";
import type { ActionKind } from "../views/enforcement.ts";

/** FNV-1a (32 bits) of a string: a stable, evenly spread number for the rate's choice. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Whether the rate `percent` (0–100) samples the case: its hash's place among 10,000 buckets. */
export const sampledBy = (caseId: string, percent: number): boolean => (fnv1a(caseId) % 10_000) < Math.round(percent * 100);

/** What the decision was, as the sampling needs it. */
export interface SampledDecision {
  caseId: string;
  action: "resolve" | "dismiss";
  /** The resolution code or the dismissal reason. */
  code: string | null;
  actionKind: ActionKind | null;
  at: number;
}

const asAlwaysSample = (s: string): AlwaysSample => ((ALWAYS_SAMPLE as readonly string[]).includes(s) ? (s as AlwaysSample) : "none");

/**
 * Samples a moderator's decision of a case for a second review, by its queue's settings (the
 * caller checked it is a moderator's decision). Answers the review's id, or null when not sampled.
 */
export async function sampleDecision(ctx: DomainContext, d: SampledDecision): Promise<string | null> {
  if (ctx.actor.type !== "user" || !ctx.actor.id || ctx.automation) return null;
  // The case's queue (its own, else the default) with its settings, in one read on the decision's path.
  const [q] = await ctx.db
    .select({ projectId: cases.projectId, id: queues.id, samplePercent: queues.samplePercent, alwaysSample: queues.alwaysSample })
    .from(cases)
    .innerJoin(queues, and(eq(queues.orgId, cases.orgId), or(eq(queues.id, cases.queueId), and(isNull(cases.queueId), eq(queues.isDefault, 1)))))
    .where(and(eq(cases.id, d.caseId), eq(cases.orgId, ctx.orgId)))
    .limit(1);
  if (!q) return null;
  const reason: SampleReason | null = alwaysSampled(asAlwaysSample(q.alwaysSample), d.actionKind) ? "always" : sampledBy(d.caseId, q.samplePercent) ? "rate" : null;
  if (!reason) return null;
  const reasons = await ctx.db.select({ reasons: reports.reasons }).from(reports).where(eq(reports.caseId, d.caseId));
  const categories = [...new Set(reasons.flatMap((r) => JSON.parse(r.reasons) as string[]))].sort();
  const id = newId();
  const inserted = await ctx.db
    .insert(qualityReviews)
    .values({
      id,
      orgId: ctx.orgId,
      projectId: q.projectId,
      caseId: d.caseId,
      queueId: q.id,
      reason,
      categories: JSON.stringify(categories),
      firstById: ctx.actor.id,
      firstAction: d.action,
      firstCode: d.code,
      firstKind: d.actionKind,
      firstDecidedAt: d.at,
      createdAt: d.at,
    })
    .onConflictDoNothing()
    .returning({ id: qualityReviews.id });
  if (!inserted.length) return null;
  // Says neither the decision nor why it was sampled (the second reviewer may read the case's trail).
  await recordAudit(ctx, { projectId: q.projectId, action: "QUALITY_REVIEW_SAMPLED", entityType: "case", entityId: d.caseId, data: { reviewId: id, queueId: q.id } });
  return id;
}

/** A decision undone (a bulk decision's undo) takes its review with it while nobody reviewed it yet. */
export async function dropUndoneSamples(ctx: DomainContext, input: { caseId: string }): Promise<void> {
  await ctx.db.delete(qualityReviews).where(and(eq(qualityReviews.orgId, ctx.orgId), eq(qualityReviews.caseId, input.caseId), isNull(qualityReviews.secondDecidedAt)));
}
