import { z } from "zod";
import { createApiKey, listApiKeys, revokeApiKey } from "../../domain/keys.ts";
import { requireProject } from "../../domain/projects.ts";
import { apiKeySchema } from "../schemas.ts";
import { organizationFor, router, secretProcedure } from "../trpc.ts";

const orgSlug = z.string().min(1).max(64);
const tags = ["api-keys"];

export const keysRouter = router({
  list: secretProcedure
    .meta({ role: "admin", family: "org", openapi: { method: "GET", path: "/organizations/{orgSlug}/api-keys", summary: "List API keys", tags } })
    .input(z.object({ orgSlug }))
    .output(z.object({ apiKeys: z.array(apiKeySchema) }))
    .query(async ({ ctx, input }) => {
      const org = await organizationFor(ctx, input.orgSlug);
      return { apiKeys: await listApiKeys(ctx.domain, { orgId: org.id }) };
    }),

  create: secretProcedure
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
    .input(
      z.object({
        orgSlug,
        projectId: z.string().min(1).max(64),
        kind: z.enum(["secret", "publishable"]),
        name: z.string().min(1).max(100).optional(),
        reportRateLimit: z.number().int().min(1).max(1_000_000).nullable().optional(),
      }),
    )
    .output(z.object({ key: z.string(), apiKey: apiKeySchema }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const project = await requireProject(ctx.domain, input.projectId);
      return createApiKey(ctx.domain, { ...input, projectId: project.id });
    }),

  revoke: secretProcedure
    .meta({
      role: "admin",
      family: "org",
      openapi: { method: "POST", path: "/organizations/{orgSlug}/api-keys/{keyId}/revoke", summary: "Revoke an API key", tags },
    })
    .input(z.object({ orgSlug, keyId: z.string().min(1).max(64) }))
    .output(z.object({ apiKey: apiKeySchema }))
    .mutation(async ({ ctx, input }) => {
      const org = await organizationFor(ctx, input.orgSlug);
      return { apiKey: await revokeApiKey(ctx.domain, { orgId: org.id, keyId: input.keyId }) };
    }),
});
