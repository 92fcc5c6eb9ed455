/**
 * The tables are described once (src/db/tables.ts) and built by one small dialect per engine
 * (src/db/schema-sqlite.ts, src/db/schema-pg.ts). In-process, no database, this checks what the
 * description cannot promise alone:
 * - every table of the description is exported under its name by both dialect modules and by
 *   src/db/schema.ts (their export lists are written by hand);
 * - the two dialects build the same tables: the row types (by the compiler), and each table's
 *   drizzle config reduced to what both dialects can say (columns, TypeScript kind, keys, unique
 *   constraints, foreign keys, indexes), table by table, so a dialect that drops a modifier, a
 *   vocabulary or a partial index's WHERE shows;
 * - each dialect's tables are what its migrations built: diffed against the last snapshot of
 *   drizzle/ and drizzle-pg/, drizzle-kit would generate nothing (a column added without
 *   `npm run db:generate` fails here), and the embedded migrations create every table and index.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { getTableName, is, SQL, type Column } from "drizzle-orm";
import { generateDrizzleJson, generateMigration, generateSQLiteDrizzleJson, generateSQLiteMigration } from "drizzle-kit/api";
import { bigint, getTableConfig as pgConfig, integer as pgInteger, PgDialect, pgTable, text as pgText, uniqueIndex as pgUniqueIndex } from "drizzle-orm/pg-core";
import type { PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteConfig, SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { embeddedMigrations } from "../src/db/migrations-index.ts";
import { embeddedPgMigrations } from "../src/db/migrations-index-pg.ts";
import * as domainTables from "../src/db/schema.ts";
import * as pg from "../src/db/schema-pg.ts";
import * as sqlite from "../src/db/schema-sqlite.ts";
import { TABLE_NAMES } from "../src/db/tables.ts";

// ---- The row types: the same TypeScript types on both sides (checked by `tsc --noEmit`). ----

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type S = typeof sqlite;
type P = typeof pg;
/** Export names of one side only, and tables whose select or insert row types differ. */
type Mismatched =
  | Exclude<keyof S, keyof P>
  | Exclude<keyof P, keyof S>
  | {
      [K in keyof S & keyof P]: Equal<S[K]["$inferSelect"], P[K]["$inferSelect"]> extends true
        ? Equal<S[K]["$inferInsert"], P[K]["$inferInsert"]> extends true
          ? never
          : K
        : K;
    }[keyof S & keyof P];
// A compile error here names the table (or export) whose PostgreSQL row type is not the SQLite one.
const rowTypesMatch: [Mismatched] extends [never] ? true : Mismatched = true;

// ---- The shape of a table, as both dialects can state it. ----

interface ColumnShape {
  name: string;
  /** "number" or "string": what the column is in TypeScript. */
  dataType: string;
  notNull: boolean;
  hasDefault: boolean;
  default: unknown;
  primary: boolean;
  enumValues: string[] | null;
  /** Column-level `.unique()`: its constraint name, or null. */
  unique: string | null;
}
interface IndexShape {
  name: string;
  unique: boolean;
  /** Column names, or an expression's text normalised (see normaliseSql). */
  columns: string[];
  where: string | null;
}
interface TableShape {
  name: string;
  columns: ColumnShape[];
  primaryKeys: string[][];
  uniqueConstraints: { name: string | undefined; columns: string[] }[];
  foreignKeys: { columns: string[]; table: string; foreignColumns: string[]; onDelete: string; onUpdate: string }[];
  indexes: IndexShape[];
  checks: string[];
}

const sqliteDialect = new SQLiteSyncDialect();
const pgDialect = new PgDialect();

/**
 * An index expression or WHERE clause, without what only quoting or dialect tells apart: quotes,
 * the table qualifier, case, spacing. And without `COLLATE "C"`: the PostgreSQL indexes compare
 * byte-wise like SQLite's text does by default (see src/db/schema-pg.ts); it is the only
 * dialect-specific text the PostgreSQL schema adds.
 */
