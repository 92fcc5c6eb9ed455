/**
 * Upgrades as an operator makes them: an older release built from git (test/helpers/old-release.ts)
 * fills its database through its own API, then the current code migrates it and must answer
 * every question the older one answered the same way (fields it adds are its documented
 * additions), keep its keys, its dashboard sign-in and its running suspensions working, and give
 * every decided case its decision. Afterwards the older release must refuse the database (those
 * that have the guard: a211d7f on). On PostgreSQL, an older and a current instance also serve
 * the same database side by side while cases are decided through both (a rolling upgrade).
 *
 * The releases are pinned commits until there is a tagged release; each is named with what it
 * stands for. Each upgrade prints its figures (answers and objects compared, how long `migrate`
 * took).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VERSION } from "../src/version.ts";
import { signIn } from "./helpers/dashboard.ts";
import { oldRelease, restRoutesOf } from "./helpers/old-release.ts";
import { databaseForPath, TEST_ENGINE } from "./helpers/pg.ts";
import { rawDb } from "./helpers/raw-db.ts";
import { runCli, TestServer, type InitResult } from "./helpers/server.ts";
import { askAgain, askEverything, compareAnswers, fillThroughApi } from "./helpers/upgrade-scenario.ts";

interface Pinned {
  commit: string;
  what: string;
  /** It refuses a database with more migrations than it knows (the guard landed with a211d7f). */
  guarded: boolean;
}

const C8B23AD: Pinned = { commit: "c8b23ad", what: "the first build with the operations guide (binary, backup, metrics), SQLite only", guarded: false };
const FB09570: Pinned = { commit: "fb09570", what: "the last build before PostgreSQL", guarded: false };
const A211D7F: Pinned = { commit: "a211d7f", what: "the first build with PostgreSQL, whose foundation the next commit regenerated", guarded: true };
const AB7C4AA: Pinned = { commit: "ab7c4aa", what: "the last build before cases recorded their decisions, with the rolling upgrades guide", guarded: true };

const LAST_0_1: Pinned = { commit: "400f0dc", what: "the last 0.1.0 build (the previous release)", guarded: true };

/** When a release is tagged, its commit joins these (and becomes "the previous release" of the next). */
const PINNED: Record<"sqlite" | "postgres", Pinned[]> = {
  sqlite: [C8B23AD, FB09570, A211D7F, LAST_0_1],
  postgres: [A211D7F, AB7C4AA, LAST_0_1],
};

const HOUR = 3_600_000;
/** How soon after the last instance of a release before the audit chain stopped the chain verifies (docs/audit.md, "Upgrading"). */
const UPGRADE_CHAINED_WITHIN_MS = 60_000;

/** A webhook receiver on loopback that takes every delivery at once. */
function receiver() {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(null, { status: 204 }) });
  return { url: `http://127.0.0.1:${server.port}/hooks`, stop: () => server.stop(true) };
}

function envFor(dir: string): Record<string, string> {
  return {
    FLAGSTAFF_DB: join(dir, "flagstaff.db"),
    PORT: "0",
    HOST: "127.0.0.1",
    FLAGSTAFF_LOG_LEVEL: "warn",
    FLAGSTAFF_REPORT_RATE_LIMIT: "100000",
    // The receiver is on loopback.
    FLAGSTAFF_SCAN_ALLOW_PRIVATE: "true",
  };
}

/** What a test can see of the whole database: its file's bytes on SQLite, every row on PostgreSQL. */
async function fingerprint(path: string): Promise<string> {
  if (TEST_ENGINE === "sqlite") {
    expect(existsSync(`${path}-wal`)).toBe(false);
    return createHash("sha256").update(readFileSync(path)).digest("hex");
  }
  const db = await rawDb(path, { readonly: true });
  try {
    const tables = await db.all<{ name: string }>("SELECT table_schema || '.' || table_name AS name FROM information_schema.tables WHERE table_schema IN ('public', 'drizzle') ORDER BY 1");
    const hash = createHash("sha256");
    for (const t of tables) hash.update(`${t.name}=${JSON.stringify(await db.all(`SELECT * FROM ${t.name.split(".").map((p) => `"${p}"`).join(".")} ORDER BY 1`))}\n`);
    return hash.digest("hex");
  } finally {
    await db.close();
  }
}

/**
 * The closed cases, those without a decision, and those whose decision's code is not what their
 * reports record (a resolved, appealed or closed case: its reports' resolution code; a dismissed
 * one: their dismissal reason).
 */
