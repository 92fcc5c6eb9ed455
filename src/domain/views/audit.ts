/**
 * The audit trail's catalogue: every action an audit event can record, with what it is about
 * (entity types), the shapes of its `before`, `after` and `data`, and a label for people. The
 * writer (recordAudit in src/domain/core/audit.ts) is typed by it, the audit queries validate their
 * `action` filter against it, and the dashboard takes its labels and filters from it.
 *
 * The shapes type the writer's arguments; they are not checked at run time (an audit event is
 * written on every change, report creation included).
 */
import { z } from "zod";
import { ANALYSIS_SOURCES } from "./analysis.ts";
import { APPEAL_STATUSES } from "./appeal.ts";
import { categoryViewSchema } from "./category.ts";
import { actorSchema, isoDateTime, limitSchema } from "./common.ts";
import { ACTION_KINDS, ACTION_STATUSES, IMPLYING_CODES } from "./enforcement.ts";
import { POLICY_STATUSES } from "./policy.ts";
import { projectViewSchema } from "./project.ts";
import { TEAMS } from "./report.ts";
import { aiSettingsSchema } from "./settings.ts";
import { dsaSettingsSchema } from "./dsa.ts";
import { strikePolicySchema } from "./strikes.ts";
import { TEMPLATE_KINDS } from "./template.ts";
import { BUCKETS, SEVERITIES } from "./severity.ts";
import { ROLES } from "./user.ts";
import { OIDC_FAILURE_CODES, oidcSettingsInputSchema, SSO_LINK_PROOFS, type OidcFailure } from "./sso.ts";
import { viewingDefaultsSchema } from "./viewing.ts";
import { DELIVERY_STATUSES, EVENT_TYPES } from "./webhook.ts";
import { bankActionSchema, SIGNAL_TYPES } from "./media-bank.ts";

/** What an audit event can be about. */
export const ENTITY_TYPES = [
  "report", "case", "appeal", "enforcement_action", "content_analysis", "url", "project", "category", "user", "webhook_endpoint", "webhook_delivery",
  "decision_template", "bulk_decision", "identity", "transparency_submission", "queue", "rule", "eval_set", "eval_run", "oidc_config",
  "organization", "media_bank",
] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

interface AuditActionSpec {
  /** The action for people (the dashboard's audit pages). */
  label: string;
  /** The entity types its events are about. */
  entity: readonly EntityType[];
  before?: z.ZodType;
  after?: z.ZodType;
  data?: z.ZodType;
}

/** An organization's single sign-on settings as the trail records them: all but the secret. */
const oidcAuditSettings = oidcSettingsInputSchema.omit({ clientSecret: true });

/** What the trail records of a media bank: its settings. */
const mediaBankFields = z.object({ name: z.string(), enabled: z.boolean(), negative: z.boolean(), action: bankActionSchema, pdqDistance: z.number(), qualityFloor: z.number(), quarantine: z.object({ count: z.number(), windowSeconds: z.number() }).nullable() });
const mediaEntryData = z.object({ entryId: z.string(), signalType: z.enum(SIGNAL_TYPES), value: z.string(), origin: z.string().nullable() });
const mediaMatchVerdict = z.object({ matchId: z.string(), bankId: z.string(), entryId: z.string(), before: z.string() });

/** What the trail records of an attachment: which file, by its name, digest and type. */
const attachmentData = z.object({ attachmentId: z.string(), reportId: z.string().nullable(), fileName: z.string(), sha256: z.string(), mediaType: z.string(), sizeBytes: z.number() });

