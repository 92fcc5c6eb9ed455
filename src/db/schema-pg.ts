/**
 * The PostgreSQL (15+) schema: a table-for-table mirror of src/db/schema-sqlite.ts, under the
 * same export names, and the input of the PostgreSQL migrations (drizzle-pg/, generated with
 * `drizzle-kit generate --config drizzle.pg.config.ts`; `npm run db:generate` does both
 * dialects). Change the two together: test/schema-dialects.test.ts fails when a table, column,
 * index or constraint is in one and not the other.
 *
 * The domain is typed against the SQLite definitions (src/db/schema.ts hands it either set under
 * those types), so every column here has the same TypeScript type as its SQLite twin:
 * - SQLite `integer` columns are JS numbers here too. Times (`*_at` in ms, `*_us` in µs, run_at,
 *   lease_until, starts_at, ends_at, window_start, failing_since…) pass 2^31, so they are
 *   `bigint` read and written as numbers (`mode: "number"`; ms and µs since the epoch stay far
 *   below 2^53). Small counters, scores and 0/1 flags are `integer` and stay 0/1 integers, not
 *   `boolean`, so the domain's `= 1` comparisons and its writes mean the same on both engines.
 * - JSON is `text`, not `jsonb`: the domain stores and parses the text itself.
 * - Enumerations are `text` with the same `enum` lists: they type the columns and, as on
 *   SQLite, add no CHECK constraint or PostgreSQL enum type.
 * - Indexes have the same names, columns, expressions and partial WHERE clauses.
 *
 * Collation: SQLite compares text byte-wise, and the domain's prefix searches (a range from
 * `prefix` to `prefix + MAX_CHAR`) rely on it. Flagstaff's database is created with the C
 * collation (`CREATE DATABASE … TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C'`,
 * docs/operations.md), so every column and index compares byte-wise as on SQLite. The indexes
 * say no COLLATE of their own: PostgreSQL uses an index only for queries of its collation, and
 * the domain's queries are the same SQL on both engines.
 *
 * Full-text search is the one thing each dialect indexes its own way, outside these definitions
 * (drizzle cannot state either): drizzle-pg/0010_search_text.sql (after 0003_search) adds GIN
 * indexes over `flagstaff_search_document(…)` of reports (search_text, description, content,
 * ai_reasoning) and identities (search_text, external_id, name, username);
 * drizzle/0020_search_text.sql (after 0013_search) adds FTS5 tables, their views and triggers on
 * SQLite. src/db/search.ts says how queries reach them (`Store.textSearch`).
 */
import { sql } from "drizzle-orm";
import { bigint, doublePrecision, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { KEY_KINDS } from "../domain/views/api-key.ts";
import { APPEAL_STATUSES } from "../domain/views/appeal.ts";
import { ACTION_KINDS } from "../domain/views/enforcement.ts";
import { EVAL_RUN_STATUSES, EVAL_SET_SOURCES } from "../domain/views/evaluation.ts";
import { JOB_STATUSES } from "../domain/views/job.ts";
import { PLANS } from "../domain/views/organization.ts";
import { POLICY_STATUSES } from "../domain/views/policy.ts";
import { BUCKETS, SEVERITIES } from "../domain/views/severity.ts";
import { TEAMS } from "../domain/views/report.ts";
import { TEMPLATE_KINDS } from "../domain/views/template.ts";
import { SLA_TARGETS } from "../domain/views/service-level.ts";
import { ALWAYS_SAMPLE, REVIEWED_ACTIONS, SAMPLE_REASONS } from "../domain/views/quality.ts";
import { ROLES } from "../domain/views/user.ts";
import { PROVISIONING } from "../domain/views/sso.ts";
import { DELIVERY_STATUSES } from "../domain/views/webhook.ts";

/** A time (ms or µs since the epoch) or anything else that may pass 2^31, as a JS number. */
const big = <N extends string>(name: N) => bigint(name, { mode: "number" });

export const organizations = pgTable("organizations", {
  id: text("id").primaryKey(),
  slug: text("slug").notNull().unique(),
  name: text("name").notNull(),
  plan: text("plan", { enum: PLANS }).notNull().default("enterprise"),
  createdAt: big("created_at").notNull(),
});

export const projects = pgTable(
  "projects",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    aiEnabled: integer("ai_enabled").notNull().default(0),
    aiThreshold: integer("ai_threshold").notNull().default(70),
    /** The precision (0.5–0.999) threshold advice aims at (src/domain/evaluation/runs.ts). */
    aiPrecisionTarget: doublePrecision("ai_precision_target").notNull().default(0.9),
    scanLinks: integer("scan_links").notNull().default(0),
    /**
     * Bumped by every change of the project's report categories, in the change's transaction:
     * report creation keeps the categories in memory for as long as the project row it reads
     * says this number (src/domain/cases/categories.ts), on every instance.
     */
    categoriesVersion: integer("categories_version").notNull().default(0),
    /** JSON: the project's statements-of-reasons settings (src/domain/views/dsa.ts); null = defaults. */
    dsaSettings: text("dsa_settings"),
    /** JSON: the project's strike policy (src/domain/views/strikes.ts); null = off. */
    strikePolicy: text("strike_policy"),
    createdAt: big("created_at").notNull(),
    updatedAt: big("updated_at").notNull(),
  },
  (t) => [index("projects_org_idx").on(t.orgId)],
);

export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: KEY_KINDS }).notNull(),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    hash: text("hash").notNull(),
    reportRateLimit: integer("report_rate_limit"),
    createdAt: big("created_at").notNull(),
    lastUsedAt: big("last_used_at"),
    revokedAt: big("revoked_at"),
  },
  (t) => [uniqueIndex("api_keys_hash_idx").on(t.hash), index("api_keys_org_idx").on(t.orgId)],
);

