/** How an identity (a platform's user or other actor) looks to clients. */
import { z } from "zod";
import { isoDateTime } from "./common.ts";

/** The Identity resource of the spec: all fifteen fields, always present. */
export const identityViewSchema = z
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
    /** The name, else the username, else the external ID. */
    displayName: z.string(),
    /** "@username" when there is a username, else "type:externalId". */
    handleLabel: z.string(),
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
  })
  .meta({ id: "Identity" });
export type IdentityView = z.infer<typeof identityViewSchema>;

/** An identity as a report names its subject or reporter. */
export const identitySummarySchema = z.object({ id: z.string(), type: z.string(), externalId: z.string(), displayName: z.string(), handleLabel: z.string() });
export type IdentitySummary = z.infer<typeof identitySummarySchema>;

/** An identity as an enforcement action names it. */
export const identityRefViewSchema = z.object({ id: z.string(), type: z.string(), externalId: z.string() });
export type IdentityRefView = z.infer<typeof identityRefViewSchema>;
