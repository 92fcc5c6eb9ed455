/**
 * How long another project's report intake waits while a large project is deleted, on the
 * compiled binary and SQLite, where the deletion's writes and intake share one writer:
 *
 *   bun scripts/bench/project-delete.ts [--binary dist/flagstaff ...] [--reports 100000] [--rounds 2]
 *
 * For each binary (several: alternated, round after round), a database with the demo project and
 * a second one filled with `--reports` reports through the API (wrk, report-media.lua: each report
 * with its own case, subject and media item), made once per binary and copied for each round.
 * The server started on the copy; two clients filing plain reports into the demo project one
 * after the other (5 ms apart) for 1 s; then the second project deleted (DELETE, its answer
 * timed), until its row is gone (the deletion done), and 1 s more. Printed: the clients' latency
 * before the deletion (the ceiling: the same server, nothing deleted) and from the DELETE on, the
 * DELETE's answer, and the time to the deletion done.
 */
import { Database } from "bun:sqlite";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureWrk, fmtInt, intakeClients, markdownTable, quantile, ROOT, run, startServer, wrk } from "./lib.ts";

const { values } = parseArgs({
  options: {
    binary: { type: "string", multiple: true, default: [join(ROOT, "dist", "flagstaff")] },
    reports: { type: "string", default: "100000" },
    rounds: { type: "string", default: "2" },
  },
});
const binaries = values.binary!.map((b) => resolve(b));
const reports = Number(values.reports);
const rounds = Number(values.rounds);
if (!Number.isInteger(reports) || reports < 1 || !Number.isInteger(rounds) || rounds < 1) throw new Error("--reports and --rounds must be 1 or more");
const wrkPath = await ensureWrk((s) => console.error(s));

interface Filled {
  dir: string;
  init: { secretKey: string; orgSlug: string; projectId: string };
  doomedId: string;
  reports: number;
}

const envOf = (dir: string) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, FLAGSTAFF_DB: join(dir, "flagstaff.db"), HOST: "127.0.0.1", PORT: "0", FLAGSTAFF_REPORT_RATE_LIMIT: "100000000", FLAGSTAFF_LOG_LEVEL: "warn" });

const countOf = (dir: string, sql: string, ...params: string[]): number => {
  const db = new Database(join(dir, "flagstaff.db"), { readonly: true });
  try {
    return (db.query(sql).get(...params) as { n: number }).n;
  } finally {
    db.close();
  }
};

/** The demo project and a second one with `reports` reports (each with its case, subject and media item). */
async function fill(binary: string): Promise<Filled> {
  const dir = mkdtempSync(join(tmpdir(), "flagstaff-project-delete-"));
  const env = envOf(dir);
  const init = JSON.parse(await run([binary, "init", "--json"], env, dir)) as Filled["init"];
  const headers = { authorization: `Bearer ${init.secretKey}`, "content-type": "application/json" };
  const server = await startServer([binary, "serve"], env, { cwd: dir });
  const api = `${server.url}/api/v1/organizations/${init.orgSlug}`;
  const project = (await (await fetch(`${api}/projects`, { method: "POST", headers, body: JSON.stringify({ name: "Doomed" }) })).json()) as { project: { id: string } };
  const key = (await (await fetch(`${api}/api-keys`, { method: "POST", headers, body: JSON.stringify({ projectId: project.project.id, kind: "secret", name: "bench" }) })).json()) as { key: string };
  let filed = 0;
  while (filed < reports) {
    await wrk(wrkPath, { url: server.url, connections: 8, seconds: Math.max(1, Math.min(10, Math.ceil((reports - filed) / 1500))), script: "report-media.lua", env: { KEY: key.key, PROJECT: project.project.id } });
    filed = countOf(dir, "SELECT count(*) AS n FROM reports WHERE project_id = ?", project.project.id);
  }
  await server.stop();
  return { dir, init, doomedId: project.project.id, reports: filed };
}

interface Run {
  binary: string;
  reports: number;
  before: number[];
  during: number[];
  answerMs: number;
  doneMs: number;
}

async function measure(binary: string, filled: Filled): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), "flagstaff-project-delete-run-"));
  try {
    cpSync(filled.dir, dir, { recursive: true });
    const { init, doomedId } = filled;
    const headers = { authorization: `Bearer ${init.secretKey}`, "content-type": "application/json" };
    const server = await startServer([binary, "serve"], envOf(dir), { cwd: dir });
    const intake = intakeClients({ url: server.url, projectId: init.projectId, key: init.secretKey });
    const t0 = intake.started;
    await Bun.sleep(1000);
    const deleteAt = performance.now() - t0;
    const deleted = await fetch(`${server.url}/api/v1/organizations/${init.orgSlug}/projects/${doomedId}`, { method: "DELETE", headers });
    if (deleted.status !== 200) throw new Error(`the DELETE answered ${deleted.status}: ${await deleted.text()}`);
    const answerMs = performance.now() - t0 - deleteAt;
    while (countOf(dir, "SELECT count(*) AS n FROM projects WHERE id = ?", doomedId) > 0) await Bun.sleep(50);
    const doneMs = performance.now() - t0 - deleteAt;
    if (countOf(dir, "SELECT count(*) AS n FROM reports WHERE project_id = ?", doomedId) !== 0) throw new Error("the deleted project's reports are still there");
    await Bun.sleep(1000);
    await intake.stop();
    await server.stop();
    const { latencies } = intake;
    return { binary, reports: filled.reports, before: latencies.filter((l) => l.at < deleteAt).map((l) => l.ms), during: latencies.filter((l) => l.at >= deleteAt).map((l) => l.ms), answerMs, doneMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const filled = new Map<string, Filled>();
for (const binary of binaries) filled.set(binary, await fill(binary));
const runs: Run[] = [];
try {
  for (let round = 0; round < rounds; round++) {
    for (const binary of round % 2 ? [...binaries].reverse() : binaries) {
      const r = await measure(binary, filled.get(binary)!);
      runs.push(r);
      console.error(`round ${round + 1} ${binary}: during the deletion max ${quantile(r.during, 1).toFixed(1)} ms, answered in ${fmtInt(r.answerMs)} ms, done in ${fmtInt(r.doneMs)} ms`);
    }
  }
} finally {
  for (const f of filled.values()) rmSync(f.dir, { recursive: true, force: true });
}
console.log(`## Another project's intake while a project is deleted (SQLite, the compiled binary)\n`);
console.log(
  markdownTable(
    ["binary", "round", "reports deleted", "intake latency before (p50 / max)", "from the DELETE on (p50 / p99 / max)", "DELETE answered", "deletion done"],
    runs.map((r, k) => [
      r.binary,
      String(Math.floor(k / binaries.length) + 1),
      fmtInt(r.reports),
      `${quantile(r.before, 0.5).toFixed(1)} / ${quantile(r.before, 1).toFixed(1)} ms`,
      `${quantile(r.during, 0.5).toFixed(1)} / ${quantile(r.during, 0.99).toFixed(1)} / ${quantile(r.during, 1).toFixed(1)} ms`,
      `${fmtInt(r.answerMs)} ms`,
      `${fmtInt(r.doneMs)} ms`,
    ]),
  ),
);
