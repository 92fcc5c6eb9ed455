/**
 * A throwaway PostgreSQL cluster for the tests' PostgreSQL pass.
 *
 *   bun scripts/pg-cluster.ts -- <command...>
 *
 * initdb's a fresh cluster in a new temporary folder (C locale, UTF8, trust authentication),
 * starts it listening on 127.0.0.1 only, on a free port, with its unix socket inside that folder,
 * runs the command with FLAGSTAFF_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:PORT/postgres
 * (the superuser) in its environment, then stops the cluster and removes the folder (also when the
 * command fails or on SIGINT/SIGTERM), and exits with the command's exit code.
 *
 * Importable too: `startPgCluster()` starts one and returns its admin URL, `stop()`,
 * `restart(mode)`, and `shutDown(mode)` / `startUp()` (scripts/chaos.ts restarts it, and keeps it
 * down for a while, under load).
 *
 * The server programs come from FLAGSTAFF_PG_BINDIR, else the newest /usr/lib/postgresql/N/bin
 * (Debian's layout; scripts/ensure-postgres.sh installs it), else `pg_config --bindir` or PATH.
 * PostgreSQL refuses to run as root: as root, it runs as the `postgres` system user (runuser).
 * Durability stays as configured by default (fsync on).
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";

export interface PgCluster {
  /** Superuser URL: postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  /** The temporary folder (data directory, socket, log), removed by stop(). */
  dir: string;
  /** Stops the server and removes its folder; safe to call more than once. */
  stop(): Promise<void>;
  /**
   * Restarts the server on the same port and data (`pg_ctl restart -m mode`): "fast" ends every
   * session and checkpoints, "immediate" kills the server outright (crash recovery at start).
   * Resolves once it accepts connections again.
   */
  restart(mode?: "smart" | "fast" | "immediate"): Promise<void>;
  /**
   * Stops the server and keeps its data (`pg_ctl stop -m mode`): nothing listens on its port
   * until startUp(). scripts/chaos.ts (`--faults`) keeps PostgreSQL down for a while this way.
   */
  shutDown(mode?: "smart" | "fast" | "immediate"): Promise<void>;
  /** Starts the server shut down by shutDown() again, on the same port; resolves once it accepts connections. */
  startUp(): Promise<void>;
}

export interface PgClusterOptions {
  /** Extra `-c name=value` server settings. */
  settings?: Record<string, string | number>;
  /** Prints what it does on stderr. */
  verbose?: boolean;
}

const RUN_AS = "postgres";

/**
 * A new database of the cluster at `clusterUrl` as Flagstaff needs it (C collation, UTF-8:
 * src/db/open.ts checks it), answered as its URL. `name` is an identifier the caller chose. Through
 * `admin` when the caller holds a superuser connection, else one opened and closed here.
 */
export async function newDatabase(clusterUrl: string, name: string, admin?: postgres.Sql): Promise<string> {
  const sql = admin ?? postgres(clusterUrl, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`CREATE DATABASE ${name} TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C' ENCODING 'UTF8'`);
  } finally {
    if (!admin) await sql.end();
  }
  const u = new URL(clusterUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** The folder holding initdb, pg_ctl and pg_isready. */
export function findPgBinDir(): string {
  const fromEnv = process.env.FLAGSTAFF_PG_BINDIR;
  if (fromEnv) {
    if (!existsSync(join(fromEnv, "initdb"))) throw new Error(`FLAGSTAFF_PG_BINDIR=${fromEnv} holds no initdb`);
    return fromEnv;
  }
  const base = "/usr/lib/postgresql";
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => existsSync(join(base, v, "bin", "initdb")))
      .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
    if (versions[0]) return join(base, versions[0], "bin");
  }
  const pgConfig = Bun.which("pg_config");
  if (pgConfig) {
    const r = spawnSync(pgConfig, ["--bindir"], { encoding: "utf8" });
    const dir = r.stdout?.trim();
    if (r.status === 0 && dir && existsSync(join(dir, "initdb"))) return dir;
  }
  const initdb = Bun.which("initdb");
  if (initdb) return join(realpathSync(initdb), "..");
  throw new Error(
    "PostgreSQL's server programs (initdb, pg_ctl) were not found under /usr/lib/postgresql/*/bin: " +
      "run `bash scripts/ensure-postgres.sh` (or apt-get install postgresql), or set FLAGSTAFF_PG_BINDIR",
  );
}