async function undecided(path: string): Promise<{ closed: number; withoutDecision: number; codeDiffers: number }> {
  const db = await rawDb(path, { readonly: true });
  try {
    const closed = await db.all<{ id: string; status: string; decision: string | null; decided_at: number | null; decision_code: string | null }>(
      "SELECT id, status, decision, decided_at, decision_code FROM cases WHERE is_open = 0",
    );
    const records = await db.all<{ case_id: string; resolution: string | null; dismissal: string | null }>("SELECT case_id, resolution, dismissal FROM reports");
    let codeDiffers = 0;
    for (const c of closed) {
      const mine = records.filter((r) => r.case_id === c.id);
      const codes =
        c.status === "DISMISSED"
          ? mine.flatMap((r) => (r.dismissal ? [(JSON.parse(r.dismissal) as { reason: string }).reason] : []))
          : mine.flatMap((r) => (r.resolution ? [(JSON.parse(r.resolution) as { code: string | null }).code] : []));
      if (codes.length && !codes.includes(c.decision_code)) codeDiffers++;
    }
    return { closed: closed.length, withoutDecision: closed.filter((c) => c.decision === null || c.decided_at === null).length, codeDiffers };
  } finally {
    await db.close();
  }
}

test("the comparison finds a changed value, a missing field, a shorter list and another status, and allows added fields and event types", () => {
  const before = [
    { path: "/a", status: 200, body: { report: { id: "r", status: "RESOLVED", tags: ["x"] }, eventTypes: ["one"], apiKeys: [{ lastUsedAt: "t1" }] } },
    { path: "/b", status: 200, body: { items: [{ id: 1 }, { id: 2 }] } },
    { path: "/c", status: 404, body: { error: "Not found" } },
  ];
  const same = compareAnswers(before, [
    { path: "/a", status: 200, body: { report: { id: "r", status: "RESOLVED", tags: ["x"], added: true }, eventTypes: ["one", "two"], apiKeys: [{ lastUsedAt: "t2" }] } },
    { path: "/b", status: 200, body: { items: [{ id: 1 }, { id: 2, more: 1 }], nextCursor: null } },
    { path: "/c", status: 404, body: { error: "Not found" } },
  ]);
  expect(same).toEqual({ answers: 3, objects: 7, equal: 7, differences: [] });
  const changed = compareAnswers(before, [
    { path: "/a", status: 200, body: { report: { id: "r", status: "CLOSED", tags: ["x"] }, eventTypes: ["two"], apiKeys: [{ lastUsedAt: null }] } },
    { path: "/b", status: 200, body: { items: [{ id: 1 }] } },
    { path: "/c", status: 500, body: {} },
  ]);
  expect(changed.differences).toEqual([
    "/a.report.status: \"RESOLVED\" became \"CLOSED\"",
    '/a.eventTypes: ["one"] became ["two"]',
    '/b.items: [{"id":1},{"id":2}] became [{"id":1}]',
    "/c: status 404 became 500",
    "/c.error: missing",
  ]);
  expect(changed.equal).toBe(0);
});

