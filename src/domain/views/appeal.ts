/** How an appeal against an enforcement action looks to clients, and its statuses. */
import { z } from "zod";
import { actorSchema, isoDateTime } from "./common.ts";
import { enforcementActionViewSchema } from "./enforcement.ts";
import { identitySummarySchema } from "./identity.ts";
import { STATUSES } from "./workflow.ts";

export const APPEAL_STATUSES = ["pending", "upheld", "overturned"] as const;
export type AppealStatus = (typeof APPEAL_STATUSES)[number];

/** How a moderator decides a pending appeal. */
export const APPEAL_DECISIONS = ["uphold", "overturn"] as const;
export type AppealDecision = (typeof APPEAL_DECISIONS)[number];

/**
 * The appeals inbox's filters: one status, or `decided` (upheld and overturned). Pending appeals
 * come oldest first (the review order), decided ones by their decision, newest first.
 */
export const APPEAL_FILTERS = ["pending", "decided", "upheld", "overturned"] as const;
export type AppealFilter = (typeof APPEAL_FILTERS)[number];

export const appealViewSchema = z
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
export type AppealView = z.infer<typeof appealViewSchema>;

/**
 * An appeal as the dashboard shows it (the inbox, the case and identity pages): the appeal, the
 * action it is against, whom that action applies to, the case it came from, and the email of
 * the dashboard user who decided it.
 */
export const appealItemSchema = z.object({
  appeal: appealViewSchema,
  action: enforcementActionViewSchema,
  identity: identitySummarySchema,
  case: z
    .object({ id: z.string(), status: z.enum(STATUSES), contentType: z.string().nullable(), contentExternalId: z.string().nullable() })
    .nullable(),
  decidedByEmail: z.string().nullable(),
});
export type AppealItem = z.infer<typeof appealItemSchema>;

/** One page of the inbox, with how many appeals wait and how many were decided (same project filter). */
export const appealInboxSchema = z.object({
  items: z.array(appealItemSchema),
  nextCursor: z.string().nullable(),
  counts: z.object({ pending: z.number().int(), decided: z.number().int() }),
});
export type AppealInbox = z.infer<typeof appealInboxSchema>;
