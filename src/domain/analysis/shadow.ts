/**
 * Shadow analyses (docs/ai.md, "Policies and shadow runs"): after a report's live enrichment, its
 * text is classified again with the shadow configuration (FLAGSTAFF_AI_SHADOW_MODEL, the shadow
 * policy versions), and the answer is stored beside the live one, for comparison only. A shadow
 * analysis never acts: it moves no status, raises no bucket, files no report, runs no rule, sends
 * no webhook and writes no audit event; it touches nothing but its own table. It never delays
 * live work either: its job has a lane of its own with one slot and a backlog bound, and it waits
 * while live enrichment jobs are due (JOB_SPECS, src/jobs/job-specs.ts).
 */
import { and, desc, eq, gte, lt } from "drizzle-orm";
import { contentAnalyses, shadowAnalyses } from "../../db/schema.ts";
import { systemActor } from "../core/audit.ts";
import { DAY_MS, iso } from "../core/clock.ts";
import { rowLockedTransaction, type DomainContext } from "../core/context.ts";
import { badRequest, REFUSED, RetryLater, unlessRefused } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { nextDueAt } from "../plumbing/jobs.ts";
import { JOB_KIND } from "../views/job.ts";
import { isOfWorkableCase, type AccessContext } from "../access/queue-access.ts";
import type { Severity } from "../cases/severity.ts";
import type { PairAnswer, ShadowComparison } from "../views/policy.ts";
import { checkAnalyzable, classifyText, type AiContext } from "./analysis.ts";
import { hasShadowPolicies, policiesForClassification } from "./policies.ts";
import { log } from "../../log.ts";

/** How long a shadow job waits when live enrichment is due (an attempt each time, SHADOW_MAX_ATTEMPTS). */
export const SHADOW_DEFER_MS = 5_000;

/**
 * Classifies the text of a live analysis with the shadow configuration and stores the answer,
 * once per live analysis (a job run twice stores one). Skipped when the live analysis is gone,
 * AI is off for the project, the shadow configuration is gone, or live enrichment kept it
 * waiting through its last attempt; deferred (RetryLater) while live enrichment jobs are due.
 */
export async function runShadowAnalysis(ctx: AiContext, input: { analysisId: string; lastAttempt: boolean }): Promise<"stored" | "skipped"> {
  const [live] = await ctx.db.select().from(contentAnalyses).where(eq(contentAnalyses.id, input.analysisId)).limit(1);
  if (!live || live.reportId === null) return "skipped";
  const [done] = await ctx.db.select({ id: shadowAnalyses.id }).from(shadowAnalyses).where(eq(shadowAnalyses.liveAnalysisId, live.id)).limit(1);
  if (done) return "skipped";
  const sys: AiContext = { ...ctx, orgId: live.orgId, actor: systemActor };
  // AI switched off (or the project gone) since.
  if ((await unlessRefused(checkAnalyzable(sys, live.projectId))) === REFUSED) return "skipped";
  const shadowModel = ctx.config.aiShadowModel;
  if (shadowModel === null && !(await hasShadowPolicies(sys, live.projectId))) return "skipped";
  // Live work first: the model's time goes to the reports waiting for their enrichment.
  const due = await nextDueAt(sys, JOB_KIND.enrich);
  if (due !== null && due <= sys.clock.now()) {
    if (input.lastAttempt) {
      log.info("shadow analysis skipped: live enrichment kept it waiting", { analysisId: live.id });
      return "skipped";
    }
    throw new RetryLater("live enrichment jobs are waiting", SHADOW_DEFER_MS);
  }
  const { categories, policyVersions } = await policiesForClassification(sys, { projectId: live.projectId, selection: "shadow" });
  if (categories.length === 0) return "skipped";
  const c = await classifyText(sys, { categories, text: live.sourceText, model: shadowModel ?? ctx.config.aiModel });
  const reportId = live.reportId;
  return rowLockedTransaction(sys, async () => {
    const stored = await sys.db
      .insert(shadowAnalyses)
      .values({
        id: newId(),
        orgId: live.orgId,
        projectId: live.projectId,
        liveAnalysisId: live.id,
        reportId,
        categories: JSON.stringify(c.categories),
        severity: c.severity,
        confidence: c.confidence,
        reasoning: c.reasoning,
        model: c.model,
        promptVersion: c.promptVersion,
        policyVersions: JSON.stringify(policyVersions),
        latencyMs: c.latencyMs,
        createdAt: sys.clock.now(),
      })
      .onConflictDoNothing({ target: shadowAnalyses.liveAnalysisId })
      .returning({ id: shadowAnalyses.id });
    return stored.length ? "stored" : "skipped";
  });
}

