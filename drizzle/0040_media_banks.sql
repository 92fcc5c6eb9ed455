CREATE TABLE `case_media` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`case_id` text NOT NULL,
	`report_id` text,
	`attachment_id` text,
	`url` text,
	`keep` integer NOT NULL,
	`sha256` text,
	`md5` text,
	`pdq` text,
	`pdq_quality` integer,
	`status` text NOT NULL,
	`error` text,
	`created_at` integer NOT NULL,
	`hashed_at` integer,
	`matched_at` integer,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`case_id`) REFERENCES `cases`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`report_id`) REFERENCES `reports`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`attachment_id`) REFERENCES `attachments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `case_media_case_idx` ON `case_media` (`case_id`);--> statement-breakpoint
CREATE INDEX `case_media_attachment_idx` ON `case_media` (`attachment_id`);--> statement-breakpoint
CREATE TABLE `media_bank_entries` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`bank_id` text NOT NULL,
	`signal_type` text NOT NULL,
	`value` text NOT NULL,
	`origin` text,
	`metadata` text,
	`added_by_type` text NOT NULL,
	`added_by_id` text,
	`quarantined_at` integer,
	`quarantine_reason` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`bank_id`) REFERENCES `media_banks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `media_bank_entries_signal_idx` ON `media_bank_entries` (`bank_id`,`signal_type`,`value`);--> statement-breakpoint
CREATE INDEX `media_bank_entries_project_idx` ON `media_bank_entries` (`project_id`);--> statement-breakpoint
CREATE TABLE `media_bank_versions` (
	`project_id` text PRIMARY KEY NOT NULL,
	`version` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `media_banks` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`enabled` integer NOT NULL,
	`negative` integer NOT NULL,
	`action` text NOT NULL,
	`pdq_distance` integer NOT NULL,
	`quality_floor` integer NOT NULL,
	`quarantine_count` integer,
	`quarantine_window_ms` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `media_banks_name_idx` ON `media_banks` (`project_id`,`name`);--> statement-breakpoint
CREATE INDEX `media_banks_org_idx` ON `media_banks` (`org_id`);--> statement-breakpoint
CREATE TABLE `media_matches` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`case_id` text NOT NULL,
	`report_id` text,
	`media_id` text NOT NULL,
	`bank_id` text NOT NULL,
	`entry_id` text NOT NULL,
	`distance` integer,
	`quality` integer,
	`suppressed` integer NOT NULL,
	`quarantined` integer NOT NULL,
	`status` text NOT NULL,
	`decided_by_id` text,
	`decided_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`case_id`) REFERENCES `cases`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`report_id`) REFERENCES `reports`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`media_id`) REFERENCES `case_media`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`bank_id`) REFERENCES `media_banks`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`entry_id`) REFERENCES `media_bank_entries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `media_matches_media_entry_idx` ON `media_matches` (`media_id`,`entry_id`);--> statement-breakpoint
CREATE INDEX `media_matches_entry_idx` ON `media_matches` (`entry_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `media_matches_bank_idx` ON `media_matches` (`bank_id`,`status`);--> statement-breakpoint
CREATE INDEX `media_matches_case_idx` ON `media_matches` (`case_id`);--> statement-breakpoint
ALTER TABLE `attachment_blobs` ADD `pdq` text;--> statement-breakpoint
ALTER TABLE `attachment_blobs` ADD `pdq_quality` integer;