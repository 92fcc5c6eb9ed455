ALTER TABLE "content_analyses" ADD COLUMN "confidence_source" text;--> statement-breakpoint
ALTER TABLE "content_analyses" ADD COLUMN "content_key" text;--> statement-breakpoint
ALTER TABLE "content_analyses" ADD COLUMN "classifier_key" text;--> statement-breakpoint
ALTER TABLE "content_analyses" ADD COLUMN "reused_analysis_id" text;--> statement-breakpoint
ALTER TABLE "content_analyses" ADD COLUMN "reused_analysis_at" bigint;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "priority" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "entity_id" text;--> statement-breakpoint
ALTER TABLE "reports" ADD COLUMN "content_key" text;--> statement-breakpoint
CREATE INDEX "content_analyses_content_idx" ON "content_analyses" USING btree ("project_id","content_key","created_at") WHERE "content_analyses"."content_key" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "jobs_order_idx" ON "jobs" USING btree ("kind","status","priority","run_at");