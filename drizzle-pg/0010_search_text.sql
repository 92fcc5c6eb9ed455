-- Search folds every accent and letter alike on both engines: "lukasz" finds "Łukasz" and
-- "odegaard" finds "Ødegaard" (the database's folding, NFD and accents dropped, left letters with
-- strokes alone). The folding is src/domain/search-text.ts; a row stores what the index is to
-- read (`search_text`: its texts folded, null when they are pure ASCII) and the index reads that,
-- or the texts themselves when it is null: A–Z lowered and ASCII punctuation made spaces (what
-- the folding does to ASCII), by translate() and a regular expression whose meaning no locale or
-- collation changes. The rows already there are folded by src/db/migrate.ts after these
-- statements, in the same transaction (PostgreSQL cannot run the domain's code).
ALTER TABLE "identities" ADD COLUMN "search_text" text;--> statement-breakpoint
ALTER TABLE "reports" ADD COLUMN "search_text" text;--> statement-breakpoint
DROP INDEX "reports_search_idx";--> statement-breakpoint
DROP INDEX "identities_search_idx";--> statement-breakpoint
DROP FUNCTION flagstaff_search_document(text, text, text);--> statement-breakpoint
DROP FUNCTION flagstaff_search_query(text);--> statement-breakpoint
-- The words of a row (either kind: a report's or an identity's), as the indexes hold them. A
-- query is to_tsquery('simple', …) of the folded words (src/db/search.ts).
CREATE FUNCTION flagstaff_search_document(folded text, a text, b text, c text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN to_tsvector('simple'::regconfig, coalesce(folded, translate(
  regexp_replace(coalesce(a, '') || ' ' || coalesce(b, '') || ' ' || coalesce(c, ''), '[\u0001-\u002f\u003a-\u0040\u005b-\u0060\u007b-\u007f]+', ' ', 'g'),
  'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')));--> statement-breakpoint
CREATE INDEX "reports_search_idx" ON "reports" USING gin (flagstaff_search_document("search_text", "description", "content", "ai_reasoning"));--> statement-breakpoint
CREATE INDEX "identities_search_idx" ON "identities" USING gin (flagstaff_search_document("search_text", "external_id", "name", "username"));
