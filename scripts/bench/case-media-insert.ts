/**
 * `bun scripts/bench/case-media-insert.ts`: what writing a report's media item (a `case_media`
 * row) costs on SQLite, now and with the index on `case_id` that migration 0045 replaced, side
 * by side in one run. Printed as a markdown table.
 *
 *   bun scripts/bench/case-media-insert.ts [--rows 100000] [--cases 6400] [--inserts 24000] [--rounds 3]
 *
 * A fresh database migrated to the current schema, `--rows` media items already there spread over
 * `--cases` cases (the intake bench's reports make about 6,400), copied twice: one as it is, one
 * with the old index (`case_media_case_idx` on `case_id`) created again. Then, alternating the two
 * copies round after round, `--inserts` rows written as intake writes them: hashes only, a new
 * report id (UUIDv7: they grow with time), a case drawn at random, eight rows a transaction each
 * in its own savepoint (group commit, src/db/group-commit.ts), with SQLite's settings as the
 * server sets them. CPU per row of this thread, twice: with the WAL's checkpoints run on this
 * thread (`wal_autocheckpoint`, what the work costs in all) and without (what the serving thread
 * pays: the server checkpoints on a thread of its own). Foreign keys are off: no parent rows are
 * made, and their checks are the same in both copies.
 */
import type { Database } from "bun:sqlite";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openDatabase } from "../../src/db/client.ts";
import { migrateStore } from "../../src/db/migrate.ts";
import { openSqliteStore } from "../../src/db/store.ts";
import { fmtInt, markdownTable, randomHex } from "./lib.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    rows: { type: "string", default: "100000" },
    cases: { type: "string", default: "6400" },
    inserts: { type: "string", default: "24000" },
    rounds: { type: "string", default: "3" },
  },
});
const [rows, caseCount, inserts, rounds] = [args.rows, args.cases, args.inserts, args.rounds].map(Number) as [number, number, number, number];
if (![rows, caseCount, inserts, rounds].every((n) => Number.isInteger(n) && n > 0)) throw new Error("--rows, --cases, --inserts and --rounds are whole numbers above 0");

/** Rows a transaction: group commit's groups at the intake bench's 8 connections. */
const GROUP = 8;
const dir = mkdtempSync(join(tmpdir(), "flagstaff-case-media-"));
const cases = Array.from({ length: caseCount }, () => Bun.randomUUIDv7());
const COLUMNS = ["id", "org_id", "project_id", "case_id", "report_id", "attachment_id", "url", "keep", "sha256", "md5", "pdq", "pdq_quality", "vpdq", "frame_hashing", "status", "error", "created_at", "hashed_at", "matched_at"];

/** The file opened as the server opens its writer (openDatabase), foreign keys apart; without `checkpoints`, no automatic checkpoint. */
function open(path: string, checkpoints: boolean): Database {
  const db = openDatabase(path).$client;
  db.exec("PRAGMA foreign_keys = OFF");
  if (!checkpoints) db.exec("PRAGMA wal_autocheckpoint = 0");
  return db;
}

/** Writes `n` media items as intake does; answers this thread's CPU µs per row. */
function write(db: Database, n: number): number {
  const insert = db.prepare(`INSERT INTO case_media (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")})`);
  const now = Date.now() * 1000;
  const before = process.cpuUsage();
  for (let done = 0; done < n; done += GROUP) {
    db.exec("BEGIN IMMEDIATE");
    for (let k = 0; k < GROUP; k++) {
      db.exec("SAVEPOINT report");
      insert.run(Bun.randomUUIDv7(), "org", "project", cases[Math.floor(Math.random() * cases.length)]!, Bun.randomUUIDv7(), null, null, 0, randomHex(64), randomHex(32), randomHex(64), 90, null, null, "hashed", null, now, now, now);
      db.exec("RELEASE report");
    }
    db.exec("COMMIT");
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

try {
  const base = join(dir, "base.db");
  const store = openSqliteStore(base);
  await migrateStore(store);
  await store.close();
  const seeded = open(base, true);
  write(seeded, rows);
  seeded.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  seeded.close();
  const variants = [
    { name: "now (0045: by report_id)", path: join(dir, "now.db"), ddl: null },
    { name: "before 0045 (an index on case_id)", path: join(dir, "before.db"), ddl: "CREATE INDEX case_media_case_idx ON case_media (case_id)" },
  ];
  const figures = new Map<string, { all: number[]; serving: number[] }>();
  for (const v of variants) {
    copyFileSync(base, v.path);
    const db = open(v.path, true);
    if (v.ddl) db.exec(v.ddl);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
    figures.set(v.name, { all: [], serving: [] });
  }
  for (let round = 0; round < rounds; round++) {
    for (const v of round % 2 ? [...variants].reverse() : variants) {
      for (const checkpoints of [true, false]) {
        const db = open(v.path, checkpoints);
        const us = write(db, inserts);
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        db.close();
        figures.get(v.name)![checkpoints ? "all" : "serving"].push(us);
      }
      console.error(`round ${round + 1} ${v.name}: ${figures.get(v.name)!.all.at(-1)!.toFixed(1)} µs a row with checkpoints, ${figures.get(v.name)!.serving.at(-1)!.toFixed(1)} without`);
    }
  }
  const list = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(", ");
  console.log(`## A report's media item written (SQLite; ${fmtInt(rows)} rows there before, ${fmtInt(caseCount)} cases, ${fmtInt(inserts)} rows a round, ${GROUP} a transaction)\n`);
  console.log(
    markdownTable(
      ["case_media", "CPU µs a row, checkpoints on this thread (each round)", "without checkpoints: the serving thread's share (each round)"],
      variants.map((v) => [v.name, list(figures.get(v.name)!.all), list(figures.get(v.name)!.serving)]),
    ),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
