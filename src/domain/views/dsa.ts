/**
 * The DSA vocabulary, in one place: a statement of reasons (DSA Art. 17 and 24(5)) in the EU
 * Transparency Database API v2 field names, enumerations and limits, and a project's DSA
 * settings (stored as JSON in `projects.dsa_settings`). Statements are made by
 * src/domain/enforcement/statements.ts; the submission to the database and the transparency report read
 * the same schema.
 *
 * Source: /work/shared/reference/dsa-transparency-database-v2.md, checked against the EU's
 * repository digital-services-act/transparency-database (app/Models/Statement.php and its API
 * tests/documentation) on 2026-11-25:
 * - decision_visibility: the seven values below (REMOVED, DISABLED, DEMOTED, AGE_RESTRICTED,
 *   INTERACTION_RESTRICTED, LABELLED, OTHER) — confirmed.
 * - automated_decision: FULLY, PARTIALLY, NOT_AUTOMATED — confirmed.
 * - source_type: the model also has SOURCE_TYPE_OTHER_NOTIFICATION ("Other type of
 *   notification") besides ARTICLE_16, TRUSTED_FLAGGER and VOLUNTARY — added here (we never
 *   produce it, but a statement with it is valid).
 * - category: the v2 list (CONSUMER_INFORMATION, CYBER_VIOLENCE(_AGAINST_WOMEN),
 *   NOT_SPECIFIED_NOTICE, OTHER_VIOLATION_TC, UNSAFE_AND_PROHIBITED_PRODUCTS added; v1's
 *   NON_CONSENSUAL_BEHAVIOUR, PORNOGRAPHY_OR_SEXUALIZED_CONTENT, SCOPE_OF_PLATFORM_SERVICE gone).
 */
import { z } from "zod";
import { slaTargetMinutesSchema } from "./service-level.ts";

export const DECISION_VISIBILITIES = [
  "DECISION_VISIBILITY_CONTENT_REMOVED",
  "DECISION_VISIBILITY_CONTENT_DISABLED",
  "DECISION_VISIBILITY_CONTENT_DEMOTED",
  "DECISION_VISIBILITY_CONTENT_AGE_RESTRICTED",
  "DECISION_VISIBILITY_CONTENT_INTERACTION_RESTRICTED",
  "DECISION_VISIBILITY_CONTENT_LABELLED",
  "DECISION_VISIBILITY_OTHER",
] as const;
export const DECISION_MONETARIES = ["DECISION_MONETARY_SUSPENSION", "DECISION_MONETARY_TERMINATION", "DECISION_MONETARY_OTHER"] as const;
export const DECISION_PROVISIONS = [
  "DECISION_PROVISION_PARTIAL_SUSPENSION",
  "DECISION_PROVISION_TOTAL_SUSPENSION",
  "DECISION_PROVISION_PARTIAL_TERMINATION",
  "DECISION_PROVISION_TOTAL_TERMINATION",
] as const;
export const DECISION_ACCOUNTS = ["DECISION_ACCOUNT_SUSPENDED", "DECISION_ACCOUNT_TERMINATED"] as const;
export const ACCOUNT_TYPES = ["ACCOUNT_TYPE_BUSINESS", "ACCOUNT_TYPE_PRIVATE"] as const;
export const DECISION_GROUNDS = ["DECISION_GROUND_ILLEGAL_CONTENT", "DECISION_GROUND_INCOMPATIBLE_CONTENT"] as const;
export type DecisionGround = (typeof DECISION_GROUNDS)[number];
export const CONTENT_TYPES = [
  "CONTENT_TYPE_APP",
  "CONTENT_TYPE_AUDIO",
  "CONTENT_TYPE_IMAGE",
  "CONTENT_TYPE_PRODUCT",
  "CONTENT_TYPE_SYNTHETIC_MEDIA",
  "CONTENT_TYPE_TEXT",
  "CONTENT_TYPE_VIDEO",
  "CONTENT_TYPE_OTHER",
] as const;
export type ContentTypeValue = (typeof CONTENT_TYPES)[number];
export const STATEMENT_CATEGORIES = [
  "STATEMENT_CATEGORY_ANIMAL_WELFARE",
  "STATEMENT_CATEGORY_CONSUMER_INFORMATION",
  "STATEMENT_CATEGORY_CYBER_VIOLENCE",
  "STATEMENT_CATEGORY_CYBER_VIOLENCE_AGAINST_WOMEN",
  "STATEMENT_CATEGORY_DATA_PROTECTION_AND_PRIVACY_VIOLATIONS",
  "STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH",
  "STATEMENT_CATEGORY_INTELLECTUAL_PROPERTY_INFRINGEMENTS",
  "STATEMENT_CATEGORY_NEGATIVE_EFFECTS_ON_CIVIC_DISCOURSE_OR_ELECTIONS",
  "STATEMENT_CATEGORY_NOT_SPECIFIED_NOTICE",
  "STATEMENT_CATEGORY_OTHER_VIOLATION_TC",
  "STATEMENT_CATEGORY_PROTECTION_OF_MINORS",
  "STATEMENT_CATEGORY_RISK_FOR_PUBLIC_SECURITY",
  "STATEMENT_CATEGORY_SCAMS_AND_FRAUD",
  "STATEMENT_CATEGORY_SELF_HARM",
  "STATEMENT_CATEGORY_UNSAFE_AND_PROHIBITED_PRODUCTS",
  "STATEMENT_CATEGORY_VIOLENCE",
] as const;
export type StatementCategory = (typeof STATEMENT_CATEGORIES)[number];
export const SOURCE_TYPES = ["SOURCE_ARTICLE_16", "SOURCE_TRUSTED_FLAGGER", "SOURCE_TYPE_OTHER_NOTIFICATION", "SOURCE_VOLUNTARY"] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];
export const AUTOMATED_DECISIONS = ["AUTOMATED_DECISION_FULLY", "AUTOMATED_DECISION_PARTIALLY", "AUTOMATED_DECISION_NOT_AUTOMATED"] as const;
export const YES_NO = ["Yes", "No"] as const;

