import { z } from "zod";
import {
  appealsInbox,
  appealWithAction,
  actionWithAppeals,
  decideAppeal,
  fileAppeal,
  listAppeals,
  revokeActionSettlingAppeal,
} from "../../domain/enforcement/appeals.ts";
import { actionEnd, actionStart, createEnforcementAction, findEnforcementActions, updateEnforcementAction } from "../../domain/enforcement/enforcement.ts";
import { cancelScheduledAction } from "../../domain/enforcement/scheduled.ts";
import { identityActionsWithStrikes } from "../../domain/enforcement/strike-ladder.ts";
import { identityStrikesSchema } from "../../domain/views/strikes.ts";
import { externalIdSchema, projectIdSchema, typeNameSchema } from "../../domain/views/validation.ts";
import { getActionStatement } from "../../domain/enforcement/statements.ts";
import { statementRecordSchema } from "../../domain/views/dsa.ts";
import { APPEAL_FILTERS, APPEAL_STATUSES, appealInboxSchema, appealViewSchema } from "../../domain/views/appeal.ts";
import {
  ACTION_KINDS,
  ACTION_STATUSES,
  actionContentSchema,
  actionIdentitySchema,
  actionNoteSchema,
  actionReasonSchema,
  actionStartFields,
  actionTimingFields,
  enforcementActionViewSchema,
  joinWords,
  pluralLabel,
} from "../../domain/views/enforcement.ts";
import { clientInstant } from "../../domain/views/common.ts";
import { limitSchema } from "../schemas.ts";
import { orgProcedure, projectProcedure, router } from "../trpc.ts";

const tags = ["enforcement"];
const id = z.string().min(1).max(64);
const orgSlug = z.string().min(1).max(64);

const orgProject = { orgSlug, projectId: projectIdSchema };
const base = "/organizations/{orgSlug}/projects/{projectId}/enforcement-actions";
const sdkErrors = { 400: "Invalid input", 401: "Invalid or missing API key", 403: "Publishable key", 404: "Project, identity or action not found" };