describe.each(PINNED[TEST_ENGINE].map((p) => [p.commit, p] as const))("an upgrade from %s", (_, pinned) => {
  const dir = mkdtempSync(join(tmpdir(), `flagstaff-upgrade-${pinned.commit}-`));
  const env = envFor(dir);
  const hooks = receiver();
  let demo: InitResult;
  afterAll(async () => {
    hooks.stop();
    rmSync(dir, { recursive: true, force: true });
    if (TEST_ENGINE === "postgres") await (await databaseForPath(env.FLAGSTAFF_DB!)).drop();
  });

  test(`${pinned.what}: filled through its API, migrated by ${VERSION}, every answer the same, keys, sign-in and expiry working, every decided case decided`, async () => {
    const release = oldRelease(pinned.commit);
    const routes = await restRoutesOf(release.dir);

    const init = await runCli(["init", "--json"], env, release.cli);
    expect(init.stderr).toBe("");
    demo = JSON.parse(init.stdout) as InitResult;
    const old = new TestServer(dir, env, demo, release.cli);
    await old.start();
    let filled;
    let before;
    try {
      filled = await fillThroughApi(old, hooks.url);
      before = await askEverything(old, routes, filled);
    } finally {
      await old.stop();
    }

    const started = performance.now();
    const migrated = await runCli(["migrate"], env);
    const migrateMs = performance.now() - started;
    expect({ code: migrated.code, stderr: migrated.stderr }).toEqual({ code: 0, stderr: TEST_ENGINE === "postgres" && pinned === A211D7F ? expect.stringContaining("repaired") : "" });

    const current = new TestServer(dir, env, demo);
    await current.start();
    try {
      const after = await askAgain(current, before);
      const compared = compareAnswers(before, after);
      console.log(
        `upgrade from ${pinned.commit} (${TEST_ENGINE}): ${compared.answers} answers, ${compared.objects} objects compared, ${compared.equal} equal; ` +
          `migrate ${Math.round(migrateMs)} ms (${migrated.stdout.split("\n")[0]})`,
      );
      expect(compared.differences).toEqual([]);
      expect(compared.equal).toBe(compared.objects);
      expect(compared.answers).toBeGreaterThan(60);

      // The migration chained every event the older release wrote, in order: the chain verifies end to end.
      const verified = await runCli(["audit", "verify"], env);
      expect(verified.stdout).toMatch(/all verify: 1 organization\(s\), \d+ event\(s\)/);
      expect(Number(/(\d+) event\(s\)\n/.exec(verified.stdout)?.[1])).toBeGreaterThan(50);
      expect(verified.code).toBe(0);

      // Keys: the demo key answered every question; the one made through the API and the publishable one work too.
      expect((await current.call("GET", "/reports", { key: filled.createdKey })).status).toBe(200);
      const made = await current.call("POST", `/projects/${demo.projectId}/reports`, {
        key: demo.publishableKey,
        body: { subject: { type: "user", externalId: "u-after" }, reason: { names: ["spam"] }, target: { contentType: "post", contentExternalId: "post-after" } },
      });
      expect(made.status).toBe(201);

      // The dashboard: its admin signs in with the password the older release printed.
      const admin = await signIn(current, demo.adminEmail, demo.adminPassword);
      expect(await admin.trpc.auth.me.query()).toMatchObject({ user: { email: demo.adminEmail }, version: VERSION });

      // Every decided case has its decision: the closed cases' list holds them all.
      const cases = await undecided(env.FLAGSTAFF_DB!);
      expect(cases).toEqual({ closed: cases.closed, withoutDecision: 0, codeDiffers: 0 });
      expect(cases.closed).toBeGreaterThanOrEqual(9);
      expect((await admin.trpc.search.closedCases.query({ limit: 100 })).total).toBe(cases.closed);
    } finally {
      await current.stop();
    }

    // The suspension made by the older release ends when its hour is over (the clock moved on).
    const later = new TestServer(dir, { ...env, FLAGSTAFF_CLOCK_OFFSET_MS: String(2 * HOUR), FLAGSTAFF_ENFORCEMENT_TICK_MS: "100" }, demo);
    await later.start();
    try {
      const path = `${later.url}/api/v1/organizations/${demo.orgSlug}/projects/${filled.suspension.projectId}/enforcement-actions/${filled.suspension.id}`;
      let status = "";
      for (let i = 0; i < 100 && status !== "expired"; i++) {
        status = (await later.call("GET", path)).body.action.status;
        if (status !== "expired") await Bun.sleep(100);
      }
      expect(status).toBe("expired");
    } finally {
      await later.stop();
    }

    // The older release, started again on the upgraded database, refuses it and writes nothing.
    if (pinned.guarded) {
      const untouched = await fingerprint(env.FLAGSTAFF_DB!);
      const refused = await runCli(["migrate"], env, release.cli);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("the database's schema is newer than this Flagstaff");
      expect(await fingerprint(env.FLAGSTAFF_DB!)).toBe(untouched);
    }
  }, 180_000);
});

/**
 * Decides `count` fresh reports through `server`'s API (every pinned release's routes): resolved
 * with a code, dismissed, escalated then resolved, resolved with a warning that is appealed and
 * upheld or overturned. Returns how many cases it decided.
 */
