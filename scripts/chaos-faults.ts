/**
 * `bun run chaos -- --faults`: the database fault harness (issue 30), about a minute.
 *
 * Three instances serve under steady load: P1 and P2 on one PostgreSQL database of a throwaway
 * cluster (scripts/pg-cluster.ts), each reaching it through a proxy of its own
 * (scripts/pg-proxy.ts, so the network to PostgreSQL can be cut), and S on SQLite, its database
 * on a small file system of its own (a tmpfs, mounted when running as root). Clients create
 * reports through every instance without pause, and dismiss some of them and create enforcement
 * actions now and then. One fault after the other, each with the load running before, during and
 * after it:
 *
 *   1. PostgreSQL restarted, `pg_ctl restart -m immediate` (a crash: recovery at start);
 *   2. PostgreSQL restarted, `pg_ctl restart -m fast` (every session ended, a checkpoint);
 *   3. PostgreSQL stopped for 10 s (`pg_ctl stop -m fast`, then started again);
 *   4. the network to PostgreSQL cut for 10 s (both proxies stop forwarding, then forward again);
 *   5. S's file system filled up for 5 s (a file takes all the space), then the file removed;
 *      skipped, saying why, when not running as root (no tmpfs can be mounted).
 *
 * The instances run with FLAGSTAFF_DB_STATEMENT_TIMEOUT_MS=5000, shorter than the faults, and are
 * left alone. For each fault a row of the table: the answers by status (all instances, from the
 * load's start to its end), requests without an answer (no answer within 20 s, or the connection
 * refused or cut), the slowest answer and how many took longer than the statement limit and a
 * second (held by the fault past the limit), the acknowledged reports (201),
 * dismissals (200) and actions (201), and how many of them are missing from the database
 * (each looked up by id afterwards), the time from the end of the fault until each instance
 * answers a report 201 and `/readyz` 200, and the instances that exited (each one's exit code
 * and the last lines of its stderr follow the table; the harness starts it again to go on).
 * Below it, per fault and instance: the answers, those of requests in flight during the fault,
 * and `/readyz` sampled once a second during the fault; every 5xx but 503 with its route and
 * answer. Afterwards: S's `PRAGMA integrity_check`, and each instance's `flagstaff_db_errors_total`.
 *
 * The run fails (exit 1) on an acknowledged write missing, an instance that exited or did not
 * serve again within 30 s, any 500 (any 5xx but 503), or a damaged SQLite database. Slow answers
 * are shown, not failed on.
 */