/** The 27 EU member states (ISO 3166-1 alpha-2; Greece is GR) and the three other EEA states. */
export const EU_COUNTRIES = [
  "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE",
  "IT", "LV", "LT", "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE",
] as const;
export const EEA_ONLY_COUNTRIES = ["IS", "LI", "NO"] as const;
export const EEA_COUNTRIES = [...EU_COUNTRIES, ...EEA_ONLY_COUNTRIES] as const;
export type EeaCountry = (typeof EEA_COUNTRIES)[number];

/** Limits of the database's text fields. */
export const SHORT_TEXT_MAX = 500;
export const EXPLANATION_MAX = 2000;
export const DECISION_FACTS_MAX = 5000;

const ymd = z.string().regex(/^\d{4}-\d\d-\d\d$/, "must be a date YYYY-MM-DD");
const shortText = z.string().min(1).max(SHORT_TEXT_MAX);

/** Every field of a statement, in the order the CSV export writes them. */
export const STATEMENT_FIELDS = [
  "puid",
  "decision_visibility",
  "decision_visibility_other",
  "end_date_visibility_restriction",
  "decision_monetary",
  "decision_monetary_other",
  "end_date_monetary_restriction",
  "decision_provision",
  "end_date_service_restriction",
  "decision_account",
  "end_date_account_restriction",
  "account_type",
  "decision_ground",
  "decision_ground_reference_url",
  "illegal_content_legal_ground",
  "illegal_content_explanation",
  "incompatible_content_ground",
  "incompatible_content_explanation",
  "incompatible_content_illegal",
  "content_type",
  "content_type_other",
  "category",
  "category_addition",
  "category_specification",
  "category_specification_other",
  "territorial_scope",
  "content_language",
  "content_date",
  "application_date",
  "decision_facts",
  "source_type",
  "source_identity",
  "automated_detection",
  "automated_decision",
] as const;
export type StatementField = (typeof STATEMENT_FIELDS)[number];

