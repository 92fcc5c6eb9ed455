/**
 * The words the one description of the tables (src/db/tables.ts) is written in, and how a
 * dialect turns that description into drizzle tables (src/db/schema-sqlite.ts and
 * src/db/schema-pg.ts each give a `Dialect` and call `defineTables`).
 *
 * A column is described by what it holds (an id, text, JSON, a time, a number, a 0/1 flag, the
 * search text); each dialect maps that to how it is stored: a time is SQLite's `integer` and
 * PostgreSQL's `bigint` read as a number, a real SQLite's `real` and PostgreSQL's
 * `double precision`; the rest is `text` or `integer` on both. So both engines hand the domain
 * the same TypeScript types: numbers for times, counts and flags, strings for text and JSON.
 *
 * Types: a column's facts (how it is stored, its name, its vocabulary, NOT NULL, DEFAULT, PRIMARY
 * KEY) are kept in its TypeScript type, and each dialect says which drizzle builder they make
 * (`DialectTypes`), so each dialect's tables have exactly the types drizzle would give the same
 * tables written by hand in that dialect.
 */
import { getTableColumns, type Column, type ColumnBuilderBase, type HasDefault, type IsPrimaryKey, type NotNull, type SQL, type Table } from "drizzle-orm";

/** How a column is stored: all a dialect needs to pick its column type. */
export type Storage = "text" | "integer" | "bigint" | "real";

/** The values a text column may hold, as drizzle types them: `[string, ...string[]]` when any text goes. */
type Vocabulary = [string, ...string[]];

/** What a column's type records, from which each dialect computes its drizzle builder. */
export interface ColumnFacts {
  storage: Storage;
  name: string;
  values: Vocabulary;
  notNull: boolean;
  hasDefault: boolean;
  primaryKey: boolean;
}

type Facts<S extends Storage, N extends string, V extends Vocabulary = Vocabulary> = {
  storage: S;
  name: N;
  values: V;
  notNull: false;
  hasDefault: false;
  primaryKey: false;
};
type With<F extends ColumnFacts, K extends keyof ColumnFacts> = { [P in keyof F]: P extends K ? true : F[P] };
type Mutable<T> = { -readonly [P in keyof T]: T[P] };

/** The only foreign key the schema has: a row's column holds another table's `id`, and goes when that row goes. */
const ON_DELETE = { onDelete: "cascade" } as const;

/** One column of the description: the facts a dialect builds it from. Mutated by its modifiers, as drizzle's builders are. */
export class ColumnSpec<F extends ColumnFacts = ColumnFacts> {
  /** Type only: the facts, for the dialects' types (DialectTypes). */
  declare readonly facts: F;
  readonly options: {
    notNull: boolean;
    primaryKey: boolean;
    unique: boolean;
    default?: string | number;
    /** The table (its SQL name) whose `id` this column holds. */
    references?: string;
  } = { notNull: false, primaryKey: false, unique: false };

  constructor(
    readonly storage: F["storage"],
    readonly name: F["name"],
    readonly values?: Readonly<Vocabulary>,
  ) {}

  notNull(): ColumnSpec<With<F, "notNull">> {
    this.options.notNull = true;
    return this as ColumnSpec as never;
  }

  primaryKey(): ColumnSpec<With<F, "primaryKey" | "notNull">> {
    this.options.primaryKey = true;
    return this as ColumnSpec as never;
  }

  default(value: F["storage"] extends "text" ? F["values"][number] : number): ColumnSpec<With<F, "hasDefault">> {
    this.options.default = value;
    return this as ColumnSpec as never;
  }

  /** A unique constraint of the column alone, named by drizzle (`<table>_<column>_unique`). */
  unique(): this {
    this.options.unique = true;
    return this;
  }

  /** Holds the `id` of a row of `table` (its SQL name), and is deleted with it (ON DELETE CASCADE). */
  references(table: string): this {
    this.options.references = table;
    return this;
  }
}

// ---- Column helpers: what a column holds. ----

/** Text; `{ enum }` gives the domain's vocabulary, which types the column (no CHECK constraint, on either engine). */
export function text<N extends string>(name: N): ColumnSpec<Facts<"text", N>>;
export function text<N extends string, V extends Readonly<Vocabulary>>(name: N, options: { enum: V }): ColumnSpec<Facts<"text", N, Mutable<V>>>;
export function text(name: string, options?: { enum: Readonly<Vocabulary> }): ColumnSpec<Facts<"text", string>> {
  return new ColumnSpec("text", name, options?.enum);
}

