/**
 * The SQLite tables: the description of src/db/tables.ts built with SQLite's column types, and
 * the input of the SQLite migrations (drizzle/, drizzle.config.ts). The domain is typed against
 * these tables (src/db/schema.ts). Times, counts and 0/1 flags are `integer` (SQLite's integers
 * hold 64 bits), reals `real`, the rest `text`; SQLite compares text byte-wise, which the
 * domain's prefix searches rely on (src/db/schema-pg.ts says how PostgreSQL does the same).
 */
import type { BuildColumns, ColumnBuilderBase } from "drizzle-orm";
import {
  index,
  integer,
  real,
  sqliteTable,
  text,
  uniqueIndex,
  type IndexBuilder,
  type IndexColumn,
  type SQLiteColumnBuilderBase,
  type SQLiteIntegerBuilderInitial,
  type SQLiteRealBuilderInitial,
  type SQLiteTableWithColumns,
  type SQLiteTextBuilderInitial,
} from "drizzle-orm/sqlite-core";
import type { ColumnBuilder, ColumnFacts, Dialect, DialectTypes } from "./columns.ts";
import { defineTables } from "./tables.ts";

/** The drizzle builder SQLite gives a column of these facts (its modifiers are added by src/db/columns.ts). */
type Builder<F extends ColumnFacts> = F["storage"] extends "text"
  ? SQLiteTextBuilderInitial<F["name"], F["values"], number | undefined>
  : F["storage"] extends "real"
    ? SQLiteRealBuilderInitial<F["name"]>
    : SQLiteIntegerBuilderInitial<F["name"]>;

type Table<N extends string, B extends Record<string, ColumnBuilderBase>> = SQLiteTableWithColumns<{ name: N; schema: undefined; columns: BuildColumns<N, B, "sqlite">; dialect: "sqlite" }>;

/** The types of this dialect's builders and tables (DialectTypes, src/db/columns.ts). */
interface SqliteTypes extends DialectTypes {
  readonly builder: Builder<Extract<this["facts"], ColumnFacts>>;
  readonly table: Table<Extract<this["tableName"], string>, Extract<this["builders"], Record<string, ColumnBuilderBase>>>;
}

const sqlite: Dialect<SqliteTypes, SQLiteColumnBuilderBase & ColumnBuilder, IndexBuilder, IndexColumn> = {
  column: (storage, name, values) => (storage === "text" ? text(name, { enum: values }) : storage === "real" ? real(name) : integer(name)),
  table: (name, columns, indexes) => sqliteTable(name, columns, indexes),
  index,
  uniqueIndex,
};

// Every table of the description, under its name (test/schema-dialects.test.ts checks the list).
export const {
  organizations, projects, apiKeys, identities, users, auditEvents, auditChainHeads, auditCheckpoints,
  reportCategories, cases, reports, reportReasons, caseNotes, caseTags, decisionTemplates, bulkDecisions,
  contentAnalyses, categoryPolicies, shadowAnalyses, jobs, urlScanCache, enforcementActions, strikes, appeals,
  slaBreaches, qualityReviews, queues, rules, ruleVersions, ruleHits, statements, transparencySubmission,
  transparencySubmissions, webhookEndpoints, webhookDeliveries, webhookAttempts, oidcConfigs, oidcSignIns,
  sessions, rateWindows, evalSets, evalSetVersions, evalItems, evalRuns, evalRunItems,
  attachmentBlobs, attachments, attachmentStores,
  mediaBanks, mediaBankEntries, mediaBankAdditions, mediaBankVersions, caseMedia, mediaMatches,
} = defineTables(sqlite);