import { Database } from "bun:sqlite";
import { spawnSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { newDatabase, startPgCluster, type PgCluster } from "./pg-cluster.ts";
import { lastLinesOf, ROOT, run, startServer, type Server } from "./bench/lib.ts";

export interface FaultHarnessOptions {
  seed: number;
  /** Report clients per instance. */
  clientsPerInstance: number;
  /** A temporary folder of the run (logs, S's database when no tmpfs is mounted). */
  dir: string;
  say(line: string): void;
  step(line: string): void;
}

interface Demo {
  orgSlug: string;
  projectId: string;
  secretKey: string;
}

type Kind = "report" | "dismissal" | "action";
type Outcome = number | "no answer" | "timed out";

interface Sent {
  instance: string;
  kind: Kind;
  startedAt: number;
  endedAt: number;
  outcome: Outcome;
}

interface Instance {
  name: string;
  engine: "postgres" | "sqlite";
  env: Record<string, string>;
  demo: Demo;
  server: Server | null;
  /** Null while it is down (exited). */
  url: string | null;
  log: string;
  starts: number;
}

interface Exit {
  instance: string;
  during: string;
  code: number | null;
  signal: string | null;
  log: string;
  lastLines: string[];
}

/** Acknowledged writes of one engine's database, by id. */
interface Acknowledged {
  reports: string[];
  /** Reports whose dismissal was answered 200. */
  dismissals: string[];
  actions: string[];
}

interface FaultRow {
  name: string;
  skipped?: string;
  statuses: Map<string, number>;
  unanswered: number;
  timedOut: number;
  slowestMs: number;
  /** Answers that took longer than SLOW_MS. */
  overLimit: number;
  acknowledged: number;
  lost: number;
  lostDetail: string[];
  recovery: Map<string, { reportMs: number | null; readyMs: number | null; exited: boolean }>;
  exits: Exit[];
  fiveHundreds: string[];
  notes: string[];
}

const BUN = process.execPath;
const CLI = join(ROOT, "src", "cli.ts");
/** A request with no answer within this long counts as "timed out". */
const REQUEST_TIMEOUT_MS = 20_000;
/** An instance that does not serve again within this long after a fault fails the run. */
const RECOVER_LIMIT_MS = 30_000;
const FAULT_SECONDS = 10;
const DISK_FULL_SECONDS = 5;
/** FLAGSTAFF_DB_STATEMENT_TIMEOUT_MS of the instances. */
const STATEMENT_TIMEOUT_MS = 5_000;
/** An answer slower than this was held past the statement limit (plus a second of slack). */
const SLOW_MS = STATEMENT_TIMEOUT_MS + 1_000;

/** Runs the harness; resolves true when it failed. */
export async function runFaultHarness(opts: FaultHarnessOptions): Promise<boolean> {
  const { say, step, dir } = opts;
  let failed = false;
  let cluster: PgCluster | null = null;
  const proxies: ProxyProcess[] = [];
  const instances: Instance[] = [];
  const killing = new Set<Server>();
  const exits: Exit[] = [];
  let during = "start-up";
  let mountPoint: string | null = null;
  let db: postgres.Sql | null = null;

  try {
    // ---- PostgreSQL: a throwaway cluster, one database, a proxy per instance.
    cluster = await startPgCluster();
    const name = `flagstaff_faults_${opts.seed}`;
    const pgUrl = await newDatabase(cluster.url, name);
    const connect = () => postgres(pgUrl, { max: 2, onnotice: () => {}, connect_timeout: 5 });
    db = connect();
    for (let i = 0; i < 2; i++) proxies.push(await startProxyProcess(cluster.port));

    // ---- SQLite: its database on a small file system of its own when we may mount one.
    const isRoot = process.getuid?.() === 0;
    let diskFullSkipped: string | null = null;
    const sqliteDir = join(dir, "sqlite-disk");
    mkdirSync(sqliteDir, { recursive: true });
    if (!isRoot) diskFullSkipped = "skipped: mounting a small tmpfs under the SQLite instance needs root (run the harness as root for this fault)";
    else {
      const m = spawnSync("mount", ["-t", "tmpfs", "-o", "size=256m", "tmpfs", sqliteDir], { encoding: "utf8" });
      if (m.status === 0) mountPoint = sqliteDir;
      else diskFullSkipped = `skipped: mounting a tmpfs failed (${(m.stderr || m.stdout).trim()})`;
    }
    const sqlitePath = join(sqliteDir, "flagstaff.db");

    const base: Record<string, string> = { ...(process.env as Record<string, string>) };
    delete base.FLAGSTAFF_DATABASE_URL;
    delete base.FLAGSTAFF_DB;
    Object.assign(base, {
      PORT: "0",
      HOST: "127.0.0.1",
      FLAGSTAFF_REPORT_RATE_LIMIT: "100000000",
      FLAGSTAFF_LOG_LEVEL: "info",
      // Shorter than the faults, so that a statement held by one shows whether the limit ends it.
      FLAGSTAFF_DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    });
    const pgDemo = JSON.parse(await run([BUN, CLI, "init", "--json"], { ...base, FLAGSTAFF_DATABASE_URL: pgUrl })) as Demo;
    const sqliteEnv = { ...base, FLAGSTAFF_DB: sqlitePath };
    const sqliteDemo = JSON.parse(await run([BUN, CLI, "init", "--json"], sqliteEnv)) as Demo;
    instances.push(
      { name: "P1", engine: "postgres", env: { ...base, FLAGSTAFF_DATABASE_URL: proxies[0]!.url(pgUrl) }, demo: pgDemo, server: null, url: null, log: "", starts: 0 },
      { name: "P2", engine: "postgres", env: { ...base, FLAGSTAFF_DATABASE_URL: proxies[1]!.url(pgUrl) }, demo: pgDemo, server: null, url: null, log: "", starts: 0 },
      { name: "S", engine: "sqlite", env: sqliteEnv, demo: sqliteDemo, server: null, url: null, log: "", starts: 0 },
    );

    const start = async (inst: Instance) => {
      // A log per process, outside S's small file system (its last lines are what we print).
      inst.log = join(dir, `server.${inst.name}.${++inst.starts}.log`);
      const s = await startServer([BUN, CLI, "serve"], inst.env, { logFile: inst.log });
      inst.server = s;
      inst.url = s.url;
      const log = inst.log;
      void s.proc.exited.then((code) => {
        if (killing.has(s)) return;
        if (inst.server === s) {
          inst.server = null;
          inst.url = null;
        }
        exits.push({ instance: inst.name, during, code, signal: s.proc.signalCode ? String(s.proc.signalCode) : null, log, lastLines: lastLinesOf(log, 8) });
        step(`instance ${inst.name} EXITED by itself during ${during}: code ${code}${s.proc.signalCode ? `, signal ${s.proc.signalCode}` : ""}`);
      });
    };
    for (const inst of instances) await start(inst);
    step(`seed ${opts.seed}; PostgreSQL database ${name} (throwaway cluster, port ${cluster.port}); P1 and P2 through proxies on ports ${proxies.map((p) => p.port).join(", ")}; S on ${sqlitePath}${mountPoint ? " (a 256 MB tmpfs)" : ""}`);

    const ackPg: Acknowledged = { reports: [], dismissals: [], actions: [] };
    const ackSqlite: Acknowledged = { reports: [], dismissals: [], actions: [] };
    // S on a tmpfs is the fastest by far: half the clients, to leave PostgreSQL's instances CPU.
    const clientsOf = (inst: Instance) => (inst.engine === "sqlite" ? Math.max(1, Math.floor(opts.clientsPerInstance / 2)) : opts.clientsPerInstance);
    const ackOf = (inst: Instance) => (inst.engine === "postgres" ? ackPg : ackSqlite);

    const headersOf = (inst: Instance) => ({ authorization: `Bearer ${inst.demo.secretKey}`, "content-type": "application/json" });
    const reportBody = (tag: string, who: string, i: number) =>
      JSON.stringify({
        subject: { type: "user", externalId: `u-${i % 500}` },
        reporter: { type: "user", externalId: `r-${who}` },
        // A target of its own: each report opens its own case, so dismissing one decides that one only.
        target: { contentType: "post", contentExternalId: `p-${tag}-${who}-${i}`, content: "Buy cheap followers now" },
        reason: ["spam", "harassment", "threats"][i % 3],
        description: `faults-${tag}-${who}-${i}`,
      });
    const postReport = (inst: Instance, url: string, tag: string, who: string, i: number, timeoutMs = REQUEST_TIMEOUT_MS) =>
      fetch(`${url}/sdk/flagstaff/v1/projects/${inst.demo.projectId}/reports`, { method: "POST", headers: headersOf(inst), body: reportBody(tag, who, i), signal: AbortSignal.timeout(timeoutMs) });

    /** Load on every instance until stopped: report clients, a dismissal client and an action client each. */
    const startLoad = (tag: string) => {
      let stopped = false;
      const sent: Sent[] = [];
      const fiveHundreds: string[] = [];
      const send = async (inst: Instance, kind: Kind, route: string, make: (url: string) => Promise<Response>, onOk: (status: number, body: Record<string, unknown>) => void) => {
        const url = inst.url;
        if (!url) return Bun.sleep(20); // down (exited): nothing to send to
        const startedAt = performance.now();
        let outcome: Outcome;
        try {
          const res = await make(url);
          const text = await res.text();
          outcome = res.status;
          if (res.status === 200 || res.status === 201) {
            try {
              onOk(res.status, JSON.parse(text) as Record<string, unknown>);
            } catch {
              // not JSON: not acknowledged
            }
          } else if (res.status >= 500 && res.status !== 503 && fiveHundreds.length < 20) fiveHundreds.push(`${inst.name} ${route}: ${res.status} ${text.slice(0, 200)}`);
          else if (res.status === 503) await Bun.sleep(50); // Retry-After says wait; a little, to keep the load on
        } catch (err) {
          outcome = (err as Error).name === "TimeoutError" ? "timed out" : "no answer";
          await Bun.sleep(20);
        }
        sent.push({ instance: inst.name, kind, startedAt, endedAt: performance.now(), outcome });
      };
      const acknowledgedHere: Record<string, string[]> = Object.fromEntries(instances.map((i) => [i.name, []]));
      const reportClient = async (inst: Instance, n: number) => {
        for (let i = 0; !stopped; i++) {
          await send(inst, "report", "POST /projects/{projectId}/reports", (url) => postReport(inst, url, tag, `${inst.name}-${n}`, i), (status, body) => {
            if (status !== 201) return;
            const id = (body.report as { id: string }).id;
            ackOf(inst).reports.push(id);
            acknowledgedHere[inst.name]!.push(id);
          });
        }
      };
      const dismissalClient = async (inst: Instance) => {
        // Every 7th report this instance acknowledged in this phase (P1 and P2 share a database:
        // each decides on its own reports only, so none is dismissed twice).
        for (let next = 0; !stopped; ) {
          await Bun.sleep(50);
          const id = acknowledgedHere[inst.name]![next];
          if (!id) continue;
          next += 7;
          await send(inst, "dismissal", "POST /reports/{reportId}/dismiss", (url) =>
            fetch(`${url}/sdk/flagstaff/v1/reports/${id}/dismiss`, { method: "POST", headers: headersOf(inst), body: JSON.stringify({ reason: "not_actionable" }), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
            (status) => {
              if (status === 200) ackOf(inst).dismissals.push(id);
            },
          );
        }
      };
      const actionClient = async (inst: Instance) => {
        for (let i = 0; !stopped; i++) {
          await Bun.sleep(50);
          await send(inst, "action", "POST /organizations/{orgSlug}/projects/{projectId}/enforcement-actions", (url) =>
            fetch(`${url}/api/v1/organizations/${inst.demo.orgSlug}/projects/${inst.demo.projectId}/enforcement-actions`, {
              method: "POST",
              headers: headersOf(inst),
              body: JSON.stringify({ kind: "warning", reason: `faults ${tag}`, identity: { type: "user", externalId: `w-${tag}-${inst.name}-${i}` } }),
              signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
            }),
            (status, body) => {
              if (status === 201) ackOf(inst).actions.push((body.action as { id: string }).id);
            },
          );
        }
      };
      const clients = instances.flatMap((inst) => [
        ...Array.from({ length: clientsOf(inst) }, (_, n) => reportClient(inst, n)),
        dismissalClient(inst),
        actionClient(inst),
      ]);
      return {
        sent,
        fiveHundreds,
        async stop() {
          stopped = true;
          await Promise.all(clients);
        },
      };
    };

    /** From `from` on, until each instance answers a report 201 and /readyz 200 (or the limit). */
    const recoveryOf = (tag: string, from: number) =>
      Promise.all(
        instances.map(async (inst) => {
          let reportMs: number | null = null;
          let readyMs: number | null = null;
          for (let k = 0; performance.now() - from < RECOVER_LIMIT_MS && (reportMs === null || readyMs === null); k++) {
            const url = inst.url;
            if (!url) break; // exited
            const [report, ready] = await Promise.all([
              reportMs !== null
                ? null
                : postReport(inst, url, `${tag}-probe`, inst.name, k, 2_000).then(
                    async (r) => {
                      const body = (await r.json().catch(() => ({}))) as { report?: { id: string } };
                      if (r.status === 201 && body.report) ackOf(inst).reports.push(body.report.id);
                      return r.status === 201;
                    },
                    () => false,
                  ),
              readyMs !== null
                ? null
                : fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
                    async (r) => {
                      await r.arrayBuffer();
                      return r.status === 200;
                    },
                    () => false,
                  ),
            ]);
            if (report) reportMs = performance.now() - from;
            if (ready) readyMs = performance.now() - from;
            if (reportMs === null || readyMs === null) await Bun.sleep(100);
          }
          return [inst.name, { reportMs, readyMs, exited: !inst.url }] as const;
        }),
      ).then((entries) => new Map(entries));

    /** Acknowledged writes not in the database, looked up by id. */
    const lostOf = async (pg: Acknowledged, lite: Acknowledged) => {
      const detail: string[] = [];
      let lost = 0;
      const check = (what: string, ids: string[], found: Set<string>) => {
        const missing = ids.filter((id) => !found.has(id));
        lost += missing.length;
        if (missing.length) detail.push(`${what}: ${missing.length} of ${ids.length} missing (${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ", …" : ""})`);
      };
      const inPg = async (query: (ids: string[]) => Promise<{ id: string }[]>, ids: string[]) => {
        const found = new Set<string>();
        for (let i = 0; i < ids.length; i += 5_000) for (const r of await query(ids.slice(i, i + 5_000))) found.add(r.id);
        return found;
      };
      const sql = db!;
      check("PostgreSQL reports", pg.reports, await inPg((ids) => sql<{ id: string }[]>`SELECT id FROM reports WHERE id IN ${sql(ids)}`, pg.reports));
      check("PostgreSQL dismissals", pg.dismissals, await inPg((ids) => sql<{ id: string }[]>`SELECT id FROM reports WHERE status = 'DISMISSED' AND id IN ${sql(ids)}`, pg.dismissals));
      check("PostgreSQL actions", pg.actions, await inPg((ids) => sql<{ id: string }[]>`SELECT id FROM enforcement_actions WHERE id IN ${sql(ids)}`, pg.actions));
      const lite3 = new Database(sqlitePath, { readonly: true });
      try {
        const ids = (q: string) => new Set((lite3.query(q).all() as { id: string }[]).map((r) => r.id));
        check("SQLite reports", lite.reports, ids("SELECT id FROM reports"));
        check("SQLite dismissals", lite.dismissals, ids("SELECT id FROM reports WHERE status = 'DISMISSED'"));
        check("SQLite actions", lite.actions, ids("SELECT id FROM enforcement_actions"));
      } finally {
        lite3.close();
      }
      return { lost, detail };
    };

    const faults: { name: string; skipped?: string | null; apply(row: FaultRow): Promise<void> }[] = [
      { name: "PostgreSQL restart -m immediate", apply: () => cluster!.restart("immediate") },
      { name: "PostgreSQL restart -m fast", apply: () => cluster!.restart("fast") },
      {
        name: `PostgreSQL stopped ${FAULT_SECONDS} s`,
        async apply() {
          await cluster!.shutDown("fast");
          await Bun.sleep(FAULT_SECONDS * 1000);
          await cluster!.startUp();
        },
      },
      {
        name: `network to PostgreSQL cut ${FAULT_SECONDS} s`,
        async apply() {
          await Promise.all(proxies.map((p) => p.command("pause")));
          await Bun.sleep(FAULT_SECONDS * 1000);
          await Promise.all(proxies.map((p) => p.command("resume")));
        },
      },
      {
        name: `SQLite disk full ${DISK_FULL_SECONDS} s`,
        skipped: diskFullSkipped,
        async apply(row) {
          // A file takes every free block; the instance's writes then fail until it is removed.
          const filler = join(sqliteDir, "filler");
          const fd = openSync(filler, "w");
          const chunk = Buffer.alloc(1 << 20);
          let filled = 0;
          try {
            for (;;) filled += writeSync(fd, chunk);
          } catch {
            // ENOSPC: full (a last partial chunk may still fit)
          } finally {
            closeSync(fd);
          }
          await Bun.sleep(DISK_FULL_SECONDS * 1000);
          unlinkSync(filler);
          row.notes.push(`S's file system filled with ${(filled / 2 ** 20).toFixed(0)} MB more`);
        },
      },
    ];

    const rows: FaultRow[] = [];
    for (const fault of faults) {
      const row: FaultRow = { name: fault.name, statuses: new Map(), unanswered: 0, timedOut: 0, slowestMs: 0, overLimit: 0, acknowledged: 0, lost: 0, lostDetail: [], recovery: new Map(), exits: [], fiveHundreds: [], notes: [] };
      rows.push(row);
      if (fault.skipped) {
        row.skipped = fault.skipped;
        step(`${fault.name}: ${fault.skipped}`);
        continue;
      }
      during = fault.name;
      // Every instance up (one that exited in an earlier fault was started again, and said so).
      for (const inst of instances) if (!inst.url) await start(inst);
      const exitsBefore = exits.length;
      const pgBefore = { reports: ackPg.reports.length, dismissals: ackPg.dismissals.length, actions: ackPg.actions.length };
      const liteBefore = { reports: ackSqlite.reports.length, dismissals: ackSqlite.dismissals.length, actions: ackSqlite.actions.length };
      step(`${fault.name}, under load`);
      const tag = `f${rows.length}`;
      const load = startLoad(tag);
      const loadStarted = performance.now();
      await Bun.sleep(2_000);
      const faultStarted = performance.now();
      const readiness = sampleReadiness(instances);
      try {
        await fault.apply(row);
      } catch (err) {
        row.notes.push(`the fault itself FAILED: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
        failed = true;
      }
      const faultEnded = performance.now();
      const readyDuring = readiness.stop();
      // The harness's own client: a new one (its connections went with PostgreSQL).
      if (fault.name.startsWith("PostgreSQL")) {
        const old = db;
        db = connect();
        void old.end({ timeout: 1 }).catch(() => {});
      }
      row.recovery = await recoveryOf(tag, faultEnded);
      await Bun.sleep(1_000);
      await load.stop();
      row.notes.unshift(`the fault took ${((faultEnded - faultStarted) / 1000).toFixed(1)} s; load for ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);

      for (const s of load.sent) {
        const key = String(s.outcome);
        row.statuses.set(key, (row.statuses.get(key) ?? 0) + 1);
        if (typeof s.outcome !== "number") row.unanswered++;
        if (s.outcome === "timed out") row.timedOut++;
        if (typeof s.outcome === "number") row.slowestMs = Math.max(row.slowestMs, s.endedAt - s.startedAt);
        if (typeof s.outcome === "number" && s.endedAt - s.startedAt > SLOW_MS) row.overLimit++;
      }
      row.fiveHundreds = load.fiveHundreds;
      const slice = (a: Acknowledged, b: typeof pgBefore): Acknowledged => ({ reports: a.reports.slice(b.reports), dismissals: a.dismissals.slice(b.dismissals), actions: a.actions.slice(b.actions) });
      const pgNow = slice(ackPg, pgBefore);
      const liteNow = slice(ackSqlite, liteBefore);
      row.acknowledged = [pgNow, liteNow].reduce((n, a) => n + a.reports.length + a.dismissals.length + a.actions.length, 0);
      const { lost, detail } = await lostOf(pgNow, liteNow);
      row.lost = lost;
      row.lostDetail = detail;
      row.notes.push(`acknowledged: PostgreSQL ${pgNow.reports.length} reports, ${pgNow.dismissals.length} dismissals, ${pgNow.actions.length} actions; SQLite ${liteNow.reports.length} reports, ${liteNow.dismissals.length} dismissals, ${liteNow.actions.length} actions`);
      for (const inst of instances) {
        const mine = load.sent.filter((s) => s.instance === inst.name);
        const whileFaulty = mine.filter((s) => s.startedAt < faultEnded && s.endedAt > faultStarted);
        row.notes.push(`${inst.name}: ${summarize(mine.map((s) => String(s.outcome)))} (in flight during the fault: ${summarize(whileFaulty.map((s) => String(s.outcome)))}; its /readyz during the fault, once a second: ${summarize(readyDuring.get(inst.name) ?? [])})`);
      }
      // Let an exit that happened at the very end be seen.
      await Bun.sleep(200);
      row.exits = exits.slice(exitsBefore);
      const stuck = [...row.recovery].filter(([, r]) => !r.exited && (r.reportMs === null || r.readyMs === null)).map(([n]) => n);
      // Any 5xx but the documented 503 fails the run (a 500 most of all).
      const serverErrors = [...row.statuses.keys()].some((k) => Number(k) >= 500 && k !== "503");
      if (row.lost || row.exits.length || stuck.length || serverErrors || row.acknowledged === 0) failed = true;
      // Those that did not serve again are started again, so the run goes on.
      for (const inst of instances) {
        if (stuck.includes(inst.name) && inst.server) {
          killing.add(inst.server);
          await inst.server.kill();
          inst.url = null;
        }
        if (!inst.url) await start(inst);
      }
    }

    // ---- Afterwards: the database errors each instance counted, then S's integrity.
    during = "shutdown";
    const counted: string[] = [];
    for (const inst of instances) {
      const text = inst.url ? await fetch(`${inst.url}/metrics`).then((r) => r.text(), () => "") : "";
      const lines = text.split("\n").filter((l) => l.startsWith("flagstaff_db_errors_total{"));
      counted.push(`${inst.name}: ${lines.map((l) => l.replace("flagstaff_db_errors_total", "")).join(", ") || "none"}`);
    }
    for (const inst of instances) {
      if (!inst.server) continue;
      killing.add(inst.server);
      await inst.server.stop();
      inst.server = null;
      inst.url = null;
    }
    const lite = new Database(sqlitePath, { readonly: true });
    const integrity = lite.query("PRAGMA integrity_check").values().flat().join("; ");
    lite.close();
    if (integrity !== "ok") failed = true;

    // ---- The table.
    const fmtS = (ms: number | null) => (ms === null ? "never" : `${(ms / 1000).toFixed(1)} s`);
    say("## Chaos: database faults under load (P1, P2 on PostgreSQL through proxies; S on SQLite)");
    say("");
    say(`Load: ${opts.clientsPerInstance} clients creating reports without pause through each PostgreSQL instance and ${clientsOf(instances[2]!)} through S, and per instance one dismissing every 7th report acknowledged in the phase, one creating enforcement actions (a pause of 50 ms between the last two's requests); FLAGSTAFF_DB_STATEMENT_TIMEOUT_MS=${STATEMENT_TIMEOUT_MS}. "serves again": from the end of the fault until a report is answered 201 / \`/readyz\` 200 (each instance left alone, limit ${RECOVER_LIMIT_MS / 1000} s). Answers by status count every instance, from the load's start 2 s before the fault to its end 1 s after the last instance served again.`);
    say("");
    say(`| Fault | Answers by status | No answer (timed out) | Slowest answer (answers over ${SLOW_MS / 1000} s) | Acknowledged, lost | P1 serves again (report / ready) | P2 | S | Exited |`);
    say(`|---|---|---|---|---|---|---|---|---|`);
    for (const r of rows) {
      if (r.skipped) {
        say(`| ${r.name} | ${r.skipped} | | | | | | | |`);
        continue;
      }
      const statuses = [...r.statuses].filter(([k]) => /^\d+$/.test(k)).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}: ${v}`).join(", ");
      const rec = (n: string) => {
        const x = r.recovery.get(n);
        if (!x) return "?";
        if (x.exited) return "**exited**";
        return `${fmtS(x.reportMs)} / ${fmtS(x.readyMs)}`;
      };
      const exited = r.exits.length ? `**${r.exits.map((e) => `${e.instance} (code ${e.code}${e.signal ? `, ${e.signal}` : ""})`).join(", ")}**` : "none";
      say(`| ${r.name} | ${statuses || "none"} | ${r.unanswered} (${r.timedOut}) | ${(r.slowestMs / 1000).toFixed(1)} s (${r.overLimit}) | ${r.acknowledged}, ${r.lost ? `**${r.lost}**` : 0} | ${rec("P1")} | ${rec("P2")} | ${rec("S")} | ${exited} |`);
    }
    say("");
    for (const r of rows) {
      if (r.skipped) continue;
      say(`- ${r.name}: ${r.notes.join("; ")}`);
      for (const d of r.lostDetail) say(`  - **lost**: ${d}`);
      for (const f of r.fiveHundreds) say(`  - **5xx**: ${f}`);
      for (const e of r.exits) {
        say(`  - **${e.instance} exited** during ${e.during}: exit code ${e.code}${e.signal ? `, signal ${e.signal}` : ""}; the last lines of its stderr (${e.log}):`);
        for (const line of e.lastLines) say(`        ${line}`);
      }
    }
    say(`- flagstaff_db_errors_total at the end: ${counted.join("; ")}`);
    say(`- S's database after the run: PRAGMA integrity_check ${integrity}`);
    say("");
    return failed;
  } finally {
    for (const inst of instances) {
      if (!inst.server) continue;
      killing.add(inst.server);
      await inst.server.kill().catch(() => {});
    }
    for (const p of proxies) await p.stop();
    await db?.end({ timeout: 1 }).catch(() => {});
    if (cluster) {
      if (failed && process.env.CHAOS_KEEP) console.error(`PostgreSQL cluster kept running for inspection: ${cluster.url} (its folder ${cluster.dir})`);
      else await cluster.stop();
    }
    if (mountPoint) {
      const u = spawnSync("umount", [mountPoint], { encoding: "utf8" });
      if (u.status !== 0) console.error(`umount ${mountPoint} failed: ${u.stderr.trim()}`);
      else rmSync(mountPoint, { recursive: true, force: true });
    }
  }
}

/**
 * scripts/pg-proxy.ts in a process of its own (its forwarding does not share an event loop with
 * the harness's clients), driven through its stdin: `pause` stops forwarding both ways (a
 * partition), `resume` forwards again.
 */
interface ProxyProcess {
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  url(postgresUrl: string): string;
  /** Sends a command and waits for the proxy to say it is done. */
  command(command: "pause" | "resume"): Promise<void>;
  stop(): Promise<void>;
}

async function startProxyProcess(targetPort: number): Promise<ProxyProcess> {
  const proc = Bun.spawn([BUN, join(ROOT, "scripts", "pg-proxy.ts"), "--target", `127.0.0.1:${targetPort}`, "--listen", "0", "--delay-ms", "0"], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  let stdout = "";
  let stderr = "";
  const drain = async (stream: ReadableStream<Uint8Array>, onText: (t: string) => void) => {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    for (;;) {
      const r = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (r.done) break;
      onText(decoder.decode(r.value, { stream: true }));
    }
  };
  void drain(proc.stdout, (t) => (stdout += t));
  void drain(proc.stderr, (t) => (stderr += t));
  const waitFor = async <T>(what: () => T | null, label: string): Promise<T> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const m = what();
      if (m) return m;
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`pg-proxy: no ${label}:\n${stdout}\n${stderr}`);
      await Bun.sleep(10);
    }
  };
  const port = Number((await waitFor(() => /listening on postgres:\/\/[^:]+:(\d+)/.exec(stdout), "listening line"))[1]);
  return {
    port,
    url(postgresUrl) {
      const u = new URL(postgresUrl);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    async command(command) {
      const seen = stderr.split(`${command}: done`).length - 1;
      proc.stdin.write(`${command}\n`);
      await proc.stdin.flush();
      await waitFor(() => stderr.split(`${command}: done`).length - 1 > seen || null, `"${command}: done"`);
    },
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** Each instance's /readyz once a second (a 2 s limit: "timed out" beyond) until stopped. */
function sampleReadiness(instances: Instance[]): { stop(): Map<string, string[]> } {
  let stopped = false;
  const seen = new Map<string, string[]>(instances.map((i) => [i.name, []]));
  for (const inst of instances) void (async () => {
    while (!stopped) {
      const started = performance.now();
      const url = inst.url;
      const outcome = !url
        ? "down"
        : await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
            async (r) => {
              await r.arrayBuffer();
              return String(r.status);
            },
            (err: Error) => (err.name === "TimeoutError" ? "timed out" : "no answer"),
          );
      if (!stopped) seen.get(inst.name)!.push(outcome);
      const rest = 1_000 - (performance.now() - started);
      if (rest > 0 && !stopped) await Bun.sleep(rest);
    }
  })();
  return {
    /** What was seen so far (a probe still on its way is left to end by itself, unrecorded). */
    stop() {
      stopped = true;
      return new Map([...seen].map(([name, outcomes]) => [name, [...outcomes]]));
    },
  };
}

/** "201: 812, 503: 40" from a list of outcomes. */
function summarize(outcomes: string[]): string {
  const m = new Map<string, number>();
  for (const o of outcomes) m.set(o, (m.get(o) ?? 0) + 1);
  return [...m].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}: ${v}`).join(", ") || "none";
}
