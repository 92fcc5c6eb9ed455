/**
 * Copies a Flagstaff SQLite database into an empty PostgreSQL database, for the PostgreSQL
 * section of `bun run bench` (scripts/bench/run.ts): seeding a million reports over HTTP would
 * take an hour, and seeding the SQLite file (scripts/bench/seed.ts) then copying it measures
 * both engines on the very same rows, with the same organization, project and API key.
 *
 *   bun scripts/bench/copy-to-postgres.ts <sqlite.db> <postgres-url>
 *
 * The PostgreSQL database must have been migrated by the same Flagstaff, and hold no rows:
 * `FLAGSTAFF_DATABASE_URL=<url> flagstaff migrate` on a database made with
 * `CREATE DATABASE … TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C'`. (Migrate rather than
 * `init` then TRUNCATE: migrate creates the schema and drizzle's bookkeeping and no rows at
 * all, so this copy is the only source of rows and needs to know nothing of what `init` writes.)
 * A database with rows is refused.
 *
 * - Every table, every column by name: both engines' tables are built from one description
 *   (src/db/tables.ts), so they have the same tables and columns, and PostgreSQL stores times as
 *   bigint, flags as integer and JSON as text, so values go over as they are. A table or column
 *   on one side only is an error (the two binaries, or migrations, differ). drizzle's
 *   bookkeeping (`__drizzle_migrations`) is skipped: PostgreSQL's, in the `drizzle` schema,
 *   was filled by the migration.
 * - COPY … FROM STDIN in the text format, through postgres.js, parent tables before the tables
 *   whose foreign keys name them (PostgreSQL's own constraints give the order). As a superuser
 *   the copy also runs with `session_replication_role = replica`, which skips the per-row
 *   foreign-key checks (a good part of the time on a million reports); SQLite's
 *   `PRAGMA foreign_key_check` has then vouched for every reference before the copy.
 * - One transaction: the tables are TRUNCATEd (they are empty: this only allows FREEZE) and
 *   loaded WITH (FREEZE), so the rows are frozen and the pages all-visible from the start, as a
 *   long-lived database's are after autovacuum, and the first reads do not rewrite every page
 *   to set hint bits. Then ANALYZE, so the planner knows the tables' sizes.
 */
import { Database } from "bun:sqlite";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import postgres from "postgres";
import { isSqliteSearchTable } from "../../src/db/search.ts";

export interface CopyResult {
  /** Rows copied per table, in the order they were copied. */
  tables: { table: string; rows: number }[];
  rows: number;
  /** The copy (its transaction), then ANALYZE. */
  copyMs: number;
  analyzeMs: number;
  /** Whether the foreign-key checks were skipped (superuser: session_replication_role = replica). */
  replicaRole: boolean;
}

/** drizzle's migrations table: PostgreSQL's was filled by the migration. */
const SKIPPED = new Set(["__drizzle_migrations"]);

