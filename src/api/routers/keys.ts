import { z } from "zod";
import { createApiKey, listApiKeys, revokeApiKey } from "../../domain/accounts/keys.ts";
import { apiKeyViewSchema, KEY_KINDS } from "../../domain/views/api-key.ts";
import { orgProcedure, projectProcedure, router } from "../trpc.ts";

const orgSlug = z.string().min(1).max(64);
const tags = ["api-keys"];

export const keysRouter = router({
  list: orgProcedure(z.object({ orgSlug }))
    .meta({ role: "admin", family: "org", openapi: { method: "GET", path: "/organizations/{orgSlug}/api-keys", summary: "List API keys", tags } })
    .output(z.object({ apiKeys: z.array(apiKeyViewSchema) }))
    .query(async ({ ctx }) => ({ apiKeys: await listApiKeys(ctx.domain, { orgId: ctx.org.id }) })),

  create: projectProcedure(
    z.object({
      orgSlug,
      projectId: z.string().min(1).max(64),
      kind: z.enum(KEY_KINDS),
      name: z.string().min(1).max(100).optional(),
      reportRateLimit: z.number().int().min(1).max(1_000_000).nullable().optional(),
    }),
  )
    .meta({
      role: "admin",
      family: "org",
      successStatus: 201,
      openapi: {
        method: "POST",
        path: "/organizations/{orgSlug}/api-keys",
        summary: "Create an API key (the key is shown once)",
        tags,
      },
    })
    .output(z.object({ key: z.string(), apiKey: apiKeyViewSchema }))
    .mutation(({ ctx, input }) => createApiKey(ctx.domain, { ...input, projectId: ctx.project.id })),

  revoke: orgProcedure(z.object({ orgSlug, keyId: z.string().min(1).max(64) }))
    .meta({
      role: "admin",
      family: "org",
      openapi: { method: "POST", path: "/organizations/{orgSlug}/api-keys/{keyId}/revoke", summary: "Revoke an API key", tags },
    })
    .output(z.object({ apiKey: apiKeyViewSchema }))
    .mutation(async ({ ctx, input }) => ({ apiKey: await revokeApiKey(ctx.domain, { orgId: ctx.org.id, keyId: input.keyId }) })),
});
