/**
 * The transparency report read by windows of time (src/domain/dsa/transparency-report.ts): on
 * SQLite six hours a read, the event loop given back between reads; on PostgreSQL the period in
 * one read. Reports and decisions at each side of a window's edge are counted once, in their
 * period, on both engines alike, however many decided reports a page reads; and the windows
 * themselves (windowsOf) cover the period exactly.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { transparencyReport } from "../../src/domain/dsa/transparency-report.ts";
import { windowsOf } from "../../src/domain/plumbing/slices.ts";
import { decideOnReport } from "../../src/domain/review/decisions.ts";
import { domainWorld, type DomainWorld } from "../helpers/builders.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ymd = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe("windowsOf", () => {
  test("cuts [from, to) into windows that meet end to end and cover it exactly; one window when infinite", () => {
    expect([...windowsOf(0, 15, 6)]).toEqual([
      [0, 6],
      [6, 12],
      [12, 15],
    ]);
    expect([...windowsOf(0, 12, 6)]).toEqual([
      [0, 6],
      [6, 12],
    ]);
    expect([...windowsOf(5, 5, 6)]).toEqual([]);
    expect([...windowsOf(3, 1_000, Number.POSITIVE_INFINITY)]).toEqual([[3, 1_000]]);
  });
});

describe("the transparency report at the edges of its reads", () => {
  let w: DomainWorld;
  beforeAll(async () => {
    w = await domainWorld();
  });
  afterAll(async () => {
    await w.close();
  });

  test("reports filed and decided on each side of a six-hour edge, and before the period, are each counted once where they belong", async () => {
    const start = w.clock.now();
    const periodStart = Math.floor(start / DAY) * DAY - 2 * DAY;
    const at = (ms: number) => w.clock.set(ms);
    // One before the period (decided in it: a decision counted, not a report).
    at(periodStart - 1);
    const before = await w.fileReport({ reasons: ["harassment"] });
    // On each side of the edges at 06:00 and 12:00 of the period's first day, and of its start.
    const times = [periodStart, periodStart + 6 * HOUR - 1, periodStart + 6 * HOUR, periodStart + 12 * HOUR - 1, periodStart + 12 * HOUR, periodStart + DAY + 6 * HOUR];
    const filed = [];
    for (const t of times) {
      at(t);
      filed.push(await w.fileReport({ reasons: ["spam"] }));
    }
    // Decisions: the report before the period at the first edge, three others each at an edge.
    at(periodStart + 6 * HOUR);
    await decideOnReport(w.ctx, { reportId: before.reportId, decision: { action: "resolve", code: "HARASSMENT_CONFIRMED" } });
    at(periodStart + 12 * HOUR);
    await decideOnReport(w.ctx, { reportId: filed[1]!.reportId, decision: { action: "resolve", code: "SPAM_CONFIRMED" } });
    at(periodStart + 12 * HOUR - 1 + DAY);
    await decideOnReport(w.ctx, { reportId: filed[4]!.reportId, decision: { action: "dismiss", reason: "not_actionable" } });
    at(start);
    const report = await transparencyReport(w.ctx, { from: ymd(periodStart), to: ymd(start) });
    expect(report.reports.total).toBe(times.length);
    expect(report.reports.byCategory.map((c) => [c.category, c.count])).toEqual([["spam", times.length]]);
    expect(report.decisions.total).toBe(3);
    expect(report.decisions.resolved).toEqual([
      { key: "HARASSMENT_CONFIRMED", count: 1 },
      { key: "SPAM_CONFIRMED", count: 1 },
    ]);
    expect(report.decisions.dismissed).toEqual([{ key: "not_actionable", count: 1 }]);
    // The median of 6 h + 1 ms (the report before the period), 6 h + 1 ms and a day less 1 ms: 6 h + 1 ms.
    expect(report.decisions.medianMsToDecision).toBe(6 * HOUR + 1);
    // A period of the first day alone: the reports up to its end, the decisions in it.
    const firstDay = await transparencyReport(w.ctx, { from: ymd(periodStart), to: ymd(periodStart) });
    expect(firstDay.reports.total).toBe(5);
    expect(firstDay.decisions.total).toBe(2);
    // The decided reports read a page at a time: one or two a page, the same report.
    for (const pageRows of [1, 2]) expect(await transparencyReport(w.ctx, { from: ymd(periodStart), to: ymd(start) }, pageRows)).toEqual(report);

    // A period reaching into the future counts what is there up to now, and one wholly in the
    // future nothing: its reads stop at now. Ending in 9999, they walked six-hour windows from
    // the organization's first report up to it on SQLite (about 12 million reads, minutes of CPU).
    const intoFuture = await transparencyReport(w.ctx, { from: ymd(periodStart), to: ymd(start + 300 * DAY) });
    expect({ reports: intoFuture.reports, decisions: intoFuture.decisions }).toEqual({ reports: report.reports, decisions: report.decisions });
    const farAhead = await transparencyReport(w.ctx, { from: "9999-01-01", to: "9999-12-31" });
    expect(farAhead.period).toMatchObject({ from: "9999-01-01", to: "9999-12-31" });
    expect(farAhead.reports.total).toBe(0);
    expect(farAhead.decisions.total).toBe(0);

    // One project's report (its own reads, prepared apart from the organization's): a report of
    // another project of the organization, filed and decided in the period, counts for the
    // organization and not for the first project.
    const second = await w.addProject({ name: "Second" });
    at(periodStart + 7 * HOUR);
    const elsewhere = await w.fileReport({ reasons: ["harassment"], project: second });
    await decideOnReport(w.ctx, { reportId: elsewhere.reportId, decision: { action: "dismiss", reason: "other" } });
    at(start);
    const own = await transparencyReport(w.ctx, { from: ymd(periodStart), to: ymd(start), projectId: w.project.id });
    expect({ reports: own.reports, decisions: own.decisions }).toEqual({ reports: report.reports, decisions: report.decisions });
    const theirs = await transparencyReport(w.ctx, { from: ymd(periodStart), to: ymd(start), projectId: second.id });
    expect([theirs.reports.total, theirs.decisions.total, theirs.reports.byCategory.map((c) => c.category)]).toEqual([1, 1, ["harassment"]]);
    const all = await transparencyReport(w.ctx, { from: ymd(periodStart), to: ymd(start) });
    expect([all.reports.total, all.decisions.total]).toEqual([times.length + 1, 4]);
  }, 30_000);
});
