/**
 * The cost of rules on intake (issue 15, item 4): report creation at 32 connections on a
 * database whose organization has 50 live `report.created` rules, beside the same on a database
 * without rules, in the same run: after a warm-up of each, six rounds of short runs in
 * alternating order (without-with, with-without, …) so that the machine's drift falls on both;
 * the ratio of the summed throughputs is the figure (target ≥ 0.8), shown with the ratio of each
 * round.
 *
 * The rules are those of a busy trust-and-safety team: 44 that read several fields each (the
 * report's reasons, text and severity, the subject's open cases, active actions and report
 * count, the reporter's accuracy and reports of the last 24 h, the distinct reporters of the
 * target: every kind of fact is gathered) and do not match the benchmark's reports; 4 that tag
 * or raise the priority (one tags a sixth of the reports, the others rarely match); 2 that
 * route (one routes a sixth of the reports to a specialist queue).
 *
 * Run alone: `bun scripts/bench/run.ts --only rules` (builds the binary unless --no-build).
 * The rules are written straight into the database before the server starts (as the seeder
 * writes reports), in the shape src/domain/rules/rules.ts stores them.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fmtInt, markdownTable, run, startServer, wrk, type Server, type WrkResult, type BenchStepDeps } from "./lib.ts";

export interface RulesBench {
  rules: number;
  connections: number;
  seconds: number;
  withoutRules: WrkResult[];
  withRules: WrkResult[];
  /** Requests per second, summed over the runs of each side. */
  rpsWithout: number;
  rpsWith: number;
  /** rpsWith / rpsWithout (target ≥ 0.8). */
  ratio: number;
  /** Rule hits recorded during the runs with rules (the tagging and routing rules matched). */
  hits: number;
}

type Deps = BenchStepDeps;

const RULE_COUNT = 50;
/** Alternating rounds (each side runs once per round) and the warm-up of each side. */
const ROUNDS = 6;
const WARM_UP_S = 8;

/** The 50 rules (when, then) of the benchmark; queueId is the specialist queue. */
export function benchRules(queueId: string): { when: unknown; then: unknown[] }[] {
  const out: { when: unknown; then: unknown[] }[] = [];
  for (let i = 0; i < 44; i++) {
    // Several fields each, none of which the benchmark's reports meet all of.
    out.push({
      when: {
        all: [
          { field: "report.reasons", op: "includes", value: i % 2 ? "spam" : "harassment" },
          {
            any: [
              { field: "subject.openCases", op: "gt", value: 1000 + i },
              { field: "subject.activeActions", op: "gte", value: 5 },
              { field: "reporter.accuracy", op: "lt", value: 0.01 },
              { field: "reporter.reportsLast24h", op: "gt", value: 100_000 },
              { field: "target.distinctReportersLast24h", op: "gte", value: 500 + i },
              { field: "subject.reportCount", op: "gt", value: 1_000_000 },
              { field: "report.text", op: "matches", value: `(?i)casino-${i}|lottery winner ${i}` },
            ],
          },
          { not: { field: "report.severity", op: "eq", value: "CRITICAL" } },
        ],
      },
      then: [{ type: "dismiss", reason: "not_actionable" }],
    });
  }
  const reasonIs = (reason: string) => ({ field: "report.reasons", op: "includes", value: reason });
  // A sixth of the benchmark's reports (reason threats) are tagged, a sixth (misinformation) routed; the others' conditions rarely hold.
  out.push({ when: { all: [reasonIs("threats"), { field: "report.text", op: "contains", value: "followers" }] }, then: [{ type: "tag", tag: "threat" }] });
  out.push({ when: { all: [reasonIs("harassment"), { field: "reporter.reportsLast24h", op: "gt", value: 3 }] }, then: [{ type: "priority", by: 2 }] });
  out.push({ when: { all: [reasonIs("other"), { field: "report.contentType", op: "eq", value: "video" }] }, then: [{ type: "tag", tag: "other" }] });
  out.push({ when: { all: [reasonIs("threats"), { field: "subject.reportCount", op: "gt", value: 50 }] }, then: [{ type: "priority", by: 1 }] });
  out.push({ when: reasonIs("misinformation"), then: [{ type: "route", queueId }] });
  out.push({ when: { all: [reasonIs("misinformation"), { field: "report.text", op: "matches", value: "(?i)vaccine|election" }] }, then: [{ type: "route", queueId }, { type: "tag", tag: "misinfo" }] });
  return out;
}

/** CPU seconds a process has used, in all its threads and in its main thread (Linux /proc; zeros elsewhere). */
function cpuSeconds(pid: number): { process: number; main: number } {
  const read = (path: string) => {
    try {
      // Fields 14 and 15 (utime, stime) after the command name, which may hold spaces: count from its closing parenthesis.
      const fields = readFileSync(path, "utf8").split(") ")[1]!.split(" ");
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return 0;
    }
  };
  return { process: read(`/proc/${pid}/stat`), main: read(`/proc/${pid}/task/${pid}/stat`) };
}

