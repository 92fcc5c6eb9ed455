/**
 * How long the dashboard's overview page holds the server: its two calls (tRPC
 * `dashboard.overview` for 14 days, `queues.serviceLevels`), the queue page's first page
 * (`dashboard.queue`, 50 cases) and the transparency report of the last 30 days
 * (`transparency.report`, an admin's), on a database of `--reports` reports,
 * and how long a `GET /healthz` sent every 2 ms meanwhile waited at worst. On SQLite the queries
 * run on the thread that serves every request, so what they cost, every other request waits.
 *
 *   bun scripts/bench/dashboard-overview.ts [--binary dist/flagstaff ...] [--reports 300000] [--calls 6] [--rounds 2] [--engine sqlite|postgres] [--one-project]
 *
 * One database (made by the first binary's `flagstaff init --json`, seeded straight through
 * bun:sqlite by seed.ts: reports over the last 30 days, most of them open; with `--engine
 * postgres`, copied into a database of a throwaway cluster, scripts/bench/copy-to-postgres.ts,
 * whose queries run in PostgreSQL's processes, not on the serving thread), then each binary in
 * turn, round after round (alternated: the machine's noise falls on each alike), `serve` on it
 * and the demo admin signed in; each call `--calls` times. Printed: each binary's medians and
 * worst, the first call (cold) apart, and whether every binary answered the same figures (the
 * overview's series and counts; each queue's open cases and oldest case; the queue's first page;
 * the transparency report's sections). The overview is asked for twice: for the organization, and
 * with the demo project picked, whose reports are then read (the organization is given a second,
 * empty project; with `--one-project` it has none, and picking its only project is picking the
 * whole organization).
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { newDatabase, startPgCluster, type PgCluster } from "../pg-cluster.ts";
import { copySqliteToPostgres } from "./copy-to-postgres.ts";
import { fmtInt, markdownTable, quantile, ROOT, run, startServer } from "./lib.ts";
import { seedReports } from "./seed.ts";

const { values } = parseArgs({
  options: {
    binary: { type: "string", multiple: true, default: [join(ROOT, "dist", "flagstaff")] },
    reports: { type: "string", default: "300000" },
    calls: { type: "string", default: "6" },
    rounds: { type: "string", default: "2" },
    engine: { type: "string", default: "sqlite" },
    "one-project": { type: "boolean", default: false },
  },
});
if (values.engine !== "sqlite" && values.engine !== "postgres") throw new Error("--engine is sqlite or postgres");
const binaries = values.binary!.map((b) => resolve(b));
const reports = Number(values.reports);
const calls = Number(values.calls);
const rounds = Number(values.rounds);
if (!Number.isInteger(reports) || reports < 1 || !Number.isInteger(calls) || calls < 2 || !Number.isInteger(rounds) || rounds < 1) throw new Error("--reports ≥ 1, --calls ≥ 2, --rounds ≥ 1");

interface Timing {
  ms: number;
  /** The longest a /healthz sent meanwhile waited. */
  othersWaitedMs: number;
}
/** What `flagstaff init --json` answered: the demo organization and its project. */
interface Demo {
  orgSlug: string;
  projectId: string;
}
const PROCEDURES = {
  overview: { path: "dashboard.overview", input: () => ({ days: 14 }) },
  // The same page with its project picked: the seeded reports are all the demo project's (and the
  // organization has a second, empty one unless --one-project).
  overviewOfProject: { path: "dashboard.overview", label: "dashboard.overview of the project", input: (d: Demo) => ({ days: 14, projectId: d.projectId }) },
  serviceLevels: { path: "queues.serviceLevels", input: (d: Demo) => ({ orgSlug: d.orgSlug, days: 14 }) },
  queue: { path: "dashboard.queue", input: () => ({ limit: 50 }) },
  transparency: { path: "transparency.report", input: (d: Demo) => ({ orgSlug: d.orgSlug }) },
} as const;
type Procedure = keyof typeof PROCEDURES;
const procedureLabel = (p: Procedure): string => {
  const spec: { path: string; label?: string } = PROCEDURES[p];
  return spec.label ?? spec.path;
};

/** A second project of the demo organization, with nothing in it (a copy of the demo project's row). */
function addEmptyProject(file: string): void {
  const db = new Database(file);
  try {
    const columns = (db.query("SELECT name FROM pragma_table_info('projects')").all() as { name: string }[]).map((c) => c.name).filter((c) => c !== "id" && c !== "name");
    const list = columns.map((c) => `"${c}"`).join(", ");
    db.run(`INSERT INTO projects (id, name, ${list}) SELECT ?, 'Second (empty)', ${list} FROM projects ORDER BY created_at LIMIT 1`, [crypto.randomUUID()]);
  } finally {
    db.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), "flagstaff-overview-"));
