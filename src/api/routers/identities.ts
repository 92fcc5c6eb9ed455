import { z } from "zod";
import { DomainError } from "../../domain/core/errors.ts";
import { listIdentities, saveIdentity } from "../../domain/identities/identities.ts";
import { getReporter, reporterWeights, updateReporter } from "../../domain/identities/reporters.ts";
import { hasRole } from "../../domain/accounts/users.ts";
import { jsonDepthExceeds } from "../../domain/plumbing/json-depth.ts";
import { externalIdSchema, projectIdSchema, typeNameSchema } from "../../domain/views/validation.ts";
import { identityViewSchema } from "../../domain/views/identity.ts";
import { identityReporterSchema, MUTE_REASON_MAX, reporterViewSchema } from "../../domain/views/reporter.ts";
import { clientInstant } from "../../domain/views/common.ts";
import { limitSchema } from "../schemas.ts";
import { projectProcedure, router, secretProcedure } from "../trpc.ts";

const displayText = (max: number) => z.string().max(max).nullable().optional();
const MAX_METADATA_DEPTH = 16;

/** The organization's route of one identity: its standing as a reporter (DSA Art. 22, 23). */
const reporterPath = "/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}";
const reporterKey = { orgSlug: z.string().min(1).max(64), projectId: projectIdSchema, typeName: typeNameSchema, externalId: externalIdSchema };

export const identitiesRouter = router({
  upsert: projectProcedure(
    z.object({
      projectId: projectIdSchema,
      typeName: typeNameSchema,
      externalId: externalIdSchema,
      display: z
        .object({ name: displayText(512), username: displayText(256), avatarUrl: displayText(2048) })
        .nullable()
        .optional(),
      metadata: z
        .unknown()
        .refine((m) => !jsonDepthExceeds(m, MAX_METADATA_DEPTH), `metadata must not nest deeper than ${MAX_METADATA_DEPTH} levels`)
        .optional(),
    }),
  )
    .meta({
      family: "sdk",
      openapi: {
        method: "PUT",
        path: "/projects/{projectId}/identities/{typeName}/{externalId}",
        summary: "Create or update an identity",
        description:
          "Creates the identity keyed by project + type + external ID, or updates it. A null, empty or omitted display value never clears a stored one; metadata is applied as a JSON Merge Patch (RFC 7396).",
        tags: ["identities"],
        errorResponses: { 400: "Invalid external ID or body", 401: "Invalid or missing API key", 403: "Publishable key", 404: "Project not found" },
      },
    })
    .output(z.object({ identity: identityViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const now = ctx.clock.now();
      const identity = await saveIdentity(ctx.domain, {
        projectId: ctx.project.id,
        type: input.typeName,
        externalId: input.externalId,
        display: input.display,
        metadata: input.metadata,
        seenAt: now,
        now,
      });
      return { identity };
    }),

  list: projectProcedure(
    z.object({
      projectId: projectIdSchema,
      limit: limitSchema(50),
      cursor: z.string().max(64).optional(),
      search: z.string().min(1).max(256).optional(),
    }),
  )
    .meta({
      family: "sdk",
      openapi: {
        method: "GET",
        path: "/projects/{projectId}/identities",
        summary: "List identities",
        description:
          "Identities of the project in creation order. `search` matches a prefix of the external ID (exact case), the name or the username (any case). Pass `nextCursor` back as `cursor` for the next page.",
        tags: ["identities"],
        errorResponses: { 400: "Invalid query", 401: "Invalid or missing API key", 403: "Publishable key", 404: "Project not found" },
      },
    })
    .output(z.object({ identities: z.array(identityViewSchema), nextCursor: z.string().nullable() }))
    .query(({ ctx, input }) => listIdentities(ctx.domain, { projectId: ctx.project.id, search: input.search, cursor: input.cursor, limit: input.limit })),

  /** Organization: an identity with its standing as a reporter. */
  reporter: projectProcedure(z.object(reporterKey))
    .meta({
      family: "org",
      openapi: {
        method: "GET",
        path: reporterPath,
        summary: "Get an identity and its standing as a reporter",
        description:
          "The identity (the SDK's fifteen fields) and `reporter`: whether it is a trusted flagger (DSA Art. 22), whether and until when it is muted (Art. 23), and its accuracy, (upheld + 1) / (decided + 2) over its decided reports.",
        tags: ["reporters"],
        errorResponses: { 404: "Organization, project or identity not found" },
      },
    })
    .output(identityReporterSchema)
    .query(({ ctx, input }) => getReporter(ctx.domain, { projectId: ctx.project.id, type: input.typeName, externalId: input.externalId })),

  /** Organization: marks a trusted flagger (admins), mutes or unmutes a reporter (moderators). */
  updateReporter: projectProcedure(
    z.object({
      ...reporterKey,
      trustedFlagger: z.boolean().optional(),
      mutedUntil: clientInstant.nullable().optional(),
      muteReason: z.string().max(MUTE_REASON_MAX).nullable().optional(),
    }),
  )
    .meta({
      family: "org",
      openapi: {
        method: "PATCH",
        path: reporterPath,
        summary: "Mark a trusted flagger, mute or unmute a reporter",
        description:
          "`trustedFlagger` (admins only): the identity's reports go first in the queue and say so. `mutedUntil` (a future ISO date-time, or null to unmute) with `muteReason`: until then the identity's reports are accepted as usual (201) but stored dismissed (`not_actionable`, by the system), never queued and never announced. Each change is audited.",
        tags: ["reporters"],
        errorResponses: { 403: "trustedFlagger needs the admin role", 404: "Organization, project or identity not found" },
      },
    })
    .output(identityReporterSchema)
    .mutation(({ ctx, input }) => {
      if (input.trustedFlagger !== undefined && !hasRole(ctx.caller.role, "admin")) {
        throw new DomainError("forbidden", "Marking a trusted flagger needs the admin role");
      }
      return updateReporter(ctx.domain, {
        projectId: ctx.project.id,
        type: input.typeName,
        externalId: input.externalId,
        patch: { trustedFlagger: input.trustedFlagger, mutedUntil: input.mutedUntil, muteReason: input.muteReason },
      });
    }),

  /** Dashboard (tRPC): the standing of the reporters of a case's reports, by identity id. */
  reporterWeights: secretProcedure
    .input(z.object({ identityIds: z.array(z.string().min(1).max(64)).max(200) }))
    .output(z.object({ reporters: z.record(z.string(), reporterViewSchema) }))
    .query(async ({ ctx, input }) => ({ reporters: await reporterWeights(ctx.domain, input.identityIds) })),
});
