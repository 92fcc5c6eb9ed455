/**
 * How long report intake waits while a project's index of banked media is built again (after a
 * change to its banks other than entries added: a bank's settings, an entry removed), while an
 * entry is added to the bank and the index follows (`--during add`), while a part of a list is
 * imported and the index follows (`--during import`), while the bank is exported (`--during
 * export`), or while it is deleted (`--during delete`), on the compiled binary and SQLite, where all run on the thread that serves requests:
 *
 *   bun scripts/bench/index-rebuild.ts [--binary dist/flagstaff ...] [--entries 1000000] [--rounds 2] [--during build|add|import|export|download|delete]
 *
 * For each binary (several: alternated, round after round), a database with one bank of
 * `--entries` entries (a third each SHA-256, MD5 and PDQ; written straight into the table, then
 * the banks' version moved, as an import leaves it); the server started; two clients filing plain
 * reports one after the other (5 ms apart) for 1 s, then one report with a media hash (no index
 * held: its media job builds it) and on until the job is done and 1 s more. Printed: the
 * clients' latency before the media report (the ceiling: the same server, nothing building) and
 * during and after the build, and how long the build took (the media job done). `--during add`:
 * the index built first (a media report, its job done), then an entry added and a media report
 * filed, timed to its media job done (the index following the addition). `--during import`: the
 * same with an import of IMPORT_LINES entries (a third of each signal type: a large list loaded
 * in parts) instead of one entry, timed from the import. `--during export`: the
 * bank's export (CSV) asked for instead of the media report, and timed to its answer (at most
 * MAX_INLINE_EXPORT_ENTRIES: a larger bank's export is a 400); `--during
 * download`: the same file through the route that streams it, timed until read whole. `--during
 * delete`: the bank deleted instead, timed until its entries and its row are gone from the
 * database (read beside the server; an older binary deletes them before it answers). Each run
 * also prints the server's peak resident memory (VmHWM) before and after.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { MAX_INLINE_EXPORT_ENTRIES } from "../../src/domain/views/media-bank.ts";
import { fmtInt, intakeClients, peakRssMb, markdownTable, pendingMediaJobs, quantile, randomHex, ROOT, run, startServer } from "./lib.ts";

const { values } = parseArgs({
  options: {
    binary: { type: "string", multiple: true, default: [join(ROOT, "dist", "flagstaff")] },
    entries: { type: "string", default: "1000000" },
    rounds: { type: "string", default: "2" },
    during: { type: "string", default: "build" },
  },
});
const during = values.during;
if (during !== "build" && during !== "add" && during !== "import" && during !== "export" && during !== "download" && during !== "delete") throw new Error("--during is build, add, import, export, download or delete");
if (during === "export" && Number(values.entries) > MAX_INLINE_EXPORT_ENTRIES) throw new Error(`--during export: GET …/export answers at most ${MAX_INLINE_EXPORT_ENTRIES} entries (a larger bank is a 400); --during download streams any`);
/** Entries in one part of a list imported (`--during import`): about 170 KB of CSV. */
const IMPORT_LINES = 2_500;
/** The index built first, then changed (`add`, `import`). */
const follows = during === "add" || during === "import";
const binaries = values.binary!.map((b) => resolve(b));
const entries = Number(values.entries);
const rounds = Number(values.rounds);
if (!Number.isInteger(entries) || entries < 3 || !Number.isInteger(rounds) || rounds < 1) throw new Error("--entries must be 3 or more and --rounds 1 or more");

interface Run {
  binary: string;
  before: number[];
  during: number[];
  buildMs: number;
  /** The server's peak resident memory (VmHWM, MB) before the build, addition, export or deletion, and at the end. */
  peakMb: { before: number; after: number };
}