const statementShape = z.object({
  puid: z.string().min(1).max(500).regex(/^[A-Za-z0-9_-]+$/, "must be letters, digits, _ and - only"),
  decision_visibility: z.array(z.enum(DECISION_VISIBILITIES)).min(1).optional(),
  decision_visibility_other: shortText.optional(),
  end_date_visibility_restriction: ymd.nullable().optional(),
  decision_monetary: z.enum(DECISION_MONETARIES).optional(),
  decision_monetary_other: shortText.optional(),
  end_date_monetary_restriction: ymd.nullable().optional(),
  decision_provision: z.enum(DECISION_PROVISIONS).optional(),
  end_date_service_restriction: ymd.nullable().optional(),
  decision_account: z.enum(DECISION_ACCOUNTS).optional(),
  end_date_account_restriction: ymd.nullable().optional(),
  account_type: z.enum(ACCOUNT_TYPES).optional(),
  decision_ground: z.enum(DECISION_GROUNDS),
  decision_ground_reference_url: z.url().max(SHORT_TEXT_MAX).optional(),
  illegal_content_legal_ground: shortText.optional(),
  illegal_content_explanation: z.string().min(1).max(EXPLANATION_MAX).optional(),
  incompatible_content_ground: shortText.optional(),
  incompatible_content_explanation: z.string().min(1).max(EXPLANATION_MAX).optional(),
  incompatible_content_illegal: z.enum(YES_NO).optional(),
  content_type: z.array(z.enum(CONTENT_TYPES)).min(1),
  content_type_other: shortText.optional(),
  category: z.enum(STATEMENT_CATEGORIES),
  category_addition: z.array(z.enum(STATEMENT_CATEGORIES)).optional(),
  category_specification: z.array(z.string().regex(/^KEYWORD_[A-Z0-9_]+$/, "must be a KEYWORD_… value")).optional(),
  category_specification_other: shortText.optional(),
  territorial_scope: z.array(z.enum(EEA_COUNTRIES)).min(1),
  content_language: z.string().regex(/^[A-Z]{2}$/, "must be an upper-case ISO 639-1 code").optional(),
  content_date: ymd,
  application_date: ymd,
  decision_facts: z.string().min(1).max(DECISION_FACTS_MAX),
  source_type: z.enum(SOURCE_TYPES),
  source_identity: shortText.optional(),
  automated_detection: z.enum(YES_NO),
  automated_decision: z.enum(AUTOMATED_DECISIONS),
});

/**
 * A statement of reasons as the Transparency Database takes it: the field rules above plus the
 * ones between fields (a decision field is required; `_OTHER` values need their text; each
 * ground needs its texts; dates within the database's bounds, end dates not before the
 * application date).
 */
export const statementSchema = statementShape
  .superRefine((s, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (!s.decision_visibility && !s.decision_monetary && !s.decision_provision && !s.decision_account) {
      issue("decision_visibility", "one of decision_visibility, decision_monetary, decision_provision or decision_account is required");
    }
    if (s.decision_visibility?.includes("DECISION_VISIBILITY_OTHER") && !s.decision_visibility_other) issue("decision_visibility_other", "required with DECISION_VISIBILITY_OTHER");
    if (s.decision_monetary === "DECISION_MONETARY_OTHER" && !s.decision_monetary_other) issue("decision_monetary_other", "required with DECISION_MONETARY_OTHER");
    if (s.content_type.includes("CONTENT_TYPE_OTHER") && !s.content_type_other) issue("content_type_other", "required with CONTENT_TYPE_OTHER");
    if (s.decision_ground === "DECISION_GROUND_ILLEGAL_CONTENT") {
      if (!s.illegal_content_legal_ground) issue("illegal_content_legal_ground", "required with DECISION_GROUND_ILLEGAL_CONTENT");
      if (!s.illegal_content_explanation) issue("illegal_content_explanation", "required with DECISION_GROUND_ILLEGAL_CONTENT");
    } else {
      if (!s.incompatible_content_ground) issue("incompatible_content_ground", "required with DECISION_GROUND_INCOMPATIBLE_CONTENT");
      if (!s.incompatible_content_explanation) issue("incompatible_content_explanation", "required with DECISION_GROUND_INCOMPATIBLE_CONTENT");
    }
    if (s.content_date < "2000-01-01") issue("content_date", "must be 2000-01-01 or later");
    if (s.application_date < "2020-01-01") issue("application_date", "must be 2020-01-01 or later");
    for (const f of ["end_date_visibility_restriction", "end_date_monetary_restriction", "end_date_service_restriction", "end_date_account_restriction"] as const) {
      const end = s[f];
      if (end && end < s.application_date) issue(f, "must not be before application_date");
    }
  })
  .meta({ id: "StatementOfReasons", description: "A statement of reasons (DSA Art. 17) in the EU Transparency Database API v2 field names." });
export type Statement = z.infer<typeof statementSchema>;

// ---------------------------------------------------------------------------------------------
// Per-project settings (projects.dsa_settings)

/** Our report category names (the project's categories) as keys of the mapping. */
const categoryName = z.string().trim().min(1).max(100);

