import { and, desc, eq } from "drizzle-orm";
import { AiUnavailableError, classify, listModels, type Classification } from "../../ai/classifier.ts";
import type { PromptCategory } from "../../ai/prompt.ts";
import type { Config } from "../../config.ts";
import { contentAnalyses } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { categoryKey } from "../categories/category-key.ts";
import { iso } from "../core/clock.ts";
import { rowLockedTransaction, type DomainContext } from "../core/context.ts";
import { badRequest } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { upsertIdentity } from "../identities/identities.ts";
import { enqueueLinkScans } from "./scan-job.ts";
import { policiesForClassification } from "./policies.ts";
import { log } from "../../log.ts";
import { answerEnded, answerStarted } from "./model-meter.ts";
import { getOrganization } from "../accounts/organizations.ts";
import { requireProject, type Project } from "../accounts/projects.ts";
import { createReport, type IdentityRef } from "../intake/reports.ts";
import { aiSettingsOf, assertPlanAllowsAi } from "../accounts/settings.ts";
import type { Severity } from "../cases/severity.ts";
import type { AnalysisResult, AnalysisView } from "../views/analysis.ts";
import { modelWithTag, type InstalledModels } from "../views/evaluation.ts";
import { isOfWorkableCase, type AccessContext } from "../access/queue-access.ts";

export type { AnalysisResult, AnalysisView } from "../views/analysis.ts";

/** What asking the AI model needs besides the domain context. */
export interface AiDeps {
  config: Config;
  /** Told the duration of every model call and whether it succeeded (metrics). */
  onAiCall?: (ms: number, ok: boolean) => void;
}

/** The context of the domain functions that ask the AI model. */
export type AiContext = DomainContext & AiDeps;

/**
 * Runs the classifier with the categories given (policiesForClassification: the project's, with
 * their policy texts) and the configured backend, with the configured model unless another is
 * named (a shadow analysis, an evaluation run). A failure is
 * logged in full for the operator; the caller gets a message without the backend's address
 * (API clients of one organization have no business learning the installation's network).
 *
 * A network call: never inside a transaction (it would hold the write lock for as long as the
 * model takes). Callers read what they need, classify, then write in a transaction.
 */
export async function classifyText(
  ctx: Pick<AiContext, "store" | "config" | "onAiCall">,
  input: { categories: readonly PromptCategory[]; text: string; model?: string },
): Promise<Classification> {
  if (ctx.store.inTransaction()) throw new Error("classifyText: the AI model is never asked inside a transaction");
  const started = performance.now();
  const model = input.model ?? ctx.config.aiModel;
  answerStarted(ctx.store);
  try {
    const result = await classify({
      host: ctx.config.ollamaHost,
      model,
      timeoutMs: ctx.config.aiTimeoutMs,
      window: ctx.config.aiWindow,
      categories: input.categories.map((c) => ({ name: c.name, description: c.description, policy: c.policy ?? null })),
      text: input.text,
    });
    const ms = performance.now() - started;
    answerEnded(ctx.store, { ms, ok: true, now: Date.now() });
    ctx.onAiCall?.(ms, true);
    return result;
  } catch (err) {
    const ms = performance.now() - started;
    answerEnded(ctx.store, { ms, ok: false, now: Date.now() });
    ctx.onAiCall?.(ms, false);
    if (!(err instanceof AiUnavailableError)) throw err;
    log.warn("AI backend call failed", { reason: err.reason, error: err.message });
    throw new AiUnavailableError(err.reason, CLIENT_MESSAGE[err.reason](model), err);
  }
}

/**
 * The models the AI backend has installed, and whether the configured one is among them (the
 * evaluation dialog's choice). A network call, like classifyText: never inside a transaction. A
 * backend that cannot be reached (or answers oddly) is an AiUnavailableError (503) whose message
 * says so without its address, which is logged for the operator.
 */
export async function installedModels(ctx: Pick<AiContext, "store" | "config">): Promise<InstalledModels> {
  if (ctx.store.inTransaction()) throw new Error("installedModels: the AI backend is never asked inside a transaction");
  const defaultModel = ctx.config.aiModel;
  try {
    const models = await listModels({ host: ctx.config.ollamaHost, timeoutMs: Math.min(ctx.config.aiTimeoutMs, MODEL_LIST_TIMEOUT_MS) });
    return { defaultModel, defaultInstalled: models.some((m) => modelWithTag(m.name) === modelWithTag(defaultModel)), models };
  } catch (err) {
    if (!(err instanceof AiUnavailableError)) throw err;
    log.warn("AI backend: listing its models failed", { reason: err.reason, error: err.message });
    throw new AiUnavailableError(err.reason, `The AI backend (Ollama) ${LIST_FAILURE[err.reason]}, so its installed models could not be listed; try again later`, err);
  }
}
const LIST_FAILURE: Record<AiUnavailableError["reason"], string> = {
  unreachable: "cannot be reached",
  timeout: "did not answer in time",
  model_missing: "failed",
  bad_answer: "answered oddly",
  ollama_error: "failed",
};
/** Listing models is quick when the backend is up: a dialog waits for it no longer than this. */
const MODEL_LIST_TIMEOUT_MS = 5_000;