// Statuses come from stored rows (plain text columns), so the trail records them as strings.
const status = z.object({ status: z.string() });
const optionalNote = z.string().nullable().optional();
/** What a decision on a report records (the workflow engine): the decision, whether it changed the report, its case. */
const decided = { applied: z.boolean(), caseId: z.string() };
const escalateData = z.object({ action: z.literal("escalate"), team: z.enum(TEAMS), note: optionalNote, ...decided });
const resolveData = z.object({ action: z.literal("resolve"), code: z.string().nullable().optional(), note: optionalNote, followsActionId: z.string().optional(), actionKind: z.string().optional(), ...decided });
const dismissData = z.object({ action: z.literal("dismiss"), reason: z.string(), note: optionalNote, mutedReporter: z.literal(true).optional(), ...decided });
const triageData = z.object({ action: z.literal("triage"), note: optionalNote, ...decided });
const closeData = z.object({ action: z.literal("close"), note: optionalNote, ...decided });
const enrichData = z.union([
  z.object({ action: z.literal("enrich"), ...decided }),
  // An AI enrichment records what the model found instead.
  z.object({ action: z.literal("enrich"), severity: z.enum(SEVERITIES), confidence: z.number() }),
]);
/** The appeal workflow's moves of a report: which appeal and action led to them, and the report's case. */
const appealMoveData = z.looseObject({ appealId: z.string().optional(), actionId: z.string().optional(), caseId: z.string() });
const appealDecisionData = z.object({
  note: z.string().nullable(),
  actionId: z.string(),
  reportId: z.string().nullable(),
  reportMoved: z.boolean(),
  revokedActionIds: z.array(z.string()),
  // An appeal settled because its action was revoked outside it (src/domain/enforcement/appeals.ts).
  settledByRevocation: z.boolean().optional(),
});
const templateFields = z.object({ name: z.string(), kind: z.enum(TEMPLATE_KINDS), body: z.string() });
const bucket = z.object({ bucket: z.enum(BUCKETS) });
const assignee = z.object({ assigneeId: z.string().nullable() });
/** The changed fields of an action, times as ISO strings. */
const changedFields = z.record(z.string(), z.unknown());
const endpointFields = z.object({ url: z.string(), description: z.string().nullable(), eventTypes: z.array(z.enum(EVENT_TYPES)), enabled: z.boolean() });