export const identities = pgTable(
  "identities",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    /** Prefix-searched: compares byte-wise only in a C-collated database (see the top comment). */
    externalId: text("external_id").notNull(),
    name: text("name"),
    username: text("username"),
    avatarUrl: text("avatar_url"),
    metadata: text("metadata"),
    reportCount: integer("report_count").notNull().default(0),
    /** A trusted flagger (DSA Art. 22), set by admins: their reports go first and say so. */
    trustedFlagger: integer("trusted_flagger").notNull().default(0),
    /** Until when this identity's reports are stored but dismissed unseen (null: not muted). */
    mutedUntil: big("muted_until"),
    muteReason: text("mute_reason"),
    /**
     * As a reporter, how many of its reports were upheld and decided: kept by the workflow
     * engine at every decision (src/domain/intake/reporter-tally.ts holds the rule), so reading a
     * reporter's accuracy costs no look at its reports.
     */
    reportsUpheld: integer("reports_upheld").notNull().default(0),
    reportsDecided: integer("reports_decided").notNull().default(0),
    /**
     * external_id, name and username folded for the search index (src/domain/cases/search-text.ts,
     * searchDocument), or null when all three are pure ASCII and the index reads them as they are.
     */
    searchText: text("search_text"),
    lastSeenAt: big("last_seen_at"),
    lastReportedAt: big("last_reported_at"),
    createdAt: big("created_at").notNull(),
    updatedAt: big("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("identities_key_idx").on(t.projectId, t.type, t.externalId),
    index("identities_project_id_idx").on(t.projectId, t.id),
    index("identities_external_idx").on(t.projectId, t.externalId),
    index("identities_name_idx").on(t.projectId, sql`lower(${t.name})`),
    index("identities_username_idx").on(t.projectId, sql`lower(${t.username})`),
  ],
);

export const users = pgTable(
  "users",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    name: text("name"),
    passwordHash: text("password_hash").notNull(),
    role: text("role", { enum: ROLES }).notNull(),
    createdAt: big("created_at").notNull(),
    disabledAt: big("disabled_at"),
    /**
     * The single sign-on identity the account is bound to (docs/sso.md): the provider's issuer and
     * its subject (`sub`) for this person, set when the account is linked (src/domain/accounts/oidc-links.ts).
     * Later sign-ins to the account from that issuer must carry the same subject, so an account at
     * the provider that comes to hold the email (renamed, recycled) does not get this one. The
     * issuer without a subject: an admin allowed the next sign-in through it with the account's
     * email to link it.
     */
    oidcIssuer: text("oidc_issuer"),
    oidcSubject: text("oidc_subject"),
  },
  (t) => [
    index("users_org_idx").on(t.orgId),
    uniqueIndex("users_org_email_idx").on(t.orgId, t.email),
    index("users_email_idx").on(t.email),
  ],
);

export const auditEvents = pgTable(
  "audit_events",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id"),
    actorType: text("actor_type").notNull(),
    actorId: text("actor_id"),
    action: text("action").notNull(),
    entityType: text("entity_type").notNull(),
    entityId: text("entity_id").notNull(),
    before: text("before"),
    after: text("after"),
    data: text("data"),
    createdAt: big("created_at").notNull(),
    /**
     * The event's place in its organization's hash chain (src/domain/core/audit.ts, docs/audit.md):
     * in its lane (chain_lane), 1, 2, 3… without gaps; null only for an event an instance of the
     * release before the chain wrote during a rolling upgrade, until the next checkpoint pass
     * chains it (in lane 0).
     */
    chainSeq: big("chain_seq"),
    /** The hash of the event before it in the chain (64 zeros for the first), SHA-256 hex. */
    prevHash: text("prev_hash"),
    /** SHA-256 hex of prevHash followed by the digest of the event's canonical form (docs/audit.md). */
    hash: text("hash"),
    /**
     * Which of the organization's chains (lanes, sub-chains with a head each) the event is in:
     * a transaction appends to one lane per organization, so that commits of one organization
     * do not all queue on one head (docs/audit.md, "Lanes").
     */
    chainLane: integer("chain_lane").notNull().default(0),
  },
  (t) => [
    uniqueIndex("audit_chain_idx").on(t.orgId, t.chainLane, t.chainSeq),
    // The few events an instance of the release before the chain wrote during a rolling upgrade, until chained.
    index("audit_unchained_idx").on(t.orgId, t.createdAt).where(sql`chain_seq IS NULL`),
    index("audit_org_idx").on(t.orgId, t.id),
    index("audit_entity_idx").on(t.orgId, t.entityType, t.entityId, t.id),
    index("audit_action_idx").on(t.orgId, t.action, t.id),
  ],
);

/**
 * The head of each lane of each organization's audit chain: its last event's sequence and hash.
 * Its row is locked by the transaction that appends to the lane (just before its COMMIT,
 * src/domain/core/audit.ts), so a lane's events are chained one transaction after another while
 * other lanes and other organizations are not held up; no lock is global.
 */
export const auditChainHeads = pgTable(
  "audit_chain_heads",
  {
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    lane: integer("lane").notNull(),
    lastSeq: big("last_seq").notNull(),
    lastHash: text("last_hash").notNull(),
  },
  (t) => [uniqueIndex("audit_chain_heads_org_lane_idx").on(t.orgId, t.lane)],
);

/**
 * Signed statements "the lanes of this organization's chain had these sequences and these hashes
 * at this time" (Ed25519, the key outside the database: docs/audit.md). Once an event is under a
 * checkpoint, rewriting it and every hash after it no longer verifies either.
 */
export const auditCheckpoints = pgTable(
  "audit_checkpoints",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** How many events the checkpoint covers (the sum of its lanes' sequences; grows with every checkpoint). */
    seq: big("seq").notNull(),
    /** JSON: the heads signed, [[lane, seq, hash], …] by lane (docs/audit.md). */
    heads: text("heads").notNull(),
    /** When it was signed (ms since the epoch): part of what is signed. */
    signedAt: big("signed_at").notNull(),
    /** The signer's public key, raw 32 bytes in base64: which key to check it with (a key to trust comes from elsewhere). */
    publicKey: text("public_key").notNull(),
    /** Ed25519 signature of the checkpoint's canonical form, base64. */
    signature: text("signature").notNull(),
  },
  (t) => [uniqueIndex("audit_checkpoints_org_seq_idx").on(t.orgId, t.seq)],
);