/** The row's id (a UUIDv7 the domain makes, or another key given as text): the primary key. */
export const id = () => text("id").primaryKey();

/** JSON text the domain writes and parses itself (never jsonb: the text is what both engines keep). */
export const json = <N extends string>(name: N) => text(name);

/**
 * The row's searched text folded for the full-text index (src/domain/plumbing/search-text.ts,
 * searchDocument), or null when what it folds is pure ASCII and the index reads it as it is.
 * Hand-written migrations index it by this name (drizzle/0020_search_text.sql, FTS5;
 * drizzle-pg/0010_search_text.sql, GIN): see src/db/search.ts.
 */
export const searchText = () => text("search_text");

/** A whole number that stays well below 2^31: a count, a score, a version, a duration in ms. */
export const int = <N extends string>(name: N) => new ColumnSpec<Facts<"integer", N>>("integer", name);

/** 1 or 0 (never a boolean: the domain's `= 1` comparisons and its writes mean the same on both engines). */
export const flag = int;

/** A time since the epoch: ms (`*_at`, `*_until`…) or µs (`*_us`). Passes 2^31, stays below 2^53. */
export const time = <N extends string>(name: N) => new ColumnSpec<Facts<"bigint", N>>("bigint", name);

/** A sequence number that may pass 2^31 (an audit chain's). */
export const seq = time;

/** A floating-point number. */
export const real = <N extends string>(name: N) => new ColumnSpec<Facts<"real", N>>("real", name);

// ---- Indexes. ----

/** What an index is over: columns, or expressions of them (`sql\`lower(${t.name})\``). */
type IndexColumns = [Column | SQL, ...(Column | SQL)[]];

/** An index of the description: its columns or expressions, and for a partial index its condition. */
export class IndexSpec {
  condition?: SQL;
  constructor(
    readonly name: string,
    readonly unique: boolean,
    readonly columns: IndexColumns,
  ) {}

  /** A partial index: only the rows the condition holds for (the same SQL on both engines). */
  where(condition: SQL): this {
    this.condition = condition;
    return this;
  }
}

const indexOn = (name: string, unique: boolean) => ({ on: (...columns: IndexColumns) => new IndexSpec(name, unique, columns) });
export const index = (name: string) => indexOn(name, false);
export const uniqueIndex = (name: string) => indexOn(name, true);

// ---- Tables. ----

/** What building a column reads of its spec, whatever its facts. */
interface AnyColumnSpec {
  readonly storage: Storage;
  readonly name: string;
  readonly values?: Readonly<Vocabulary>;
  readonly options: ColumnSpec["options"];
}
/** The built columns an index is stated over (each dialect's own; `sql` renders them in its dialect). */
export type IndexedColumns<C> = { [K in keyof C]: Column };

export interface TableSpec<N extends string = string, C extends Record<string, AnyColumnSpec> = Record<string, AnyColumnSpec>> {
  readonly name: N;
  readonly columns: C;
  readonly indexes?: (t: IndexedColumns<C>) => IndexSpec[];
}
type AnyTableSpec = { readonly name: string; readonly columns: Record<string, AnyColumnSpec>; readonly indexes?: (t: never) => IndexSpec[] };

export function table<N extends string, C extends Record<string, AnyColumnSpec>>(name: N, columns: C, indexes?: (t: IndexedColumns<C>) => IndexSpec[]): TableSpec<N, C> {
  return { name, columns, indexes };
}

// ---- Dialects. ----

/**
 * A dialect's types, as a type-level function (fields `facts`, `tableName` and `builders` are
 * its arguments, `builder` and `table` its results): `builder` is the drizzle builder of a
 * column with `facts` before NOT NULL, DEFAULT and PRIMARY KEY (added here, as drizzle adds them);
 * `table` the drizzle table named `tableName` with `builders`.
 */
export interface DialectTypes {
  readonly facts: unknown;
  readonly builder: unknown;
  readonly tableName: unknown;
  readonly builders: unknown;
  readonly table: unknown;
}

