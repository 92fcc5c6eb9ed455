import { desc, eq } from "drizzle-orm";
import { AiUnavailableError, classify, type Classification } from "../ai/classifier.ts";
import type { Config } from "../config.ts";
import { transaction, type Db } from "../db/client.ts";
import { contentAnalyses, reports } from "../db/schema.ts";
import { recordAudit, systemActor, type Actor } from "./audit.ts";
import { moveOpenCaseToReview, raiseCaseBucket } from "./cases.ts";
import { listCategories, type CategoryRow } from "./categories.ts";
import { categoryKey } from "./category-key.ts";
import { iso, type Clock } from "./clock.ts";
import { badRequest } from "./errors.ts";
import { newId } from "./ids.ts";
import { enqueueLinkScans } from "./linkscan/scan.ts";
import { log } from "../log.ts";
import { getOrganization } from "./organizations.ts";
import { requireProject, type Project } from "./projects.ts";
import { createReport } from "./reports.ts";
import { aiSettingsOf, assertPlanAllowsAi } from "./settings.ts";
import type { Severity } from "./severity.ts";

/** What an analysis found, as the analyze route answers it. */
export interface AnalysisResult {
  categories: string[];
  severity: Severity;
  confidence: number;
  reasoning: string;
}

export interface AiDeps {
  db: Db;
  clock: Clock;
  config: Config;
  /** Told the duration of every model call and whether it succeeded (metrics). */
  onAiCall?: (ms: number, ok: boolean) => void;
}

/**
 * Runs the classifier with the project's categories and the configured backend. A failure is
 * logged in full for the operator; the caller gets a message without the backend's address
 * (API clients of one organization have no business learning the installation's network).
 */
export async function classifyText(deps: AiDeps, categories: readonly CategoryRow[], text: string): Promise<Classification> {
  const started = performance.now();
  try {
    const result = await classify({
      host: deps.config.ollamaHost,
      model: deps.config.aiModel,
      timeoutMs: deps.config.aiTimeoutMs,
      window: deps.config.aiWindow,
      categories: categories.map((c) => ({ name: c.name, description: c.description })),
      text,
    });
    deps.onAiCall?.(performance.now() - started, true);
    return result;
  } catch (err) {
    deps.onAiCall?.(performance.now() - started, false);
    if (!(err instanceof AiUnavailableError)) throw err;
    log.warn("AI backend call failed", { reason: err.reason, error: err.message });
    throw new AiUnavailableError(err.reason, CLIENT_MESSAGE[err.reason](deps.config.aiModel), err);
  }
}

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
function reasonFor(a: AnalysisResult, categories: readonly CategoryRow[]): string | null {
  return a.categories[0] ?? categories.find((c) => c.nameKey === categoryKey("other"))?.name ?? null;
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
  sourceText: string;
  reportId: string | null;
  externalId?: string | null;
  contentType?: string | null;
  url?: string | null;
  actor: Actor;
}

/** Stores an analysis and its AI_ANALYZED audit event. Call inside the caller's transaction. */
export function storeAnalysis(db: Db, clock: Clock, s: StoreInput): string {
  const id = newId();
  const c = s.classification;
  db.insert(contentAnalyses)
    .values({
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
      latencyMs: c.latencyMs,
      createdAt: clock.now(),
    })
    .run();
  recordAudit(db, clock, {
    orgId: s.project.orgId,
    projectId: s.project.id,
    actor: s.actor,
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
      confidenceSource: c.confidenceSource,
      reportId: s.reportId,
      url: s.url ?? null,
    },
  });
  return id;
}

export interface AnalyzeInput {
  orgId: string;
  projectId: string;
  actor: Actor;
  content: string;
  externalId?: string | null;
  contentType?: string | null;
}

/**
 * The analyze route: classifies the text, stores the analysis, and files an automated report
 * when the threshold is met. The model is asked before anything is written, so a failing
 * backend (503) leaves nothing half-done.
 */
export async function analyzeContent(
  deps: AiDeps,
  input: AnalyzeInput,
): Promise<{ analysis: AnalysisResult; reportCreated: boolean; reportId: string | null; analysisId: string; project: Project }> {
  const project = checkAnalyzable(deps.db, input.orgId, input.projectId);
  const categories = listCategories(deps.db, project.id);
  if (categories.length === 0) throw badRequest("No report categories are configured for this project");
  const classification = await classifyText(deps, categories, input.content);
  const analysis = pick(classification);

  return transaction(deps.db, () => {
    const fresh = requireProject(deps.db, input.orgId, input.projectId);
    const reportId = fileIfWarranted(deps, fresh, categories, analysis, input.actor, {
      content: input.content,
      externalId: input.externalId ?? null,
      contentType: input.contentType ?? null,
    });
    const analysisId = storeAnalysis(deps.db, deps.clock, {
      project: fresh,
      source: "content",
      classification,
      sourceText: input.content,
      reportId,
      externalId: input.externalId,
      contentType: input.contentType,
      actor: input.actor,
    });
    enqueueLinkScans(deps.db, deps.clock.now(), fresh, input.content);
    return { analysis, reportCreated: reportId !== null, reportId, analysisId, project: fresh };
  });
}

