/**
 * Every table of Flagstaff, described once (the words are src/db/columns.ts'). Each engine's
 * module builds its drizzle tables from this description with `defineTables`:
 * src/db/schema-sqlite.ts and src/db/schema-pg.ts, each the input of its own migrations
 * (drizzle/ and drizzle-pg/, `npm run db:generate` does both); src/db/schema.ts hands the domain
 * the set of the engine it runs on. Add a column here, once, then generate the migrations.
 *
 * Times are milliseconds since the epoch unless a column's name says otherwise (`*_us`:
 * microseconds); JSON columns hold text the domain writes and parses; enumerations are text typed
 * by the domain's vocabularies (no CHECK constraint, no PostgreSQL enum type). A foreign key
 * always holds another table's `id` and goes with that row (ON DELETE CASCADE).
 *
 * Full-text search is the one thing each engine indexes its own way, outside this description
 * (drizzle can state neither): drizzle/0020_search_text.sql (after 0013_search) adds the FTS5
 * tables `reports_search` and `identities_search` over the views `reports_search_source` (a
 * report's search_text, else its description, content and ai_reasoning) and
 * `identities_search_source` (an identity's search_text, else its external_id, name and username),
 * with the triggers that keep them in step; drizzle-pg/0010_search_text.sql (after 0003_search)
 * adds GIN indexes over `flagstaff_search_document(…)` of the same columns. src/db/search.ts says
 * how queries reach them (`Store.textSearch`).
 */
import { sql } from "drizzle-orm";
import { buildTables, flag, id, index, int, json, real, searchText, seq, table, text, time, uniqueIndex, type ColumnBuilder, type Dialect, type DialectTypes, type PartialIndex } from "./columns.ts";
// The enumerations are the domain's vocabularies (pure modules: src/domain/views): they type the
// columns and change no migration.
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
import { MEDIA_TYPES, PREVIEW_STATUSES } from "../domain/views/attachment.ts";
import { ADDITION_KINDS, FRAME_HASHINGS, MATCH_STATUSES, MEDIA_STATUSES, SIGNAL_TYPES } from "../domain/views/media-bank.ts";

/** The organization the row belongs to: deleted with it. */
const orgId = () => text("org_id").notNull().references("organizations");
/** The project the row belongs to: deleted with it. */
const projectId = () => text("project_id").notNull().references("projects");