async function measure(binary: string): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), "flagstaff-rebuild-"));
  try {
    const db = join(dir, "flagstaff.db");
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, FLAGSTAFF_DB: db, HOST: "127.0.0.1", PORT: "0", FLAGSTAFF_REPORT_RATE_LIMIT: "100000000", FLAGSTAFF_LOG_LEVEL: "warn" };
    const init = JSON.parse(await run([binary, "init", "--json"], env, dir)) as { secretKey: string; orgSlug: string; projectId: string };
    const headers = { authorization: `Bearer ${init.secretKey}`, "content-type": "application/json" };
    let server = await startServer([binary, "serve"], env, { cwd: dir });
    const api = `${server.url}/api/v1/organizations/${init.orgSlug}`;
    const created = await fetch(`${api}/projects/${init.projectId}/media-banks`, { method: "POST", headers, body: JSON.stringify({ name: "Shared list" }) });
    const bankId = ((await created.json()) as { bank: { id: string } }).bank.id;
    const first = await fetch(`${api}/media-banks/${bankId}/entries`, { method: "POST", headers, body: JSON.stringify({ signalType: "md5", value: randomHex(32) }) });
    if (first.status !== 201) throw new Error(`adding an entry answered ${first.status}: ${await first.text()}`);
    await server.stop();

    // The rest of the entries as the first one, straight into the table (an import of a million
    // entries through the API takes minutes); then the version moved, as every change moves it.
    const sqlite = new Database(db);
    const row = sqlite.query("SELECT * FROM media_bank_entries LIMIT 1").get() as Record<string, string | number | null>;
    const columns = Object.keys(row);
    const insert = sqlite.prepare(`INSERT INTO media_bank_entries (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
    const TYPES = [["sha256", 64], ["md5", 32], ["pdq", 64]] as const;
    sqlite.transaction(() => {
      for (let i = 1; i < entries; i++) {
        const [type, digits] = TYPES[i % 3]!;
        insert.run(...columns.map((c) => (c === "id" ? Bun.randomUUIDv7() : c === "signal_type" ? type : c === "value" ? randomHex(digits) : row[c]!)));
      }
    })();
    sqlite.run("UPDATE media_bank_versions SET version = version + 1");
    sqlite.close();

    server = await startServer([binary, "serve"], env, { cwd: dir });
    const report = (media: boolean) =>
      fetch(`${server.url}/sdk/flagstaff/v1/projects/${init.projectId}/reports`, {
        method: "POST",
        headers,
        body: JSON.stringify({ subject: { type: "user", externalId: `u-${crypto.randomUUID()}` }, reason: "spam", ...(media ? { media: [{ md5: randomHex(32) }] } : {}) }),
      });
    const mediaDone = async () => {
      await Bun.sleep(200);
      while ((await pendingMediaJobs(server.url)) > 0) await Bun.sleep(50);
    };
    if (follows) {
      // The index built first, before the clients start.
      const first = await report(true);
      if (first.status !== 201) throw new Error(`the first media report answered ${first.status}`);
      await mediaDone();
    }
    const intake = intakeClients({ url: server.url, projectId: init.projectId, key: init.secretKey });
    const t0 = intake.started;
    await Bun.sleep(1000);
    const mediaAt = performance.now() - t0;
    const peakBefore = peakRssMb(server.proc.pid);
    // The bank's routes on the server started again (`api` named the first one's port).
    const bankApi = `${server.url}/api/v1/organizations/${init.orgSlug}/media-banks/${bankId}`;
    if (during === "add") {
      const entry = await fetch(`${bankApi}/entries`, { method: "POST", headers, body: JSON.stringify({ signalType: "md5", value: randomHex(32) }) });
      if (entry.status !== 201) throw new Error(`adding an entry answered ${entry.status}`);
    }
    if (during === "import") {
      const lines = Array.from({ length: IMPORT_LINES }, (_, i) => `${TYPES[i % 3]![0]},${randomHex(TYPES[i % 3]![1])}`);
      const imported = await fetch(`${bankApi}/import`, { method: "POST", headers, body: JSON.stringify({ format: "csv", content: ["signal_type,signal_value", ...lines].join("\n"), origin: "bench" }) });
      const answer = (await imported.json()) as { added?: number; error?: string };
      if (imported.status !== 200 || answer.added !== IMPORT_LINES) throw new Error(`the import answered ${imported.status}: ${answer.error ?? `${answer.added} added`}`);
    }
    if (during === "delete") {
      const deleted = await fetch(bankApi, { method: "DELETE", headers });
      if (deleted.status !== 200) throw new Error(`the bank's deletion answered ${deleted.status}: ${await deleted.text()}`);
      const left = () => {
        const reader = new Database(db, { readonly: true });
        try {
          return (reader.query("SELECT (SELECT count(*) FROM media_bank_entries WHERE bank_id = ?1) + (SELECT count(*) FROM media_banks WHERE id = ?1) AS n").get(bankId) as { n: number }).n;
        } finally {
          reader.close();
        }
      };
      while (left() > 0) await Bun.sleep(50);
    } else if (during === "download") {
      // The file streamed (…/export/download), read as it comes, its lines counted.
      const res = await fetch(`${bankApi}/export/download?format=csv`, { headers });
      if (res.status !== 200 || !res.body) throw new Error(`the download answered ${res.status}: ${await res.text()}`);
      let lines = 0;
      const reader = res.body.getReader();
      // Counted natively (indexOf): a loop over every byte here would hold this process, whose clients are the ones timed.
      for (let next = await reader.read(); !next.done; next = await reader.read()) for (let at = next.value.indexOf(10); at >= 0; at = next.value.indexOf(10, at + 1)) lines++;
      if (lines !== entries + 1) throw new Error(`the download held ${lines} lines, not ${entries + 1}`);
    } else if (during !== "export") {
      const sent = await report(true);
      if (sent.status !== 201) throw new Error(`the media report answered ${sent.status}`);
      await mediaDone();
    } else {
      const exported = await fetch(`${bankApi}/export?format=csv`, { headers });
      const body = (await exported.json()) as { entries?: number; error?: string };
      if (exported.status !== 200 || body.entries !== entries) throw new Error(`the export answered ${exported.status}: ${body.error ?? `${body.entries} entries`}`);
    }
    const buildMs = performance.now() - t0 - mediaAt;
    const peakMb = { before: peakBefore, after: peakRssMb(server.proc.pid) };
    await Bun.sleep(1000);
    await intake.stop();
    await server.stop();
    const { latencies } = intake;
    return { binary, before: latencies.filter((l) => l.at < mediaAt).map((l) => l.ms), during: latencies.filter((l) => l.at >= mediaAt).map((l) => l.ms), buildMs, peakMb };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const runs: Run[] = [];
