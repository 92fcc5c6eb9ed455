CREATE TABLE `appeals` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`action_id` text NOT NULL,
	`report_id` text,
	`case_id` text,
	`text` text NOT NULL,
	`status` text NOT NULL,
	`decided_by_type` text,
	`decided_by_id` text,
	`decision_note` text,
	`created_at` integer NOT NULL,
	`decided_at` integer,
	FOREIGN KEY (`action_id`) REFERENCES `enforcement_actions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `appeals_action_idx` ON `appeals` (`action_id`);--> statement-breakpoint
CREATE INDEX `appeals_org_status_idx` ON `appeals` (`org_id`,`status`,`created_at`);--> statement-breakpoint
CREATE TABLE `enforcement_actions` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`identity_id` text NOT NULL,
	`kind` text NOT NULL,
	`reason` text NOT NULL,
	`note` text,
	`report_id` text,
	`case_id` text,
	`content_type` text,
	`content_external_id` text,
	`starts_at` integer NOT NULL,
	`ends_at` integer,
	`expired_at` integer,
	`revoked_at` integer,
	`revoked_by_type` text,
	`revoked_by_id` text,
	`revoke_reason` text,
	`created_by_type` text NOT NULL,
	`created_by_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`identity_id`) REFERENCES `identities`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `enforcement_identity_idx` ON `enforcement_actions` (`identity_id`,`id`);--> statement-breakpoint
CREATE INDEX `enforcement_project_idx` ON `enforcement_actions` (`project_id`,`id`);--> statement-breakpoint
CREATE INDEX `enforcement_report_idx` ON `enforcement_actions` (`report_id`);--> statement-breakpoint
CREATE INDEX `enforcement_expiry_idx` ON `enforcement_actions` (`ends_at`) WHERE "enforcement_actions"."revoked_at" IS NULL AND "enforcement_actions"."expired_at" IS NULL AND "enforcement_actions"."ends_at" IS NOT NULL;--> statement-breakpoint
CREATE TABLE `webhook_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`delivery_id` text NOT NULL,
	`attempted_at` integer NOT NULL,
	`status_code` integer,
	`latency_ms` integer NOT NULL,
	`error` text,
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_attempts_delivery_idx` ON `webhook_attempts` (`delivery_id`,`attempted_at`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`event_type` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_status_code` integer,
	`last_latency_ms` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`delivered_at` integer,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_idx` ON `webhook_deliveries` (`endpoint_id`,`id`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`url` text NOT NULL,
	`secret` text NOT NULL,
	`description` text,
	`event_types` text NOT NULL,
	`enabled` integer NOT NULL,
	`disabled_reason` text,
	`disabled_at` integer,
	`failing_since` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_org_idx` ON `webhook_endpoints` (`org_id`);