/**
 * The drizzle schema. Every table lives here so drizzle-kit can diff it into migrations
 * (`npm run db:generate`). Times are integer milliseconds since the epoch unless a column
 * name says otherwise; JSON columns hold text parsed by the domain layer.
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const organizations = sqliteTable("organizations", {
  id: text("id").primaryKey(),
  slug: text("slug").notNull().unique(),
  name: text("name").notNull(),
  plan: text("plan", { enum: ["free", "pro", "enterprise"] }).notNull().default("enterprise"),
  createdAt: integer("created_at").notNull(),
});

export const projects = sqliteTable(
  "projects",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** AI settings: classification on/off, the confidence (1–100) that files a report, link scanning. */
    aiEnabled: integer("ai_enabled").notNull().default(0),
    aiThreshold: integer("ai_threshold").notNull().default(70),
    scanLinks: integer("scan_links").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("projects_org_idx").on(t.orgId)],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["secret", "publishable"] }).notNull(),
    name: text("name").notNull(),
    /** First characters of the key, kept so people can tell keys apart; never enough to use. */
    prefix: text("prefix").notNull(),
    /** SHA-256 of the whole key, hex. The key itself is never stored. */
    hash: text("hash").notNull(),
    /** Per-key override of FLAGSTAFF_REPORT_RATE_LIMIT (report creations per minute). */
    reportRateLimit: integer("report_rate_limit"),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
  },
  (t) => [uniqueIndex("api_keys_hash_idx").on(t.hash), index("api_keys_org_idx").on(t.orgId)],
);

export const identities = sqliteTable(
  "identities",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    externalId: text("external_id").notNull(),
    name: text("name"),
    username: text("username"),
    avatarUrl: text("avatar_url"),
    /** JSON text; null when never set. */
    metadata: text("metadata"),
    reportCount: integer("report_count").notNull().default(0),
    lastSeenAt: integer("last_seen_at"),
    lastReportedAt: integer("last_reported_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("identities_key_idx").on(t.projectId, t.type, t.externalId),
    // Paging walks ids (UUIDv7, so creation order); prefix search walks these.
    index("identities_project_id_idx").on(t.projectId, t.id),
    index("identities_external_idx").on(t.projectId, t.externalId),
    index("identities_name_idx").on(t.projectId, sql`lower(${t.name})`),
    index("identities_username_idx").on(t.projectId, sql`lower(${t.username})`),
  ],
);

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    email: text("email").notNull().unique(),
    name: text("name"),
    passwordHash: text("password_hash").notNull(),
    role: text("role", { enum: ["admin", "moderator", "viewer"] }).notNull(),
    createdAt: integer("created_at").notNull(),
    disabledAt: integer("disabled_at"),
  },
  (t) => [index("users_org_idx").on(t.orgId)],
);

export const auditEvents = sqliteTable(
  "audit_events",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id"),
    /** "api_key", "user" or "system". */
    actorType: text("actor_type").notNull(),
    actorId: text("actor_id"),
    action: text("action").notNull(),
    entityType: text("entity_type").notNull(),
    entityId: text("entity_id").notNull(),
    /** JSON: state before and after the change, and anything else worth keeping. */
    before: text("before"),
    after: text("after"),
    data: text("data"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    index("audit_org_idx").on(t.orgId, t.id),
    index("audit_entity_idx").on(t.orgId, t.entityType, t.entityId, t.id),
    index("audit_action_idx").on(t.orgId, t.action, t.id),
  ],
);

/** A project's report categories: the names reports may give as reasons. */
export const reportCategories = sqliteTable(
  "report_categories",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** Steers the AI classifier; shown to moderators too. */
    description: text("description"),
    severityHint: text("severity_hint", { enum: ["LOW", "MEDIUM", "HIGH", "CRITICAL"] }).notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("report_categories_name_idx").on(t.projectId, sql`lower(${t.name})`)],
);

/**
 * A case: one incident (a content target, or a subject when there is no target) with the
 * reports that describe it. `isOpen` is 1 while new reports may join it.
 */
