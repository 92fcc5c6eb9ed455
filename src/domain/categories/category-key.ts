/**
 * The one comparison of category names: two names are the same category when their keys are
 * equal. It decides uniqueness within a project (stored in `report_categories.name_key`, under
 * a unique index), which category a report's `reason` names, and which category an AI answer
 * names. It lives apart from categories.ts, with no imports, because the migration that
 * backfilled the key calls it from SQL too (src/db/migrate.ts).
 *
 * - trim: the ends of a name carry no meaning (the name schema trims too).
 * - NFKC: one code point sequence per character (`é` precomposed or `e` + U+0301) and
 *   compatibility forms folded (`ﬁ` → `fi`, full-width `Ｓpam` → `Spam`, `ǅ` → `Dž`).
 * - upper then lower case: JavaScript's full Unicode case mappings, closer to Unicode case
 *   folding than lower case alone (`ß` and `SS`, `ς` and `σ` meet). SQLite's lower() knows
 *   only ASCII, which is why the key is computed here and stored, never derived in SQL.
 */
export const categoryKey = (name: string): string => name.trim().normalize("NFKC").toUpperCase().toLowerCase();
