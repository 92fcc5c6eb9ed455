CREATE TABLE "audit_chain_heads" (
	"org_id" text PRIMARY KEY NOT NULL,
	"last_seq" bigint NOT NULL,
	"last_hash" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_checkpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"hash" text NOT NULL,
	"signed_at" bigint NOT NULL,
	"public_key" text NOT NULL,
	"signature" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "chain_seq" bigint;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "prev_hash" text;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "hash" text;--> statement-breakpoint
ALTER TABLE "audit_chain_heads" ADD CONSTRAINT "audit_chain_heads_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_checkpoints" ADD CONSTRAINT "audit_checkpoints_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "audit_checkpoints_org_seq_idx" ON "audit_checkpoints" USING btree ("org_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "audit_chain_idx" ON "audit_events" USING btree ("org_id","chain_seq");--> statement-breakpoint
CREATE INDEX "audit_unchained_idx" ON "audit_events" USING btree ("org_id","created_at") WHERE chain_seq IS NULL;