/**
 * DSA transparency (docs/dsa.md): statements of reasons (Art. 17 and 24(5)), a project's DSA
 * settings and the statements' export; the Transparency Database submission and the
 * transparency report have their own sections below.
 */
import { z } from "zod";
import { exportStatements, getDsaSettings, setDsaSettings, statementsCsv, statementsOfActions } from "../../domain/enforcement/statements.ts";
import { projectIdSchema } from "../../domain/views/validation.ts";
import { dsaSettingsSchema, statementRecordSchema, statementSchema, type Statement } from "../../domain/views/dsa.ts";
import { transparencyReport, transparencyReportCsv } from "../../domain/dsa/transparency-report.ts";
import { listSubmissions, requestSubmission, setSubmissionSettings, submissionSettings } from "../../domain/dsa/transparency-submission.ts";
import {
  SUBMISSION_STATUSES,
  submissionAttemptViewSchema,
  submissionSettingsViewSchema,
  transparencyReportSchema,
  type TransparencyReport,
} from "../../domain/views/transparency.ts";
import { limitSchema } from "../schemas.ts";
import { orgProcedure, projectProcedure, router } from "../trpc.ts";

const tags = ["transparency"];
const orgSlug = z.string().min(1).max(64);
const day = z.string().max(10).regex(/^\d{4}-\d\d-\d\d$/, "must be a date YYYY-MM-DD");

