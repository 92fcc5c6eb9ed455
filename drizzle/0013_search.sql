-- Full-text search (src/domain/search.ts, src/db/search.ts): FTS5 indexes over the reports' texts
-- (description, reported content, AI reasoning) and the identities' names (external ID, name,
-- username). Unicode case folding and accents dropped (`unicode61 remove_diacritics 2`): "muller"
-- and "MULLER" find "Müller". External content (the text stays in reports and identities only,
-- keyed by their rowid, which VACUUM and VACUUM INTO keep for tables with indexes); no per-row
-- sizes (`columnsize=0`: nothing ranks by length). The triggers below keep both in step with every
-- write, whoever makes it; a row with none of the texts costs nothing.
CREATE VIRTUAL TABLE reports_search USING fts5(description, content, ai_reasoning, content='reports', content_rowid='rowid', columnsize=0, tokenize='unicode61 remove_diacritics 2');
--> statement-breakpoint
CREATE VIRTUAL TABLE identities_search USING fts5(external_id, name, username, content='identities', content_rowid='rowid', columnsize=0, tokenize='unicode61 remove_diacritics 2');
--> statement-breakpoint
CREATE TRIGGER reports_search_insert AFTER INSERT ON reports
WHEN new.description IS NOT NULL OR new.content IS NOT NULL OR new.ai_reasoning IS NOT NULL
BEGIN
  INSERT INTO reports_search(rowid, description, content, ai_reasoning) VALUES (new.rowid, new.description, new.content, new.ai_reasoning);
END;
--> statement-breakpoint
CREATE TRIGGER reports_search_update AFTER UPDATE OF description, content, ai_reasoning ON reports
WHEN old.description IS NOT new.description OR old.content IS NOT new.content OR old.ai_reasoning IS NOT new.ai_reasoning
BEGIN
  INSERT INTO reports_search(reports_search, rowid, description, content, ai_reasoning) VALUES ('delete', old.rowid, old.description, old.content, old.ai_reasoning);
  INSERT INTO reports_search(rowid, description, content, ai_reasoning) VALUES (new.rowid, new.description, new.content, new.ai_reasoning);
END;
--> statement-breakpoint
CREATE TRIGGER reports_search_delete AFTER DELETE ON reports
WHEN old.description IS NOT NULL OR old.content IS NOT NULL OR old.ai_reasoning IS NOT NULL
BEGIN
  INSERT INTO reports_search(reports_search, rowid, description, content, ai_reasoning) VALUES ('delete', old.rowid, old.description, old.content, old.ai_reasoning);
END;
--> statement-breakpoint
CREATE TRIGGER identities_search_insert AFTER INSERT ON identities
BEGIN
  INSERT INTO identities_search(rowid, external_id, name, username) VALUES (new.rowid, new.external_id, new.name, new.username);
END;
--> statement-breakpoint
CREATE TRIGGER identities_search_update AFTER UPDATE OF external_id, name, username ON identities
WHEN old.external_id IS NOT new.external_id OR old.name IS NOT new.name OR old.username IS NOT new.username
BEGIN
  INSERT INTO identities_search(identities_search, rowid, external_id, name, username) VALUES ('delete', old.rowid, old.external_id, old.name, old.username);
  INSERT INTO identities_search(rowid, external_id, name, username) VALUES (new.rowid, new.external_id, new.name, new.username);
END;
--> statement-breakpoint
CREATE TRIGGER identities_search_delete AFTER DELETE ON identities
BEGIN
  INSERT INTO identities_search(identities_search, rowid, external_id, name, username) VALUES ('delete', old.rowid, old.external_id, old.name, old.username);
END;
--> statement-breakpoint
-- What is already there: every report and identity indexed from the rows.
INSERT INTO reports_search(reports_search) VALUES ('rebuild');
--> statement-breakpoint
INSERT INTO identities_search(identities_search) VALUES ('rebuild');
