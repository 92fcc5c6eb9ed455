CREATE TABLE "bulk_decisions" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"actor_type" text NOT NULL,
	"actor_id" text,
	"action" text NOT NULL,
	"items" text NOT NULL,
	"created_at" bigint NOT NULL,
	"undo_until" bigint NOT NULL,
	"undone_at" bigint
);
--> statement-breakpoint
CREATE TABLE "case_tags" (
	"case_id" text NOT NULL,
	"org_id" text NOT NULL,
	"tag" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "decision_templates" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"body" text NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "escalated_team" text;--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "escalated_at" bigint;--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "decision" text;--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "decision_code" text;--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "decided_at" bigint;--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "decided_by_type" text;--> statement-breakpoint
ALTER TABLE "cases" ADD COLUMN "decided_by_id" text;--> statement-breakpoint
ALTER TABLE "case_tags" ADD CONSTRAINT "case_tags_case_id_cases_id_fk" FOREIGN KEY ("case_id") REFERENCES "public"."cases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "decision_templates" ADD CONSTRAINT "decision_templates_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "bulk_decisions_org_idx" ON "bulk_decisions" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "case_tags_pk" ON "case_tags" USING btree ("case_id","tag");--> statement-breakpoint
CREATE INDEX "case_tags_org_idx" ON "case_tags" USING btree ("org_id","tag");--> statement-breakpoint
CREATE UNIQUE INDEX "decision_templates_name_idx" ON "decision_templates" USING btree ("project_id","name");--> statement-breakpoint
CREATE INDEX "cases_escalated_idx" ON "cases" USING btree ("org_id","escalated_team") WHERE "cases"."is_open" = 1 AND "cases"."escalated_team" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "cases_open_assignee_idx" ON "cases" USING btree ("org_id","assignee_id") WHERE "cases"."is_open" = 1;--> statement-breakpoint
CREATE INDEX "cases_appealed_idx" ON "cases" USING btree ("org_id","created_at") WHERE "cases"."status" = 'APPEALED';--> statement-breakpoint
CREATE INDEX "cases_decided_idx" ON "cases" USING btree ("org_id","decided_at") WHERE "cases"."decided_at" IS NOT NULL;--> statement-breakpoint
-- Cases decided before this migration: their decision and its time, from their status (who decided is in the audit trail).
UPDATE "cases" SET "decided_at" = "updated_at", "decision" = CASE "status" WHEN 'RESOLVED' THEN 'resolve' WHEN 'DISMISSED' THEN 'dismiss' ELSE NULL END WHERE "is_open" = 0 AND "status" IN ('RESOLVED', 'DISMISSED', 'CLOSED', 'APPEALED');--> statement-breakpoint
-- Open cases escalated before this migration: the team of their newest escalated report.
UPDATE "cases" SET ("escalated_team", "escalated_at") = (SELECT r."escalation"::json->>'team', r."updated_at" FROM "reports" r WHERE r."case_id" = "cases"."id" AND r."escalation" IS NOT NULL AND (r."escalation"::json->>'applied')::boolean ORDER BY r."updated_at" DESC LIMIT 1) WHERE "is_open" = 1 AND "status" = 'IN_REVIEW';
