/**
 * The pure parts of the transparency work, in process: the report's period and median, its CSV,
 * and how a Transparency Database 422 is read (refused statements in the nested and the flat
 * form, puids it already has in the batch and the single form); the stand-in's own validator
 * against the statements our schema makes.
 */
import { describe, expect, test } from "bun:test";
import { csvField } from "../../src/domain/plumbing/csv.ts";
import { median, reportPeriod, transparencyReportCsv } from "../../src/domain/dsa/transparency-report.ts";
import { existingPuids, refusedStatements } from "../../src/domain/dsa/transparency-submission.ts";
import { statementSchema } from "../../src/domain/views/dsa.ts";
import { transparencyReportSchema } from "../../src/domain/views/transparency.ts";
import { validateStatement } from "../helpers/transparency-db.ts";

const NOW = Date.UTC(2026, 10, 25, 10, 0);

describe("the report's period", () => {
  test("whole UTC days, both ends included; defaults to the 30 days up to today", () => {
    expect(reportPeriod({ from: "2026-01-01", to: "2026-01-31" }, NOW)).toEqual({
      from: "2026-01-01",
      to: "2026-01-31",
      fromMs: Date.UTC(2026, 0, 1),
      toMs: Date.UTC(2026, 1, 1),
    });
    expect(reportPeriod({}, NOW)).toMatchObject({ from: "2026-10-27", to: "2026-11-25" });
    expect(reportPeriod({ from: "2024-01-01", to: "2024-12-31" }, NOW).to).toBe("2024-12-31");
  });

  test("400 for what is not a day, from after to, more than 366 days", () => {
    expect(() => reportPeriod({ from: "2026-02-29", to: "2026-03-01" }, NOW)).toThrow("from: must be a date");
    expect(() => reportPeriod({ from: "2026-13-01" }, NOW)).toThrow("from: must be a date");
    expect(() => reportPeriod({ from: "2026-03-02", to: "2026-03-01" }, NOW)).toThrow("is after to");
    expect(() => reportPeriod({ from: "2024-01-01", to: "2025-01-01" }, NOW)).toThrow("at most 366");
  });

  test("the median: the middle one, or the mean of the middle two; null for none", () => {
    expect(median([])).toBeNull();
    expect(median([5])).toBe(5);
    expect(median([9, 1, 4])).toBe(4);
    expect(median([1, 2, 3, 10])).toBe(3); // (2 + 3) / 2 rounded
  });
});

describe("the report's CSV", () => {
  test("fields with commas, quotes or line breaks are quoted; a leading = is defused", () => {
    expect(csvField("plain")).toBe("plain");
    expect(csvField('a "b", c')).toBe('"a ""b"", c"');
    expect(csvField("=HYPERLINK()")).toBe("'=HYPERLINK()");
    expect(csvField(null)).toBe("");
    expect(csvField(-3)).toBe("-3");
  });

  test("one section,key,value row per number", () => {
    const empty = { total: 0, byGround: [], byCategory: [], bySource: [], automatedDetection: [], automatedDecision: [] };
    const report = transparencyReportSchema.parse({
      period: { from: "2026-01-01", to: "2026-01-31", projectId: null },
      generatedAt: "2026-02-01T00:00:00.000Z",
      reports: { total: 3, bySource: [{ key: "SOURCE_VOLUNTARY", count: 3 }], byCategory: [{ category: "spam, scams", count: 3, bySource: [{ key: "SOURCE_VOLUNTARY", count: 3 }] }], automated: 0 },
      notices: { total: 0, article16: 0, trustedFlagger: 0 },
      decisions: { total: 1, resolved: [], dismissed: [{ key: "other", count: 1 }], automated: 0, mutedReporterDismissals: 0, medianMsToDecision: 1000 },
      actions: { total: 0, byKind: [] },
      statements: empty,
      appeals: { received: 0, pending: 0, upheld: 0, overturned: 0, medianMsToDecision: null },
      serviceLevels: { casesDecided: 4, casesWithinTarget: 3, casesShareWithinTarget: 0.75, appealsDecided: 0, appealsWithinTarget: 0, appealsShareWithinTarget: null },
    });
    const lines = transparencyReportCsv(report).split("\r\n");
    expect(lines[0]).toBe("section,key,value");
    expect(lines).toContain('reports.category,"spam, scams",3');
    expect(lines).toContain("decisions,median_ms_to_decision,1000");
    expect(lines).toContain("appeals,median_ms_to_decision,");
    expect(lines).toContain("service_levels,cases_share_within_target,0.75");
    expect(lines).toContain("service_levels,appeals_share_within_target,");
    expect(lines.at(-1)).toBe("");
  });
});

