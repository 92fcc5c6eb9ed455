CREATE TABLE "statements" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"action_id" text NOT NULL,
	"puid" text NOT NULL,
	"body" text NOT NULL,
	"created_at" bigint NOT NULL,
	"submitted_at" bigint
);
--> statement-breakpoint
CREATE TABLE "transparency_submission" (
	"org_id" text PRIMARY KEY NOT NULL,
	"endpoint_url" text NOT NULL,
	"token" text NOT NULL,
	"enabled" integer DEFAULT 0 NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "transparency_submissions" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"status" text NOT NULL,
	"http_status" integer,
	"error" text,
	"puids" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "trusted_flagged" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "identities" ADD COLUMN "trusted_flagger" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "identities" ADD COLUMN "muted_until" bigint;--> statement-breakpoint
ALTER TABLE "identities" ADD COLUMN "mute_reason" text;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "dsa_settings" text;--> statement-breakpoint
ALTER TABLE "reports" ADD COLUMN "notice" text;--> statement-breakpoint
ALTER TABLE "reports" ADD COLUMN "reporter_trusted" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "statements" ADD CONSTRAINT "statements_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "statements" ADD CONSTRAINT "statements_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "statements" ADD CONSTRAINT "statements_action_id_enforcement_actions_id_fk" FOREIGN KEY ("action_id") REFERENCES "public"."enforcement_actions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "transparency_submission" ADD CONSTRAINT "transparency_submission_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "transparency_submissions" ADD CONSTRAINT "transparency_submissions_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "statements_puid_idx" ON "statements" USING btree ("org_id","puid");--> statement-breakpoint
CREATE UNIQUE INDEX "statements_action_idx" ON "statements" USING btree ("action_id");--> statement-breakpoint
CREATE INDEX "statements_org_created_idx" ON "statements" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "statements_unsubmitted_idx" ON "statements" USING btree ("org_id","created_at") WHERE "statements"."submitted_at" IS NULL;--> statement-breakpoint
CREATE INDEX "transparency_submissions_org_idx" ON "transparency_submissions" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "cases_trusted_idx" ON "cases" USING btree ("org_id","created_at") WHERE "cases"."is_open" = 1 AND "cases"."trusted_flagged" = 1;