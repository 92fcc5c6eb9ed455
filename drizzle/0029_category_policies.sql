CREATE TABLE `category_policies` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`category_id` text NOT NULL,
	`version` integer NOT NULL,
	`text` text NOT NULL,
	`status` text NOT NULL,
	`created_by_type` text NOT NULL,
	`created_by_id` text,
	`created_at` integer NOT NULL,
	`status_changed_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`category_id`) REFERENCES `report_categories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `category_policies_version_idx` ON `category_policies` (`category_id`,`version`);--> statement-breakpoint
CREATE UNIQUE INDEX `category_policies_live_idx` ON `category_policies` (`category_id`) WHERE "category_policies"."status" = 'live';--> statement-breakpoint
CREATE UNIQUE INDEX `category_policies_shadow_idx` ON `category_policies` (`category_id`) WHERE "category_policies"."status" = 'shadow';--> statement-breakpoint
CREATE INDEX `category_policies_project_idx` ON `category_policies` (`project_id`,`status`);--> statement-breakpoint
CREATE TABLE `shadow_analyses` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`live_analysis_id` text NOT NULL,
	`report_id` text NOT NULL,
	`categories` text NOT NULL,
	`severity` text NOT NULL,
	`confidence` integer NOT NULL,
	`reasoning` text NOT NULL,
	`model` text NOT NULL,
	`prompt_version` text NOT NULL,
	`policy_versions` text NOT NULL,
	`latency_ms` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `shadow_analyses_live_idx` ON `shadow_analyses` (`live_analysis_id`);--> statement-breakpoint
CREATE INDEX `shadow_analyses_project_idx` ON `shadow_analyses` (`project_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `content_analyses` ADD `prompt_version` text;--> statement-breakpoint
ALTER TABLE `content_analyses` ADD `policy_versions` text;