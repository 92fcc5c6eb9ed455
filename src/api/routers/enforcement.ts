import { z } from "zod";
import { decideAppeal, fileAppeal, getAppeal, listAppeals, APPEAL_STATUSES } from "../../domain/appeals.ts";
import { badRequest } from "../../domain/errors.ts";
import {
  ACTION_KINDS,
  ACTION_STATUSES,
  createEnforcementAction,
  getActionView,
  listEnforcementActions,
  requireAction,
  requireIdentityId,
  revokeEnforcementAction,
  updateEnforcementAction,
} from "../../domain/enforcement.ts";
import { requireProject } from "../../domain/projects.ts";
import { externalIdSchema, projectIdSchema, typeNameSchema } from "../../domain/validation.ts";
import { isoDateTime, limitSchema } from "../schemas.ts";
import { organizationFor, projectFor, router, secretProcedure } from "../trpc.ts";

const tags = ["enforcement"];
const id = z.string().min(1).max(64);
const orgSlug = z.string().min(1).max(64);

const actorSchema = z.object({ type: z.enum(["api_key", "user", "system"]), id: z.string().nullable() });

export const enforcementActionSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    identityId: z.string(),
    identity: z.object({ id: z.string(), type: z.string(), externalId: z.string() }),
    kind: z.enum(ACTION_KINDS),
    reason: z.string(),
    note: z.string().nullable(),
    reportId: z.string().nullable(),
    caseId: z.string().nullable(),
    content: z.object({ contentType: z.string().nullable(), contentExternalId: z.string() }).nullable(),
    startsAt: isoDateTime,
    endsAt: isoDateTime.nullable(),
    expiredAt: isoDateTime.nullable(),
    revokedAt: isoDateTime.nullable(),
    revokedBy: actorSchema.nullable(),
    revokeReason: z.string().nullable(),
    createdBy: actorSchema,
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
    active: z.boolean(),
    status: z.enum(ACTION_STATUSES),
  })
  .meta({ id: "EnforcementAction" });

const appealSchema = z
  .object({
    id: z.string(),
    actionId: z.string(),
    projectId: z.string(),
    reportId: z.string().nullable(),
    caseId: z.string().nullable(),
    text: z.string(),
    status: z.enum(APPEAL_STATUSES),
    decision: z.object({ by: actorSchema, note: z.string().nullable(), at: isoDateTime }).nullable(),
    createdAt: isoDateTime,
    decidedAt: isoDateTime.nullable(),
  })
  .meta({ id: "Appeal" });

const MAX_DURATION_S = 10 * 365 * 24 * 3600;
const reasonText = z.string().trim().min(1).max(1000);
const noteText = z.string().max(2000);
const identityRef = z.object({ type: typeNameSchema, externalId: externalIdSchema });
const contentRef = z.object({ contentType: z.string().min(1).max(64).nullable().optional(), contentExternalId: externalIdSchema });
/** An ISO date-time (with zone), as milliseconds since the epoch. */
const instant = z
  .string()
  .max(64)
  .refine((s) => /^\d{4}-\d\d-\d\dT/.test(s) && !Number.isNaN(Date.parse(s)), "must be an ISO date-time such as 2030-01-31T12:00:00Z")
  .transform((s) => Date.parse(s));
const timing = {
  /** When the action ends (suspensions need one; mutes may have one). */
  endsAt: instant.optional(),
  /** Or: how long from now, in seconds. */
  durationSeconds: z.number().int().min(1).max(MAX_DURATION_S).optional(),
};

/** `endsAt` or `durationSeconds` (not both) as an end in ms; undefined when neither is given. */
export function endFrom(input: { endsAt?: number | null; durationSeconds?: number }, now: number): number | null | undefined {
  if (input.endsAt != null && input.durationSeconds !== undefined) throw badRequest("give endsAt or durationSeconds, not both");
  if (input.durationSeconds !== undefined) return now + input.durationSeconds * 1000;
  return input.endsAt;
}

/** The action a resolution applies (reports.resolve with ACCOUNT_LEVEL_ACTION or CONTENT_LEVEL_ACTION). */
export const resolveActionSchema = z.object({
  kind: z.enum(ACTION_KINDS).optional(),
  reason: reasonText.optional(),
  note: noteText.nullable().optional(),
  identity: identityRef.optional(),
  content: contentRef.optional(),
  ...timing,
});

const orgProject = { orgSlug, projectId: projectIdSchema };
const base = "/organizations/{orgSlug}/projects/{projectId}/enforcement-actions";
const sdkErrors = { 400: "Invalid input", 401: "Invalid or missing API key", 403: "Publishable key", 404: "Project, identity or action not found" };

