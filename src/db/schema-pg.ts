/**
 * The PostgreSQL (15+) tables: the description of src/db/tables.ts built with PostgreSQL's
 * column types, and the input of the PostgreSQL migrations (drizzle-pg/, drizzle.pg.config.ts).
 * Each column has the TypeScript type of its SQLite twin (src/db/schema.ts hands the domain
 * either set under the SQLite types):
 * - Times pass 2^31, so they are `bigint` read and written as numbers (`mode: "number"`; ms and
 *   µs since the epoch stay far below 2^53); so are the audit chain's sequence numbers.
 * - Counts, scores and 0/1 flags are `integer` (flags stay 0/1, not `boolean`, so the domain's
 *   `= 1` comparisons and its writes mean the same on both engines); reals `double precision`.
 * - JSON is `text`, not `jsonb`: the domain stores and parses the text itself.
 *
 * Collation: SQLite compares text byte-wise, and the domain's prefix searches (a range from
 * `prefix` to `prefix + MAX_CHAR`) rely on it. Flagstaff's database is created with the C
 * collation (`CREATE DATABASE … TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C'`,
 * docs/operations.md), so every column and index compares byte-wise as on SQLite. The indexes
 * say no COLLATE of their own: PostgreSQL uses an index only for queries of its collation, and
 * the domain's queries are the same SQL on both engines.
 */
import type { BuildColumns, ColumnBuilderBase, SQL } from "drizzle-orm";
import {
  bigint,
  doublePrecision,
  index,
  integer,
  pgTable,
  text,
  uniqueIndex,
  type ExtraConfigColumn,
  type IndexBuilder,
  type PgBigInt53BuilderInitial,
  type PgColumnBuilderBase,
  type PgDoublePrecisionBuilderInitial,
  type PgIntegerBuilderInitial,
  type PgTableWithColumns,
  type PgTextBuilderInitial,
} from "drizzle-orm/pg-core";
import type { ColumnBuilder, ColumnFacts, Dialect, DialectTypes } from "./columns.ts";
import { defineTables } from "./tables.ts";

/** The drizzle builder PostgreSQL gives a column of these facts (its modifiers are added by src/db/columns.ts). */
type Builder<F extends ColumnFacts> = F["storage"] extends "text"
  ? PgTextBuilderInitial<F["name"], F["values"]>
  : F["storage"] extends "bigint"
    ? PgBigInt53BuilderInitial<F["name"]>
    : F["storage"] extends "real"
      ? PgDoublePrecisionBuilderInitial<F["name"]>
      : PgIntegerBuilderInitial<F["name"]>;

type Table<N extends string, B extends Record<string, ColumnBuilderBase>> = PgTableWithColumns<{ name: N; schema: undefined; columns: BuildColumns<N, B, "pg">; dialect: "pg" }>;

/** The types of this dialect's builders and tables (DialectTypes, src/db/columns.ts). */
interface PgTypes extends DialectTypes {
  readonly builder: Builder<Extract<this["facts"], ColumnFacts>>;
  readonly table: Table<Extract<this["tableName"], string>, Extract<this["builders"], Record<string, ColumnBuilderBase>>>;
}

const pg: Dialect<PgTypes, PgColumnBuilderBase & ColumnBuilder, IndexBuilder, Partial<ExtraConfigColumn> | SQL> = {
  column: (storage, name, values) =>
    storage === "text" ? text(name, { enum: values }) : storage === "bigint" ? bigint(name, { mode: "number" }) : storage === "real" ? doublePrecision(name) : integer(name),
  table: (name, columns, indexes) => pgTable(name, columns, indexes),
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
} = defineTables(pg);
