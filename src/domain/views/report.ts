/**
 * How a report looks to clients, and the vocabularies of deciding on one: statuses (the
 * workflow table's), resolution codes, dismissal reasons and escalation teams, each with its
 * record. No resolution code is spelt outside this module (test/architecture.test.ts): code
 * reads a code's facts from RESOLUTION_CODE_SPECS.
 */
import { z } from "zod";
import { STATUSES } from "./workflow.ts";
import { isoDateTime } from "./common.ts";
import { identitySummarySchema } from "./identity.ts";
import { SEVERITIES } from "./severity.ts";

// The statuses are the workflow table's (src/domain/views/workflow.ts, pure): clients see them here.
export { STATUSES, type Status } from "./workflow.ts";

export const RESOLUTION_CODES = [
  "NO_VIOLATION", "INSUFFICIENT_EVIDENCE", "DUPLICATE_REPORT", "SPAM_CONFIRMED", "HARASSMENT_CONFIRMED",
  "HATE_SPEECH_CONFIRMED", "THREATS_CONFIRMED", "FRAUD_OR_SCAM_CONFIRMED", "POLICY_EXCEPTION_CONTEXTUAL",
  "ESCALATED_EXTERNALLY", "ACCOUNT_LEVEL_ACTION", "CONTENT_LEVEL_ACTION",
] as const;
export type ResolutionCode = (typeof RESOLUTION_CODES)[number];

/**
 * What a decision says of the reported content: it broke a rule (`violation`: its reports'
 * reasons and severity stand), it did not (`no_violation`), or nothing at all (`duplicate`: the
 * decision is about the report, which repeats another). Evaluation sets read it
 * (src/domain/evaluation/sets.ts, decisionLabel).
 */
export type Finding = "violation" | "no_violation" | "duplicate";

/** What a resolution code says and does. */
export interface ResolutionCodeSpec {
  /**
   * The enforcement action it carries: one on the account (the report's subject) or on a piece
   * of content (the report's target), of the kinds of that level (ACTION_KIND_SPECS,
   * views/enforcement.ts); null for a finding, which carries none.
   */
  action: "account" | "content" | null;
  /** What it says of the reported content (Finding). */
  finding: Finding;
  /**
   * Whether a new strike policy counts its decisions (DEFAULT_STRIKE_CODES, views/strikes.ts):
   * every code that found a violation or took an action; a policy may name any code.
   */
  strikesByDefault: boolean;
  /** The code the dashboard's decision forms start with: exactly one says so. */
  isDefault: boolean;
}

/** Every resolution code with what it says and carries: the one place that says which codes take an action, find a violation or count a strike. */
export const RESOLUTION_CODE_SPECS = {
  NO_VIOLATION: { action: null, finding: "no_violation", strikesByDefault: false, isDefault: true },
  INSUFFICIENT_EVIDENCE: { action: null, finding: "no_violation", strikesByDefault: false, isDefault: false },
  DUPLICATE_REPORT: { action: null, finding: "duplicate", strikesByDefault: false, isDefault: false },
  SPAM_CONFIRMED: { action: null, finding: "violation", strikesByDefault: true, isDefault: false },
  HARASSMENT_CONFIRMED: { action: null, finding: "violation", strikesByDefault: true, isDefault: false },
  HATE_SPEECH_CONFIRMED: { action: null, finding: "violation", strikesByDefault: true, isDefault: false },
  THREATS_CONFIRMED: { action: null, finding: "violation", strikesByDefault: true, isDefault: false },
  FRAUD_OR_SCAM_CONFIRMED: { action: null, finding: "violation", strikesByDefault: true, isDefault: false },
  POLICY_EXCEPTION_CONTEXTUAL: { action: null, finding: "no_violation", strikesByDefault: false, isDefault: false },
  // Handed to an outside body (a regulator, the police): the reports' reasons stand, but no
  // strike by default, the outside body's finding being still to come.
  ESCALATED_EXTERNALLY: { action: null, finding: "violation", strikesByDefault: false, isDefault: false },
  ACCOUNT_LEVEL_ACTION: { action: "account", finding: "violation", strikesByDefault: true, isDefault: false },
  CONTENT_LEVEL_ACTION: { action: "content", finding: "violation", strikesByDefault: true, isDefault: false },
} as const satisfies { readonly [C in ResolutionCode]: ResolutionCodeSpec };

/** Resolution codes that carry an enforcement action: never applied in bulk without one. */
export const ACTION_RESOLUTION_CODES: readonly ResolutionCode[] = RESOLUTION_CODES.filter((c) => RESOLUTION_CODE_SPECS[c].action !== null);
export const isResolutionCode = (code: unknown): code is ResolutionCode => (RESOLUTION_CODES as readonly unknown[]).includes(code);
/** The code the dashboard's decision forms start with. */
export const DEFAULT_RESOLUTION_CODE: ResolutionCode = RESOLUTION_CODES.find((c) => RESOLUTION_CODE_SPECS[c].isDefault) ?? RESOLUTION_CODES[0];

export const DISMISSAL_REASONS = ["false_positive", "duplicate", "out_of_scope", "not_actionable", "other"] as const;
export type DismissalReason = (typeof DISMISSAL_REASONS)[number];

/** What a dismissal reason says. */
export interface DismissalReasonSpec {
  /** What a dismissal for it says of the reported content: no rule broken, or nothing at all (a duplicate). */
  finding: Exclude<Finding, "violation">;
  /** The reason the dashboard's decision forms start with: exactly one says so. */
  isDefault: boolean;
}
export const DISMISSAL_REASON_SPECS = {
  false_positive: { finding: "no_violation", isDefault: false },
  duplicate: { finding: "duplicate", isDefault: false },
  out_of_scope: { finding: "no_violation", isDefault: false },
  not_actionable: { finding: "no_violation", isDefault: true },
  other: { finding: "no_violation", isDefault: false },
} as const satisfies { readonly [R in DismissalReason]: DismissalReasonSpec };
export const isDismissalReason = (reason: unknown): reason is DismissalReason => (DISMISSAL_REASONS as readonly unknown[]).includes(reason);
/** The reason the dashboard's decision forms start with. */
export const DEFAULT_DISMISSAL_REASON: DismissalReason = DISMISSAL_REASONS.find((r) => DISMISSAL_REASON_SPECS[r].isDefault) ?? DISMISSAL_REASONS[0];

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