const CLIENT_MESSAGE: Record<AiUnavailableError["reason"], (model: string) => string> = {
  unreachable: () => "The AI backend is unreachable; try again later",
  timeout: () => "The AI backend did not answer in time; try again later",
  model_missing: (model) => `The AI model "${model}" is not installed on the AI backend; the operator must run \`ollama pull ${model}\``,
  bad_answer: () => "The AI model gave no usable answer; try again later",
  ollama_error: () => "The AI backend failed; try again later",
};

/**
 * The rule for filing a report from an analysis (spec, Analyze content, rules 1–2): the
 * confidence reaches the project's threshold and the severity is not LOW.
 */
export const meetsThreshold = (a: AnalysisResult, threshold: number): boolean => a.severity !== "LOW" && a.confidence >= threshold;

/** The category an automatic report names: the first detected one, else "other" if the project has it. */
function reasonFor(a: AnalysisResult, categories: readonly { name: string }[]): string | null {
  return a.categories[0] ?? categories.find((c) => categoryKey(c.name) === categoryKey("other"))?.name ?? null;
}

const EXCERPT = 2000;

/** The description of an automatic report: what was found, how sure, why, and what was said. */
export function describeAnalysis(a: AnalysisResult, sourceText: string, url?: string): string {
  const excerpt = sourceText.length > EXCERPT ? `${sourceText.slice(0, EXCERPT)}… [${sourceText.length - EXCERPT} more characters]` : sourceText;
  return [
    `Automated AI analysis: severity ${a.severity}, confidence ${a.confidence}%` + (a.categories.length ? `, categories ${a.categories.join(", ")}.` : "."),
    `Reasoning: ${a.reasoning}`,
    url ? `Source: ${url}` : null,
    "",
    "Analyzed text:",
    excerpt,
  ]
    .filter((l): l is string => l !== null)
    .join("\n");
}

interface StoreInput {
  project: Project;
  source: "content" | "enrichment" | "link_scan";
  classification: Classification;
  /** The policy version each category used (policiesForClassification). */
  policyVersions: Record<string, number>;
  sourceText: string;
  reportId: string | null;
  externalId?: string | null;
  contentType?: string | null;
  url?: string | null;
}

/** Stores an analysis and its AI_ANALYZED audit event (by the context's actor). */
export function storeAnalysis(ctx: DomainContext, s: StoreInput): Promise<string> {
  const id = newId();
  const c = s.classification;
  return rowLockedTransaction(ctx, async () => {
    await ctx.db.insert(contentAnalyses).values({
      id,
      orgId: s.project.orgId,
      projectId: s.project.id,
      source: s.source,
      reportId: s.reportId,
      externalId: s.externalId ?? null,
      contentType: s.contentType ?? null,
      url: s.url ?? null,
      sourceText: s.sourceText,
      categories: JSON.stringify(c.categories),
      severity: c.severity,
      confidence: c.confidence,
      reasoning: c.reasoning,
      model: c.model,
      promptVersion: c.promptVersion,
      policyVersions: JSON.stringify(s.policyVersions),
      latencyMs: c.latencyMs,
      confidenceSource: c.confidenceSource,
      createdAt: ctx.clock.now(),
    });
    await recordAudit(ctx, {
      projectId: s.project.id,
      action: "AI_ANALYZED",
      entityType: s.reportId && s.source === "enrichment" ? "report" : "content_analysis",
      entityId: s.reportId && s.source === "enrichment" ? s.reportId : id,
      data: {
        analysisId: id,
        source: s.source,
        severity: c.severity,
        confidence: c.confidence,
        categories: c.categories,
        reasoning: c.reasoning,
        model: c.model,
        promptVersion: c.promptVersion,
        policyVersions: s.policyVersions,
        confidenceSource: c.confidenceSource,
        reportId: s.reportId,
        url: s.url ?? null,
      },
    });
    return id;
  });
}

/** Content to analyze for the context's organization, by the context's actor. */
export interface AnalyzeInput {
  projectId: string;
  content: string;
  externalId?: string | null;
  contentType?: string | null;
  /** Who wrote the content: the subject of a report filed for it or for a link in it. */
  author?: IdentityRef | null;
}

/**
 * The analyze route: classifies the text, stores the analysis, and files an automated report
 * when the threshold is met. The model is asked before anything is written (and outside any
 * transaction), so a failing backend (503) leaves nothing half-done.
 */
