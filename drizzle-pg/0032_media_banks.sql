CREATE TABLE "case_media" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"case_id" text NOT NULL,
	"report_id" text,
	"attachment_id" text,
	"url" text,
	"keep" integer NOT NULL,
	"sha256" text,
	"md5" text,
	"pdq" text,
	"pdq_quality" integer,
	"status" text NOT NULL,
	"error" text,
	"created_at" bigint NOT NULL,
	"hashed_at" bigint,
	"matched_at" bigint
);
--> statement-breakpoint
CREATE TABLE "media_bank_entries" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"bank_id" text NOT NULL,
	"signal_type" text NOT NULL,
	"value" text NOT NULL,
	"origin" text,
	"metadata" text,
	"added_by_type" text NOT NULL,
	"added_by_id" text,
	"quarantined_at" bigint,
	"quarantine_reason" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media_bank_versions" (
	"project_id" text PRIMARY KEY NOT NULL,
	"version" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media_banks" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"enabled" integer NOT NULL,
	"negative" integer NOT NULL,
	"action" text NOT NULL,
	"pdq_distance" integer NOT NULL,
	"quality_floor" integer NOT NULL,
	"quarantine_count" integer,
	"quarantine_window_ms" integer,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media_matches" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"case_id" text NOT NULL,
	"report_id" text,
	"media_id" text NOT NULL,
	"bank_id" text NOT NULL,
	"entry_id" text NOT NULL,
	"distance" integer,
	"quality" integer,
	"suppressed" integer NOT NULL,
	"quarantined" integer NOT NULL,
	"status" text NOT NULL,
	"decided_by_id" text,
	"decided_at" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "attachment_blobs" ADD COLUMN "pdq" text;--> statement-breakpoint
ALTER TABLE "attachment_blobs" ADD COLUMN "pdq_quality" integer;--> statement-breakpoint
ALTER TABLE "case_media" ADD CONSTRAINT "case_media_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "case_media" ADD CONSTRAINT "case_media_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "case_media" ADD CONSTRAINT "case_media_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "case_media" ADD CONSTRAINT "case_media_report_id_reports_id_fk" FOREIGN KEY ("report_id") REFERENCES "public"."reports"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "case_media" ADD CONSTRAINT "case_media_attachment_id_attachments_id_fk" FOREIGN KEY ("attachment_id") REFERENCES "public"."attachments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_bank_entries" ADD CONSTRAINT "media_bank_entries_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_bank_entries" ADD CONSTRAINT "media_bank_entries_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_bank_entries" ADD CONSTRAINT "media_bank_entries_bank_id_media_banks_id_fk" FOREIGN KEY ("bank_id") REFERENCES "public"."media_banks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_bank_versions" ADD CONSTRAINT "media_bank_versions_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_banks" ADD CONSTRAINT "media_banks_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_banks" ADD CONSTRAINT "media_banks_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_matches" ADD CONSTRAINT "media_matches_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_matches" ADD CONSTRAINT "media_matches_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_matches" ADD CONSTRAINT "media_matches_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_matches" ADD CONSTRAINT "media_matches_report_id_reports_id_fk" FOREIGN KEY ("report_id") REFERENCES "public"."reports"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_matches" ADD CONSTRAINT "media_matches_media_id_case_media_id_fk" FOREIGN KEY ("media_id") REFERENCES "public"."case_media"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_matches" ADD CONSTRAINT "media_matches_bank_id_media_banks_id_fk" FOREIGN KEY ("bank_id") REFERENCES "public"."media_banks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_matches" ADD CONSTRAINT "media_matches_entry_id_media_bank_entries_id_fk" FOREIGN KEY ("entry_id") REFERENCES "public"."media_bank_entries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "case_media_case_idx" ON "case_media" USING btree ("case_id");--> statement-breakpoint
CREATE INDEX "case_media_attachment_idx" ON "case_media" USING btree ("attachment_id");--> statement-breakpoint
CREATE UNIQUE INDEX "media_bank_entries_signal_idx" ON "media_bank_entries" USING btree ("bank_id","signal_type","value");--> statement-breakpoint
CREATE INDEX "media_bank_entries_project_idx" ON "media_bank_entries" USING btree ("project_id");--> statement-breakpoint
CREATE UNIQUE INDEX "media_banks_name_idx" ON "media_banks" USING btree ("project_id","name");--> statement-breakpoint
CREATE INDEX "media_banks_org_idx" ON "media_banks" USING btree ("org_id");--> statement-breakpoint
CREATE UNIQUE INDEX "media_matches_media_entry_idx" ON "media_matches" USING btree ("media_id","entry_id");--> statement-breakpoint
CREATE INDEX "media_matches_entry_idx" ON "media_matches" USING btree ("entry_id","created_at");--> statement-breakpoint
CREATE INDEX "media_matches_bank_idx" ON "media_matches" USING btree ("bank_id","status");--> statement-breakpoint
CREATE INDEX "media_matches_case_idx" ON "media_matches" USING btree ("case_id");