function normaliseSql(text: string, table: string): string {
  return text
    .replace(/\s+collate\s+"?c"?/gi, "")
    .replace(/[`"]/g, "")
    .replaceAll(`${table}.`, "")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
}

type AnyConfig = ReturnType<typeof sqliteConfig> | ReturnType<typeof pgConfig>;

function columnShape(c: AnyConfig["columns"][number]): ColumnShape {
  return {
    name: c.name,
    dataType: c.dataType,
    notNull: c.notNull,
    hasDefault: c.hasDefault,
    default: is(c.default, SQL) ? "sql" : c.default,
    primary: c.primary,
    enumValues: c.enumValues ? [...c.enumValues] : null,
    unique: c.isUnique ? (c.uniqueName ?? null) : null,
  };
}

const byName = <T extends { name?: string | undefined }>(a: T, b: T) => (a.name ?? "").localeCompare(b.name ?? "");
const names = (columns: readonly Column[]) => columns.map((c) => c.name);

/** A table's drizzle config (either dialect's), with its expressions rendered by `render`. */
function shapeOf(t: AnyConfig, render: (s: SQL) => string): TableShape {
  const indexes: { config: { name?: string; unique: boolean; columns: unknown[]; where?: SQL } }[] = t.indexes;
  return {
    name: t.name,
    columns: t.columns.map(columnShape).sort(byName),
    primaryKeys: t.primaryKeys.map((pk) => names(pk.columns)),
    uniqueConstraints: t.uniqueConstraints.map((u) => ({ name: u.name, columns: names(u.columns) })).sort(byName),
    foreignKeys: t.foreignKeys
      .map((fk) => {
        const r = fk.reference();
        return {
          columns: names(r.columns),
          table: getTableName(r.foreignTable),
          foreignColumns: names(r.foreignColumns),
          onDelete: fk.onDelete ?? "no action",
          onUpdate: fk.onUpdate ?? "no action",
        };
      })
      .sort((a, b) => a.columns.join().localeCompare(b.columns.join())),
    indexes: indexes
      .map((i) => ({
        name: i.config.name ?? "",
        unique: i.config.unique,
        columns: i.config.columns.map((c) => (is(c, SQL) ? render(c) : ((c as { name?: string }).name ?? ""))),
        where: i.config.where ? render(i.config.where) : null,
      }))
      .sort(byName),
    checks: t.checks.map((c) => c.name).sort(),
  };
}

function sqliteShape(table: SQLiteTable): TableShape {
  const t = sqliteConfig(table);
  return shapeOf(t, (s) => normaliseSql(sqliteDialect.sqlToQuery(s).sql, t.name));
}

function pgShape(table: PgTable): TableShape {
  const t = pgConfig(table);
  return shapeOf(t, (s) => normaliseSql(pgDialect.sqlToQuery(s).sql, t.name));
}

/** Every difference between two shapes, one line each (empty when they are the same). */
function diffShapes(a: TableShape, b: TableShape): string[] {
  const out: string[] = [];
  const eq = (x: unknown, y: unknown) => JSON.stringify(x) === JSON.stringify(y);
  if (a.name !== b.name) out.push(`table name: ${a.name} vs ${b.name}`);
  const where = a.name;
  const named = <T extends { name: string }>(kind: string, xs: T[], ys: T[]) => {
    const ym = new Map(ys.map((y) => [y.name, y]));
    const xm = new Map(xs.map((x) => [x.name, x]));
    for (const x of xs) {
      const y = ym.get(x.name);
      if (!y) out.push(`${where}: ${kind} ${x.name} only in the first`);
      else if (!eq(x, y)) out.push(`${where}: ${kind} ${x.name}: ${JSON.stringify(x)} vs ${JSON.stringify(y)}`);
    }
    for (const y of ys) if (!xm.has(y.name)) out.push(`${where}: ${kind} ${y.name} only in the second`);
  };
  named("column", a.columns, b.columns);
  named("index", a.indexes, b.indexes);
  for (const key of ["primaryKeys", "uniqueConstraints", "foreignKeys", "checks"] as const) {
    if (!eq(a[key], b[key])) out.push(`${where}: ${key}: ${JSON.stringify(a[key])} vs ${JSON.stringify(b[key])}`);
  }
  return out;
}

const sqliteTables = new Map(Object.values(sqlite).map((t) => [getTableName(t), t as SQLiteTable]));
const pgTables = new Map(Object.values(pg).map((t) => [getTableName(t), t as PgTable]));

describe("the SQLite and PostgreSQL tables", () => {
  test("are every table of the description, under its name, in both dialect modules and in src/db/schema.ts", () => {
    const described = [...TABLE_NAMES].sort();
    expect(described.length).toBeGreaterThan(40);
    expect({ sqlite: Object.keys(sqlite).sort(), pg: Object.keys(pg).sort(), domain: Object.keys(domainTables).sort() }).toEqual({
      sqlite: described,
      pg: described,
      domain: described,
    });
  });

  test("have the same names and row types in both dialects", () => {
    expect(rowTypesMatch).toBe(true);
    for (const key of Object.keys(sqlite) as (keyof typeof sqlite)[]) {
      expect({ key, name: getTableName(pg[key]) }).toEqual({ key, name: getTableName(sqlite[key]) });
    }
    expect(sqliteTables.size).toBe(Object.keys(sqlite).length);
  });

  test("have the same columns, kinds, keys, constraints and indexes in both dialects", () => {
    const differences: string[] = [];
    for (const [name, table] of sqliteTables) {
      const other = pgTables.get(name);
      if (!other) differences.push(`${name}: no PostgreSQL table`);
      else differences.push(...diffShapes(sqliteShape(table), pgShape(other)));
    }
    expect(differences).toEqual([]);
  });

  test("have numbers and strings only (no bigint, boolean, json or date on PostgreSQL)", () => {
    for (const table of pgTables.values()) {
      for (const c of pgShape(table).columns) expect({ table: getTableName(table), c: c.name, kind: c.dataType }).toMatchObject({ kind: expect.stringMatching(/^(number|string)$/) });
    }
  });

  test("the PostgreSQL prefix-searched expression indexes take the database's (C) collation, as the queries do", () => {
    const { indexes } = pgConfig(pg.identities);
    for (const name of ["identities_name_idx", "identities_username_idx"]) {
      const index = indexes.find((i) => i.config.name === name);
      const expr = index?.config.columns.find((c) => is(c, SQL));
      expect(expr && is(expr, SQL) ? pgDialect.sqlToQuery(expr).sql : "").toMatch(/^lower\([^)]*\)$/);
    }
  });
});

describe("the comparison itself", () => {
  // rate_windows as src/db/schema-pg.ts builds it, and altered copies.
  const faithful = pgTable("rate_windows", {
    key: pgText("key").primaryKey(),
    windowStart: bigint("window_start", { mode: "number" }).notNull(),
    count: pgInteger("count").notNull(),
  });
  const base = sqliteShape(sqlite.rateWindows);

  test("a faithful copy shows no difference", () => {
    expect(diffShapes(base, pgShape(faithful))).toEqual([]);
  });

  test("catches a column's kind, nullability, default, key, and a missing or extra column", () => {
    const variants = {
      bigintMode: pgTable("rate_windows", {
        key: pgText("key").primaryKey(),
        windowStart: bigint("window_start", { mode: "bigint" }).notNull(),
        count: pgInteger("count").notNull(),
      }),
      nullable: pgTable("rate_windows", {
        key: pgText("key").primaryKey(),
        windowStart: bigint("window_start", { mode: "number" }),
        count: pgInteger("count").notNull(),
      }),
      defaulted: pgTable("rate_windows", {
        key: pgText("key").primaryKey(),
        windowStart: bigint("window_start", { mode: "number" }).notNull(),
        count: pgInteger("count").notNull().default(0),
      }),
      noKey: pgTable("rate_windows", {
        key: pgText("key").notNull(),
        windowStart: bigint("window_start", { mode: "number" }).notNull(),
        count: pgInteger("count").notNull(),
      }),
      missing: pgTable("rate_windows", {
        key: pgText("key").primaryKey(),
        windowStart: bigint("window_start", { mode: "number" }).notNull(),
      }),
      extra: pgTable("rate_windows", {
        key: pgText("key").primaryKey(),
        windowStart: bigint("window_start", { mode: "number" }).notNull(),
        count: pgInteger("count").notNull(),
        more: pgText("more"),
      }),
      unique: pgTable("rate_windows", {
        key: pgText("key").primaryKey(),
        windowStart: bigint("window_start", { mode: "number" }).notNull().unique(),
        count: pgInteger("count").notNull(),
      }),
      indexed: pgTable(
        "rate_windows",
        {
          key: pgText("key").primaryKey(),
          windowStart: bigint("window_start", { mode: "number" }).notNull(),
          count: pgInteger("count").notNull(),
        },
        (t) => [pgUniqueIndex("rate_windows_start_idx").on(t.windowStart)],
      ),
    };
    for (const [variant, table] of Object.entries(variants)) {
      expect({ variant, found: diffShapes(base, pgShape(table)).length > 0 }).toEqual({ variant, found: true });
    }
  });

  test("catches index, foreign-key and partial-index differences", () => {
    const cases = sqliteShape(sqlite.cases);
    const real = pgShape(pg.cases);
    expect(diffShapes(cases, real)).toEqual([]);
    const altered = (change: (s: TableShape) => void) => {
      const copy = structuredClone(real);
      change(copy);
      return diffShapes(cases, copy);
    };
    expect(altered((s) => (s.indexes[0]!.where = null))).toHaveLength(1);
    expect(altered((s) => (s.indexes[0]!.unique = !s.indexes[0]!.unique))).toHaveLength(1);
    expect(altered((s) => s.indexes[0]!.columns.reverse())).toHaveLength(1);
    expect(altered((s) => (s.indexes[0]!.name += "_x"))).toHaveLength(2);
    expect(altered((s) => (s.foreignKeys[0]!.onDelete = "no action"))).toHaveLength(1);
    expect(altered((s) => (s.foreignKeys[0]!.table = "projects_x"))).toHaveLength(1);
    // An expression that differs in more than collation is a difference; COLLATE "C" alone is not.
    expect(normaliseSql(`lower("identities"."name") COLLATE "C"`, "identities")).toBe(normaliseSql("lower(`identities`.`name`)", "identities"));
    expect(normaliseSql(`upper("identities"."name")`, "identities")).not.toBe(normaliseSql(`lower("identities"."name")`, "identities"));
    // A table compared with another one is all differences.
    expect(diffShapes(sqliteShape(sqlite.reports), pgShape(pg.cases)).length).toBeGreaterThan(10);
  });
});

/** The snapshot drizzle-kit wrote with the newest migration of `dir` (drizzle/ or drizzle-pg/): the schema that migration leaves. */
async function lastSnapshot(dir: string) {
  const meta = join(import.meta.dir, "..", dir, "meta");
  const journal = (await Bun.file(join(meta, "_journal.json")).json()) as { entries: { idx: number }[] };
  const newest = journal.entries.at(-1);
  if (!newest) throw new Error(`${dir}: no migration in the journal`);
  return Bun.file(join(meta, `${String(newest.idx).padStart(4, "0")}_snapshot.json`)).json();
}

describe("each engine's tables are what its migrations built (npm run db:generate would generate nothing)", () => {
  test("SQLite", async () => {
    expect(await generateSQLiteMigration(await lastSnapshot("drizzle"), await generateSQLiteDrizzleJson(sqlite))).toEqual([]);
  });

  test("PostgreSQL", async () => {
    expect(await generateMigration(await lastSnapshot("drizzle-pg"), generateDrizzleJson(pg))).toEqual([]);
  });
});

describe("the embedded migrations (regenerated after a schema change)", () => {
  const sqliteSql = embeddedMigrations.map((m) => m.sql).join("\n");
  const pgSql = embeddedPgMigrations.map((m) => m.sql).join("\n");

  test("SQLite's create every table and index", () => {
    const missing: string[] = [];
    for (const [name, table] of sqliteTables) {
      if (!sqliteSql.includes(`CREATE TABLE \`${name}\``)) missing.push(`table ${name}`);
      for (const i of sqliteConfig(table).indexes) {
        if (!new RegExp(`CREATE (UNIQUE )?INDEX \`${i.config.name}\``).test(sqliteSql)) missing.push(`index ${i.config.name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  test("PostgreSQL's create every table and index", () => {
    const missing: string[] = [];
    for (const [name, table] of pgTables) {
      if (!pgSql.includes(`CREATE TABLE "${name}"`)) missing.push(`table ${name}`);
      for (const i of pgConfig(table).indexes) {
        if (!new RegExp(`CREATE (UNIQUE )?INDEX "${i.config.name}"`).test(pgSql)) missing.push(`index ${i.config.name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