/** The most pairs one comparison reads (the newest of the period). */
export const SHADOW_COMPARISON_MAX_PAIRS = 5_000;

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().join("\u0000") === [...b].sort().join("\u0000");
const violation = (severity: string) => severity !== "LOW";

/**
 * Live and shadow analyses of the same reports, over a period (by when the shadow one was made;
 * default: the last 7 days), of the reports of cases the caller may work (queue access): how
 * many pairs, how often they agree on the verdict (severity not LOW), on the categories and on
 * the severity, under which shadow configurations, and the pairs that differ, newest first.
 */
export async function shadowComparison(
  ctx: Pick<DomainContext, "clock"> & AccessContext,
  input: { projectId: string; from?: number; to?: number; limit: number },
): Promise<ShadowComparison> {
  const to = input.to ?? ctx.clock.now();
  const from = input.from ?? to - 7 * DAY_MS;
  if (from >= to) throw badRequest("from: must be before to");
  const rows = await ctx.db
    .select({ shadow: shadowAnalyses, live: contentAnalyses })
    .from(shadowAnalyses)
    .innerJoin(contentAnalyses, eq(contentAnalyses.id, shadowAnalyses.liveAnalysisId))
    .where(
      and(
        eq(shadowAnalyses.projectId, input.projectId),
        eq(shadowAnalyses.orgId, ctx.orgId),
        gte(shadowAnalyses.createdAt, from),
        lt(shadowAnalyses.createdAt, to),
        await isOfWorkableCase(ctx, "report", shadowAnalyses.reportId, { whenNull: "left out" }),
      ),
    )
    .orderBy(desc(shadowAnalyses.createdAt), desc(shadowAnalyses.id))
    .limit(SHADOW_COMPARISON_MAX_PAIRS + 1);
  const pairs = rows.slice(0, SHADOW_COMPARISON_MAX_PAIRS);
  let verdictAgree = 0;
  let liveOnly = 0;
  let shadowOnly = 0;
  let categoriesAgree = 0;
  let severityAgree = 0;
  const configurations = new Map<string, ShadowComparison["configurations"][number]>();
  const differences: ShadowComparison["differences"] = [];
  for (const { shadow, live } of pairs) {
    const l = liveAnswer(live);
    const s = shadowAnswer(shadow);
    const lv = violation(l.severity);
    const sv = violation(s.severity);
    if (lv === sv) verdictAgree++;
    else if (lv) liveOnly++;
    else shadowOnly++;
    const catsAgree = sameSet(l.categories, s.categories);
    if (catsAgree) categoriesAgree++;
    if (l.severity === s.severity) severityAgree++;
    const key = JSON.stringify([s.model, s.promptVersion, s.policyVersions]);
    const config = configurations.get(key) ?? { model: s.model, promptVersion: s.promptVersion, policyVersions: s.policyVersions, pairs: 0 };
    config.pairs++;
    configurations.set(key, config);
    if ((lv !== sv || !catsAgree || l.severity !== s.severity) && differences.length < input.limit) {
      differences.push({ reportId: shadow.reportId, at: iso(shadow.createdAt), live: l, shadow: s });
    }
  }
  const rate = (n: number) => (pairs.length === 0 ? null : n / pairs.length);
  return {
    from: iso(from),
    to: iso(to),
    pairs: pairs.length,
    truncated: rows.length > SHADOW_COMPARISON_MAX_PAIRS,
    verdict: { agree: verdictAgree, rate: rate(verdictAgree), liveOnly, shadowOnly },
    categories: { agree: categoriesAgree, rate: rate(categoriesAgree) },
    severity: { agree: severityAgree, rate: rate(severityAgree) },
    configurations: [...configurations.values()].sort((a, b) => b.pairs - a.pairs),
    differences,
  };
}

const liveAnswer = (a: typeof contentAnalyses.$inferSelect): PairAnswer => ({
  categories: JSON.parse(a.categories) as string[],
  severity: a.severity as Severity,
  confidence: a.confidence,
  reasoning: a.reasoning,
  model: a.model,
  promptVersion: a.promptVersion,
  policyVersions: a.policyVersions === null ? {} : (JSON.parse(a.policyVersions) as Record<string, number>),
});

const shadowAnswer = (a: typeof shadowAnalyses.$inferSelect): PairAnswer => ({
  categories: JSON.parse(a.categories) as string[],
  severity: a.severity as Severity,
  confidence: a.confidence,
  reasoning: a.reasoning,
  model: a.model,
  promptVersion: a.promptVersion,
  policyVersions: JSON.parse(a.policyVersions) as Record<string, number>,
});
