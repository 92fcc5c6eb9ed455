CREATE TABLE `eval_items` (
	`id` text PRIMARY KEY NOT NULL,
	`set_id` text NOT NULL,
	`version` integer NOT NULL,
	`position` integer NOT NULL,
	`external_id` text,
	`text` text NOT NULL,
	`categories` text NOT NULL,
	`severity` text,
	FOREIGN KEY (`set_id`) REFERENCES `eval_sets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `eval_items_version_idx` ON `eval_items` (`set_id`,`version`,`position`);--> statement-breakpoint
CREATE TABLE `eval_run_items` (
	`run_id` text NOT NULL,
	`item_id` text NOT NULL,
	`position` integer NOT NULL,
	`categories` text NOT NULL,
	`severity` text,
	`confidence` integer,
	`reasoning` text,
	`error` text,
	`latency_ms` integer,
	`prompt_tokens` integer,
	`completion_tokens` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `eval_runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `eval_run_items_idx` ON `eval_run_items` (`run_id`,`position`);--> statement-breakpoint
CREATE TABLE `eval_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`set_id` text NOT NULL,
	`set_version` integer NOT NULL,
	`model` text NOT NULL,
	`prompt_version` text NOT NULL,
	`policy_versions` text NOT NULL,
	`categories` text NOT NULL,
	`status` text NOT NULL,
	`items_done` integer NOT NULL,
	`items_total` integer NOT NULL,
	`error` text,
	`metrics` text,
	`started_at` integer,
	`finished_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`set_id`) REFERENCES `eval_sets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `eval_runs_project_idx` ON `eval_runs` (`project_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `eval_runs_set_idx` ON `eval_runs` (`set_id`,`set_version`);--> statement-breakpoint
CREATE TABLE `eval_set_versions` (
	`set_id` text NOT NULL,
	`version` integer NOT NULL,
	`items` integer NOT NULL,
	`frozen_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`set_id`) REFERENCES `eval_sets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `eval_set_versions_idx` ON `eval_set_versions` (`set_id`,`version`);--> statement-breakpoint
CREATE TABLE `eval_sets` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`project_id` text NOT NULL,
	`name` text NOT NULL,
	`source` text NOT NULL,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `eval_sets_project_idx` ON `eval_sets` (`project_id`,`created_at`);