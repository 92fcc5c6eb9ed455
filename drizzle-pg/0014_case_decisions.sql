-- Every decided case has its decision, with its code, as its reports and appeals record it; every
-- case escalated has its team.
--
-- 0002_moderators_day filled the decision of the cases decided before it from their status
-- alone: APPEALED and CLOSED cases got none, RESOLVED and DISMISSED ones lost their resolution
-- code or dismissal reason (their reports keep them), and who decided was left out. A case
-- decided afterwards by a Flagstaff older than 0002 (an instance not yet upgraded during a
-- rolling upgrade) got no decision at all, and was missing from the closed cases.
--
-- From now on the database fills it itself: a case taken out of review by a Flagstaff that does
-- not record decisions (it writes the status and updated_at, never the decision) gets it here, so
-- that an instance not yet upgraded never leaves a decided case without one (docs/operations.md,
-- "Schema changes while old and new instances run"). The workflow engine
-- (src/domain/workflow-engine.ts, writeCase) writes decided_at = updated_at with every decision
-- it makes and keeps the decision when a resolved case is appealed: its own writes never match.
-- Setting decided_at to NULL on a closed case asks for it again (the backfill below).
--
-- What the records say, as the workflow engine would have recorded it:
--   RESOLVED, APPEALED  resolve   the code of the case's newest resolution, when and by whom
--   DISMISSED           dismiss   the reason of its newest dismissal, when and by whom
--   CLOSED              uphold or overturn, by its newest decided appeal (the resolution's code,
--                       the appeal's time and decider); otherwise close (the code it had)
-- A time the records lack is the case's updated_at. As the engine does, a decision ends the
-- case's escalation. To be dropped once no Flagstaff older than 0.2.0 can write to the database.
CREATE FUNCTION flagstaff_case_decision_fill() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  resolution json;
  dismissal json;
  appeal_status text;
  appeal_at bigint;
  appeal_by_type text;
  appeal_by_id text;
BEGIN
  SELECT r."resolution"::json INTO resolution FROM "reports" r WHERE r."case_id" = NEW."id" AND r."resolution" IS NOT NULL
    ORDER BY r."resolution"::json->>'at' DESC, r."created_us" DESC LIMIT 1;
  SELECT r."dismissal"::json INTO dismissal FROM "reports" r WHERE r."case_id" = NEW."id" AND r."dismissal" IS NOT NULL
    ORDER BY r."dismissal"::json->>'at' DESC, r."created_us" DESC LIMIT 1;
  SELECT a."status", a."decided_at", a."decided_by_type", a."decided_by_id" INTO appeal_status, appeal_at, appeal_by_type, appeal_by_id
    FROM "appeals" a WHERE a."case_id" = NEW."id" AND a."status" IN ('upheld', 'overturned') AND a."decided_at" IS NOT NULL
    ORDER BY a."decided_at" DESC LIMIT 1;
  NEW."decision" := CASE
    WHEN NEW."status" IN ('RESOLVED', 'APPEALED') THEN 'resolve'
    WHEN NEW."status" = 'DISMISSED' THEN 'dismiss'
    WHEN appeal_status = 'upheld' THEN 'uphold'
    WHEN appeal_status = 'overturned' THEN 'overturn'
    ELSE 'close' END;
  IF NEW."decision" IN ('resolve', 'uphold', 'overturn') THEN
    NEW."decision_code" := resolution->>'code';
  ELSIF NEW."decision" = 'dismiss' THEN
    NEW."decision_code" := dismissal->>'reason';
  ELSE
    NEW."decision_code" := coalesce(NEW."decision_code", resolution->>'code', dismissal->>'reason');
  END IF;
  IF NEW."decision" = 'resolve' THEN
    NEW."decided_at" := round(extract(epoch FROM (resolution->>'at')::timestamptz) * 1000)::bigint;
    NEW."decided_by_type" := resolution->'by'->>'type';
    NEW."decided_by_id" := resolution->'by'->>'id';
  ELSIF NEW."decision" = 'dismiss' THEN
    NEW."decided_at" := round(extract(epoch FROM (dismissal->>'at')::timestamptz) * 1000)::bigint;
    NEW."decided_by_type" := dismissal->'by'->>'type';
    NEW."decided_by_id" := dismissal->'by'->>'id';
  ELSIF NEW."decision" = 'close' THEN
    NEW."decided_at" := NULL;
    NEW."decided_by_type" := NULL;
    NEW."decided_by_id" := NULL;
  ELSE
    NEW."decided_at" := appeal_at;
    NEW."decided_by_type" := appeal_by_type;
    NEW."decided_by_id" := appeal_by_id;
  END IF;
  NEW."decided_at" := coalesce(NEW."decided_at", NEW."updated_at");
  NEW."escalated_team" := NULL;
  NEW."escalated_at" := NULL;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER "cases_decision_fill" BEFORE UPDATE OF "status", "decided_at" ON "cases" FOR EACH ROW
WHEN (NEW."is_open" = 0 AND NEW."status" IN ('RESOLVED', 'DISMISSED', 'APPEALED', 'CLOSED')
  AND (NEW."decided_at" IS NULL OR (NEW."status" IS DISTINCT FROM OLD."status" AND NEW."status" <> 'APPEALED' AND NEW."decided_at" IS DISTINCT FROM NEW."updated_at")))
EXECUTE FUNCTION flagstaff_case_decision_fill();--> statement-breakpoint
-- The backfill done again, through the trigger: every closed case the workflow engine did not
-- decide itself (it always records who decided; 0002's backfill and older Flagstaffs never did).
UPDATE "cases" SET "decided_at" = NULL
WHERE "is_open" = 0 AND "status" IN ('RESOLVED', 'DISMISSED', 'APPEALED', 'CLOSED') AND "decided_by_type" IS NULL;
--> statement-breakpoint
-- An escalation applied by a Flagstaff older than 0002 (it writes the report's escalation, never
-- the case's team) marks the case as the workflow engine does (markCaseEscalated), which then
-- writes the same values itself. To be dropped with cases_decision_fill.
CREATE FUNCTION flagstaff_case_escalation_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "cases" SET "escalated_team" = NEW."escalation"::json->>'team', "escalated_at" = NEW."updated_at" WHERE "id" = NEW."case_id";
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "reports_escalation_fill" AFTER UPDATE OF "escalation" ON "reports" FOR EACH ROW
WHEN (NEW."escalation" IS NOT NULL AND NEW."escalation" IS DISTINCT FROM OLD."escalation" AND (NEW."escalation"::json->>'applied')::boolean)
EXECUTE FUNCTION flagstaff_case_escalation_fill();
