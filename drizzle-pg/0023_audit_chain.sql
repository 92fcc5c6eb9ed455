CREATE TABLE "audit_chain_heads" (
	"org_id" text NOT NULL,
	"lane" integer NOT NULL,
	"last_seq" bigint NOT NULL,
	"last_hash" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_checkpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"heads" text NOT NULL,
	"signed_at" bigint NOT NULL,
	"public_key" text NOT NULL,
	"signature" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "chain_seq" bigint;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "prev_hash" text;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "hash" text;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "chain_lane" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_chain_heads" ADD CONSTRAINT "audit_chain_heads_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_checkpoints" ADD CONSTRAINT "audit_checkpoints_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "audit_chain_heads_org_lane_idx" ON "audit_chain_heads" USING btree ("org_id","lane");--> statement-breakpoint
CREATE UNIQUE INDEX "audit_checkpoints_org_seq_idx" ON "audit_checkpoints" USING btree ("org_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "audit_chain_idx" ON "audit_events" USING btree ("org_id","chain_lane","chain_seq");--> statement-breakpoint
CREATE INDEX "audit_unchained_idx" ON "audit_events" USING btree ("org_id","created_at") WHERE chain_seq IS NULL;--> statement-breakpoint
-- Appends one organization's events to one lane of its chain in the database (src/db/audit-hash.ts):
-- the lane's head is locked here, just before the transaction's COMMIT, and held no longer than
-- this call and the COMMIT that travels with it (no round trip to the instance in between). The
-- digests come from the instance (the canonical form is the application's, docs/audit.md); each
-- hash is SHA-256 hex of the previous hash in the lane followed by the digest.
CREATE FUNCTION flagstaff_audit_append(p_org text, p_lane integer, p_ids text[], p_project_ids text[], p_actor_types text[], p_actor_ids text[], p_actions text[],
  p_entity_types text[], p_entity_ids text[], p_befores text[], p_afters text[], p_datas text[], p_created bigint[], p_digests text[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_seq bigint;
  v_prev text;
  v_hash text;
BEGIN
  INSERT INTO audit_chain_heads (org_id, lane, last_seq, last_hash) VALUES (p_org, p_lane, 0, repeat('0', 64)) ON CONFLICT (org_id, lane) DO NOTHING;
  SELECT last_seq, last_hash INTO v_seq, v_prev FROM audit_chain_heads WHERE org_id = p_org AND lane = p_lane FOR UPDATE;
  FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
    v_seq := v_seq + 1;
    v_hash := encode(sha256(convert_to(v_prev || p_digests[i], 'UTF8')), 'hex');
    INSERT INTO audit_events (id, org_id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at, chain_lane, chain_seq, prev_hash, hash)
    VALUES (p_ids[i], p_org, p_project_ids[i], p_actor_types[i], p_actor_ids[i], p_actions[i], p_entity_types[i], p_entity_ids[i], p_befores[i], p_afters[i], p_datas[i], p_created[i], p_lane, v_seq, v_prev, v_hash);
    v_prev := v_hash;
  END LOOP;
  UPDATE audit_chain_heads SET last_seq = v_seq, last_hash = v_prev WHERE org_id = p_org AND lane = p_lane;
END
$$;
