DROP INDEX `jobs_due_idx`;--> statement-breakpoint
DROP INDEX `jobs_kind_idx`;--> statement-breakpoint
CREATE INDEX `jobs_claim_idx` ON `jobs` (`kind`,`status`,`run_at`);--> statement-breakpoint
CREATE INDEX `jobs_finished_idx` ON `jobs` (`status`,`updated_at`);--> statement-breakpoint
CREATE INDEX `rule_hits_at_idx` ON `rule_hits` (`at`);--> statement-breakpoint
CREATE INDEX `sessions_expires_idx` ON `sessions` (`expires_at`);--> statement-breakpoint
CREATE INDEX `sessions_seen_idx` ON `sessions` (`last_seen_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_created_idx` ON `webhook_deliveries` (`created_at`);