export const enforcementRouter = router({
  /** SDK (pull): an identity's actions, newest first, each saying whether it is in force. */
  identityActions: projectProcedure(
    z.object({
      projectId: projectIdSchema,
      typeName: typeNameSchema,
      externalId: externalIdSchema,
      active: z.enum(["true", "false"]).optional(),
      cursor: z.string().max(64).optional(),
      limit: limitSchema(100),
    }),
  )
    .meta({
      family: "sdk",
      openapi: {
        method: "GET",
        path: "/projects/{projectId}/identities/{typeName}/{externalId}/enforcement-actions",
        summary: "List an identity's enforcement actions",
        description:
          `The identity's ${joinWords(ACTION_KINDS.map(pluralLabel), "and")}, newest first. \`active\` is true while an action is in force (started, not revoked, end not reached); one created to start later is listed with \`status: scheduled\` and its \`startsAt\`. Filter with \`active=true|false\`; pass \`nextCursor\` back as \`cursor\`. \`strikes\` (an addition, the same on every page): the identity's strikes under the project's strike policy, \`total\` in force.`,
        tags,
        errorResponses: sdkErrors,
      },
    })
    .output(z.object({ actions: z.array(enforcementActionViewSchema), nextCursor: z.string().nullable(), strikes: identityStrikesSchema }))
    .query(({ ctx, input }) =>
      identityActionsWithStrikes(ctx.domain, {
        projectId: ctx.project.id,
        type: input.typeName,
        externalId: input.externalId,
        active: input.active === undefined ? undefined : input.active === "true",
        cursor: input.cursor,
        limit: input.limit,
      }),
    ),

  /** SDK: the platform forwards its user's appeal against an action. */
  appeal: projectProcedure(z.object({ projectId: projectIdSchema, actionId: id, text: z.string().trim().min(1).max(5000) }))
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
    .output(z.object({ appeal: appealViewSchema }))
    .mutation(async ({ ctx, input }) => ({
      appeal: await fileAppeal(ctx.domain, { projectId: ctx.project.id, actionId: input.actionId, text: input.text }),
    })),

  /** SDK: an action's statement of reasons (DSA Art. 17), to show the affected user. */
  statement: projectProcedure(z.object({ projectId: projectIdSchema, actionId: id }))
    .meta({
      family: "sdk",
      openapi: {
        method: "GET",
        path: "/projects/{projectId}/enforcement-actions/{actionId}/statement",
        summary: "Get an enforcement action's statement of reasons",
        description:
          "The statement of reasons made with the action, in the EU DSA Transparency Database API v2 field names (docs/dsa.md). 404 for an action that restricts nothing (a warning) and so has none.",
        tags,
        errorResponses: { ...sdkErrors, 404: "Project or action not found, or the action has no statement (a warning)" },
      },
    })
    .output(statementRecordSchema)
    .query(({ ctx, input }) => getActionStatement(ctx.domain, { projectId: ctx.project.id, actionId: input.actionId })),

  list: projectProcedure(
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
    .meta({ family: "org", openapi: { method: "GET", path: base, summary: "List enforcement actions", tags } })
    .output(z.object({ actions: z.array(enforcementActionViewSchema), nextCursor: z.string().nullable() }))
    .query(({ ctx, input }) => findEnforcementActions(ctx.domain, { ...input, projectId: ctx.project.id })),

  create: projectProcedure(
    z.object({
      ...orgProject,
      kind: z.enum(ACTION_KINDS),
      reason: actionReasonSchema,
      note: actionNoteSchema.nullable().optional(),
      identity: actionIdentitySchema.optional(),
      reportId: id.optional(),
      content: actionContentSchema.optional(),
      ...actionTimingFields,
      ...actionStartFields,
    }),
  )
    .meta({
      family: "org",
      successStatus: 201,
      openapi: {
        method: "POST",
        path: base,
        summary: "Create an enforcement action",
        description:
          "Records the action and announces it (`enforcement_action.created`). With `startsAt` or `startsInSeconds` (at most a year ahead) it is `scheduled` until the scheduler records its start (never on the clock alone), may be cancelled until then, and `durationSeconds` counts from its start; its statement of reasons and `enforcement_action.updated` (status active) come when it takes effect, before any answer says `active`.",
        tags,
      },
    })
    .output(z.object({ action: enforcementActionViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const startsAt = actionStart(ctx.domain, input);
      const action = await createEnforcementAction(ctx.domain, {
        project: ctx.project,
        kind: input.kind,
        reason: input.reason,
        note: input.note,
        identity: input.identity,
        reportId: input.reportId,
        content: input.content,
        startsAt,
        endsAt: actionEnd(ctx.domain, input, startsAt),
      });
      return { action };
    }),

  get: projectProcedure(z.object({ ...orgProject, actionId: id }))
    .meta({ family: "org", openapi: { method: "GET", path: `${base}/{actionId}`, summary: "Get an enforcement action and its appeals", tags } })
    .output(z.object({ action: enforcementActionViewSchema, appeals: z.array(appealViewSchema) }))
    .query(({ ctx, input }) => actionWithAppeals(ctx.domain, { projectId: ctx.project.id, actionId: input.actionId })),

  update: projectProcedure(
    z.object({
      ...orgProject,
      actionId: id,
      reason: actionReasonSchema.optional(),
      note: actionNoteSchema.nullable().optional(),
      endsAt: clientInstant.nullable().optional(),
      durationSeconds: actionTimingFields.durationSeconds,
    }),
  )
    .meta({ family: "org", openapi: { method: "PATCH", path: `${base}/{actionId}`, summary: "Change an enforcement action", tags, errorResponses: { 409: "The action is no longer in force or scheduled" } } })
    .output(z.object({ action: enforcementActionViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const action = await updateEnforcementAction(ctx.domain, {
        projectId: ctx.project.id,
        actionId: input.actionId,
        patch: { reason: input.reason, note: input.note, endsAt: input.endsAt, durationSeconds: input.durationSeconds },
      });
      return { action };
    }),

  revoke: projectProcedure(z.object({ ...orgProject, actionId: id, reason: actionNoteSchema.optional() }))
    .meta({ family: "org", openapi: { method: "POST", path: `${base}/{actionId}/revoke`, summary: "Revoke an enforcement action", tags, errorResponses: { 409: "The action is already revoked" } } })
    .output(z.object({ action: enforcementActionViewSchema }))
    // A pending appeal of the action is settled first: overturned by the revocation (docs/enforcement.md).
    .mutation(async ({ ctx, input }) => {
      const { action } = await revokeActionSettlingAppeal(ctx.domain, { actionId: input.actionId, projectId: ctx.project.id, reason: input.reason });
      return { action };
    }),

  /** Cancels a scheduled action before it takes effect (after: 409, revoke it). */
  cancel: projectProcedure(z.object({ ...orgProject, actionId: id, reason: actionNoteSchema.optional() }))
    .meta({
      family: "org",
      openapi: {
        method: "POST",
        path: `${base}/{actionId}/cancel`,
        summary: "Cancel a scheduled enforcement action",
        description:
          "Cancels an action that has not taken effect yet (status `scheduled`): its status becomes `cancelled`, it never restricts and gets no statement of reasons; announced by `enforcement_action.revoked`. 409 once it took effect (revoke it instead), or when it is already cancelled, revoked or over.",
        tags,
        errorResponses: { 409: "The action is not scheduled (it took effect: revoke it)" },
      },
    })
    .output(z.object({ action: enforcementActionViewSchema }))
    .mutation(async ({ ctx, input }) => ({
      action: await cancelScheduledAction(ctx.domain, { actionId: input.actionId, projectId: ctx.project.id, reason: input.reason }),
    })),

  listAppeals: projectProcedure(
    z.object({
      orgSlug,
      status: z.enum(APPEAL_STATUSES).optional(),
      projectId: projectIdSchema.optional(),
      actionId: id.optional(),
      cursor: z.string().max(64).optional(),
      limit: limitSchema(50),
    }),
  )
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
    .output(z.object({ appeals: z.array(appealViewSchema), nextCursor: z.string().nullable() }))
    .query(({ ctx, input }) => listAppeals(ctx.domain, input)),

  /**
   * The dashboard's appeals (tRPC only): the inbox (pending oldest first, decided by decision,
   * newest first), or the appeals of a case or of an identity, each with its action, the
   * identity, the case and who decided it, and the counts of pending and decided appeals.
   */
  appealsInbox: projectProcedure(
    z.object({
      projectId: projectIdSchema.optional(),
      status: z.enum(APPEAL_FILTERS).optional(),
      caseId: id.optional(),
      identityId: id.optional(),
      cursor: z.string().max(120).optional(),
      limit: limitSchema(25),
    }),
  )
    .output(appealInboxSchema)
    .query(({ ctx, input }) => appealsInbox(ctx.domain, { ...input, projectId: ctx.project?.id })),

  getAppeal: orgProcedure(z.object({ orgSlug, appealId: id }))
    .meta({ family: "org", openapi: { method: "GET", path: "/organizations/{orgSlug}/appeals/{appealId}", summary: "Get an appeal and its action", tags } })
    .output(z.object({ appeal: appealViewSchema, action: enforcementActionViewSchema }))
    .query(({ ctx, input }) => appealWithAction(ctx.domain, input.appealId)),

  upholdAppeal: orgProcedure(z.object({ orgSlug, appealId: id, note: actionNoteSchema.optional() }))
    .meta({
      family: "org",
      openapi: {
        method: "POST",
        path: "/organizations/{orgSlug}/appeals/{appealId}/uphold",
        summary: "Uphold an appeal's decision",
        description: "The action stands; the report (APPEALED, or IN_REVIEW when escalated while the appeal waited) and its case go to CLOSED. 409 once the appeal is decided.",
        tags,
        errorResponses: { 409: "The appeal is already decided" },
      },
    })
    .output(z.object({ appeal: appealViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const { appeal } = await decideAppeal(ctx.domain, { appealId: input.appealId, decision: "uphold", note: input.note });
      return { appeal };
    }),

  overturnAppeal: orgProcedure(z.object({ orgSlug, appealId: id, note: actionNoteSchema.optional() }))
    .meta({
      family: "org",
      openapi: {
        method: "POST",
        path: "/organizations/{orgSlug}/appeals/{appealId}/overturn",
        summary: "Overturn the decision an appeal is against",
        description:
          "The appealed action, and every other unrevoked action of the same report, is revoked (and announced by webhook); the report (APPEALED, or IN_REVIEW when escalated while the appeal waited) and its case go to CLOSED. 409 once the appeal is decided.",
        tags,
        errorResponses: { 409: "The appeal is already decided" },
      },
    })
    .output(z.object({ appeal: appealViewSchema, revoked: z.array(enforcementActionViewSchema) }))
    .mutation(({ ctx, input }) => decideAppeal(ctx.domain, { appealId: input.appealId, decision: "overturn", note: input.note })),
});