export const reportCategories = pgTable(
  "report_categories",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    nameKey: text("name_key").notNull(),
    description: text("description"),
    severityHint: text("severity_hint", { enum: SEVERITIES }).notNull(),
    createdAt: big("created_at").notNull(),
    updatedAt: big("updated_at").notNull(),
  },
  (t) => [uniqueIndex("report_categories_key_idx").on(t.projectId, t.nameKey)],
);

export const cases = pgTable(
  "cases",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    status: text("status").notNull(),
    bucket: text("bucket", { enum: BUCKETS }).notNull(),
    isOpen: integer("is_open").notNull(),
    contentType: text("content_type"),
    contentExternalId: text("content_external_id"),
    subjectIdentityId: text("subject_identity_id"),
    reportCount: integer("report_count").notNull(),
    assigneeId: text("assignee_id"),
    assignedAt: big("assigned_at"),
    /** When a review-mode claim lapses (src/domain/review/review-mode.ts); null: held until released or decided (an assignment). */
    claimExpiresAt: big("claim_expires_at"),
    createdAt: big("created_at").notNull(),
    updatedAt: big("updated_at").notNull(),
    lastReportAt: big("last_report_at").notNull(),
    /** The team an open case was last escalated to (null once decided, or never escalated). */
    escalatedTeam: text("escalated_team", { enum: TEAMS }),
    escalatedAt: big("escalated_at"),
    /** The last decision that took the case out of review: resolve, dismiss, uphold, overturn. */
    decision: text("decision"),
    /** Its resolution code or dismissal reason. */
    decisionCode: text("decision_code"),
    decidedAt: big("decided_at"),
    decidedByType: text("decided_by_type"),
    decidedById: text("decided_by_id"),
    /** 1 when a trusted flagger reported into the case: it goes first in the queue. */
    trustedFlagged: integer("trusted_flagged").notNull().default(0),
    /** The queue the case is in (null: the organization's default queue). */
    queueId: text("queue_id"),
    /** Raised by rules (`priority` effect): higher first in queues ordered by priority. */
    priority: integer("priority").notNull().default(0),
  },
  (t) => [
    uniqueIndex("cases_open_target_idx")
      .on(t.projectId, t.contentType, t.contentExternalId)
      .where(sql`${t.isOpen} = 1 AND ${t.contentExternalId} IS NOT NULL`),
    uniqueIndex("cases_open_subject_idx")
      .on(t.projectId, t.subjectIdentityId)
      .where(sql`${t.isOpen} = 1 AND ${t.contentExternalId} IS NULL AND ${t.subjectIdentityId} IS NOT NULL`),
    index("cases_queue_idx").on(t.orgId, t.isOpen, t.bucket, t.createdAt),
    // With is_open: a subject's open cases (a rule's subject.openCases) are counted from the index alone.
    index("cases_subject_idx").on(t.subjectIdentityId, t.isOpen),
    // The queue's views: escalated to a team, claimed by someone, appealed; the closed cases' list.
    index("cases_escalated_idx").on(t.orgId, t.escalatedTeam).where(sql`${t.isOpen} = 1 AND ${t.escalatedTeam} IS NOT NULL`),
    index("cases_open_assignee_idx").on(t.orgId, t.assigneeId).where(sql`${t.isOpen} = 1`),
    index("cases_appealed_idx").on(t.orgId, t.createdAt).where(sql`${t.status} = 'APPEALED'`),
    index("cases_decided_idx").on(t.orgId, t.decidedAt).where(sql`${t.decidedAt} IS NOT NULL`),
    index("cases_trusted_idx").on(t.orgId, t.createdAt).where(sql`${t.isOpen} = 1 AND ${t.trustedFlagged} = 1`),
    index("cases_open_queue_idx").on(t.orgId, t.queueId, t.bucket, t.createdAt).where(sql`${t.isOpen} = 1`),
  ],
);

export const reports = pgTable(
  "reports",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    caseId: text("case_id")
      .notNull()
      .references(() => cases.id, { onDelete: "cascade" }),
    status: text("status").notNull(),
    severity: text("severity").notNull(),
    reasons: text("reasons").notNull(),
    description: text("description"),
    automated: integer("automated").notNull(),
    subjectIdentityId: text("subject_identity_id"),
    subjectExternalId: text("subject_external_id"),
    reporterIdentityId: text("reporter_identity_id"),
    contentType: text("content_type"),
    contentExternalId: text("content_external_id"),
    content: text("content"),
    escalation: text("escalation"),
    resolution: text("resolution"),
    dismissal: text("dismissal"),
    createdById: text("created_by_id"),
    aiSeverity: text("ai_severity"),
    aiCategories: text("ai_categories"),
    aiConfidence: integer("ai_confidence"),
    aiReasoning: text("ai_reasoning"),
    aiAnalyzedAt: big("ai_analyzed_at"),
    /** JSON: the notifier's DSA Art. 16 notice ({ explanation, legalGround, notifierName, notifierEmail, goodFaith }), or null. */
    notice: text("notice"),
    /** 1 when the reporter was a trusted flagger when the report was filed. */
    reporterTrusted: integer("reporter_trusted").notNull().default(0),
    createdUs: big("created_us").notNull(),
    updatedAt: big("updated_at").notNull(),
    /**
     * description, content and ai_reasoning folded for the search index (src/domain/cases/search-text.ts,
     * searchDocument), or null when all three are pure ASCII and the index reads them as they are.
     */
    searchText: text("search_text"),
  },
  (t) => [
    uniqueIndex("reports_org_created_idx").on(t.orgId, t.createdUs),
    index("reports_project_created_idx").on(t.projectId, t.createdUs),
    index("reports_status_idx").on(t.orgId, t.status, t.createdUs),
    index("reports_severity_idx").on(t.orgId, t.severity, t.createdUs),
    index("reports_automated_idx").on(t.orgId, t.automated, t.createdUs),
    index("reports_subject_idx").on(t.orgId, t.subjectExternalId, t.createdUs),
    index("reports_content_idx").on(t.orgId, t.contentExternalId, t.createdUs),
    index("reports_case_idx").on(t.caseId, t.createdUs),
    index("reports_subject_identity_idx").on(t.subjectIdentityId, t.createdUs),
    index("reports_reporter_identity_idx").on(t.reporterIdentityId, t.createdUs),
  ],
);

