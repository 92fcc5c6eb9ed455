/**
 * The order of enrichment and the shedding rule, as arithmetic (issue 44): which class a report
 * is, what a lane at its bound sheds (the job it would take last; never a kept one), how many
 * skipped jobs a catch-up takes, and when a skipped one expires. In process, no store: the
 * queue applies these (test/domain/enrichment-queue.test.ts checks it does).
 */
import { describe, expect, test } from "bun:test";
import { ENRICHMENT_CLASS_SPECS, ENRICHMENT_CLASSES, enrichmentClassOf, KEPT_PRIORITY_MAX } from "../../src/domain/views/enrichment-order.ts";
import { admit, catchUpCount, catchUpRoom, hasExpired, leastUrgentWaiting, pendingTotal, UNBOUNDED_ROOM } from "../../src/domain/plumbing/backlog-rules.ts";

const P = Object.fromEntries(ENRICHMENT_CLASSES.map((c) => [c, ENRICHMENT_CLASS_SPECS[c].priority])) as Record<(typeof ENRICHMENT_CLASSES)[number], number>;
const lane = (pending: Record<number, number>, bound = 10) => ({ bound, keptUpTo: KEPT_PRIORITY_MAX, pending: new Map(Object.entries(pending).map(([p, n]) => [Number(p), n])) });

describe("the classes of enrichment, most urgent first", () => {
  test("emergency, then a trusted flagger's, then the first report of a new case, then a report joining a case", () => {
    expect(ENRICHMENT_CLASSES.map((c) => ENRICHMENT_CLASS_SPECS[c].priority)).toEqual([0, 1, 2, 3]);
    expect(enrichmentClassOf({ emergency: true, trustedFlagger: true, opensCase: false })).toBe("emergency");
    expect(enrichmentClassOf({ emergency: false, trustedFlagger: true, opensCase: false })).toBe("trustedFlagger");
    expect(enrichmentClassOf({ emergency: false, trustedFlagger: false, opensCase: true })).toBe("newCase");
    expect(enrichmentClassOf({ emergency: false, trustedFlagger: false, opensCase: false })).toBe("joinsCase");
  });

  test("only the emergency class is kept (never shed)", () => {
    expect(ENRICHMENT_CLASSES.filter((c) => ENRICHMENT_CLASS_SPECS[c].kept)).toEqual(["emergency"]);
    expect(KEPT_PRIORITY_MAX).toBe(P.emergency);
  });
});

describe("a lane at its bound sheds the job it would take last", () => {
  test("below the bound every job is queued and nothing is shed", () => {
    expect(admit(lane({ 3: 9 }), P.joinsCase)).toEqual({ queued: true, shed: null });
    expect(admit({ ...lane({ 3: 50 }), bound: 0 }, P.joinsCase)).toEqual({ queued: true, shed: null }); // no bound
  });

  test("a more urgent job is queued in place of a waiting job of the least urgent priority", () => {
    const full = lane({ 0: 2, 2: 5, 3: 3 });
    expect(pendingTotal(full.pending)).toBe(10);
    expect(leastUrgentWaiting(full.pending)).toBe(P.joinsCase);
    expect(admit(full, P.newCase)).toEqual({ queued: true, shed: P.joinsCase });
    expect(admit(full, P.trustedFlagger)).toEqual({ queued: true, shed: P.joinsCase });
    // With none joining a case waiting, a trusted flagger's report sheds a new case's.
    expect(admit(lane({ 0: 2, 2: 8 }), P.trustedFlagger)).toEqual({ queued: true, shed: P.newCase });
  });

  test("a job no more urgent than every waiting one is itself shed (it would be taken last)", () => {
    expect(admit(lane({ 2: 4, 3: 6 }), P.joinsCase)).toEqual({ queued: false });
    expect(admit(lane({ 1: 4, 2: 6 }), P.newCase)).toEqual({ queued: false });
    expect(admit(lane({ 1: 10 }), P.joinsCase)).toEqual({ queued: false });
  });

  test("an emergency report is never shed: it waits past the bound, and never makes room by shedding another emergency", () => {
    // Room is made by shedding a less urgent one when there is one…
    expect(admit(lane({ 0: 9, 3: 1 }), P.emergency)).toEqual({ queued: true, shed: P.joinsCase });
    // …else it is queued past the bound.
    expect(admit(lane({ 0: 10 }), P.emergency)).toEqual({ queued: true, shed: null });
    expect(admit(lane({ 0: 25 }), P.emergency)).toEqual({ queued: true, shed: null });
    // A less urgent job never sheds a kept one: with only emergencies waiting, it is shed itself.
    expect(admit(lane({ 0: 10 }), P.trustedFlagger)).toEqual({ queued: false });
    expect(admit({ ...lane({ 0: 10 }), keptUpTo: null }, P.joinsCase)).toEqual({ queued: false });
  });
});

describe("catching up and expiring", () => {
  test("a lane takes skipped jobs again while fewer than a tenth of its bound wait, up to that many", () => {
    expect(catchUpRoom(10_000)).toBe(1_000);
    expect(catchUpRoom(5)).toBe(1);
    expect(catchUpRoom(0)).toBe(UNBOUNDED_ROOM);
    expect(catchUpCount({ bound: 10_000, pending: 0 })).toBe(1_000);
    expect(catchUpCount({ bound: 10_000, pending: 400 })).toBe(600);
    expect(catchUpCount({ bound: 10_000, pending: 1_000 })).toBe(0);
    expect(catchUpCount({ bound: 10_000, pending: 9_000 })).toBe(0);
  });

  test("a skipped job expires once it waited longer than the catch-up age", () => {
    const day = 86_400_000;
    expect(hasExpired({ skippedAt: 0, now: day, maxAgeMs: day })).toBe(false);
    expect(hasExpired({ skippedAt: 0, now: day + 1, maxAgeMs: day })).toBe(true);
  });
});