export async function copySqliteToPostgres(sqlitePath: string, postgresUrl: string, opts: { log?: (s: string) => void } = {}): Promise<CopyResult> {
  const log = opts.log ?? (() => {});
  const lite = new Database(sqlitePath, { readonly: true });
  const sql = postgres(postgresUrl, { max: 1, onnotice: () => {}, connection: { application_name: "flagstaff-copy" } });
  try {
    // ---- what is on each side
    const liteTables = (lite.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name").all() as { name: string }[])
      .map((t) => t.name)
      // The search index's FTS5 tables are SQLite's own index (PostgreSQL builds its own from the rows).
      .filter((t) => !SKIPPED.has(t) && !isSqliteSearchTable(t));
    const liteColumns = new Map(liteTables.map((t) => [t, (lite.query(`PRAGMA table_info(${quoteIdent(t)})`).all() as { name: string }[]).map((c) => c.name)]));

    const pgColumnRows = await sql<{ table_name: string; column_name: string }[]>`
      SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`;
    const pgColumns = new Map<string, string[]>();
    for (const r of pgColumnRows) pgColumns.set(r.table_name, [...(pgColumns.get(r.table_name) ?? []), r.column_name]);

    const problems: string[] = [];
    for (const t of liteTables) if (!pgColumns.has(t)) problems.push(`table ${t} is not in PostgreSQL`);
    for (const t of pgColumns.keys()) if (!liteColumns.has(t)) problems.push(`table ${t} is not in SQLite`);
    for (const [t, cols] of liteColumns) {
      const pg = pgColumns.get(t);
      if (!pg) continue;
      for (const c of cols) if (!pg.includes(c)) problems.push(`column ${t}.${c} is not in PostgreSQL`);
      for (const c of pg) if (!cols.includes(c)) problems.push(`column ${t}.${c} is not in SQLite`);
    }
    if (pgColumns.size === 0) problems.push("PostgreSQL has no tables: migrate it first (FLAGSTAFF_DATABASE_URL=… flagstaff migrate)");
    if (problems.length) throw new Error(`the two databases do not have the same tables and columns (migrated by different versions?):\n  ${problems.join("\n  ")}`);

    const nonEmpty: string[] = [];
    for (const t of liteTables) {
      const [row] = await sql.unsafe<{ any: boolean }[]>(`SELECT EXISTS (SELECT 1 FROM ${quoteIdent(t)}) AS any`);
      if (row?.any) nonEmpty.push(t);
    }
    if (nonEmpty.length) throw new Error(`PostgreSQL's tables must be empty (a database only migrated); these hold rows: ${nonEmpty.join(", ")}`);

    // ---- the order: parents first
    const edges = await sql<{ child: string; parent: string }[]>`
      SELECT ch.relname AS child, pa.relname AS parent
      FROM pg_constraint c
      JOIN pg_class ch ON ch.oid = c.conrelid
      JOIN pg_class pa ON pa.oid = c.confrelid
      JOIN pg_namespace n ON n.oid = ch.relnamespace
      WHERE c.contype = 'f' AND n.nspname = 'public'`;
    const order = parentsFirst(liteTables, edges);

    const [role] = await sql<{ super: boolean }[]>`SELECT rolsuper AS super FROM pg_roles WHERE rolname = current_user`;
    const replicaRole = !!role?.super;
    if (replicaRole) {
      // The foreign keys will not be checked row by row: SQLite checks them all first.
      const broken = lite.query("PRAGMA foreign_key_check").all();
      if (broken.length) throw new Error(`the SQLite database has ${broken.length} broken foreign key(s), e.g. ${JSON.stringify(broken[0])}`);
    }

    // ---- the copy
    const started = performance.now();
    const tables: CopyResult["tables"] = [];
    await sql.begin(async (tx) => {
      if (replicaRole) await tx`SET LOCAL session_replication_role = replica`;
      await tx.unsafe(`TRUNCATE ${order.map(quoteIdent).join(", ")}`);
      for (const t of order) {
        const cols = liteColumns.get(t)!;
        const tableStarted = performance.now();
        const counter = { rows: 0 };
        const select = lite.query(`SELECT ${cols.map(quoteIdent).join(", ")} FROM ${quoteIdent(t)}`);
        try {
          const target = await tx.unsafe(`COPY ${quoteIdent(t)} (${cols.map(quoteIdent).join(", ")}) FROM STDIN WITH (FORMAT text, FREEZE)`).writable();
          await pipeline(Readable.from(copyChunks(select.iterate() as IterableIterator<Record<string, unknown>>, cols, counter)), target);
        } catch (err) {
          throw new Error(`copying ${t} (${counter.rows} rows read): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
        } finally {
          select.finalize();
        }
        tables.push({ table: t, rows: counter.rows });
        if (counter.rows >= 10_000) log(`copied ${t}: ${counter.rows.toLocaleString("en-US")} rows in ${((performance.now() - tableStarted) / 1000).toFixed(1)} s`);
      }
    });
    const copyMs = performance.now() - started;
    const analyzeStarted = performance.now();
    await sql.unsafe(`ANALYZE ${order.map(quoteIdent).join(", ")}`);
    const analyzeMs = performance.now() - analyzeStarted;
    return { tables, rows: tables.reduce((n, t) => n + t.rows, 0), copyMs: Math.round(copyMs), analyzeMs: Math.round(analyzeMs), replicaRole };
  } finally {
    lite.close();
    await sql.end({ timeout: 5 });
  }
}

/** Tables ordered so that each comes after every table its foreign keys reference. */
function parentsFirst(tables: string[], edges: { child: string; parent: string }[]): string[] {
  const parents = new Map(tables.map((t) => [t, new Set<string>()]));
  for (const e of edges) if (e.child !== e.parent && parents.has(e.child) && parents.has(e.parent)) parents.get(e.child)!.add(e.parent);
  const done = new Set<string>();
  const order: string[] = [];
  while (order.length < tables.length) {
    const ready = tables.filter((t) => !done.has(t) && [...parents.get(t)!].every((p) => done.has(p)));
    if (!ready.length) throw new Error(`foreign keys form a cycle among: ${tables.filter((t) => !done.has(t)).join(", ")}`);
    for (const t of ready) {
      done.add(t);
      order.push(t);
    }
  }
  return order;
}

/** The rows as COPY's text format, in chunks of about 256 kB. */
async function* copyChunks(rows: Iterable<Record<string, unknown>>, cols: string[], counter: { rows: number }): AsyncGenerator<Buffer> {
  let chunk = "";
  for (const row of rows) {
    let line = "";
    for (let i = 0; i < cols.length; i++) line += (i ? "\t" : "") + copyValue(row[cols[i]!]);
    chunk += line + "\n";
    counter.rows++;
    if (chunk.length >= 256 * 1024) {
      yield Buffer.from(chunk);
      chunk = "";
    }
  }
  if (chunk) yield Buffer.from(chunk);
}

const ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };

/**
 * One value in COPY's text format: `\N` for NULL; in text, backslash, tab, newline and carriage
 * return escaped (the column separator, the row separator, and the escape character itself;
 * with the backslash escaped, no `\.` end marker can appear either).
 */
export function copyValue(v: unknown): string {
  if (v === null || v === undefined) return "\\N";
  if (typeof v === "string") return /[\\\t\n\r]/.test(v) ? v.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]!) : v;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error(`cannot copy the number ${v}`);
    return String(v);
  }
  if (typeof v === "bigint") return v.toString();
  throw new Error(`cannot copy a value of type ${v instanceof Uint8Array ? "blob" : typeof v} (no column of Flagstaff's schema holds one)`);
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

if (import.meta.main) {
  const [sqlitePath, url] = process.argv.slice(2);
  if (!sqlitePath || !url || !/^postgres(ql)?:\/\//i.test(url)) {
    console.error("usage: bun scripts/bench/copy-to-postgres.ts <sqlite.db> <postgres-url>");
    process.exit(2);
  }
  const r = await copySqliteToPostgres(sqlitePath, url, { log: (s) => console.error(s) }).catch((err: unknown) => {
    console.error(`copy-to-postgres: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
  for (const t of r.tables) console.log(`${t.table}\t${t.rows}`);
  console.log(
    `${r.rows.toLocaleString("en-US")} rows in ${r.tables.length} tables: copy ${(r.copyMs / 1000).toFixed(1)} s, ANALYZE ${(r.analyzeMs / 1000).toFixed(1)} s` +
      (r.replicaRole ? " (foreign keys checked in SQLite, not row by row)" : ""),
  );
}
