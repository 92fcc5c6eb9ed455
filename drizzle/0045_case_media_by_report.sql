-- A case's media are found through its reports and attachments (src/domain/intake/case-media.ts,
-- mediaOfCase), no longer by case: case_media's index on case_id (a random page written by every
-- report with media) gives way to one on report_id (appended to: report ids grow with time), its
-- attachment index keeps only the rows with an attachment, and case_id is no longer a foreign key
-- (without its index, deleting each case would scan the table; the rows go with their project,
-- report or attachment). media_matches gets an index on report_id (a moved report takes its
-- matches along; a deleted one takes them).
--
-- SQLite drops a foreign key only by building the table again. Every pending migration runs in
-- one transaction (src/db/migrate.ts), where PRAGMA foreign_keys cannot change: dropping the old
-- table deletes its rows first, and would take every media_matches row along (ON DELETE CASCADE).
-- They are kept aside and put back, unchanged.
CREATE TEMP TABLE `__kept_media_matches` AS SELECT * FROM `media_matches`;
--> statement-breakpoint
CREATE TABLE `__new_case_media` (
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
	`vpdq` text,
	`frame_hashing` text,
	`status` text NOT NULL,
	`error` text,
	`created_at` integer NOT NULL,
	`hashed_at` integer,
	`matched_at` integer,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`report_id`) REFERENCES `reports`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`attachment_id`) REFERENCES `attachments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_case_media`("id", "org_id", "project_id", "case_id", "report_id", "attachment_id", "url", "keep", "sha256", "md5", "pdq", "pdq_quality", "vpdq", "frame_hashing", "status", "error", "created_at", "hashed_at", "matched_at") SELECT "id", "org_id", "project_id", "case_id", "report_id", "attachment_id", "url", "keep", "sha256", "md5", "pdq", "pdq_quality", "vpdq", "frame_hashing", "status", "error", "created_at", "hashed_at", "matched_at" FROM `case_media`;--> statement-breakpoint
DROP TABLE `case_media`;--> statement-breakpoint
ALTER TABLE `__new_case_media` RENAME TO `case_media`;--> statement-breakpoint
INSERT INTO `media_matches` SELECT * FROM temp.`__kept_media_matches`;--> statement-breakpoint
DROP TABLE temp.`__kept_media_matches`;--> statement-breakpoint
CREATE INDEX `case_media_report_idx` ON `case_media` (`report_id`);--> statement-breakpoint
CREATE INDEX `case_media_attachment_idx` ON `case_media` (`attachment_id`) WHERE "case_media"."attachment_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `case_media_project_idx` ON `case_media` (`project_id`,`id`);--> statement-breakpoint
CREATE INDEX `media_matches_report_idx` ON `media_matches` (`report_id`);