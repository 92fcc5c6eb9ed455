/**
 * Starts a real Flagstaff server as a child process (`flagstaff serve` on a random port, with
 * its own database in a temporary folder) and talks HTTP to it, as a client would.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

export const ROOT = join(import.meta.dir, "..", "..");
const CLI = join(ROOT, "src", "cli.ts");

import type { InitResult } from "../../src/commands/init.ts";
import type { OrgClient, SdkClient } from "../../clients/typescript/index.ts";
import { checkedOrgClient, checkedSdkClient } from "./contract.ts";
import { databaseForPath, TEST_PG_URL } from "./pg.ts";

export type { InitResult };

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as is instead of JSON.stringify(body). */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface CallResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/**
 * The environment of a flagstaff process for this pass: on the PostgreSQL pass, the database
 * standing for its FLAGSTAFF_DB path (test/helpers/pg.ts) unless it names one itself; no drain
 * period at shutdown unless the test sets FLAGSTAFF_SHUTDOWN_DRAIN_MS.
 */
export async function engineEnv(env: Record<string, string | undefined>): Promise<Record<string, string | undefined>> {
  // A test's server stops at once (no drain period: src/commands/serve.ts) unless it asks for one.
  const full: Record<string, string | undefined> = { FLAGSTAFF_SHUTDOWN_DRAIN_MS: "0", ...process.env, ...env };
  if (!TEST_PG_URL || env.FLAGSTAFF_DATABASE_URL !== undefined) return full;
  if (!full.FLAGSTAFF_DB) throw new Error("a flagstaff process of the tests needs FLAGSTAFF_DB (on PostgreSQL, it names the database)");
  return { ...full, FLAGSTAFF_DATABASE_URL: (await databaseForPath(full.FLAGSTAFF_DB)).url };
}

/**
 * Runs the flagstaff command line against a database; returns stdout, stderr and the exit code.
 * `cli`: another source tree's src/cli.ts (an older release, test/helpers/old-release.ts).
 */
export async function runCli(args: string[], env: Record<string, string>, cli = CLI) {
  const proc = Bun.spawn([process.execPath, cli, ...args], {
    env: await engineEnv({ FLAGSTAFF_LOG_LEVEL: "warn", ...env }),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { stdout, stderr, code };
}

export class TestServer {
  url = "";
  proc: Subprocess<"ignore", "pipe", "pipe"> | null = null;
  output = "";

  constructor(
    readonly dir: string,
    readonly env: Record<string, string>,
    /** The organization `init` made before the server started. */
    readonly demo: InitResult,
    /** The src/cli.ts it runs: this checkout's, or an older release's (test/helpers/old-release.ts). */
    readonly cli = CLI,
  ) {}

  get dbPath(): string {
    return this.env.FLAGSTAFF_DB!;
  }

  get sdk(): string {
    return `${this.url}/sdk/flagstaff/v1`;
  }

  /** Starts (or restarts) the serve process and waits for its "listening" line. */
  async start(): Promise<void> {
    const proc = Bun.spawn([process.execPath, this.cli, "serve"], {
      env: await engineEnv(this.env),
      stdout: "pipe",
      stderr: "pipe",
    });
    this.proc = proc;
    this.url = await waitForListening(proc, (chunk) => (this.output += chunk));
  }

  /** A second organization (or another of the same kind) in the same database. */
  async initOrg(org: string, project = "Project", plan = "enterprise"): Promise<InitResult> {
    const r = await runCli(["init", "--json", "--org", org, "--project", project, "--plan", plan], this.env, this.cli);
    if (r.code !== 0) throw new Error(`init failed: ${r.stderr}`);
    return JSON.parse(r.stdout) as InitResult;
  }

  /**
   * The typed SDK client (clients/typescript), every answer checked against the published
   * document (test/helpers/contract.ts). `key` defaults to the demo secret key; null sends none.
   */
  sdkClient(key: string | null = this.demo.secretKey): Promise<SdkClient> {
    return checkedSdkClient(this.url, key);
  }

  /** The typed organization client, every answer checked against the published document. */
  orgClient(key: string | null = this.demo.secretKey): Promise<OrgClient> {
    return checkedOrgClient(this.url, key);
  }

  /**
   * One REST call by hand (`/api/…` and `/healthz` from the root, other paths under the SDK's
   * prefix). The dashboard's procedures are not reached from here: test/helpers/dashboard.ts
   * calls them through tRPC's typed client.
   */
  async call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<CallResult<T>> {
    const key = opts.key === undefined ? this.demo.secretKey : opts.key;
    const headers: Record<string, string> = { ...opts.headers };
    if (key) headers.authorization = `Bearer ${key}`;
    let body: string | undefined = opts.rawBody;
    if (body === undefined && opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    }
    const url = path.startsWith("http") ? path : path.startsWith("/api/") || path === "/healthz" ? this.url + path : this.sdk + path;
    const res = await fetch(url, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the test sees the text
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  /** Kills the server without letting it clean up (a crash). */
  async kill(): Promise<void> {
    this.proc?.kill("SIGKILL");
    await this.proc?.exited;
    this.proc = null;
  }

  async stop(): Promise<void> {
    if (this.proc) {
      this.proc.kill("SIGTERM");
      await this.proc.exited;
      this.proc = null;
    }
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
    if (TEST_PG_URL && this.env.FLAGSTAFF_DATABASE_URL === undefined) await (await databaseForPath(this.dbPath)).drop();
  }
}

async function waitForListening(proc: Subprocess<"ignore", "pipe", "pipe">, onOutput: (s: string) => void): Promise<string> {
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const { done, value } = await reader.read();
    if (done) break;
    const chunk = decoder.decode(value);
    seen += chunk;
    onOutput(chunk);
    const match = /Flagstaff listening on (http:\/\/\S+)/.exec(seen);
    if (match?.[1]) {
      // Keep draining stdout so the child never blocks on a full pipe.
      void (async () => {
        for (;;) {
          const r = await reader.read().catch(() => ({ done: true, value: undefined }));
          if (r.done) break;
          onOutput(decoder.decode(r.value));
        }
      })();
      void new Response(proc.stderr).text().then(onOutput);
      return match[1];
    }
  }
  const stderr = await new Response(proc.stderr).text();
  throw new Error(`server did not start:\n${seen}\n${stderr}`);
}

/** A fresh database with one initialised organization, and a server on a random port. */
export async function startServer(env: Record<string, string> = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), "flagstaff-test-"));
  const fullEnv = {
    FLAGSTAFF_DB: join(dir, "flagstaff.db"),
    PORT: "0",
    HOST: "127.0.0.1",
    FLAGSTAFF_LOG_LEVEL: "warn",
    ...env,
  };
  const init = await runCli(["init", "--json"], fullEnv);
  if (init.code !== 0) throw new Error(`init failed: ${init.stderr}`);
  const server = new TestServer(dir, fullEnv, JSON.parse(init.stdout) as InitResult);
  await server.start();
  return server;
}
