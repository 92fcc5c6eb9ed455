-- The lane's head is taken with SKIP LOCKED (docs/audit.md, "Lanes"): the transaction's own lane
-- (the one its first event's entity hashes to) when free, else any free lane of the organization,
-- and only when every lane is held does it wait for its own. A head stays locked through the
-- COMMIT's WAL flush, so a transaction that waited for a busy head could not share that flush;
-- now it waits only when more transactions commit at once than the organization has lanes.
CREATE OR REPLACE FUNCTION flagstaff_audit_append(p_org text, p_lane integer, p_ids text[], p_project_ids text[], p_actor_types text[], p_actor_ids text[], p_actions text[],
  p_entity_types text[], p_entity_ids text[], p_befores text[], p_afters text[], p_datas text[], p_created bigint[], p_digests text[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_lane integer;
  v_seq bigint;
  v_prev text;
  v_hash text;
BEGIN
  SELECT lane, last_seq, last_hash INTO v_lane, v_seq, v_prev FROM audit_chain_heads WHERE org_id = p_org AND lane = p_lane FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    -- The lane's first event (the new head is this transaction's until it ends)...
    INSERT INTO audit_chain_heads (org_id, lane, last_seq, last_hash) VALUES (p_org, p_lane, 0, repeat('0', 64)) ON CONFLICT (org_id, lane) DO NOTHING;
    IF FOUND THEN
      v_lane := p_lane;
      v_seq := 0;
      v_prev := repeat('0', 64);
    ELSE
      -- ...or its head is held by another transaction: any free lane of the organization...
      SELECT lane, last_seq, last_hash INTO v_lane, v_seq, v_prev FROM audit_chain_heads WHERE org_id = p_org FOR UPDATE SKIP LOCKED LIMIT 1;
      IF NOT FOUND THEN
        -- ...and with every lane held, wait for its own.
        SELECT lane, last_seq, last_hash INTO v_lane, v_seq, v_prev FROM audit_chain_heads WHERE org_id = p_org AND lane = p_lane FOR UPDATE;
      END IF;
    END IF;
  END IF;
  FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
    v_seq := v_seq + 1;
    v_hash := encode(sha256(convert_to(v_prev || p_digests[i], 'UTF8')), 'hex');
    INSERT INTO audit_events (id, org_id, project_id, actor_type, actor_id, action, entity_type, entity_id, before, after, data, created_at, chain_lane, chain_seq, prev_hash, hash)
    VALUES (p_ids[i], p_org, p_project_ids[i], p_actor_types[i], p_actor_ids[i], p_actions[i], p_entity_types[i], p_entity_ids[i], p_befores[i], p_afters[i], p_datas[i], p_created[i], v_lane, v_seq, v_prev, v_hash);
    v_prev := v_hash;
  END LOOP;
  UPDATE audit_chain_heads SET last_seq = v_seq, last_hash = v_prev WHERE org_id = p_org AND lane = v_lane;
END
$$;