describe("reading the Transparency Database's 422", () => {
  test("refused statements: nested per statement (the database's form) and flat keys", () => {
    const nested = refusedStatements({ errors: { statement_0: { category: ["The selected category is invalid."] }, statement_2: { puid: ["The puid field format is invalid."] } } });
    expect([...nested.entries()]).toEqual([
      [0, ["category: The selected category is invalid."]],
      [2, ["puid: The puid field format is invalid."]],
    ]);
    const flat = refusedStatements({ message: "x", errors: { "statement_1.decision_ground": ["The selected decision ground is invalid."] } });
    expect([...flat.entries()]).toEqual([[1, ["decision_ground: The selected decision ground is invalid."]]]);
    expect(refusedStatements({ errors: { statements: ["too many"] } }).size).toBe(0);
    expect(refusedStatements("not json").size).toBe(0);
  });

  test("puids it already has: existing_puids (batch) and existing (single)", () => {
    expect(existingPuids({ errors: { puid: ["not unique"], existing_puids: ["a", "b"] } })).toEqual(["a", "b"]);
    expect(existingPuids({ errors: { puid: ["not unique"] }, existing: { puid: "c", uuid: "u" } })).toEqual(["c"]);
    expect(existingPuids({ errors: { category: ["bad"] } })).toEqual([]);
  });
});

describe("the stand-in's validator agrees with the statements our schema makes", () => {
  const valid = statementSchema.parse({
    puid: "flagstaff-1",
    decision_account: "DECISION_ACCOUNT_SUSPENDED",
    end_date_account_restriction: "2026-12-01",
    decision_ground: "DECISION_GROUND_INCOMPATIBLE_CONTENT",
    incompatible_content_ground: "Terms §4",
    incompatible_content_explanation: "Spam",
    content_type: ["CONTENT_TYPE_TEXT"],
    category: "STATEMENT_CATEGORY_OTHER_VIOLATION_TC",
    territorial_scope: ["DE", "AT"],
    content_date: "2026-11-20",
    application_date: "2026-11-25",
    decision_facts: "Decision: suspension.",
    source_type: "SOURCE_VOLUNTARY",
    automated_detection: "No",
    automated_decision: "AUTOMATED_DECISION_NOT_AUTOMATED",
  });

  test("a valid statement passes; each kind of mistake is named by its field", () => {
    expect(validateStatement(valid)).toEqual({});
    expect(Object.keys(validateStatement({ ...valid, category: "STATEMENT_CATEGORY_PIRACY" }))).toEqual(["category"]);
    expect(Object.keys(validateStatement({ ...valid, territorial_scope: ["US"] }))).toEqual(["territorial_scope"]);
    expect(Object.keys(validateStatement({ ...valid, end_date_account_restriction: "2026-11-01" }))).toEqual(["end_date_account_restriction"]);
    expect(Object.keys(validateStatement({ ...valid, decision_ground: "DECISION_GROUND_ILLEGAL_CONTENT" }))).toEqual(["illegal_content_legal_ground", "illegal_content_explanation"]);
    expect(Object.keys(validateStatement({ ...valid, decision_account: undefined }))).toEqual(["decision_visibility", "decision_monetary", "decision_provision", "decision_account"]);
    expect(Object.keys(validateStatement({ ...valid, category_specification: ["KEYWORD_MADE_UP"] }))).toEqual(["category_specification"]);
    expect(Object.keys(validateStatement({ ...valid, content_language: "XX" }))).toEqual(["content_language"]);
    expect(Object.keys(validateStatement({ ...valid, puid: "has space" }))).toEqual(["puid"]);
    expect(Object.keys(validateStatement({ ...valid, decision_facts: "x".repeat(5001) }))).toEqual(["decision_facts"]);
    expect(Object.keys(validateStatement({ ...valid, content_date: "1999-12-31" }))).toEqual(["content_date"]);
    expect(Object.keys(validateStatement({ ...valid, content_type: ["CONTENT_TYPE_OTHER"] }))).toEqual(["content_type_other"]);
  });
});