type Apply<T extends DialectTypes, Args, Result extends "builder" | "table"> = (T & Args)[Result];
/** The builder with NOT NULL, DEFAULT and PRIMARY KEY as drizzle's modifiers type them, in the order they apply. */
type Modified<B, F extends ColumnFacts> = B extends ColumnBuilderBase ? PrimaryKeyIf<F, DefaultIf<F, NotNullIf<F, B>>> : never;
type NotNullIf<F extends ColumnFacts, B extends ColumnBuilderBase> = F["notNull"] extends true ? NotNull<B> : B;
type DefaultIf<F extends ColumnFacts, B extends ColumnBuilderBase> = F["hasDefault"] extends true ? HasDefault<B> : B;
type PrimaryKeyIf<F extends ColumnFacts, B extends ColumnBuilderBase> = F["primaryKey"] extends true ? IsPrimaryKey<B> : B;
type BuilderOf<T extends DialectTypes, C> = C extends ColumnSpec<infer F> ? Modified<Apply<T, { readonly facts: F }, "builder">, F> : never;
type TableOf<T extends DialectTypes, S> =
  S extends TableSpec<infer N, infer C> ? Apply<T, { readonly tableName: N; readonly builders: { [K in keyof C]: BuilderOf<T, C[K]> } }, "table"> : never;
/** The drizzle tables a dialect makes of a description, under the description's names. */
export type Tables<T extends DialectTypes, D extends Record<string, AnyTableSpec>> = { [K in keyof D]: TableOf<T, D[K]> };

/** What the description asks of a dialect's column builders (drizzle's, of either dialect, have it all). */
export interface ColumnBuilder {
  notNull(): unknown;
  primaryKey(): unknown;
  unique(): unknown;
  default(value: unknown): unknown;
  references(ref: () => Column, actions: typeof ON_DELETE): unknown;
}

/** What the description asks of a dialect's index builders (drizzle's `index(name)` and `uniqueIndex(name)`; X: what they index). */
export interface IndexBuilder<I extends PartialIndex, X> {
  on(...columns: [X, ...X[]]): I;
}
export type PartialIndex = { where(condition: SQL): unknown };

/** A dialect: drizzle's builders of one engine, for what the description says. */
export interface Dialect<T extends DialectTypes, B extends ColumnBuilder, I extends PartialIndex, X> {
  /** A column stored as `storage` (B: the dialect's builders). */
  column(storage: Storage, name: string, values: Readonly<Vocabulary> | undefined): B;
  table(name: string, columns: Record<string, B>, indexes: ((t: Record<string, Column>) => I[]) | undefined): Table;
  index(name: string): IndexBuilder<I, X>;
  uniqueIndex(name: string): IndexBuilder<I, X>;
  /** Type only: the dialect's types (DialectTypes). */
  readonly types?: T;
}

/** Builds every table of `description` with `dialect`, in the description's order (drizzle-kit's order of columns too). */
export function buildTables<T extends DialectTypes, B extends ColumnBuilder, I extends PartialIndex, X, D extends Record<string, AnyTableSpec>>(
  dialect: Dialect<T, B, I, X>,
  description: D,
): Tables<T, D> {
  const bySqlName = new Map<string, Table>();
  const idOf = (table: string) => (bySqlName.has(table) ? getTableColumns(bySqlName.get(table) as Table).id : undefined);
  const referenced = new Set<string>();
  const tables: Record<string, Table> = {};
  const buildIndex = (spec: IndexSpec) => {
    // The columns are the ones this dialect's table built (`t` below), so of the kind it indexes.
    const built = (spec.unique ? dialect.uniqueIndex(spec.name) : dialect.index(spec.name)).on(...(spec.columns as [X, ...X[]]));
    if (spec.condition) built.where(spec.condition);
    return built;
  };
  for (const [key, spec] of Object.entries(description)) {
    const builders: Record<string, B> = {};
    for (const [columnKey, column] of Object.entries(spec.columns)) {
      const b = dialect.column(column.storage, column.name, column.values);
      const o = column.options;
      if (o.primaryKey) b.primaryKey();
      if (o.notNull) b.notNull();
      if (o.default !== undefined) b.default(o.default);
      if (o.unique) b.unique();
      const target = o.references;
      if (target !== undefined) {
        referenced.add(target);
        // Read when drizzle states the foreign key, once every table is built (checked below).
        b.references(() => idOf(target) as Column, ON_DELETE);
      }
      builders[columnKey] = b;
    }
    const indexes = spec.indexes;
    // `t`: the columns the dialect built, which the description's index callbacks state indexes over.
    const built = dialect.table(spec.name, builders, indexes && ((t) => indexes(t as never).map(buildIndex)));
    bySqlName.set(spec.name, built);
    tables[key] = built;
  }
  for (const name of referenced) {
    if (!idOf(name)) throw new Error(`src/db/tables.ts: a column references "${name}", which is no table of the description with an id`);
  }
  return tables as Tables<T, D>;
}