let cluster: PgCluster | null = null;
try {
  const db = join(dir, "flagstaff.db");
  const base = { PATH: "/usr/bin:/bin", HOME: dir, FLAGSTAFF_DB: db };
  const init = JSON.parse(await run([binaries[0]!, "init", "--json"], base, dir)) as Demo & { adminEmail: string; adminPassword: string };
  const seeded = await seedReports(db, { count: reports });
  console.error(`seeded ${fmtInt(seeded.reports)} reports, ${fmtInt(seeded.cases)} cases in ${Math.round(seeded.ms / 1000)} s`);
  if (!values["one-project"]) addEmptyProject(db);
  let serveEnv: Record<string, string> = base;
  if (values.engine === "postgres") {
    cluster = await startPgCluster();
    const url = await newDatabase(cluster.url, "overview");
    serveEnv = { PATH: base.PATH, HOME: dir, FLAGSTAFF_DATABASE_URL: url };
    await run([binaries[0]!, "migrate"], serveEnv, dir);
    const copy = await copySqliteToPostgres(db, url);
    console.error(`copied ${fmtInt(copy.rows)} rows into PostgreSQL in ${Math.round(copy.copyMs / 1000)} s`);
  }

  const timings = new Map<string, Record<Procedure, Timing[]>>(binaries.map((b) => [b, { overview: [], overviewOfProject: [], serviceLevels: [], queue: [], transparency: [] }]));
  const answers = new Map<string, Set<string>>(binaries.map((b) => [b, new Set()]));
  for (let round = 0; round < rounds; round++) {
    for (const binary of round % 2 ? [...binaries].reverse() : binaries) {
      const server = await startServer([binary, "serve"], { ...serveEnv, PORT: "0", HOST: "127.0.0.1", FLAGSTAFF_LOG_LEVEL: "warn" }, { logFile: join(dir, "server.log"), cwd: dir });
      try {
        const login = await fetch(`${server.url}/trpc/auth.login`, { method: "POST", headers: { "content-type": "application/json", origin: server.url }, body: JSON.stringify({ email: init.adminEmail, password: init.adminPassword }) });
        const cookie = /flagstaff_session=[^;]+/.exec(login.headers.get("set-cookie") ?? "")?.[0];
        if (login.status !== 200 || !cookie) throw new Error(`sign-in answered ${login.status}`);
        for (let i = 0; i < calls; i++) {
          for (const name of Object.keys(PROCEDURES) as Procedure[]) {
            const { path, input } = PROCEDURES[name];
            let done = false;
            let othersWaitedMs = 0;
            const others = (async () => {
              while (!done) {
                const t = performance.now();
                await fetch(`${server.url}/healthz`);
                othersWaitedMs = Math.max(othersWaitedMs, performance.now() - t);
                await Bun.sleep(2);
              }
            })();
            const started = performance.now();
            const res = await fetch(`${server.url}/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input(init)))}`, { headers: { cookie } });
            const body = await res.text();
            const ms = performance.now() - started;
            done = true;
            await others;
            if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${body.slice(0, 300)}`);
            // The first call of a server is cold (its statements prepared, its pages read): kept apart.
            if (i > 0) timings.get(binary)![name].push({ ms, othersWaitedMs });
            const data = (JSON.parse(body) as { result: { data: Record<string, unknown> } }).result.data;
            if (name === "overview" || name === "overviewOfProject") answers.get(binary)!.add(JSON.stringify([name, data.bySeverity, data.byCategory, data.figures]));
            else if (name === "serviceLevels") answers.get(binary)!.add(JSON.stringify(["serviceLevels", (data.queues as { openCases: number; oldestCase: unknown }[]).map((q) => [q.openCases, q.oldestCase])]));
            else if (name === "queue") answers.get(binary)!.add(JSON.stringify(["queue", data.counts, (data.items as { id: string }[]).map((c) => c.id), data.nextCursor]));
            else answers.get(binary)!.add(JSON.stringify(["transparency", data.period, data.reports, data.decisions, data.statements, data.appeals]));
          }
        }
      } finally {
        await server.stop();
      }
    }
  }

  const ms = (xs: number[]) => `${Math.round(quantile(xs, 0.5))} (${Math.round(Math.max(...xs))})`;
  const engine = values.engine === "postgres" ? "PostgreSQL, a throwaway cluster on this machine" : "SQLite";
  console.log(`## The overview page's calls, the queue's first page and the transparency report on ${fmtInt(seeded.reports)} reports (${engine}, ${values["one-project"] ? "the organization's only project" : "the organization with a second, empty project"}, the compiled binary; ${rounds} rounds alternated, ${calls - 1} warm calls each)\n`);
  console.log(
    markdownTable(
      ["binary", ...(Object.keys(PROCEDURES) as Procedure[]).flatMap((p) => [`${procedureLabel(p)}: ms, median (worst)`, "others waited meanwhile"])],
      binaries.map((b) => {
        const t = timings.get(b)!;
        return [b, ...(Object.keys(PROCEDURES) as Procedure[]).flatMap((p) => [ms(t[p].map((x) => x.ms)), ms(t[p].map((x) => x.othersWaitedMs))])];
      }),
    ),
  );
  const distinct = new Set([...answers.values()].flatMap((s) => [...s]));
  // One answer a procedure, from every binary alike.
  const expected = Object.keys(PROCEDURES).length;
  console.log(`\nThe overview's figures (by severity, by category, the counts), each queue's open cases and oldest case, the queue's first page and the transparency report: ${distinct.size === expected ? "the same from every binary" : `${distinct.size} different answers for ${expected} calls`}.`);
  if (distinct.size !== expected) process.exitCode = 1;
} finally {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
}
