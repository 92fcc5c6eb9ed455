/**
 * The ceilings of the benchmark: what this machine does with nothing of Flagstaff in the way.
 *
 *   bun scripts/bench/bare.ts json              Bun.serve answering a fixed JSON body
 *   bun scripts/bench/bare.ts insert <db>       Bun.serve inserting one row per request into
 *                                               bun:sqlite (WAL, synchronous=NORMAL, one
 *                                               transaction per row), then answering 201
 *   bun scripts/bench/bare.ts sqlite <db> <ms>  no HTTP: one-row transactions for <ms>, prints
 *                                               `BENCH_JSON {"rows":…,"ms":…}`
 *
 * The servers print `listening on <url>` (port 0: any free port).
 */
import { Database } from "bun:sqlite";

const [mode, dbPath, arg] = process.argv.slice(2);

function openTable(path: string): Database {
  const db = new Database(path, { create: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT NOT NULL, created_at INTEGER NOT NULL)");
  return db;
}

if (mode === "json") {
  const body = JSON.stringify({ report: { id: "01a2009f-0000-7000-8000-000000000000", status: "OPEN" } });
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(body, { headers: { "content-type": "application/json" } }) });
  console.log(`listening on ${server.url}`);
} else if (mode === "insert" && dbPath) {
  const db = openTable(dbPath);
  const insert = db.prepare("INSERT INTO t (body, created_at) VALUES (?, ?)");
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const text = await req.text();
      const { lastInsertRowid } = insert.run(text, Date.now());
      return new Response(JSON.stringify({ id: Number(lastInsertRowid) }), { status: 201, headers: { "content-type": "application/json" } });
    },
  });
  console.log(`listening on ${server.url}`);
} else if (mode === "sqlite" && dbPath) {
  const db = openTable(dbPath);
  const insert = db.prepare("INSERT INTO t (body, created_at) VALUES (?, ?)");
  const body = JSON.stringify({ subject: { type: "user", externalId: "u-1" }, reason: "spam" });
  const until = performance.now() + Number(arg ?? 3000);
  const started = performance.now();
  let rows = 0;
  // Autocommit: every run() is its own transaction, as each request would be.
  while (performance.now() < until) {
    for (let i = 0; i < 1000; i++) insert.run(body, Date.now());
    rows += 1000;
  }
  console.log(`BENCH_JSON ${JSON.stringify({ rows, ms: performance.now() - started })}`);
  db.close();
} else {
  console.error("usage: bun scripts/bench/bare.ts json | insert <db> | sqlite <db> <ms>");
  process.exit(2);
}
