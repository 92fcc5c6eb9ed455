CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"hash" text NOT NULL,
	"report_rate_limit" integer,
	"created_at" bigint NOT NULL,
	"last_used_at" bigint,
	"revoked_at" bigint
);
--> statement-breakpoint
CREATE TABLE "appeals" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"action_id" text NOT NULL,
	"report_id" text,
	"case_id" text,
	"text" text NOT NULL,
	"status" text NOT NULL,
	"decided_by_type" text,
	"decided_by_id" text,
	"decision_note" text,
	"created_at" bigint NOT NULL,
	"decided_at" bigint
);
--> statement-breakpoint
CREATE TABLE "audit_events" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"actor_type" text NOT NULL,
	"actor_id" text,
	"action" text NOT NULL,
	"entity_type" text NOT NULL,
	"entity_id" text NOT NULL,
	"before" text,
	"after" text,
	"data" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "case_notes" (
	"id" text PRIMARY KEY NOT NULL,
	"case_id" text NOT NULL,
	"org_id" text NOT NULL,
	"author_type" text NOT NULL,
	"author_id" text,
	"body" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "cases" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"status" text NOT NULL,
	"bucket" text NOT NULL,
	"is_open" integer NOT NULL,
	"content_type" text,
	"content_external_id" text,
	"subject_identity_id" text,
	"report_count" integer NOT NULL,
	"assignee_id" text,
	"assigned_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"last_report_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "content_analyses" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"source" text NOT NULL,
	"report_id" text,
	"external_id" text,
	"content_type" text,
	"url" text,
	"source_text" text NOT NULL,
	"categories" text NOT NULL,
	"severity" text NOT NULL,
	"confidence" integer NOT NULL,
	"reasoning" text NOT NULL,
	"model" text NOT NULL,
	"latency_ms" integer NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "enforcement_actions" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"identity_id" text NOT NULL,
	"kind" text NOT NULL,
	"reason" text NOT NULL,
	"note" text,
	"report_id" text,
	"case_id" text,
	"content_type" text,
	"content_external_id" text,
	"starts_at" bigint NOT NULL,
	"ends_at" bigint,
	"expired_at" bigint,
	"revoked_at" bigint,
	"revoked_by_type" text,
	"revoked_by_id" text,
	"revoke_reason" text,
	"created_by_type" text NOT NULL,
	"created_by_id" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "identities" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"type" text NOT NULL,
	"external_id" text NOT NULL,
	"name" text,
	"username" text,
	"avatar_url" text,
	"metadata" text,
	"report_count" integer DEFAULT 0 NOT NULL,
	"last_seen_at" bigint,
	"last_reported_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text,
	"kind" text NOT NULL,
	"payload" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer NOT NULL,
	"run_at" bigint NOT NULL,
	"lease_until" bigint,
	"leased_by" text,
	"last_error" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "organizations" (
	"id" text PRIMARY KEY NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"plan" text DEFAULT 'enterprise' NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "organizations_slug_unique" UNIQUE("slug")
);
--> statement-breakpoint
CREATE TABLE "projects" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"ai_enabled" integer DEFAULT 0 NOT NULL,
	"ai_threshold" integer DEFAULT 70 NOT NULL,
	"scan_links" integer DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rate_windows" (
	"key" text PRIMARY KEY NOT NULL,
	"window_start" bigint NOT NULL,
	"count" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "report_categories" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"name_key" text NOT NULL,
	"description" text,
	"severity_hint" text NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "report_reasons" (
	"report_id" text NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"created_us" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reports" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"case_id" text NOT NULL,
	"status" text NOT NULL,
	"severity" text NOT NULL,
	"reasons" text NOT NULL,
	"description" text,
	"automated" integer NOT NULL,
	"subject_identity_id" text,
	"subject_external_id" text,
	"reporter_identity_id" text,
	"content_type" text,
	"content_external_id" text,
	"content" text,
	"escalation" text,
	"resolution" text,
	"dismissal" text,
	"created_by_id" text,
	"ai_severity" text,
	"ai_categories" text,
	"ai_confidence" integer,
	"ai_reasoning" text,
	"ai_analyzed_at" bigint,
	"created_us" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"user_id" text NOT NULL,
	"org_id" text NOT NULL,
	"csrf_token" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"last_seen_at" bigint NOT NULL,
	CONSTRAINT "sessions_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "url_scan_cache" (
	"url" text PRIMARY KEY NOT NULL,
	"fetched_at" bigint NOT NULL,
	"final_url" text,
	"status_code" integer,
	"content_type" text,
	"kind" text NOT NULL,
	"title" text,
	"text" text,
	"reason" text,
	"bytes" integer
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"password_hash" text NOT NULL,
	"role" text NOT NULL,
	"created_at" bigint NOT NULL,
	"disabled_at" bigint
);
--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"id" text PRIMARY KEY NOT NULL,
	"delivery_id" text NOT NULL,
	"attempted_at" bigint NOT NULL,
	"status_code" integer,
	"latency_ms" integer NOT NULL,
	"error" text
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"endpoint_id" text NOT NULL,
	"event_type" text NOT NULL,
	"payload" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_status_code" integer,
	"last_latency_ms" integer,
	"last_error" text,
	"created_at" bigint NOT NULL,
	"delivered_at" bigint
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"url" text NOT NULL,
	"secret" text NOT NULL,
	"description" text,
	"event_types" text NOT NULL,
	"enabled" integer NOT NULL,
	"disabled_reason" text,
	"disabled_at" bigint,
	"failing_since" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "appeals" ADD CONSTRAINT "appeals_action_id_enforcement_actions_id_fk" FOREIGN KEY ("action_id") REFERENCES "public"."enforcement_actions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_events" ADD CONSTRAINT "audit_events_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "case_notes" ADD CONSTRAINT "case_notes_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cases" ADD CONSTRAINT "cases_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cases" ADD CONSTRAINT "cases_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "content_analyses" ADD CONSTRAINT "content_analyses_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "content_analyses" ADD CONSTRAINT "content_analyses_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enforcement_actions" ADD CONSTRAINT "enforcement_actions_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enforcement_actions" ADD CONSTRAINT "enforcement_actions_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enforcement_actions" ADD CONSTRAINT "enforcement_actions_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."identities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identities" ADD CONSTRAINT "identities_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "projects" ADD CONSTRAINT "projects_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "report_categories" ADD CONSTRAINT "report_categories_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "report_reasons" ADD CONSTRAINT "report_reasons_report_id_reports_id_fk" FOREIGN KEY ("report_id") REFERENCES "public"."reports"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reports" ADD CONSTRAINT "reports_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reports" ADD CONSTRAINT "reports_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reports" ADD CONSTRAINT "reports_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_idx" ON "api_keys" USING btree ("hash");--> statement-breakpoint
CREATE INDEX "api_keys_org_idx" ON "api_keys" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "appeals_action_idx" ON "appeals" USING btree ("action_id");--> statement-breakpoint
CREATE INDEX "appeals_org_status_idx" ON "appeals" USING btree ("org_id","status","created_at");--> statement-breakpoint
CREATE INDEX "audit_org_idx" ON "audit_events" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "audit_entity_idx" ON "audit_events" USING btree ("org_id","entity_type","entity_id","id");--> statement-breakpoint
CREATE INDEX "audit_action_idx" ON "audit_events" USING btree ("org_id","action","id");--> statement-breakpoint
CREATE INDEX "case_notes_case_idx" ON "case_notes" USING btree ("case_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "cases_open_target_idx" ON "cases" USING btree ("project_id","content_type","content_external_id") WHERE "cases"."is_open" = 1 AND "cases"."content_external_id" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "cases_open_subject_idx" ON "cases" USING btree ("project_id","subject_identity_id") WHERE "cases"."is_open" = 1 AND "cases"."content_external_id" IS NULL AND "cases"."subject_identity_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "cases_queue_idx" ON "cases" USING btree ("org_id","is_open","bucket","created_at");--> statement-breakpoint
CREATE INDEX "cases_subject_idx" ON "cases" USING btree ("subject_identity_id");--> statement-breakpoint
CREATE INDEX "content_analyses_project_idx" ON "content_analyses" USING btree ("project_id","id");--> statement-breakpoint
CREATE INDEX "content_analyses_report_idx" ON "content_analyses" USING btree ("report_id");--> statement-breakpoint
CREATE INDEX "enforcement_identity_idx" ON "enforcement_actions" USING btree ("identity_id","id");--> statement-breakpoint
CREATE INDEX "enforcement_project_idx" ON "enforcement_actions" USING btree ("project_id","id");--> statement-breakpoint
CREATE INDEX "enforcement_report_idx" ON "enforcement_actions" USING btree ("report_id");--> statement-breakpoint
CREATE INDEX "enforcement_expiry_idx" ON "enforcement_actions" USING btree ("ends_at") WHERE "enforcement_actions"."revoked_at" IS NULL AND "enforcement_actions"."expired_at" IS NULL AND "enforcement_actions"."ends_at" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "identities_key_idx" ON "identities" USING btree ("project_id","type","external_id");--> statement-breakpoint
CREATE INDEX "identities_project_id_idx" ON "identities" USING btree ("project_id","id");--> statement-breakpoint
CREATE INDEX "identities_external_idx" ON "identities" USING btree ("project_id","external_id");--> statement-breakpoint
CREATE INDEX "identities_name_idx" ON "identities" USING btree ("project_id",lower("name"));--> statement-breakpoint
CREATE INDEX "identities_username_idx" ON "identities" USING btree ("project_id",lower("username"));--> statement-breakpoint
CREATE INDEX "jobs_due_idx" ON "jobs" USING btree ("status","run_at");--> statement-breakpoint
CREATE INDEX "jobs_lease_idx" ON "jobs" USING btree ("status","lease_until");--> statement-breakpoint
CREATE INDEX "jobs_kind_idx" ON "jobs" USING btree ("kind","status");--> statement-breakpoint
CREATE INDEX "jobs_org_idx" ON "jobs" USING btree ("org_id","updated_at");--> statement-breakpoint
CREATE INDEX "projects_org_idx" ON "projects" USING btree ("org_id");--> statement-breakpoint
CREATE UNIQUE INDEX "report_categories_key_idx" ON "report_categories" USING btree ("project_id","name_key");--> statement-breakpoint
CREATE UNIQUE INDEX "report_reasons_pk" ON "report_reasons" USING btree ("report_id","name");--> statement-breakpoint
CREATE INDEX "report_reasons_list_idx" ON "report_reasons" USING btree ("org_id","name","created_us");--> statement-breakpoint
CREATE UNIQUE INDEX "reports_org_created_idx" ON "reports" USING btree ("org_id","created_us");--> statement-breakpoint
CREATE INDEX "reports_project_created_idx" ON "reports" USING btree ("project_id","created_us");--> statement-breakpoint
CREATE INDEX "reports_status_idx" ON "reports" USING btree ("org_id","status","created_us");--> statement-breakpoint
CREATE INDEX "reports_severity_idx" ON "reports" USING btree ("org_id","severity","created_us");--> statement-breakpoint
CREATE INDEX "reports_automated_idx" ON "reports" USING btree ("org_id","automated","created_us");--> statement-breakpoint
CREATE INDEX "reports_subject_idx" ON "reports" USING btree ("org_id","subject_external_id","created_us");--> statement-breakpoint
CREATE INDEX "reports_content_idx" ON "reports" USING btree ("org_id","content_external_id","created_us");--> statement-breakpoint
CREATE INDEX "reports_case_idx" ON "reports" USING btree ("case_id","created_us");--> statement-breakpoint
CREATE INDEX "reports_subject_identity_idx" ON "reports" USING btree ("subject_identity_id","created_us");--> statement-breakpoint
CREATE INDEX "reports_reporter_identity_idx" ON "reports" USING btree ("reporter_identity_id","created_us");--> statement-breakpoint
CREATE INDEX "sessions_user_idx" ON "sessions" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "users_org_idx" ON "users" USING btree ("org_id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_org_email_idx" ON "users" USING btree ("org_id","email");--> statement-breakpoint
CREATE INDEX "users_email_idx" ON "users" USING btree ("email");--> statement-breakpoint
CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts" USING btree ("delivery_id","attempted_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" USING btree ("endpoint_id","id");--> statement-breakpoint
CREATE INDEX "webhook_endpoints_org_idx" ON "webhook_endpoints" USING btree ("org_id");