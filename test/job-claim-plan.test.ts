/**
 * A job claim costs the same at any backlog: the exact statement the workers run (claimStatement)
 * is planned, on the pass's engine, as its lane's range of the order index (kind, status,
 * priority, run_at) read in order, never a scan of the jobs and never a sort of the due ones,
 * with an empty queue, a small one and a backlog of 20,000 enrichment jobs of several
 * priorities beside finished ones (the plan issue 32 found: a multi-index OR then a temporary
 * B-tree over every due job, 35 ms a claim at 90,000 pending; issue 44 ranks a lane's jobs).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Store } from "../src/db/store.ts";
import { claimStatement } from "../src/domain/plumbing/jobs.ts";
import { openTestStore } from "./helpers/builders.ts";
import { TEST_ENGINE } from "./helpers/pg.ts";

let store: Store;
beforeAll(async () => {
  store = await openTestStore();
});
afterAll(() => store.close());

const NOW = Date.UTC(2026, 0, 5, 9);

/** The engine's plan of a statement, one line per node. */
async function planOf(query: { toSQL(): { sql: string; params: unknown[] } }): Promise<string[]> {
  const { sql, params } = query.toSQL();
  const client = (store.writer as unknown as { $client: unknown }).$client;
  if (TEST_ENGINE === "sqlite") {
    const db = client as { query(s: string): { all(...p: unknown[]): { detail: string }[] } };
    return db.query(`EXPLAIN QUERY PLAN ${sql}`).all(...params).map((r) => r.detail);
  }
  const pg = client as { unsafe(s: string, p: unknown[]): Promise<Record<string, string>[]> };
  return (await pg.unsafe(`EXPLAIN ${sql}`, params)).map((r) => r["QUERY PLAN"]!);
}

/** Adds `n` jobs of `kind` in `status`, in batches, of priorities 0 to 3 in turn. */
async function addJobs(kind: string, status: "pending" | "done" | "running", n: number, runAt = NOW - 60_000): Promise<void> {
  const client = (store.writer as unknown as { $client: unknown }).$client;
  for (let start = 0; start < n; start += 1000) {
    const rows = Array.from({ length: Math.min(1000, n - start) }, (_, i) => [
      `${kind}-${status}-${start + i}-${Math.random().toString(36).slice(2)}`,
      kind,
      status,
      runAt + i,
      (start + i) % 4,
    ]);
    const values = rows.map(() => "(?, NULL, ?, '{}', ?, 0, 10, ?, NULL, NULL, NULL, 0, 0, ?)").join(", ");
    const text = `INSERT INTO jobs (id, org_id, kind, payload, status, attempts, max_attempts, run_at, lease_until, leased_by, last_error, created_at, updated_at, priority) VALUES ${values}`;
    if (TEST_ENGINE === "sqlite") (client as { query(s: string): { run(...p: unknown[]): void } }).query(text).run(...rows.flat());
    else {
      let k = 0;
      await (client as { unsafe(s: string, p: unknown[]): Promise<unknown> }).unsafe(text.replace(/\?/g, () => `$${++k}`), rows.flat());
    }
  }
  // Fresh statistics, as the engines keep them on a live database (PostgreSQL's autovacuum, SQLite's optimize).
  const analyze = TEST_ENGINE === "sqlite" ? "ANALYZE" : "ANALYZE jobs";
  if (TEST_ENGINE === "sqlite") (client as { query(s: string): { run(): void } }).query(analyze).run();
  else await (client as { unsafe(s: string): Promise<unknown> }).unsafe(analyze);
}

const claim = (kind: string) => claimStatement({ store, db: store.writer }, { kind, workerId: "w-plan", leaseMs: 60_000, limit: 8, now: NOW });

/**
 * `large`: on PostgreSQL, a table of a hundred rows may be read whole, to find the eight rows to
 * update (a hash join, cheaper there than eight index look-ups) and even the lane's few due
 * rows, then sorted (cheaper at that size than the index); with a backlog it never is.
 */
function expectIndexRangeWithoutSort(plan: string[], large = false): void {
  const text = plan.join("\n");
  if (TEST_ENGINE === "sqlite") {
    // The due jobs: the lane's range of the order index (kind, status), read in the claim's order
    // (priority, run_at); the rows updated: found by primary key. Never a scan of jobs, never a
    // temporary B-tree, whatever the statistics (a young database has none).
    expect(text).toMatch(/SEARCH jobs USING (COVERING )?INDEX jobs_order_idx \(kind=\? AND status=\?\)/);
    expect(plan.some((d) => /^SCAN jobs\b/.test(d))).toBe(false);
    expect(text).not.toContain("TEMP B-TREE");
  } else if (large || /Index (Only )?Scan using jobs_order_idx on jobs/.test(text)) {
    expect(text).toMatch(/Index (Only )?Scan using jobs_order_idx on jobs/);
    if (large) expect(text).not.toMatch(/Seq Scan on jobs/);
    // The due jobs are never read whole: only through the order index.
    expect(text).not.toMatch(/Seq Scan on jobs jobs_1/);
    expect(text).not.toMatch(/\bSort\b/);
    expect(text).toContain("LockRows"); // FOR UPDATE SKIP LOCKED
  } else {
    expect(text).toContain("LockRows");
  }
}

test("the claim is a range of its index without a sort on an empty queue", async () => {
  expectIndexRangeWithoutSort(await planOf(claim("webhook.deliver")));
});

test("the claim is a range of its index without a sort with a few jobs", async () => {
  await addJobs("webhook.deliver", "pending", 50);
  await addJobs("report.enrich", "pending", 50);
  expectIndexRangeWithoutSort(await planOf(claim("webhook.deliver")));
  expectIndexRangeWithoutSort(await planOf(claim("report.enrich")));
});

test("the claim is a range of its index without a sort with 20,000 enrichment jobs of four priorities waiting and 10,000 done", async () => {
  await addJobs("report.enrich", "pending", 20_000);
  await addJobs("report.enrich", "done", 10_000);
  await addJobs("report.enrich", "running", 200, NOW - 300_000);
  expectIndexRangeWithoutSort(await planOf(claim("report.enrich")), true);
  expectIndexRangeWithoutSort(await planOf(claim("webhook.deliver")), true);
});
