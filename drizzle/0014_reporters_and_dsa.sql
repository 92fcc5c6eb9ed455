CREATE TABLE `statements` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`action_id` text NOT NULL,
	`puid` text NOT NULL,
	`body` text NOT NULL,
	`created_at` integer NOT NULL,
	`submitted_at` integer,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`action_id`) REFERENCES `enforcement_actions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `statements_puid_idx` ON `statements` (`org_id`,`puid`);--> statement-breakpoint
CREATE UNIQUE INDEX `statements_action_idx` ON `statements` (`action_id`);--> statement-breakpoint
CREATE INDEX `statements_org_created_idx` ON `statements` (`org_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `statements_unsubmitted_idx` ON `statements` (`org_id`,`created_at`) WHERE "statements"."submitted_at" IS NULL;--> statement-breakpoint
CREATE TABLE `transparency_submission` (
	`org_id` text PRIMARY KEY NOT NULL,
	`endpoint_url` text NOT NULL,
	`token` text NOT NULL,
	`enabled` integer DEFAULT 0 NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `transparency_submissions` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`status` text NOT NULL,
	`http_status` integer,
	`error` text,
	`puids` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `transparency_submissions_org_idx` ON `transparency_submissions` (`org_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `cases` ADD `trusted_flagged` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `cases_trusted_idx` ON `cases` (`org_id`,`created_at`) WHERE "cases"."is_open" = 1 AND "cases"."trusted_flagged" = 1;--> statement-breakpoint
ALTER TABLE `identities` ADD `trusted_flagger` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `identities` ADD `muted_until` integer;--> statement-breakpoint
ALTER TABLE `identities` ADD `mute_reason` text;--> statement-breakpoint
ALTER TABLE `projects` ADD `dsa_settings` text;--> statement-breakpoint
ALTER TABLE `reports` ADD `notice` text;--> statement-breakpoint
ALTER TABLE `reports` ADD `reporter_trusted` integer DEFAULT 0 NOT NULL;