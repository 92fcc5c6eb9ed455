/**
 * The full-text indexes, as queries reach them (`Store.textSearch`: the SQLite store answers
 * with sqliteTextSearch, the PostgreSQL store with postgresTextSearch): "this report's texts hold
 * every word", "this identity's names hold every word". Both engines index the same words: the
 * domain's folding (src/domain/plumbing/search-text.ts: case, accents and letters such as ł, ø, ß folded,
 * words of letters and digits), which a row stores in `search_text` when its texts are not pure
 * ASCII, and which each engine does itself to pure-ASCII texts (lower A–Z, ASCII punctuation
 * separates words) when `search_text` is null. The indexes themselves are made by custom
 * migrations of each dialect, outside the drizzle schema (neither dialect can state the other's
 * index):
 *
 * - SQLite (drizzle/0020_search_text.sql): two FTS5 tables with the `ascii` tokenizer (words
 *   split on spaces and ASCII punctuation, A–Z lowered, nothing else folded), external-content
 *   tables over the views `reports_search_source` and `identities_search_source` (a row's
 *   `search_text`, else its texts), so the text is not stored twice; triggers keep them in step
 *   with every insert, update of those columns and delete.
 * - PostgreSQL (drizzle-pg/0010_search_text.sql): GIN indexes over the expression
 *   `flagstaff_search_document(search_text, a, b, c)`, a `simple` tsvector of the row's
 *   `search_text`, else of its texts lowered and with ASCII punctuation made spaces. No trigger:
 *   a GIN index follows its rows.
 *
 * Both read a query alike (the words come folded, `foldSearchText`): each word must appear as the
 * start of a word of the text ("mull" finds "Müller"), and a word the folding split is a phrase
 * ("U-1007" is "u 1007": "u" followed by a word starting with "1007").
 */
import { sql, type SQL } from "drizzle-orm";
import { searchDocument } from "../domain/plumbing/search-text.ts";

/** What can be searched: a table, and the texts of its rows that are indexed. */
export const SEARCH_INDEXES = {
  reports: ["description", "content", "ai_reasoning"],
  identities: ["external_id", "name", "username"],
} as const;
export type SearchIndex = keyof typeof SEARCH_INDEXES;

/** An FTS5 query of folded words: every word a quoted string (its own quotes doubled) whose last token is a prefix. */
export function fts5Query(words: readonly string[]): string {
  return words.map((w) => `"${w.replaceAll('"', '""')}"*`).join(" ");
}

/** SQLite: the row of `index`'s table is one of its FTS5 table's matches for the folded words. */
export function sqliteTextSearch(index: SearchIndex, words: readonly string[]): SQL {
  const fts = sql.identifier(`${index}_search`);
  return sql`${sql.identifier(index)}.rowid IN (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ${fts5Query(words)})`;
}

/**
 * A tsquery of folded words: every word must appear, its last token as a prefix; a word of
 * several tokens is a phrase ("u 1007": 'u' <-> '1007':*). Folded words hold letters, digits,
 * marks and spaces only: no quote or backslash to escape.
 */
export function tsQuery(words: readonly string[]): string {
  return words.map((w) => `${w.split(" ").map((t) => `'${t}'`).join(" <-> ")}:*`).join(" & ");
}

/** PostgreSQL: the row's words hold the folded words (an index search of `<table>_search_idx`). */
export function postgresTextSearch(index: SearchIndex, words: readonly string[]): SQL {
  const [a, b, c] = SEARCH_INDEXES[index].map((column) => sql`${sql.identifier(index)}.${sql.identifier(column)}`);
  const folded = sql`${sql.identifier(index)}.${sql.identifier("search_text")}`;
  return sql`flagstaff_search_document(${folded}, ${a}, ${b}, ${c}) @@ to_tsquery('simple'::regconfig, ${tsQuery(words)})`;
}

/** Rows a fill of `search_text` reads and writes at a time. */
const FILL_BATCH = 500;

/**
 * PostgreSQL: fills `search_text` of the rows already there whose texts are not pure ASCII (the
 * others keep null), for migration 0010_search_text (src/db/migrate.ts runs it in the
 * migration's transaction; SQLite's migration calls searchDocument as a registered function).
 */
export async function fillSearchTexts(db: { execute(q: SQL): Promise<unknown> }): Promise<void> {
  const rowsOf = async (q: SQL) => [...((await db.execute(q)) as Iterable<Record<string, string | null>>)];
  for (const index of Object.keys(SEARCH_INDEXES) as SearchIndex[]) {
    const table = sql.identifier(index);
    const columns = SEARCH_INDEXES[index].map((c) => sql.identifier(c));
    const nonAscii = sql.join(
      columns.map((c) => sql`${c} ~ '[^\\x01-\\x7f]'`),
      sql` OR `,
    );
    let after = "";
    for (;;) {
      const rows = await rowsOf(sql`SELECT id, ${sql.join(columns, sql`, `)} FROM ${table} WHERE id > ${after} AND (${nonAscii}) ORDER BY id LIMIT ${FILL_BATCH}`);
      if (!rows.length) break;
      const folded = rows.map((r) => ({ id: r.id, t: searchDocument(SEARCH_INDEXES[index].map((c) => r[c] ?? null)) }));
      await db.execute(sql`UPDATE ${table} AS r SET search_text = v.t FROM jsonb_to_recordset(${JSON.stringify(folded)}::jsonb) AS v(id text, t text) WHERE r.id = v.id`);
      after = rows.at(-1)!.id!;
    }
  }
}

/**
 * Tables of the SQLite search index (FTS5 tables and their shadow tables): an index, not data,
 * and SQLite's alone; a copy to PostgreSQL leaves them out (its index is built from the rows).
 */
export const isSqliteSearchTable = (name: string): boolean => /^(reports|identities)_search(_(data|idx|docsize|config|content))?$/.test(name);