async function decideThrough(server: TestServer, demo: InitResult, tag: string, count: number): Promise<number> {
  const org = `/api/v1/organizations/${demo.orgSlug}`;
  const ok = async (method: string, path: string, body: unknown) => {
    const r = await server.call(method, path.startsWith("/api/") ? server.url + path : path, { body });
    if (r.status >= 300) throw new Error(`${method} ${path} through ${tag}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  for (let i = 0; i < count; i++) {
    const subject = `${tag}-user-${i}`;
    const made = await ok("POST", `/projects/${demo.projectId}/reports`, {
      subject: { type: "user", externalId: subject },
      target: { contentType: "post", contentExternalId: `${tag}-post-${i}` },
      reason: { names: ["spam"] },
    });
    const id = made.report.id as string;
    switch (i % 4) {
      case 0:
        await ok("POST", `/reports/${id}/resolve`, { resolutionCode: i % 8 === 0 ? "SPAM_CONFIRMED" : "HARASSMENT_CONFIRMED" });
        break;
      case 1:
        await ok("POST", `/reports/${id}/dismiss`, { reason: "duplicate" });
        break;
      case 2:
        await ok("POST", `/reports/${id}/escalate`, { team: "safety" });
        await ok("POST", `/reports/${id}/resolve`, { resolutionCode: "THREATS_CONFIRMED" });
        break;
      default: {
        await ok("POST", `/reports/${id}/resolve`, { resolutionCode: "ACCOUNT_LEVEL_ACTION" });
        const action = await ok("POST", `${org}/projects/${demo.projectId}/enforcement-actions`, { kind: "warning", reason: "Spam", identity: { type: "user", externalId: subject }, reportId: id });
        const appeal = await ok("POST", `/projects/${demo.projectId}/enforcement-actions/${action.action.id}/appeal`, { text: "Not me" });
        await ok("POST", `${org}/appeals/${appeal.appeal.id}/${i % 8 === 3 ? "uphold" : "overturn"}`, { note: "Reviewed" });
      }
    }
  }
  return count;
}

/**
 * From the last build before cases recorded decisions (the triggers fill what it leaves out), and
 * from the previous release (CHANGELOG.md says a rolling upgrade from it is safe).
 */
const ROLLING_FROM = TEST_ENGINE === "postgres" ? [AB7C4AA, LAST_0_1] : [];

describe.each(ROLLING_FROM.map((p) => [p.commit, p] as const))("a rolling upgrade from %s (PostgreSQL)", (_, pinned) => {
  const dir = mkdtempSync(join(tmpdir(), `flagstaff-rolling-${pinned.commit}-`));
  const env = envFor(dir);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    if (TEST_ENGINE === "postgres") await (await databaseForPath(env.FLAGSTAFF_DB!)).drop();
  });

  test(`an instance of ${pinned.commit} and one of ${VERSION} side by side, cases decided through both while the new one migrates: every decided case has its decision`, async () => {
    const release = oldRelease(pinned.commit);
    const init = await runCli(["init", "--json"], env, release.cli);
    const demo = JSON.parse(init.stdout) as InitResult;
    const old = new TestServer(dir, env, demo, release.cli);
    const current = new TestServer(dir, env, demo);
    await old.start();
    try {
      await decideThrough(old, demo, "before", 8);
      // The new instance starts (and migrates) while the old one keeps deciding.
      const [, duringMigration] = await Promise.all([current.start(), decideThrough(old, demo, "during", 8)]);
      // Both serve: decisions through each, at once, and escalations through the old one left open.
      const [throughOld, throughNew] = await Promise.all([decideThrough(old, demo, "old", 16), decideThrough(current, demo, "new", 16)]);
      for (let i = 0; i < 4; i++) {
        const made = await old.call("POST", `/projects/${demo.projectId}/reports`, {
          body: { subject: { type: "user", externalId: `escalated-${i}` }, target: { contentType: "post", contentExternalId: `escalated-${i}` }, reason: { names: ["spam"] } },
        });
        expect((await old.call("POST", `/reports/${made.body.report.id}/escalate`, { body: { team: i % 2 ? "legal" : "safety" } })).status).toBe(200);
      }
      console.log(`rolling upgrade from ${pinned.commit}: ${8 + duringMigration + throughOld} reports decided through the old instance (${duringMigration + throughOld} while or after the new one migrated), ${throughNew} through the new one`);
      // The old instance's events wait, unchained, while it is connected: verify names them.
      const waiting = await runCli(["audit", "verify"], env);
      expect(waiting.code).toBe(1);
      expect(waiting.stdout).toContain("(not chained,");
      expect(waiting.stdout).toContain("only when an instance of a release before the chain wrote it during a rolling upgrade");
    } finally {
      await old.stop();
    }
    try {
      // Chained within seconds once the last older instance stopped (docs/audit.md, "Upgrading": within a minute).
      const stopped = performance.now();
      let verified = await runCli(["audit", "verify"], env);
      while (verified.code !== 0 && performance.now() - stopped < UPGRADE_CHAINED_WITHIN_MS) {
        await Bun.sleep(500);
        verified = await runCli(["audit", "verify"], env);
      }
      const tookMs = performance.now() - stopped;
      console.log(`rolling upgrade from ${pinned.commit}: audit verify exits ${verified.code} ${(tookMs / 1000).toFixed(1)} s after the old instance stopped (${verified.stdout.trim().split("\n").at(-1)})`);
      expect(verified.stdout).toContain("all verify: 1 organization(s)");
      expect(verified.code).toBe(0);
      expect(tookMs).toBeLessThan(UPGRADE_CHAINED_WITHIN_MS);
      const cases = await undecided(env.FLAGSTAFF_DB!);
      expect(cases).toEqual({ closed: 48, withoutDecision: 0, codeDiffers: 0 });
      const db = await rawDb(env.FLAGSTAFF_DB!, { readonly: true });
      const teams = await db.all<{ team: string | null }>("SELECT escalated_team AS team FROM cases WHERE is_open = 1 AND status = 'IN_REVIEW' ORDER BY created_at");
      await db.close();
      expect(teams.map((t) => t.team)).toEqual(["safety", "legal", "safety", "legal"]);
      const admin = await signIn(current, demo.adminEmail, demo.adminPassword);
      expect((await admin.trpc.search.closedCases.query({ limit: 100 })).total).toBe(48);
    } finally {
      await current.stop();
    }
  }, 180_000);
});