export const reportReasons = pgTable(
  "report_reasons",
  {
    reportId: text("report_id")
      .notNull()
      .references(() => reports.id, { onDelete: "cascade" }),
    orgId: text("org_id").notNull(),
    name: text("name").notNull(),
    createdUs: big("created_us").notNull(),
  },
  (t) => [
    uniqueIndex("report_reasons_pk").on(t.reportId, t.name),
    index("report_reasons_list_idx").on(t.orgId, t.name, t.createdUs),
  ],
);

export const caseNotes = pgTable(
  "case_notes",
  {
    id: text("id").primaryKey(),
    caseId: text("case_id")
      .notNull()
      .references(() => cases.id, { onDelete: "cascade" }),
    orgId: text("org_id").notNull(),
    authorType: text("author_type").notNull(),
    authorId: text("author_id"),
    body: text("body").notNull(),
    createdAt: big("created_at").notNull(),
  },
  (t) => [index("case_notes_case_idx").on(t.caseId, t.id)],
);

/** Free tags on a case (lower-case words a team agrees on), shown on the queue's rows and filterable. */
export const caseTags = pgTable(
  "case_tags",
  {
    caseId: text("case_id")
      .notNull()
      .references(() => cases.id, { onDelete: "cascade" }),
    orgId: text("org_id").notNull(),
    tag: text("tag").notNull(),
    createdAt: big("created_at").notNull(),
  },
  (t) => [uniqueIndex("case_tags_pk").on(t.caseId, t.tag), index("case_tags_org_idx").on(t.orgId, t.tag)],
);

/** A project's decision templates (src/domain/views/template.ts). */
export const decisionTemplates = pgTable(
  "decision_templates",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    kind: text("kind", { enum: TEMPLATE_KINDS }).notNull(),
    body: text("body").notNull(),
    createdAt: big("created_at").notNull(),
    updatedAt: big("updated_at").notNull(),
  },
  (t) => [uniqueIndex("decision_templates_name_idx").on(t.projectId, t.name)],
);

/**
 * A decision made on several cases at once, kept so that it can be undone for a while: what
 * each report and case was before (`items`, JSON), until when it may be undone, and whether it was.
 */
export const bulkDecisions = pgTable(
  "bulk_decisions",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    actorType: text("actor_type").notNull(),
    actorId: text("actor_id"),
    action: text("action").notNull(),
    items: text("items").notNull(),
    createdAt: big("created_at").notNull(),
    undoUntil: big("undo_until").notNull(),
    undoneAt: big("undone_at"),
  },
  (t) => [index("bulk_decisions_org_idx").on(t.orgId, t.createdAt)],
);

export const contentAnalyses = pgTable(
  "content_analyses",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    source: text("source").notNull(),
    reportId: text("report_id"),
    externalId: text("external_id"),
    contentType: text("content_type"),
    url: text("url"),
    sourceText: text("source_text").notNull(),
    categories: text("categories").notNull(),
    severity: text("severity").notNull(),
    confidence: integer("confidence").notNull(),
    reasoning: text("reasoning").notNull(),
    model: text("model").notNull(),
    latencyMs: integer("latency_ms").notNull(),
    /** PROMPT_VERSION (src/ai/prompt.ts) of the prompt the model was sent; null: written before it was recorded. */
    promptVersion: text("prompt_version"),
    /** JSON: the policy version each category used (category name → version; `{}`: descriptions only); null: not recorded. */
    policyVersions: text("policy_versions"),
    createdAt: big("created_at").notNull(),
  },
  (t) => [index("content_analyses_project_idx").on(t.projectId, t.id), index("content_analyses_report_idx").on(t.reportId)],
);

/**
 * The versions of each report category's policy (src/domain/analysis/policies.ts): the text is
 * never changed once written; the status says what the version does. At most one live and one
 * shadow version per category (the partial unique indexes).
 */
export const categoryPolicies = pgTable(
  "category_policies",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    categoryId: text("category_id")
      .notNull()
      .references(() => reportCategories.id, { onDelete: "cascade" }),
    /** 1, 2, … per category. */
    version: integer("version").notNull(),
    text: text("text").notNull(),
    status: text("status", { enum: POLICY_STATUSES }).notNull(),
    createdByType: text("created_by_type").notNull(),
    createdById: text("created_by_id"),
    createdAt: big("created_at").notNull(),
    statusChangedAt: big("status_changed_at").notNull(),
  },
  (t) => [
    uniqueIndex("category_policies_version_idx").on(t.categoryId, t.version),
    uniqueIndex("category_policies_live_idx").on(t.categoryId).where(sql`${t.status} = 'live'`),
    uniqueIndex("category_policies_shadow_idx").on(t.categoryId).where(sql`${t.status} = 'shadow'`),
    index("category_policies_project_idx").on(t.projectId, t.status),
  ],
);

/**
 * Shadow analyses (src/domain/analysis/shadow.ts): a report's text classified again with the
 * shadow model or policy versions after its live enrichment, stored for comparison only. One
 * per live analysis (the unique index: a job that runs twice stores one).
 */
