import { z } from "zod";
import { EVAL_IMPORT_FORMATS } from "../../domain/evaluation/import-file.ts";
import {
  cancelEvalRun,
  compareEvalRuns,
  evalThresholdAdvice,
  getEvalRun,
  listEvalRunItems,
  listEvalRuns,
  startEvalRun,
} from "../../domain/evaluation/runs.ts";
import { createEvalSetFromDecisions, getEvalSet, importEvalSet, listEvalSets } from "../../domain/evaluation/sets.ts";
import { installedModels } from "../../domain/analysis/analysis.ts";
import { projectIdSchema } from "../../domain/views/validation.ts";
import { clientDateTime } from "../../domain/views/common.ts";
import { policySelectionSchema } from "../../domain/views/policy.ts";
import {
  EVAL_SET_MAX_ITEMS,
  evalRunComparisonSchema,
  evalRunItemViewSchema,
  evalRunViewSchema,
  evalSetViewSchema,
  installedModelsSchema,
  thresholdAdviceSchema,
} from "../../domain/views/evaluation.ts";
import { orgProcedure, projectProcedure, router } from "../trpc.ts";

const tags = ["evaluation"];
const id = z.string().min(1).max(64);
const orgProject = { orgSlug: z.string().min(1).max(64), projectId: projectIdSchema };
const sets = "/organizations/{orgSlug}/projects/{projectId}/evaluation-sets";
const runs = "/organizations/{orgSlug}/projects/{projectId}/evaluation-runs";
const name = z.string().trim().min(1).max(200);
const everyQueue = { 403: "The caller may not work every queue (a set holds content of cases of any queue)" };

/**
 * Evaluating the AI classifier on a project's own content (docs/ai.md, "Measuring the
 * classifier"). Building sets and starting or cancelling runs is an admin's (like rules and
 * settings: it spends the model's time and freezes sets); reading them needs the moderator role
 * and access to every queue (the items are content of cases of any queue).
 */
