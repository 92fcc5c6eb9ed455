CREATE TABLE `oidc_configs` (
	`org_id` text PRIMARY KEY NOT NULL,
	`enabled` integer DEFAULT 0 NOT NULL,
	`provider_name` text NOT NULL,
	`issuer_url` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret` text NOT NULL,
	`allowed_domains` text DEFAULT '[]' NOT NULL,
	`groups_claim` text DEFAULT 'groups' NOT NULL,
	`group_roles` text DEFAULT '[]' NOT NULL,
	`default_role` text,
	`provisioning` text DEFAULT 'existing_only' NOT NULL,
	`password_sign_in` integer DEFAULT 1 NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `oidc_sign_ins` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`org_id` text NOT NULL,
	`state` text NOT NULL,
	`nonce` text NOT NULL,
	`code_verifier` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oidc_sign_ins_token_hash_unique` ON `oidc_sign_ins` (`token_hash`);--> statement-breakpoint
CREATE INDEX `oidc_sign_ins_expires_idx` ON `oidc_sign_ins` (`expires_at`);