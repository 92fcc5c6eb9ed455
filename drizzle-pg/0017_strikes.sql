CREATE TABLE "strikes" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"identity_id" text NOT NULL,
	"case_id" text NOT NULL,
	"report_id" text NOT NULL,
	"code" text,
	"count" integer NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"removed_at" bigint,
	"removed_reason" text,
	"step" text,
	"action_id" text
);
--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "strike_policy" text;--> statement-breakpoint
ALTER TABLE "strikes" ADD CONSTRAINT "strikes_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "strikes" ADD CONSTRAINT "strikes_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "strikes" ADD CONSTRAINT "strikes_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."identities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "strikes_identity_idx" ON "strikes" USING btree ("identity_id","expires_at");--> statement-breakpoint
CREATE INDEX "strikes_case_idx" ON "strikes" USING btree ("case_id");