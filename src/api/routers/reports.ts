import { z } from "zod";
import { decideOnReport } from "../../domain/review/decisions.ts";
import { resolveReport } from "../../domain/enforcement/enforcement.ts";
import { reportSlot } from "../../domain/plumbing/rate-limit.ts";
import { createReport, reportsWithProjects, reportWithOutcome } from "../../domain/intake/reports.ts";
import { externalIdSchema, projectIdSchema, typeNameSchema } from "../../domain/views/validation.ts";
import { projectRefSchema } from "../../domain/views/project.ts";
import { clientDateTime } from "../../domain/views/common.ts";
import {
  createdReportSchema, DEFAULT_TEAM, DISMISSAL_REASONS, noticeInputSchema, reportOutcomeSchema, RESOLUTION_CODES, reportViewSchema, STATUSES, TEAMS, type Status,
} from "../../domain/views/report.ts";
import { ACCOUNT_KINDS, CONTENT_KINDS, joinWords, resolveActionSchema } from "../../domain/views/enforcement.ts";
import { SEVERITIES } from "../../domain/views/severity.ts";
import { MAX_REPORT_MEDIA, mediaInputSchema } from "../../domain/views/media-bank.ts";
import { limitSchema } from "../schemas.ts";
import { projectProcedure, router, secretProcedure } from "../trpc.ts";

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

/** A person on the platform, as reports (and analyzed content's `author`) name them. */
export const identityRefSchema = z.object({ type: typeNameSchema, externalId: externalIdSchema, display: displaySchema });

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
    notice: noticeInputSchema
      .nullable()
      .optional()
      .meta({ description: "DSA Art. 16 notice fields, all optional: `explanation` (≤ 5000), `legalGround` (≤ 500), `notifierName` (≤ 200), `notifierEmail` (an email address, ≤ 254), `goodFaith`. Stored with the report; the name and email come back in the `report.decided` webhook event." }),
    media: z
      .array(mediaInputSchema)
      .max(MAX_REPORT_MEDIA)
      .optional()
      .meta({
        description: `An addition (docs/media.md, "Media on reports"): up to ${MAX_REPORT_MEDIA} media items, each a \`url\` Flagstaff fetches and hashes in the background and/or hashes the platform computed (\`sha256\`, \`md5\`, \`pdq\` with \`pdqQuality\`), matched against the project's banks of known harmful media. A fetched file is not kept unless \`keep\` is true.`,
      }),
  })
  .refine((b) => b.subject != null || b.target != null, {
    message: "a report needs a subject or a target (it is about a person or about content)",
    path: ["subject"],
  });

/**
 * Report creation's rate limit (the rule: reportSlot, src/domain/plumbing/rate-limit.ts): createReport
 * checks and takes the API key's place once everything else passed (the key: 401, 403 for its
 * kind; the body: 400; the project: 404, 403 for a publishable key of another project; the
 * reasons: 400), so a request refused for any of those spends no place and is told so, never
 * 429. The RateLimit headers go on the answers that counted: 201 and 429.
 */
const rateLimitedCreation = projectProcedure(createInput).use(async ({ ctx, next }) => {
  const slot = reportSlot({ limiter: ctx.reportRateLimiter, defaultLimit: ctx.config.reportRateLimit }, { key: ctx.caller.key });
  const result = await next({ ctx: { reportSlot: slot } });
  const d = slot.decision;
  // Created, or refused for a full window; any other refusal spent nothing and says nothing of the window.
  if (d && (result.ok || !d.allowed)) {
    ctx.resHeaders.set("RateLimit-Limit", String(d.limit));
    ctx.resHeaders.set("RateLimit-Remaining", String(d.remaining));
    ctx.resHeaders.set("RateLimit-Reset", String(d.resetSeconds));
    ctx.resHeaders.set("RateLimit-Policy", `${d.limit};w=60`);
  }
  return result;
});

const reportIdInput = { reportId: z.string().min(1).max(64) };
/** Dashboard users only: decide on a case another moderator claimed, taking it over (else 409 naming who holds it). */
const takeOver = z
  .boolean()
  .optional()
  .meta({ description: "Dashboard sessions: decide on a case another moderator claimed, taking the claim over (without it: 409 naming who holds the claim). API keys are not bound by claims." });
