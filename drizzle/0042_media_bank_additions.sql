CREATE TABLE `media_bank_additions` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`bank_id` text NOT NULL,
	`kind` text NOT NULL,
	`case_id` text,
	`reason` text,
	`added_by_type` text NOT NULL,
	`added_by_id` text,
	`added` integer NOT NULL,
	`unchanged` integer NOT NULL,
	`below_floor` integer NOT NULL,
	`created_at` integer NOT NULL,
	`undone_at` integer,
	`undone_by_type` text,
	`undone_by_id` text,
	`removed` integer,
	`check_through` text,
	`check_after` text,
	`checked` integer NOT NULL,
	`check_matches` integer NOT NULL,
	`checked_at` integer,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`bank_id`) REFERENCES `media_banks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `media_bank_additions_case_idx` ON `media_bank_additions` (`case_id`);--> statement-breakpoint
CREATE INDEX `media_bank_additions_bank_idx` ON `media_bank_additions` (`bank_id`,`check_through`);--> statement-breakpoint
ALTER TABLE `media_bank_entries` ADD `addition_id` text;--> statement-breakpoint
CREATE INDEX `media_bank_entries_addition_idx` ON `media_bank_entries` (`addition_id`);--> statement-breakpoint
CREATE INDEX `case_media_project_idx` ON `case_media` (`project_id`,`id`);