ALTER TABLE "oidc_configs" ADD COLUMN "provider_omits_email_verified" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "oidc_configs" ADD COLUMN "link_by_verified_email" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "oidc_sign_ins" ADD COLUMN "session_id" text;