#!/usr/bin/env node
/**
 * Applies Flagstaff's mends of postgres.js (patches/postgres@3.4.9.diff, a unified diff to review)
 * to node_modules/postgres. Run by `npm install` / `npm ci` (postinstall); idempotent.
 *
 *   node scripts/patch-postgres.mjs            mend the installed driver
 *   node scripts/patch-postgres.mjs --check    exit 1 unless it is mended (scripts/build.ts runs this)
 *   node scripts/patch-postgres.mjs --dir D    act on the package folder D instead
 *
 * Why: a known crash of postgres.js 3.4.9 (porsager/postgres#1208, #1154, #1066; fixes proposed
 * in #1209, #1176, not released): when a connection closes (PostgreSQL restarted, a failover, a
 * backend terminated) between a small write being scheduled (`setImmediate(nextWrite)`) and that
 * write running, or when a query is sent on a reserved connection whose backend died,
 * `nextWrite` calls `socket.write` on a null socket. It throws from a timer, outside any query,
 * so nothing can catch it and the process dies. Flagstaff reserves a connection for every
 * transaction (src/db/store-pg.ts), so a PostgreSQL restart under load killed instances.
 * And `closed()` cancels a pending write without forgetting it (`nextWriteTimer` stays set), so
 * the connection's next small write (the startup message of its reconnection) is never
 * scheduled: the connection hangs until its connect timeout, again and again; and after a
 * socket error it leaves the queries sent since the error waiting forever.
 *
 * The mends: with the socket gone, `nextWrite` drops the buffered bytes and fails the queries
 * waiting on them with CONNECTION_CLOSED, the error they get when the close comes first (as in
 * #1209); `closed()` forgets the cancelled write and its bytes, so the connection reconnects,
 * and fails whatever still waits for an answer. A line in index.js marks the driver as mended
 * (`flagstaffMends`): `bun run build` and a start on PostgreSQL refuse a driver without it
 * (src/db/driver-mends.ts), so `npm install --ignore-scripts` cannot leave it out silently.
 *
 * Every hunk is checked before anything is written: when postgres.js changed so that the text a
 * hunk mends is not there, nothing is written and the install stops (then check whether the new
 * version fixed it, and update or remove the diff). test/driver-mends.test.ts unmends a copy and
 * mends it again; test/pg-connection-loss.test.ts and test/pg-restart.test.ts are the crashes.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const DIFF = join(root, "patches", "postgres@3.4.9.diff");
/** The package ships the same sources three times: ES modules, CommonJS, Cloudflare workers. */
const COPIES = ["", "cjs/", "cf/"];

/**
 * The diff's hunks as text replacements: `before` is a hunk's context and removed lines, `after`
 * its context and added lines (line numbers are not used: each copy has its own).
 * @returns {{ file: string, before: string, after: string }[]}
 */
export function readHunks(diffText = readFileSync(DIFF, "utf8")) {
  const hunks = [];
  let file = null;
  let hunk = null;
  for (const line of diffText.split("\n")) {
    if (line.startsWith("+++ b/")) {
      file = line.slice("+++ b/".length).trim();
      hunk = null;
    } else if (line.startsWith("--- ")) {
      hunk = null;
    } else if (line.startsWith("@@") && file) {
      hunk = { file, before: [], after: [] };
      hunks.push(hunk);
    } else if (hunk && (line.startsWith(" ") || line === "")) {
      hunk.before.push(line.slice(1));
      hunk.after.push(line.slice(1));
    } else if (hunk && line.startsWith("-")) {
      hunk.before.push(line.slice(1));
    } else if (hunk && line.startsWith("+")) {
      hunk.after.push(line.slice(1));
    }
  }
  return hunks.map((h) => {
    // A trailing empty line is the split's, not the file's.
    while (h.before.at(-1) === "" && h.after.at(-1) === "") {
      h.before.pop();
      h.after.pop();
    }
    return { file: h.file, before: h.before.join("\n"), after: h.after.join("\n") };
  });
}

/**
 * What mending `dir` needs: each copy of each mended file with its new text (null when mended
 * already), or the problems that stop it (text not found, or found more than once).
 */
export function planMends(dir, hunks = readHunks()) {
  const writes = [];
  const problems = [];
  let missing = 0;
  const files = [...new Set(hunks.map((h) => h.file))];
  for (const file of files) {
    for (const copy of COPIES) {
      const path = join(dir, copy + file);
      if (!existsSync(path)) continue;
      const original = readFileSync(path, "utf8");
      let text = original;
      for (const { before, after } of hunks.filter((h) => h.file === file)) {
        if (text.includes(after)) continue;
        missing++;
        const at = text.indexOf(before);
        if (at < 0 || text.indexOf(before, at + 1) >= 0) {
          problems.push(`${copy + file}: ${at < 0 ? "no longer has" : "has more than once"} the code a hunk mends`);
          continue;
        }
        text = text.slice(0, at) + after + text.slice(at + before.length);
      }
      if (text !== original) writes.push({ path, text });
    }
  }
  return { writes, problems, missing };
}

function main() {
  const args = process.argv.slice(2);
  const check = args.includes("--check");
  const dirAt = args.indexOf("--dir");
  const dir = dirAt >= 0 ? args[dirAt + 1] : join(root, "node_modules", "postgres");
  if (!existsSync(join(dir, "package.json"))) {
    console.log(`patch-postgres: postgres.js is not installed at ${dir}; nothing to mend`);
    process.exit(check ? 1 : 0);
  }
  const { version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const { writes, problems, missing } = planMends(dir);
  if (check) {
    if (missing === 0) {
      console.log(`patch-postgres: postgres.js ${version} is mended (patches/postgres@3.4.9.diff)`);
      process.exit(0);
    }
    console.error(
      `patch-postgres: postgres.js ${version} at ${dir} lacks ${missing} of Flagstaff's mends (patches/postgres@3.4.9.diff): ` +
        "run `node scripts/patch-postgres.mjs` (`npm install --ignore-scripts` skips it)",
    );
    process.exit(1);
  }
  if (problems.length > 0) {
    for (const problem of problems) console.error(`patch-postgres: postgres.js ${version}: ${problem}; see scripts/patch-postgres.mjs`);
    process.exit(1);
  }
  for (const { path, text } of writes) writeFileSync(path, text);
  console.log(`patch-postgres: postgres.js ${version}: ${writes.length ? `${writes.length} file(s) mended` : "already mended"}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
