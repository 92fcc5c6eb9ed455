/**
 * Flagstaff's mends of postgres.js (patches/postgres@3.4.9.diff, applied at install by
 * scripts/patch-postgres.mjs) cannot be left out silently: the installed driver carries them; a
 * copy without them is named by `--check` and by the start-up check, and mended again exactly;
 * and `flagstaff` refuses to start on PostgreSQL with such a driver, naming the fix.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DRIVER_MENDS, driverUnmended } from "../src/db/driver-mends.ts";
import { readHunks } from "../scripts/patch-postgres.mjs";
import { TEST_ENGINE } from "./helpers/pg.ts";
import { ROOT } from "./helpers/server.ts";

const INSTALLED = join(ROOT, "node_modules", "postgres");
const MENDED_FILES = ["src/connection.js", "src/index.js", "cjs/src/connection.js", "cjs/src/index.js", "cf/src/connection.js", "cf/src/index.js"];
const scratch = mkdtempSync(join(tmpdir(), "flagstaff-driver-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A copy of the installed driver with every hunk of the diff taken out again. */
function unmendedCopy(dir: string): string {
  cpSync(INSTALLED, dir, { recursive: true });
  const hunks = readHunks();
  for (const file of MENDED_FILES) {
    const path = join(dir, file);
    let text = readFileSync(path, "utf8");
    for (const hunk of hunks.filter((h) => file.endsWith(h.file))) text = text.replace(hunk.after, hunk.before);
    writeFileSync(path, text);
  }
  return dir;
}

function patchScript(...args: string[]) {
  const proc = Bun.spawnSync(["node", join(ROOT, "scripts", "patch-postgres.mjs"), ...args], { stdout: "pipe", stderr: "pipe" });
  return { code: proc.exitCode, out: proc.stdout.toString() + proc.stderr.toString() };
}

describe("the PostgreSQL driver's mends", () => {
  test("the installed driver carries them", () => {
    expect(driverUnmended()).toBeNull();
    const check = patchScript("--check");
    expect(check.out).toContain("is mended");
    expect(check.code).toBe(0);
  });

  test("a copy without them is named by --check and by the start-up check, then mended exactly", async () => {
    const copy = unmendedCopy(join(scratch, "postgres"));
    expect(readFileSync(join(copy, "src/connection.js"), "utf8")).not.toContain("porsager/postgres#1208");

    const check = patchScript("--check", "--dir", copy);
    expect(check.code).toBe(1);
    expect(check.out).toContain("lacks 12 of Flagstaff's mends");
    expect(check.out).toContain("node scripts/patch-postgres.mjs");

    const unmendedDriver = (await import(join(copy, "src", "index.js"))).default as object;
    expect(driverUnmended(unmendedDriver)).toContain("run `node scripts/patch-postgres.mjs`");

    const mend = patchScript("--dir", copy);
    expect(mend.out).toContain("6 file(s) mended");
    expect(mend.code).toBe(0);
    for (const file of MENDED_FILES) expect(readFileSync(join(copy, file), "utf8")).toBe(readFileSync(join(INSTALLED, file), "utf8"));
    expect(patchScript("--dir", copy).out).toContain("already mended");
    expect(patchScript("--check", "--dir", copy).code).toBe(0);
    expect(DRIVER_MENDS).toBe("postgres@3.4.9.diff");
  });

  // The start-up check, through the command line: a checkout whose node_modules holds an
  // unmended driver (every other package linked to the installed one).
  test.skipIf(TEST_ENGINE !== "postgres")("flagstaff refuses to start on PostgreSQL with an unmended driver (PostgreSQL)", () => {
    const checkout = join(scratch, "checkout");
    mkdirSync(join(checkout, "node_modules"), { recursive: true });
    for (const entry of ["src", "drizzle", "drizzle-pg", "package.json", "tsconfig.json"]) symlinkSync(join(ROOT, entry), join(checkout, entry));
    // src is a link: Bun resolves imports from a file's real path, so it is copied instead.
    rmSync(join(checkout, "src"));
    cpSync(join(ROOT, "src"), join(checkout, "src"), { recursive: true });
    for (const pkg of readdirSync(join(ROOT, "node_modules"))) {
      if (pkg !== "postgres") symlinkSync(join(ROOT, "node_modules", pkg), join(checkout, "node_modules", pkg));
    }
    unmendedCopy(join(checkout, "node_modules", "postgres"));
    const proc = Bun.spawnSync([process.execPath, join(checkout, "src", "cli.ts"), "migrate"], {
      cwd: checkout,
      env: { ...process.env, FLAGSTAFF_DATABASE_URL: "postgres://flagstaff@127.0.0.1:1/never-reached" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = proc.stdout.toString() + proc.stderr.toString();
    expect(out).toContain("lacks Flagstaff's mends");
    expect(out).toContain("node scripts/patch-postgres.mjs");
    expect(proc.exitCode).toBe(1);
  });
});
