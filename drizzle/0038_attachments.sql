CREATE TABLE `attachment_blobs` (
	`id` text PRIMARY KEY NOT NULL,
	`size_bytes` integer NOT NULL,
	`media_type` text NOT NULL,
	`pending_uploads` integer NOT NULL,
	`held_until` integer NOT NULL,
	`deleting_at` integer,
	`preview_status` text NOT NULL,
	`preview_width` integer,
	`preview_height` integer,
	`preview_bytes` integer,
	`preview_error` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `attachment_blobs_held_idx` ON `attachment_blobs` (`held_until`);--> statement-breakpoint
CREATE TABLE `attachment_stores` (
	`id` text PRIMARY KEY NOT NULL,
	`location` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `attachments` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`case_id` text NOT NULL,
	`report_id` text,
	`blob_id` text NOT NULL,
	`file_name` text NOT NULL,
	`declared_type` text,
	`media_type` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`width` integer,
	`height` integer,
	`added_by_type` text NOT NULL,
	`added_by_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`case_id`) REFERENCES `cases`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`report_id`) REFERENCES `reports`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `attachments_case_idx` ON `attachments` (`case_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `attachments_org_idx` ON `attachments` (`org_id`);--> statement-breakpoint
CREATE INDEX `attachments_blob_idx` ON `attachments` (`blob_id`);