CREATE TABLE `sla_breaches` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`queue_id` text,
	`target` text NOT NULL,
	`subject_id` text NOT NULL,
	`target_minutes` integer NOT NULL,
	`due_at` integer NOT NULL,
	`breached_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sla_breaches_subject_idx` ON `sla_breaches` (`subject_id`,`target`);--> statement-breakpoint
CREATE INDEX `sla_breaches_org_idx` ON `sla_breaches` (`org_id`,`breached_at`);--> statement-breakpoint
ALTER TABLE `queues` ADD `first_review_target_minutes` integer;--> statement-breakpoint
ALTER TABLE `queues` ADD `decision_target_minutes` integer;