import { z } from "zod";
import { listIdentities, saveIdentity } from "../../domain/identities.ts";
import { jsonDepthExceeds } from "../../domain/json-depth.ts";
import { externalIdSchema, projectIdSchema, typeNameSchema } from "../../domain/validation.ts";
import { identityViewSchema } from "../../domain/views/identity.ts";
import { limitSchema } from "../schemas.ts";
import { projectProcedure, router } from "../trpc.ts";

const displayText = (max: number) => z.string().max(max).nullable().optional();
const MAX_METADATA_DEPTH = 16;

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
});
