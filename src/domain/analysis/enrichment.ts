/**
 * AI enrichment of reports (a background job, `report.enrich`; docs/ai.md, "Automatic reports,
 * enrichment and the analysis history"): a report's description and content classified, the
 * answer attached to the report, and its consequences (the report and its case into review, the
 * emergency bucket, the report.enriched rules, link scans, a shadow analysis).
 *
 * One analysis per distinct content (./content-key.ts): a report whose content was analysed by
 * the same classifier within FLAGSTAFF_AI_REUSE_WINDOW_MS reuses that analysis (no model call),
 * and so does one whose content is being analysed right now by another job of this process.
 * The reuse is recorded on the report's own analysis row (`reusedAnalysisId`, `reusedAnalysisAt`)
 * and in its AI_ANALYZED event.
 *
 * What a job costs PostgreSQL (test/enrichment-round-trips.test.ts counts it through
 * scripts/pg-proxy.ts): one read (the report with its project, its organization's plan and the
 * newest analysis of its content, in one statement), then, after the model (outside any
 * transaction), one transaction: BEGIN, the report and its case locked and read, and every write
 * (the report's fields, the analysis, the status moves through the workflow engine, the bucket,
 * the audit events) left to travel with the COMMIT. The categories the model is sent are kept in
 * memory while the project's categoriesVersion says they are current.
 */
import { aliasedTable, and, desc, eq, getTableColumns, gte, isNotNull, sql } from "drizzle-orm";
import type { Classification } from "../../ai/classifier.ts";
import type { PromptCategory } from "../../ai/prompt.ts";
import { param, statements } from "../../db/prepared.ts";
import { contentAnalyses, identities, organizations, projects, reports } from "../../db/schema.ts";
import { TransactionConflict } from "../../db/store.ts";
import type { Store } from "../../db/store.ts";
import { recordAudit, systemActor } from "../core/audit.ts";
import { rowLockedTransaction } from "../core/context.ts";
import { newId } from "../core/ids.ts";
import { raiseLockedCaseBucket } from "../cases/cases.ts";
import { lockReportAndCase } from "../cases/case-lock.ts";
import { searchDocument } from "../plumbing/search-text.ts";
import type { Severity } from "../cases/severity.ts";
import { liveProject, type Project } from "../accounts/projects.ts";
import { applyTransition } from "../review/workflow-engine.ts";
import { runRules } from "../rules/rule-engine.ts";
import { classifyText, type AiContext } from "./analysis.ts";
import { classifierKeyOf, contentKeyOf } from "../intake/content-key.ts";
import { extractUrls } from "./extract-urls.ts";
import { countEnrichments } from "./model-meter.ts";
import { hasShadowPolicies, policiesForClassification } from "./policies.ts";
import { enqueueLinkScans } from "./scan-job.ts";
import { enqueueShadowAnalysis } from "./shadow-job.ts";

type ReportRow = typeof reports.$inferSelect;
type AnalysisRow = typeof contentAnalyses.$inferSelect;

/** What a report's enrichment comes to: analysed by the model, given an earlier analysis of its content, or nothing to do. */
export type EnrichmentResult = "enriched" | "reused" | "skipped";

// ---------------------------------------------------------------------------------------------
// The classifier of a project, kept in memory.

/** What the classifier is sent for a project (its live policies), and what it is. */
interface Classifier {
  /** projects.categoriesVersion it was read at. */
  version: number;
  model: string;
  categories: PromptCategory[];
  policyVersions: Record<string, number>;
  /** classifierKeyOf: the model, the prompt and the categories as sent. */
  key: string;
  /** A category has a shadow policy version (then a shadow analysis follows each live one). */
  hasShadow: boolean;
}

const classifiers = new WeakMap<Store, Map<string, Classifier>>();

/**
 * The project's classifier: from memory while the project's categoriesVersion (read with the
 * report) is the one it was read at, for the same model. Every change of a category, or of a
 * policy version's status, bumps that version in its own transaction (categoriesChanged), on any
 * instance: the next enrichment reads them again.
 */
async function classifierOf(ctx: AiContext, project: Project): Promise<Classifier> {
  let byProject = classifiers.get(ctx.store);
  if (!byProject) classifiers.set(ctx.store, (byProject = new Map()));
  const model = ctx.config.aiModel;
  const cached = byProject.get(project.id);
  if (cached && cached.version === project.categoriesVersion && cached.model === model) return cached;
  const [{ categories, policyVersions }, hasShadow] = await Promise.all([
    policiesForClassification(ctx, { projectId: project.id, selection: "live" }),
    hasShadowPolicies(ctx, project.id),
  ]);
  const fresh: Classifier = { version: project.categoriesVersion, model, categories, policyVersions, key: classifierKeyOf({ model, categories, policyVersions }), hasShadow };
  byProject.set(project.id, fresh);
  return fresh;
}

