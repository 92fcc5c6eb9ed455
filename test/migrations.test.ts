/**
 * Migrations that never surprise: a landed migration is never edited (its hash and journal time
 * are held in landed-migrations.sha256), a database a newer Flagstaff migrated is refused before
 * anything is written, and the PostgreSQL foundation as commit a211d7f recorded it is repaired.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KNOWN_REPAIRS, migrationHash } from "../src/db/migrate.ts";
import { VERSION } from "../src/version.ts";
import { embeddedMigrations } from "../src/db/migrations-index.ts";
import { embeddedPgMigrations } from "../src/db/migrations-index-pg.ts";
import { checkLanded, currentMigrations, LIST_FILE, parseList, ROOT } from "../scripts/land-migrations.ts";
import { createTestDatabase, TEST_ENGINE } from "./helpers/pg.ts";
import { rawDb } from "./helpers/raw-db.ts";
import { runCli } from "./helpers/server.ts";
import { postgresClient } from "../src/db/store-pg.ts";

const landed = () => parseList(readFileSync(join(ROOT, LIST_FILE), "utf8"));

describe("landed migrations", () => {
  test("every migration of both engines is listed in landed-migrations.sha256, unchanged: same SHA-256, same journal time", () => {
    const { problems, unlisted } = checkLanded(landed(), currentMigrations());
    expect(problems).toEqual([]);
    // A new migration is listed by `bun scripts/land-migrations.ts` (it only ever adds lines).
    expect(unlisted.map((m) => m.path)).toEqual([]);
  });

  test("the list's hashes are the ones the migrator records", () => {
    const byPath = new Map(landed().map((l) => [l.path, l.sha256]));
    for (const m of embeddedMigrations) expect(byPath.get(`drizzle/${m.tag}.sql`)).toBe(migrationHash(m.sql));
    for (const m of embeddedPgMigrations) expect(byPath.get(`drizzle-pg/${m.tag}.sql`)).toBe(migrationHash(m.sql));
  });

  test("an edited migration, a moved journal time, a removed migration and a migration placed before a later time all fail the check", () => {
    const files = new Map<string, string>();
    const read = (p: string) => files.get(p) ?? readFileSync(join(ROOT, p), "utf8");
    const list = landed();

    // One character of a landed migration: what happened to drizzle-pg/0000_foundation.sql.
    const path = "drizzle-pg/0000_foundation.sql";
    files.set(path, read(path).replace('lower("name")', 'lower("name") COLLATE "C"'));
    expect(checkLanded(list, currentMigrations(read)).problems).toEqual([expect.stringContaining(`${path} was edited after it landed`)]);
    files.clear();

    const journalPath = "drizzle/meta/_journal.json";
    const journal = JSON.parse(read(journalPath)) as { entries: { when: number; tag: string }[] };
    journal.entries[3]!.when += 1;
    files.set(journalPath, JSON.stringify(journal));
    expect(checkLanded(list, currentMigrations(read)).problems).toEqual([expect.stringContaining("drizzle/0003_link_scans.sql: its journal time moved")]);

    journal.entries[3]!.when -= 1;
    const gone = journal.entries.splice(5, 1)[0]!;
    files.set(journalPath, JSON.stringify(journal));
    expect(checkLanded(list, currentMigrations(read)).problems).toEqual([expect.stringContaining(`drizzle/${gone.tag}.sql landed but is gone`)]);

    journal.entries.splice(5, 0, gone);
    const added = { ...journal.entries.at(-1)!, tag: "9999_new", when: journal.entries[2]!.when };
    journal.entries.push(added);
    files.set(journalPath, JSON.stringify(journal));
    files.set("drizzle/9999_new.sql", "SELECT 1;");
    const r = checkLanded(list, currentMigrations(read));
    expect(r.problems).toEqual([expect.stringContaining("drizzle/9999_new.sql: its journal time is not later than")]);
    expect(r.unlisted.map((m) => m.path)).toEqual(["drizzle/9999_new.sql"]);
  });
});

test("migrate --dry-run says what migrating would apply, and writes nothing (not even a new SQLite file)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "flagstaff-dry-run-"));
  try {
    const env = { FLAGSTAFF_DB: join(dir, "flagstaff.db"), FLAGSTAFF_LOG_LEVEL: "warn" };
    const migrations = TEST_ENGINE === "postgres" ? embeddedPgMigrations : embeddedMigrations;
    const fresh = await runCli(["migrate", "--dry-run"], env);
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toContain(`would apply ${migrations.length} migration(s)`);
    expect(fresh.stdout).toContain(`  ${migrations[0]!.tag}\n`);
    if (TEST_ENGINE === "sqlite") expect(existsSync(env.FLAGSTAFF_DB)).toBe(false);

    // A database as the previous release left it: its newest migration not applied yet.
    expect((await runCli(["migrate"], env)).code).toBe(0);
    const db = await rawDb(env.FLAGSTAFF_DB);
    await db.run(`DELETE FROM ${TEST_ENGINE === "postgres" ? `"drizzle"."__drizzle_migrations"` : "__drizzle_migrations"} WHERE created_at = ?`, migrations.at(-1)!.when);
    await db.close();
    const r = await runCli(["migrate", "--dry-run"], env);
    expect(r.stdout.split("\n")).toEqual([expect.stringMatching(new RegExp(`^flagstaff ${VERSION} would apply 1 migration\\(s\\) to .+; nothing was written$`)), `  ${migrations.at(-1)!.tag}`, ""]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe("a database a newer Flagstaff migrated", () => {
  const dir = mkdtempSync(join(tmpdir(), "flagstaff-newer-"));
  const env = { FLAGSTAFF_DB: join(dir, "flagstaff.db"), FLAGSTAFF_LOG_LEVEL: "warn" };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const migrations = TEST_ENGINE === "postgres" ? embeddedPgMigrations : embeddedMigrations;
  const table = TEST_ENGINE === "postgres" ? `"drizzle"."__drizzle_migrations"` : "__drizzle_migrations";

  /** What a test can see of the database: its file's bytes on SQLite, its tables and rows on PostgreSQL. */
  async function fingerprint(): Promise<string> {
    if (TEST_ENGINE === "sqlite") {
      expect(existsSync(`${env.FLAGSTAFF_DB}-wal`)).toBe(false);
      return createHash("sha256").update(readFileSync(env.FLAGSTAFF_DB)).digest("hex");
    }
    const db = await rawDb(env.FLAGSTAFF_DB, { readonly: true });
    try {
      const tables = await db.all<{ name: string }>("SELECT table_schema || '.' || table_name AS name FROM information_schema.tables WHERE table_schema IN ('public', 'drizzle') ORDER BY 1");
      const counts: string[] = [];
      for (const t of tables) counts.push(`${t.name}=${JSON.stringify(await db.all(`SELECT * FROM ${t.name.split(".").map((p) => `"${p}"`).join(".")} ORDER BY 1`))}`);
      return counts.join("\n");
    } finally {
      await db.close();
    }
  }

  test("is refused by every command that opens it (exit code 3, a message saying so), and nothing is written", async () => {
    expect((await runCli(["init", "--json"], env)).code).toBe(0);
    const newest = migrations.at(-1)!;
    // A newer release's migration: a table and its bookkeeping row, later than any this one knows.
    const db = await rawDb(env.FLAGSTAFF_DB);
    await db.run("CREATE TABLE from_the_future (id text PRIMARY KEY)");
    await db.run(`INSERT INTO ${table} (hash, created_at) VALUES (?, ?)`, "f".repeat(64), newest.when + 86_400_000);
    // As restored from a copy in another journal mode: opening it in WAL mode would rewrite its header.
    if (TEST_ENGINE === "sqlite") await db.get("PRAGMA journal_mode = DELETE");
    await db.close();
    const before = await fingerprint();

    for (const args of [["migrate"], ["migrate", "--dry-run"], ["serve"], ["init", "--json"], ["keys", "list", "--json"]]) {
      const r = await runCli(args, { ...env, PORT: "0", HOST: "127.0.0.1" });
      expect({ args, code: r.code }).toEqual({ args, code: 3 });
      expect(r.stderr).toContain("flagstaff: the database's schema is newer than this Flagstaff");
      expect(r.stderr).toContain(`this version knows ${migrations.length}, the newest ${newest.tag}`);
      expect(r.stderr).toContain("Nothing was written");
      expect(r.stdout).toBe("");
    }
    expect(await fingerprint()).toBe(before);
  });

  test("also with as many migrations as this version knows, when one of them is newer than its newest", async () => {
    const db = await rawDb(env.FLAGSTAFF_DB);
    await db.run("DROP TABLE from_the_future");
    await db.run(`DELETE FROM ${table} WHERE created_at = ?`, migrations.at(-1)!.when);
    await db.close();
    const r = await runCli(["migrate"], env);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`holds ${migrations.length} migrations, the newest dated ${new Date(migrations.at(-1)!.when + 86_400_000).toISOString()}`);
  });
});

