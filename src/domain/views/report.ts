/**
 * How a report looks to clients, and the vocabularies of deciding on one: statuses (the
 * workflow table's), resolution codes, dismissal reasons and escalation teams.
 */
import { z } from "zod";
import { STATUSES } from "../review/workflow.ts";
import { isoDateTime } from "./common.ts";
import { identitySummarySchema } from "./identity.ts";
import { SEVERITIES } from "./severity.ts";

// The statuses are the workflow table's (src/domain/review/workflow.ts, pure): clients see them here.
export { STATUSES, type Status } from "../review/workflow.ts";

export const RESOLUTION_CODES = [
  "NO_VIOLATION", "INSUFFICIENT_EVIDENCE", "DUPLICATE_REPORT", "SPAM_CONFIRMED", "HARASSMENT_CONFIRMED",
  "HATE_SPEECH_CONFIRMED", "THREATS_CONFIRMED", "FRAUD_OR_SCAM_CONFIRMED", "POLICY_EXCEPTION_CONTEXTUAL",
  "ESCALATED_EXTERNALLY", "ACCOUNT_LEVEL_ACTION", "CONTENT_LEVEL_ACTION",
] as const;
export type ResolutionCode = (typeof RESOLUTION_CODES)[number];

/** What a resolution code says beyond its finding. */
export interface ResolutionCodeSpec {
  /**
   * The enforcement action it carries: one on the account (the report's subject) or on a piece
   * of content (the report's target), of the kinds of that level (ACTION_KIND_SPECS,
   * views/enforcement.ts); null for a finding, which carries none.
   */
  action: "account" | "content" | null;
}

const FINDING: ResolutionCodeSpec = { action: null };

/** Every resolution code with what it carries: the one place that says which codes take an action. */
export const RESOLUTION_CODE_SPECS = {
  NO_VIOLATION: FINDING,
  INSUFFICIENT_EVIDENCE: FINDING,
  DUPLICATE_REPORT: FINDING,
  SPAM_CONFIRMED: FINDING,
  HARASSMENT_CONFIRMED: FINDING,
  HATE_SPEECH_CONFIRMED: FINDING,
  THREATS_CONFIRMED: FINDING,
  FRAUD_OR_SCAM_CONFIRMED: FINDING,
  POLICY_EXCEPTION_CONTEXTUAL: FINDING,
  ESCALATED_EXTERNALLY: FINDING,
  ACCOUNT_LEVEL_ACTION: { action: "account" },
  CONTENT_LEVEL_ACTION: { action: "content" },
} as const satisfies { readonly [C in ResolutionCode]: ResolutionCodeSpec };

/** Resolution codes that carry an enforcement action: never applied in bulk without one. */
export const ACTION_RESOLUTION_CODES: readonly ResolutionCode[] = RESOLUTION_CODES.filter((c) => RESOLUTION_CODE_SPECS[c].action !== null);
export const isResolutionCode = (code: unknown): code is ResolutionCode => (RESOLUTION_CODES as readonly unknown[]).includes(code);

export const DISMISSAL_REASONS = ["false_positive", "duplicate", "out_of_scope", "not_actionable", "other"] as const;
export type DismissalReason = (typeof DISMISSAL_REASONS)[number];

export const TEAMS = ["safety", "legal", "senior_moderator"] as const;
export type Team = (typeof TEAMS)[number];

/** What each escalation team is: its name in a sentence ("Escalated to senior moderator"), and the default. */
export interface TeamSpec {
  label: string;
  /** Where an escalation goes when it names no team: exactly one team says so. */
  isDefault: boolean;
}
export const TEAM_SPECS = {
  safety: { label: "safety", isDefault: false },
  legal: { label: "legal", isDefault: false },
  senior_moderator: { label: "senior moderator", isDefault: true },
} as const satisfies { [T in Team]: TeamSpec };
/** Where an escalation goes when it names no team. */
export const DEFAULT_TEAM: Team = TEAMS.find((t) => TEAM_SPECS[t].isDefault) ?? TEAMS[0];
/** A team's label; the report view carries the team as a plain string, so any other name reads as its words. */
export const teamLabel = (team: string): string => ((TEAMS as readonly string[]).includes(team) ? TEAM_SPECS[team as Team].label : team.replace(/_/g, " "));

