CREATE TABLE `queues` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text,
	`name` text NOT NULL,
	`description` text,
	`ordering` text DEFAULT 'severity_age' NOT NULL,
	`is_default` integer DEFAULT 0 NOT NULL,
	`access` text DEFAULT '{"users":[],"roles":[]}' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `queues_org_name_idx` ON `queues` (`org_id`,`name`);--> statement-breakpoint
CREATE INDEX `queues_org_idx` ON `queues` (`org_id`);--> statement-breakpoint
CREATE TABLE `rule_hits` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`rule_id` text NOT NULL,
	`version` integer NOT NULL,
	`report_id` text NOT NULL,
	`effects` text NOT NULL,
	`applied` integer NOT NULL,
	`at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `rule_hits_rule_idx` ON `rule_hits` (`rule_id`,`at`);--> statement-breakpoint
CREATE INDEX `rule_hits_report_idx` ON `rule_hits` (`report_id`);--> statement-breakpoint
CREATE TABLE `rule_versions` (
	`rule_id` text NOT NULL,
	`org_id` text NOT NULL,
	`version` integer NOT NULL,
	`body` text NOT NULL,
	`created_by_type` text NOT NULL,
	`created_by_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `rule_versions_idx` ON `rule_versions` (`rule_id`,`version`);--> statement-breakpoint
CREATE TABLE `rules` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text,
	`name` text NOT NULL,
	`description` text,
	`trigger` text NOT NULL,
	`mode` text NOT NULL,
	`when_json` text NOT NULL,
	`then_json` text NOT NULL,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `rules_org_trigger_idx` ON `rules` (`org_id`,`trigger`,`mode`);--> statement-breakpoint
ALTER TABLE `cases` ADD `queue_id` text;--> statement-breakpoint
ALTER TABLE `cases` ADD `priority` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `cases_open_queue_idx` ON `cases` (`org_id`,`queue_id`,`bucket`,`created_at`) WHERE "cases"."is_open" = 1;