export const shadowAnalyses = pgTable(
  "shadow_analyses",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    /** The live analysis (content_analyses.id) this one shadows: its text and report are that one's. */
    liveAnalysisId: text("live_analysis_id").notNull(),
    reportId: text("report_id").notNull(),
    categories: text("categories").notNull(),
    severity: text("severity").notNull(),
    confidence: integer("confidence").notNull(),
    reasoning: text("reasoning").notNull(),
    model: text("model").notNull(),
    promptVersion: text("prompt_version").notNull(),
    /** JSON: category name → policy version used. */
    policyVersions: text("policy_versions").notNull(),
    latencyMs: integer("latency_ms").notNull(),
    createdAt: big("created_at").notNull(),
  },
  (t) => [uniqueIndex("shadow_analyses_live_idx").on(t.liveAnalysisId), index("shadow_analyses_project_idx").on(t.projectId, t.createdAt)],
);

export const jobs = pgTable(
  "jobs",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id"),
    kind: text("kind").notNull(),
    payload: text("payload").notNull(),
    status: text("status", { enum: JOB_STATUSES }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull(),
    runAt: big("run_at").notNull(),
    leaseUntil: big("lease_until"),
    leasedBy: text("leased_by"),
    lastError: text("last_error"),
    createdAt: big("created_at").notNull(),
    updatedAt: big("updated_at").notNull(),
  },
  (t) => [
    // A lane's claim: its kind's pending jobs in run_at order, a range of this index whatever
    // the backlog (src/domain/plumbing/jobs.ts, claimJobs); also each lane's depth and oldest job.
    index("jobs_claim_idx").on(t.kind, t.status, t.runAt),
    // The cheap pass that takes back jobs whose worker died (reclaimExpiredLeases).
    index("jobs_lease_idx").on(t.status, t.leaseUntil),
    // Retention: finished jobs by when they finished (src/domain/plumbing/retention.ts).
    index("jobs_finished_idx").on(t.status, t.updatedAt),
    index("jobs_org_idx").on(t.orgId, t.updatedAt),
  ],
);

export const urlScanCache = pgTable("url_scan_cache", {
  url: text("url").primaryKey(),
  fetchedAt: big("fetched_at").notNull(),
  finalUrl: text("final_url"),
  statusCode: integer("status_code"),
  contentType: text("content_type"),
  kind: text("kind").notNull(),
  title: text("title"),
  text: text("text"),
  reason: text("reason"),
  /** Body bytes read: at most the fetch cap (100 KB by default). */
  bytes: integer("bytes"),
});

export const enforcementActions = pgTable(
  "enforcement_actions",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    identityId: text("identity_id")
      .notNull()
      .references(() => identities.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ACTION_KINDS }).notNull(),
    reason: text("reason").notNull(),
    note: text("note"),
    reportId: text("report_id"),
    caseId: text("case_id"),
    contentType: text("content_type"),
    contentExternalId: text("content_external_id"),
    startsAt: big("starts_at").notNull(),
    endsAt: big("ends_at"),
    expiredAt: big("expired_at"),
    awaitingStart: integer("awaiting_start").notNull().default(0),
    revokedAt: big("revoked_at"),
    revokedByType: text("revoked_by_type"),
    revokedById: text("revoked_by_id"),
    revokeReason: text("revoke_reason"),
    createdByType: text("created_by_type").notNull(),
    createdById: text("created_by_id"),
    createdAt: big("created_at").notNull(),
    updatedAt: big("updated_at").notNull(),
  },
  (t) => [
    index("enforcement_identity_idx").on(t.identityId, t.id),
    index("enforcement_project_idx").on(t.projectId, t.id),
    index("enforcement_report_idx").on(t.reportId),
    index("enforcement_expiry_idx").on(t.endsAt).where(sql`${t.revokedAt} IS NULL AND ${t.expiredAt} IS NULL AND ${t.endsAt} IS NOT NULL`),
    index("enforcement_start_idx").on(t.startsAt).where(sql`${t.awaitingStart} = 1 AND ${t.revokedAt} IS NULL`),
  ],
);

/**
 * A strike: a decision the project's strike policy counts against an identity (the decided
 * case's subject), added in the decision's transaction (src/domain/enforcement/strikes.ts). It
 * counts until `expires_at` unless removed (its decision overturned on appeal, or undone).
 */
export const strikes = pgTable(
  "strikes",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    identityId: text("identity_id")
      .notNull()
      .references(() => identities.id, { onDelete: "cascade" }),
    caseId: text("case_id").notNull(),
    reportId: text("report_id").notNull(),
    /** The decision's resolution code. */
    code: text("code"),
    /** How many strikes it counts for. */
    count: integer("count").notNull(),
    createdAt: big("created_at").notNull(),
    expiresAt: big("expires_at").notNull(),
    removedAt: big("removed_at"),
    removedReason: text("removed_reason"),
    /** JSON: the ladder's step this strike reached (null: none). */
    step: text("step"),
    /** The enforcement action the step took (null until taken). */
    actionId: text("action_id"),
  },
  (t) => [
    // An identity's strikes in force: its range, newest last.
    index("strikes_identity_idx").on(t.identityId, t.expiresAt),
    index("strikes_case_idx").on(t.caseId),
  ],
);

export const appeals = pgTable(
  "appeals",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    actionId: text("action_id")
      .notNull()
      .references(() => enforcementActions.id, { onDelete: "cascade" }),
    reportId: text("report_id"),
    caseId: text("case_id"),
    text: text("text").notNull(),
    status: text("status", { enum: APPEAL_STATUSES }).notNull(),
    decidedByType: text("decided_by_type"),
    decidedById: text("decided_by_id"),
    decisionNote: text("decision_note"),
    createdAt: big("created_at").notNull(),
    decidedAt: big("decided_at"),
  },
  (t) => [
    index("appeals_action_idx").on(t.actionId),
    index("appeals_org_status_idx").on(t.orgId, t.status, t.createdAt),
    // A case's appeals (the case page's list), without walking the organization's.
    index("appeals_case_idx").on(t.caseId, t.createdAt),
  ],
);

