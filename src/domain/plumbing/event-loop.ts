/**
 * Long work on the event loop, in slices (issue 40): a request that parses a large file or
 * writes thousands of rows runs on the one thread every other request needs, so it gives the
 * loop back once a slice has run `SLICE_MS`, and the requests waiting beside it (a health probe,
 * a report) get in. On SQLite the database calls are synchronous too: a write of thousands of
 * rows is as much a stall as parsing them.
 *
 * No imports: storage slices its long writes too (src/db/audit-append-sqlite.ts), and may import
 * only such modules of the domain (test/architecture.test.ts).
 *
 *   const slices = slicer();
 *   for (const row of rows) {
 *     work(row);
 *     if (slices.due()) await slices.breathe();
 *   }
 */
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