/** Writes the benchmark's queue and rules into the organization of a database made by `flagstaff init`. */
function writeRules(path: string): void {
  const db = new Database(path);
  try {
    const { id: orgId } = db.query("SELECT id FROM organizations LIMIT 1").get() as { id: string };
    const now = Date.now();
    const queueId = crypto.randomUUID();
    db.run("INSERT INTO queues (id, org_id, project_id, name, description, ordering, is_default, access, created_at, updated_at) VALUES (?, ?, NULL, 'Misinformation', NULL, 'severity_age', 0, '{\"users\":[],\"roles\":[]}', ?, ?)", [queueId, orgId, now, now]);
    const insert = db.prepare(
      "INSERT INTO rules (id, org_id, project_id, name, description, trigger, mode, when_json, then_json, version, created_at, updated_at) VALUES (?, ?, NULL, ?, NULL, 'report.created', 'live', ?, ?, 1, ?, ?)",
    );
    benchRules(queueId).forEach((r, i) => insert.run(crypto.randomUUID(), orgId, `bench rule ${i + 1}`, JSON.stringify(r.when), JSON.stringify(r.then), now + i, now + i));
  } finally {
    db.close();
  }
}

function count(path: string, table: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

export async function rulesComparison(d: Deps): Promise<RulesBench> {
  const C = 32;
  const sides: { name: "without" | "with"; server: Server; keyEnv: Record<string, string>; db: string }[] = [];
  for (const name of ["without", "with"] as const) {
    const dir = mkdtempSync(join(d.work, `rules-${name}-`));
    const db = join(dir, "flagstaff.db");
    const init = JSON.parse(await run([...d.flagstaff, "init", "--json"], d.cleanEnv({ FLAGSTAFF_DB: db }), dir)) as { projectId: string; secretKey: string };
    if (name === "with") writeRules(db);
    const server = await startServer([...d.flagstaff, "serve"], d.env(db), { logFile: join(dir, "server.log"), cwd: dir });
    d.servers.push(server);
    sides.push({ name, server, keyEnv: { KEY: init.secretKey, PROJECT: init.projectId }, db });
  }
  // Warm-up long enough for the JIT and the page cache: the first seconds of a fresh server run
  // slower, and would fall on whichever side ran first.
  for (const s of sides) await wrk(d.wrkBin, { url: s.server.url, connections: C, seconds: WARM_UP_S, script: "report.lua", env: s.keyEnv });
  const hitsBefore = count(sides[1]!.db, "rule_hits");
  const results: Record<"without" | "with", WrkResult[]> = { without: [], with: [] };
  // Short runs, many times, in alternating order (without-with, with-without, …): this
  // machine's throughput drifts by ±10 % over tens of seconds, which two long runs do not average out.
  const runSeconds = Math.max(2, Math.round(d.seconds / 2));
  const cpu: Record<"without" | "with", { process: number; main: number; requests: number }> = {
    without: { process: 0, main: 0, requests: 0 },
    with: { process: 0, main: 0, requests: 0 },
  };
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of round % 2 ? [...sides].reverse() : sides) {
      const before = cpuSeconds(s.server.proc.pid);
      const r = await wrk(d.wrkBin, { url: s.server.url, connections: C, seconds: runSeconds, script: "report.lua", env: s.keyEnv });
      const after = cpuSeconds(s.server.proc.pid);
      cpu[s.name].process += after.process - before.process;
      cpu[s.name].main += after.main - before.main;
      cpu[s.name].requests += r.requests;
      d.log(`  reports c=${C} ${s.name} rules: ${fmtInt(r.rps)}/s p99 ${r.latencyMs.p99} ms (non-2xx ${r.non2xx}); server CPU ${Math.round(((after.main - before.main) * 1e6) / r.requests)} µs/report on its main thread, ${Math.round(((after.process - before.process) * 1e6) / r.requests)} in all`);
      results[s.name].push(r);
    }
  }
  const hits = count(sides[1]!.db, "rule_hits") - hitsBefore;
  for (const s of sides) await s.server.stop();
  const rps = (rs: WrkResult[]) => Math.round(rs.reduce((n, r) => n + r.requests, 0) / rs.reduce((n, r) => n + r.seconds, 0));
  const rpsWithout = rps(results.without);
  const rpsWith = rps(results.with);
  return {
    rules: RULE_COUNT,
    connections: C,
    seconds: d.seconds,
    withoutRules: results.without,
    withRules: results.with,
    rpsWithout,
    rpsWith,
    ratio: Math.round((rpsWith / rpsWithout) * 1000) / 1000,
    hits,
  };
}

export function renderRules(r: RulesBench): string {
  const row = (name: string, rs: WrkResult[], total: number) => [
    name,
    rs.map((x) => fmtInt(x.rps)).join(", "),
    `${fmtInt(total)}/s`,
    rs.map((x) => `${x.latencyMs.p99}`).join(", ") + " ms",
    String(rs.reduce((n, x) => n + x.non2xx + x.socketErrors, 0)),
  ];
  return [
    `## Rules on intake: report creation at ${r.connections} connections, ${r.rules} live rules vs none (same run, alternating)`,
    "",
    markdownTable(
      ["", "runs (req/s)", "overall", "p99 per run", "errors"],
      [row("no rules", r.withoutRules, r.rpsWithout), row(`${r.rules} live rules`, r.withRules, r.rpsWith)],
    ),
    "",
    `Ratio with/without: **${r.ratio}** (target ≥ 0.8: ${r.ratio >= 0.8 ? "met" : "NOT met"}); by round: ${r.withRules.map((w, i) => (w.rps / r.withoutRules[i]!.rps).toFixed(3)).join(", ")}; ${fmtInt(r.hits)} rule hits recorded during the runs with rules.`,
  ].join("\n");
}