/** Files the automated report an analysis calls for (rules 1–2), returning its id, or null. */
export function fileIfWarranted(
  deps: AiDeps,
  project: Project,
  categories: readonly CategoryRow[],
  analysis: AnalysisResult,
  actor: Actor,
  target: { content: string; externalId: string | null; contentType: string | null; url?: string },
): string | null {
  if (!meetsThreshold(analysis, project.aiThreshold)) return null;
  const reason = reasonFor(analysis, categories);
  if (!reason) return null;
  const created = createReport(deps.db, deps.clock, {
    project,
    actor,
    target: {
      contentExternalId: target.externalId ?? target.url ?? null,
      contentType: target.contentType ?? (target.url ? "url" : null),
      content: target.content,
    },
    reasonNames: [reason],
    description: describeAnalysis(analysis, target.content, target.url),
    automated: true,
    // An automated report carries its analysis already: no enrichment job for it.
    enrich: false,
  });
  return created.report.id;
}

/** The project, if AI analysis may run on it: 403 on the free plan, 400 when switched off. */
export function checkAnalyzable(db: Db, orgId: string, projectId: string): Project {
  const project = requireProject(db, orgId, projectId);
  assertPlanAllowsAi(getOrganization(db, orgId));
  if (!aiSettingsOf(project).aiEnabled) throw badRequest("Content analysis is not enabled for this project (turn on aiEnabled in its settings)");
  return project;
}

const pick = (c: Classification): AnalysisResult => ({
  categories: c.categories,
  severity: c.severity,
  confidence: c.confidence,
  reasoning: c.reasoning,
});

export interface AnalysisView {
  id: string;
  source: string;
  categories: string[];
  severity: Severity;
  confidence: number;
  reasoning: string;
  reportId: string | null;
  externalId: string | null;
  contentType: string | null;
  url: string | null;
  sourceText: string;
  model: string;
  createdAt: string;
}

/** The 50 most recent analyses of a project. */
export function recentAnalyses(db: Db, projectId: string, limit = 50): AnalysisView[] {
  return db
    .select()
    .from(contentAnalyses)
    .where(eq(contentAnalyses.projectId, projectId))
    .orderBy(desc(contentAnalyses.id))
    .limit(limit)
    .all()
    .map(toAnalysisView);
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
  createdAt: iso(a.createdAt),
});

// ---------------------------------------------------------------------------------------------
// Enrichment of reports (a background job).

/**
 * Classifies a report's description and submitted content and attaches the result. Idempotent:
 * a report that already carries an analysis is left alone, so a job that runs twice (its first
 * worker died after committing) still leaves exactly one set of AI fields.
 *
 * Rule: with confidence ≥ the project's threshold and severity HIGH or CRITICAL, an OPEN report
 * moves to IN_REVIEW (its case too); CRITICAL also raises the case to the emergency bucket.
 */
export async function enrichReport(deps: AiDeps, reportId: string): Promise<"enriched" | "skipped"> {
  const report = deps.db.select().from(reports).where(eq(reports.id, reportId)).get();
  if (!report || report.aiAnalyzedAt != null) return "skipped";
  let project: Project;
  try {
    project = checkAnalyzable(deps.db, report.orgId, report.projectId);
  } catch {
    return "skipped"; // AI switched off (or plan changed) since the report was filed
  }
  const text = [report.description, report.content].filter((t): t is string => !!t && t.trim() !== "").join("\n\n");
  const categories = listCategories(deps.db, project.id);
  if (!text || categories.length === 0) return "skipped";
  const classification = await classifyText(deps, categories, text); // AiUnavailableError → the job retries

  return transaction(deps.db, () => {
    const current = deps.db.select().from(reports).where(eq(reports.id, reportId)).get();
    if (!current || current.aiAnalyzedAt != null) return "skipped";
    const now = deps.clock.now();
    const analysis = pick(classification);
    const escalates = analysis.confidence >= project.aiThreshold && (analysis.severity === "HIGH" || analysis.severity === "CRITICAL");
    const moves = escalates && current.status === "OPEN";
    deps.db
      .update(reports)
      .set({
        aiSeverity: analysis.severity,
        aiCategories: JSON.stringify(analysis.categories),
        aiConfidence: analysis.confidence,
        aiReasoning: analysis.reasoning,
        aiAnalyzedAt: now,
        updatedAt: now,
        ...(moves ? { status: "IN_REVIEW" } : {}),
      })
      .where(eq(reports.id, reportId))
      .run();
    storeAnalysis(deps.db, deps.clock, { project, source: "enrichment", classification, sourceText: text, reportId, actor: systemActor });
    if (moves) {
      recordAudit(deps.db, deps.clock, {
        orgId: current.orgId, projectId: current.projectId, actor: systemActor, action: "REPORT_STATUS_CHANGED",
        entityType: "report", entityId: reportId, before: { status: "OPEN" }, after: { status: "IN_REVIEW" },
        data: { action: "enrich", severity: analysis.severity, confidence: analysis.confidence },
      });
      moveOpenCaseToReview(deps.db, deps.clock, systemActor, current.caseId);
    }
    if (escalates && analysis.severity === "CRITICAL") raiseCaseBucket(deps.db, deps.clock, systemActor, current.caseId, "emergency");
    enqueueLinkScans(deps.db, now, project, text);
    return "enriched";
  });
}

export { AiUnavailableError };