// ---------------------------------------------------------------------------------------------
// Reading what a job needs, in one statement.

const newest = aliasedTable(contentAnalyses, "newest");

const enrichmentStatements = statements((db) => ({
  /**
   * The report, its project, its organization's plan, and the newest analysis of its project
   * made by the model for the same content key since `since` (a range of content_analyses_content_idx).
   */
  read: db
    .select({ report: reports, project: projects, plan: organizations.plan, prior: contentAnalyses })
    .from(reports)
    // A deleted project's reports are not enriched while its rows are deleted (project-deletion.ts): as if gone.
    .innerJoin(projects, and(eq(projects.id, reports.projectId), liveProject()))
    .innerJoin(organizations, eq(organizations.id, reports.orgId))
    .leftJoin(
      contentAnalyses,
      eq(
        contentAnalyses.id,
        sql`(${db
          .select({ id: newest.id })
          .from(newest)
          .where(and(eq(newest.projectId, reports.projectId), isNotNull(newest.contentKey), eq(newest.contentKey, reports.contentKey), gte(newest.createdAt, sql.placeholder("since"))))
          .orderBy(desc(newest.createdAt))
          .limit(1)})`,
      ),
    )
    .where(eq(reports.id, sql.placeholder("reportId")))
    .prepare(),
  /** The newest analysis of a content key (a report of an earlier release, which has none stored). */
  newestOf: db
    .select()
    .from(contentAnalyses)
    .where(and(eq(contentAnalyses.projectId, sql.placeholder("projectId")), isNotNull(contentAnalyses.contentKey), eq(contentAnalyses.contentKey, sql.placeholder("contentKey")), gte(contentAnalyses.createdAt, sql.placeholder("since"))))
    .orderBy(desc(contentAnalyses.createdAt))
    .limit(1)
    .prepare(),
  setAi: db
    .update(reports)
    .set({
      aiSeverity: param("aiSeverity"),
      aiCategories: param("aiCategories"),
      aiConfidence: param("aiConfidence"),
      aiReasoning: param("aiReasoning"),
      aiAnalyzedAt: param("aiAnalyzedAt"),
      updatedAt: param("updatedAt"),
      searchText: param("searchText"),
    })
    .where(eq(reports.id, sql.placeholder("id")))
    .prepare(),
  insertAnalysis: db
    .insert(contentAnalyses)
    // Every column, each from the placeholder of its own name: run it with a whole row.
    .values(Object.fromEntries(Object.keys(getTableColumns(contentAnalyses)).map((k) => [k, param(k)])) as unknown as typeof contentAnalyses.$inferInsert)
    .prepare(),
}));

// ---------------------------------------------------------------------------------------------
// Analyses of this process in flight, by content: a second job of the same content waits for it.

/** The analysis a job stored for a content (null: it stored none, the waiting jobs ask the model themselves). */
interface Made {
  analysis: AnalysisRow;
}
const inFlight = new WeakMap<Store, Map<string, Promise<Made | null>>>();

function inFlightOf(store: Store): Map<string, Promise<Made | null>> {
  let m = inFlight.get(store);
  if (!m) inFlight.set(store, (m = new Map()));
  return m;
}

// ---------------------------------------------------------------------------------------------

/**
 * Enriches a report: reuses the newest analysis of its content by the same classifier within
 * the reuse window, else classifies its description and submitted content, and attaches the
 * result. Idempotent: a report that already carries an analysis is left alone, so a job that runs
 * twice (its first worker died after committing) still leaves exactly one set of AI fields.
 *
 * Rule: with confidence ≥ the project's threshold and severity HIGH or CRITICAL, an OPEN report
 * moves to IN_REVIEW (its case too); CRITICAL also raises the case to the emergency bucket. A
 * reused analysis has the same consequences for the report as a new one (it is the same answer).
 *
 * Flagstaff itself acts (the system actor), for the report's organization, whatever the
 * context's actor and organization. The model is asked between two database steps, outside
 * any transaction.
 */
