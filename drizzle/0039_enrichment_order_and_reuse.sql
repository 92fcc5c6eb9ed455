ALTER TABLE `content_analyses` ADD `confidence_source` text;--> statement-breakpoint
ALTER TABLE `content_analyses` ADD `content_key` text;--> statement-breakpoint
ALTER TABLE `content_analyses` ADD `classifier_key` text;--> statement-breakpoint
ALTER TABLE `content_analyses` ADD `reused_analysis_id` text;--> statement-breakpoint
ALTER TABLE `content_analyses` ADD `reused_analysis_at` integer;--> statement-breakpoint
CREATE INDEX `content_analyses_content_idx` ON `content_analyses` (`project_id`,`content_key`,`created_at`) WHERE "content_analyses"."content_key" IS NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `priority` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `entity_id` text;--> statement-breakpoint
CREATE INDEX `jobs_order_idx` ON `jobs` (`kind`,`status`,`priority`,`run_at`);--> statement-breakpoint
ALTER TABLE `reports` ADD `content_key` text;