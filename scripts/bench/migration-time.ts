/**
 * How long this release's migrations take on a large database, for CHANGELOG.md's "Upgrading":
 * a database as the previous release left it (migrated up to the migration before this release's
 * first, RELEASE_FIRST), seeded with many reports (scripts/bench/seed.ts: a third of them decided,
 * with cases that recorded no decision, the worst case for the case_decisions backfill), then
 * migrated by this code, each migration timed. On SQLite, and on PostgreSQL (a throwaway cluster,
 * the same rows copied by scripts/bench/copy-to-postgres.ts) unless --sqlite-only.
 *
 *   bun scripts/bench/migration-time.ts [--reports 200000] [--sqlite-only]
 *
 * Prints figures; asserts nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { initOrganization } from "../../src/commands/init.ts";
import { migrateStore, type AppliedMigration } from "../../src/db/migrate.ts";
import { embeddedMigrations } from "../../src/db/migrations-index.ts";
import { embeddedPgMigrations } from "../../src/db/migrations-index-pg.ts";
import { openPostgresStore } from "../../src/db/store-pg.ts";
import { openSqliteStore, type Store } from "../../src/db/store.ts";
import { systemClock } from "../../src/domain/core/clock.ts";
import { VERSION } from "../../src/version.ts";
import { newDatabase, startPgCluster } from "../pg-cluster.ts";
import { copySqliteToPostgres } from "./copy-to-postgres.ts";
import { seedReports } from "./seed.ts";

/** The first migration of this release (its tag without the number): everything before it, the previous release had. */
const RELEASE_FIRST = "_case_decisions";

const { values } = parseArgs({ options: { reports: { type: "string", default: "200000" }, "sqlite-only": { type: "boolean" } } });
const count = Number(values.reports);
const firstOf = (list: readonly { tag: string }[]) => {
  const i = list.findIndex((m) => m.tag.endsWith(RELEASE_FIRST));
  if (i < 0) throw new Error(`no migration ${RELEASE_FIRST}`);
  return i;
};

async function timed(store: Store): Promise<{ applied: AppliedMigration[]; ms: number }> {
  const applied: AppliedMigration[] = [];
  const started = performance.now();
  await migrateStore(store, { onApplied: (m) => applied.push(m) });
  return { applied, ms: performance.now() - started };
}

const show = (engine: string, r: { applied: AppliedMigration[]; ms: number }) => {
  console.log(`${engine}: ${r.applied.length} migration(s) in ${(r.ms / 1000).toFixed(2)} s`);
  for (const m of r.applied) console.log(`  ${m.tag}  ${(m.ms / 1000).toFixed(2)} s`);
};

const dir = mkdtempSync(join(tmpdir(), "flagstaff-migration-time-"));
const path = join(dir, "flagstaff.db");
try {
  console.log(`Flagstaff ${VERSION}: this release's migrations on ${count.toLocaleString("en")} reports`);
  const before = openSqliteStore(path);
  await migrateStore(before, { count: firstOf(embeddedMigrations) });
  await initOrganization({ store: before, db: before.db, clock: systemClock }, { org: "Bench" });
  await before.close();
  const seeded = seedReports(path, { count });
  const sqlite = openSqliteStore(path);
  // The seed leaves every case open: a case whose newest report is decided is closed here, in
  // that report's status, as a release that recorded no decision on cases left it.
  sqlite.writer.$client.run(`UPDATE cases SET is_open = 0, status = newest.status
    FROM (SELECT r.case_id, r.status FROM reports r WHERE r.created_us = (SELECT max(created_us) FROM reports n WHERE n.case_id = r.case_id)) AS newest
    WHERE newest.case_id = cases.id AND newest.status IN ('RESOLVED', 'DISMISSED', 'APPEALED', 'CLOSED')`);
  const [closed] = sqlite.writer.$client.query("SELECT count(*) AS n FROM cases WHERE is_open = 0").all() as { n: number }[];
  console.log(`seeded ${seeded.reports.toLocaleString("en")} reports, ${seeded.cases.toLocaleString("en")} cases (${closed!.n.toLocaleString("en")} closed, none with a recorded decision) in ${(seeded.ms / 1000).toFixed(1)} s`);

  let pg: { url: string; stop(): Promise<void> } | null = null;
  if (!values["sqlite-only"]) {
    // Copied before the SQLite side migrates: both start from the same rows and schema.
    pg = await startPgCluster();
    const url = await newDatabase(pg.url, "bench_migrate");
    const empty = openPostgresStore({ url, poolSize: 2 });
    await migrateStore(empty, { count: firstOf(embeddedPgMigrations) });
    await empty.close();
    await copySqliteToPostgres(path, url);
    pg = { url, stop: pg.stop };
  }

  show("SQLite", await timed(sqlite));
  const [left] = sqlite.writer.$client.query("SELECT count(*) AS n FROM cases WHERE is_open = 0 AND decision IS NULL").all() as { n: number }[];
  console.log(`  closed cases without a decision afterwards: ${left!.n}`);
  await sqlite.close();
  if (pg) {
    const store = openPostgresStore({ url: pg.url, poolSize: 2 });
    try {
      show("PostgreSQL", await timed(store));
    } finally {
      await store.close();
      await pg.stop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