export const cases = sqliteTable(
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
    bucket: text("bucket", { enum: ["emergency", "high", "normal"] }).notNull(),
    isOpen: integer("is_open").notNull(),
    contentType: text("content_type"),
    contentExternalId: text("content_external_id"),
    subjectIdentityId: text("subject_identity_id"),
    reportCount: integer("report_count").notNull(),
    assigneeId: text("assignee_id"),
    assignedAt: integer("assigned_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    lastReportAt: integer("last_report_at").notNull(),
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
    index("cases_subject_idx").on(t.subjectIdentityId),
  ],
);

/**
 * Reports. `createdUs` is the creation time in microseconds, made strictly increasing by the
 * domain layer, so it is a unique sort key and paging by an ISO timestamp never skips or
 * repeats a report even when many share a millisecond.
 */
export const reports = sqliteTable(
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
    /** Highest severity hint of the reasons: LOW, MEDIUM, HIGH or CRITICAL. */
    severity: text("severity").notNull(),
    /** JSON array of category names, as stored in the project's categories. */
    reasons: text("reasons").notNull(),
    description: text("description"),
    automated: integer("automated").notNull(),
    subjectIdentityId: text("subject_identity_id"),
    subjectExternalId: text("subject_external_id"),
    reporterIdentityId: text("reporter_identity_id"),
    contentType: text("content_type"),
    contentExternalId: text("content_external_id"),
    content: text("content"),
    /** JSON: { team, note, at, by } / { code, note, at, by } / { reason, note, at, by }. */
    escalation: text("escalation"),
    resolution: text("resolution"),
    dismissal: text("dismissal"),
    createdById: text("created_by_id"),
    /** AI enrichment, set once by the enrichment job (null until then). */
    aiSeverity: text("ai_severity"),
    aiCategories: text("ai_categories"),
    aiConfidence: integer("ai_confidence"),
    aiReasoning: text("ai_reasoning"),
    aiAnalyzedAt: integer("ai_analyzed_at"),
    createdUs: integer("created_us").notNull(),
    updatedAt: integer("updated_at").notNull(),
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
  ],
);

/** One row per reason of a report, so listing by reason is an index search. */
export const reportReasons = sqliteTable(
  "report_reasons",
  {
    reportId: text("report_id")
      .notNull()
      .references(() => reports.id, { onDelete: "cascade" }),
    orgId: text("org_id").notNull(),
    name: text("name").notNull(),
    createdUs: integer("created_us").notNull(),
  },
  (t) => [
    uniqueIndex("report_reasons_pk").on(t.reportId, t.name),
    index("report_reasons_list_idx").on(t.orgId, t.name, t.createdUs),
  ],
);

export const caseNotes = sqliteTable(
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
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("case_notes_case_idx").on(t.caseId, t.id)],
);

/** Every AI classification: of analyzed content, of a report being enriched, of a scanned URL. */
export const contentAnalyses = sqliteTable(
  "content_analyses",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    /** "content" (analyze route), "enrichment" (a report) or "link_scan" (a URL). */
    source: text("source").notNull(),
    /** The report this analysis created (content, link scans) or enriched. */
    reportId: text("report_id"),
    externalId: text("external_id"),
    contentType: text("content_type"),
    url: text("url"),
    /** The text that was classified (as the model saw it, before windowing). */
    sourceText: text("source_text").notNull(),
    categories: text("categories").notNull(),
    severity: text("severity").notNull(),
    confidence: integer("confidence").notNull(),
    reasoning: text("reasoning").notNull(),
    model: text("model").notNull(),
    latencyMs: integer("latency_ms").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("content_analyses_project_idx").on(t.projectId, t.id), index("content_analyses_report_idx").on(t.reportId)],
);

/**
 * The durable job queue: background work (enrichment, link scans, webhook deliveries) that
 * survives restarts. A job is leased while it runs; a lease that expires (its process died)
 * makes the job available again: at-least-once.
 */
export const jobs = sqliteTable(
  "jobs",
  {
    id: text("id").primaryKey(),
    kind: text("kind").notNull(),
    payload: text("payload").notNull(),
    /** pending → running → done, or back to pending for a retry, or dead after the last attempt. */
    status: text("status", { enum: ["pending", "running", "done", "dead"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull(),
    runAt: integer("run_at").notNull(),
    leaseUntil: integer("lease_until"),
    leasedBy: text("leased_by"),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("jobs_due_idx").on(t.status, t.runAt),
    index("jobs_lease_idx").on(t.status, t.leaseUntil),
    index("jobs_kind_idx").on(t.kind, t.status),
  ],
);