export async function enrichReport(ctx: AiContext, reportId: string): Promise<EnrichmentResult> {
  const windowMs = ctx.config.aiReuseWindowMs;
  const since = ctx.clock.now() - windowMs;
  const [read] = await enrichmentStatements(ctx.db).read.execute({ reportId, since });
  if (!read || read.report.aiAnalyzedAt != null) return "skipped";
  const { report, project } = read;
  const sys: AiContext = { ...ctx, orgId: report.orgId, actor: systemActor };
  // AI switched off (or the plan changed) since the report was filed.
  if (project.aiEnabled !== 1 || read.plan === "free") return "skipped";
  const text = [report.description, report.content].filter((t): t is string => !!t && t.trim() !== "").join("\n\n");
  const classifier = await classifierOf(sys, project);
  if (!text || classifier.categories.length === 0) return "skipped";

  const contentKey = report.contentKey ?? contentKeyOf({ description: report.description, content: report.content });
  let prior: AnalysisRow | null = read.prior;
  if (report.contentKey === null && contentKey !== null && windowMs > 0) {
    [prior = null] = await enrichmentStatements(sys.db).newestOf.execute({ projectId: project.id, contentKey, since });
  }
  if (windowMs <= 0 || (prior && prior.classifierKey !== classifier.key)) prior = null;
  if (prior) return attach(sys, { reportId, project, classifier, text, contentKey, reused: prior });

  // Being analysed by another job of this process: wait for its answer rather than ask again.
  const flights = inFlightOf(ctx.store);
  const flightKey = contentKey === null || windowMs <= 0 ? null : `${project.id}\u0000${contentKey}\u0000${classifier.key}`;
  const flying = flightKey === null ? undefined : flights.get(flightKey);
  if (flying) {
    const made = await flying.catch(() => null);
    if (made) return attach(sys, { reportId, project, classifier, text, contentKey, reused: made.analysis });
  }

  let land: (made: Made | null) => void = () => {};
  if (flightKey !== null && !flights.has(flightKey)) {
    const flight = new Promise<Made | null>((resolve) => (land = resolve));
    flights.set(flightKey, flight);
    void flight.finally(() => {
      if (flights.get(flightKey) === flight) flights.delete(flightKey);
    });
  }
  let made: Made | null = null;
  try {
    const classification = await classifyText(sys, { categories: classifier.categories, text }); // AiUnavailableError → the job retries
    const outcome = await attach(sys, { reportId, project, classifier, text, contentKey, classification, onStored: (analysis) => (made = { analysis }) });
    return outcome;
  } finally {
    land(made);
  }
}

interface AttachInput {
  reportId: string;
  project: Project;
  classifier: Classifier;
  text: string;
  contentKey: string | null;
  /** The model's answer for this report… */
  classification?: Classification;
  /** …or the earlier analysis of the same content it reuses. */
  reused?: AnalysisRow;
  /** Told the analysis row once it is committed (a model's answer: the jobs waiting for it reuse it). */
  onStored?: (analysis: AnalysisRow) => void;
}

