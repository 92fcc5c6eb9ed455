/** Helpers of the benchmarks (scripts/bench/run.ts, compare.ts) and the chaos run (scripts/chaos.ts). */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";

export const ROOT = join(import.meta.dir, "..", "..");
export const LUA_DIR = join(import.meta.dir, "wrk");

// ---------------------------------------------------------------------------------------------
// Processes

export interface Server {
  url: string;
  proc: Subprocess<"ignore", "pipe", "ignore" | "pipe">;
  /** Graceful stop (SIGTERM); resolves with the exit code. */
  stop(): Promise<number>;
  /** A crash (SIGKILL). */
  kill(): Promise<void>;
}

/**
 * Starts a Flagstaff server (or a bare one) and waits for its "listening on <url>" line on
 * stdout. stderr goes to `logFile` (the JSON log), or is dropped.
 */
export async function startServer(cmd: string[], env: Record<string, string>, opts: { logFile?: string; cwd?: string; timeoutMs?: number } = {}): Promise<Server> {
  const proc = Bun.spawn(cmd, {
    cwd: opts.cwd,
    // A harness stops its servers at once: no drain period (src/commands/serve.ts) unless it sets one.
    env: { FLAGSTAFF_SHUTDOWN_DRAIN_MS: "0", ...env },
    stdout: "pipe",
    stderr: opts.logFile ? Bun.file(opts.logFile) : "ignore",
  }) as unknown as Subprocess<"ignore", "pipe", "ignore">;
  const url = await waitForLine(proc, /listening on (http:\/\/\S+)/, opts.timeoutMs ?? 20_000);
  return {
    url: url.replace(/\/$/, ""),
    proc,
    async stop() {
      proc.kill("SIGTERM");
      return proc.exited;
    },
    async kill() {
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}

/** Reads stdout until `pattern` matches (its first group is returned), then keeps draining it. */
async function waitForLine(proc: Subprocess<"ignore", "pipe", "ignore">, pattern: RegExp, timeoutMs: number): Promise<string> {
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const next = await Promise.race([reader.read(), Bun.sleep(Math.max(1, deadline - Date.now())).then(() => null)]);
    if (!next || next.done) break;
    seen += decoder.decode(next.value);
    const m = pattern.exec(seen);
    if (m?.[1]) {
      void (async () => {
        for (;;) {
          const r = await reader.read().catch(() => ({ done: true as const, value: undefined }));
          if (r.done) break;
        }
      })();
      return m[1];
    }
  }
  proc.kill("SIGKILL");
  throw new Error(`${proc.pid} did not start:\n${seen}`);
}

/** The last `n` non-empty lines of a server's log but its access lines (each cut at 300 characters). */
export function lastLinesOf(path: string, n: number): string[] {
  try {
    return readFileSync(path, "utf8")
      .split("\n")
      .filter((l) => l.trim() && !l.includes('"msg":"request"'))
      .slice(-n)
      .map((l) => (l.length > 300 ? l.slice(0, 300) + "…" : l));
  } catch {
    return ["(no log)"];
  }
}

/** Runs a command to completion; throws unless it exits 0. */
export async function run(cmd: string[], env: Record<string, string> = process.env as Record<string, string>, cwd?: string): Promise<string> {
  const proc = Bun.spawn(cmd, { env, cwd, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}\n${stdout}\n${stderr}`);
  return stdout;
}

/** Runs a command until it exits, or sends it SIGINT once `until` settles; throws unless it exits 0. */
async function runUntil(cmd: string[], env: Record<string, string>, until: Promise<unknown>): Promise<string> {
  const proc = Bun.spawn(cmd, { env, stdout: "pipe", stderr: "pipe" });
  const interrupt = () => {
    if (proc.exitCode === null) proc.kill("SIGINT");
  };
  until.then(interrupt, interrupt);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}\n${stdout}\n${stderr}`);
  return stdout;
}

/** A memory field of a process's /proc status, in MB (0 when the process is gone). */
function statusMb(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Resident set size of a process, in MB (VmRSS: every thread of it). */
export const rssMb = (pid: number): number => statusMb(pid, "VmRSS");

/** A process's peak resident set size so far, in MB (VmHWM). */
export const peakRssMb = (pid: number): number => statusMb(pid, "VmHWM");

/**
 * CPU time (user + system, ms) a process has used so far, from /proc (clock ticks of 10 ms).
 * CPU per request is steadier than requests per second when other work shares the machine.
 */
export function cpuMs(pid: number): number {
  try {
    // Fields after the command name (which may hold spaces): utime is the 12th, stime the 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/**
 * CPU time (ms) of a process and its children: its own, its children's that have exited
 * (cutime, cstime) and its live children's. For PostgreSQL's postmaster, whose backends are its
 * children: the whole server's CPU. Differences between two readings are what matter; a child
 * that exits in between carries its whole life into the second one (backends of a pool live
 * through a run).
 */
export function processTreeCpuMs(pid: number): number {
  const fieldsOf = (p: number | string): string[] | null => {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    } catch {
      return null;
    }
  };
  const own = fieldsOf(pid);
  if (!own) return 0;
  // After the command name: state, ppid, …, utime (12th), stime, cutime, cstime.
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const f = fieldsOf(entry);
    if (f && Number(f[1]) === pid) ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks * 10;
}

/** Samples a process's RSS every `everyMs` until stopped; returns the largest seen. */
export function sampleRss(pid: number, everyMs = 100): { stop(): number } {
  let max = rssMb(pid);
  const timer = setInterval(() => (max = Math.max(max, rssMb(pid))), everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(max, rssMb(pid));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// wrk

/** What run.ts gives each comparison step (rules.ts, attachments.ts, media.ts): how to run Flagstaff and where. */
export interface BenchStepDeps {
  wrkBin: string;
  /** How to run Flagstaff: the binary, or `bun src/cli.ts` (run.ts --source). */
  flagstaff: string[];
  work: string;
  seconds: number;
  /** --quick: fewer rounds. */
  quick?: boolean;
  env: (db: string) => Record<string, string>;
  cleanEnv: (extra?: Record<string, string>) => Record<string, string>;
  log: (s: string) => void;
  servers: Server[];
  /** Settings added to the server's environment (run.ts --server-env): a variant measured against the default. */
  serverEnv?: Record<string, string>;
}

export interface WrkResult {
  connections: number;
  seconds: number;
  requests: number;
  rps: number;
  /** Answers that were not 2xx/3xx, and socket errors. */
  non2xx: number;
  socketErrors: number;
  latencyMs: { p50: number; p90: number; p99: number; p999: number; max: number; mean: number };
}

/** wrk from the PATH, installed from Debian's packages when missing (as root). */
export async function ensureWrk(log: (s: string) => void): Promise<string> {
  const found = Bun.which("wrk");
  if (found) return found;
  if (process.getuid?.() !== 0) throw new Error("wrk is not installed: apt-get install wrk (or brew install wrk), then run again");
  log("wrk is missing: installing it with apt-get");
  await run(["sh", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk"]);
  const installed = Bun.which("wrk");
  if (!installed) throw new Error("apt-get install wrk did not provide wrk");
  return installed;
}

/**
 * Runs wrk for `seconds`, or until `until` settles if that comes first: wrk is then sent SIGINT,
 * stops, and prints its figures over the time it ran (the summary's duration is the real one).
 */
export async function wrk(
  bin: string,
  opts: { url: string; connections: number; seconds: number; script: string; env?: Record<string, string>; threads?: number; until?: Promise<unknown> },
): Promise<WrkResult> {
  const threads = opts.threads ?? Math.min(2, opts.connections);
  const cmd = [bin, `-t${threads}`, `-c${opts.connections}`, `-d${opts.seconds}s`, "--timeout", "10s", "-s", join(LUA_DIR, opts.script), opts.url];
  const env = { ...(process.env as Record<string, string>), BENCH_LUA_DIR: LUA_DIR, ...opts.env };
  const out = opts.until ? await runUntil(cmd, env, opts.until) : await run(cmd, env);
  const line = out.split("\n").find((l) => l.startsWith("BENCH_JSON "));
  if (!line) throw new Error(`wrk printed no summary:\n${out}`);
  const s = JSON.parse(line.slice("BENCH_JSON ".length)) as {
    requests: number;
    duration_us: number;
    errors: { connect: number; read: number; write: number; status: number; timeout: number };
    latency_us: { p50: number; p90: number; p99: number; p999: number; max: number; mean: number };
  };
  const ms = (us: number) => Math.round(us / 10) / 100;
  return {
    connections: opts.connections,
    seconds: opts.seconds,
    requests: s.requests,
    rps: Math.round(s.requests / (s.duration_us / 1e6)),
    non2xx: s.errors.status,
    socketErrors: s.errors.connect + s.errors.read + s.errors.write + s.errors.timeout,
    latencyMs: { p50: ms(s.latency_us.p50), p90: ms(s.latency_us.p90), p99: ms(s.latency_us.p99), p999: ms(s.latency_us.p999), max: ms(s.latency_us.max), mean: ms(s.latency_us.mean) },
  };
}

// ---------------------------------------------------------------------------------------------
// Output

export function markdownTable(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(cells[0]!), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...cells.slice(1).map(line)].join("\n");
}

export const fmtInt = (n: number) => Math.round(n).toLocaleString("en-US");
export const fmtMs = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));

/** The value at quantile `q` (0 to 1) of `xs`, the nearest rank below (NaN when there is none). */
export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
}

/** Random lower-case hex of `digits` digits (a signal of a list nobody will send). */
export function randomHex(digits: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(digits / 2))).toString("hex");
}

/** Media match jobs waiting or running on the server at `url`, from its /metrics. */
export async function pendingMediaJobs(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^flagstaff_job_lane_depth\{lane="media\.match",status="(?:pending|running)"\} (\S+)$/gm)) n += Number(m[1]);
  return n;
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * Clients filing plain reports into a project one after the other (5 ms apart), each report's
 * latency kept with when it was sent (ms after `started`): what intake waits while a bench step
 * does something else beside it (index-rebuild.ts, project-delete.ts). `stop` ends them.
 */
export function intakeClients(opts: { url: string; projectId: string; key: string; clients?: number }): { latencies: { at: number; ms: number }[]; started: number; stop(): Promise<void> } {
  const latencies: { at: number; ms: number }[] = [];
  const headers = { authorization: `Bearer ${opts.key}`, "content-type": "application/json" };
  let stopping = false;
  const started = performance.now();
  const client = async () => {
    while (!stopping) {
      const sent = performance.now();
      const res = await fetch(`${opts.url}/sdk/flagstaff/v1/projects/${opts.projectId}/reports`, {
        method: "POST",
        headers,
        body: JSON.stringify({ subject: { type: "user", externalId: `u-${crypto.randomUUID()}` }, reason: "spam" }),
      });
      if (res.status !== 201) throw new Error(`a report answered ${res.status}`);
      latencies.push({ at: sent - started, ms: performance.now() - sent });
      await Bun.sleep(5);
    }
  };
  const running = Array.from({ length: opts.clients ?? 2 }, client);
  return {
    latencies,
    started,
    stop: async () => {
      stopping = true;
      await Promise.all(running);
    },
  };
}
