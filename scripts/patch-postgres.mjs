#!/usr/bin/env node
/**
 * Mends a known crash of postgres.js 3.4.9 (porsager/postgres#1208, #1154, #1066; fixes proposed
 * in #1209, #1176, not released): when a connection closes (PostgreSQL restarted, a failover, a
 * backend terminated) between a small write being scheduled (`setImmediate(nextWrite)`) and that
 * write running, or when a query is sent on a reserved connection whose backend died,
 * `nextWrite` calls `socket.write` on a null socket. It throws from a timer, outside any query,
 * so nothing can catch it and the process dies. Flagstaff reserves a connection for every
 * transaction (src/db/store-pg.ts), so a PostgreSQL restart under load killed instances.
 *
 * And `closed()` cancels a pending write without forgetting it (`nextWriteTimer` stays set), so
 * the connection's next small write (the startup message of its reconnection) is never
 * scheduled: the connection hangs until its connect timeout, again and again; and after a
 * socket error it leaves the queries sent since the error waiting forever.
 *
 * The mends: with the socket gone, `nextWrite` drops the buffered bytes and fails the queries
 * waiting on them with CONNECTION_CLOSED, the error they get when the close comes first (as in
 * #1209); `closed()` forgets the cancelled write and its bytes, so the connection reconnects,
 * and fails whatever still waits for an answer.
 * Run by `npm install` / `npm ci` (postinstall); idempotent; it
 * stops the install when postgres.js changed so that the text it mends is not there (then check
 * whether the new version fixed it, and update or remove this script). test/pg-connection-loss.test.ts
 * is the test: a reserved connection whose backend is terminated fails its next query instead of
 * killing the process (and test/pg-restart.test.ts restarts PostgreSQL under load).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = join(root, "node_modules", "postgres");
const MARK = "flagstaff: porsager/postgres#1208";
const MENDS = [
  {
    before: `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`,
    after: `  function nextWrite(fn) {
    if (socket === null) { // ${MARK}: the connection closed; fail what waited on this write
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options, socket))
      return false
    }
    const x = socket.write(chunk, fn)`,
  },
  {
    before: `    incomings = null
    clearImmediate(nextWriteTimer)
    socket.removeListener('data', data)`,
    after: `    incomings = null
    clearImmediate(nextWriteTimer)
    nextWriteTimer = chunk = null // ${MARK}: forget the cancelled write, or the next one is never scheduled
    socket.removeListener('data', data)`,
  },
  {
    before: `    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))`,
    after: `    ;(query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket)) // ${MARK}: also after an error: what was sent since never gets an answer`,
  },
];

if (!existsSync(pkg)) {
  console.log("patch-postgres: postgres.js is not installed here; nothing to mend");
  process.exit(0);
}
const { version } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
let mended = 0;
for (const file of ["src/connection.js", "cjs/src/connection.js", "cf/src/connection.js"]) {
  const path = join(pkg, file);
  if (!existsSync(path)) continue;
  let text = readFileSync(path, "utf8");
  for (const { before, after } of MENDS) {
    if (text.includes(after)) continue;
    if (!text.includes(before)) {
      console.error(`patch-postgres: postgres.js ${version}: ${file} no longer has the code this mends; see scripts/patch-postgres.mjs`);
      process.exit(1);
    }
    text = text.replace(before, after);
    mended++;
  }
  writeFileSync(path, text);
}
console.log(`patch-postgres: postgres.js ${version}: ${mended ? `${mended} mend(s) made` : "already mended"}`);
