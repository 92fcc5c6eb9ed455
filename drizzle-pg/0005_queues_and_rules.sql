CREATE TABLE "queues" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"name" text NOT NULL,
	"description" text,
	"ordering" text DEFAULT 'severity_age' NOT NULL,
	"is_default" integer DEFAULT 0 NOT NULL,
	"access" text DEFAULT '{"users":[],"roles":[]}' NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rule_hits" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"rule_id" text NOT NULL,
	"version" integer NOT NULL,
	"report_id" text NOT NULL,
	"effects" text NOT NULL,
	"applied" integer NOT NULL,
	"at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rule_versions" (
	"rule_id" text NOT NULL,
	"org_id" text NOT NULL,
	"version" integer NOT NULL,
	"body" text NOT NULL,
	"created_by_type" text NOT NULL,
	"created_by_id" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rules" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text,
	"name" text NOT NULL,
	"description" text,
	"trigger" text NOT NULL,
	"mode" text NOT NULL,
	"when_json" text NOT NULL,
	"then_json" text NOT NULL,
	"version" integer NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "queue_id" text;--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "priority" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "queues" ADD CONSTRAINT "queues_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "queues" ADD CONSTRAINT "queues_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rule_hits" ADD CONSTRAINT "rule_hits_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rule_versions" ADD CONSTRAINT "rule_versions_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rules" ADD CONSTRAINT "rules_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rules" ADD CONSTRAINT "rules_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "queues_org_name_idx" ON "queues" USING btree ("org_id","name");--> statement-breakpoint
CREATE INDEX "queues_org_idx" ON "queues" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "rule_hits_rule_idx" ON "rule_hits" USING btree ("rule_id","at");--> statement-breakpoint
CREATE INDEX "rule_hits_report_idx" ON "rule_hits" USING btree ("report_id");--> statement-breakpoint
CREATE UNIQUE INDEX "rule_versions_idx" ON "rule_versions" USING btree ("rule_id","version");--> statement-breakpoint
CREATE INDEX "rules_org_trigger_idx" ON "rules" USING btree ("org_id","trigger","mode");--> statement-breakpoint
CREATE INDEX "cases_open_queue_idx" ON "cases" USING btree ("org_id","queue_id","bucket","created_at") WHERE "cases"."is_open" = 1;