/** Every table, under the name the domain imports it by (src/db/schema.ts), in the order they are built. */
const description = {
  organizations: table("organizations", {
    id: id(),
    slug: text("slug").notNull().unique(),
    name: text("name").notNull(),
    plan: text("plan", { enum: PLANS }).notNull().default("enterprise"),
    /** JSON: how its reviewers see media by default (src/domain/views/viewing.ts, ViewingDefaults); null = Flagstaff's defaults. */
    viewingDefaults: json("viewing_defaults"),
    createdAt: time("created_at").notNull(),
  }),

  projects: table(
    "projects",
    {
      id: id(),
      orgId: orgId(),
      name: text("name").notNull(),
      /** AI settings: classification on/off, the confidence (1–100) that files a report, link scanning. */
      aiEnabled: flag("ai_enabled").notNull().default(0),
      aiThreshold: int("ai_threshold").notNull().default(70),
      /** The precision (0.5–0.999) threshold advice aims at (src/domain/evaluation/runs.ts). */
      aiPrecisionTarget: real("ai_precision_target").notNull().default(0.9),
      scanLinks: flag("scan_links").notNull().default(0),
      /**
       * Bumped by every change of the project's report categories, in the change's transaction:
       * report creation keeps the categories in memory for as long as the project row it reads
       * says this number (src/domain/categories/categories.ts), on every instance.
       */
      categoriesVersion: int("categories_version").notNull().default(0),
      /** JSON: the project's statements-of-reasons settings (src/domain/views/dsa.ts); null = defaults. */
      dsaSettings: json("dsa_settings"),
      /** JSON: the project's strike policy (src/domain/views/strikes.ts); null = off. */
      strikePolicy: json("strike_policy"),
      createdAt: time("created_at").notNull(),
      updatedAt: time("updated_at").notNull(),
      /**
       * When the project was deleted: from then on no call finds it, and its rows are deleted in
       * slices by a job of their own, the project's row last (src/domain/accounts/project-deletion.ts).
       */
      deletedAt: time("deleted_at"),
    },
    (t) => [index("projects_org_idx").on(t.orgId)],
  ),

  apiKeys: table(
    "api_keys",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      kind: text("kind", { enum: KEY_KINDS }).notNull(),
      name: text("name").notNull(),
      /** First characters of the key, kept so people can tell keys apart; never enough to use. */
      prefix: text("prefix").notNull(),
      /** SHA-256 of the whole key, hex. The key itself is never stored. */
      hash: text("hash").notNull(),
      /** Per-key override of FLAGSTAFF_REPORT_RATE_LIMIT (report creations per minute). */
      reportRateLimit: int("report_rate_limit"),
      createdAt: time("created_at").notNull(),
      lastUsedAt: time("last_used_at"),
      revokedAt: time("revoked_at"),
    },
    (t) => [uniqueIndex("api_keys_hash_idx").on(t.hash), index("api_keys_org_idx").on(t.orgId)],
  ),

  identities: table(
    "identities",
    {
      id: id(),
      projectId: projectId(),
      type: text("type").notNull(),
      /** Prefix-searched, as are name and username: byte-wise on both engines (src/db/schema-pg.ts, "Collation"). */
      externalId: text("external_id").notNull(),
      name: text("name"),
      username: text("username"),
      avatarUrl: text("avatar_url"),
      /** JSON text; null when never set. */
      metadata: json("metadata"),
      reportCount: int("report_count").notNull().default(0),
      /** A trusted flagger (DSA Art. 22), set by admins: their reports go first and say so. */
      trustedFlagger: flag("trusted_flagger").notNull().default(0),
      /** Until when this identity's reports are stored but dismissed unseen (null: not muted). */
      mutedUntil: time("muted_until"),
      muteReason: text("mute_reason"),
      /**
       * As a reporter, how many of its reports were upheld and decided: kept by the workflow
       * engine at every decision (src/domain/identities/reporter-tally.ts holds the rule), so reading a
       * reporter's accuracy costs no look at its reports.
       */
      reportsUpheld: int("reports_upheld").notNull().default(0),
      reportsDecided: int("reports_decided").notNull().default(0),
      /**
       * external_id, name and username folded for the search index (src/domain/plumbing/search-text.ts,
       * searchDocument), or null when all three are pure ASCII and the index reads them as they are.
       */
      searchText: searchText(),
      lastSeenAt: time("last_seen_at"),
      lastReportedAt: time("last_reported_at"),
      createdAt: time("created_at").notNull(),
      updatedAt: time("updated_at").notNull(),
    },
    (t) => [
      uniqueIndex("identities_key_idx").on(t.projectId, t.type, t.externalId),
      // Paging walks ids (UUIDv7, so creation order); prefix search walks these.
      index("identities_project_id_idx").on(t.projectId, t.id),
      index("identities_external_idx").on(t.projectId, t.externalId),
      index("identities_name_idx").on(t.projectId, sql`lower(${t.name})`),
      index("identities_username_idx").on(t.projectId, sql`lower(${t.username})`),
    ],
  ),

  users: table(
    "users",
    {
      id: id(),
      orgId: orgId(),
      /** Normalised (normalizeEmail). Unique per organization only: one person may have accounts in several. */
      email: text("email").notNull(),
      name: text("name"),
      passwordHash: text("password_hash").notNull(),
      role: text("role", { enum: ROLES }).notNull(),
      createdAt: time("created_at").notNull(),
      disabledAt: time("disabled_at"),
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
      /** JSON: the user's own viewing choices (src/domain/views/viewing.ts, ViewingChoices); a field left out, or null, follows the organization. */
      viewingPreferences: json("viewing_preferences"),
    },
    (t) => [
      index("users_org_idx").on(t.orgId),
      uniqueIndex("users_org_email_idx").on(t.orgId, t.email),
      // Sign-in looks an email up across organizations.
      index("users_email_idx").on(t.email),
    ],
  ),

  auditEvents: table(
    "audit_events",
    {
      id: id(),
      orgId: orgId(),
      projectId: text("project_id"),
      /** "api_key", "user" or "system". */
      actorType: text("actor_type").notNull(),
      actorId: text("actor_id"),
      action: text("action").notNull(),
      entityType: text("entity_type").notNull(),
      entityId: text("entity_id").notNull(),
      /** JSON: state before and after the change, and anything else worth keeping. */
      before: json("before"),
      after: json("after"),
      data: json("data"),
      createdAt: time("created_at").notNull(),
      /**
       * The event's place in its organization's hash chain (src/db/audit-append.ts, docs/audit.md):
       * in its lane (chain_lane), 1, 2, 3… without gaps; null only for an event an instance of the
       * release before the chain wrote during a rolling upgrade, until the next checkpoint pass
       * chains it (in lane 0).
       */
      chainSeq: seq("chain_seq"),
      /** The hash of the event before it in the chain (64 zeros for the first), SHA-256 hex. */
      prevHash: text("prev_hash"),
      /** SHA-256 hex of prevHash followed by the digest of the event's canonical form (docs/audit.md). */
      hash: text("hash"),
      /**
       * Which of the organization's chains (lanes, sub-chains with a head each) the event is in:
       * a transaction appends to one lane per organization, so that commits of one organization
       * do not all queue on one head (docs/audit.md, "Lanes").
       */
      chainLane: int("chain_lane").notNull().default(0),
    },
    (t) => [
      uniqueIndex("audit_chain_idx").on(t.orgId, t.chainLane, t.chainSeq),
      // The few events an instance of the release before the chain wrote during a rolling upgrade, until chained.
      index("audit_unchained_idx").on(t.orgId, t.createdAt).where(sql`chain_seq IS NULL`),
      index("audit_org_idx").on(t.orgId, t.id),
      index("audit_entity_idx").on(t.orgId, t.entityType, t.entityId, t.id),
      index("audit_action_idx").on(t.orgId, t.action, t.id),
    ],
  ),

  /**
   * The head of each lane of each organization's audit chain: its last event's sequence and hash.
   * Its row is locked by the transaction that appends to the lane (just before its COMMIT,
   * src/db/audit-append.ts), so a lane's events are chained one transaction after another while
   * other lanes and other organizations are not held up; no lock is global.
   */
  auditChainHeads: table(
    "audit_chain_heads",
    {
      orgId: orgId(),
      lane: int("lane").notNull(),
      lastSeq: seq("last_seq").notNull(),
      lastHash: text("last_hash").notNull(),
    },
    (t) => [uniqueIndex("audit_chain_heads_org_lane_idx").on(t.orgId, t.lane)],
  ),

  /**
   * Signed statements "the lanes of this organization's chain had these sequences and these hashes
   * at this time" (Ed25519, the key outside the database: docs/audit.md). Once an event is under a
   * checkpoint, rewriting it and every hash after it no longer verifies either.
   */
  auditCheckpoints: table(
    "audit_checkpoints",
    {
      id: id(),
      orgId: orgId(),
      /** How many events the checkpoint covers (the sum of its lanes' sequences; grows with every checkpoint). */
      seq: seq("seq").notNull(),
      /** JSON: the heads signed, [[lane, seq, hash], …] by lane (docs/audit.md). */
      heads: json("heads").notNull(),
      /** When it was signed (ms since the epoch): part of what is signed. */
      signedAt: time("signed_at").notNull(),
      /** The signer's public key, raw 32 bytes in base64: which key to check it with (a key to trust comes from elsewhere). */
      publicKey: text("public_key").notNull(),
      /** Ed25519 signature of the checkpoint's canonical form, base64. */
      signature: text("signature").notNull(),
    },
    (t) => [uniqueIndex("audit_checkpoints_org_seq_idx").on(t.orgId, t.seq)],
  ),

  /** A project's report categories: the names reports may give as reasons. */
  reportCategories: table(
    "report_categories",
    {
      id: id(),
      projectId: projectId(),
      name: text("name").notNull(),
      /**
       * categoryKey(name) (src/domain/categories/category-key.ts): what makes two names the same category.
       * Unique per project; report reasons are matched against it.
       */
      nameKey: text("name_key").notNull(),
      /** Steers the AI classifier; shown to moderators too. */
      description: text("description"),
      severityHint: text("severity_hint", { enum: SEVERITIES }).notNull(),
      /** 1: the project marks the category graphic; a case naming it opens behind a warning screen (src/domain/categories/graphic.ts). */
      graphic: flag("graphic").notNull().default(0),
      createdAt: time("created_at").notNull(),
      updatedAt: time("updated_at").notNull(),
    },
    (t) => [uniqueIndex("report_categories_key_idx").on(t.projectId, t.nameKey)],
  ),

  /**
   * A case: one incident (a content target, or a subject when there is no target) with the
   * reports that describe it. `isOpen` is 1 while new reports may join it.
   */
  cases: table(
    "cases",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      status: text("status").notNull(),
      bucket: text("bucket", { enum: BUCKETS }).notNull(),
      isOpen: flag("is_open").notNull(),
      contentType: text("content_type"),
      contentExternalId: text("content_external_id"),
      subjectIdentityId: text("subject_identity_id"),
      reportCount: int("report_count").notNull(),
      assigneeId: text("assignee_id"),
      assignedAt: time("assigned_at"),
      /** When a review-mode claim lapses (src/domain/review/review-mode.ts); null: held until released or decided (an assignment). */
      claimExpiresAt: time("claim_expires_at"),
      createdAt: time("created_at").notNull(),
      updatedAt: time("updated_at").notNull(),
      lastReportAt: time("last_report_at").notNull(),
      /** The team an open case was last escalated to (null once decided, or never escalated). */
      escalatedTeam: text("escalated_team", { enum: TEAMS }),
      escalatedAt: time("escalated_at"),
      /** The last decision that took the case out of review: resolve, dismiss, uphold, overturn. */
      decision: text("decision"),
      /** Its resolution code or dismissal reason. */
      decisionCode: text("decision_code"),
      decidedAt: time("decided_at"),
      decidedByType: text("decided_by_type"),
      decidedById: text("decided_by_id"),
      /** 1 when a trusted flagger reported into the case: it goes first in the queue. */
      trustedFlagged: flag("trusted_flagged").notNull().default(0),
      /** The queue the case is in (null: the organization's default queue). */
      queueId: text("queue_id"),
      /** Raised by rules (`priority` effect): higher first in queues ordered by priority. */
      priority: int("priority").notNull().default(0),
    },
    (t) => [
      // At most one open case per content target, and per subject for target-less reports.
      uniqueIndex("cases_open_target_idx")
        .on(t.projectId, t.contentType, t.contentExternalId)
        .where(sql`${t.isOpen} = 1 AND ${t.contentExternalId} IS NOT NULL`),
      uniqueIndex("cases_open_subject_idx")
        .on(t.projectId, t.subjectIdentityId)
        .where(sql`${t.isOpen} = 1 AND ${t.contentExternalId} IS NULL AND ${t.subjectIdentityId} IS NOT NULL`),
      // The review queue: open cases of an organization by bucket, then age.
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
      // A deleted project's cases, taken a slice at a time (src/domain/accounts/project-deletion.ts).
      index("cases_project_idx").on(t.projectId),
    ],
  ),

  /**
   * Reports. `createdUs` is the creation time in microseconds, made strictly increasing by the
   * domain layer, so it is a unique sort key and paging by an ISO timestamp never skips or
   * repeats a report even when many share a millisecond.
   */
  reports: table(
    "reports",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      caseId: text("case_id").notNull().references("cases"),
      status: text("status").notNull(),
      /** Highest severity hint of the reasons: LOW, MEDIUM, HIGH or CRITICAL. */
      severity: text("severity").notNull(),
      /** JSON array of category names, as stored in the project's categories. */
      reasons: json("reasons").notNull(),
      description: text("description"),
      automated: flag("automated").notNull(),
      subjectIdentityId: text("subject_identity_id"),
      subjectExternalId: text("subject_external_id"),
      reporterIdentityId: text("reporter_identity_id"),
      contentType: text("content_type"),
      contentExternalId: text("content_external_id"),
      content: text("content"),
      /** JSON: { team, note, at, by } / { code, note, at, by } / { reason, note, at, by }. */
      escalation: json("escalation"),
      resolution: json("resolution"),
      dismissal: json("dismissal"),
      createdById: text("created_by_id"),
      /** AI enrichment, set once by the enrichment job (null until then). */
      aiSeverity: text("ai_severity"),
      aiCategories: json("ai_categories"),
      aiConfidence: int("ai_confidence"),
      aiReasoning: text("ai_reasoning"),
      aiAnalyzedAt: time("ai_analyzed_at"),
      /** JSON: the notifier's DSA Art. 16 notice ({ explanation, legalGround, notifierName, notifierEmail, goodFaith }), or null. */
      notice: json("notice"),
      /** 1 when the reporter was a trusted flagger when the report was filed. */
      reporterTrusted: flag("reporter_trusted").notNull().default(0),
      /**
       * What the report's AI enrichment classifies, as one analysis per content sees it: a hash of
       * its description and target content, normalised (src/domain/intake/content-key.ts); set
       * when the report asked for enrichment, else null (and on reports of releases before it).
       */
      contentKey: text("content_key"),
      createdUs: time("created_us").notNull(),
      updatedAt: time("updated_at").notNull(),
      /**
       * description, content and ai_reasoning folded for the search index (src/domain/plumbing/search-text.ts,
       * searchDocument), or null when all three are pure ASCII and the index reads them as they are.
       */
      searchText: searchText(),
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
  ),

  /** One row per reason of a report, so listing by reason is an index search. */
  reportReasons: table(
    "report_reasons",
    {
      reportId: text("report_id").notNull().references("reports"),
      orgId: text("org_id").notNull(),
      name: text("name").notNull(),
      createdUs: time("created_us").notNull(),
    },
    (t) => [
      uniqueIndex("report_reasons_pk").on(t.reportId, t.name),
      index("report_reasons_list_idx").on(t.orgId, t.name, t.createdUs),
    ],
  ),

  caseNotes: table(
    "case_notes",
    {
      id: id(),
      caseId: text("case_id").notNull().references("cases"),
      orgId: text("org_id").notNull(),
      authorType: text("author_type").notNull(),
      authorId: text("author_id"),
      body: text("body").notNull(),
      createdAt: time("created_at").notNull(),
    },
    (t) => [index("case_notes_case_idx").on(t.caseId, t.id)],
  ),

  /** Free tags on a case (lower-case words a team agrees on), shown on the queue's rows and filterable. */
  caseTags: table(
    "case_tags",
    {
      caseId: text("case_id").notNull().references("cases"),
      orgId: text("org_id").notNull(),
      tag: text("tag").notNull(),
      createdAt: time("created_at").notNull(),
    },
    (t) => [uniqueIndex("case_tags_pk").on(t.caseId, t.tag), index("case_tags_org_idx").on(t.orgId, t.tag)],
  ),

  /** A project's decision templates (src/domain/views/template.ts). */
  decisionTemplates: table(
    "decision_templates",
    {
      id: id(),
      orgId: text("org_id").notNull(),
      projectId: projectId(),
      name: text("name").notNull(),
      kind: text("kind", { enum: TEMPLATE_KINDS }).notNull(),
      body: text("body").notNull(),
      createdAt: time("created_at").notNull(),
      updatedAt: time("updated_at").notNull(),
    },
    (t) => [uniqueIndex("decision_templates_name_idx").on(t.projectId, t.name)],
  ),

  /**
   * A decision made on several cases at once, kept so that it can be undone for a while: what
   * each report and case was before (`items`, JSON), until when it may be undone, and whether it was.
   */
  bulkDecisions: table(
    "bulk_decisions",
    {
      id: id(),
      orgId: text("org_id").notNull(),
      actorType: text("actor_type").notNull(),
      actorId: text("actor_id"),
      action: text("action").notNull(),
      items: json("items").notNull(),
      createdAt: time("created_at").notNull(),
      undoUntil: time("undo_until").notNull(),
      undoneAt: time("undone_at"),
    },
    (t) => [index("bulk_decisions_org_idx").on(t.orgId, t.createdAt)],
  ),

  /** Every AI classification: of analyzed content, of a report being enriched, of a scanned URL. */
  contentAnalyses: table(
    "content_analyses",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      /** "content" (analyze route), "enrichment" (a report) or "link_scan" (a URL). */
      source: text("source").notNull(),
      /** The report this analysis created (content, link scans) or enriched. */
      reportId: text("report_id"),
      externalId: text("external_id"),
      contentType: text("content_type"),
      url: text("url"),
      /** The text that was classified (as the model saw it, before windowing). */
      sourceText: text("source_text").notNull(),
      categories: json("categories").notNull(),
      severity: text("severity").notNull(),
      confidence: int("confidence").notNull(),
      reasoning: text("reasoning").notNull(),
      model: text("model").notNull(),
      latencyMs: int("latency_ms").notNull(),
      /** PROMPT_VERSION (src/ai/prompt.ts) of the prompt the model was sent; null: written before it was recorded. */
      promptVersion: text("prompt_version"),
      /** JSON: the policy version each category used (category name → version; `{}`: descriptions only); null: not recorded. */
      policyVersions: json("policy_versions"),
      /** "logprobs" or "self_reported" (src/ai/classifier.ts); null: not recorded. */
      confidenceSource: text("confidence_source"),
      /**
       * An enrichment the model made, reusable by later reports of the same content
       * (src/domain/intake/content-key.ts): the content's key, and the classifier's (model,
       * prompt, categories and policies as sent). Null on every other analysis.
       */
      contentKey: text("content_key"),
      classifierKey: text("classifier_key"),
      /** A report's enrichment that reused an earlier analysis of the same content: that analysis, and when it was made. */
      reusedAnalysisId: text("reused_analysis_id"),
      reusedAnalysisAt: time("reused_analysis_at"),
      createdAt: time("created_at").notNull(),
    },
    (t) => [
      index("content_analyses_project_idx").on(t.projectId, t.id),
      index("content_analyses_report_idx").on(t.reportId),
      // The newest reusable analysis of a content (src/domain/analysis/enrichment.ts): a range of this index.
      index("content_analyses_content_idx").on(t.projectId, t.contentKey, t.createdAt).where(sql`${t.contentKey} IS NOT NULL`),
    ],
  ),

  /**
   * The versions of each report category's policy (src/domain/analysis/policies.ts): the text is
   * never changed once written; the status says what the version does. At most one live and one
   * shadow version per category (the partial unique indexes).
   */
  categoryPolicies: table(
    "category_policies",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      categoryId: text("category_id").notNull().references("report_categories"),
      /** 1, 2, … per category. */
      version: int("version").notNull(),
      text: text("text").notNull(),
      status: text("status", { enum: POLICY_STATUSES }).notNull(),
      createdByType: text("created_by_type").notNull(),
      createdById: text("created_by_id"),
      createdAt: time("created_at").notNull(),
      statusChangedAt: time("status_changed_at").notNull(),
    },
    (t) => [
      uniqueIndex("category_policies_version_idx").on(t.categoryId, t.version),
      uniqueIndex("category_policies_live_idx").on(t.categoryId).where(sql`${t.status} = 'live'`),
      uniqueIndex("category_policies_shadow_idx").on(t.categoryId).where(sql`${t.status} = 'shadow'`),
      index("category_policies_project_idx").on(t.projectId, t.status),
    ],
  ),

  /**
   * Shadow analyses (src/domain/analysis/shadow.ts): a report's text classified again with the
   * shadow model or policy versions after its live enrichment, stored for comparison only. One
   * per live analysis (the unique index: a job that runs twice stores one).
   */
  shadowAnalyses: table(
    "shadow_analyses",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      /** The live analysis (content_analyses.id) this one shadows: its text and report are that one's. */
      liveAnalysisId: text("live_analysis_id").notNull(),
      reportId: text("report_id").notNull(),
      categories: json("categories").notNull(),
      severity: text("severity").notNull(),
      confidence: int("confidence").notNull(),
      reasoning: text("reasoning").notNull(),
      model: text("model").notNull(),
      promptVersion: text("prompt_version").notNull(),
      /** JSON: category name → policy version used. */
      policyVersions: json("policy_versions").notNull(),
      latencyMs: int("latency_ms").notNull(),
      createdAt: time("created_at").notNull(),
    },
    (t) => [uniqueIndex("shadow_analyses_live_idx").on(t.liveAnalysisId), index("shadow_analyses_project_idx").on(t.projectId, t.createdAt)],
  ),

  /**
   * The durable job queue: background work (enrichment, link scans, webhook deliveries) that
   * survives restarts. A job is leased while it runs; a lease that expires (its process died)
   * makes the job available again: at-least-once.
   */
  jobs: table(
    "jobs",
    {
      id: id(),
      /** The organization the work is for: operators of one organization see only its jobs. */
      orgId: text("org_id"),
      kind: text("kind").notNull(),
      payload: json("payload").notNull(),
      /** pending → running → done, or back to pending for a retry, or dead after the last attempt. */
      status: text("status", { enum: JOB_STATUSES }).notNull(),
      /**
       * Its place in its lane: the lane takes its due jobs lowest first, then oldest first, and
       * past its backlog bound sheds the highest (src/domain/plumbing/backlog-rules.ts). 0 for
       * the kinds that do not rank their jobs (enrichment does: src/domain/views/enrichment-order.ts).
       */
      priority: int("priority").notNull().default(0),
      /** The row the job works on when it names one (a report, for enrichment): how a bulk retry finds a project's jobs. */
      entityId: text("entity_id"),
      attempts: int("attempts").notNull().default(0),
      maxAttempts: int("max_attempts").notNull(),
      runAt: time("run_at").notNull(),
      leaseUntil: time("lease_until"),
      leasedBy: text("leased_by"),
      lastError: text("last_error"),
      createdAt: time("created_at").notNull(),
      updatedAt: time("updated_at").notNull(),
    },
    (t) => [
      // A lane's pending jobs in run_at order, a range of this index whatever the backlog: when
      // its next job is due (src/domain/plumbing/jobs.ts, nextDueAt), each lane's depth and
      // oldest job, the skipped jobs old enough to expire.
      index("jobs_claim_idx").on(t.kind, t.status, t.runAt),
      // The claim's order (priority, then run_at) and a lane's least urgent job (shedding), each a
      // range of this index; also the skipped jobs a catch-up takes, most urgent first.
      index("jobs_order_idx").on(t.kind, t.status, t.priority, t.runAt),
      // The cheap pass that takes back jobs whose worker died (reclaimExpiredLeases).
      index("jobs_lease_idx").on(t.status, t.leaseUntil),
      // Retention: finished jobs by when they finished (src/domain/plumbing/retention.ts).
      index("jobs_finished_idx").on(t.status, t.updatedAt),
      index("jobs_org_idx").on(t.orgId, t.updatedAt),
    ],
  ),

  /** Link scans: what a URL gave when fetched, kept 24 hours so a second scan does not fetch. */
  urlScanCache: table("url_scan_cache", {
    /** The normalised URL (see extract-urls.ts). */
    url: text("url").primaryKey(),
    fetchedAt: time("fetched_at").notNull(),
    finalUrl: text("final_url"),
    statusCode: int("status_code"),
    contentType: text("content_type"),
    /** "html", "feed", "text", "skipped" (binary or refused) or "error". */
    kind: text("kind").notNull(),
    title: text("title"),
    text: text("text"),
    /** Why nothing was scored: a binary type, a refused address, a timeout. */
    reason: text("reason"),
    /** Body bytes read: at most the fetch cap (100 KB by default). */
    bytes: int("bytes"),
  }),

  /** Enforcement actions on identities: warnings, mutes, suspensions, bans, content removals. */
  enforcementActions: table(
    "enforcement_actions",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      identityId: text("identity_id").notNull().references("identities"),
      kind: text("kind", { enum: ACTION_KINDS }).notNull(),
      reason: text("reason").notNull(),
      note: text("note"),
      reportId: text("report_id"),
      caseId: text("case_id"),
      contentType: text("content_type"),
      contentExternalId: text("content_external_id"),
      startsAt: time("starts_at").notNull(),
      endsAt: time("ends_at"),
      /** Set by the scheduler when an action with an end reaches it. */
      expiredAt: time("expired_at"),
      /**
       * 1 while an action created to start later (startsAt in the future) waits for the scheduler
       * to record its start: its statement of reasons and its announcement (startDueActions). 0 for
       * every other action, and for rows an older build writes (the default).
       */
      awaitingStart: flag("awaiting_start").notNull().default(0),
      revokedAt: time("revoked_at"),
      revokedByType: text("revoked_by_type"),
      revokedById: text("revoked_by_id"),
      revokeReason: text("revoke_reason"),
      createdByType: text("created_by_type").notNull(),
      createdById: text("created_by_id"),
      createdAt: time("created_at").notNull(),
      updatedAt: time("updated_at").notNull(),
    },
    (t) => [
      index("enforcement_identity_idx").on(t.identityId, t.id),
      index("enforcement_project_idx").on(t.projectId, t.id),
      index("enforcement_report_idx").on(t.reportId),
      // The expiry scheduler's search: actions with an end, neither revoked nor expired yet.
      index("enforcement_expiry_idx").on(t.endsAt).where(sql`${t.revokedAt} IS NULL AND ${t.expiredAt} IS NULL AND ${t.endsAt} IS NOT NULL`),
      // The scheduler's search for scheduled actions whose start has come.
      index("enforcement_start_idx").on(t.startsAt).where(sql`${t.awaitingStart} = 1 AND ${t.revokedAt} IS NULL`),
    ],
  ),

  /**
   * A strike: a decision the project's strike policy counts against an identity (the decided
   * case's subject), added in the decision's transaction (src/domain/strikes/strikes.ts). It
   * counts until `expires_at` unless removed (its decision overturned on appeal, or undone).
   */
  strikes: table(
    "strikes",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      identityId: text("identity_id").notNull().references("identities"),
      caseId: text("case_id").notNull(),
      reportId: text("report_id").notNull(),
      /** The decision's resolution code. */
      code: text("code"),
      /** How many strikes it counts for. */
      count: int("count").notNull(),
      createdAt: time("created_at").notNull(),
      expiresAt: time("expires_at").notNull(),
      removedAt: time("removed_at"),
      removedReason: text("removed_reason"),
      /** JSON: the ladder's step this strike reached (null: none). */
      step: json("step"),
      /** The enforcement action the step took (null until taken). */
      actionId: text("action_id"),
    },
    (t) => [
      // An identity's strikes in force: its range, newest last.
      index("strikes_identity_idx").on(t.identityId, t.expiresAt),
      index("strikes_case_idx").on(t.caseId),
    ],
  ),

  /** A user's appeal against an enforcement action, forwarded by the platform. */
  appeals: table(
    "appeals",
    {
      id: id(),
      orgId: text("org_id").notNull(),
      actionId: text("action_id").notNull().references("enforcement_actions"),
      reportId: text("report_id"),
      caseId: text("case_id"),
      text: text("text").notNull(),
      status: text("status", { enum: APPEAL_STATUSES }).notNull(),
      decidedByType: text("decided_by_type"),
      decidedById: text("decided_by_id"),
      decisionNote: text("decision_note"),
      createdAt: time("created_at").notNull(),
      decidedAt: time("decided_at"),
    },
    (t) => [
      index("appeals_action_idx").on(t.actionId),
      index("appeals_org_status_idx").on(t.orgId, t.status, t.createdAt),
      // A case's appeals (the case page's list), without walking the organization's.
      index("appeals_case_idx").on(t.caseId, t.createdAt),
    ],
  ),

  /**
   * Service-level breaches (src/domain/service-levels/service-levels.ts): one row per case and target it
   * passed (first review, decision) or per appeal past its project's target, written once by the
   * periodic pass: the unique index makes a second pass (or another instance) insert nothing, so
   * the breach is counted and announced once.
   */
  slaBreaches: table(
    "sla_breaches",
    {
      id: id(),
      orgId: orgId(),
      projectId: text("project_id").notNull(),
      /** The queue whose target the case passed (its id, the default queue's too); null for an appeal. */
      queueId: text("queue_id"),
      target: text("target", { enum: SLA_TARGETS }).notNull(),
      /** The case (first_review, decision) or the appeal (appeal). */
      subjectId: text("subject_id").notNull(),
      targetMinutes: int("target_minutes").notNull(),
      dueAt: time("due_at").notNull(),
      breachedAt: time("breached_at").notNull(),
    },
    (t) => [
      uniqueIndex("sla_breaches_subject_idx").on(t.subjectId, t.target),
      index("sla_breaches_org_idx").on(t.orgId, t.breachedAt),
    ],
  ),

  /**
   * Quality review (issue 29): one row per sampled decision of a case, its blind second review
   * and a lead's acknowledgment (src/domain/quality/quality-review.ts). The first decision is
   * copied here when sampled, so the figures keep it whatever happens to the case later.
   */
  qualityReviews: table(
    "quality_reviews",
    {
      id: id(),
      orgId: orgId(),
      projectId: text("project_id").notNull(),
      caseId: text("case_id").notNull(),
      /** The queue the case was in when decided (the default queue's id too). */
      queueId: text("queue_id").notNull(),
      reason: text("reason", { enum: SAMPLE_REASONS }).notNull(),
      /** JSON string[]: the case's report categories when decided. */
      categories: json("categories").notNull().default("[]"),
      firstById: text("first_by_id").notNull(),
      firstAction: text("first_action", { enum: REVIEWED_ACTIONS }).notNull(),
      /** The resolution code or the dismissal reason. */
      firstCode: text("first_code"),
      firstKind: text("first_kind", { enum: ACTION_KINDS }),
      firstDecidedAt: time("first_decided_at").notNull(),
      /** The second reviewer once one took the task (null: offered to every eligible moderator). */
      reviewerId: text("reviewer_id"),
      claimedAt: time("claimed_at"),
      secondAction: text("second_action", { enum: REVIEWED_ACTIONS }),
      secondCode: text("second_code"),
      secondKind: text("second_kind", { enum: ACTION_KINDS }),
      secondNote: text("second_note"),
      secondDecidedAt: time("second_decided_at"),
      /** 1 when both decisions have the same label, 0 when not; null until reviewed. */
      agree: flag("agree"),
      ackById: text("ack_by_id"),
      ackAt: time("ack_at"),
      ackNote: text("ack_note"),
      ackReopened: flag("ack_reopened"),
      createdAt: time("created_at").notNull(),
    },
    (t) => [
      // One review per decision of a case, however many effects or instances see it.
      uniqueIndex("quality_reviews_decision_idx").on(t.caseId, t.firstDecidedAt),
      index("quality_reviews_org_idx").on(t.orgId, t.secondDecidedAt),
      index("quality_reviews_open_idx").on(t.orgId, t.createdAt).where(sql`${t.secondDecidedAt} is null`),
    ],
  ),

  /** Review queues of an organization (optionally of one project): who may work them and in which order. */
  queues: table(
    "queues",
    {
      id: id(),
      orgId: orgId(),
      projectId: text("project_id").references("projects"),
      name: text("name").notNull(),
      description: text("description"),
      /** severity_age (bucket then age, the default), priority, or age. */
      ordering: text("ordering").notNull().default("severity_age"),
      /** 1 for the organization's default queue: where a case no rule routes goes. */
      isDefault: flag("is_default").notNull().default(0),
      /** JSON { users: string[], roles: string[] }: who may work it; both empty = everyone. */
      access: json("access").notNull().default('{"users":[],"roles":[]}'),
      /** Service levels (minutes; null: none): an open case unclaimed and undecided this long after it opened, then undecided this long (src/domain/service-levels/service-levels.ts). */
      firstReviewTargetMinutes: int("first_review_target_minutes"),
      decisionTargetMinutes: int("decision_target_minutes"),
      /** Quality review (src/domain/review/quality-sampling.ts): the share of its moderators' decisions sampled for a blind second review (whole percent), and the decisions always sampled. */
      samplePercent: int("sample_percent").notNull().default(0),
      alwaysSample: text("always_sample", { enum: ALWAYS_SAMPLE }).notNull().default("none"),
      createdAt: time("created_at").notNull(),
      updatedAt: time("updated_at").notNull(),
    },
    (t) => [
      uniqueIndex("queues_org_name_idx").on(t.orgId, t.name),
      index("queues_org_idx").on(t.orgId),
      // One default queue per organization, whoever creates it first (defaultQueue).
      uniqueIndex("queues_org_default_idx").on(t.orgId).where(sql`${t.isDefault} = 1`),
    ],
  ),

  /** Automation rules: a condition tree over a report's facts and the effects it takes. */
  rules: table(
    "rules",
    {
      id: id(),
      orgId: orgId(),
      projectId: text("project_id").references("projects"),
      name: text("name").notNull(),
      description: text("description"),
      /** report.created, report.enriched or report.media_matched. */
      trigger: text("trigger").notNull(),
      /** live, shadow or disabled. */
      mode: text("mode").notNull(),
      /** JSON: the condition tree. */
      whenJson: json("when_json").notNull(),
      /** JSON: the list of effects. */
      thenJson: json("then_json").notNull(),
      /** 1, 2, …: every change makes a new version (kept in rule_versions). */
      version: int("version").notNull(),
      createdAt: time("created_at").notNull(),
      updatedAt: time("updated_at").notNull(),
    },
    (t) => [index("rules_org_trigger_idx").on(t.orgId, t.trigger, t.mode)],
  ),

  /** Every version of every rule, as it was: hits and audit events name a version. */
  ruleVersions: table(
    "rule_versions",
    {
      ruleId: text("rule_id").notNull(),
      orgId: orgId(),
      version: int("version").notNull(),
      /** JSON: the whole rule at this version. */
      body: json("body").notNull(),
      createdByType: text("created_by_type").notNull(),
      createdById: text("created_by_id"),
      createdAt: time("created_at").notNull(),
    },
    (t) => [uniqueIndex("rule_versions_idx").on(t.ruleId, t.version)],
  ),

  /** Each evaluation that matched, or that ran out of its search budget: the evidence of shadow mode and of live rules alike. */
  ruleHits: table(
    "rule_hits",
    {
      id: id(),
      orgId: orgId(),
      ruleId: text("rule_id").notNull(),
      version: int("version").notNull(),
      reportId: text("report_id").notNull(),
      /** JSON: the effects the rule took or would have taken. */
      effects: json("effects").notNull(),
      /** 1 when the effects were applied (live), 0 when only recorded (shadow). */
      applied: flag("applied").notNull(),
      /** 1 when the evaluation's search budget ran out before the rule was decided: it did not match, and `effects` is empty. */
      budgetExceeded: flag("budget_exceeded").notNull().default(0),
      at: time("at").notNull(),
    },
    // Read by rule only (the hits list and its counts); every index costs each hit on intake.
    (t) => [
      index("rule_hits_rule_idx").on(t.ruleId, t.at),
      // Retention deletes the oldest hits (src/domain/plumbing/retention.ts): a right-edge append per hit.
      index("rule_hits_at_idx").on(t.at),
    ],
  ),

  /**
   * Statements of reasons (DSA Art. 17 and 24(5)): one per enforcement action that restricts
   * something, in the EU Transparency Database's field names (`body`, JSON), immutable once made.
   */
  statements: table(
    "statements",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      actionId: text("action_id").notNull().references("enforcement_actions"),
      /** The platform's unique id of the statement (the database's `puid`). */
      puid: text("puid").notNull(),
      /** JSON: the statement's fields, as submitted. */
      body: json("body").notNull(),
      createdAt: time("created_at").notNull(),
      /** When the Transparency Database accepted it (or already had its puid). */
      submittedAt: time("submitted_at"),
    },
    (t) => [
      uniqueIndex("statements_puid_idx").on(t.orgId, t.puid),
      uniqueIndex("statements_action_idx").on(t.actionId),
      index("statements_org_created_idx").on(t.orgId, t.createdAt),
      index("statements_unsubmitted_idx").on(t.orgId, t.createdAt).where(sql`${t.submittedAt} IS NULL`),
    ],
  ),

  /** Where an organization submits its statements (the EU Transparency Database API); the token is write-only. */
  transparencySubmission: table("transparency_submission", {
    orgId: text("org_id").primaryKey().references("organizations"),
    endpointUrl: text("endpoint_url").notNull(),
    token: text("token").notNull(),
    enabled: flag("enabled").notNull().default(0),
    updatedAt: time("updated_at").notNull(),
  }),

  /** Each submission attempt: a batch of at most 100 statements, with its outcome. */
  transparencySubmissions: table(
    "transparency_submissions",
    {
      id: id(),
      orgId: orgId(),
      /** "submitted" or "failed". */
      status: text("status").notNull(),
      httpStatus: int("http_status"),
      error: text("error"),
      /** JSON array of the batch's puids. */
      puids: json("puids").notNull(),
      createdAt: time("created_at").notNull(),
    },
    (t) => [index("transparency_submissions_org_idx").on(t.orgId, t.createdAt)],
  ),

  /** Where an organization wants enforcement events delivered (Standard Webhooks). */
  webhookEndpoints: table(
    "webhook_endpoints",
    {
      id: id(),
      orgId: orgId(),
      url: text("url").notNull(),
      /** `whsec_…`: signing needs the secret itself, so it is stored, and shown once at creation. */
      secret: text("secret").notNull(),
      description: text("description"),
      /** JSON array of event types; empty means every event. */
      eventTypes: json("event_types").notNull(),
      enabled: flag("enabled").notNull(),
      disabledReason: text("disabled_reason"),
      disabledAt: time("disabled_at"),
      /** When the current run of failed deliveries began (null while deliveries succeed). */
      failingSince: time("failing_since"),
      createdAt: time("created_at").notNull(),
      updatedAt: time("updated_at").notNull(),
    },
    (t) => [index("webhook_endpoints_org_idx").on(t.orgId)],
  ),

  /** One message to one endpoint: written in the transaction of the change (the outbox), then delivered by a job. */
  webhookDeliveries: table(
    "webhook_deliveries",
    {
      /** The `webhook-id` header: stays the same across retries and replays of one message. */
      id: id(),
      orgId: text("org_id").notNull(),
      endpointId: text("endpoint_id").notNull().references("webhook_endpoints"),
      eventType: text("event_type").notNull(),
      payload: json("payload").notNull(),
      /** pending → delivered, or failed (retries exhausted / endpoint disabled). */
      status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
      attempts: int("attempts").notNull().default(0),
      lastStatusCode: int("last_status_code"),
      lastLatencyMs: int("last_latency_ms"),
      lastError: text("last_error"),
      createdAt: time("created_at").notNull(),
      deliveredAt: time("delivered_at"),
    },
    (t) => [
      index("webhook_deliveries_endpoint_idx").on(t.endpointId, t.id),
      // Retention deletes settled deliveries (and their attempts) by age (src/domain/plumbing/retention.ts).
      index("webhook_deliveries_created_idx").on(t.createdAt),
    ],
  ),

  /** Every delivery attempt, for the delivery log. */
  webhookAttempts: table(
    "webhook_attempts",
    {
      id: id(),
      deliveryId: text("delivery_id").notNull().references("webhook_deliveries"),
      attemptedAt: time("attempted_at").notNull(),
      statusCode: int("status_code"),
      latencyMs: int("latency_ms").notNull(),
      error: text("error"),
    },
    (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId, t.attemptedAt)],
  ),

  /**
   * An organization's single sign-on (OIDC, src/domain/accounts/oidc-config.ts). The client secret
   * is kept as given, like webhook secrets and the Transparency Database token, and never answered
   * back. Lists are JSON text.
   */
  oidcConfigs: table("oidc_configs", {
    orgId: text("org_id").primaryKey().references("organizations"),
    enabled: flag("enabled").notNull().default(0),
    providerName: text("provider_name").notNull(),
    issuerUrl: text("issuer_url").notNull(),
    clientId: text("client_id").notNull(),
    clientSecret: text("client_secret").notNull(),
    /** JSON array of lower-case domains; empty: any. */
    allowedDomains: json("allowed_domains").notNull().default("[]"),
    groupsClaim: text("groups_claim").notNull().default("groups"),
    /** JSON array of { group, role }. */
    groupRoles: json("group_roles").notNull().default("[]"),
    /** The role of a user in no mapped group; null: refused. */
    defaultRole: text("default_role", { enum: ROLES }),
    provisioning: text("provisioning", { enum: PROVISIONING }).notNull().default("existing_only"),
    /** 0: password sign-in is off for the organization's users but its admins (break-glass). */
    passwordSignIn: flag("password_sign_in").notNull().default(1),
    /** 1: the provider never sends `email_verified`, and an absent claim counts as verified. */
    providerOmitsEmailVerified: flag("provider_omits_email_verified").notNull().default(0),
    /** 1: an existing account is linked at the first sign-in whose verified email is its own. */
    linkByVerifiedEmail: flag("link_by_verified_email").notNull().default(0),
    updatedAt: time("updated_at").notNull(),
  }),

  /**
   * A sign-in through the provider in progress: the browser holds a random token in a short-lived
   * HttpOnly, SameSite=Lax cookie, the row its SHA-256 with the state, nonce and PKCE verifier,
   * and the browser's live session when it started (the only one the callback may replace, and
   * the proof of the account it is signed in to). The callback deletes it (one use); unfinished
   * ones are swept when the next starts.
   */
  oidcSignIns: table(
    "oidc_sign_ins",
    {
      id: id(),
      tokenHash: text("token_hash").notNull().unique(),
      orgId: orgId(),
      state: text("state").notNull(),
      nonce: text("nonce").notNull(),
      codeVerifier: text("code_verifier").notNull(),
      /** The id of the browser's live session when the sign-in started, or null: none. */
      sessionId: text("session_id"),
      createdAt: time("created_at").notNull(),
      expiresAt: time("expires_at").notNull(),
    },
    (t) => [index("oidc_sign_ins_expires_idx").on(t.expiresAt)],
  ),

  /** Dashboard sessions. The cookie holds a random token; only its SHA-256 is stored. */
  sessions: table(
    "sessions",
    {
      id: id(),
      tokenHash: text("token_hash").notNull().unique(),
      userId: text("user_id").notNull().references("users"),
      orgId: text("org_id").notNull(),
      /** Sent by the dashboard in a header on every mutation (double-submit CSRF defence). */
      csrfToken: text("csrf_token").notNull(),
      createdAt: time("created_at").notNull(),
      expiresAt: time("expires_at").notNull(),
      lastSeenAt: time("last_seen_at").notNull(),
    },
    (t) => [
      index("sessions_user_idx").on(t.userId),
      // Ended sessions (past their limit, or idle) are found by these, not by reading every session.
      index("sessions_expires_idx").on(t.expiresAt),
      index("sessions_seen_idx").on(t.lastSeenAt),
    ],
  ),

  /**
   * Fixed-window counters shared by every instance (report creations per API key, sign-in
   * attempts per email and address): used on PostgreSQL, where several instances must count
   * together. One process on SQLite counts in memory (src/domain/plumbing/rate-limit.ts); the table exists
   * on both engines all the same, as every table does.
   */
  rateWindows: table("rate_windows", {
    /** What is counted and for whom, e.g. `report:<api key id>` or `signin:<email>|<address>`. */
    key: text("key").primaryKey(),
    windowStart: time("window_start").notNull(),
    count: int("count").notNull(),
  }),

  // ---------------------------------------------------------------------------------------------
  // Evaluation of the AI classifier (issue 28, src/domain/evaluation/).

  /** An evaluation set of a project: its name, where it came from, its latest version. */
  evalSets: table(
    "eval_sets",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      name: text("name").notNull(),
      source: text("source", { enum: EVAL_SET_SOURCES }).notNull(),
      /** The latest version (1, 2, …): adding items to a frozen version makes a new one. */
      version: int("version").notNull(),
      createdAt: time("created_at").notNull(),
      updatedAt: time("updated_at").notNull(),
    },
    (t) => [index("eval_sets_project_idx").on(t.projectId, t.createdAt)],
  ),

  /** Each version of a set: frozen once a run used it (its items never change again). */
  evalSetVersions: table(
    "eval_set_versions",
    {
      setId: text("set_id").notNull().references("eval_sets"),
      version: int("version").notNull(),
      items: int("items").notNull(),
      /** When the first run of this version was started (null: not frozen). */
      frozenAt: time("frozen_at"),
      createdAt: time("created_at").notNull(),
    },
    (t) => [uniqueIndex("eval_set_versions_idx").on(t.setId, t.version)],
  ),

  /** The labelled items of a set version (a new version copies the previous one's items). */
  evalItems: table(
    "eval_items",
    {
      id: id(),
      setId: text("set_id").notNull().references("eval_sets"),
      version: int("version").notNull(),
      /** 0, 1, …: the order runs take the items in. */
      position: int("position").notNull(),
      /** The caller's id of the item (import `id`; the case id for a set built from decisions). */
      externalId: text("external_id"),
      text: text("text").notNull(),
      /** JSON: the expected category names (empty: no violation). */
      categories: json("categories").notNull(),
      severity: text("severity", { enum: SEVERITIES }),
    },
    (t) => [uniqueIndex("eval_items_version_idx").on(t.setId, t.version, t.position)],
  ),

  /** A run of a set version against a model, prompt and policy versions. */
  evalRuns: table(
    "eval_runs",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      setId: text("set_id").notNull().references("eval_sets"),
      setVersion: int("set_version").notNull(),
      model: text("model").notNull(),
      promptVersion: text("prompt_version").notNull(),
      /** JSON: category name → policy version (empty: the categories' descriptions). */
      policyVersions: json("policy_versions").notNull(),
      /** JSON: the categories the model is asked with ({ name, description }[]), read once when the run is started. */
      categories: json("categories").notNull(),
      status: text("status", { enum: EVAL_RUN_STATUSES }).notNull(),
      itemsDone: int("items_done").notNull(),
      itemsTotal: int("items_total").notNull(),
      /** Why a failed run failed. */
      error: text("error"),
      /** JSON: the run's figures (EvalRunMetrics), once it completed or was cancelled. */
      metrics: json("metrics"),
      startedAt: time("started_at"),
      finishedAt: time("finished_at"),
      createdAt: time("created_at").notNull(),
      updatedAt: time("updated_at").notNull(),
    },
    (t) => [index("eval_runs_project_idx").on(t.projectId, t.createdAt), index("eval_runs_set_idx").on(t.setId, t.setVersion)],
  ),

  /** One item's answer in a run, written in its own transaction right after the model answered. */
  evalRunItems: table(
    "eval_run_items",
    {
      runId: text("run_id").notNull().references("eval_runs"),
      itemId: text("item_id").notNull(),
      /** The item's position in its set version (the run's order). */
      position: int("position").notNull(),
      /** JSON: the predicted category names. */
      categories: json("categories").notNull(),
      severity: text("severity", { enum: SEVERITIES }),
      confidence: int("confidence"),
      reasoning: text("reasoning"),
      /** Why the model gave no answer (then no categories, severity or confidence). */
      error: text("error"),
      latencyMs: int("latency_ms"),
      promptTokens: int("prompt_tokens"),
      completionTokens: int("completion_tokens"),
      createdAt: time("created_at").notNull(),
    },
    (t) => [uniqueIndex("eval_run_items_idx").on(t.runId, t.position)],
  ),

  /**
   * A distinct file kept in the attachment store (docs/attachments.md), by its SHA-256: one copy
   * however many attachments hold it. Written (with a lease) before its object is stored, so an
   * object never exists without its row; the sweep deletes the object and the row once no
   * attachment holds it and the lease has run out.
   */
  attachmentBlobs: table(
    "attachment_blobs",
    {
      /** The SHA-256 of the bytes, lower-case hex: the object's key. */
      id: id(),
      sizeBytes: int("size_bytes").notNull(),
      /** The type read from the bytes (MEDIA_TYPES, src/domain/media/sniff.ts). */
      mediaType: text("media_type", { enum: MEDIA_TYPES }).notNull(),
      /** Uploads of these bytes under way (stored, their rows not committed yet): it is not deleted while any is. */
      pendingUploads: int("pending_uploads").notNull(),
      /** When the last upload began: an upload still pending after FLAGSTAFF_ATTACHMENT_ORPHAN_MS died (a crash), and no longer holds it. */
      heldUntil: time("held_until").notNull(),
      /** Set once its deletion began (its object being deleted): an upload of the same bytes waits. */
      deletingAt: time("deleting_at"),
      previewStatus: text("preview_status", { enum: PREVIEW_STATUSES }).notNull(),
      previewWidth: int("preview_width"),
      previewHeight: int("preview_height"),
      previewBytes: int("preview_bytes"),
      /** Why no preview was made (a refusal's message). */
      previewError: text("preview_error"),
      /** An image's PDQ hash and quality, from its preview's decoding (docs/media.md): null until made, or not an image decoded here. */
      pdq: text("pdq"),
      pdqQuality: int("pdq_quality"),
      createdAt: time("created_at").notNull(),
    },
    (t) => [index("attachment_blobs_held_idx").on(t.heldUntil)],
  ),

  /** Evidence added to a report or a case (docs/attachments.md): its bytes are its blob's. */
  attachments: table(
    "attachments",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      /** The case it is evidence of (a report's attachment: the report's case). */
      caseId: text("case_id").notNull().references("cases"),
      /** The report it was added to, or null when added to the case. */
      reportId: text("report_id").references("reports"),
      /** The SHA-256 of its bytes: its attachment_blobs row. */
      blobId: text("blob_id").notNull(),
      /** The name the uploader gave (shown, and offered as the download's name; never trusted). */
      fileName: text("file_name").notNull(),
      /** The Content-Type the uploader declared (recorded, never trusted). */
      declaredType: text("declared_type"),
      mediaType: text("media_type", { enum: MEDIA_TYPES }).notNull(),
      sizeBytes: int("size_bytes").notNull(),
      width: int("width"),
      height: int("height"),
      addedByType: text("added_by_type").notNull(),
      addedById: text("added_by_id"),
      createdAt: time("created_at").notNull(),
    },
    (t) => [
      index("attachments_case_idx").on(t.caseId, t.createdAt),
      index("attachments_org_idx").on(t.orgId),
      index("attachments_blob_idx").on(t.blobId),
      // A report moved to another case takes its attachments along; a deleted report takes them.
      index("attachments_report_idx").on(t.reportId).where(sql`${t.reportId} IS NOT NULL`),
    ],
  ),

  /**
   * The attachment store this database's instances use (one row): an instance whose store is
   * another (its own local directory, a second bucket) refuses to start, so that instances
   * sharing PostgreSQL never keep evidence on separate disks.
   */
  attachmentStores: table("attachment_stores", {
    /** The store: `s3:<endpoint>/<bucket>`, or `local:<the directory's store-id file>`. */
    id: id(),
    /** Where it is, for the refusal's message. */
    location: text("location").notNull(),
    createdAt: time("created_at").notNull(),
  }),

  /** A project's bank of known harmful media (docs/media.md): entries matched against its cases' media. */
  mediaBanks: table(
    "media_banks",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      name: text("name").notNull(),
      description: text("description"),
      enabled: flag("enabled").notNull(),
      /** A negative bank: its match suppresses the other banks' matches of the same media. */
      negative: flag("negative").notNull(),
      /** JSON: what a match does (BankAction, src/domain/views/media-bank.ts). */
      action: json("action").notNull(),
      /** A PDQ entry matches at this Hamming distance or less. */
      pdqDistance: int("pdq_distance").notNull(),
      /** PDQ hashes of lower quality are not matched against it. */
      qualityFloor: int("quality_floor").notNull(),
      /** An entry matching more than this many times within the window is quarantined (null: never). */
      quarantineCount: int("quarantine_count"),
      quarantineWindowMs: int("quarantine_window_ms"),
      createdAt: time("created_at").notNull(),
      updatedAt: time("updated_at").notNull(),
      /**
       * When the bank was deleted: from then on no call finds it and nothing matches it; its
       * entries are deleted in slices by a job of their own, the bank's row last
       * (src/domain/banks/bank-deletion.ts).
       */
      deletedAt: time("deleted_at"),
    },
    (t) => [
      // A name is unique among a project's banks that are not deleted: a bank deleted a moment ago may be made again.
      uniqueIndex("media_banks_live_name_idx").on(t.projectId, t.name).where(sql`${t.deletedAt} IS NULL`),
      index("media_banks_org_idx").on(t.orgId),
    ],
  ),

  /**
   * A signal in a bank: a digest (SHA-256, MD5) or a PDQ hash, lower-case hex; or a whole video's
   * frame hashes (vPDQ), held in `frames`, its value then the SHA-256 of that text (a unique
   * index's row cannot hold a long video's 24 KB and more).
   */
  mediaBankEntries: table(
    "media_bank_entries",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      bankId: text("bank_id").notNull().references("media_banks"),
      signalType: text("signal_type", { enum: SIGNAL_TYPES }).notNull(),
      value: text("value").notNull(),
      /** Where it came from (a list's name, a decision), kept and exported. */
      origin: text("origin"),
      /** JSON: a flat object of free-form facts (an imported file's extra columns). */
      metadata: json("metadata"),
      addedByType: text("added_by_type").notNull(),
      addedById: text("added_by_id"),
      /** Set when it matched more than its bank's quarantine count within the window: it matches nothing until released. */
      quarantinedAt: time("quarantined_at"),
      quarantineReason: text("quarantine_reason"),
      createdAt: time("created_at").notNull(),
      /** The addition it came with (media_bank_additions; null before additions were recorded): what an undo of a banking removes, what the past media check reads. No reference: an entry outlives its case. */
      additionId: text("addition_id"),
      /** A vpdq entry's frame hashes as HMA writes them (a JSON array of "<pdq hex>,<quality>,<seconds>"); null for the other types. */
      frames: text("frames"),
      /**
       * The banks' version (media_bank_versions) its addition moved the project to (null: added
       * before versions were recorded here): an instance whose index is older adds the entries
       * added since instead of building it again (src/domain/intake/signal-index.ts).
       */
      addedVersion: int("added_version"),
    },
    // (project, added_version, id): the entries added since a version, a range, a page at a time.
    (t) => [
      uniqueIndex("media_bank_entries_signal_idx").on(t.bankId, t.signalType, t.value),
      index("media_bank_entries_project_idx").on(t.projectId),
      index("media_bank_entries_addition_idx").on(t.additionId),
      index("media_bank_entries_added_idx").on(t.projectId, t.addedVersion, t.id),
    ],
  ),

  /**
   * Entries added to a bank together (docs/media.md, "Banking from a decision"): entries added
   * one by one or imported (`entries`), or a case's media banked by a moderator's decision
   * (`case`, with its reason; undoable). Each carries the check of the project's past media
   * against its entries, run in the background a batch at a time: its cursor is here, so a
   * restart continues where it stopped.
   */
  mediaBankAdditions: table(
    "media_bank_additions",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      bankId: text("bank_id").notNull().references("media_banks"),
      kind: text("kind", { enum: ADDITION_KINDS }).notNull(),
      /** The case whose media were banked (`case`). No reference: the entries outlive the case. */
      caseId: text("case_id"),
      /** Why the moderator banked them (`case`). */
      reason: text("reason"),
      addedByType: text("added_by_type").notNull(),
      addedById: text("added_by_id"),
      /** Entries the addition added; signals the bank held already; PDQ hashes under the bank's quality floor, not added. */
      added: int("added").notNull(),
      unchanged: int("unchanged").notNull(),
      belowFloor: int("below_floor").notNull(),
      createdAt: time("created_at").notNull(),
      /** An undone banking: its entries removed (how many), by whom. */
      undoneAt: time("undone_at"),
      undoneByType: text("undone_by_type"),
      undoneById: text("undone_by_id"),
      removed: int("removed"),
      /** The past media check: the last media item it will check (the project's newest when it started), the last one checked, how many, the matches it recorded, when it ended. */
      checkThrough: text("check_through"),
      checkAfter: text("check_after"),
      checked: int("checked").notNull(),
      checkMatches: int("check_matches").notNull(),
      checkedAt: time("checked_at"),
    },
    (t) => [index("media_bank_additions_case_idx").on(t.caseId), index("media_bank_additions_bank_idx").on(t.bankId, t.checkThrough)],
  ),

  /**
   * A project's banks' version, counted up in the transaction of every change to them: each
   * instance reads it (one row by its key) before matching and reloads its in-memory index
   * when it moved (docs/media.md, "Several instances").
   */
  mediaBankVersions: table("media_bank_versions", {
    projectId: text("project_id").primaryKey().references("projects"),
    version: int("version").notNull(),
    /**
     * The last version a change other than entries added moved it to (a bank created, changed or
     * deleted; an entry removed, quarantined or released; a banking undone): an index older than
     * that is built again, a newer one only takes the entries added since (signal-index.ts).
     */
    reshapedVersion: int("reshaped_version").notNull().default(0),
  }),

  /** A media item of a case: sent with a report (a URL and/or hashes) or an attachment, with its hashes once known. */
  caseMedia: table(
    "case_media",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      /**
       * The case its report or attachment is in, kept for the media job (a report moved to
       * another case takes its media along: workflow-engine.ts, rehome). Neither indexed nor a
       * foreign key: a case's media are found through its reports and attachments (mediaOfCase),
       * because an index on case ids, which intake meets in random order, cost every report with
       * media a random index page written (about 11 µs of CPU a row on SQLite:
       * scripts/bench/case-media-insert.ts), and a foreign key without an index makes deleting
       * each case scan the table. The rows go with their project, report or attachment.
       */
      caseId: text("case_id").notNull(),
      reportId: text("report_id").references("reports"),
      attachmentId: text("attachment_id").references("attachments"),
      /** The URL the platform sent (fetched in the background), if any. */
      url: text("url"),
      /** Keep the fetched file as an attachment of the report. */
      keep: flag("keep").notNull(),
      sha256: text("sha256"),
      md5: text("md5"),
      pdq: text("pdq"),
      pdqQuality: int("pdq_quality"),
      /** A video's frames, one a second, as a vPDQ signal (HMA's text, src/domain/media/vpdq.ts), when ffmpeg sampled them. */
      vpdq: text("vpdq"),
      /** A video's: `vpdq` (its frames hashed) or `exact_only` (SHA-256 and MD5 only: no ffmpeg, or refused); null for anything else. */
      frameHashing: text("frame_hashing", { enum: FRAME_HASHINGS }),
      status: text("status", { enum: MEDIA_STATUSES }).notNull(),
      /** Why it was refused or could not be fetched. */
      error: text("error"),
      createdAt: time("created_at").notNull(),
      hashedAt: time("hashed_at"),
      /** When it was last matched against the project's banks (null: not yet). */
      matchedAt: time("matched_at"),
    },
    // (report) and (attachment): a case's media (mediaOfCase), and the rows a deleted report or
    // attachment takes along; report ids grow with time (UUIDv7), so intake appends to that
    // index; only attachments' media have an attachment. (project, id): the past media check
    // reads a project's media in id order, a batch at a time.
    (t) => [
      index("case_media_report_idx").on(t.reportId),
      index("case_media_attachment_idx").on(t.attachmentId).where(sql`${t.attachmentId} IS NOT NULL`),
      index("case_media_project_idx").on(t.projectId, t.id),
      // A video's frames hashed once per organization and bytes (matching.ts, framesHashedBefore):
      // only rows with frames, which intake never writes.
      index("case_media_frames_idx").on(t.orgId, t.sha256).where(sql`${t.vpdq} IS NOT NULL`),
    ],
  ),

  /** A case's media item matched by a bank entry (docs/media.md): why, what it did, and the moderator's verdict. */
  mediaMatches: table(
    "media_matches",
    {
      id: id(),
      orgId: orgId(),
      projectId: projectId(),
      caseId: text("case_id").notNull().references("cases"),
      reportId: text("report_id").references("reports"),
      mediaId: text("media_id").notNull().references("case_media"),
      bankId: text("bank_id").notNull().references("media_banks"),
      entryId: text("entry_id").notNull().references("media_bank_entries"),
      /** PDQ: the Hamming distance and the media's hash quality; exact digests: null. */
      distance: int("distance"),
      quality: int("quality"),
      /** A negative bank matched the same media: no action was taken. */
      suppressed: flag("suppressed").notNull(),
      /** This match put its entry over the quarantine count: no action was taken. */
      quarantined: flag("quarantined").notNull(),
      status: text("status", { enum: MATCH_STATUSES }).notNull(),
      decidedById: text("decided_by_id"),
      decidedAt: time("decided_at"),
      createdAt: time("created_at").notNull(),
    },
    (t) => [
      uniqueIndex("media_matches_media_entry_idx").on(t.mediaId, t.entryId),
      index("media_matches_entry_idx").on(t.entryId, t.createdAt),
      index("media_matches_bank_idx").on(t.bankId, t.status),
      index("media_matches_case_idx").on(t.caseId),
      // A report moved to another case takes its matches along; a deleted report takes them.
      index("media_matches_report_idx").on(t.reportId),
    ],
  ),
};

/** The tables' names, in the description's order: what each engine's module exports (test/schema-dialects.test.ts checks it). */
export const TABLE_NAMES = Object.keys(description) as (keyof typeof description)[];

/** The drizzle tables of one engine (its `Dialect`), under the description's names. */
export const defineTables = <T extends DialectTypes, B extends ColumnBuilder, I extends PartialIndex, X>(dialect: Dialect<T, B, I, X>) => buildTables(dialect, description);