// The decisions are stored as JSON and answered as stored: their codes, reasons, teams and
// actor types are plain strings in the published document.
const identitySummary = identitySummarySchema.nullable();
const decisionBase = { note: z.string().nullable(), at: isoDateTime, by: z.object({ type: z.string(), id: z.string().nullable() }) };

/**
 * A notice (DSA Art. 16): what a notifier may add to a report, all optional. The limits are
 * checked on creation (400 naming the field) and the fields are stored as given.
 */
export const NOTICE_LIMITS = { explanation: 5000, legalGround: 500, notifierName: 200, notifierEmail: 254 } as const;
const atMost = (n: number) => `must be at most ${n} characters`;
export const noticeInputSchema = z
  .object({
    explanation: z.string().max(NOTICE_LIMITS.explanation, atMost(NOTICE_LIMITS.explanation)).nullable().optional()
      .meta({ description: "Why the notifier considers the content illegal (DSA Art. 16(2)(a))" }),
    legalGround: z.string().max(NOTICE_LIMITS.legalGround, atMost(NOTICE_LIMITS.legalGround)).nullable().optional()
      .meta({ description: "The legal ground claimed, e.g. a law and its article" }),
    notifierName: z.string().max(NOTICE_LIMITS.notifierName, atMost(NOTICE_LIMITS.notifierName)).nullable().optional(),
    notifierEmail: z.email("must be an email address").max(NOTICE_LIMITS.notifierEmail, atMost(NOTICE_LIMITS.notifierEmail)).nullable().optional(),
    goodFaith: z.boolean().nullable().optional().meta({ description: "The notifier's statement that the notice is accurate and complete, in good faith" }),
  });
export type NoticeInput = z.infer<typeof noticeInputSchema>;

/** A report's notice as stored and shown: every field, null when not given. */
export const noticeSchema = z
  .object({
    explanation: z.string().nullable(),
    legalGround: z.string().nullable(),
    notifierName: z.string().nullable(),
    notifierEmail: z.string().nullable(),
    goodFaith: z.boolean().nullable(),
  })
  .meta({ id: "ReportNotice" });
export type Notice = z.infer<typeof noticeSchema>;

/** How a decided report ended, as its reporter may be told: resolved, dismissed, or closed (after an appeal). */
export const OUTCOMES = ["resolved", "dismissed", "closed"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/**
 * A report's outcome (null while it is not decided): `code` is the resolution code or the
 * dismissal reason, `text` the public sentence (the project's decision template of that kind,
 * else a default).
 */
export const reportOutcomeSchema = z
  .object({
    outcome: z.enum(OUTCOMES),
    code: z.string().nullable(),
    text: z.string(),
    decidedAt: isoDateTime,
  })
  .meta({ id: "ReportOutcome" });
export type ReportOutcome = z.infer<typeof reportOutcomeSchema>;

export const reportViewSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    caseId: z.string(),
    status: z.enum(STATUSES),
    severity: z.enum(SEVERITIES),
    reasons: z.array(z.string()),
    description: z.string().nullable(),
    automated: z.boolean(),
    subject: identitySummary,
    reporter: identitySummary,
    target: z.object({ contentType: z.string().nullable(), contentExternalId: z.string().nullable(), content: z.string().nullable() }).nullable(),
    escalation: z.object({ team: z.string(), applied: z.boolean(), ...decisionBase }).nullable(),
    resolution: z.object({ code: z.string().nullable(), ...decisionBase }).nullable(),
    dismissal: z.object({ reason: z.string(), ...decisionBase }).nullable(),
    /** The notice fields (DSA Art. 16) the report was filed with; null when none. */
    notice: noticeSchema.nullable(),
    /** The AI enrichment, once it has run. */
    ai: z
      .object({ severity: z.enum(SEVERITIES), categories: z.array(z.string()), confidence: z.number(), reasoning: z.string(), analyzedAt: isoDateTime })
      .nullable(),
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
  })
  .meta({ id: "Report" });
export type ReportView = z.infer<typeof reportViewSchema>;

/** What report creation answers: the new report is always OPEN. */
export const createdReportSchema = z.object({ id: z.string(), projectId: z.string(), status: z.literal("OPEN"), createdAt: isoDateTime });
export type CreatedReportView = z.infer<typeof createdReportSchema>;
