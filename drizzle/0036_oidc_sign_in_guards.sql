ALTER TABLE `oidc_configs` ADD `provider_omits_email_verified` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `oidc_configs` ADD `link_by_verified_email` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `oidc_sign_ins` ADD `session_id` text;