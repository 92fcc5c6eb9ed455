-- Full-text search (src/domain/search.ts, src/db/search.ts): GIN indexes over the reports' texts
-- (description, reported content, AI reasoning) and the identities' names (external ID, name,
-- username), as `simple` tsvectors of the text folded by flagstaff_search_document: canonical
-- decomposition (NFD), combining marks dropped, anything but letters and digits made a space, lower
-- case; flagstaff_search_query folds a query the same way. "muller" and "MULLER" find "Müller", as
-- on SQLite (FTS5, unicode61 remove_diacritics 2). Lower case beyond A–Z needs ICU's root collation
-- (a database in the C locale lower-cases only ASCII): used when the server has it (Debian's and
-- most builds do). SQL-standard function bodies: parsed here, so a restore (pg_restore, empty
-- search_path) rebuilds the indexes without looking names up. No trigger: the indexes follow the rows.
DO $do$
DECLARE
  unicode_lower text := CASE WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_collation WHERE collname = 'und-x-icu') THEN ' COLLATE "und-x-icu"' ELSE '' END;
  -- The folding of the text %1$s (%2$s: the collation of the lower-casing).
  fold text := $fold$lower(regexp_replace(regexp_replace(normalize(%1$s, NFD), '[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]', '', 'g'), '[\u0001-\u002f\u003a-\u0040\u005b-\u0060\u007b-\u00a9\u00ab-\u00b1\u00b4\u00b6-\u00b8\u00bb\u00bf\u00d7\u00f7\u2000-\u2bff\u3000-\u303f\ufe10-\ufe1f\ufe30-\ufe6f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]+', ' ', 'g')%2$s)$fold$;
BEGIN
  -- The words of three texts (either row's: a report's or an identity's), as the indexes hold them.
  EXECUTE format(
    $f$CREATE FUNCTION flagstaff_search_document(a text, b text, c text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN to_tsvector('simple'::regconfig, %s)$f$,
    format(fold, $x$coalesce(a, '') || ' ' || coalesce(b, '') || ' ' || coalesce(c, '')$x$, unicode_lower));
  -- A query: every whitespace-separated word must appear, its last token as a prefix; a word
  -- holding punctuation is a phrase ("U-1007": 'u' <-> '1007':*).
  EXECUTE format(
    $f$CREATE FUNCTION flagstaff_search_query(q text) RETURNS tsquery LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      BEGIN ATOMIC
        SELECT to_tsquery('simple'::regconfig, coalesce(string_agg('''' || replace(w, ' ', ''' <-> ''') || ''':*', ' & '), ''))
        FROM (SELECT btrim(%s) AS w FROM regexp_split_to_table(q, '\s+') AS word) AS words
        WHERE w <> '';
      END$f$,
    format(fold, 'word', unicode_lower));
END
$do$;
--> statement-breakpoint
CREATE INDEX "reports_search_idx" ON "reports" USING gin (flagstaff_search_document("description", "content", "ai_reasoning"));
--> statement-breakpoint
CREATE INDEX "identities_search_idx" ON "identities" USING gin (flagstaff_search_document("external_id", "name", "username"));
