CREATE TABLE `case_notes` (
	`id` text PRIMARY KEY NOT NULL,
	`case_id` text NOT NULL,
	`org_id` text NOT NULL,
	`author_type` text NOT NULL,
	`author_id` text,
	`body` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`case_id`) REFERENCES `cases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `case_notes_case_idx` ON `case_notes` (`case_id`,`id`);--> statement-breakpoint
CREATE TABLE `cases` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`status` text NOT NULL,
	`bucket` text NOT NULL,
	`is_open` integer NOT NULL,
	`content_type` text,
	`content_external_id` text,
	`subject_identity_id` text,
	`report_count` integer NOT NULL,
	`assignee_id` text,
	`assigned_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`last_report_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `cases_open_target_idx` ON `cases` (`project_id`,`content_type`,`content_external_id`) WHERE "cases"."is_open" = 1 AND "cases"."content_external_id" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `cases_open_subject_idx` ON `cases` (`project_id`,`subject_identity_id`) WHERE "cases"."is_open" = 1 AND "cases"."content_external_id" IS NULL AND "cases"."subject_identity_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `cases_queue_idx` ON `cases` (`org_id`,`is_open`,`bucket`,`created_at`);--> statement-breakpoint
CREATE INDEX `cases_subject_idx` ON `cases` (`subject_identity_id`);--> statement-breakpoint
CREATE TABLE `report_categories` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`severity_hint` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `report_categories_name_idx` ON `report_categories` (`project_id`,lower("name"));--> statement-breakpoint
CREATE TABLE `report_reasons` (
	`report_id` text NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`created_us` integer NOT NULL,
	FOREIGN KEY (`report_id`) REFERENCES `reports`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `report_reasons_pk` ON `report_reasons` (`report_id`,`name`);--> statement-breakpoint
CREATE INDEX `report_reasons_list_idx` ON `report_reasons` (`org_id`,`name`,`created_us`);--> statement-breakpoint
CREATE TABLE `reports` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`case_id` text NOT NULL,
	`status` text NOT NULL,
	`severity` text NOT NULL,
	`reasons` text NOT NULL,
	`description` text,
	`automated` integer NOT NULL,
	`subject_identity_id` text,
	`subject_external_id` text,
	`reporter_identity_id` text,
	`content_type` text,
	`content_external_id` text,
	`content` text,
	`escalation` text,
	`resolution` text,
	`dismissal` text,
	`created_by_id` text,
	`created_us` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`case_id`) REFERENCES `cases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `reports_org_created_idx` ON `reports` (`org_id`,`created_us`);--> statement-breakpoint
CREATE INDEX `reports_project_created_idx` ON `reports` (`project_id`,`created_us`);--> statement-breakpoint
CREATE INDEX `reports_status_idx` ON `reports` (`org_id`,`status`,`created_us`);--> statement-breakpoint
CREATE INDEX `reports_severity_idx` ON `reports` (`org_id`,`severity`,`created_us`);--> statement-breakpoint
CREATE INDEX `reports_automated_idx` ON `reports` (`org_id`,`automated`,`created_us`);--> statement-breakpoint
CREATE INDEX `reports_subject_idx` ON `reports` (`org_id`,`subject_external_id`,`created_us`);--> statement-breakpoint
CREATE INDEX `reports_content_idx` ON `reports` (`org_id`,`content_external_id`,`created_us`);--> statement-breakpoint
CREATE INDEX `reports_case_idx` ON `reports` (`case_id`,`created_us`);--> statement-breakpoint
CREATE INDEX `reports_subject_identity_idx` ON `reports` (`subject_identity_id`,`created_us`);