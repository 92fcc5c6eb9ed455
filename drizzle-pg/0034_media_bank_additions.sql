CREATE TABLE "media_bank_additions" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"bank_id" text NOT NULL,
	"kind" text NOT NULL,
	"case_id" text,
	"reason" text,
	"added_by_type" text NOT NULL,
	"added_by_id" text,
	"added" integer NOT NULL,
	"unchanged" integer NOT NULL,
	"below_floor" integer NOT NULL,
	"created_at" bigint NOT NULL,
	"undone_at" bigint,
	"undone_by_type" text,
	"undone_by_id" text,
	"removed" integer,
	"check_through" text,
	"check_after" text,
	"checked" integer NOT NULL,
	"check_matches" integer NOT NULL,
	"checked_at" bigint
);
--> statement-breakpoint
ALTER TABLE "media_bank_entries" ADD COLUMN "addition_id" text;--> statement-breakpoint
ALTER TABLE "media_bank_additions" ADD CONSTRAINT "media_bank_additions_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_bank_additions" ADD CONSTRAINT "media_bank_additions_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_bank_additions" ADD CONSTRAINT "media_bank_additions_bank_id_media_banks_id_fk" FOREIGN KEY ("bank_id") REFERENCES "public"."media_banks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "media_bank_additions_case_idx" ON "media_bank_additions" USING btree ("case_id");--> statement-breakpoint
CREATE INDEX "media_bank_additions_bank_idx" ON "media_bank_additions" USING btree ("bank_id","check_through");--> statement-breakpoint
CREATE INDEX "case_media_project_idx" ON "case_media" USING btree ("project_id","id");--> statement-breakpoint
CREATE INDEX "media_bank_entries_addition_idx" ON "media_bank_entries" USING btree ("addition_id");