export const transparencyRouter = router({
  // -------------------------------------------------------------------------------------------
  // Statements of reasons: settings, export, the case page's statements

  /** A project's DSA settings (its defaults when none were saved). */
  getDsaSettings: projectProcedure(z.object({ orgSlug, projectId: projectIdSchema }))
    .meta({
      family: "org",
      openapi: {
        method: "GET",
        path: "/organizations/{orgSlug}/projects/{projectId}/dsa-settings",
        summary: "Get a project's DSA settings",
        description: "How the project's report categories map to the Transparency Database's categories and decision grounds, and the default territorial scope of its statements of reasons.",
        tags,
      },
    })
    .output(z.object({ settings: dsaSettingsSchema }))
    .query(async ({ ctx }) => ({ settings: await getDsaSettings(ctx.domain, { projectId: ctx.project.id }) })),

  /** Replaces a project's DSA settings (admins). */
  setDsaSettings: projectProcedure(z.object({ orgSlug, projectId: projectIdSchema, ...dsaSettingsSchema.shape }))
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "PUT",
        path: "/organizations/{orgSlug}/projects/{projectId}/dsa-settings",
        summary: "Replace a project's DSA settings",
        description:
          "Fields left out take their defaults. 400 names the field: an unknown STATEMENT_CATEGORY_…, a country outside the EU/EEA, an illegal-content ground without `legalGround`, or a category the project does not have. Statements already made keep the settings they were made with.",
        tags,
      },
    })
    .output(z.object({ settings: dsaSettingsSchema }))
    .mutation(async ({ ctx, input }) => {
      const { orgSlug: _o, projectId: _p, ...settings } = input;
      return { settings: await setDsaSettings(ctx.domain, { projectId: ctx.project.id, settings }) };
    }),

  /** The organization's statements of reasons made in a period, in the Transparency Database's field names (JSON or CSV). */
  exportStatements: orgProcedure(
    z.object({
      orgSlug,
      from: day,
      to: day,
      format: z.enum(["json", "csv"]).default("json"),
      projectId: projectIdSchema.optional(),
      cursor: z.string().max(100).optional(),
      limit: z.coerce.number().int().min(1).max(1000).default(1000),
    }),
  )
    .meta({
      family: "org",
      csv: (result: { statements: Statement[] }) => statementsCsv(result.statements),
      openapi: {
        method: "GET",
        path: "/organizations/{orgSlug}/transparency/statements",
        summary: "Export statements of reasons",
        description:
          "The statements of reasons made from `from` to `to` (UTC days, both included), oldest first, in the EU Transparency Database API v2 field names. `format=csv` answers `text/csv`: the field names as the header row, array fields (`decision_visibility`, `content_type`, `territorial_scope`, `category_addition`, `category_specification`) joined with commas inside one quoted cell, absent fields empty. Page with `nextCursor` (JSON) as `cursor`; up to `limit` (default and maximum 1000) a page.",
        tags,
      },
    })
    .output(z.object({ statements: z.array(statementSchema), nextCursor: z.string().nullable() }))
    .query(({ ctx, input }) => exportStatements(ctx.domain, input)),

  /** The statements of some actions (the case page, tRPC only), by action id. */
  actionStatements: orgProcedure(z.object({ orgSlug, actionIds: z.array(z.string().min(1).max(64)).max(200) }))
    .output(z.object({ statements: z.record(z.string(), statementRecordSchema) }))
    .query(async ({ ctx, input }) => ({ statements: await statementsOfActions(ctx.domain, { actionIds: input.actionIds }) })),

  // -------------------------------------------------------------------------------------------
  // Transparency Database submission (added by the submission work)

  /** Where and whether the organization submits its statements; the token is never shown. */
  getSubmission: orgProcedure(z.object({ orgSlug }))
    .meta({
      family: "org",
      openapi: {
        method: "GET",
        path: "/organizations/{orgSlug}/transparency/submission",
        summary: "Get the Transparency Database submission settings",
        description: "`tokenSet` says whether a token is stored; the token itself is write-only. `pendingStatements`: statements not in the database yet.",
        tags,
      },
    })
    .output(z.object({ submission: submissionSettingsViewSchema }))
    .query(async ({ ctx }) => ({ submission: await submissionSettings(ctx.domain) })),

  /** Sets where and whether statements are submitted (admins). */
  setSubmission: orgProcedure(
    z.object({
      orgSlug,
      endpointUrl: z.string().trim().min(1).max(2048),
      token: z.string().trim().min(1).max(1000).optional(),
      enabled: z.boolean(),
    }),
  )
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "PUT",
        path: "/organizations/{orgSlug}/transparency/submission",
        summary: "Set the Transparency Database submission",
        description:
          "`endpointUrl`: the API's base URL (statements go to `{endpointUrl}/statements`, at most 100 a request); https, and its host must resolve to a public address. `token`: the API token, required the first time, kept when left out, never shown again. Moving `endpointUrl` to another origin (scheme, host or port) needs the token again in the same request: without it the answer is 400 (`token: send the token again when changing the endpoint's origin…`) and nothing changes, so the stored token is only ever sent to the origin it was given for. `enabled: true` starts a run at once.",
        tags,
        errorResponses: { 503: "The URL's host name could not be resolved now (DNS did not answer): try again" },
      },
    })
    .output(z.object({ submission: submissionSettingsViewSchema }))
    .mutation(async ({ ctx, input }) => ({
      submission: await setSubmissionSettings(ctx.domain, { endpointUrl: input.endpointUrl, token: input.token, enabled: input.enabled, allowPrivate: ctx.config.scanAllowPrivate }),
    })),

  /** Submit now (admins): a run of the submission job as soon as a worker is free. */
  runSubmission: orgProcedure(z.object({ orgSlug }))
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "POST",
        path: "/organizations/{orgSlug}/transparency/submission/run",
        summary: "Submit the pending statements now",
        description: "Queues a submission run (one already queued or running is not doubled). 409 when submission is not set up or not enabled.",
        tags,
        errorResponses: { 409: "Submission is not set up or not enabled" },
      },
    })
    .output(z.object({ queued: z.literal(true), pendingStatements: z.number().int() }))
    .mutation(({ ctx }) => requestSubmission(ctx.domain)),

  /** Every submission attempt, newest first. */
  submissions: orgProcedure(
    z.object({ orgSlug, status: z.enum(SUBMISSION_STATUSES).optional(), cursor: z.string().max(64).optional(), limit: limitSchema(50) }),
  )
    .meta({
      family: "org",
      openapi: {
        method: "GET",
        path: "/organizations/{orgSlug}/transparency/submissions",
        summary: "The Transparency Database submission attempts, newest first",
        description:
          "One entry per request to the database: `submitted` (201, or the database already had these puids) or `failed` with the HTTP status and the reason. A 422 refusal names the statements refused, which are not sent again. Page with `nextCursor` as `cursor`.",
        tags,
      },
    })
    .output(z.object({ submissions: z.array(submissionAttemptViewSchema), nextCursor: z.string().nullable() }))
    .query(({ ctx, input }) => listSubmissions(ctx.domain, input)),

  // -------------------------------------------------------------------------------------------
  // Transparency report (added by the report work)

  /** The transparency report of a period (DSA Art. 15, 24): JSON, or CSV with `format=csv`. */
  report: projectProcedure(
    z.object({ orgSlug, from: day.optional(), to: day.optional(), format: z.enum(["json", "csv"]).default("json"), projectId: projectIdSchema.optional() }),
  )
    .meta({
      family: "org",
      csv: (result: TransparencyReport) => transparencyReportCsv(result),
      openapi: {
        method: "GET",
        path: "/organizations/{orgSlug}/transparency/report",
        summary: "The transparency report of a period",
        description:
          "From `from` to `to` (UTC days, both included; default the 30 days up to today; at most 366 days), of the organization or of one project: reports and notices by category and source, decisions by resolution code and dismissal reason, automated detections and decisions, enforcement actions by kind, statements of reasons by ground, category and source, appeals and their outcomes, and the median time from a report to its decision. `format=csv` answers `text/csv` with the header `section,key,value` and one row per number.",
        tags,
      },
    })
    .output(transparencyReportSchema)
    .query(({ ctx, input }) =>
      transparencyReport(ctx.domain, { from: input.from, to: input.to, projectId: ctx.project?.id ?? null }),
    ),
});
