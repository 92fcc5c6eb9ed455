/**
 * An older release of Flagstaff, built from git, for the upgrade tests (test/upgrade.test.ts):
 * the sources of a pinned commit (`git archive`), run with Bun as `bun src/cli.ts` against this
 * checkout's node_modules. That is possible only while the commit's package-lock.json names
 * nothing this checkout's does not have at the same version (checked here, so a dependency
 * change fails loudly instead of running the old code on other libraries); a compiled binary is
 * not needed, and the tree costs well under a second.
 *
 * The tree is kept between runs under the system's temporary folder (flagstaff-release-<commit>),
 * written whole or not at all. A shallow clone lacks the commit: it is fetched (`git fetch
 * --unshallow`), and a checkout without it fails the test with the command that fixes it.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./server.ts";

function git(args: string[], opts: { allowFailure?: boolean } = {}): { ok: boolean; out: string; err: string } {
  const r = Bun.spawnSync(["git", ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const out = r.stdout.toString();
  const err = r.stderr.toString();
  if (!r.success && !opts.allowFailure) throw new Error(`git ${args.join(" ")} failed: ${err}`);
  return { ok: r.success, out, err };
}

/** The full commit id, fetching history first when this is a shallow clone without it. */
export function resolveCommit(commit: string): string {
  const has = () => git(["rev-parse", "--verify", "--quiet", `${commit}^{commit}`], { allowFailure: true });
  let found = has();
  if (!found.ok && git(["rev-parse", "--is-shallow-repository"]).out.trim() === "true") {
    git(["fetch", "--unshallow", "--quiet"], { allowFailure: true });
    found = has();
  }
  if (!found.ok) {
    throw new Error(`commit ${commit} is not in this checkout's history: the upgrade tests build it from git (git fetch --unshallow, or clone without --depth)`);
  }
  return found.out.trim();
}

interface Lock {
  packages: Record<string, { version?: string }>;
}

/** What the commit's package-lock.json names that this checkout's node_modules lacks, or has at another version. */
export function missingDependencies(commit: string): string[] {
  const old = JSON.parse(git(["show", `${commit}:package-lock.json`]).out) as Lock;
  const now = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as Lock;
  const out: string[] = [];
  for (const [path, p] of Object.entries(old.packages)) {
    if (path === "") continue;
    const here = now.packages[path];
    if (!here) out.push(`${path}@${p.version} (not installed here)`);
    else if (here.version !== p.version) out.push(`${path}@${p.version} (here ${here.version})`);
  }
  return out;
}

export interface OldRelease {
  commit: string;
  /** The source tree. */
  dir: string;
  /** Its src/cli.ts, for TestServer and runCli. */
  cli: string;
}

/** The source tree of `commit`, ready to run with `bun src/cli.ts`. */
export function oldRelease(commit: string): OldRelease {
  const sha = resolveCommit(commit);
  const dir = join(tmpdir(), `flagstaff-release-${sha}`);
  if (!existsSync(join(dir, "src", "cli.ts"))) {
    const missing = missingDependencies(sha);
    if (missing.length) {
      throw new Error(`${commit}'s package-lock.json needs packages this checkout does not have: ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? "…" : ""} (pin an older release whose dependencies this one still has)`);
    }
    const partial = `${dir}.${process.pid}.partial`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    const archive = Bun.spawnSync(["sh", "-c", `git archive ${sha} | tar -x -C '${partial}'`], { cwd: ROOT, stderr: "pipe" });
    if (!archive.success) throw new Error(`git archive ${sha} failed: ${archive.stderr.toString()}`);
    symlinkSync(realpathSync(join(ROOT, "node_modules")), join(partial, "node_modules"));
    // Both test passes may run at once (scripts/test.sh) and build the same release: the first
    // tree in place stays (a server of the other pass may be running from it), the other goes.
    if (!existsSync(join(dir, "src", "cli.ts"))) rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(partial, dir);
    } catch (e) {
      if (!existsSync(join(dir, "src", "cli.ts"))) throw e;
      rmSync(partial, { recursive: true, force: true });
    }
  }
  return { commit, dir, cli: join(dir, "src", "cli.ts") };
}

/** The REST routes of a source tree (its own restRoutes(), run in it): what its API answers. */
export async function restRoutesOf(dir: string): Promise<{ method: string; path: string }[]> {
  const proc = Bun.spawn([process.execPath, "-e", `import { restRoutes } from "./src/api/rest.ts"; console.log(JSON.stringify(restRoutes().map((r) => ({ method: r.method, path: r.path }))))`], {
    cwd: dir,
    env: { ...process.env, FLAGSTAFF_LOG_LEVEL: "silent" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`the routes of ${dir}: ${err}`);
  return JSON.parse(out.trim().split("\n").at(-1)!) as { method: string; path: string }[];
}
