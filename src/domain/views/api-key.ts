/** How an API key looks to clients (never the key itself: that is shown once, at creation). */
import { z } from "zod";
import { isoDateTime } from "./common.ts";

export const KEY_KINDS = ["secret", "publishable"] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

export const apiKeyViewSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    kind: z.enum(KEY_KINDS),
    name: z.string(),
    prefix: z.string(),
    reportRateLimit: z.number().int().nullable(),
    createdAt: isoDateTime,
    lastUsedAt: isoDateTime.nullable(),
    revokedAt: isoDateTime.nullable(),
  })
  .meta({ id: "ApiKey" });
export type ApiKeyView = z.infer<typeof apiKeyViewSchema>;
