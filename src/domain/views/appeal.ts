/** How an appeal against an enforcement action looks to clients, and its statuses. */
import { z } from "zod";
import { actorSchema, isoDateTime } from "./common.ts";

export const APPEAL_STATUSES = ["pending", "upheld", "overturned"] as const;
export type AppealStatus = (typeof APPEAL_STATUSES)[number];

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
