CREATE TABLE "category_policies" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"category_id" text NOT NULL,
	"version" integer NOT NULL,
	"text" text NOT NULL,
	"status" text NOT NULL,
	"created_by_type" text NOT NULL,
	"created_by_id" text,
	"created_at" bigint NOT NULL,
	"status_changed_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "shadow_analyses" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"live_analysis_id" text NOT NULL,
	"report_id" text NOT NULL,
	"categories" text NOT NULL,
	"severity" text NOT NULL,
	"confidence" integer NOT NULL,
	"reasoning" text NOT NULL,
	"model" text NOT NULL,
	"prompt_version" text NOT NULL,
	"policy_versions" text NOT NULL,
	"latency_ms" integer NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "content_analyses" ADD COLUMN "prompt_version" text;--> statement-breakpoint
ALTER TABLE "content_analyses" ADD COLUMN "policy_versions" text;--> statement-breakpoint
ALTER TABLE "category_policies" ADD CONSTRAINT "category_policies_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "category_policies" ADD CONSTRAINT "category_policies_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "category_policies" ADD CONSTRAINT "category_policies_category_id_report_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."report_categories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shadow_analyses" ADD CONSTRAINT "shadow_analyses_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shadow_analyses" ADD CONSTRAINT "shadow_analyses_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "category_policies_version_idx" ON "category_policies" USING btree ("category_id","version");--> statement-breakpoint
CREATE UNIQUE INDEX "category_policies_live_idx" ON "category_policies" USING btree ("category_id") WHERE "category_policies"."status" = 'live';--> statement-breakpoint
CREATE UNIQUE INDEX "category_policies_shadow_idx" ON "category_policies" USING btree ("category_id") WHERE "category_policies"."status" = 'shadow';--> statement-breakpoint
CREATE INDEX "category_policies_project_idx" ON "category_policies" USING btree ("project_id","status");--> statement-breakpoint
CREATE UNIQUE INDEX "shadow_analyses_live_idx" ON "shadow_analyses" USING btree ("live_analysis_id");--> statement-breakpoint
CREATE INDEX "shadow_analyses_project_idx" ON "shadow_analyses" USING btree ("project_id","created_at");