export const AUDIT_ACTIONS = {
  REPORT_CREATED: {
    label: "Report filed",
    entity: ["report"],
    after: z.object({ status: z.literal("OPEN"), caseId: z.string(), reasons: z.array(z.string()), severity: z.enum(SEVERITIES), automated: z.boolean() }),
  },
  REPORT_TRIAGED: { label: "Report triaged", entity: ["report"], before: status, after: status, data: triageData },
  REPORT_ESCALATED: { label: "Report escalated", entity: ["report"], before: status, after: status, data: escalateData },
  REPORT_RESOLVED: { label: "Report resolved", entity: ["report"], before: status, after: status, data: resolveData },
  REPORT_DISMISSED: { label: "Report dismissed", entity: ["report"], before: status, after: status, data: dismissData },
  REPORT_STATUS_CHANGED: { label: "Report status changed", entity: ["report"], before: status, after: status, data: enrichData },
  REPORT_MOVED: { label: "Report moved to another case", entity: ["report"], before: z.object({ caseId: z.string() }), after: z.object({ caseId: z.string() }) },
  REPORT_APPEALED: { label: "Report appealed", entity: ["report"], before: status, after: status, data: appealMoveData },
  REPORT_UPHELD: { label: "Report's decision upheld", entity: ["report"], before: status, after: status, data: appealMoveData },
  REPORT_OVERTURNED: { label: "Report's decision overturned", entity: ["report"], before: status, after: status, data: appealMoveData },
  // The workflow table's `close` (archiving: no route closes yet).
  REPORT_CLOSED: { label: "Report closed", entity: ["report"], before: status, after: status, data: closeData },
  REPORT_DECISION_UNDONE: {
    label: "Report's decision undone",
    entity: ["report"],
    before: status,
    after: status,
    data: z.object({ bulkId: z.string(), to: z.string(), caseId: z.string() }),
  },

  // A reporter's weight (DSA Art. 22, 23; src/domain/identities/reporters.ts), on the identity.
  REPORTER_TRUSTED_CHANGED: {
    label: "Trusted flagger mark changed",
    entity: ["identity"],
    before: z.object({ trustedFlagger: z.boolean() }),
    after: z.object({ trustedFlagger: z.boolean() }),
  },
  REPORTER_MUTED: {
    label: "Reporter muted",
    entity: ["identity"],
    before: z.object({ mutedUntil: isoDateTime.nullable(), muteReason: z.string().nullable() }),
    after: z.object({ mutedUntil: isoDateTime, muteReason: z.string().nullable() }),
  },
  REPORTER_UNMUTED: {
    label: "Reporter unmuted",
    entity: ["identity"],
    before: z.object({ mutedUntil: isoDateTime.nullable(), muteReason: z.string().nullable() }),
    after: z.object({ mutedUntil: z.null(), muteReason: z.string().nullable() }),
  },

  CASE_OPENED: { label: "Case opened", entity: ["case"], after: z.object({ status: z.string(), bucket: z.enum(BUCKETS) }) },
  CASE_BUCKET_RAISED: { label: "Case bucket raised", entity: ["case"], before: bucket, after: bucket },
  CASE_STATUS_CHANGED: { label: "Case status changed", entity: ["case"], before: status, after: status, data: z.object({ action: z.string() }) },
  CASE_ASSIGNED: {
    label: "Case assigned",
    entity: ["case"],
    before: assignee,
    after: assignee,
    // A decision that took over someone else's claim says whose, and which decision it was; a
    // claim taken in review mode (src/domain/review/review-mode.ts) says until when it holds; a
    // lead's bulk reassignment (src/domain/review/reassignment.ts) names it, one id for its cases.
    data: z
      .union([
        z.object({ takenOverFrom: z.string(), by: z.string() }),
        z.object({ review: z.literal(true), claimUntil: isoDateTime, sessionId: z.string() }),
        z.object({ reassignmentId: z.string() }),
      ])
      .optional(),
  },
  CASE_ESCALATED: {
    label: "Case escalated",
    entity: ["case"],
    data: z.object({ team: z.enum(TEAMS), note: z.string().nullable(), reportId: z.string() }),
  },
  CASE_TAGS_CHANGED: { label: "Case tags changed", entity: ["case"], before: z.object({ tags: z.array(z.string()) }), after: z.object({ tags: z.array(z.string()) }) },
  CASE_UNASSIGNED: {
    label: "Case released",
    entity: ["case"],
    before: assignee,
    after: assignee,
    // Released by review mode: the moderator moved on (a decision that left the case open, a skip,
    // stopping); or back to the queue by a lead's bulk reassignment.
    data: z.union([z.object({ review: z.literal(true), why: z.enum(["next", "skipped", "stopped"]) }), z.object({ reassignmentId: z.string() })]).optional(),
  },
  // A case passed over in review mode, with the moderator's reason: not offered to them again
  // in that review session for a while (src/domain/review/review-mode.ts).
  CASE_SKIPPED: {
    label: "Case skipped in review",
    entity: ["case"],
    data: z.object({ reason: z.string(), sessionId: z.string(), queueId: z.string().nullable() }),
  },
  CASE_NOTE_ADDED: { label: "Note added", entity: ["case"], data: z.object({ noteId: z.string() }) },
  // Evidence (docs/attachments.md): added, its original opened (read in full: who saw which file when), deleted.
  ATTACHMENT_ADDED: { label: "Attachment added", entity: ["case"], data: attachmentData },
  ATTACHMENT_OPENED: { label: "Attachment opened", entity: ["case"], data: attachmentData },
  ATTACHMENT_DELETED: { label: "Attachment deleted", entity: ["case"], data: attachmentData },
  // Banks of known harmful media (src/domain/banks/, docs/media.md).
  MEDIA_BANK_CREATED: { label: "Media bank created", entity: ["media_bank"], after: mediaBankFields },
  MEDIA_BANK_UPDATED: { label: "Media bank changed", entity: ["media_bank"], before: mediaBankFields, after: mediaBankFields },
  MEDIA_BANK_DELETED: { label: "Media bank deleted", entity: ["media_bank"], before: mediaBankFields },
  MEDIA_BANK_ENTRIES_ADDED: {
    label: "Media bank entries added",
    entity: ["media_bank"],
    // `additionId`: the addition whose past media check runs (media_bank_additions); `bankingId` and `caseId`: a case's media banked from a decision.
    data: z.object({ added: z.number(), entryId: z.string().optional(), signalType: z.enum(SIGNAL_TYPES).optional(), origin: z.string().nullable().optional(), imported: z.boolean().optional(), additionId: z.string().optional(), bankingId: z.string().optional(), caseId: z.string().optional() }),
  },
  MEDIA_BANK_ENTRIES_REMOVED: { label: "Media bank entries removed (a banking undone)", entity: ["media_bank"], data: z.object({ bankingId: z.string(), caseId: z.string(), removed: z.number(), entryIds: z.array(z.string()) }) },
  // A moderator's decision to bank a case's media (src/domain/banks/banking.ts), and its undoing: on the case, with the reason.
  CASE_MEDIA_BANKED: {
    label: "Case media banked",
    entity: ["case"],
    data: z.object({ bankingId: z.string(), bankId: z.string(), bankName: z.string(), reason: z.string(), added: z.number(), unchanged: z.number(), belowFloor: z.number(), entryIds: z.array(z.string()) }),
  },
  CASE_MEDIA_UNBANKED: {
    label: "Case media banking undone",
    entity: ["case"],
    data: z.object({ bankingId: z.string(), bankId: z.string(), bankName: z.string(), reason: z.string(), removed: z.number(), entryIds: z.array(z.string()) }),
  },
  MEDIA_BANK_ENTRY_REMOVED: { label: "Media bank entry removed", entity: ["media_bank"], data: mediaEntryData },
  MEDIA_BANK_ENTRY_QUARANTINED: { label: "Media bank entry quarantined", entity: ["media_bank"], data: mediaEntryData.extend({ reason: z.string() }) },
  MEDIA_BANK_ENTRY_RELEASED: { label: "Media bank entry released from quarantine", entity: ["media_bank"], data: mediaEntryData },
  MEDIA_MATCHED: {
    label: "Media matched a bank",
    entity: ["case"],
    data: z.object({ matchId: z.string(), mediaId: z.string(), reportId: z.string().nullable(), bankId: z.string(), entryId: z.string(), signalType: z.enum(SIGNAL_TYPES), distance: z.number().nullable(), quality: z.number().nullable(), suppressed: z.boolean(), quarantined: z.boolean(), action: z.string() }),
  },
  MEDIA_MATCH_CONFIRMED: { label: "Media match confirmed", entity: ["case"], data: mediaMatchVerdict },
  MEDIA_MATCH_REJECTED: { label: "Media match rejected", entity: ["case"], data: mediaMatchVerdict },
  // A rule's `priority` effect (src/domain/rules/rule-engine.ts).
  CASE_PRIORITY_CHANGED: {
    label: "Case priority changed",
    entity: ["case"],
    before: z.object({ priority: z.number() }),
    after: z.object({ priority: z.number() }),
    data: z.object({ ruleId: z.string(), version: z.number(), automated: z.literal(true) }).optional(),
  },
  // A case moved between queues (src/domain/review/queues.ts): null is the default queue; a rule's move says which rule.
  CASE_QUEUE_CHANGED: {
    label: "Case moved to another queue",
    entity: ["case"],
    before: z.object({ queueId: z.string().nullable() }),
    after: z.object({ queueId: z.string().nullable() }),
    data: z.object({ ruleId: z.string().optional(), version: z.number().optional(), automated: z.literal(true).optional(), reason: z.string().optional() }).optional(),
  },

  QUALITY_REVIEW_SAMPLED: {
    label: "Decision sampled for a second review",
    entity: ["case"],
    data: z.object({ reviewId: z.string(), queueId: z.string() }),
  },
  QUALITY_REVIEW_SUBMITTED: {
    label: "Second review committed",
    entity: ["case"],
    data: z.object({ reviewId: z.string(), action: z.string(), code: z.string().nullable(), actionKind: z.string().nullable(), agree: z.boolean() }),
  },
  QUALITY_REVIEW_ACKNOWLEDGED: {
    label: "Second review's disagreement acknowledged",
    entity: ["case"],
    data: z.object({ reviewId: z.string(), note: z.string().nullable(), reopened: z.boolean() }),
  },
  CASE_ROUTE_REFUSED: {
    label: "Rule's route not taken (it would show the case to more people)",
    entity: ["case"],
    data: z.object({
      queueId: z.string(),
      refusedQueueId: z.string(),
      reason: z.literal("wider_access"),
      ruleId: z.string().optional(),
      version: z.number().optional(),
      automated: z.literal(true).optional(),
    }),
  },

  APPEAL_FILED: {
    label: "Appeal filed",
    entity: ["appeal"],
    after: z.object({ status: z.literal("pending") }),
    data: z.object({ actionId: z.string(), reportId: z.string().nullable(), caseId: z.string().nullable() }),
  },
  APPEAL_UPHELD: { label: "Appeal upheld", entity: ["appeal"], before: z.object({ status: z.literal("pending") }), after: z.object({ status: z.enum(APPEAL_STATUSES) }), data: appealDecisionData },
  APPEAL_OVERTURNED: { label: "Appeal overturned", entity: ["appeal"], before: z.object({ status: z.literal("pending") }), after: z.object({ status: z.enum(APPEAL_STATUSES) }), data: appealDecisionData },

  BULK_DECISION_MADE: {
    label: "Bulk decision",
    entity: ["bulk_decision"],
    data: z.object({ action: z.string(), caseIds: z.array(z.string()), skipped: z.number(), undoUntil: isoDateTime }),
  },
  BULK_DECISION_UNDONE: {
    label: "Bulk decision undone",
    entity: ["bulk_decision"],
    data: z.object({ action: z.string(), restoredCaseIds: z.array(z.string()), notRestored: z.number() }),
  },

  DECISION_TEMPLATE_CREATED: { label: "Decision template added", entity: ["decision_template"], after: templateFields },
  DECISION_TEMPLATE_UPDATED: { label: "Decision template changed", entity: ["decision_template"], before: templateFields, after: templateFields },
  DECISION_TEMPLATE_DELETED: { label: "Decision template deleted", entity: ["decision_template"], before: templateFields },

  ENFORCEMENT_ACTION_CREATED: {
    label: "Enforcement action taken",
    entity: ["enforcement_action"],
    after: z.object({
      kind: z.enum(ACTION_KINDS), reason: z.string(), endsAt: isoDateTime.nullable(), identityId: z.string(), reportId: z.string().nullable(), caseId: z.string().nullable(),
    }),
    // An action a resolution code implies (no `action` given): recorded with its statement, not
    // announced. A rule's action names the rule too (recordAudit adds ruleId, version, automated).
    // An action scheduled to start later says when (`startsAt`); its statement comes at its start.
    data: z.looseObject({ impliedBy: z.enum(IMPLYING_CODES).optional(), announced: z.literal(false).optional(), startsAt: isoDateTime.optional() }).nullable(),
  },
  ENFORCEMENT_ACTION_STARTED: {
    label: "Scheduled enforcement action took effect",
    entity: ["enforcement_action"],
    before: z.object({ status: z.literal("scheduled") }),
    after: z.object({ status: z.enum(ACTION_STATUSES) }),
    // Whether a statement of reasons was made (none for a warning).
    data: z.object({ startsAt: isoDateTime, statement: z.boolean() }),
  },
  ENFORCEMENT_ACTION_CANCELLED: {
    label: "Scheduled enforcement action cancelled",
    entity: ["enforcement_action"],
    before: z.object({ status: z.literal("scheduled") }),
    after: z.object({ status: z.literal("cancelled") }),
    data: z.looseObject({ reason: z.string().nullable(), startsAt: isoDateTime, appealId: z.string().optional() }),
  },
  ENFORCEMENT_ACTION_UPDATED: { label: "Enforcement action changed", entity: ["enforcement_action"], before: changedFields, after: changedFields },
  ENFORCEMENT_ACTION_REVOKED: {
    label: "Enforcement action revoked",
    entity: ["enforcement_action"],
    before: z.object({ status: z.enum(ACTION_STATUSES) }),
    after: z.object({ status: z.literal("revoked") }),
    // The reason, and what led to the revocation (an overturned appeal names itself).
    data: z.looseObject({ reason: z.string().nullable(), appealId: z.string().optional() }),
  },
  ENFORCEMENT_ACTION_EXPIRED: {
    label: "Enforcement action expired",
    entity: ["enforcement_action"],
    before: z.object({ status: z.literal("active") }),
    after: z.object({ status: z.literal("expired") }),
    data: z.object({ endsAt: isoDateTime.nullable() }),
  },

  AI_ANALYZED: {
    label: "AI analysis",
    // An enrichment is about its report; any other analysis about itself.
    entity: ["report", "content_analysis"],
    data: z.object({
      analysisId: z.string(),
      source: z.enum(ANALYSIS_SOURCES),
      severity: z.enum(SEVERITIES),
      confidence: z.number(),
      categories: z.array(z.string()),
      reasoning: z.string(),
      model: z.string(),
      // Recorded since issue 28: the prompt template and the policy version of each category.
      promptVersion: z.string().optional(),
      policyVersions: z.record(z.string(), z.number().int()).optional(),
      confidenceSource: z.enum(["logprobs", "self_reported"]),
      reportId: z.string().nullable(),
      url: z.string().nullable(),
      // Since issue 44: a report's enrichment that reused an earlier analysis of the same content (no model call).
      reusedFrom: z.object({ analysisId: z.string(), analyzedAt: z.string() }).optional(),
    }),
  },
  LINK_SCAN_SKIPPED: {
    label: "Link scan skipped",
    entity: ["url"],
    data: z.object({ url: z.string(), outcome: z.string(), reason: z.string(), fromCache: z.boolean() }),
  },

  PROJECT_CREATED: { label: "Project created", entity: ["project"], after: projectViewSchema },
  PROJECT_RENAMED: { label: "Project renamed", entity: ["project"], before: z.object({ name: z.string() }), after: z.object({ name: z.string() }) },
  PROJECT_DELETED: { label: "Project deleted", entity: ["project"], before: projectViewSchema },
  PROJECT_SETTINGS_CHANGED: { label: "Project settings changed", entity: ["project"], before: aiSettingsSchema, after: aiSettingsSchema },
  PROJECT_DSA_SETTINGS_CHANGED: { label: "Statement-of-reasons settings changed", entity: ["project"], before: dsaSettingsSchema, after: dsaSettingsSchema },
  PROJECT_STRIKE_POLICY_CHANGED: { label: "Strike policy changed", entity: ["project"], before: strikePolicySchema, after: strikePolicySchema },
  // Strikes (src/domain/strikes/strikes.ts), on the identity struck: `total` is its strikes in force afterwards.
  STRIKE_ADDED: {
    label: "Strike added",
    entity: ["identity"],
    data: z.object({
      strikeId: z.string(), caseId: z.string(), reportId: z.string(), code: z.string().nullable(), count: z.number(), total: z.number(), expiresAt: isoDateTime,
      step: z.object({ threshold: z.number(), kind: z.enum(ACTION_KINDS) }).nullable(),
    }),
  },
  STRIKE_REMOVED: {
    label: "Strike removed",
    entity: ["identity"],
    data: z.object({ strikeId: z.string(), caseId: z.string(), reason: z.enum(["overturned", "undone"]), total: z.number() }),
  },

  QUEUE_CREATED: { label: "Queue created", entity: ["queue"], after: z.looseObject({ name: z.string() }) },
  QUEUE_UPDATED: { label: "Queue changed", entity: ["queue"], before: z.looseObject({}), after: z.looseObject({}) },
  QUEUE_DELETED: { label: "Queue deleted", entity: ["queue"], before: z.looseObject({ name: z.string() }), data: z.object({ movedCases: z.number(), movedClosedCases: z.number().optional(), to: z.string() }) },
  RULE_CREATED: { label: "Rule created", entity: ["rule"], after: z.looseObject({ name: z.string(), version: z.number(), mode: z.string() }) },
  RULE_UPDATED: {
    label: "Rule changed",
    entity: ["rule"],
    before: z.looseObject({ version: z.number() }),
    after: z.looseObject({ version: z.number() }),
  },
  EVAL_SET_CREATED: {
    label: "Evaluation set created",
    entity: ["eval_set"],
    after: z.object({ name: z.string(), source: z.string(), version: z.number(), items: z.number() }),
  },
  EVAL_SET_ITEMS_ADDED: { label: "Evaluation set items added", entity: ["eval_set"], after: z.object({ version: z.number(), items: z.number(), added: z.number() }) },
  EVAL_RUN_STARTED: {
    label: "Evaluation run started",
    entity: ["eval_run"],
    after: z.object({ setId: z.string(), setVersion: z.number(), model: z.string(), promptVersion: z.string(), items: z.number() }),
  },
  EVAL_RUN_CANCELLED: { label: "Evaluation run cancelled", entity: ["eval_run"], before: status, after: z.object({ status: z.literal("cancelled"), itemsDone: z.number() }) },
  RULE_DELETED: { label: "Rule deleted", entity: ["rule"], before: z.looseObject({ name: z.string(), version: z.number() }) },
  CATEGORY_CREATED: { label: "Category created", entity: ["category"], after: categoryViewSchema },
  CATEGORY_UPDATED: { label: "Category changed", entity: ["category"], before: categoryViewSchema, after: categoryViewSchema },
  CATEGORY_DELETED: { label: "Category deleted", entity: ["category"], before: categoryViewSchema },
  POLICY_VERSION_CREATED: {
    label: "Policy version written",
    entity: ["category"],
    after: z.object({ category: z.string(), version: z.number().int(), status: z.enum(POLICY_STATUSES), text: z.string() }),
  },
  POLICY_STATUS_CHANGED: {
    label: "Policy version status changed",
    entity: ["category"],
    before: z.object({ category: z.string(), version: z.number().int(), status: z.enum(POLICY_STATUSES) }),
    after: z.object({ category: z.string(), version: z.number().int(), status: z.enum(POLICY_STATUSES) }),
    /** The other version the change moved: the live one retired, or the shadow one back to draft. */
    data: z.object({ displaced: z.object({ version: z.number().int(), from: z.enum(POLICY_STATUSES), to: z.enum(POLICY_STATUSES) }).nullable() }),
  },

  USER_CREATED: { label: "User added", entity: ["user"], after: z.object({ email: z.string(), role: z.enum(ROLES) }) },
  USER_ROLE_CHANGED: { label: "User's role changed", entity: ["user"], before: z.object({ role: z.enum(ROLES) }), after: z.object({ role: z.enum(ROLES) }) },
  USER_DISABLED: { label: "User disabled", entity: ["user"] },
  USER_ENABLED: { label: "User enabled", entity: ["user"] },
  USER_PASSWORD_CHANGED: { label: "Password changed", entity: ["user"] },
  USER_PASSWORD_RESET: { label: "Password reset", entity: ["user"] },
  USER_SIGNED_IN_SSO: {
    label: "Signed in through single sign-on",
    entity: ["user"],
    data: z.object({ issuer: z.string(), subject: z.string(), groups: z.array(z.string()), created: z.boolean() }),
  },
  USER_SSO_LINKED: {
    label: "Account linked to single sign-on",
    entity: ["user"],
    data: z.object({ issuer: z.string(), subject: z.string(), by: z.enum(SSO_LINK_PROOFS) }),
  },
  USER_SSO_LINK_ALLOWED: {
    label: "Single sign-on link allowed",
    entity: ["user"],
    before: z.object({ issuer: z.string().nullable(), subject: z.string().nullable() }),
    data: z.object({ issuer: z.string() }),
  },
  SSO_SIGN_IN_REFUSED: {
    label: "Single sign-on refused",
    entity: ["oidc_config", "user"],
    data: z.object({ reason: z.enum(OIDC_FAILURE_CODES as [OidcFailure, ...OidcFailure[]]), email: z.string().nullable(), detail: z.string().nullable() }),
  },
  OIDC_SETTINGS_CHANGED: {
    label: "Single sign-on settings changed",
    entity: ["oidc_config"],
    before: oidcAuditSettings.nullable(),
    after: oidcAuditSettings,
    data: z.object({ clientSecretChanged: z.boolean() }),
  },
  // How reviewers see media by default (src/domain/accounts/viewing-preferences.ts); a user's own choices are not audited.
  VIEWING_DEFAULTS_CHANGED: { label: "Viewing defaults changed", entity: ["organization"], before: viewingDefaultsSchema, after: viewingDefaultsSchema },

  WEBHOOK_ENDPOINT_CREATED: {
    label: "Webhook endpoint added",
    entity: ["webhook_endpoint"],
    after: z.object({ url: z.string(), eventTypes: z.array(z.enum(EVENT_TYPES)), enabled: z.boolean() }),
  },
  WEBHOOK_ENDPOINT_UPDATED: { label: "Webhook endpoint changed", entity: ["webhook_endpoint"], before: endpointFields, after: endpointFields },
  WEBHOOK_ENDPOINT_DELETED: { label: "Webhook endpoint deleted", entity: ["webhook_endpoint"], before: endpointFields },
  WEBHOOK_ENDPOINT_DISABLED: {
    label: "Webhook endpoint disabled",
    entity: ["webhook_endpoint"],
    before: z.object({ enabled: z.literal(true) }),
    after: z.object({ enabled: z.literal(false) }),
    data: z.object({ reason: z.string() }),
  },
  WEBHOOK_SECRET_ROTATED: { label: "Webhook secret rotated", entity: ["webhook_endpoint"] },
  // Where statements of reasons leave the installation (src/domain/dsa/transparency-submission.ts); the token is never recorded.
  TRANSPARENCY_SUBMISSION_CHANGED: {
    label: "Transparency Database submission changed",
    entity: ["transparency_submission"],
    before: z.object({ endpointUrl: z.string(), enabled: z.boolean() }).nullable(),
    after: z.object({ endpointUrl: z.string(), enabled: z.boolean() }),
    data: z.object({ tokenChanged: z.boolean() }),
  },
  WEBHOOK_DELIVERY_REPLAYED: {
    label: "Webhook delivery replayed",
    entity: ["webhook_delivery"],
    before: z.object({ status: z.enum(DELIVERY_STATUSES) }),
    after: z.object({ status: z.literal("pending") }),
    data: z.object({ endpointId: z.string() }),
  },
} as const satisfies Record<string, AuditActionSpec>;

