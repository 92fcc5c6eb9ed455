import { z } from "zod";
import { decideOnReport } from "../../domain/cases.ts";
import { resolveReportWithAction } from "../../domain/enforcement.ts";
import { DomainError } from "../../domain/errors.ts";
import { createReport, listReports, requireReport, toReportViews } from "../../domain/reports.ts";
import { listProjects, requireProject } from "../../domain/projects.ts";
import { SEVERITIES } from "../../domain/severity.ts";
import { externalIdSchema, projectIdSchema, typeNameSchema } from "../../domain/validation.ts";
import { STATUSES, type Status } from "../../domain/workflow.ts";
import { isoDateTime, limitSchema } from "../schemas.ts";
import { endFrom, resolveActionSchema } from "./enforcement.ts";
import { authedProcedure, projectFor, router, secretProcedure } from "../trpc.ts";

const tags = ["reports"];
const MAX_TEXT = 10_000;

const displaySchema = z
  .object({
    name: z.string().max(512).nullable().optional(),
    username: z.string().max(256).nullable().optional(),
    avatarUrl: z.string().max(2048).nullable().optional(),
  })
  .nullable()
  .optional();

const identityRefSchema = z.object({ type: typeNameSchema, externalId: externalIdSchema, display: displaySchema });

const reasonName = z.string().min(1).max(100);
/** `"spam"`, `["spam", "threats"]`, `{ names: [...] }` or `{ name: "spam" }`. */
const reasonSchema = z.union([
  reasonName,
  z.array(reasonName).min(1).max(10),
  z.object({ names: z.array(reasonName).min(1).max(10) }),
  z.object({ name: reasonName }),
]);

const reasonNames = (r: z.infer<typeof reasonSchema>): string[] =>
  typeof r === "string" ? [r] : Array.isArray(r) ? r : "names" in r ? r.names : [r.name];

const createInput = z
  .object({
    projectId: projectIdSchema,
    subject: identityRefSchema.nullable().optional(),
    reporter: identityRefSchema.nullable().optional(),
    target: z
      .object({
        contentExternalId: externalIdSchema.nullable().optional(),
        contentType: z.string().min(1).max(64).nullable().optional(),
        content: z.string().max(MAX_TEXT, `must be at most ${MAX_TEXT} characters`).nullable().optional(),
      })
      .nullable()
      .optional(),
    reason: reasonSchema,
    description: z.string().max(MAX_TEXT, `must be at most ${MAX_TEXT} characters`).nullable().optional(),
    automated: z.boolean().optional(),
  })
  .refine((b) => b.subject != null || b.target != null, {
    message: "a report needs a subject or a target (it is about a person or about content)",
    path: ["subject"],
  });

const summarySchema = z
  .object({ id: z.string(), type: z.string(), externalId: z.string(), displayName: z.string(), handleLabel: z.string() })
  .nullable();
const decisionBase = { note: z.string().nullable(), at: isoDateTime, by: z.object({ type: z.string(), id: z.string().nullable() }) };

export const reportSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    caseId: z.string(),
    status: z.enum(STATUSES),
    severity: z.enum(SEVERITIES),
    reasons: z.array(z.string()),
    description: z.string().nullable(),
    automated: z.boolean(),
    subject: summarySchema,
    reporter: summarySchema,
    target: z.object({ contentType: z.string().nullable(), contentExternalId: z.string().nullable(), content: z.string().nullable() }).nullable(),
    escalation: z.object({ team: z.string(), applied: z.boolean(), ...decisionBase }).nullable(),
    resolution: z.object({ code: z.string().nullable(), ...decisionBase }).nullable(),
    dismissal: z.object({ reason: z.string(), ...decisionBase }).nullable(),
    ai: z
      .object({ severity: z.enum(SEVERITIES), categories: z.array(z.string()), confidence: z.number(), reasoning: z.string(), analyzedAt: isoDateTime })
      .nullable(),
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
  })
  .meta({ id: "Report" });

/**
 * Counts report creations per API key (FLAGSTAFF_REPORT_RATE_LIMIT a minute, or the key's own
 * limit) and puts the RateLimit headers on every answer. Dashboard users are not limited.
 */
