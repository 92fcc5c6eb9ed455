/**
 * The full-text indexes, as queries reach them (`Store.textSearch`: the SQLite store answers
 * with sqliteTextSearch, the PostgreSQL store with postgresTextSearch): "this report's texts hold
 * every word", "this identity's names hold every word". The indexes themselves are made by a
 * custom migration of each dialect, outside the drizzle schema (neither dialect can state the
 * other's index):
 *
 * - SQLite (drizzle/0013_search.sql): two FTS5 tables with the `unicode61 remove_diacritics 2`
 *   tokenizer (Unicode case folding, accents dropped, words split on anything that is not a
 *   letter or a digit), external-content tables over `reports` (description, content,
 *   ai_reasoning) and `identities` (external_id, name, username), so the text is not stored
 *   twice; triggers keep them in step with every insert, update of those columns and delete.
 * - PostgreSQL (drizzle-pg/0003_search.sql): GIN indexes over the expression
 *   `flagstaff_search_document(a, b, c)`, a `simple` tsvector of the three texts folded by the
 *   database (NFD, combining marks dropped, punctuation made spaces, lower-cased: the words FTS5
 *   sees), and `flagstaff_search_query(q)`, the query folded the same way. No trigger: a GIN
 *   index follows its rows.
 *
 * Both read a query alike: each whitespace-separated word must appear as the start of a word of
 * the text ("mull" finds "Müller"), and a word holding punctuation is a phrase ("U-1007" is "u"
 * followed by a word starting with "1007").
 */
import { sql, type SQL } from "drizzle-orm";

/** What can be searched: a table, and the texts of its rows that are indexed. */
export const SEARCH_INDEXES = {
  reports: ["description", "content", "ai_reasoning"],
  identities: ["external_id", "name", "username"],
} as const;
export type SearchIndex = keyof typeof SEARCH_INDEXES;

/** An FTS5 query: every word a quoted string (its own quotes doubled) whose last token is a prefix. */
export function fts5Query(words: readonly string[]): string {
  return words.map((w) => `"${w.replaceAll('"', '""')}"*`).join(" ");
}

/** SQLite: the row of `index`'s table is one of its FTS5 table's matches. */
export function sqliteTextSearch(index: SearchIndex, words: readonly string[]): SQL {
  const fts = sql.identifier(`${index}_search`);
  return sql`${sql.identifier(index)}.rowid IN (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ${fts5Query(words)})`;
}

/** PostgreSQL: the row's folded texts hold the folded query (an index search of `<table>_search_idx`). */
export function postgresTextSearch(index: SearchIndex, words: readonly string[]): SQL {
  const [a, b, c] = SEARCH_INDEXES[index].map((column) => sql`${sql.identifier(index)}.${sql.identifier(column)}`);
  return sql`flagstaff_search_document(${a}, ${b}, ${c}) @@ flagstaff_search_query(${words.join(" ")})`;
}

/**
 * Tables of the SQLite search index (FTS5 tables and their shadow tables): an index, not data,
 * and SQLite's alone; a copy to PostgreSQL leaves them out (its index is built from the rows).
 */
export const isSqliteSearchTable = (name: string): boolean => /^(reports|identities)_search(_(data|idx|docsize|config|content))?$/.test(name);
