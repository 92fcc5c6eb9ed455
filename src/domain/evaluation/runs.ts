/**
 * Evaluation runs (issue 28): a set version asked of a model, item by item, as background jobs,
 * and the figures of the answers.
 *
 * A run is worked by jobs of its own lane (JOB_KIND.evalRun, FLAGSTAFF_EVAL_CONCURRENCY slots,
 * 1 by default): live enrichment and webhook deliveries have lanes of their own, so however many
 * items a run has, it never holds their slots; at most that many model calls of evaluations are
 * in flight per instance. One job of a run at a time: a job works the run's unanswered items in
 * order for a bounded time (a quarter of the job lease), then enqueues the next job and ends. So
 * a job never outlives its lease, any instance may take the next one, and a crash leaves a
 * leased job that the queue hands out again once its lease ends: the run resumes where it was.
 *
 * Each answer is stored in its own short transaction right after the model answered (the model
 * is never asked inside a transaction), so an answer received and stored is never asked again;
 * the only item asked twice after a crash is one whose answer was in flight (asked, not yet
 * stored). Cancelling sets the run's status in one transaction with its figures over the items
 * done; the job sees it before the next item, and an answer arriving after it is dropped (its
 * transaction checks the run is still running, under the run's row lock on PostgreSQL).
 */
