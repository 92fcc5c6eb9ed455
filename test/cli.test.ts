import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rawDb } from "./helpers/raw-db.ts";
import { engineEnv, runCli } from "./helpers/server.ts";

const dir = mkdtempSync(join(tmpdir(), "flagstaff-cli-"));
const env = { FLAGSTAFF_DB: join(dir, "db.sqlite") };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("migrate applies the migrations once", async () => {
  const first = await runCli(["migrate"], env);
  expect(first.code).toBe(0);
  expect(first.stdout).toMatch(/^[1-9]\d* migration\(s\) applied/);
  const second = await runCli(["migrate"], env);
  expect(second.stdout).toMatch(/^0 migration\(s\) applied/);
});

test("init --json prints exactly one JSON object with the keys and the admin login", async () => {
  const r = await runCli(["init", "--json", "--org", "Acme Games", "--project", "Forum"], env);
  expect(r.code).toBe(0);
  const lines = r.stdout.trim().split("\n");
  expect(lines.length).toBe(1);
  const out = JSON.parse(lines[0]!);
  expect(Object.keys(out).sort()).toEqual(["adminEmail", "adminPassword", "orgSlug", "projectId", "publishableKey", "secretKey"]);
  expect(out.orgSlug).toBe("acme-games");
  expect(out.projectId).toMatch(/^[0-9a-f-]{36}$/);
  expect(out.secretKey).toMatch(/^sk_live_/);
  expect(out.publishableKey).toMatch(/^pk_live_/);
  expect(out.adminPassword.length).toBeGreaterThanOrEqual(16);
});

test("keys create, list and revoke", async () => {
  const init = JSON.parse((await runCli(["init", "--json", "--org", "Keys Org"], env)).stdout);
  const created = await runCli(["keys", "create", "--project", init.projectId, "--kind", "publishable", "--json"], env);
  expect(created.code).toBe(0);
  const { key, apiKey } = JSON.parse(created.stdout);
  expect(key).toMatch(/^pk_live_/);

  const listed = JSON.parse((await runCli(["keys", "list", "--org", init.orgSlug, "--json"], env)).stdout);
  expect(listed.map((k: { id: string }) => k.id)).toContain(apiKey.id);
  // Keys are stored hashed: the listing never has them.
  expect(JSON.stringify(listed)).not.toContain(key);

  const revoked = await runCli(["keys", "revoke", apiKey.id], env);
  expect(revoked.code).toBe(0);
  const after = JSON.parse((await runCli(["keys", "list", "--org", init.orgSlug, "--json"], env)).stdout);
  expect(after.find((k: { id: string }) => k.id === apiKey.id).revokedAt).toBeString();
});

test("keys are stored as hashes only", async () => {
  const init = JSON.parse((await runCli(["init", "--json", "--org", "Hash Org"], env)).stdout);
  const db = await rawDb(env.FLAGSTAFF_DB, { readonly: true });
  const dump = JSON.stringify(await db.all("SELECT * FROM api_keys"));
  await db.close();
  expect(dump).not.toContain(init.secretKey);
  expect(dump).not.toContain(init.publishableKey.slice(12));
});

test("an invalid configuration stops start-up with a message naming the variable", async () => {
  const r = await runCli(["serve"], { ...env, PORT: "not-a-port" });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("PORT");
  const r2 = await runCli(["migrate"], { ...env, FLAGSTAFF_REPORT_RATE_LIMIT: "-3" });
  expect(r2.code).toBe(2);
  expect(r2.stderr).toContain("FLAGSTAFF_REPORT_RATE_LIMIT");
});

test("an unknown command exits 2 with the usage", async () => {
  const r = await runCli(["frobnicate"], env);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("usage: flagstaff");
});

test("serve on an empty database prints usable keys and the admin login once", async () => {
  const fresh = join(dir, "fresh.sqlite");
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src", "cli.ts"), "serve"], {
    env: await engineEnv({ FLAGSTAFF_DB: fresh, PORT: "0", HOST: "127.0.0.1", FLAGSTAFF_LOG_LEVEL: "warn" }),
    stdout: "pipe",
  });
  const reader = proc.stdout.getReader();
  let out = "";
  while (!out.includes("listening on")) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  const url = /listening on (\S+)/.exec(out)![1]!;
  const key = /Secret key\s+(sk_live_\S+)/.exec(out)![1]!;
  const projectId = /Project ID\s+(\S+)/.exec(out)![1]!;
  expect(out).toMatch(/Publishable key\s+pk_live_/);
  expect(out).toMatch(/admin@\S+ \/ \S+/);
  const res = await fetch(`${url}/sdk/flagstaff/v1/projects/${projectId}/identities/user/u-1`, {
    method: "PUT",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ display: { name: "Ada" } }),
  });
  expect(res.status).toBe(200);
  proc.kill("SIGTERM");
  expect(await proc.exited).toBe(0);

  // A second start on the same database does not print keys again.
  const again = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src", "cli.ts"), "serve"], {
    env: await engineEnv({ FLAGSTAFF_DB: fresh, PORT: "0", HOST: "127.0.0.1", FLAGSTAFF_LOG_LEVEL: "warn" }),
    stdout: "pipe",
  });
  const r2 = again.stdout.getReader();
  let out2 = "";
  while (!out2.includes("listening on")) {
    const { value, done } = await r2.read();
    if (done) break;
    out2 += new TextDecoder().decode(value);
  }
  expect(out2).not.toContain("sk_live_");
  again.kill("SIGTERM");
  await again.exited;
});