export const enforcementRouter = router({
  /** SDK (pull): an identity's actions, newest first, each saying whether it is in force. */
  identityActions: secretProcedure
    .meta({
      family: "sdk",
      openapi: {
        method: "GET",
        path: "/projects/{projectId}/identities/{typeName}/{externalId}/enforcement-actions",
        summary: "List an identity's enforcement actions",
        description:
          "The identity's warnings, mutes, suspensions, bans and content removals, newest first. `active` is true while an action is in force (not revoked, end not reached). Filter with `active=true|false`; pass `nextCursor` back as `cursor`.",
        tags,
        errorResponses: sdkErrors,
      },
    })
    .input(
      z.object({
        projectId: projectIdSchema,
        typeName: typeNameSchema,
        externalId: externalIdSchema,
        active: z.enum(["true", "false"]).optional(),
        cursor: z.string().max(64).optional(),
        limit: limitSchema(100),
      }),
    )
    .output(z.object({ actions: z.array(enforcementActionSchema), nextCursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => {
      const project = await projectFor(ctx, input.projectId);
      const identityId = await requireIdentityId(ctx.domain, { projectId: project.id, type: input.typeName, externalId: input.externalId });
      const active = input.active === undefined ? undefined : input.active === "true";
      return listEnforcementActions(ctx.domain, { projectId: project.id, identityId, active, cursor: input.cursor, limit: input.limit });
    }),

  /** SDK: the platform forwards its user's appeal against an action. */
  appeal: secretProcedure
    .meta({
      family: "sdk",
      successStatus: 201,
      openapi: {
        method: "POST",
        path: "/projects/{projectId}/enforcement-actions/{actionId}/appeal",
        summary: "Appeal an enforcement action",
        description:
          "Files the user's appeal (`text`). The action's report and its case move from RESOLVED to APPEALED until a moderator upholds or overturns the appeal. 409 when the report is not RESOLVED, the action is revoked, or the action already has an appeal.",
        tags,
        errorResponses: { ...sdkErrors, 409: "Not appealable now" },
      },
    })
    .input(z.object({ projectId: projectIdSchema, actionId: id, text: z.string().trim().min(1).max(5000) }))
    .output(z.object({ appeal: appealSchema }))
    .mutation(async ({ ctx, input }) => {
      const project = await projectFor(ctx, input.projectId);
      return { appeal: await fileAppeal(ctx.domain, { projectId: project.id, actionId: input.actionId, text: input.text }) };
    }),

  list: secretProcedure
    .meta({ family: "org", openapi: { method: "GET", path: base, summary: "List enforcement actions", tags } })
    .input(
      z.object({
        ...orgProject,
        identityType: typeNameSchema.optional(),
        externalId: externalIdSchema.optional(),
        kind: z.enum(ACTION_KINDS).optional(),
        status: z.enum(ACTION_STATUSES).optional(),
        reportId: id.optional(),
        cursor: z.string().max(64).optional(),
        limit: limitSchema(50),
      }),
    )
    .output(z.object({ actions: z.array(enforcementActionSchema), nextCursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const project = await requireProject(ctx.domain, input.projectId);
      if ((input.identityType === undefined) !== (input.externalId === undefined)) {
        throw badRequest("identityType and externalId go together");
      }
      let identityId: string | undefined;
      if (input.identityType !== undefined && input.externalId !== undefined) {
        try {
          identityId = await requireIdentityId(ctx.domain, { projectId: project.id, type: input.identityType, externalId: input.externalId });
        } catch {
          return { actions: [], nextCursor: null };
        }
      }
      return listEnforcementActions(ctx.domain, { ...input, projectId: project.id, identityId });
    }),

  create: secretProcedure
    .meta({ family: "org", successStatus: 201, openapi: { method: "POST", path: base, summary: "Create an enforcement action", tags } })
    .input(
      z.object({
        ...orgProject,
        kind: z.enum(ACTION_KINDS),
        reason: reasonText,
        note: noteText.nullable().optional(),
        identity: identityRef.optional(),
        reportId: id.optional(),
        content: contentRef.optional(),
        ...timing,
      }),
    )
    .output(z.object({ action: enforcementActionSchema }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const project = await requireProject(ctx.domain, input.projectId);
      const action = await createEnforcementAction(ctx.domain, {
        project,
        kind: input.kind,
        reason: input.reason,
        note: input.note,
        identity: input.identity,
        reportId: input.reportId,
        content: input.content,
        endsAt: endFrom(input, ctx.clock.now()),
      });
      return { action };
    }),

  get: secretProcedure
    .meta({ family: "org", openapi: { method: "GET", path: `${base}/{actionId}`, summary: "Get an enforcement action and its appeals", tags } })
    .input(z.object({ ...orgProject, actionId: id }))
    .output(z.object({ action: enforcementActionSchema, appeals: z.array(appealSchema) }))
    .query(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const project = await requireProject(ctx.domain, input.projectId);
      const row = await requireAction(ctx.domain, { actionId: input.actionId, projectId: project.id });
      return {
        action: await getActionView(ctx.domain, row),
        appeals: (await listAppeals(ctx.domain, { actionId: row.id, limit: 100 })).appeals,
      };
    }),

  update: secretProcedure
    .meta({ family: "org", openapi: { method: "PATCH", path: `${base}/{actionId}`, summary: "Change an enforcement action", tags, errorResponses: { 409: "The action is no longer in force" } } })
    .input(
      z.object({
        ...orgProject,
        actionId: id,
        reason: reasonText.optional(),
        note: noteText.nullable().optional(),
        endsAt: instant.nullable().optional(),
        durationSeconds: timing.durationSeconds,
      }),
    )
    .output(z.object({ action: enforcementActionSchema }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const project = await requireProject(ctx.domain, input.projectId);
      if (input.endsAt !== undefined && input.durationSeconds !== undefined) throw badRequest("give endsAt or durationSeconds, not both");
      const endsAt = input.durationSeconds !== undefined ? ctx.clock.now() + input.durationSeconds * 1000 : input.endsAt;
      const action = await updateEnforcementAction(ctx.domain, {
        projectId: project.id,
        actionId: input.actionId,
        patch: { reason: input.reason, note: input.note, endsAt },
      });
      return { action };
    }),

  revoke: secretProcedure
    .meta({ family: "org", openapi: { method: "POST", path: `${base}/{actionId}/revoke`, summary: "Revoke an enforcement action", tags, errorResponses: { 409: "The action is already revoked" } } })
    .input(z.object({ ...orgProject, actionId: id, reason: noteText.optional() }))
    .output(z.object({ action: enforcementActionSchema }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const project = await requireProject(ctx.domain, input.projectId);
      const action = await revokeEnforcementAction(ctx.domain, { actionId: input.actionId, projectId: project.id, reason: input.reason });
      return { action };
    }),

  listAppeals: secretProcedure
    .meta({
      family: "org",
      openapi: {
        method: "GET",
        path: "/organizations/{orgSlug}/appeals",
        summary: "List appeals",
        description: "`status=pending` lists the appeals waiting for a decision, oldest first; otherwise newest first.",
        tags,
      },
    })
    .input(
      z.object({
        orgSlug,
        status: z.enum(APPEAL_STATUSES).optional(),
        projectId: projectIdSchema.optional(),
        actionId: id.optional(),
        cursor: z.string().max(64).optional(),
        limit: limitSchema(50),
      }),
    )
    .output(z.object({ appeals: z.array(appealSchema), nextCursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      if (input.projectId) await requireProject(ctx.domain, input.projectId);
      return listAppeals(ctx.domain, input);
    }),

  getAppeal: secretProcedure
    .meta({ family: "org", openapi: { method: "GET", path: "/organizations/{orgSlug}/appeals/{appealId}", summary: "Get an appeal and its action", tags } })
    .input(z.object({ orgSlug, appealId: id }))
    .output(z.object({ appeal: appealSchema, action: enforcementActionSchema }))
    .query(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const appeal = await getAppeal(ctx.domain, input.appealId);
      return { appeal, action: await getActionView(ctx.domain, await requireAction(ctx.domain, { actionId: appeal.actionId })) };
    }),

  upholdAppeal: secretProcedure
    .meta({
      family: "org",
      openapi: {
        method: "POST",
        path: "/organizations/{orgSlug}/appeals/{appealId}/uphold",
        summary: "Uphold an appeal's decision",
        description: "The action stands; the report and its case go from APPEALED to CLOSED. 409 once the appeal is decided.",
        tags,
        errorResponses: { 409: "The appeal is already decided" },
      },
    })
    .input(z.object({ orgSlug, appealId: id, note: noteText.optional() }))
    .output(z.object({ appeal: appealSchema }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const { appeal } = await decideAppeal(ctx.domain, { appealId: input.appealId, decision: "uphold", note: input.note });
      return { appeal };
    }),

  overturnAppeal: secretProcedure
    .meta({
      family: "org",
      openapi: {
        method: "POST",
        path: "/organizations/{orgSlug}/appeals/{appealId}/overturn",
        summary: "Overturn the decision an appeal is against",
        description:
          "The appealed action, and every other unrevoked action of the same report, is revoked (and announced by webhook); the report and its case go from APPEALED to CLOSED. 409 once the appeal is decided.",
        tags,
        errorResponses: { 409: "The appeal is already decided" },
      },
    })
    .input(z.object({ orgSlug, appealId: id, note: noteText.optional() }))
    .output(z.object({ appeal: appealSchema, revoked: z.array(enforcementActionSchema) }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      return decideAppeal(ctx.domain, { appealId: input.appealId, decision: "overturn", note: input.note });
    }),
});