/**
 * Service-level breaches (src/domain/review/service-levels.ts): one row per case and target it
 * passed (first review, decision) or per appeal past its project's target, written once by the
 * periodic pass: the unique index makes a second pass (or another instance) insert nothing, so
 * the breach is counted and announced once.
 */
export const slaBreaches = pgTable(
  "sla_breaches",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    /** The queue whose target the case passed (its id, the default queue's too); null for an appeal. */
    queueId: text("queue_id"),
    target: text("target", { enum: SLA_TARGETS }).notNull(),
    /** The case (first_review, decision) or the appeal (appeal). */
    subjectId: text("subject_id").notNull(),
    targetMinutes: integer("target_minutes").notNull(),
    dueAt: big("due_at").notNull(),
    breachedAt: big("breached_at").notNull(),
  },
  (t) => [
    uniqueIndex("sla_breaches_subject_idx").on(t.subjectId, t.target),
    index("sla_breaches_org_idx").on(t.orgId, t.breachedAt),
  ],
);

/**
 * Quality review (issue 29): one row per sampled decision of a case, its blind second review
 * and a lead's acknowledgment (src/domain/review/quality-review.ts). The first decision is
 * copied here when sampled, so the figures keep it whatever happens to the case later.
 */
export const qualityReviews = pgTable(
  "quality_reviews",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    caseId: text("case_id").notNull(),
    /** The queue the case was in when decided (the default queue's id too). */
    queueId: text("queue_id").notNull(),
    reason: text("reason", { enum: SAMPLE_REASONS }).notNull(),
    /** JSON string[]: the case's report categories when decided. */
    categories: text("categories").notNull().default("[]"),
    firstById: text("first_by_id").notNull(),
    firstAction: text("first_action", { enum: REVIEWED_ACTIONS }).notNull(),
    /** The resolution code or the dismissal reason. */
    firstCode: text("first_code"),
    firstKind: text("first_kind", { enum: ACTION_KINDS }),
    firstDecidedAt: big("first_decided_at").notNull(),
    /** The second reviewer once one took the task (null: offered to every eligible moderator). */
    reviewerId: text("reviewer_id"),
    claimedAt: big("claimed_at"),
    secondAction: text("second_action", { enum: REVIEWED_ACTIONS }),
    secondCode: text("second_code"),
    secondKind: text("second_kind", { enum: ACTION_KINDS }),
    secondNote: text("second_note"),
    secondDecidedAt: big("second_decided_at"),
    /** 1 when both decisions have the same label, 0 when not; null until reviewed. */
    agree: integer("agree"),
    ackById: text("ack_by_id"),
    ackAt: big("ack_at"),
    ackNote: text("ack_note"),
    ackReopened: integer("ack_reopened"),
    createdAt: big("created_at").notNull(),
  },
  (t) => [
    // One review per decision of a case, however many effects or instances see it.
    uniqueIndex("quality_reviews_decision_idx").on(t.caseId, t.firstDecidedAt),
    index("quality_reviews_org_idx").on(t.orgId, t.secondDecidedAt),
    index("quality_reviews_open_idx").on(t.orgId, t.createdAt).where(sql`${t.secondDecidedAt} is null`),
  ],
);

/** Review queues of an organization (optionally of one project): who may work them and in which order. */
export const queues = pgTable(
  "queues",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id").references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    /** severity_age (bucket then age, the default), priority, or age. */
    ordering: text("ordering").notNull().default("severity_age"),
    /** 1 for the organization's default queue: where a case no rule routes goes. */
    isDefault: integer("is_default").notNull().default(0),
    /** JSON { users: string[], roles: string[] }: who may work it; both empty = everyone. */
    access: text("access").notNull().default('{"users":[],"roles":[]}'),
    /** Service levels (minutes; null: none): an open case unclaimed and undecided this long after it opened, then undecided this long (src/domain/review/service-levels.ts). */
    firstReviewTargetMinutes: integer("first_review_target_minutes"),
    decisionTargetMinutes: integer("decision_target_minutes"),
    /** Quality review (src/domain/review/quality-sampling.ts): the share of its moderators' decisions sampled for a blind second review (whole percent), and the decisions always sampled. */
    samplePercent: integer("sample_percent").notNull().default(0),
    alwaysSample: text("always_sample", { enum: ALWAYS_SAMPLE }).notNull().default("none"),
    createdAt: big("created_at").notNull(),
    updatedAt: big("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("queues_org_name_idx").on(t.orgId, t.name),
    index("queues_org_idx").on(t.orgId),
    // One default queue per organization, whoever creates it first (defaultQueue).
    uniqueIndex("queues_org_default_idx").on(t.orgId).where(sql`${t.isDefault} = 1`),
  ],
);

/** Automation rules: a condition tree over a report's facts and the effects it takes. */
export const rules = pgTable(
  "rules",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id").references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    /** report.created or report.enriched. */
    trigger: text("trigger").notNull(),
    /** live, shadow or disabled. */
    mode: text("mode").notNull(),
    /** JSON: the condition tree. */
    whenJson: text("when_json").notNull(),
    /** JSON: the list of effects. */
    thenJson: text("then_json").notNull(),
    /** 1, 2, …: every change makes a new version (kept in rule_versions). */
    version: integer("version").notNull(),
    createdAt: big("created_at").notNull(),
    updatedAt: big("updated_at").notNull(),
  },
  (t) => [index("rules_org_trigger_idx").on(t.orgId, t.trigger, t.mode)],
);