export async function analyzeContent(
  ctx: AiContext,
  input: AnalyzeInput,
): Promise<{ analysis: AnalysisResult; reportCreated: boolean; reportId: string | null; analysisId: string; project: Project }> {
  const project = await checkAnalyzable(ctx, input.projectId);
  const { categories, policyVersions } = await policiesForClassification(ctx, { projectId: project.id, selection: "live" });
  if (categories.length === 0) throw badRequest("No report categories are configured for this project");
  const classification = await classifyText(ctx, { categories, text: input.content });
  const analysis = pick(classification);

  return rowLockedTransaction(ctx, async () => {
    const fresh = await requireProject(ctx, input.projectId);
    // The author is upserted like a report's subject (their display fields kept for the reports
    // this content or its links may file).
    if (input.author) await upsertIdentity(ctx, { projectId: fresh.id, ...input.author, seenAt: ctx.clock.now(), now: ctx.clock.now() });
    const reportId = await fileIfWarranted(ctx, {
      project: fresh,
      categories,
      analysis,
      target: { content: input.content, externalId: input.externalId ?? null, contentType: input.contentType ?? null },
      subject: input.author ?? null,
    });
    const analysisId = await storeAnalysis(ctx, {
      project: fresh,
      source: "content",
      classification,
      policyVersions,
      sourceText: input.content,
      reportId,
      externalId: input.externalId,
      contentType: input.contentType,
    });
    const poster = input.author ? { type: input.author.type, externalId: input.author.externalId } : null;
    await enqueueLinkScans(ctx, { project: fresh, text: input.content, poster });
    return { analysis, reportCreated: reportId !== null, reportId, analysisId, project: fresh };
  });
}

/**
 * Files the automated report an analysis calls for (rules 1–2), by the context's actor,
 * returning its id, or null.
 */
export async function fileIfWarranted(
  ctx: DomainContext,
  input: {
    project: Project;
    /** The project's categories (the automatic report's reason falls back on "other"). */
    categories: readonly { name: string }[];
    analysis: AnalysisResult;
    target: { content: string; externalId: string | null; contentType: string | null; url?: string };
    /** Who posted the content, when known: the report's subject. */
    subject?: IdentityRef | null;
  },
): Promise<string | null> {
  const { project, analysis, target } = input;
  if (!meetsThreshold(analysis, project.aiThreshold)) return null;
  const reason = reasonFor(analysis, input.categories);
  if (!reason) return null;
  const created = await createReport(ctx, {
    project,
    target: {
      contentExternalId: target.externalId ?? target.url ?? null,
      contentType: target.contentType ?? (target.url ? "url" : null),
      content: target.content,
    },
    reasonNames: [reason],
    subject: input.subject ?? null,
    description: describeAnalysis(analysis, target.content, target.url),
    automated: true,
    // An automated report carries its analysis already: no enrichment job for it.
    enrich: false,
  });
  return created.report.id;
}

/** The project, if AI analysis may run on it: 403 on the free plan, 400 when switched off. */
export async function checkAnalyzable(ctx: Pick<DomainContext, "db" | "orgId">, projectId: string): Promise<Project> {
  const project = await requireProject(ctx, projectId);
  assertPlanAllowsAi(await getOrganization(ctx));
  if (!aiSettingsOf(project).aiEnabled) throw badRequest("Content analysis is not enabled for this project (turn on aiEnabled in its settings)");
  return project;
}

const pick = (c: Classification): AnalysisResult => ({
  categories: c.categories,
  severity: c.severity,
  confidence: c.confidence,
  reasoning: c.reasoning,
});

/** The 50 (`limit`) most recent analyses of a project that the caller may see (those of reports: queue access). */
export async function recentAnalyses(ctx: AccessContext, input: { projectId: string; limit?: number }): Promise<AnalysisView[]> {
  const rows = await ctx.db
    .select()
    .from(contentAnalyses)
    .where(and(eq(contentAnalyses.projectId, input.projectId), await isOfWorkableCase(ctx, "report", contentAnalyses.reportId, { whenNull: "kept" })))
    .orderBy(desc(contentAnalyses.id))
    .limit(input.limit ?? 50);
  return rows.map(toAnalysisView);
}

export const toAnalysisView = (a: typeof contentAnalyses.$inferSelect): AnalysisView => ({
  id: a.id,
  source: a.source,
  categories: JSON.parse(a.categories) as string[],
  severity: a.severity as Severity,
  confidence: a.confidence,
  reasoning: a.reasoning,
  reportId: a.reportId,
  externalId: a.externalId,
  contentType: a.contentType,
  url: a.url,
  sourceText: a.sourceText,
  model: a.model,
  promptVersion: a.promptVersion,
  policyVersions: a.policyVersions === null ? null : (JSON.parse(a.policyVersions) as Record<string, number>),
  reusedFrom: a.reusedAnalysisId !== null && a.reusedAnalysisAt !== null ? { analysisId: a.reusedAnalysisId, analyzedAt: iso(a.reusedAnalysisAt) } : null,
  createdAt: iso(a.createdAt),
});

export { AiUnavailableError };