const rateLimitedProcedure = authedProcedure.use(({ ctx, next }) => {
  const key = ctx.caller.key;
  if (!key) return next();
  const d = ctx.reportRateLimiter.hit(key.id, key.reportRateLimit ?? ctx.config.reportRateLimit);
  ctx.resHeaders.set("RateLimit-Limit", String(d.limit));
  ctx.resHeaders.set("RateLimit-Remaining", String(d.remaining));
  ctx.resHeaders.set("RateLimit-Reset", String(d.resetSeconds));
  ctx.resHeaders.set("RateLimit-Policy", `${d.limit};w=60`);
  if (!d.allowed) {
    ctx.resHeaders.set("Retry-After", String(d.resetSeconds));
    throw new DomainError(
      "rate_limited",
      `Reports were sent too often: at most ${d.limit} a minute per API key. Retry in ${d.resetSeconds} s.`,
      { retryAfter: d.resetSeconds },
    );
  }
  return next();
});

const reportIdInput = { reportId: z.string().min(1).max(64) };
const okWithId = z.object({ ok: z.literal(true), reportId: z.string() });
const decisionErrors = { 400: "Invalid body", 401: "Invalid or missing API key", 403: "Publishable key", 404: "Report not found", 409: "Not allowed in the report's status" };

export const RESOLUTION_CODES = [
  "NO_VIOLATION", "INSUFFICIENT_EVIDENCE", "DUPLICATE_REPORT", "SPAM_CONFIRMED", "HARASSMENT_CONFIRMED",
  "HATE_SPEECH_CONFIRMED", "THREATS_CONFIRMED", "FRAUD_OR_SCAM_CONFIRMED", "POLICY_EXCEPTION_CONTEXTUAL",
  "ESCALATED_EXTERNALLY", "ACCOUNT_LEVEL_ACTION", "CONTENT_LEVEL_ACTION",
] as const;
export const DISMISSAL_REASONS = ["false_positive", "duplicate", "out_of_scope", "not_actionable", "other"] as const;
export const TEAMS = ["safety", "legal", "senior_moderator"] as const;

const statusList = z
  .string()
  .max(200)
  .transform((s, ctx) => {
    const list = s.split(",").map((x) => x.trim().toUpperCase()).filter(Boolean);
    const bad = list.filter((x) => !(STATUSES as readonly string[]).includes(x));
    if (bad.length) {
      ctx.addIssue({ code: "custom", message: `unknown status ${bad.join(", ")}; use ${STATUSES.join(", ")}` });
      return z.NEVER;
    }
    return list as Status[];
  });

