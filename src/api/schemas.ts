/** Output schemas shared by several operations; each describes a resource as clients see it. */
import { z } from "zod";

export const isoDateTime = z.string().meta({ format: "date-time" });

export const identitySchema = z
  .object({
    id: z.string(),
    externalId: z.string(),
    projectId: z.string(),
    type: z.string(),
    name: z.string().nullable(),
    username: z.string().nullable(),
    avatarUrl: z.string().nullable(),
    metadata: z.unknown(),
    reportCount: z.number().int(),
    lastSeenAt: isoDateTime.nullable(),
    lastReportedAt: isoDateTime.nullable(),
    displayName: z.string(),
    handleLabel: z.string(),
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
  })
  .meta({ id: "Identity" });

export const okSchema = z.object({ ok: z.literal(true) });

export const apiKeySchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    kind: z.enum(["secret", "publishable"]),
    name: z.string(),
    prefix: z.string(),
    reportRateLimit: z.number().int().nullable(),
    createdAt: isoDateTime,
    lastUsedAt: isoDateTime.nullable(),
    revokedAt: isoDateTime.nullable(),
  })
  .meta({ id: "ApiKey" });

/** Paging size of list routes: 1 to 100 (the spec's page size range). */
export const limitSchema = (fallback: number) => z.coerce.number().int().min(1).max(100).default(fallback);