import { and, asc, desc, eq, gt, sql } from "drizzle-orm";
import { AiUnavailableError } from "../../ai/classifier.ts";
import { PROMPT_VERSION, type PromptCategory } from "../../ai/prompt.ts";
import { evalItems, evalRunItems, evalRuns, evalSetVersions } from "../../db/schema.ts";
import { getOrganization } from "../accounts/organizations.ts";
import { isLiveProject, requireProject } from "../accounts/projects.ts";
import { assertPlanAllowsAi } from "../accounts/settings.ts";
import { classifyText, type AiContext } from "../analysis/analysis.ts";
import { policiesForClassification, type PolicySelection } from "../analysis/policies.ts";
import type { Severity } from "../cases/severity.ts";
import { iso, isoOrNull } from "../core/clock.ts";
import { rowLockedTransaction, transaction, type DomainContext } from "../core/context.ts";
import { badRequest, conflict, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { recordAudit } from "../core/audit.ts";
import { enqueueJob } from "../plumbing/jobs.ts";
import { JOB_KIND } from "../views/job.ts";
import { requireEveryCase, type AccessContext } from "../access/queue-access.ts";
import {
  evalRunMetricsSchema,
  type EvalRunComparison,
  type EvalRunItemView,
  type EvalRunMetrics,
  type EvalRunView,
  type ThresholdAdvice,
} from "../views/evaluation.ts";
import { adviseThresholds, compareRunItems, computeRunMetrics, type ScoredItem } from "./metrics.ts";
import { requireEvalSet } from "./sets.ts";

export type EvalRunRow = typeof evalRuns.$inferSelect;
/** A category as the run sends it to the model, frozen at the start (so a resumed run asks as it began). */
type RunCategory = PromptCategory;

/** A run of the context's organization and project, or a 404. */
async function requireRun(ctx: Pick<DomainContext, "db" | "orgId">, input: { projectId: string; runId: string }): Promise<EvalRunRow> {
  const [row] = await ctx.db
    .select()
    .from(evalRuns)
    .where(and(eq(evalRuns.id, input.runId), eq(evalRuns.orgId, ctx.orgId), eq(evalRuns.projectId, input.projectId)))
    .limit(1);
  if (!row) throw notFound("Evaluation run not found");
  return row;
}

export const toEvalRunView = (r: EvalRunRow): EvalRunView => ({
  id: r.id,
  projectId: r.projectId,
  setId: r.setId,
  setVersion: r.setVersion,
  model: r.model,
  promptVersion: r.promptVersion,
  policyVersions: JSON.parse(r.policyVersions) as Record<string, number>,
  status: r.status,
  error: r.error,
  itemsDone: r.itemsDone,
  itemsTotal: r.itemsTotal,
  startedAt: isoOrNull(r.startedAt),
  finishedAt: isoOrNull(r.finishedAt),
  createdAt: iso(r.createdAt),
  metrics: r.metrics === null ? null : evalRunMetricsSchema.parse(JSON.parse(r.metrics)),
});

/**
 * Starts a run of a set's latest version (frozen from now on) against `model` (default: the
 * configured one), with the project's categories as the policy selection gives them now (default
 * `live`: what live analyses are sent; `shadow`, `descriptions` or named versions compare
 * another policy on the same set). The texts are stored with the run, which asks with them to
 * its end whatever the policies become meanwhile.
 */
export async function startEvalRun(
  ctx: DomainContext & { defaultModel: string },
  input: { projectId: string; setId: string; model?: string; policies?: PolicySelection },
): Promise<EvalRunView> {
  const project = await requireProject(ctx, input.projectId);
  assertPlanAllowsAi(await getOrganization(ctx));
  const { categories, policyVersions } = await policiesForClassification(ctx, { projectId: project.id, selection: input.policies ?? "live" });
  if (categories.length === 0) throw badRequest("No report categories are configured for this project");
  return transaction(ctx, async () => {
    const set = await requireEvalSet(ctx, { projectId: project.id, setId: input.setId });
    const [version] = await ctx.db.select().from(evalSetVersions).where(and(eq(evalSetVersions.setId, set.id), eq(evalSetVersions.version, set.version)));
    if (!version || version.items === 0) throw badRequest("The set has no item to run");
    const now = ctx.clock.now();
    if (version.frozenAt === null) {
      await ctx.db.update(evalSetVersions).set({ frozenAt: now }).where(and(eq(evalSetVersions.setId, set.id), eq(evalSetVersions.version, set.version)));
    }
    const row: EvalRunRow = {
      id: newId(),
      orgId: ctx.orgId,
      projectId: project.id,
      setId: set.id,
      setVersion: set.version,
      model: input.model ?? ctx.defaultModel,
      promptVersion: PROMPT_VERSION,
      policyVersions: JSON.stringify(policyVersions),
      categories: JSON.stringify(categories.map((c): RunCategory => ({ name: c.name, description: c.description, policy: c.policy ?? null }))),
      status: "queued",
      itemsDone: 0,
      itemsTotal: version.items,
      error: null,
      metrics: null,
      startedAt: null,
      finishedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await ctx.db.insert(evalRuns).values(row);
    await enqueueJob(ctx, { orgId: ctx.orgId, kind: JOB_KIND.evalRun, payload: { runId: row.id }, maxAttempts: 50 });
    await recordAudit(ctx, {
      projectId: project.id,
      action: "EVAL_RUN_STARTED",
      entityType: "eval_run",
      entityId: row.id,
      after: { setId: set.id, setVersion: set.version, model: row.model, promptVersion: row.promptVersion, items: row.itemsTotal },
    });
    return toEvalRunView(row);
  });
}

/** Cancels a queued or running run: its figures cover the items done. A finished run is a 409. */
export function cancelEvalRun(ctx: DomainContext, input: { projectId: string; runId: string }): Promise<EvalRunView> {
  return transaction(ctx, async () => {
    const run = await requireRun(ctx, input);
    if (run.status !== "queued" && run.status !== "running") throw conflict(`The run is ${run.status}; only a queued or running run can be cancelled`);
    const now = ctx.clock.now();
    const [updated] = await ctx.db
      .update(evalRuns)
      .set({ status: "cancelled", finishedAt: now, updatedAt: now })
      .where(and(eq(evalRuns.id, run.id), sql`${evalRuns.status} in ('queued', 'running')`))
      .returning();
    if (!updated) throw conflict("The run finished meanwhile");
    const metrics = await runMetrics(ctx, updated);
    await ctx.db.update(evalRuns).set({ metrics: JSON.stringify(metrics) }).where(eq(evalRuns.id, run.id));
    await recordAudit(ctx, {
      projectId: run.projectId,
      action: "EVAL_RUN_CANCELLED",
      entityType: "eval_run",
      entityId: run.id,
      before: { status: run.status },
      after: { status: "cancelled", itemsDone: updated.itemsDone },
    });
    return toEvalRunView({ ...updated, metrics: JSON.stringify(metrics) });
  });
}

export async function listEvalRuns(ctx: AccessContext & Pick<DomainContext, "db" | "orgId">, input: { projectId: string; setId?: string }): Promise<EvalRunView[]> {
  await requireEveryCase(ctx);
  await requireProject(ctx, input.projectId);
  const rows = await ctx.db
    .select()
    .from(evalRuns)
    .where(and(eq(evalRuns.orgId, ctx.orgId), eq(evalRuns.projectId, input.projectId), input.setId ? eq(evalRuns.setId, input.setId) : undefined))
    .orderBy(desc(evalRuns.createdAt), desc(evalRuns.id))
    .limit(500);
  return rows.map(toEvalRunView);
}

export async function getEvalRun(ctx: AccessContext & Pick<DomainContext, "db" | "orgId">, input: { projectId: string; runId: string }): Promise<EvalRunView> {
  await requireEveryCase(ctx);
  return toEvalRunView(await requireRun(ctx, input));
}

/** A run's items with the model's answers (unanswered ones too), in the set's order. */
async function runItemRows(ctx: Pick<DomainContext, "db">, run: EvalRunRow) {
  return ctx.db
    .select({ item: evalItems, answer: evalRunItems })
    .from(evalItems)
    .leftJoin(evalRunItems, and(eq(evalRunItems.runId, run.id), eq(evalRunItems.position, evalItems.position)))
    .where(and(eq(evalItems.setId, run.setId), eq(evalItems.version, run.setVersion)))
    .orderBy(asc(evalItems.position));
}

type RunItemRow = Awaited<ReturnType<typeof runItemRows>>[number];

const toItemView = ({ item, answer }: RunItemRow): EvalRunItemView => ({
  itemId: item.id,
  externalId: item.externalId,
  text: item.text,
  expectedCategories: JSON.parse(item.categories) as string[],
  expectedSeverity: item.severity,
  categories: answer ? (JSON.parse(answer.categories) as string[]) : [],
  severity: answer?.severity ?? null,
  confidence: answer?.confidence ?? null,
  error: answer?.error ?? null,
  latencyMs: answer?.latencyMs ?? null,
});

/** The answered items as the figures see them (an answer with an error: predicted null). */
function scored(rows: readonly RunItemRow[]): ScoredItem[] {
  return rows
    .filter((r) => r.answer !== null)
    .map(({ item, answer }) => ({
      itemId: item.id,
      expectedCategories: JSON.parse(item.categories) as string[],
      expectedSeverity: item.severity,
      predicted:
        answer!.error === null && answer!.severity !== null && answer!.confidence !== null
          ? { categories: JSON.parse(answer!.categories) as string[], severity: answer!.severity, confidence: answer!.confidence }
          : null,
      latencyMs: answer!.latencyMs,
      promptTokens: answer!.promptTokens,
      completionTokens: answer!.completionTokens,
    }));
}

const runCategoryNames = (run: EvalRunRow): string[] => (JSON.parse(run.categories) as RunCategory[]).map((c) => c.name);

async function runMetrics(ctx: Pick<DomainContext, "db">, run: EvalRunRow): Promise<EvalRunMetrics> {
  return computeRunMetrics(runCategoryNames(run), scored(await runItemRows(ctx, run)));
}

export async function listEvalRunItems(
  ctx: AccessContext & Pick<DomainContext, "db" | "orgId">,
  input: { projectId: string; runId: string; onlyAnswered?: boolean },
): Promise<EvalRunItemView[]> {
  await requireEveryCase(ctx);
  const run = await requireRun(ctx, input);
  const rows = await runItemRows(ctx, run);
  return (input.onlyAnswered ? rows.filter((r) => r.answer !== null) : rows).map(toItemView);
}

/** Two runs of one set version side by side; runs of different sets or versions are a 400. */
export async function compareEvalRuns(
  ctx: AccessContext & Pick<DomainContext, "db" | "orgId">,
  input: { projectId: string; runA: string; runB: string },
): Promise<EvalRunComparison> {
  await requireEveryCase(ctx);
  const a = await requireRun(ctx, { projectId: input.projectId, runId: input.runA });
  const b = await requireRun(ctx, { projectId: input.projectId, runId: input.runB });
  if (a.setId !== b.setId || a.setVersion !== b.setVersion) {
    throw badRequest(`Runs compare only on the same set version: run A ran set ${a.setId} v${a.setVersion}, run B set ${b.setId} v${b.setVersion}`);
  }
  const rowsA = await runItemRows(ctx, a);
  const rowsB = await runItemRows(ctx, b);
  const compared = compareRunItems(scored(rowsA), scored(rowsB));
  const byId = new Map(rowsA.map((r) => [r.item.id, r]));
  const byIdB = new Map(rowsB.map((r) => [r.item.id, r]));
  const answerOf = (r: RunItemRow | undefined) => {
    const v = r ? toItemView(r) : null;
    return { categories: v?.categories ?? [], severity: v?.severity ?? null, confidence: v?.confidence ?? null };
  };
  return {
    a: toEvalRunView(a),
    b: toEvalRunView(b),
    fixed: compared.fixed,
    broken: compared.broken,
    otherwiseChanged: compared.otherwiseChanged,
    unchanged: compared.unchanged,
    changes: compared.changes.map((c) => {
      const row = byId.get(c.itemId)!;
      return {
        itemId: c.itemId,
        externalId: row.item.externalId,
        text: row.item.text,
        expectedCategories: JSON.parse(row.item.categories) as string[],
        a: answerOf(row),
        b: answerOf(byIdB.get(c.itemId)),
        direction: c.direction,
      };
    }),
  };
}

/**
 * Threshold advice from a run: per category, the lowest threshold whose precision reaches
 * `precisionTarget` (an input, 0–1; without one the project's aiPrecisionTarget), beside the
 * project's current aiThreshold.
 */
export async function evalThresholdAdvice(
  ctx: AccessContext & Pick<DomainContext, "db" | "orgId">,
  input: { projectId: string; runId: string; precisionTarget?: number },
): Promise<ThresholdAdvice> {
  await requireEveryCase(ctx);
  const project = await requireProject(ctx, input.projectId);
  const run = await requireRun(ctx, input);
  return adviseThresholds({
    runId: run.id,
    categories: runCategoryNames(run),
    items: scored(await runItemRows(ctx, run)),
    precisionTarget: input.precisionTarget ?? project.aiPrecisionTarget,
    currentThreshold: project.aiThreshold,
  });
}

// ---------------------------------------------------------------------------------------------
// The job.

/**
 * What the run's job needs besides the AI context: how long one job may work (a part of its
 * lease), and whether this is the job's last attempt (a backend still down then fails the run,
 * rather than leaving it running with no job left).
 */
export type EvalJobContext = AiContext & { budgetMs: number; lastAttempt?: boolean };

/**
 * One job of a run: answers its unanswered items in order until none is left (then the figures
 * are computed and stored: completed), the run is no longer running (cancelled), or the budget
 * is spent (the next job is enqueued). A model that is unreachable or failing throws: the job is
 * retried with backoff, the answers stored so far kept. A missing model fails the run.
 */
export async function workEvalRun(ctx: EvalJobContext, runId: string): Promise<"completed" | "continued" | "stopped"> {
  const [found] = await ctx.db.select().from(evalRuns).where(eq(evalRuns.id, runId)).limit(1);
  if (!found || (found.status !== "queued" && found.status !== "running")) return "stopped";
  const sys: DomainContext = { ...ctx, orgId: found.orgId };
  // Its project deleted, its rows going by slices: no more model calls for it.
  if (!(await isLiveProject(sys, found.projectId))) return "stopped";
  let run = found;
  if (run.status === "queued") {
    const now = ctx.clock.now();
    const [started] = await transaction(sys, () =>
      ctx.db.update(evalRuns).set({ status: "running", startedAt: now, updatedAt: now }).where(and(eq(evalRuns.id, run.id), eq(evalRuns.status, "queued"))).returning(),
    );
    if (!started) return "stopped";
    run = started;
  }
  // Runs started before policies were recorded stored no policy: they read their descriptions.
  const categories = (JSON.parse(run.categories) as RunCategory[]).map((c): RunCategory => ({ name: c.name, description: c.description, policy: c.policy ?? null }));
  const started = performance.now();
  let lastPosition = -1;
  let page: UnansweredItem[] = [];
  for (;;) {
    if (!page.length) page = await unansweredItems(ctx, run, lastPosition);
    const next = page.shift();
    if (next === undefined) return (await completeRun(sys, run)) ? "completed" : "stopped";
    lastPosition = next.position;
    if (performance.now() - started > ctx.budgetMs) {
      await transaction(sys, () => enqueueJob(sys, { orgId: run.orgId, kind: JOB_KIND.evalRun, payload: { runId: run.id }, maxAttempts: 50 }).then(() => undefined));
      return "continued";
    }
    // No status read before asking: a cancel is seen by storeAnswer's guard on the run's row,
    // which the answer to the item in flight meets, so at most that one model call follows a
    // cancel, whether the cancel came during the call or between two.
    let answer: Answer | "model_missing";
    try {
      answer = await ask(ctx, run, categories, next);
    } catch (err) {
      if (ctx.lastAttempt && err instanceof AiUnavailableError) await failRun(sys, run, `The AI backend kept failing: ${err.message}`);
      throw err;
    }
    if (answer === "model_missing") return "stopped";
    if (!(await storeAnswer(sys, run, next, answer))) return "stopped";
  }
}

/** Items read per query by a run's job: one read per page of items instead of one per item. */
const ITEM_PAGE = 32;

interface UnansweredItem {
  id: string;
  position: number;
  text: string;
}

/** The next page of the run's items after `after` that have no stored answer, in order. */
function unansweredItems(ctx: Pick<DomainContext, "db">, run: EvalRunRow, after: number): Promise<UnansweredItem[]> {
  return ctx.db
    .select({ id: evalItems.id, position: evalItems.position, text: evalItems.text })
    .from(evalItems)
    .leftJoin(evalRunItems, and(eq(evalRunItems.runId, run.id), eq(evalRunItems.position, evalItems.position)))
    .where(and(eq(evalItems.setId, run.setId), eq(evalItems.version, run.setVersion), gt(evalItems.position, after), sql`${evalRunItems.runId} is null`))
    .orderBy(asc(evalItems.position))
    .limit(ITEM_PAGE);
}

interface Answer {
  categories: string[];
  severity: Severity | null;
  confidence: number | null;
  reasoning: string | null;
  error: string | null;
  latencyMs: number;
  promptTokens: number | null;
  completionTokens: number | null;
}

/** Asks the model about one item, outside any transaction. An answer the model could not give (bad answer, timeout) is an item error. */
async function ask(ctx: EvalJobContext, run: EvalRunRow, categories: RunCategory[], item: { text: string }): Promise<Answer | "model_missing"> {
  const started = performance.now();
  try {
    const c = await classifyText(ctx, { categories, text: item.text, model: run.model });
    return { categories: c.categories, severity: c.severity, confidence: c.confidence, reasoning: c.reasoning, error: null, latencyMs: c.latencyMs, promptTokens: c.promptTokens, completionTokens: c.completionTokens };
  } catch (err) {
    if (!(err instanceof AiUnavailableError)) throw err;
    if (err.reason === "model_missing") {
      await failRun(ctx, run, err.message);
      return "model_missing";
    }
    // The item's own failure: recorded, and the run goes on (excluded from the figures).
    if (err.reason === "bad_answer" || err.reason === "timeout") {
      return { categories: [], severity: null, confidence: null, reasoning: null, error: err.message, latencyMs: Math.round(performance.now() - started), promptTokens: null, completionTokens: null };
    }
    throw err; // the backend is down: the job retries later
  }
}

/** A run that cannot go on: failed, with the reason (its answers so far kept). */
async function failRun(ctx: Pick<DomainContext, "store" | "db" | "clock">, run: EvalRunRow, error: string): Promise<void> {
  const now = ctx.clock.now();
  await transaction(ctx, async () => {
    await ctx.db.update(evalRuns).set({ status: "failed", error: error.slice(0, 2000), finishedAt: now, updatedAt: now }).where(and(eq(evalRuns.id, run.id), eq(evalRuns.status, "running")));
  });
}

/** Stores one answer in its own transaction, if the run is still running (false: it is not). */
function storeAnswer(ctx: DomainContext, run: EvalRunRow, item: { id: string; position: number }, a: Answer): Promise<boolean> {
  return rowLockedTransaction(ctx, async () => {
    const now = ctx.clock.now();
    // The run's row first: on PostgreSQL a cancel waits for this answer, or this answer for the cancel.
    const [running] = await ctx.db.update(evalRuns).set({ updatedAt: now }).where(and(eq(evalRuns.id, run.id), eq(evalRuns.status, "running"))).returning({ id: evalRuns.id });
    if (!running) return false;
    const inserted = await ctx.db
      .insert(evalRunItems)
      .values({
        runId: run.id,
        itemId: item.id,
        position: item.position,
        categories: JSON.stringify(a.categories),
        severity: a.severity,
        confidence: a.confidence,
        reasoning: a.reasoning,
        error: a.error,
        latencyMs: a.latencyMs,
        promptTokens: a.promptTokens,
        completionTokens: a.completionTokens,
        createdAt: now,
      })
      .onConflictDoNothing()
      .returning({ runId: evalRunItems.runId });
    if (inserted.length > 0) await ctx.db.update(evalRuns).set({ itemsDone: sql`${evalRuns.itemsDone} + 1` }).where(eq(evalRuns.id, run.id));
    return true;
  });
}

/** Every item answered: the figures are computed and stored, the run completed (false: it was cancelled meanwhile). */
function completeRun(ctx: DomainContext, run: EvalRunRow): Promise<boolean> {
  return transaction(ctx, async () => {
    const now = ctx.clock.now();
    const [current] = await ctx.db.update(evalRuns).set({ updatedAt: now }).where(and(eq(evalRuns.id, run.id), eq(evalRuns.status, "running"))).returning();
    if (!current) return false;
    const metrics = await runMetrics(ctx, current);
    await ctx.db.update(evalRuns).set({ status: "completed", finishedAt: now, metrics: JSON.stringify(metrics) }).where(eq(evalRuns.id, run.id));
    return true;
  });
}