const okWithId = z.object({ ok: z.literal(true), reportId: z.string() });
const decisionErrors = { 400: "Invalid body", 401: "Invalid or missing API key", 403: "Publishable key", 404: "Report not found", 409: "Not allowed in the report's status" };

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
  create: rateLimitedCreation
    .meta({
      family: "sdk",
      publishable: true,
      successStatus: 201,
      openapi: {
        method: "POST",
        path: "/projects/{projectId}/reports",
        summary: "Create a report",
        description:
          "Files a report about content (`target`) or a person (`subject`); one of them is required, and `reason` names one or more of the project's report categories. Subject and reporter identities are upserted. Allowed with a publishable key of the project. Rate limited per API key (429 with Retry-After): only accepted reports count, checked after everything else, so a request refused with 400, 401, 403 or 404 spends nothing and carries no RateLimit headers.",
        tags,
        errorResponses: { 400: "Invalid body or unknown reason", 401: "Invalid or missing API key", 403: "Key of another project", 404: "Project not found", 413: "Body too large", 429: "Too many reports" },
      },
    })
    .output(z.object({ report: createdReportSchema }))
    .mutation(async ({ ctx, input }) => {
      const created = await createReport(ctx.domain, {
        project: ctx.project,
        subject: input.subject,
        reporter: input.reporter,
        target: input.target,
        reasonNames: reasonNames(input.reason),
        description: input.description,
        automated: input.automated ?? false,
        notice: input.notice,
        media: input.media,
        enrichMaxAttempts: ctx.config.enrichMaxAttempts,
        slot: ctx.reportSlot,
      });
      return { report: created.report };
    }),

  list: projectProcedure(
    z.object({
      sort: z.enum(["asc", "desc"]).default("desc"),
      // An ISO timestamp with microseconds (the previous page's nextCursor): say so in the document.
      cursor: clientDateTime.meta({ description: "The previous page's `nextCursor` (an ISO timestamp)" }).optional(),
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
    .output(
      z.object({
        projects: z.array(projectRefSchema),
        reports: z.array(reportViewSchema),
        nextCursor: z.string().nullable(),
      }),
    )
    .query(({ ctx, input }) => reportsWithProjects(ctx.domain, { ...input, statuses: input.status })),

  get: secretProcedure
    .meta({
      family: "sdk",
      openapi: {
        method: "GET",
        path: "/reports/{reportId}",
        summary: "Get a report",
        description:
          "The report, and beside it its `outcome` once decided (`resolved`, `dismissed`, or `closed` after an appeal; null while open or appealed): the resolution code or dismissal reason, the public text to pass on to the reporter (the project's decision template of that kind, else a default sentence) and when it was decided.",
        tags,
        errorResponses: { 401: "Invalid or missing API key", 403: "Publishable key", 404: "Report not found" },
      },
    })
    .input(z.object(reportIdInput))
    .output(z.object({ report: reportViewSchema, outcome: reportOutcomeSchema.nullable() }))
    .query(({ ctx, input }) => reportWithOutcome(ctx.domain, input.reportId)),

  escalate: secretProcedure
    .meta({
      family: "sdk",
      openapi: {
        method: "POST",
        path: "/reports/{reportId}/escalate",
        summary: "Escalate a report",
        description: `Records the escalation to a team (default ${DEFAULT_TEAM}). Unless the report is RESOLVED it becomes IN_REVIEW, with its case and the case's other open reports (an APPEALED report too: its appeal stays pending and still decides it).`,
        tags,
        // Allowed from every status (on RESOLVED it is recorded and changes nothing): never a 409.
        errorResponses: { 404: "Report not found" },
      },
    })
    .input(z.object({ ...reportIdInput, team: z.enum(TEAMS).optional(), note: z.string().max(2000).optional(), takeOver }))
    .output(okWithId)
    .mutation(async ({ ctx, input }) => {
      await decideOnReport(ctx.domain, {
        reportId: input.reportId,
        decision: { action: "escalate", team: input.team ?? DEFAULT_TEAM, note: input.note },
        takeOver: input.takeOver,
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
          `From OPEN, TRIAGED or IN_REVIEW to RESOLVED, with its case and the case's other open reports; 409 from any other status. With \`resolutionCode\` ACCOUNT_LEVEL_ACTION (kind ${joinWords(ACCOUNT_KINDS, "or")}, applied to the report's subject) or CONTENT_LEVEL_ACTION (${joinWords(CONTENT_KINDS, "or")} of the report's target), \`action\` applies that enforcement action in the same step (announced by webhook) and the answer carries its \`enforcementActionId\`; with \`action.startsAt\` or \`action.startsInSeconds\` (at most a year ahead) the action is \`scheduled\` until then, as a created one is, and its \`durationSeconds\` counts from its start. Without \`action\`, CONTENT_LEVEL_ACTION on a report with a target and a subject records the content_removal it implies, with its statement of reasons (not announced; its id in \`enforcementActionId\`); ACCOUNT_LEVEL_ACTION records no action (the code does not say which).`,
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
        takeOver,
      }),
    )
    .output(z.object({ ok: z.literal(true), enforcementActionId: z.string().optional() }))
    .mutation(async ({ ctx, input }) => {
      const resolved = await resolveReport(ctx.domain, {
        reportId: input.reportId,
        resolution: { code: input.resolutionCode, note: input.note },
        action: input.action,
        takeOver: input.takeOver,
      });
      return { ok: true as const, ...resolved };
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
    .input(z.object({ ...reportIdInput, reason: z.enum(DISMISSAL_REASONS), note: z.string().max(2000).optional(), takeOver }))
    .output(z.object({ ok: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await decideOnReport(ctx.domain, {
        reportId: input.reportId,
        decision: { action: "dismiss", reason: input.reason, note: input.note },
        takeOver: input.takeOver,
      });
      return { ok: true as const };
    }),
});
