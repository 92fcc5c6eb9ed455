-- Search folds every accent and letter alike on both engines: "lukasz" finds "Łukasz" and
-- "odegaard" finds "Ødegaard" (FTS5's `remove_diacritics` left letters with strokes alone). The
-- folding is src/domain/search-text.ts; a row stores what the index is to read (`search_text`:
-- its texts folded, null when they are pure ASCII) and the index reads that, or the texts
-- themselves when it is null. FTS5's `ascii` tokenizer over that text splits words on spaces and
-- ASCII punctuation, lowers A–Z, and adds no folding of its own, so the words are the domain's.
-- SQLite cannot compute the folding: src/db/migrate.ts registers flagstaff_search_text() (the
-- domain's searchDocument) before migrating.
ALTER TABLE `identities` ADD `search_text` text;--> statement-breakpoint
ALTER TABLE `reports` ADD `search_text` text;--> statement-breakpoint
DROP TRIGGER `reports_search_insert`;--> statement-breakpoint
DROP TRIGGER `reports_search_update`;--> statement-breakpoint
DROP TRIGGER `reports_search_delete`;--> statement-breakpoint
DROP TRIGGER `identities_search_insert`;--> statement-breakpoint
DROP TRIGGER `identities_search_update`;--> statement-breakpoint
DROP TRIGGER `identities_search_delete`;--> statement-breakpoint
DROP TABLE `reports_search`;--> statement-breakpoint
DROP TABLE `identities_search`;--> statement-breakpoint
-- The rows already there: only those with a text that is not pure ASCII store anything.
UPDATE `reports` SET `search_text` = flagstaff_search_text(`description`, `content`, `ai_reasoning`)
WHERE flagstaff_search_text(`description`, `content`, `ai_reasoning`) IS NOT NULL;--> statement-breakpoint
UPDATE `identities` SET `search_text` = flagstaff_search_text(`external_id`, `name`, `username`)
WHERE flagstaff_search_text(`external_id`, `name`, `username`) IS NOT NULL;--> statement-breakpoint
-- What each row gives the index (external content: the text is not stored twice). The triggers
-- below give the same expression, of the new row to insert and of the old row to delete.
CREATE VIEW `reports_search_source` AS
SELECT rowid AS `row_id`, coalesce(`search_text`, coalesce(`description`, '') || ' ' || coalesce(`content`, '') || ' ' || coalesce(`ai_reasoning`, '')) AS `document`
FROM `reports`;--> statement-breakpoint
CREATE VIEW `identities_search_source` AS
SELECT rowid AS `row_id`, coalesce(`search_text`, `external_id` || ' ' || coalesce(`name`, '') || ' ' || coalesce(`username`, '')) AS `document`
FROM `identities`;--> statement-breakpoint
CREATE VIRTUAL TABLE reports_search USING fts5(document, content='reports_search_source', content_rowid='row_id', columnsize=0, tokenize='ascii');
--> statement-breakpoint
CREATE VIRTUAL TABLE identities_search USING fts5(document, content='identities_search_source', content_rowid='row_id', columnsize=0, tokenize='ascii');
--> statement-breakpoint
INSERT INTO reports_search(reports_search) VALUES ('rebuild');
--> statement-breakpoint
INSERT INTO identities_search(identities_search) VALUES ('rebuild');
--> statement-breakpoint
CREATE TRIGGER reports_search_insert AFTER INSERT ON reports
WHEN new.description IS NOT NULL OR new.content IS NOT NULL OR new.ai_reasoning IS NOT NULL
BEGIN
  INSERT INTO reports_search(rowid, document)
  VALUES (new.rowid, coalesce(new.search_text, coalesce(new.description, '') || ' ' || coalesce(new.content, '') || ' ' || coalesce(new.ai_reasoning, '')));
END;
--> statement-breakpoint
CREATE TRIGGER reports_search_update AFTER UPDATE OF description, content, ai_reasoning, search_text ON reports
WHEN old.description IS NOT new.description OR old.content IS NOT new.content OR old.ai_reasoning IS NOT new.ai_reasoning OR old.search_text IS NOT new.search_text
BEGIN
  INSERT INTO reports_search(reports_search, rowid, document)
  VALUES ('delete', old.rowid, coalesce(old.search_text, coalesce(old.description, '') || ' ' || coalesce(old.content, '') || ' ' || coalesce(old.ai_reasoning, '')));
  INSERT INTO reports_search(rowid, document)
  VALUES (new.rowid, coalesce(new.search_text, coalesce(new.description, '') || ' ' || coalesce(new.content, '') || ' ' || coalesce(new.ai_reasoning, '')));
END;
--> statement-breakpoint
CREATE TRIGGER reports_search_delete AFTER DELETE ON reports
WHEN old.description IS NOT NULL OR old.content IS NOT NULL OR old.ai_reasoning IS NOT NULL
BEGIN
  INSERT INTO reports_search(reports_search, rowid, document)
  VALUES ('delete', old.rowid, coalesce(old.search_text, coalesce(old.description, '') || ' ' || coalesce(old.content, '') || ' ' || coalesce(old.ai_reasoning, '')));
END;
--> statement-breakpoint
CREATE TRIGGER identities_search_insert AFTER INSERT ON identities
BEGIN
  INSERT INTO identities_search(rowid, document)
  VALUES (new.rowid, coalesce(new.search_text, new.external_id || ' ' || coalesce(new.name, '') || ' ' || coalesce(new.username, '')));
END;
--> statement-breakpoint
CREATE TRIGGER identities_search_update AFTER UPDATE OF external_id, name, username, search_text ON identities
WHEN old.external_id IS NOT new.external_id OR old.name IS NOT new.name OR old.username IS NOT new.username OR old.search_text IS NOT new.search_text
BEGIN
  INSERT INTO identities_search(identities_search, rowid, document)
  VALUES ('delete', old.rowid, coalesce(old.search_text, old.external_id || ' ' || coalesce(old.name, '') || ' ' || coalesce(old.username, '')));
  INSERT INTO identities_search(rowid, document)
  VALUES (new.rowid, coalesce(new.search_text, new.external_id || ' ' || coalesce(new.name, '') || ' ' || coalesce(new.username, '')));
END;
--> statement-breakpoint
CREATE TRIGGER identities_search_delete AFTER DELETE ON identities
BEGIN
  INSERT INTO identities_search(identities_search, rowid, document)
  VALUES ('delete', old.rowid, coalesce(old.search_text, old.external_id || ' ' || coalesce(old.name, '') || ' ' || coalesce(old.username, '')));
END;