export const reportsRouter = router({
  create: rateLimitedProcedure
    .meta({
      family: "sdk",
      publishable: true,
      successStatus: 201,
      openapi: {
        method: "POST",
        path: "/projects/{projectId}/reports",
        summary: "Create a report",
        description:
          "Files a report about content (`target`) or a person (`subject`); one of them is required, and `reason` names one or more of the project's report categories. Subject and reporter identities are upserted. Allowed with a publishable key of the project. Rate limited per API key (429 with Retry-After).",
        tags,
        errorResponses: { 400: "Invalid body or unknown reason", 401: "Invalid or missing API key", 403: "Key of another project", 404: "Project not found", 413: "Body too large", 429: "Too many reports" },
      },
    })
    .input(createInput)
    .output(z.object({ report: z.object({ id: z.string(), projectId: z.string(), status: z.literal("OPEN"), createdAt: isoDateTime }) }))
    .mutation(async ({ ctx, input }) => {
      const project = await projectFor(ctx, input.projectId);
      const created = await createReport(ctx.domain, {
        project,
        subject: input.subject,
        reporter: input.reporter,
        target: input.target,
        reasonNames: reasonNames(input.reason),
        description: input.description,
        automated: input.automated ?? false,
        enrichMaxAttempts: ctx.config.enrichMaxAttempts,
      });
      return { report: created.report };
    }),

  list: secretProcedure
    .meta({
      family: "sdk",
      openapi: {
        method: "GET",
        path: "/reports",
        summary: "List reports",
        description:
          "Reports of the key's organization, newest first (`sort=asc` for oldest first). Pass `nextCursor` back as `cursor` (an ISO timestamp) for the next page; pages never skip or repeat a report. Filters combine with AND; `status` takes a comma list.",
        tags,
        errorResponses: { 400: "Invalid query", 401: "Invalid or missing API key", 403: "Publishable key" },
      },
    })
    .input(
      z.object({
        sort: z.enum(["asc", "desc"]).default("desc"),
        // An ISO timestamp with microseconds (the previous page's nextCursor): say so in the document.
        cursor: z.string().max(64).meta({ format: "date-time", description: "The previous page's `nextCursor` (an ISO timestamp)" }).optional(),
        limit: limitSchema(25),
        projectId: projectIdSchema.optional(),
        status: statusList.optional(),
        severity: z.enum(SEVERITIES).optional(),
        reason: z.string().min(1).max(100).optional(),
        subjectExternalId: externalIdSchema.optional(),
        contentExternalId: externalIdSchema.optional(),
        automated: z.enum(["true", "false"]).transform((v) => v === "true").optional(),
      }),
    )
    .output(
      z.object({
        projects: z.array(z.object({ id: z.string(), name: z.string() })),
        reports: z.array(reportSchema),
        nextCursor: z.string().nullable(),
      }),
    )
    .query(async ({ ctx, input }) => {
      if (input.projectId) await requireProject(ctx.domain, input.projectId);
      const page = await listReports(ctx.domain, { ...input, statuses: input.status });
      return {
        projects: (await listProjects(ctx.domain)).map((p) => ({ id: p.id, name: p.name })),
        ...page,
      };
    }),

  get: secretProcedure
    .meta({
      family: "sdk",
      openapi: { method: "GET", path: "/reports/{reportId}", summary: "Get a report", tags, errorResponses: { 401: "Invalid or missing API key", 403: "Publishable key", 404: "Report not found" } },
    })
    .input(z.object(reportIdInput))
    .output(z.object({ report: reportSchema }))
    .query(async ({ ctx, input }) => {
      const row = await requireReport(ctx.domain, input.reportId);
      return { report: (await toReportViews(ctx.domain, { rows: [row] }))[0]! };
    }),

  escalate: secretProcedure
    .meta({
      family: "sdk",
      openapi: {
        method: "POST",
        path: "/reports/{reportId}/escalate",
        summary: "Escalate a report",
        description: "Records the escalation to a team (default senior_moderator). Unless the report is RESOLVED it becomes IN_REVIEW, with its case and the case's other open reports.",
        tags,
        // Allowed from every status (on RESOLVED it is recorded and changes nothing): never a 409.
        errorResponses: { 404: "Report not found" },
      },
    })
    .input(z.object({ ...reportIdInput, team: z.enum(TEAMS).optional(), note: z.string().max(2000).optional() }))
    .output(okWithId)
    .mutation(async ({ ctx, input }) => {
      await decideOnReport(ctx.domain, {
        reportId: input.reportId,
        decision: { action: "escalate", team: input.team ?? "senior_moderator", note: input.note },
      });
      return { ok: true as const, reportId: input.reportId };
    }),

  resolve: secretProcedure
    .meta({
      family: "sdk",
      openapi: {
        method: "POST",
        path: "/reports/{reportId}/resolve",
        summary: "Resolve a report",
        description:
          "From OPEN, TRIAGED or IN_REVIEW to RESOLVED, with its case and the case's other open reports; 409 from any other status. With `resolutionCode` ACCOUNT_LEVEL_ACTION (kind warning, mute, suspension or ban, applied to the report's subject) or CONTENT_LEVEL_ACTION (content_removal of the report's target), `action` applies that enforcement action in the same step and the answer carries its `enforcementActionId`.",
        tags,
        errorResponses: decisionErrors,
      },
    })
    .input(
      z.object({
        ...reportIdInput,
        resolutionCode: z.enum(RESOLUTION_CODES).optional(),
        note: z.string().max(2000).optional(),
        action: resolveActionSchema.optional(),
      }),
    )
    .output(z.object({ ok: z.literal(true), enforcementActionId: z.string().optional() }))
    .mutation(async ({ ctx, input }) => {
      if (input.action) {
        const { endsAt: _endsAt, durationSeconds: _duration, ...action } = input.action;
        const applied = await resolveReportWithAction(ctx.domain, {
          reportId: input.reportId,
          resolution: { code: input.resolutionCode, note: input.note },
          action: { ...action, endsAt: endFrom(input.action, ctx.clock.now()) },
        });
        return { ok: true as const, enforcementActionId: applied.id };
      }
      await decideOnReport(ctx.domain, {
        reportId: input.reportId,
        decision: { action: "resolve", code: input.resolutionCode, note: input.note },
      });
      return { ok: true as const };
    }),

  dismiss: secretProcedure
    .meta({
      family: "sdk",
      openapi: {
        method: "POST",
        path: "/reports/{reportId}/dismiss",
        summary: "Dismiss a report",
        description: "From OPEN, TRIAGED or IN_REVIEW to DISMISSED, with its case and the case's other open reports; 409 from any other status.",
        tags,
        errorResponses: decisionErrors,
      },
    })
    .input(z.object({ ...reportIdInput, reason: z.enum(DISMISSAL_REASONS), note: z.string().max(2000).optional() }))
    .output(z.object({ ok: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await decideOnReport(ctx.domain, {
        reportId: input.reportId,
        decision: { action: "dismiss", reason: input.reason, note: input.note },
      });
      return { ok: true as const };
    }),
});