/** The transaction that attaches an answer to the report, with everything that follows from it. */
async function attach(sys: AiContext, input: AttachInput): Promise<EnrichmentResult> {
  const { project, reused, classification } = input;
  const now = sys.clock.now();
  const id = newId();
  const answer = reused
    ? { categories: JSON.parse(reused.categories) as string[], severity: reused.severity as Severity, confidence: reused.confidence, reasoning: reused.reasoning }
    : { categories: classification!.categories, severity: classification!.severity, confidence: classification!.confidence, reasoning: classification!.reasoning };
  const row: AnalysisRow = reused
    ? {
        ...reused,
        id,
        source: "enrichment",
        reportId: input.reportId,
        externalId: null,
        contentType: null,
        url: null,
        sourceText: input.text,
        latencyMs: 0,
        // Only the analysis the model made is found by content: this row points to it.
        contentKey: null,
        classifierKey: null,
        reusedAnalysisId: reused.reusedAnalysisId ?? reused.id,
        reusedAnalysisAt: reused.reusedAnalysisAt ?? reused.createdAt,
        createdAt: now,
      }
    : {
        id,
        orgId: project.orgId,
        projectId: project.id,
        source: "enrichment",
        reportId: input.reportId,
        externalId: null,
        contentType: null,
        url: null,
        sourceText: input.text,
        categories: JSON.stringify(answer.categories),
        severity: answer.severity,
        confidence: answer.confidence,
        reasoning: answer.reasoning,
        model: classification!.model,
        latencyMs: classification!.latencyMs,
        promptVersion: classification!.promptVersion,
        policyVersions: JSON.stringify(input.classifier.policyVersions),
        confidenceSource: classification!.confidenceSource,
        contentKey: input.contentKey,
        classifierKey: input.classifier.key,
        reusedAnalysisId: null,
        reusedAnalysisAt: null,
        createdAt: now,
      };

  const outcome = await rowLockedTransaction(sys, async (): Promise<EnrichmentResult> => {
    // Its case's row first (src/domain/cases/case-lock.ts): a decision on the case, or this job run
    // twice, takes turns with it; the report as it is under that lock.
    const { report: current, theCase } = await lockReportAndCase(sys, input.reportId);
    if (!current || current.aiAnalyzedAt != null || !theCase) return "skipped";
    if (theCase.id !== current.caseId) throw new TransactionConflict("the report moved to another case meanwhile");
    const q = enrichmentStatements(sys.db);
    const searchText = searchDocument([current.description, current.content, answer.reasoning]);
    const enriched: ReportRow = {
      ...current,
      aiSeverity: answer.severity,
      aiCategories: JSON.stringify(answer.categories),
      aiConfidence: answer.confidence,
      aiReasoning: answer.reasoning,
      aiAnalyzedAt: now,
      updatedAt: now,
      searchText,
    };
    // Writes nobody waits for: they travel with the COMMIT.
    await sys.store.atCommit(
      q.setAi.execute({
        id: input.reportId,
        aiSeverity: enriched.aiSeverity,
        aiCategories: enriched.aiCategories,
        aiConfidence: enriched.aiConfidence,
        aiReasoning: enriched.aiReasoning,
        aiAnalyzedAt: now,
        updatedAt: now,
        searchText,
      }),
      q.insertAnalysis.execute(row),
      recordAudit(sys, {
        projectId: project.id,
        action: "AI_ANALYZED",
        entityType: "report",
        entityId: input.reportId,
        data: {
          analysisId: id,
          source: "enrichment",
          severity: answer.severity,
          confidence: answer.confidence,
          categories: answer.categories,
          reasoning: answer.reasoning,
          model: row.model,
          ...(row.promptVersion !== null ? { promptVersion: row.promptVersion } : {}),
          ...(row.policyVersions !== null ? { policyVersions: JSON.parse(row.policyVersions) as Record<string, number> } : {}),
          confidenceSource: (row.confidenceSource as "logprobs" | "self_reported" | null) ?? "self_reported",
          reportId: input.reportId,
          url: null,
          ...(reused ? { reusedFrom: { analysisId: row.reusedAnalysisId!, analyzedAt: new Date(row.reusedAnalysisAt!).toISOString() } } : {}),
        },
      }),
    );
    const escalates = answer.confidence >= project.aiThreshold && (answer.severity === "HIGH" || answer.severity === "CRITICAL");
    let status = enriched.status;
    // The table's `enrich` (workflow-engine.ts): an OPEN report goes to IN_REVIEW with its case
    // if that is OPEN too; a report a moderator already moved on is left where it is.
    if (escalates) {
      const moved = await applyTransition(sys, {
        target: { reportId: input.reportId },
        move: { action: "enrich", severity: answer.severity, confidence: answer.confidence },
        refused: "skip",
        locked: { report: enriched, theCase },
      });
      status = moved.report?.to ?? status;
    }
    if (escalates && answer.severity === "CRITICAL") await raiseLockedCaseBucket(sys, { theCase, bucket: "emergency" });
    // The organization's report.enriched rules (src/domain/rules/rule-engine.ts): once, as the analysis is stored once.
    await runRules(sys, { trigger: "report.enriched", reportId: input.reportId, report: { ...enriched, status } });
    if (!reused) await followModelAnswer(sys, { project, classifier: input.classifier, text: input.text, analysisId: id, subjectIdentityId: current.subjectIdentityId });
    return reused ? "reused" : "enriched";
  });
  if (outcome !== "skipped") {
    countEnrichments(sys.store, reused ? "reused" : "analysed");
    if (!reused) input.onStored?.(row);
  }
  return outcome;
}

/**
 * What only a model's own answer calls for (a reused one was followed so when it was made): the
 * link scans of the text's URLs, and the shadow analysis of the answer when the project has a
 * shadow configuration. Inside the attaching transaction; their jobs' rows travel with the COMMIT
 * (each enqueue sends its rows before it awaits anything: a row sent after an answer came back
 * would come after the COMMIT).
 */
async function followModelAnswer(sys: AiContext, input: { project: Project; classifier: Classifier; text: string; analysisId: string; subjectIdentityId: string | null }): Promise<void> {
  const { project } = input;
  if (project.scanLinks === 1 && extractUrls(input.text).length > 0) {
    // The report's subject posted the text: a report a link scan files names them.
    const [poster] = input.subjectIdentityId
      ? await sys.db.select({ type: identities.type, externalId: identities.externalId }).from(identities).where(eq(identities.id, input.subjectIdentityId)).limit(1)
      : [];
    await sys.store.atCommit(enqueueLinkScans(sys, { project, text: input.text, poster: poster ?? null }));
  }
  // The shadow model or policy versions, if any, classify the same text in a job of their own
  // that waits for live work and never acts (./shadow.ts).
  if (sys.config.aiShadowModel !== null || input.classifier.hasShadow) {
    await sys.store.atCommit(enqueueShadowAnalysis(sys, { project, analysisId: input.analysisId, shadowModel: sys.config.aiShadowModel, hasShadowPolicies: input.classifier.hasShadow }));
  }
}
