/** How a project's report categories look to clients, and as the report reasons SDKs offer. */
import { z } from "zod";
import { isoDateTime } from "./common.ts";
import { SEVERITIES } from "./severity.ts";

export const categoryViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    severityHint: z.enum(SEVERITIES),
    /** Marked graphic by the project: a case naming it opens behind a warning screen in the dashboard. */
    graphic: z.boolean(),
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
  })
  .meta({ id: "ReportCategory" });
export type CategoryView = z.infer<typeof categoryViewSchema>;

/** A category as a report reason (GET report-reasons, publishable keys allowed). */
export const reportReasonSchema = z.object({ id: z.string(), name: z.string(), description: z.string().nullable(), severityHint: z.enum(SEVERITIES) });
export type ReportReason = z.infer<typeof reportReasonSchema>;
