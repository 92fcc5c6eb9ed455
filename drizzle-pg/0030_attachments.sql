CREATE TABLE "attachment_blobs" (
	"id" text PRIMARY KEY NOT NULL,
	"size_bytes" integer NOT NULL,
	"media_type" text NOT NULL,
	"pending_uploads" integer NOT NULL,
	"held_until" bigint NOT NULL,
	"deleting_at" bigint,
	"preview_status" text NOT NULL,
	"preview_width" integer,
	"preview_height" integer,
	"preview_bytes" integer,
	"preview_error" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "attachment_stores" (
	"id" text PRIMARY KEY NOT NULL,
	"location" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "attachments" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"case_id" text NOT NULL,
	"report_id" text,
	"blob_id" text NOT NULL,
	"file_name" text NOT NULL,
	"declared_type" text,
	"media_type" text NOT NULL,
	"size_bytes" integer NOT NULL,
	"width" integer,
	"height" integer,
	"added_by_type" text NOT NULL,
	"added_by_id" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_report_id_reports_id_fk" FOREIGN KEY ("report_id") REFERENCES "public"."reports"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "attachment_blobs_held_idx" ON "attachment_blobs" USING btree ("held_until");--> statement-breakpoint
CREATE INDEX "attachments_case_idx" ON "attachments" USING btree ("case_id","created_at");--> statement-breakpoint
CREATE INDEX "attachments_org_idx" ON "attachments" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "attachments_blob_idx" ON "attachments" USING btree ("blob_id");