/** How one of our report categories reads in a statement. */
export const dsaCategorySettingSchema = z
  .object({
    /** The Transparency Database's category for it. */
    category: z.enum(STATEMENT_CATEGORIES),
    /** Illegal content (a law) or content incompatible with the terms of service (default). */
    ground: z.enum(DECISION_GROUNDS).default("DECISION_GROUND_INCOMPATIBLE_CONTENT"),
    /** The law relied on (illegal_content_legal_ground): required with DECISION_GROUND_ILLEGAL_CONTENT. */
    legalGround: shortText.optional(),
    /** The terms-of-service clause relied on (incompatible_content_ground), as text. */
    termsReference: shortText.optional(),
    /** Where the terms or the law can be read (decision_ground_reference_url). */
    referenceUrl: z.url({ protocol: /^https?$/ }).max(SHORT_TEXT_MAX).optional(),
  })
  .superRefine((s, ctx) => {
    if (s.ground === "DECISION_GROUND_ILLEGAL_CONTENT" && !s.legalGround) {
      ctx.addIssue({ code: "custom", path: ["legalGround"], message: "required with DECISION_GROUND_ILLEGAL_CONTENT (the law relied on)" });
    }
  });
export type DsaCategorySetting = z.infer<typeof dsaCategorySettingSchema>;

export const dsaSettingsSchema = z
  .object({
    /** Our category name → its statement category, ground and references. */
    categories: z.record(categoryName, dsaCategorySettingSchema).default({}),
    /** Where the decisions apply (default: every EU and EEA state). */
    territorialScope: z
      .array(z.enum(EEA_COUNTRIES))
      .min(1)
      .refine((a) => new Set(a).size === a.length, "must not repeat a country")
      .default([...EEA_COUNTRIES]),
    /** The terms-of-service clause used when a category has none (incompatible_content_ground). */
    defaultTermsReference: shortText.default("Terms of service"),
    /** account_type of every statement, if the platform knows it. */
    accountType: z.enum(ACCOUNT_TYPES).optional(),
    /**
     * Minutes within which an appeal should be decided (DSA Art. 20: timely handling); an appeal
     * pending longer is a service-level breach (docs/dsa.md). Absent: no target.
     */
    appealTargetMinutes: slaTargetMinutesSchema.optional(),
  })
  .meta({ id: "DsaSettings", description: "A project's statement-of-reasons settings (docs/dsa.md)." });
export type DsaSettings = z.infer<typeof dsaSettingsSchema>;
/** What a client sends: every field may be left out (its default applies). */
export type DsaSettingsInput = z.input<typeof dsaSettingsSchema>;

/**
 * The statement category of Flagstaff's default report categories (src/domain/categories/categories.ts),
 * used for a category the project has not mapped itself.
 */
export const SUGGESTED_CATEGORIES: Readonly<Record<string, StatementCategory>> = {
  spam: "STATEMENT_CATEGORY_OTHER_VIOLATION_TC",
  harassment: "STATEMENT_CATEGORY_CYBER_VIOLENCE",
  hate_speech: "STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH",
  threats: "STATEMENT_CATEGORY_VIOLENCE",
  fraud_or_scam: "STATEMENT_CATEGORY_SCAMS_AND_FRAUD",
  sexual_content: "STATEMENT_CATEGORY_OTHER_VIOLATION_TC",
  child_safety: "STATEMENT_CATEGORY_PROTECTION_OF_MINORS",
  self_harm: "STATEMENT_CATEGORY_SELF_HARM",
  violence: "STATEMENT_CATEGORY_VIOLENCE",
  impersonation: "STATEMENT_CATEGORY_SCAMS_AND_FRAUD",
  misinformation: "STATEMENT_CATEGORY_NEGATIVE_EFFECTS_ON_CIVIC_DISCOURSE_OR_ELECTIONS",
  other: "STATEMENT_CATEGORY_OTHER_VIOLATION_TC",
};

/** The settings of a project whose `dsa_settings` is null. */
export const DEFAULT_DSA_SETTINGS: DsaSettings = dsaSettingsSchema.parse({});

// ---------------------------------------------------------------------------------------------
// A statement as the API shows it (SDK route, webhook payload, case page)

/** The SDK route's answer: the statement, the action it belongs to, when it was made and submitted. */
export const statementRecordSchema = z.object({
  actionId: z.string(),
  statement: statementSchema,
  createdAt: z.string(),
  /** When the Transparency Database accepted it, or null. */
  submittedAt: z.string().nullable(),
});
export type StatementRecord = z.infer<typeof statementRecordSchema>;
