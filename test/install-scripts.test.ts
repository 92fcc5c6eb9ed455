/**
 * The dependencies' install scripts the project needs are approved, pinned, in package.json's
 * `allowScripts` (npm 11 warns about the others; a later npm runs none that is not approved, and
 * Bun's own, which puts the platform's `bun` binary in place, is one of them). npm verifies a
 * pinned approval ("bun@1.4.5") against the version in the package's `resolved` URL in
 * package-lock.json, so those URLs must be there (.npmrc keeps them). CI installs with
 * `npm ci --strict-allow-scripts` (.ci/run), which fails on any script not approved.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers/server.ts";

interface LockEntry {
  version?: string;
  resolved?: string;
  hasInstallScript?: boolean;
}

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { allowScripts?: Record<string, boolean>; devDependencies: Record<string, string> };
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };

/** The installed packages with install scripts: name, version, where the lockfile says it comes from. */
const withScripts = Object.entries(lock.packages)
  .filter(([path, entry]) => path !== "" && entry.hasInstallScript)
  .map(([path, entry]) => ({ name: path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length), version: entry.version ?? "", resolved: entry.resolved }));

/** The registry's tarball URL of a package (npm reads the trusted name and version from it). */
const tarball = (name: string, version: string) => `https://registry.npmjs.org/${name}/-/${name.split("/").pop()}-${version}.tgz`;

test("every dependency with install scripts is approved in allowScripts, pinned to its version, and the lockfile names that version in its resolved URL", () => {
  // Bun's script installs the binary the whole project runs on; esbuild's (three versions, for
  // drizzle-kit and tsx) check its platform binary.
  expect(withScripts.map((p) => p.name).sort()).toEqual(["bun", "esbuild", "esbuild", "esbuild"]);
  const approvals = pkg.allowScripts ?? {};
  for (const p of withScripts) {
    expect([`${p.name}@${p.version}`, approvals[`${p.name}@${p.version}`]]).toEqual([`${p.name}@${p.version}`, true]);
    expect([p.name, p.resolved]).toEqual([p.name, tarball(p.name, p.version)]);
  }
  // Bun's approval is for the Bun this project pins.
  expect(approvals[`bun@${pkg.devDependencies.bun}`]).toBe(true);
});

test("allowScripts holds pinned approvals of installed packages only: no name-only or range entry, nothing stale", () => {
  const installed = new Set(withScripts.map((p) => `${p.name}@${p.version}`));
  for (const [key, allowed] of Object.entries(pkg.allowScripts ?? {})) {
    expect([key, allowed]).toEqual([key, true]);
    expect([key, /^(@[\w.-]+\/)?[\w.-]+@\d+\.\d+\.\d+$/.test(key)]).toEqual([key, true]);
    expect([key, installed.has(key)]).toEqual([key, true]);
  }
});

test(".npmrc keeps the resolved URLs in package-lock.json, whatever the user's npm configuration", () => {
  const npmrc = readFileSync(join(ROOT, ".npmrc"), "utf8");
  expect(npmrc).toMatch(/^omit-lockfile-registry-resolved=false$/m);
});

test("the Bun running the suite is the one package.json pins (the one its install script put in place)", () => {
  expect(pkg.devDependencies.bun).toBe(Bun.version);
});
