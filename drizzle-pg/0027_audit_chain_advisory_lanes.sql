-- A lane of an organization's chain is taken with a transaction-level advisory lock instead of a
-- row lock on its head (docs/audit.md, "Lanes" and "Cost"): the head row is then read and moved
-- with plain statements by the one transaction that holds the lane. A row lock (FOR UPDATE) writes
-- a WAL record and dirties the heads' page on every append, and SKIP LOCKED walks the locked rows;
-- an advisory lock lives in shared memory only. The lane choice is unchanged: the transaction's
-- own lane when free, else any free lane of the organization, and only when every lane is held
-- does it wait for its own. The events go in with one INSERT. Same signature as 0023 and 0025, so
-- an instance of either release calls this body once the migration ran.
--
-- The lock's key is (hashtext(org id), lane), in the two-integer advisory space, apart from the
-- store's own single-bigint keys (src/db/store-pg.ts). Every writer of a head takes it first:
-- flagstaff_audit_append here, and the pass that chains a rolling upgrade's stragglers
-- (chainStragglers, src/domain/core/audit.ts) through flagstaff_audit_lock_lane.
CREATE OR REPLACE FUNCTION flagstaff_audit_lock_lane(p_org text, p_lane integer, p_wait boolean) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  IF p_wait THEN
    PERFORM pg_advisory_xact_lock(hashtext(p_org), p_lane);
    RETURN true;
  END IF;
  RETURN pg_try_advisory_xact_lock(hashtext(p_org), p_lane);
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION flagstaff_audit_append(p_org text, p_lane integer, p_ids text[], p_project_ids text[], p_actor_types text[], p_actor_ids text[], p_actions text[],
  p_entity_types text[], p_entity_ids text[], p_befores text[], p_afters text[], p_datas text[], p_created bigint[], p_digests text[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_key integer := hashtext(p_org);
  v_lane integer;
  v_other integer;
  v_seq bigint;
  v_prev text;
  v_count integer := coalesce(array_length(p_ids, 1), 0);
  v_prevs text[];
  v_hashes text[];
BEGIN
  IF pg_try_advisory_xact_lock(v_key, p_lane) THEN
    v_lane := p_lane;
  ELSE
    -- Its own lane is another transaction's: any free lane of the organization...
    FOR v_other IN SELECT lane FROM audit_chain_heads WHERE org_id = p_org AND lane <> p_lane LOOP
      IF pg_try_advisory_xact_lock(v_key, v_other) THEN
        v_lane := v_other;
        EXIT;
      END IF;
    END LOOP;
    -- ...and with every lane held, wait for its own.
    IF v_lane IS NULL THEN
      PERFORM pg_advisory_xact_lock(v_key, p_lane);
      v_lane := p_lane;
    END IF;
  END IF;
  -- Read after the lock (a statement's snapshot is taken when it starts): the head as the lane's
  -- last holder committed it.
  SELECT last_seq, last_hash INTO v_seq, v_prev FROM audit_chain_heads WHERE org_id = p_org AND lane = v_lane;
  IF NOT FOUND THEN
    v_seq := 0;
    v_prev := repeat('0', 64);
    INSERT INTO audit_chain_heads (org_id, lane, last_seq, last_hash) VALUES (p_org, v_lane, 0, v_prev);
  END IF;
  FOR i IN 1 .. v_count LOOP
    v_prevs[i] := v_prev;
    v_prev := encode(sha256(convert_to(v_prev || p_digests[i], 'UTF8')), 'hex');
    v_hashes[i] := v_prev;
  END LOOP;
  INSERT INTO audit_events (id, org_id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at, chain_lane, chain_seq, prev_hash, hash)
  SELECT e.id, p_org, e.project_id, e.actor_type, e.actor_id, e.action, e.entity_type, e.entity_id, e.before, e.after, e.data, e.created_at, v_lane, v_seq + e.n, e.prev_hash, e.hash
  FROM unnest(p_ids, p_project_ids, p_actor_types, p_actor_ids, p_actions, p_entity_types, p_entity_ids, p_befores, p_afters, p_datas, p_created, v_prevs, v_hashes)
    WITH ORDINALITY AS e(id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at, prev_hash, hash, n);
  UPDATE audit_chain_heads SET last_seq = v_seq + v_count, last_hash = v_prev WHERE org_id = p_org AND lane = v_lane;
END
$$;