for (let round = 0; round < rounds; round++) {
  for (const binary of round % 2 ? [...binaries].reverse() : binaries) {
    const r = await measure(binary);
    runs.push(r);
    console.error(`round ${round + 1} ${binary}: during the ${during} max ${quantile(r.during, 1).toFixed(1)} ms, the ${during} ${fmtInt(r.buildMs)} ms`);
  }
}
const what = { build: "a project's index of banked entries is built again", add: "an entry is added and the project's index follows", import: `a part of a list (${fmtInt(IMPORT_LINES)} entries) is imported and the project's index follows`, export: "a bank is exported", download: "a bank's file is downloaded as it is written", delete: "a bank is deleted" }[during];
console.log(`## Intake while ${what} (${fmtInt(entries)} entries; SQLite, the compiled binary)\n`);
console.log(
  markdownTable(
    ["binary", "round", "intake latency before (p50 / max)", `during and after the ${during} (p50 / p99 / max)`, { build: "build (the media job done)", add: "the index followed (the media job done)", import: "imported and followed (the media job done)", export: "export (answered)", download: "download (read whole)", delete: "entries gone" }[during], "server's peak memory (VmHWM) before / after"],
    runs.map((r, k) => [r.binary, String(Math.floor(k / binaries.length) + 1), `${quantile(r.before, 0.5).toFixed(1)} / ${quantile(r.before, 1).toFixed(1)} ms`, `${quantile(r.during, 0.5).toFixed(1)} / ${quantile(r.during, 0.99).toFixed(1)} / ${quantile(r.during, 1).toFixed(1)} ms`, `${fmtInt(r.buildMs)} ms`, `${fmtInt(r.peakMb.before)} / ${fmtInt(r.peakMb.after)} MB`]),
  ),
);
