CREATE TABLE `audit_chain_heads` (
	`org_id` text NOT NULL,
	`lane` integer NOT NULL,
	`last_seq` integer NOT NULL,
	`last_hash` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `audit_chain_heads_org_lane_idx` ON `audit_chain_heads` (`org_id`,`lane`);--> statement-breakpoint
CREATE TABLE `audit_checkpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`seq` integer NOT NULL,
	`heads` text NOT NULL,
	`signed_at` integer NOT NULL,
	`public_key` text NOT NULL,
	`signature` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `audit_checkpoints_org_seq_idx` ON `audit_checkpoints` (`org_id`,`seq`);--> statement-breakpoint
ALTER TABLE `audit_events` ADD `chain_seq` integer;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `prev_hash` text;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `hash` text;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `chain_lane` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `audit_chain_idx` ON `audit_events` (`org_id`,`chain_lane`,`chain_seq`);--> statement-breakpoint
CREATE INDEX `audit_unchained_idx` ON `audit_events` (`org_id`,`created_at`) WHERE chain_seq IS NULL;