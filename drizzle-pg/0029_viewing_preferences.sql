ALTER TABLE "organizations" ADD COLUMN "viewing_defaults" text;--> statement-breakpoint
ALTER TABLE "report_categories" ADD COLUMN "graphic" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "viewing_preferences" text;