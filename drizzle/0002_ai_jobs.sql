CREATE TABLE `content_analyses` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`source` text NOT NULL,
	`report_id` text,
	`external_id` text,
	`content_type` text,
	`url` text,
	`source_text` text NOT NULL,
	`categories` text NOT NULL,
	`severity` text NOT NULL,
	`confidence` integer NOT NULL,
	`reasoning` text NOT NULL,
	`model` text NOT NULL,
	`latency_ms` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `content_analyses_project_idx` ON `content_analyses` (`project_id`,`id`);--> statement-breakpoint
CREATE INDEX `content_analyses_report_idx` ON `content_analyses` (`report_id`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`max_attempts` integer NOT NULL,
	`run_at` integer NOT NULL,
	`lease_until` integer,
	`leased_by` text,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `jobs_due_idx` ON `jobs` (`status`,`run_at`);--> statement-breakpoint
CREATE INDEX `jobs_lease_idx` ON `jobs` (`status`,`lease_until`);--> statement-breakpoint
CREATE INDEX `jobs_kind_idx` ON `jobs` (`kind`,`status`);--> statement-breakpoint
ALTER TABLE `projects` ADD `ai_enabled` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `projects` ADD `ai_threshold` integer DEFAULT 70 NOT NULL;--> statement-breakpoint
ALTER TABLE `projects` ADD `scan_links` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `reports` ADD `ai_severity` text;--> statement-breakpoint
ALTER TABLE `reports` ADD `ai_categories` text;--> statement-breakpoint
ALTER TABLE `reports` ADD `ai_confidence` integer;--> statement-breakpoint
ALTER TABLE `reports` ADD `ai_reasoning` text;--> statement-breakpoint
ALTER TABLE `reports` ADD `ai_analyzed_at` integer;