CREATE TABLE `strikes` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`identity_id` text NOT NULL,
	`case_id` text NOT NULL,
	`report_id` text NOT NULL,
	`code` text,
	`count` integer NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`removed_at` integer,
	`removed_reason` text,
	`step` text,
	`action_id` text,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`identity_id`) REFERENCES `identities`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `strikes_identity_idx` ON `strikes` (`identity_id`,`expires_at`);--> statement-breakpoint
CREATE INDEX `strikes_case_idx` ON `strikes` (`case_id`);--> statement-breakpoint
ALTER TABLE `projects` ADD `strike_policy` text;