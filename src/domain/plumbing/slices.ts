/**
 * Long work on the event loop, in slices (issue 40): a request that parses a large file or
 * writes thousands of rows runs on the one thread every other request needs, so it gives the
 * loop back once a slice has run `SLICE_MS`, and the requests waiting beside it (a health probe,
 * a report) get in. On SQLite the database calls are synchronous too: a write of thousands of
 * rows is as much a stall as parsing them.
 *
 *   const slices = slicer();
 *   for (const row of rows) {
 *     work(row);
 *     if (slices.due()) await slices.breathe();
 *   }
 */
import type { Engine } from "../../db/engine.ts";
import { HOUR_MS } from "../core/clock.ts";

/** How long one slice of work may hold the event loop. */
export const SLICE_MS = 10;

export interface Slicer {
  /** Whether the current slice has run its time: then `breathe()` before going on. */
  due(): boolean;
  /** Gives the event loop back (its I/O included: setImmediate), then starts a new slice. */
  breathe(): Promise<void>;
}

export function slicer(budgetMs = SLICE_MS): Slicer {
  let started = performance.now();
  return {
    due: () => performance.now() - started >= budgetMs,
    async breathe() {
      await breathe();
      started = performance.now();
    },
  };
}

/** Gives the event loop back once (its I/O included: setImmediate), for work whose every step is a slice already. */
export function breathe(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * How much time one read of a long period covers, for reads that group or count the rows of a
 * period (the transparency report, the overview's charts). On SQLite every query runs on the
 * thread that serves requests: the transparency report's 30 days in one read held every request
 * for about 1.5 s at 300,000 reports (137,000 of them in the period), the overview's 14 days of
 * one project 100 to 200 ms a chart. Read six hours at a time, with the event loop given back
 * between reads, each holds it for a few ms (scripts/bench/dashboard-overview.ts). PostgreSQL
 * runs the queries in its own processes: one read, one round trip each.
 */
export const readWindowMs = (engine: Engine): number => (engine === "sqlite" ? 6 * HOUR_MS : Number.POSITIVE_INFINITY);

/** [from, to) cut into windows of at most `windowMs` (one when it is infinite). */
export function* windowsOf(fromMs: number, toMs: number, windowMs: number): Generator<[number, number]> {
  for (let lo = fromMs; lo < toMs; lo = lo + windowMs) yield [lo, Math.min(toMs, lo + windowMs)];
}

/** Between two reads of windowsOf's windows: the requests waiting run (none to wait for when the period is one read). */
export const breatheBetweenReads = (windowMs: number): Promise<void> => (Number.isFinite(windowMs) ? breathe() : Promise.resolve());