/** The command prefix that runs a program as the user owning the cluster. */
function runAsPrefix(): { prefix: string[]; uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => {
    const r = spawnSync("id", [flag, RUN_AS], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`running as root, and there is no '${RUN_AS}' user to run PostgreSQL as (it refuses to run as root)`);
    return Number(r.stdout.trim());
  };
  const uid = id("-u");
  const gid = id("-g");
  const runuser = Bun.which("runuser") ?? (existsSync("/usr/sbin/runuser") ? "/usr/sbin/runuser" : null);
  if (!runuser) throw new Error("running as root, and there is no runuser to run PostgreSQL as the postgres user");
  return { prefix: [runuser, "-u", RUN_AS, "--"], uid, gid };
}

interface RunResult {
  code: number;
  output: string;
}

async function run(argv: string[], cwd: string): Promise<RunResult> {
  const proc = Bun.spawn(argv, { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { ...process.env, LC_ALL: "C" } });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, output: (out + err).trim() };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => (port ? resolve(port) : reject(new Error("could not pick a free port"))));
    });
  });
}

function quoteConf(value: string): string {
  return `'${value.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;
}

function postmasterPid(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts a throwaway cluster; see the top of this file. */
export async function startPgCluster(opts: PgClusterOptions = {}): Promise<PgCluster> {
  const log = (msg: string) => opts.verbose && console.error(`pg-cluster: ${msg}`);
  const bin = findPgBinDir();
  const as = runAsPrefix();
  const prefix = as?.prefix ?? [];
  const dir = mkdtempSync(join(tmpdir(), "flagstaff-pg-"));
  const dataDir = join(dir, "data");
  const logFile = join(dir, "server.log");
  const pgCtl = (...args: string[]) => run([...prefix, join(bin, "pg_ctl"), "-D", dataDir, ...args], dir);

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (existsSync(join(dataDir, "postmaster.pid"))) {
      const pid = postmasterPid(dataDir);
      let r = await pgCtl("stop", "-m", "fast", "-w", "-t", "30");
      if (r.code !== 0 && pid && alive(pid)) {
        log(`fast shutdown failed (${r.output}); immediate shutdown`);
        r = await pgCtl("stop", "-m", "immediate", "-w", "-t", "30");
      }
      if (pid && alive(pid)) {
        process.kill(pid, "SIGKILL");
        for (let i = 0; i < 50 && alive(pid); i++) await Bun.sleep(100);
      }
    }
    rmSync(dir, { recursive: true, force: true });
    log(`stopped and removed ${dir}`);
  };

  try {
    if (as) chownSync(dir, as.uid, as.gid);
    log(`initdb ${dataDir} (${bin}${as ? `, as ${RUN_AS}` : ""})`);
    const init = await run(
      [...prefix, join(bin, "initdb"), "-D", dataDir, "-U", "postgres", "--locale=C", "--encoding=UTF8", "--auth=trust"],
      dir,
    );
    if (init.code !== 0) throw new Error(`initdb failed (exit ${init.code}):\n${init.output}`);

    const settings: Record<string, string | number> = {
      listen_addresses: "127.0.0.1",
      unix_socket_directories: dir,
      max_connections: 400,
      ...opts.settings,
    };
    const conf = Object.entries(settings)
      .map(([k, v]) => `${k} = ${typeof v === "number" ? v : quoteConf(v)}\n`)
      .join("");
    appendFileSync(join(dataDir, "postgresql.conf"), `\n# scripts/pg-cluster.ts\n${conf}`);

    // The port is picked free, then bound by the server a moment later: retry if it was taken.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      log(`starting on 127.0.0.1:${port}`);
      const start = await pgCtl("start", "-w", "-t", "60", "-l", logFile, "-o", `-p ${port}`);
      const isReady = async () => {
        const ready = await run([join(bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-t", "30"], dir);
        if (ready.code !== 0) throw new Error(`the server started but does not accept connections (pg_isready exit ${ready.code})\n${serverLog(logFile)}`);
      };
      if (start.code === 0) {
        await isReady();
        const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
        log(`ready: ${url}`);
        const restart = async (mode: "smart" | "fast" | "immediate" = "fast") => {
          if (stopped) throw new Error("the cluster was stopped");
          log(`restart -m ${mode}`);
          // -l: the server's output to its log file (not to our pipe, which it would keep open).
          const r = await pgCtl("restart", "-m", mode, "-w", "-t", "60", "-l", logFile, "-o", `-p ${port}`);
          if (r.code !== 0) throw new Error(`pg_ctl restart -m ${mode} failed (exit ${r.code}): ${r.output}\n${serverLog(logFile).slice(-2000)}`);
          await isReady();
        };
        const shutDown = async (mode: "smart" | "fast" | "immediate" = "fast") => {
          if (stopped) throw new Error("the cluster was stopped");
          log(`stop -m ${mode}`);
          const r = await pgCtl("stop", "-m", mode, "-w", "-t", "60");
          if (r.code !== 0) throw new Error(`pg_ctl stop -m ${mode} failed (exit ${r.code}): ${r.output}\n${serverLog(logFile).slice(-2000)}`);
        };
        const startUp = async () => {
          if (stopped) throw new Error("the cluster was stopped");
          log("start");
          const r = await pgCtl("start", "-w", "-t", "60", "-l", logFile, "-o", `-p ${port}`);
          if (r.code !== 0) throw new Error(`pg_ctl start failed (exit ${r.code}): ${r.output}\n${serverLog(logFile).slice(-2000)}`);
          await isReady();
        };
        return { url, port, dir, stop, restart, shutDown, startUp };
      }
      const serverOut = serverLog(logFile);
      if (attempt < 5 && /could not bind|address already in use/i.test(serverOut)) {
        log(`port ${port} was taken; trying another`);
        continue;
      }
      throw new Error(`pg_ctl start failed (exit ${start.code}): ${start.output}\n${serverOut}`);
    }
  } catch (err) {
    await stop().catch(() => rmSync(dir, { recursive: true, force: true }));
    throw err;
  }
}

function serverLog(logFile: string): string {
  try {
    return readFileSync(logFile, "utf8").trim();
  } catch {
    return "";
  }
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };

async function main(): Promise<number> {
  const args = Bun.argv.slice(2);
  if (args[0] === "--") args.shift();
  if (args.length === 0) {
    console.error("usage: bun scripts/pg-cluster.ts -- <command...>");
    return 2;
  }
  const verbose = !!process.env.FLAGSTAFF_PG_CLUSTER_VERBOSE;

  let child: ReturnType<typeof Bun.spawn> | null = null;
  let signalled: NodeJS.Signals | null = null;
  const onSignal = (sig: NodeJS.Signals) => {
    signalled ??= sig;
    // A terminal's Ctrl-C reaches the child too (same process group); a SIGTERM sent to us only
    // does not, so pass it on. Either way the cluster is stopped once the child has exited.
    if (child && child.exitCode === null) child.kill(sig);
  };
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(sig, onSignal);

  let cluster: PgCluster;
  try {
    cluster = await startPgCluster({ verbose });
  } catch (err) {
    console.error(`pg-cluster: could not start PostgreSQL: ${err instanceof Error ? err.message : err}`);
    return signalled ? 128 + (SIGNAL_NUMBERS[signalled] ?? 1) : 1;
  }
  try {
    if (signalled) return 128 + (SIGNAL_NUMBERS[signalled] ?? 1);
    console.error(`pg-cluster: PostgreSQL ready at ${cluster.url}`);
    try {
      child = Bun.spawn(args, {
        stdio: ["inherit", "inherit", "inherit"],
        env: { ...process.env, FLAGSTAFF_TEST_POSTGRES_URL: cluster.url },
      });
    } catch (err) {
      console.error(`pg-cluster: could not run ${args[0]}: ${err instanceof Error ? err.message : err}`);
      return 127;
    }
    const code = await child.exited;
    if (child.signalCode) return 128 + (SIGNAL_NUMBERS[child.signalCode] ?? 1);
    return code;
  } finally {
    await cluster.stop().catch((err) => console.error(`pg-cluster: stopping PostgreSQL failed: ${err instanceof Error ? err.message : err}`));
  }
}

if (import.meta.main) {
  process.exit(await main());
}
