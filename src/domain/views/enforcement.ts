/** How an enforcement action looks to clients, and the vocabularies of its kinds and statuses. */
import { z } from "zod";
import { actorSchema, isoDateTime } from "./common.ts";
import { identityRefViewSchema } from "./identity.ts";

export const ACTION_KINDS = ["warning", "mute", "suspension", "ban", "content_removal"] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];
/** Kinds that act on the account, and on a piece of content (resolution codes ACCOUNT_/CONTENT_LEVEL_ACTION). */
export const ACCOUNT_KINDS: readonly ActionKind[] = ["warning", "mute", "suspension", "ban"];
export const CONTENT_KINDS: readonly ActionKind[] = ["content_removal"];
/** Kinds that may have an end: a suspension must have one, a mute may. */
export const TIMED_KINDS: readonly ActionKind[] = ["suspension", "mute"];

export const ACTION_STATUSES = ["active", "expired", "revoked"] as const;
export type ActionStatus = (typeof ACTION_STATUSES)[number];

export const enforcementActionViewSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    identityId: z.string(),
    identity: identityRefViewSchema,
    kind: z.enum(ACTION_KINDS),
    reason: z.string(),
    note: z.string().nullable(),
    reportId: z.string().nullable(),
    caseId: z.string().nullable(),
    /** The content acted on (content_removal) or that led to the action. */
    content: z.object({ contentType: z.string().nullable(), contentExternalId: z.string() }).nullable(),
    startsAt: isoDateTime,
    endsAt: isoDateTime.nullable(),
    /** When the scheduler recorded that the end was reached. */
    expiredAt: isoDateTime.nullable(),
    revokedAt: isoDateTime.nullable(),
    revokedBy: actorSchema.nullable(),
    revokeReason: z.string().nullable(),
    createdBy: actorSchema,
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
    /** In force now: not revoked, and its end (if any) not reached. */
    active: z.boolean(),
    status: z.enum(ACTION_STATUSES),
  })
  .meta({ id: "EnforcementAction" });
export type EnforcementActionView = z.infer<typeof enforcementActionViewSchema>;

/**
 * Whether an action of the kind stops the account (a suspension for a time, a ban for good), so
 * that its other open cases need no decision of their own and may be swept with it
 * (src/domain/sweep.ts). A warning or a mute leaves the account working; a content removal is
 * about one piece of content.
 */
export const SWEEPS_OPEN_CASES: Readonly<Record<ActionKind, boolean>> = { warning: false, mute: false, suspension: true, ban: true, content_removal: false };
