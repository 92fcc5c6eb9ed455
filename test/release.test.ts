/**
 * What an operator reads of a release: its version (`flagstaff --version`, /metrics, the
 * dashboard's session), CHANGELOG.md with an "Upgrading" section naming every migration, and the
 * migrations a start applied, each with its duration, in the log.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { embeddedMigrations } from "../src/db/migrations-index.ts";
import { embeddedPgMigrations } from "../src/db/migrations-index-pg.ts";
import { VERSION } from "../src/version.ts";
import { demoAdmin } from "./helpers/dashboard.ts";
import { databaseForPath, TEST_ENGINE } from "./helpers/pg.ts";
import { ROOT, runCli, TestServer, type InitResult } from "./helpers/server.ts";

const dir = mkdtempSync(join(tmpdir(), "flagstaff-release-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the version is a semantic version, the one in package.json", () => {
  expect(VERSION).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
  expect(VERSION).toBe(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version);
});

test("flagstaff --version prints it and the newest migration of each engine, without opening a database", async () => {
  const db = join(dir, "never.db");
  const r = await runCli(["--version"], { FLAGSTAFF_DB: db });
  expect(r.code).toBe(0);
  expect(r.stdout).toBe(
    `flagstaff ${VERSION}\nschema: SQLite ${embeddedMigrations.length} migrations, the newest ${embeddedMigrations.at(-1)!.tag}; ` +
      `PostgreSQL ${embeddedPgMigrations.length} migrations, the newest ${embeddedPgMigrations.at(-1)!.tag}\n`,
  );
  expect(existsSync(db)).toBe(false);
});

test("CHANGELOG.md has a section for this version with an Upgrading part, and names every migration in one", () => {
  const changelog = readFileSync(join(ROOT, "CHANGELOG.md"), "utf8");
  const sections = changelog.split(/^## /m).slice(1);
  const mine = sections.find((s) => s.startsWith(`[${VERSION}]`));
  expect(mine).toBeDefined();
  expect(mine!.split("\n")[0]).toMatch(new RegExp(`^\\[${VERSION.replaceAll(".", "\\.")}\\] - \\d{4}-\\d{2}-\\d{2}$`));
  expect(mine).toContain("### Upgrading");
  // A migration is described where it is released (or under [Unreleased] until then).
  const upgrading = sections.map((s) => s.split(/^### Upgrading$/m)[1]?.split(/^### /m)[0] ?? "").join("\n");
  for (const m of [...embeddedMigrations, ...embeddedPgMigrations]) expect({ tag: m.tag, named: upgrading.includes(m.tag) }).toEqual({ tag: m.tag, named: true });
});

test("serve logs each migration it applied with its duration, and the total; /metrics and the dashboard say the version", async () => {
  const server = new TestServer(dir, { FLAGSTAFF_DB: join(dir, "served.db"), PORT: "0", HOST: "127.0.0.1", FLAGSTAFF_LOG_LEVEL: "info" }, {} as InitResult);
  await server.start();
  try {
    const metrics = await fetch(`${server.url}/metrics`).then((r) => r.text());
    expect(metrics).toContain(`flagstaff_build_info{version="${VERSION}"} 1`);
    const banner = /Organization\s+(\S+)[\s\S]*Dashboard\s+\S+\s+\((\S+) \/ (\S+)\)/.exec(server.output);
    expect(banner).not.toBeNull();
    const withAdmin = new TestServer(dir, server.env, { adminEmail: banner![2]!, adminPassword: banner![3]! } as InitResult);
    withAdmin.url = server.url;
    expect(await (await demoAdmin(withAdmin)).trpc.auth.me.query()).toMatchObject({ version: VERSION });
  } finally {
    await server.stop();
    if (TEST_ENGINE === "postgres") await (await databaseForPath(server.dbPath)).drop();
  }
  const lines = server.output.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
  const applied = lines.filter((l) => l.msg === "migration applied");
  const list = TEST_ENGINE === "postgres" ? embeddedPgMigrations : embeddedMigrations;
  expect(applied.map((l) => l.migration)).toEqual(list.map((m) => m.tag));
  for (const l of applied) expect(l.ms).toBeNumber();
  expect(lines.find((l) => l.msg === "migrations applied")).toMatchObject({ engine: TEST_ENGINE, count: list.length, newest: list.at(-1)!.tag });
  expect(lines.find((l) => l.msg === "listening")).toMatchObject({ version: VERSION });
});