test.skipIf(TEST_ENGINE !== "postgres")("a database made by commit a211d7f (its foundation since regenerated) is repaired and migrated to the end (PostgreSQL)", async () => {
  const repair = KNOWN_REPAIRS.find((r) => r.build === "a211d7f")!;
  const foundation = embeddedPgMigrations[0]!;
  // a211d7f's drizzle-pg/0000_foundation.sql: today's with its two indexes COLLATE "C" (the hash proves it).
  const then = foundation.sql
    .replace('("project_id",lower("name"))', '("project_id",lower("name") COLLATE "C")')
    .replace('("project_id",lower("username"))', '("project_id",lower("username") COLLATE "C")');
  expect(migrationHash(then)).toBe(repair.hash);

  const [old, fresh] = [await createTestDatabase(), await createTestDatabase()];
  const dir = mkdtempSync(join(tmpdir(), "flagstaff-a211d7f-"));
  try {
    // What a211d7f's migrator left: its foundation, and one bookkeeping row with its hash and time.
    const sql = postgresClient(old.url, 1);
    for (const statement of then.split("--> statement-breakpoint")) await sql.unsafe(statement);
    await sql.unsafe(`CREATE SCHEMA drizzle; CREATE TABLE drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
    await sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${repair.hash}, ${repair.when})`;
    await sql`INSERT INTO organizations (id, slug, name, plan, created_at) VALUES ('o-1', 'acme', 'Acme', 'free', 1)`;

    const plan = await runCli(["migrate", "--dry-run"], { FLAGSTAFF_DB: join(dir, "unused.db"), FLAGSTAFF_DATABASE_URL: old.url });
    expect(plan.stdout).toContain(`would apply ${embeddedPgMigrations.length - 1} migration(s)`);
    expect(plan.stdout).toContain("  repair: 0000_foundation as recorded by a211d7f");
    expect(plan.stdout).not.toContain("  0000_foundation\n");

    const r = await runCli(["migrate"], { FLAGSTAFF_DB: join(dir, "unused.db"), FLAGSTAFF_DATABASE_URL: old.url });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.stringContaining('"msg":"migration bookkeeping repaired"') });
    expect(r.stdout).toContain(`${embeddedPgMigrations.length - 1} migration(s) applied`);
    expect(r.stdout).toContain("repaired: 0000_foundation as recorded by a211d7f");

    // The same schema and bookkeeping as a database migrated from nothing.
    expect((await runCli(["migrate"], { FLAGSTAFF_DB: join(dir, "unused2.db"), FLAGSTAFF_DATABASE_URL: fresh.url })).code).toBe(0);
    const freshSql = postgresClient(fresh.url, 1);
    const schemaOf = (q: typeof sql) => q`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`;
    const bookkeepingOf = (q: typeof sql) => q`SELECT hash, created_at FROM drizzle.__drizzle_migrations ORDER BY created_at`;
    expect([...(await schemaOf(sql))]).toEqual([...(await schemaOf(freshSql))]);
    expect([...(await bookkeepingOf(sql))]).toEqual([...(await bookkeepingOf(freshSql))]);
    expect([...(await sql`SELECT slug FROM organizations`)]).toEqual([{ slug: "acme" }]);
    await sql.end();
    await freshSql.end();

    // Once repaired, a second start finds nothing left to do.
    const again = await runCli(["migrate"], { FLAGSTAFF_DB: join(dir, "unused.db"), FLAGSTAFF_DATABASE_URL: old.url });
    expect(again.stdout).toMatch(/^0 migration\(s\) applied/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await old.drop();
    await fresh.drop();
  }
});
