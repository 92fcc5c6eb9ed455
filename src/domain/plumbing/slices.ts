/**
 * Long reads in windows of time (the transparency report, the overview), and a page's several
 * heavy statements (readsApart), the event loop given back between two (event-loop.ts).
 */
import type { Engine } from "../../db/engine.ts";
import { HOUR_MS } from "../core/clock.ts";
import { breathe } from "./event-loop.ts";

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

/**
 * A page's statements, each read whole (a pile-on's reporter summary: three aggregates of about
 * 10 to 50 ms each at 40,000 reports). On SQLite each holds the thread that serves requests:
 * they run one after another, the event loop given back between two, so that nothing waits for
 * all of them. PostgreSQL runs them in its own processes: sent together, one round trip.
 */
export async function readsApart<T extends readonly (() => PromiseLike<unknown>)[]>(
  engine: Engine,
  reads: T,
): Promise<{ -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> }> {
  type Answers = { -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> };
  if (engine !== "sqlite") return (await Promise.all(reads.map((read) => read()))) as Answers;
  const answers: unknown[] = [];
  for (const [i, read] of reads.entries()) {
    if (i > 0) await breathe();
    answers.push(await read());
  }
  return answers as Answers;
}
