/** How a reporter's weight (DSA Art. 22 and 23) looks to the organization's clients. */
import { z } from "zod";
import { isoDateTime } from "./common.ts";
import { identityViewSchema } from "./identity.ts";

/** The longest mute reason. */
export const MUTE_REASON_MAX = 1000;

/**
 * A reporter's standing: the trusted-flagger mark (set by admins), the mute (until when, why)
 * and the accuracy of their decided reports, with a uniform prior: (upheld + 1) / (decided + 2).
 */
export const reporterViewSchema = z
  .object({
    trustedFlagger: z.boolean(),
    /** Until when the reporter's reports are stored but dismissed unseen; null when not muted (or the mute ended). */
    mutedUntil: isoDateTime.nullable(),
    muteReason: z.string().nullable(),
    /** (upheld + 1) / (decided + 2), between 0 and 1: 0.5 for a reporter with no decided report. */
    accuracy: z.number(),
    /** Reports of theirs resolved, dismissed or closed (system dismissals of a muted reporter's reports left out). */
    reportsDecided: z.number().int(),
  })
  .meta({ id: "Reporter" });
export type ReporterView = z.infer<typeof reporterViewSchema>;

export const identityReporterSchema = z.object({ identity: identityViewSchema, reporter: reporterViewSchema });
export type IdentityReporter = z.infer<typeof identityReporterSchema>;
