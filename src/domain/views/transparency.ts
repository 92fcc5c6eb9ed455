/**
 * How the organization's Transparency Database submission (DSA Art. 24(5)) and its
 * transparency report (DSA Art. 15, 24) look to clients. The statements themselves are in the
 * DSA vocabulary of ./dsa.ts; these are the views around them.
 */
import { z } from "zod";
import { isoDateTime } from "./common.ts";

// ---------------------------------------------------------------------------------------------
// Submission to the EU Transparency Database

/** Where the organization submits its statements. The token is write-only: only `tokenSet` shows. */
export const submissionSettingsViewSchema = z
  .object({
    /** The API's base URL (statements go to `{endpointUrl}/statements`), or null when never set. */
    endpointUrl: z.string().nullable(),
    enabled: z.boolean(),
    /** Whether a token is stored (it is never shown). */
    tokenSet: z.boolean(),
    /** Statements not submitted yet (waiting, or rejected by the database and not sent again). */
    pendingStatements: z.number().int(),
    updatedAt: isoDateTime.nullable(),
  })
  .meta({ id: "TransparencySubmissionSettings" });
export type SubmissionSettingsView = z.infer<typeof submissionSettingsViewSchema>;

/**
 * An attempt's outcome: `submitted` (201, or the database already had these puids), `failed`
 * (refused: 422 names the statements it rejected, which are not sent again; any other failure
 * is retried with backoff).
 */
export const SUBMISSION_STATUSES = ["submitted", "failed"] as const;
export type SubmissionStatus = (typeof SUBMISSION_STATUSES)[number];

export const submissionAttemptViewSchema = z
  .object({
    id: z.string(),
    status: z.enum(SUBMISSION_STATUSES),
    /** The database's HTTP status, or null when no answer came (network, time-out, refused address). */
    httpStatus: z.number().int().nullable(),
    error: z.string().nullable(),
    /** The statements this attempt is about (at most 100). */
    puidsCount: z.number().int(),
    puids: z.array(z.string()),
    createdAt: isoDateTime,
  })
  .meta({ id: "TransparencySubmissionAttempt" });
export type SubmissionAttemptView = z.infer<typeof submissionAttemptViewSchema>;

// ---------------------------------------------------------------------------------------------
// The transparency report

/** A count under a key (a category, a source type, an action kind, a resolution code…). */
export const keyedCountSchema = z.object({ key: z.string(), count: z.number().int() });
export type KeyedCount = z.infer<typeof keyedCountSchema>;

/** The report sources: where a report came from, in the Transparency Database's source_type values. */
export const REPORT_SOURCES = ["SOURCE_ARTICLE_16", "SOURCE_TRUSTED_FLAGGER", "SOURCE_VOLUNTARY"] as const;

export const transparencyReportSchema = z
  .object({
    period: z.object({
      /** First day, YYYY-MM-DD (UTC). */
      from: z.string(),
      /** Last day included, YYYY-MM-DD (UTC). */
      to: z.string(),
      projectId: z.string().nullable(),
    }),
    generatedAt: isoDateTime,
    /**
     * Reports received in the period. `bySource`: SOURCE_TRUSTED_FLAGGER when the reporter was a
     * trusted flagger, SOURCE_ARTICLE_16 when it carried a notice, else SOURCE_VOLUNTARY.
     * `byCategory`: a report with two reasons counts under both. `automated`: filed by automated means.
     */
    reports: z.object({
      total: z.number().int(),
      bySource: z.array(keyedCountSchema),
      byCategory: z.array(z.object({ category: z.string(), count: z.number().int(), bySource: z.array(keyedCountSchema) })),
      automated: z.number().int(),
    }),
    /** Notices (Art. 16): reports with notice fields, and reports of trusted flaggers (Art. 22). */
    notices: z.object({ total: z.number().int(), article16: z.number().int(), trustedFlagger: z.number().int() }),
    /**
     * Decisions on reports taken in the period: resolutions by code, dismissals by reason; by
     * Flagstaff itself (automated) or by people and the platform's keys; the median time from a
     * report to its decision (the dismissals of muted reporters' reports are counted apart and
     * left out of the median).
     */
    decisions: z.object({
      total: z.number().int(),
      resolved: z.array(keyedCountSchema),
      dismissed: z.array(keyedCountSchema),
      automated: z.number().int(),
      mutedReporterDismissals: z.number().int(),
      medianMsToDecision: z.number().nullable(),
    }),
    /** Enforcement actions taken in the period, by kind. */
    actions: z.object({ total: z.number().int(), byKind: z.array(keyedCountSchema) }),
    /** Statements of reasons made in the period, by the database's fields. */
    statements: z.object({
      total: z.number().int(),
      byGround: z.array(keyedCountSchema),
      byCategory: z.array(keyedCountSchema),
      bySource: z.array(keyedCountSchema),
      automatedDetection: z.array(keyedCountSchema),
      automatedDecision: z.array(keyedCountSchema),
    }),
    /** Appeals (Art. 20 complaints): received in the period, decided in the period, median time to decide. */
    appeals: z.object({
      received: z.number().int(),
      pending: z.number().int(),
      upheld: z.number().int(),
      overturned: z.number().int(),
      medianMsToDecision: z.number().nullable(),
    }),
    /**
     * Decisions of the period against their service-level targets (docs/dsa.md): cases decided
     * whose queue has a decision target, appeals decided whose project has an appeal target, how
     * many within it, and the share (null when none had a target).
     */
    serviceLevels: z.object({
      casesDecided: z.number().int(),
      casesWithinTarget: z.number().int(),
      casesShareWithinTarget: z.number().nullable(),
      appealsDecided: z.number().int(),
      appealsWithinTarget: z.number().int(),
      appealsShareWithinTarget: z.number().nullable(),
    }),
  })
  .meta({ id: "TransparencyReport" });
export type TransparencyReport = z.infer<typeof transparencyReportSchema>;