export type AuditAction = keyof typeof AUDIT_ACTIONS;

export const isAuditAction = (s: string): s is AuditAction => Object.hasOwn(AUDIT_ACTIONS, s);

/** Every action name, in the catalogue's order. */
export const AUDIT_ACTION_NAMES: readonly AuditAction[] = Object.keys(AUDIT_ACTIONS).filter(isAuditAction);

/** An action name: the audit queries' `action` filter (an unknown name is a 400). */
export const auditActionSchema = z.enum(AUDIT_ACTION_NAMES);

/** The label of a stored action; a name outside the catalogue (an older server's) shows as itself. */
export const auditActionLabel = (action: string): string => (isAuditAction(action) ? AUDIT_ACTIONS[action].label : action);

/**
 * The TypeScript shape of one part (`before`, `after` or `data`) of an action's events: never
 * when the action records no such part.
 */
export type AuditShape<A extends AuditAction, K extends AuditPartName> = (typeof AUDIT_ACTIONS)[A] extends { readonly [P in K]: infer S extends z.ZodType }
  ? z.input<S>
  : never;
export type AuditPartName = "before" | "after" | "data";

/** True when T is a union of two or more types. */
type IsUnion<T, U = T> = T extends unknown ? ([U] extends [T] ? false : true) : never;

