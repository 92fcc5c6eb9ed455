/**
 * Start to ready: how long `flagstaff serve` takes from its spawn to the first 200 from
 * `/readyz`, measured several times on a migrated SQLite database, with the machine's load
 * average printed beside the figures (on a shared machine they follow its load).
 *
 *   bun scripts/start-time.ts                       # dist/flagstaff (build it first: npm run build)
 *   bun scripts/start-time.ts --binary /tmp/flagstaff --runs 20
 *   bun scripts/start-time.ts --source              # bun src/cli.ts serve (a checkout, no binary)
 *   bun scripts/start-time.ts --db /path/to/big.db  # a copy of that database, not a new one
 *
 * Each run starts from a database that already has its schema and an organization (`migrate`
 * and `init` first, or the copy given), polls `/readyz` every 2 ms, then stops the process
 * (SIGTERM, no drain period) and waits for it to exit before the next run. The first run is a
 * warm-up (the page cache), shown but not counted. Prints every run, then the median, minimum
 * and maximum, and the load average before and after. Figures only: it never fails on them.
 * Beside each time, the CPU the process had used when it was first ready (user and system, every
 * thread, in 10 ms ticks): what the start costs, which the others' load moves much less than
 * the wall time (a process waiting for a core uses none).
 * On a shared machine the figures follow the others' load: measure when the load average is
 * low (`nice -n -20` as root helps a little, not enough under a load of 10 on 2 cores).
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { cpuMs } from "./bench/lib.ts";

const ROOT = resolve(import.meta.dir, "..");
const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    binary: { type: "string", default: "dist/flagstaff" },
    source: { type: "boolean" },
    runs: { type: "string", default: "10" },
    db: { type: "string" },
  },
});
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs must be a positive integer");
const command = values.source ? [process.execPath, join(ROOT, "src/cli.ts")] : [resolve(ROOT, values.binary!)];

const loadAverage = async () => (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ");

/** A port nobody listens on now (bound and released). */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), "flagstaff-start-"));
try {
  const dbPath = join(dir, "flagstaff.db");
  const env = { HOME: dir, PATH: "/usr/bin:/bin", FLAGSTAFF_DB: dbPath, FLAGSTAFF_LOG_LEVEL: "warn", HOST: "127.0.0.1", FLAGSTAFF_SHUTDOWN_DRAIN_MS: "0" };
  const run = async (args: string[]) => {
    const proc = Bun.spawn([...command, ...args], { cwd: dir, env, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) throw new Error(`${args.join(" ")} exited ${code}:\n${out}${err}`);
  };
  if (values.db) copyFileSync(resolve(values.db), dbPath);
  else {
    await run(["migrate"]);
    await run(["init", "--json"]);
  }

  const before = await loadAverage();
  const times: number[] = [];
  const cpuTimes: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const port = await freePort();
    const started = performance.now();
    const proc = Bun.spawn([...command, "serve"], { cwd: dir, env: { ...env, PORT: String(port) }, stdout: "ignore", stderr: "pipe" });
    let ready = false;
    while (!ready && performance.now() - started < 20_000 && proc.exitCode === null) {
      ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200, () => false);
      if (!ready) await Bun.sleep(2);
    }
    const ms = performance.now() - started;
    const cpu = cpuMs(proc.pid);
    proc.kill("SIGTERM");
    const code = await proc.exited;
    if (!ready) throw new Error(`run ${i}: not ready after ${Math.round(ms)} ms (exit ${code}):\n${await new Response(proc.stderr).text()}`);
    console.log(`${i === 0 ? "warm-up" : `run ${i}`}: ready in ${ms.toFixed(0)} ms, ${cpu} ms of CPU`);
    if (i > 0) {
      times.push(ms);
      cpuTimes.push(cpu);
    }
  }
  const after = await loadAverage();
  const medianOf = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const sorted = [...times].sort((a, b) => a - b);
  const median = medianOf(times);
  console.log(
    `start to ready (${values.source ? "bun src/cli.ts" : command[0]}, ${values.db ? `a copy of ${values.db}` : "a new database"}, ${runs} runs): ` +
      `median ${median.toFixed(0)} ms, min ${sorted[0]!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms ` +
      `(CPU used by then: median ${medianOf(cpuTimes).toFixed(0)} ms, min ${Math.min(...cpuTimes)} ms); ` +
      `load average (1, 5, 15 min) ${before} before, ${after} after, on ${navigator.hardwareConcurrency} cores`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
