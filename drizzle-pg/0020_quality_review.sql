CREATE TABLE "quality_reviews" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"case_id" text NOT NULL,
	"queue_id" text NOT NULL,
	"reason" text NOT NULL,
	"categories" text DEFAULT '[]' NOT NULL,
	"first_by_id" text NOT NULL,
	"first_action" text NOT NULL,
	"first_code" text,
	"first_kind" text,
	"first_decided_at" bigint NOT NULL,
	"reviewer_id" text,
	"claimed_at" bigint,
	"second_action" text,
	"second_code" text,
	"second_kind" text,
	"second_note" text,
	"second_decided_at" bigint,
	"agree" integer,
	"ack_by_id" text,
	"ack_at" bigint,
	"ack_note" text,
	"ack_reopened" integer,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "queues" ADD COLUMN "sample_percent" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "queues" ADD COLUMN "always_sample" text DEFAULT 'none' NOT NULL;--> statement-breakpoint
ALTER TABLE "quality_reviews" ADD CONSTRAINT "quality_reviews_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "quality_reviews_decision_idx" ON "quality_reviews" USING btree ("case_id","first_decided_at");--> statement-breakpoint
CREATE INDEX "quality_reviews_org_idx" ON "quality_reviews" USING btree ("org_id","second_decided_at");--> statement-breakpoint
CREATE INDEX "quality_reviews_open_idx" ON "quality_reviews" USING btree ("org_id","created_at") WHERE "quality_reviews"."second_decided_at" is null;