-- Every decided case has its decision, with its code, as its reports and appeals record it; every
-- case escalated has its team.
--
-- 0012_moderators_day filled the decision of the cases decided before it from their status
-- alone: APPEALED and CLOSED cases got none, RESOLVED and DISMISSED ones lost their resolution
-- code or dismissal reason (their reports keep them), and who decided was left out. A case
-- decided afterwards by a Flagstaff older than 0012 (an instance not yet upgraded, an old
-- binary started on the database) got no decision at all, and was missing from the closed cases.
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
-- case's escalation. Only SQL SQLite has built in: an older Flagstaff fires it too.
-- To be dropped once no Flagstaff older than 0.2.0 can write to the database.
CREATE TRIGGER `cases_decision_fill` AFTER UPDATE OF `status`, `decided_at` ON `cases`
WHEN new.`is_open` = 0 AND new.`status` IN ('RESOLVED', 'DISMISSED', 'APPEALED', 'CLOSED')
  AND (new.`decided_at` IS NULL OR (new.`status` IS NOT old.`status` AND new.`status` <> 'APPEALED' AND new.`decided_at` IS NOT new.`updated_at`))
BEGIN
  UPDATE `cases` SET `decision` = CASE
      WHEN new.`status` IN ('RESOLVED', 'APPEALED') THEN 'resolve'
      WHEN new.`status` = 'DISMISSED' THEN 'dismiss'
      ELSE coalesce((SELECT CASE a.`status` WHEN 'upheld' THEN 'uphold' ELSE 'overturn' END FROM `appeals` a
        WHERE a.`case_id` = new.`id` AND a.`status` IN ('upheld', 'overturned') AND a.`decided_at` IS NOT NULL
        ORDER BY a.`decided_at` DESC LIMIT 1), 'close') END,
    `escalated_team` = NULL, `escalated_at` = NULL
  WHERE `id` = new.`id`;
  UPDATE `cases` SET
    `decision_code` = CASE `decision`
      WHEN 'dismiss' THEN (SELECT json_extract(r.`dismissal`, '$.reason') FROM `reports` r WHERE r.`case_id` = new.`id` AND r.`dismissal` IS NOT NULL
        ORDER BY json_extract(r.`dismissal`, '$.at') DESC, r.`created_us` DESC LIMIT 1)
      WHEN 'close' THEN coalesce(`decision_code`,
        (SELECT json_extract(r.`resolution`, '$.code') FROM `reports` r WHERE r.`case_id` = new.`id` AND r.`resolution` IS NOT NULL
          ORDER BY json_extract(r.`resolution`, '$.at') DESC, r.`created_us` DESC LIMIT 1),
        (SELECT json_extract(r.`dismissal`, '$.reason') FROM `reports` r WHERE r.`case_id` = new.`id` AND r.`dismissal` IS NOT NULL
          ORDER BY json_extract(r.`dismissal`, '$.at') DESC, r.`created_us` DESC LIMIT 1))
      ELSE (SELECT json_extract(r.`resolution`, '$.code') FROM `reports` r WHERE r.`case_id` = new.`id` AND r.`resolution` IS NOT NULL
        ORDER BY json_extract(r.`resolution`, '$.at') DESC, r.`created_us` DESC LIMIT 1) END,
    `decided_at` = coalesce(CASE `decision`
      WHEN 'resolve' THEN (SELECT CAST(round((julianday(json_extract(r.`resolution`, '$.at')) - 2440587.5) * 86400000) AS INTEGER) FROM `reports` r
        WHERE r.`case_id` = new.`id` AND r.`resolution` IS NOT NULL ORDER BY json_extract(r.`resolution`, '$.at') DESC, r.`created_us` DESC LIMIT 1)
      WHEN 'dismiss' THEN (SELECT CAST(round((julianday(json_extract(r.`dismissal`, '$.at')) - 2440587.5) * 86400000) AS INTEGER) FROM `reports` r
        WHERE r.`case_id` = new.`id` AND r.`dismissal` IS NOT NULL ORDER BY json_extract(r.`dismissal`, '$.at') DESC, r.`created_us` DESC LIMIT 1)
      WHEN 'close' THEN NULL
      ELSE (SELECT a.`decided_at` FROM `appeals` a WHERE a.`case_id` = new.`id` AND a.`status` IN ('upheld', 'overturned') AND a.`decided_at` IS NOT NULL
        ORDER BY a.`decided_at` DESC LIMIT 1) END, `updated_at`),
    `decided_by_type` = CASE `decision`
      WHEN 'resolve' THEN (SELECT json_extract(r.`resolution`, '$.by.type') FROM `reports` r WHERE r.`case_id` = new.`id` AND r.`resolution` IS NOT NULL
        ORDER BY json_extract(r.`resolution`, '$.at') DESC, r.`created_us` DESC LIMIT 1)
      WHEN 'dismiss' THEN (SELECT json_extract(r.`dismissal`, '$.by.type') FROM `reports` r WHERE r.`case_id` = new.`id` AND r.`dismissal` IS NOT NULL
        ORDER BY json_extract(r.`dismissal`, '$.at') DESC, r.`created_us` DESC LIMIT 1)
      WHEN 'close' THEN NULL
      ELSE (SELECT a.`decided_by_type` FROM `appeals` a WHERE a.`case_id` = new.`id` AND a.`status` IN ('upheld', 'overturned') AND a.`decided_at` IS NOT NULL
        ORDER BY a.`decided_at` DESC LIMIT 1) END,
    `decided_by_id` = CASE `decision`
      WHEN 'resolve' THEN (SELECT json_extract(r.`resolution`, '$.by.id') FROM `reports` r WHERE r.`case_id` = new.`id` AND r.`resolution` IS NOT NULL
        ORDER BY json_extract(r.`resolution`, '$.at') DESC, r.`created_us` DESC LIMIT 1)
      WHEN 'dismiss' THEN (SELECT json_extract(r.`dismissal`, '$.by.id') FROM `reports` r WHERE r.`case_id` = new.`id` AND r.`dismissal` IS NOT NULL
        ORDER BY json_extract(r.`dismissal`, '$.at') DESC, r.`created_us` DESC LIMIT 1)
      WHEN 'close' THEN NULL
      ELSE (SELECT a.`decided_by_id` FROM `appeals` a WHERE a.`case_id` = new.`id` AND a.`status` IN ('upheld', 'overturned') AND a.`decided_at` IS NOT NULL
        ORDER BY a.`decided_at` DESC LIMIT 1) END
  WHERE `id` = new.`id`;
END;
--> statement-breakpoint
-- The backfill done again, through the trigger: every closed case the workflow engine did not
-- decide itself (it always records who decided; 0012's backfill and older Flagstaffs never did).
UPDATE `cases` SET `decided_at` = NULL
WHERE `is_open` = 0 AND `status` IN ('RESOLVED', 'DISMISSED', 'APPEALED', 'CLOSED') AND `decided_by_type` IS NULL;
--> statement-breakpoint
-- An escalation applied by a Flagstaff older than 0012 (it writes the report's escalation, never
-- the case's team) marks the case as the workflow engine does (markCaseEscalated), which then
-- writes the same values itself. To be dropped with cases_decision_fill.
CREATE TRIGGER `reports_escalation_fill` AFTER UPDATE OF `escalation` ON `reports`
WHEN new.`escalation` IS NOT NULL AND new.`escalation` IS NOT old.`escalation` AND json_extract(new.`escalation`, '$.applied') = 1
BEGIN
  UPDATE `cases` SET `escalated_team` = json_extract(new.`escalation`, '$.team'), `escalated_at` = new.`updated_at` WHERE `id` = new.`case_id`;
END;