/** Every version of every rule, as it was: hits and audit events name a version. */
export const ruleVersions = pgTable(
  "rule_versions",
  {
    ruleId: text("rule_id").notNull(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    /** JSON: the whole rule at this version. */
    body: text("body").notNull(),
    createdByType: text("created_by_type").notNull(),
    createdById: text("created_by_id"),
    createdAt: big("created_at").notNull(),
  },
  (t) => [uniqueIndex("rule_versions_idx").on(t.ruleId, t.version)],
);

/** Each evaluation that matched, or that ran out of its search budget: the evidence of shadow mode and of live rules alike. */
export const ruleHits = pgTable(
  "rule_hits",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    ruleId: text("rule_id").notNull(),
    version: integer("version").notNull(),
    reportId: text("report_id").notNull(),
    /** JSON: the effects the rule took or would have taken. */
    effects: text("effects").notNull(),
    /** 1 when the effects were applied (live), 0 when only recorded (shadow). */
    applied: integer("applied").notNull(),
    /** 1 when the evaluation's search budget ran out before the rule was decided: it did not match, and `effects` is empty. */
    budgetExceeded: integer("budget_exceeded").notNull().default(0),
    at: big("at").notNull(),
  },
  // Read by rule only (the hits list and its counts); every index costs each hit on intake.
  (t) => [
    index("rule_hits_rule_idx").on(t.ruleId, t.at),
    // Retention deletes the oldest hits (src/domain/plumbing/retention.ts): a right-edge append per hit.
    index("rule_hits_at_idx").on(t.at),
  ],
);

/**
 * Statements of reasons (DSA Art. 17 and 24(5)): one per enforcement action that restricts
 * something, in the EU Transparency Database's field names (`body`, JSON), immutable once made.
 */
export const statements = pgTable(
  "statements",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    actionId: text("action_id")
      .notNull()
      .references(() => enforcementActions.id, { onDelete: "cascade" }),
    /** The platform's unique id of the statement (the database's `puid`). */
    puid: text("puid").notNull(),
    /** JSON: the statement's fields, as submitted. */
    body: text("body").notNull(),
    createdAt: big("created_at").notNull(),
    /** When the Transparency Database accepted it (or already had its puid). */
    submittedAt: big("submitted_at"),
  },
  (t) => [
    uniqueIndex("statements_puid_idx").on(t.orgId, t.puid),
    uniqueIndex("statements_action_idx").on(t.actionId),
    index("statements_org_created_idx").on(t.orgId, t.createdAt),
    index("statements_unsubmitted_idx").on(t.orgId, t.createdAt).where(sql`${t.submittedAt} IS NULL`),
  ],
);

/** Where an organization submits its statements (the EU Transparency Database API); the token is write-only. */
export const transparencySubmission = pgTable("transparency_submission", {
  orgId: text("org_id")
    .primaryKey()
    .references(() => organizations.id, { onDelete: "cascade" }),
  endpointUrl: text("endpoint_url").notNull(),
  token: text("token").notNull(),
  enabled: integer("enabled").notNull().default(0),
  updatedAt: big("updated_at").notNull(),
});

/** Each submission attempt: a batch of at most 100 statements, with its outcome. */
export const transparencySubmissions = pgTable(
  "transparency_submissions",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** "submitted" or "failed". */
    status: text("status").notNull(),
    httpStatus: integer("http_status"),
    error: text("error"),
    /** JSON array of the batch's puids. */
    puids: text("puids").notNull(),
    createdAt: big("created_at").notNull(),
  },
  (t) => [index("transparency_submissions_org_idx").on(t.orgId, t.createdAt)],
);

/** Where an organization wants enforcement events delivered (Standard Webhooks). */
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    secret: text("secret").notNull(),
    description: text("description"),
    eventTypes: text("event_types").notNull(),
    enabled: integer("enabled").notNull(),
    disabledReason: text("disabled_reason"),
    disabledAt: big("disabled_at"),
    failingSince: big("failing_since"),
    createdAt: big("created_at").notNull(),
    updatedAt: big("updated_at").notNull(),
  },
  (t) => [index("webhook_endpoints_org_idx").on(t.orgId)],
);

export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    eventType: text("event_type").notNull(),
    payload: text("payload").notNull(),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    lastStatusCode: integer("last_status_code"),
    lastLatencyMs: integer("last_latency_ms"),
    lastError: text("last_error"),
    createdAt: big("created_at").notNull(),
    deliveredAt: big("delivered_at"),
  },
  (t) => [
    index("webhook_deliveries_endpoint_idx").on(t.endpointId, t.id),
    // Retention deletes settled deliveries (and their attempts) by age (src/domain/plumbing/retention.ts).
    index("webhook_deliveries_created_idx").on(t.createdAt),
  ],
);

export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    id: text("id").primaryKey(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    attemptedAt: big("attempted_at").notNull(),
    statusCode: integer("status_code"),
    latencyMs: integer("latency_ms").notNull(),
    error: text("error"),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId, t.attemptedAt)],
);

/**
 * An organization's single sign-on (OIDC, src/domain/accounts/oidc-config.ts). The client secret
 * is kept as given, like webhook secrets and the Transparency Database token, and never answered
 * back. Lists are JSON text.
 */
export const oidcConfigs = pgTable("oidc_configs", {
  orgId: text("org_id")
    .primaryKey()
    .references(() => organizations.id, { onDelete: "cascade" }),
  enabled: integer("enabled").notNull().default(0),
  providerName: text("provider_name").notNull(),
  issuerUrl: text("issuer_url").notNull(),
  clientId: text("client_id").notNull(),
  clientSecret: text("client_secret").notNull(),
  /** JSON array of lower-case domains; empty: any. */
  allowedDomains: text("allowed_domains").notNull().default("[]"),
  groupsClaim: text("groups_claim").notNull().default("groups"),
  /** JSON array of { group, role }. */
  groupRoles: text("group_roles").notNull().default("[]"),
  /** The role of a user in no mapped group; null: refused. */
  defaultRole: text("default_role", { enum: ROLES }),
  provisioning: text("provisioning", { enum: PROVISIONING }).notNull().default("existing_only"),
  /** 0: password sign-in is off for the organization's users but its admins (break-glass). */
  passwordSignIn: integer("password_sign_in").notNull().default(1),
  /** 1: the provider never sends `email_verified`, and an absent claim counts as verified. */
  providerOmitsEmailVerified: integer("provider_omits_email_verified").notNull().default(0),
  /** 1: an existing account is linked at the first sign-in whose verified email is its own. */
  linkByVerifiedEmail: integer("link_by_verified_email").notNull().default(0),
  updatedAt: big("updated_at").notNull(),
});

