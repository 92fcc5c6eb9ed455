ALTER TABLE `jobs` ADD `org_id` text;--> statement-breakpoint
CREATE INDEX `jobs_org_idx` ON `jobs` (`org_id`,`updated_at`);