/**
 * What a writer may pass as one part of an event of action A: the catalogue's shape when A is
 * one action (a literal at the call site); anything when A is a union of actions, chosen at run
 * time by a table (the workflow engine's): there only the name is checked, since TypeScript
 * cannot tie the chosen name to its part.
 */
export type AuditPart<A extends AuditAction, K extends AuditPartName> = true extends IsUnion<A> ? unknown : AuditShape<A, K>;

/** The entity types an action's events may be about. */
export type AuditEntityOf<A extends AuditAction> = (typeof AUDIT_ACTIONS)[A]["entity"][number];

/** The audit log's filters and paging: the audit route's and the dashboard's audit page's. */
export const auditFilters = {
  /** One action of the catalogue: an unknown one is a 400, not an empty page. */
  action: auditActionSchema.optional(),
  entityType: z.string().max(64).optional(),
  entityId: z.string().max(64).optional(),
  projectId: z.string().max(64).optional(),
  cursor: z.string().max(64).optional(),
  limit: limitSchema(50),
};

/** An audit event as clients read it. `action` stays a string: events written before an action left the catalogue still read. */
export const auditEventViewSchema = z
  .object({
    id: z.string(),
    projectId: z.string().nullable(),
    actor: actorSchema,
    action: z.string(),
    entityType: z.string(),
    entityId: z.string(),
    before: z.unknown(),
    after: z.unknown(),
    data: z.unknown(),
    createdAt: isoDateTime,
  })
  .meta({ id: "AuditEvent" });
export type AuditEventView = z.infer<typeof auditEventViewSchema>;