/**
 * A sign-in through the provider in progress: the browser holds a random token in a short-lived
 * HttpOnly, SameSite=Lax cookie, the row its SHA-256 with the state, nonce and PKCE verifier,
 * and the browser's live session when it started (the only one the callback may replace, and
 * the proof of the account it is signed in to). The callback deletes it (one use); unfinished
 * ones are swept when the next starts.
 */
export const oidcSignIns = pgTable(
  "oidc_sign_ins",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull().unique(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    state: text("state").notNull(),
    nonce: text("nonce").notNull(),
    codeVerifier: text("code_verifier").notNull(),
    /** The id of the browser's live session when the sign-in started, or null: none. */
    sessionId: text("session_id"),
    createdAt: big("created_at").notNull(),
    expiresAt: big("expires_at").notNull(),
  },
  (t) => [index("oidc_sign_ins_expires_idx").on(t.expiresAt)],
);

export const sessions = pgTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull().unique(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    orgId: text("org_id").notNull(),
    csrfToken: text("csrf_token").notNull(),
    createdAt: big("created_at").notNull(),
    expiresAt: big("expires_at").notNull(),
    lastSeenAt: big("last_seen_at").notNull(),
  },
  (t) => [
    index("sessions_user_idx").on(t.userId),
    // Ended sessions (past their limit, or idle) are found by these, not by reading every session.
    index("sessions_expires_idx").on(t.expiresAt),
    index("sessions_seen_idx").on(t.lastSeenAt),
  ],
);

export const rateWindows = pgTable("rate_windows", {
  key: text("key").primaryKey(),
  windowStart: big("window_start").notNull(),
  count: integer("count").notNull(),
});

// ---------------------------------------------------------------------------------------------
// Evaluation of the AI classifier (issue 28, src/domain/evaluation/).

/** An evaluation set of a project: its name, where it came from, its latest version. */
export const evalSets = pgTable(
  "eval_sets",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    source: text("source", { enum: EVAL_SET_SOURCES }).notNull(),
    /** The latest version (1, 2, …): adding items to a frozen version makes a new one. */
    version: integer("version").notNull(),
    createdAt: big("created_at").notNull(),
    updatedAt: big("updated_at").notNull(),
  },
  (t) => [index("eval_sets_project_idx").on(t.projectId, t.createdAt)],
);

/** Each version of a set: frozen once a run used it (its items never change again). */
export const evalSetVersions = pgTable(
  "eval_set_versions",
  {
    setId: text("set_id")
      .notNull()
      .references(() => evalSets.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    items: integer("items").notNull(),
    /** When the first run of this version was started (null: not frozen). */
    frozenAt: big("frozen_at"),
    createdAt: big("created_at").notNull(),
  },
  (t) => [uniqueIndex("eval_set_versions_idx").on(t.setId, t.version)],
);

/** The labelled items of a set version (a new version copies the previous one's items). */
export const evalItems = pgTable(
  "eval_items",
  {
    id: text("id").primaryKey(),
    setId: text("set_id")
      .notNull()
      .references(() => evalSets.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    /** 0, 1, …: the order runs take the items in. */
    position: integer("position").notNull(),
    /** The caller's id of the item (import `id`; the case id for a set built from decisions). */
    externalId: text("external_id"),
    text: text("text").notNull(),
    /** JSON: the expected category names (empty: no violation). */
    categories: text("categories").notNull(),
    severity: text("severity", { enum: SEVERITIES }),
  },
  (t) => [uniqueIndex("eval_items_version_idx").on(t.setId, t.version, t.position)],
);

/** A run of a set version against a model, prompt and policy versions. */
export const evalRuns = pgTable(
  "eval_runs",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    setId: text("set_id")
      .notNull()
      .references(() => evalSets.id, { onDelete: "cascade" }),
    setVersion: integer("set_version").notNull(),
    model: text("model").notNull(),
    promptVersion: text("prompt_version").notNull(),
    /** JSON: category name → policy version (empty: the categories' descriptions). */
    policyVersions: text("policy_versions").notNull(),
    /** JSON: the categories the model is asked with ({ name, description }[]), read once when the run is started. */
    categories: text("categories").notNull(),
    status: text("status", { enum: EVAL_RUN_STATUSES }).notNull(),
    itemsDone: integer("items_done").notNull(),
    itemsTotal: integer("items_total").notNull(),
    /** Why a failed run failed. */
    error: text("error"),
    /** JSON: the run's figures (EvalRunMetrics), once it completed or was cancelled. */
    metrics: text("metrics"),
    startedAt: big("started_at"),
    finishedAt: big("finished_at"),
    createdAt: big("created_at").notNull(),
    updatedAt: big("updated_at").notNull(),
  },
  (t) => [index("eval_runs_project_idx").on(t.projectId, t.createdAt), index("eval_runs_set_idx").on(t.setId, t.setVersion)],
);

/** One item's answer in a run, written in its own transaction right after the model answered. */
export const evalRunItems = pgTable(
  "eval_run_items",
  {
    runId: text("run_id")
      .notNull()
      .references(() => evalRuns.id, { onDelete: "cascade" }),
    itemId: text("item_id").notNull(),
    /** The item's position in its set version (the run's order). */
    position: integer("position").notNull(),
    /** JSON: the predicted category names. */
    categories: text("categories").notNull(),
    severity: text("severity", { enum: SEVERITIES }),
    confidence: integer("confidence"),
    reasoning: text("reasoning"),
    /** Why the model gave no answer (then no categories, severity or confidence). */
    error: text("error"),
    latencyMs: integer("latency_ms"),
    promptTokens: integer("prompt_tokens"),
    completionTokens: integer("completion_tokens"),
    createdAt: big("created_at").notNull(),
  },
  (t) => [uniqueIndex("eval_run_items_idx").on(t.runId, t.position)],
);
