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
