CREATE TABLE "eval_items" (
	"id" text PRIMARY KEY NOT NULL,
	"set_id" text NOT NULL,
	"version" integer NOT NULL,
	"position" integer NOT NULL,
	"external_id" text,
	"text" text NOT NULL,
	"categories" text NOT NULL,
	"severity" text
);
--> statement-breakpoint
CREATE TABLE "eval_run_items" (
	"run_id" text NOT NULL,
	"item_id" text NOT NULL,
	"position" integer NOT NULL,
	"categories" text NOT NULL,
	"severity" text,
	"confidence" integer,
	"reasoning" text,
	"error" text,
	"latency_ms" integer,
	"prompt_tokens" integer,
	"completion_tokens" integer,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "eval_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"set_id" text NOT NULL,
	"set_version" integer NOT NULL,
	"model" text NOT NULL,
	"prompt_version" text NOT NULL,
	"policy_versions" text NOT NULL,
	"categories" text NOT NULL,
	"status" text NOT NULL,
	"items_done" integer NOT NULL,
	"items_total" integer NOT NULL,
	"error" text,
	"metrics" text,
	"started_at" bigint,
	"finished_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "eval_set_versions" (
	"set_id" text NOT NULL,
	"version" integer NOT NULL,
	"items" integer NOT NULL,
	"frozen_at" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "eval_sets" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"source" text NOT NULL,
	"version" integer NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "eval_items" ADD CONSTRAINT "eval_items_set_id_eval_sets_id_fk" FOREIGN KEY ("set_id") REFERENCES "public"."eval_sets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_run_items" ADD CONSTRAINT "eval_run_items_run_id_eval_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."eval_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_runs" ADD CONSTRAINT "eval_runs_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_runs" ADD CONSTRAINT "eval_runs_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_runs" ADD CONSTRAINT "eval_runs_set_id_eval_sets_id_fk" FOREIGN KEY ("set_id") REFERENCES "public"."eval_sets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_set_versions" ADD CONSTRAINT "eval_set_versions_set_id_eval_sets_id_fk" FOREIGN KEY ("set_id") REFERENCES "public"."eval_sets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_sets" ADD CONSTRAINT "eval_sets_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_sets" ADD CONSTRAINT "eval_sets_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "eval_items_version_idx" ON "eval_items" USING btree ("set_id","version","position");--> statement-breakpoint
CREATE UNIQUE INDEX "eval_run_items_idx" ON "eval_run_items" USING btree ("run_id","position");--> statement-breakpoint
CREATE INDEX "eval_runs_project_idx" ON "eval_runs" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE INDEX "eval_runs_set_idx" ON "eval_runs" USING btree ("set_id","set_version");--> statement-breakpoint
CREATE UNIQUE INDEX "eval_set_versions_idx" ON "eval_set_versions" USING btree ("set_id","version");--> statement-breakpoint
CREATE INDEX "eval_sets_project_idx" ON "eval_sets" USING btree ("project_id","created_at");