export const evaluationRouter = router({
  sets: projectProcedure(z.object(orgProject))
    .meta({ role: "moderator", family: "org", openapi: { method: "GET", path: sets, summary: "List evaluation sets", description: "Newest first, each at its latest version.", tags, errorResponses: everyQueue } })
    .output(z.object({ sets: z.array(evalSetViewSchema) }))
    .query(async ({ ctx }) => ({ sets: await listEvalSets(ctx.domain, { projectId: ctx.project.id }) })),

  set: projectProcedure(z.object({ ...orgProject, setId: id, version: z.coerce.number().int().min(1).optional() }))
    .meta({
      role: "moderator",
      family: "org",
      openapi: { method: "GET", path: `${sets}/{setId}`, summary: "Get an evaluation set", description: "Its latest version, or `version`.", tags, errorResponses: everyQueue },
    })
    .output(z.object({ set: evalSetViewSchema }))
    .query(async ({ ctx, input }) => ({ set: await getEvalSet(ctx.domain, { projectId: ctx.project.id, setId: input.setId, version: input.version }) })),

  createSetFromDecisions: projectProcedure(
    z.object({
      ...orgProject,
      name,
      from: clientDateTime.optional().meta({ description: "Cases decided at or after this time." }),
      to: clientDateTime.optional().meta({ description: "Cases decided at or before this time." }),
      limit: z.number().int().min(1).max(EVAL_SET_MAX_ITEMS).optional().meta({ description: "The most recently decided cases, at most this many." }),
    }),
  )
    .meta({
      role: "admin",
      family: "org",
      successStatus: 201,
      openapi: {
        method: "POST",
        path: `${sets}/from-decisions`,
        summary: "Build an evaluation set from moderators' decisions",
        description:
          "Each decided case with reported content becomes an item: resolved with a violation → its reasons and highest severity; dismissed, resolved as no violation, or overturned on appeal → no category (LOW); duplicates are left out. Personal data is removed from the text as in statements of reasons. 400 when no case qualifies.",
        tags,
      },
    })
    .output(z.object({ set: evalSetViewSchema }))
    .mutation(async ({ ctx, input }) => ({
      set: await createEvalSetFromDecisions(ctx.domain, { projectId: ctx.project.id, name: input.name, from: input.from, to: input.to, limit: input.limit }),
    })),

  importSet: projectProcedure(
    z.object({
      ...orgProject,
      name: name.optional().meta({ description: "The new set's name (required without setId)." }),
      setId: id.optional().meta({ description: "Add the items to this set: to its latest version, or to a new version when a run used it." }),
      format: z.enum(EVAL_IMPORT_FORMATS),
      content: z.string().min(1).meta({ description: "The file: CSV with a header (text, categories separated by | or ;, optional severity and id) or JSONL (one object a line)." }),
    }),
  )
    .meta({
      role: "admin",
      family: "org",
      successStatus: 201,
      // The file's lines are checked for U+0000 once parsed, each refusal naming its line (import-file.ts).
      nulCheckedPerLine: "content",
      openapi: {
        method: "POST",
        path: `${sets}/import`,
        summary: "Import an evaluation set (CSV or JSONL)",
        description: `At most ${EVAL_SET_MAX_ITEMS} items. 400 names the first bad line: a malformed line, a missing text, an unknown category or severity, a NUL character (U+0000) once the line is parsed (a JSONL \\u0000 escape too).`,
        tags,
      },
    })
    .output(z.object({ set: evalSetViewSchema }))
    .mutation(async ({ ctx, input }) => ({
      set: await importEvalSet(ctx.domain, { projectId: ctx.project.id, name: input.name, setId: input.setId, format: input.format, content: input.content }),
    })),

  runs: projectProcedure(z.object({ ...orgProject, setId: id.optional() }))
    .meta({ role: "moderator", family: "org", openapi: { method: "GET", path: runs, summary: "List evaluation runs", description: "Newest first.", tags, errorResponses: everyQueue } })
    .output(z.object({ runs: z.array(evalRunViewSchema) }))
    .query(async ({ ctx, input }) => ({ runs: await listEvalRuns(ctx.domain, { projectId: ctx.project.id, setId: input.setId }) })),

  run: projectProcedure(z.object({ ...orgProject, runId: id }))
    .meta({
      role: "moderator",
      family: "org",
      openapi: { method: "GET", path: `${runs}/{runId}`, summary: "Get an evaluation run", description: "Its status, progress and, once completed or cancelled, its figures.", tags, errorResponses: everyQueue },
    })
    .output(z.object({ run: evalRunViewSchema }))
    .query(async ({ ctx, input }) => ({ run: await getEvalRun(ctx.domain, { projectId: ctx.project.id, runId: input.runId }) })),

  runItems: projectProcedure(z.object({ ...orgProject, runId: id }))
    .meta({
      role: "moderator",
      family: "org",
      openapi: { method: "GET", path: `${runs}/{runId}/items`, summary: "The items of an evaluation run with the model's answers", tags, errorResponses: everyQueue },
    })
    .output(z.object({ items: z.array(evalRunItemViewSchema) }))
    .query(async ({ ctx, input }) => ({ items: await listEvalRunItems(ctx.domain, { projectId: ctx.project.id, runId: input.runId }) })),

  startRun: projectProcedure(
    z.object({
      ...orgProject,
      setId: id,
      model: z.string().trim().min(1).max(200).optional().meta({ description: "The Ollama model (default: the configured one)." }),
      policies: policySelectionSchema.optional().meta({
        description: "Which policy text each category is sent: `live` (default: what live analyses use), `shadow`, `descriptions` (no policy), or named versions by category name (the others as `live`).",
      }),
    }),
  )
    .meta({
      role: "admin",
      family: "org",
      successStatus: 201,
      openapi: {
        method: "POST",
        path: runs,
        summary: "Start an evaluation run",
        description: "Runs the set's latest version (frozen from now on) as a background job. 400: the set is empty, the project has no categories, or the policy selection names a category or version that does not exist; 403: free plan; 404: no such set.",
        tags,
      },
    })
    .output(z.object({ run: evalRunViewSchema }))
    .mutation(async ({ ctx, input }) => ({
      run: await startEvalRun({ ...ctx.domain, defaultModel: ctx.config.aiModel }, { projectId: ctx.project.id, setId: input.setId, model: input.model, policies: input.policies }),
    })),

  /**
   * The models the AI backend has installed, for the "Start a run" dialog (tRPC only): admins, who
   * start runs. 503 when the backend cannot be reached. Nothing of any case.
   */
  models: orgProcedure(z.object({ orgSlug: orgProject.orgSlug }))
    .meta({ role: "admin" })
    .output(installedModelsSchema)
    .query(({ ctx }) => installedModels({ store: ctx.domain.store, config: ctx.config })),

  cancelRun: projectProcedure(z.object({ ...orgProject, runId: id }))
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "POST",
        path: `${runs}/{runId}/cancel`,
        summary: "Cancel an evaluation run",
        description: "The run stops before its next item; its figures cover the items done. 409 when it already finished.",
        tags,
        errorResponses: { 409: "The run already finished" },
      },
    })
    .output(z.object({ run: evalRunViewSchema }))
    .mutation(async ({ ctx, input }) => ({ run: await cancelEvalRun(ctx.domain, { projectId: ctx.project.id, runId: input.runId }) })),

  compare: projectProcedure(z.object({ ...orgProject, runId: id.meta({ description: "Run A." }), otherRunId: id.meta({ description: "Run B." }) }))
    .meta({
      role: "moderator",
      family: "org",
      openapi: {
        method: "GET",
        path: `${runs}/{runId}/compare/{otherRunId}`,
        summary: "Compare two evaluation runs of one set version",
        description: "The items whose answer changed, and which way. 400 when the runs ran different sets or versions.",
        tags,
        errorResponses: everyQueue,
      },
    })
    .output(z.object({ comparison: evalRunComparisonSchema }))
    .query(async ({ ctx, input }) => ({ comparison: await compareEvalRuns(ctx.domain, { projectId: ctx.project.id, runA: input.runId, runB: input.otherRunId }) })),

  thresholdAdvice: projectProcedure(
    z.object({ ...orgProject, runId: id, precisionTarget: z.coerce.number().min(0).max(1).optional().meta({ description: "The precision to reach, 0–1 (default: the project's aiPrecisionTarget)." }) }),
  )
    .meta({
      role: "moderator",
      family: "org",
      openapi: {
        method: "GET",
        path: `${runs}/{runId}/threshold-advice`,
        summary: "Threshold advice from an evaluation run",
        description: "Per category, the lowest confidence threshold whose precision reaches the target (precisionTarget, or the project's aiPrecisionTarget; the answer's precisionTarget says which was used), the recall kept, the point at the project's current aiThreshold and the whole curve.",
        tags,
        errorResponses: everyQueue,
      },
    })
    .output(z.object({ advice: thresholdAdviceSchema }))
    .query(async ({ ctx, input }) => ({ advice: await evalThresholdAdvice(ctx.domain, { projectId: ctx.project.id, runId: input.runId, precisionTarget: input.precisionTarget }) })),
});
