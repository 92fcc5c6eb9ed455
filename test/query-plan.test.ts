/**
 * Every filter of GET /reports must be served by an index, and so must the overview's counts by
 * day, a queue's oldest open case and the queue's trusted segments: checked with EXPLAIN QUERY PLAN on the exact query the server builds, against a database
 * migrated by the server's own code.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db/client.ts";
import { migrateDatabase } from "../src/db/migrate.ts";
import { reportListQueries, type ReportQuery } from "../src/domain/intake/reports.ts";
import { reporterSummaryQueries } from "../src/domain/cases/reporter-summary.ts";
import { countsByDayQuery, reasonNamesOf, segmentCondition, SEVERITY_KEYS } from "../src/domain/dashboard/dashboard.ts";
import { cases } from "../src/db/schema.ts";
import { and, asc, eq } from "drizzle-orm";
import { oldestQuery, openInQueue } from "../src/domain/service-levels/service-levels.ts";
import { BUCKETS } from "../src/domain/views/severity.ts";

const dir = mkdtempSync(join(tmpdir(), "flagstaff-plan-"));
const db = openDatabase(join(dir, "db.sqlite"));
migrateDatabase(db);
afterAll(() => {
  db.$client.close();
  rmSync(dir, { recursive: true, force: true });
});

const base: ReportQuery = { sort: "desc", limit: 25 };
const filters: [string, Partial<ReportQuery>][] = [
  ["default", {}],
  ["ascending with cursor", { sort: "asc", cursor: "2026-01-01T00:00:00Z" }],
  ["projectId", { projectId: "p" }],
  ["status", { statuses: ["OPEN"] }],
  ["status list", { statuses: ["OPEN", "IN_REVIEW"] }],
  ["severity", { severity: "HIGH" }],
  ["reason", { reason: "spam" }],
  ["reason with cursor", { reason: "spam", cursor: "2026-01-01T00:00:00Z" }],
  ["subjectExternalId", { subjectExternalId: "u" }],
  ["contentExternalId", { contentExternalId: "c" }],
  ["automated", { automated: true }],
];

for (const [name, filter] of filters) {
  test(`GET /reports with ${name} uses an index, never a scan of reports`, () => {
    for (const query of reportListQueries({ db, orgId: "org" }, { ...base, ...filter })) {
      const { sql, params } = query.toSQL();
      const plan = db.$client.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as never[])) as { detail: string }[];
      const details = plan.map((p) => p.detail);
      expect(details.some((d) => /^SCAN (reports|report_reasons)\b/.test(d))).toBe(false);
      expect(details.some((d) => /USING (COVERING )?INDEX|USING INTEGER PRIMARY KEY|USING PRIMARY KEY/.test(d))).toBe(true);
      // The filter's own index, not just the organization's walked with a filter applied.
      if (filter.statuses) expect(details.join(" ")).toContain("status=?");
      if (filter.severity) expect(details.join(" ")).toContain("severity=?");
      if (filter.reason) expect(details.join(" ")).toContain("name=?");
      if (filter.subjectExternalId) expect(details.join(" ")).toContain("subject_external_id=?");
      if (filter.contentExternalId) expect(details.join(" ")).toContain("content_external_id=?");
      if (filter.automated !== undefined) expect(details.join(" ")).toContain("automated=?");
      if (filter.projectId) expect(details.join(" ")).toContain("project_id=?");
      // Rows come in index order: no sorting of every match.
      expect(details.some((d) => d.includes("TEMP B-TREE"))).toBe(false);
    }
  });
}

test("a case's reporter summary reads the case's reports by their index and its reporters by their keys, never a scan (SQLite)", () => {
  const queries = reporterSummaryQueries({ db, clock: { now: () => 1_700_000_100_000 } }, { id: "case", createdAt: 1_700_000_000_000 });
  for (const [name, query] of Object.entries(queries)) {
    const { sql, params } = query.toSQL();
    const details = (db.$client.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as never[])) as { detail: string }[]).map((p) => p.detail);
    expect({ name, scans: details.filter((d) => /^SCAN (reports|identities|report_reasons)\b/.test(d)) }).toEqual({ name, scans: [] });
    expect(details.some((d) => d.includes("reports_case_idx")), `${name}: ${details.join(" | ")}`).toBe(true);
    // The reporters' earlier reports: one probe of the reporter's index each.
    if (name === "people") expect(details.some((d) => d.includes("reports_reporter_identity_idx")), details.join(" | ")).toBe(true);
  }
});

test("the overview's counts by day read each (value, day) as a range of its index: no scan of reports or reasons, no sorting of the period's rows (SQLite)", () => {
  const since = Date.UTC(2026, 0, 1);
  for (const input of [
    { table: "reports", key: "severity", keys: SEVERITY_KEYS, index: "reports_severity_idx" },
    { table: "report_reasons", key: "name", keys: reasonNamesOf("org"), index: "report_reasons_list_idx" },
  ] as const) {
    const { sql, params } = countsByDayQuery({ db, orgId: "org" }, { ...input, since, days: 14 }).toSQL();
    const details = (db.$client.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as never[])) as { detail: string }[]).map((p) => p.detail);
    const plan = details.join(" | ");
    expect({ table: input.table, scans: details.filter((d) => /^SCAN (reports|report_reasons)\b/.test(d)), sorts: details.filter((d) => d.includes("TEMP B-TREE")) }).toEqual({ table: input.table, scans: [], sorts: [] });
    expect(plan).toContain(`USING COVERING INDEX ${input.index} (org_id=? AND ${input.key}=? AND created_us>? AND created_us<?)`);
  }
});

test("a queue's oldest open case is the first of a range of an index for each bucket: no sorting of the queue's open cases (SQLite)", () => {
  for (const isDefault of [1, 0] as const) {
    for (const bucket of BUCKETS) {
      const { sql, params } = oldestQuery({ db }, openInQueue("org", { id: "queue", isDefault }), bucket).toSQL();
      const details = (db.$client.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as never[])) as { detail: string }[]).map((p) => p.detail);
      const plan = details.join(" | ");
      expect({ isDefault, bucket, scans: details.filter((d) => /^SCAN cases\b/.test(d)), sorts: details.filter((d) => d.includes("TEMP B-TREE")) }).toEqual({ isDefault, bucket, scans: [], sorts: [] });
      expect(plan).toContain("bucket=?");
    }
  }
});

test("the queue's trusted segments search the partial index of trusted cases, not every case of the bucket (SQLite)", () => {
  for (const bucket of BUCKETS) {
    for (const trusted of [1, 0] as const) {
      const query = db
        .select()
        .from(cases)
        .where(and(eq(cases.orgId, "org"), eq(cases.isOpen, 1), segmentCondition({ bucket, trusted }, true)))
        .orderBy(asc(cases.createdAt), asc(cases.id))
        .limit(51);
      const { sql, params } = query.toSQL();
      const plan = (db.$client.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as never[])) as { detail: string }[]).map((p) => p.detail).join(" | ");
      expect({ bucket, trusted, plan: /SCAN cases\b/.test(plan) ? plan : "no scan" }).toEqual({ bucket, trusted, plan: "no scan" });
      expect(plan).toContain(trusted ? "cases_trusted_idx" : "cases_queue_idx (org_id=? AND is_open=? AND bucket=?)");
    }
  }
});
