CREATE TABLE "sla_breaches" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"queue_id" text,
	"target" text NOT NULL,
	"subject_id" text NOT NULL,
	"target_minutes" integer NOT NULL,
	"due_at" bigint NOT NULL,
	"breached_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "queues" ADD COLUMN "first_review_target_minutes" integer;--> statement-breakpoint
ALTER TABLE "queues" ADD COLUMN "decision_target_minutes" integer;--> statement-breakpoint
ALTER TABLE "sla_breaches" ADD CONSTRAINT "sla_breaches_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "sla_breaches_subject_idx" ON "sla_breaches" USING btree ("subject_id","target");--> statement-breakpoint
CREATE INDEX "sla_breaches_org_idx" ON "sla_breaches" USING btree ("org_id","breached_at");