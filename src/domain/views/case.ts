/** How a case (the reports about one target, reviewed together) and its notes look to clients. */
import { z } from "zod";
import { STATUSES } from "./workflow.ts";
import { actorSchema, isoDateTime } from "./common.ts";
import { TEAMS } from "./report.ts";
import { BUCKETS } from "./severity.ts";

/** How the 409 of a case claimed by someone else begins: the dashboard recognises it and offers to take over. */
export const CLAIMED_BY = "This case is assigned to ";

/** The decisions that take a case out of review (the workflow actions of that name). */
export const CASE_DECISION_ACTIONS = ["resolve", "dismiss", "uphold", "overturn", "close"] as const;
export type CaseDecisionAction = (typeof CASE_DECISION_ACTIONS)[number];

export const caseViewSchema = z.object({
  id: z.string(),
  projectId: z.string(),
  status: z.enum(STATUSES),
  bucket: z.enum(BUCKETS),
  contentType: z.string().nullable(),
  contentExternalId: z.string().nullable(),
  subjectIdentityId: z.string().nullable(),
  reportCount: z.number().int(),
  assigneeId: z.string().nullable(),
  assignedAt: isoDateTime.nullable(),
  createdAt: isoDateTime,
  updatedAt: isoDateTime,
  lastReportAt: isoDateTime,
  /** The review queue the case is in; null for the organization's default queue. */
  queueId: z.string().nullable(),
  /** The team an open case was last escalated to; null once it is decided. */
  escalation: z.object({ team: z.enum(TEAMS), at: isoDateTime }).nullable(),
  /** The last decision that took the case out of review (resolution code or dismissal reason in `code`). */
  decision: z
    .object({ action: z.enum(CASE_DECISION_ACTIONS), code: z.string().nullable(), at: isoDateTime, by: actorSchema })
    .nullable(),
});
export type CaseView = z.infer<typeof caseViewSchema>;

/** A moderator's note on a case. */
export const noteViewSchema = z.object({
  id: z.string(),
  caseId: z.string(),
  author: actorSchema,
  body: z.string(),
  createdAt: isoDateTime,
});
export type NoteView = z.infer<typeof noteViewSchema>;

/**
 * How a case's reporters split by their accuracy (src/domain/identities/reporter-tally.ts): no
 * decided report yet; fewer than ACCURACY_MIN_DECIDED (too few to tell); then, over their
 * decided reports, at least two thirds upheld, at most one third, or between.
 */
export const ACCURACY_BANDS = ["noDecided", "fewDecided", "mostlyUpheld", "mixed", "mostlyNotUpheld"] as const;
export type AccuracyBand = (typeof ACCURACY_BANDS)[number];
/** Decided reports a reporter needs before its accuracy says something. */
export const ACCURACY_MIN_DECIDED = 3;
/** How many of a case's reasons the summary names, most reported first. */
export const SUMMARY_REASONS = 20;

const count = z.number().int().min(0);

/**
 * Who reported a case, counted by the server over all its reports (cases.reporterSummary): what a
 * moderator reads first on a case of many reports (a pile-on). The reporters' standing is as of
 * now; a reporter is new when it had filed no report before the case was opened.
 */
export const reporterSummarySchema = z
  .object({
    caseId: z.string(),
    reports: count,
    /** Reports without a reporter. */
    anonymousReports: count,
    /** Reports of the last hour. */
    reportsLastHour: count,
    distinctReporters: count,
    /** Reporters who had filed no report before the case was opened. */
    newReporters: count,
    /** Trusted flaggers (DSA Art. 22). */
    trustedReporters: count,
    /** Reporters muted now. */
    mutedReporters: count,
    /** The distinct reporters by accuracy band: the bands add up to distinctReporters. */
    accuracy: z.object(Object.fromEntries(ACCURACY_BANDS.map((b) => [b, count])) as Record<AccuracyBand, typeof count>),
    /** Reports per reason (a report of two reasons counts in both), most first, at most SUMMARY_REASONS. */
    reasons: z.array(z.object({ reason: z.string(), reports: count })),
    /** Further reasons, not named. */
    moreReasons: count,
  })
  .meta({ id: "CaseReporterSummary" });
export type ReporterSummary = z.infer<typeof reporterSummarySchema>;
