/**
 * A landed migration is never edited: databases everywhere recorded its hash and its journal
 * time, and ran what it said then. `landed-migrations.sha256` holds, for every migration of both
 * engines, the SHA-256 of its file (what drizzle's bookkeeping records) and its journal time;
 * test/migrations.test.ts fails when a file or a time no longer matches its line, when a listed
 * migration is gone, and when a migration of the journals has no line yet.
 *
 *   bun scripts/land-migrations.ts           adds the lines of the migrations not listed yet
 *                                            (after `npm run db:generate` and writing the SQL)
 *   bun scripts/land-migrations.ts --check   only checks (exit 1 on a problem)
 *
 * It never changes a line already there: a change to a landed migration is a new migration (or,
 * for a mistake already made, a repair in src/db/migrate.ts, KNOWN_REPAIRS).
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "..");
export const LIST_FILE = "landed-migrations.sha256";
export const FOLDERS = ["drizzle", "drizzle-pg"] as const;

/** One migration as the journals and files hold it now, or as a line of the list recorded it. */
export interface MigrationFile {
  /** Path from the repository's root: drizzle/0000_foundation.sql. */
  path: string;
  sha256: string;
  when: number;
}

interface Journal {
  entries: { when: number; tag: string }[];
}

/** Every migration of both journals, in journal order, with its file's hash. */
export function currentMigrations(read: (path: string) => string = (p) => readFileSync(join(ROOT, p), "utf8")): MigrationFile[] {
  const out: MigrationFile[] = [];
  for (const folder of FOLDERS) {
    const journal = JSON.parse(read(`${folder}/meta/_journal.json`)) as Journal;
    for (const e of journal.entries) {
      const path = `${folder}/${e.tag}.sql`;
      out.push({ path, sha256: createHash("sha256").update(read(path)).digest("hex"), when: e.when });
    }
  }
  return out;
}

const HEADER = `# Every landed migration: the SHA-256 of its file (what drizzle's bookkeeping records), its
# journal time, its path. Lines are only ever added (bun scripts/land-migrations.ts); a test
# fails when a migration no longer matches its line. Never edit a landed migration: write a new one.
`;

export function parseList(text: string): MigrationFile[] {
  return text
    .split("\n")
    .filter((l) => l.trim() && !l.startsWith("#"))
    .map((l) => {
      const [sha256, when, path] = l.trim().split(/\s+/);
      if (!sha256 || !when || !path || !/^[0-9a-f]{64}$/.test(sha256) || !/^\d+$/.test(when)) throw new Error(`${LIST_FILE}: a malformed line: ${l}`);
      return { sha256, when: Number(when), path };
    });
}

export const formatLine = (m: MigrationFile): string => `${m.sha256}  ${m.when}  ${m.path}`;

/**
 * What is wrong between the list and the migrations as they are now: edits, changed journal
 * times, migrations gone, migrations not listed yet, journal times that do not increase (drizzle's
 * migrator runs a migration only when its time is later than the newest a database recorded, so
 * one placed before a later time would be skipped for good).
 */
export function checkLanded(listed: readonly MigrationFile[], current: readonly MigrationFile[]): { problems: string[]; unlisted: MigrationFile[] } {
  const problems: string[] = [];
  const now = new Map(current.map((m) => [m.path, m]));
  const seen = new Set<string>();
  for (const l of listed) {
    if (seen.has(l.path)) problems.push(`${l.path} is listed twice`);
    seen.add(l.path);
    const m = now.get(l.path);
    if (!m) {
      problems.push(`${l.path} landed but is gone (from its folder or its journal): a landed migration stays`);
      continue;
    }
    if (m.sha256 !== l.sha256) problems.push(`${l.path} was edited after it landed (SHA-256 ${m.sha256}, landed as ${l.sha256}): put the change in a new migration`);
    if (m.when !== l.when) problems.push(`${l.path}: its journal time moved from ${l.when} to ${m.when} (databases that ran it would run it again)`);
  }
  for (const folder of FOLDERS) {
    const times = current.filter((m) => m.path.startsWith(`${folder}/`));
    for (let i = 1; i < times.length; i++) {
      if (times[i]!.when <= times[i - 1]!.when) problems.push(`${times[i]!.path}: its journal time is not later than ${times[i - 1]!.path}'s: drizzle's migrator would skip it`);
    }
  }
  return { problems, unlisted: current.filter((m) => !seen.has(m.path)) };
}

if (import.meta.main) {
  const checkOnly = process.argv.includes("--check");
  const file = join(ROOT, LIST_FILE);
  const text = existsSync(file) ? readFileSync(file, "utf8") : HEADER;
  const { problems, unlisted } = checkLanded(parseList(text), currentMigrations());
  for (const p of problems) console.error(`land-migrations: ${p}`);
  if (problems.length) process.exit(1);
  if (checkOnly) {
    for (const m of unlisted) console.error(`land-migrations: ${m.path} is not listed yet`);
    process.exit(unlisted.length ? 1 : 0);
  }
  if (unlisted.length) {
    writeFileSync(file, (text.endsWith("\n") ? text : text + "\n") + unlisted.map(formatLine).join("\n") + "\n");
  }
  console.log(`${LIST_FILE}: ${unlisted.length} migration(s) added${unlisted.map((m) => `\n  ${m.path}`).join("")}`);
}
