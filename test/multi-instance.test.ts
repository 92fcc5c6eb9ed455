/**
 * Two instances on one PostgreSQL database, as behind a load balancer: work started through one
 * is finished through the other; the job queue delivers each webhook once whichever instance
 * claims it; the report rate limit counts both instances together; sessions work on either;
 * scheduled enforcement actions take effect once (one statement, one announcement) while both
 * instances start and revoke them; the enforcement-expiry singleton runs on one instance and
 * moves to the other when it dies.
 * PostgreSQL only: one SQLite database serves one process.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { TEST_ENGINE } from "./helpers/pg.ts";
import { anonymous, signIn, statusOf } from "./helpers/dashboard.ts";
import { startServer, TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

setDefaultTimeout(30_000);

const ENV = {
  FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
  FLAGSTAFF_JOB_POLL_MS: "50",
  FLAGSTAFF_JOB_LEASE_MS: "3000",
  FLAGSTAFF_WEBHOOK_TIMEOUT_MS: "1500",
  FLAGSTAFF_WEBHOOK_RETRY_SCALE: "0.0001",
  FLAGSTAFF_ENFORCEMENT_TICK_MS: "200",
  FLAGSTAFF_REPORT_RATE_LIMIT: "10",
};

/** A receiver that verifies every message and keeps it. */
const received: { id: string; type: string; verified: boolean; actionId?: string; status?: string }[] = [];
let secret = "";
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = await req.text();
    const headers = Object.fromEntries(req.headers.entries());
    let type = "";
    let verified = false;
    let action: { id: string; status: string } | undefined;
    try {
      const event = new Webhook(secret).verify(body, headers) as { type: string; data: { action?: { id: string; status: string } } };
      type = event.type;
      action = event.data.action;
      verified = true;
    } catch {
      // counted as unverified
    }
    received.push({ id: headers["webhook-id"] ?? "", type, verified, actionId: action?.id, status: action?.status });
    return new Response("ok");
  },
});

let a: TestServer;
let b: TestServer;

describe.skipIf(TEST_ENGINE !== "postgres")("two instances on one database (PostgreSQL)", () => {
  beforeAll(async () => {
    a = await startServer(ENV);
    // The second instance: the same database (the same FLAGSTAFF_DB names it on this pass).
    b = new TestServer(mkdtempSync(join(tmpdir(), "flagstaff-test-b-")), a.env, a.demo);
    await b.start();
  });
  afterAll(async () => {
    await b?.stop();
    await a?.dispose();
    await receiver.stop(true);
  });

  test("a report created through one instance is resolved through the other; its webhook is delivered exactly once", async () => {
    const orgA = await a.orgClient();
    const ep = await orgA.POST("/organizations/{orgSlug}/webhook-endpoints", {
      params: { path: { orgSlug: a.demo.orgSlug } },
      body: { url: `http://127.0.0.1:${receiver.port}/hook` },
    });
    expect(ep.response.status).toBe(201);
    secret = ep.data!.secret;

    const sdkA = await a.sdkClient();
    const created = await sdkA.POST("/projects/{projectId}/reports", {
      params: { path: { projectId: a.demo.projectId } },
      body: { subject: { type: "user", externalId: "two-instances" }, reason: "spam" },
    });
    expect(created.response.status).toBe(201);
    const reportId = created.data!.report.id;

    const sdkB = await b.sdkClient();
    const resolved = await sdkB.POST("/reports/{reportId}/resolve", {
      params: { path: { reportId } },
      body: { resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "warning" } },
    });
    expect(resolved.response.status).toBe(200);
    expect(resolved.data!.enforcementActionId).toBeString();
    // Both instances see the decision at once.
    for (const sdk of [sdkA, sdkB]) {
      const got = await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } });
      expect(got.data!.report.status).toBe("RESOLVED");
    }

    await until("the webhook", async () => received.some((r) => r.verified));
    // Both instances' workers watch the queue: wait a little longer for a second copy that must not come.
    await Bun.sleep(1500);
    const ids = received.filter((r) => r.verified).map((r) => r.id);
    expect(ids.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ids).size).toBe(ids.length); // each message once
    expect(received.every((r) => r.verified)).toBe(true);
  });

  test("the report rate limit counts both instances together: 10 a minute per key in total", async () => {
    // A fresh secret key, so earlier tests' reports do not count.
    const made = await (await a.orgClient()).POST("/organizations/{orgSlug}/api-keys", {
      params: { path: { orgSlug: a.demo.orgSlug } },
      body: { projectId: a.demo.projectId, kind: "secret", name: "rate" },
    });
    expect(made.response.status).toBe(201);
    const secretKey = made.data!.key;
    const body = (i: number) => ({ subject: { type: "user", externalId: `rl-${i}` }, reason: "spam" });
    const statuses = await Promise.all(
      Array.from({ length: 14 }, (_, i) => (i % 2 ? a : b).call("POST", `/projects/${a.demo.projectId}/reports`, { key: secretKey, body: body(i) }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 201).length).toBe(10);
    expect(statuses.filter((s) => s === 429).length).toBe(4);
  });

  test("requests refused for what they are (400, 404) spend none of the key's places, through either instance, among concurrent good ones", async () => {
    const made = await (await a.orgClient()).POST("/organizations/{orgSlug}/api-keys", {
      params: { path: { orgSlug: a.demo.orgSlug } },
      body: { projectId: a.demo.projectId, kind: "secret", name: "rate-refused" },
    });
    expect(made.response.status).toBe(201);
    const secretKey = made.data!.key;
    const good = (i: number) => ({ path: `/projects/${a.demo.projectId}/reports`, body: { subject: { type: "user", externalId: `rr-${i}` }, reason: "spam" } });
    const unknownReason = (i: number) => ({ path: `/projects/${a.demo.projectId}/reports`, body: { subject: { type: "user", externalId: `rr-${i}` }, reason: "no-such-reason" } });
    const unknownProject = (i: number) => ({ path: "/projects/01a20000-0000-7000-8000-000000000000/reports", body: good(i).body });
    const requests = Array.from({ length: 36 }, (_, i) => [good, unknownReason, unknownProject][i % 3]!(i));
    const statuses = await Promise.all(requests.map((r, i) => (i % 2 ? a : b).call("POST", r.path, { key: secretKey, body: r.body }).then((res) => res.status)));
    const count = (s: number) => statuses.filter((x) => x === s).length;
    expect([count(201), count(429), count(400), count(404)]).toEqual([10, 2, 12, 12]);
  });

  test("a dashboard session made on one instance works on the other", async () => {
    const onA = await signIn(a, a.demo.adminEmail, a.demo.adminPassword);
    expect((await onA.at(b).me()).user!.email).toBe(a.demo.adminEmail);
  });

  test("sign-in throttling counts attempts through both instances together", async () => {
    const attempt = (s: TestServer) => statusOf(anonymous(s).trpc.auth.login.mutate({ email: "nobody@example.com", password: "wrong-password" }));
    // Five failures are allowed per email and address in 15 minutes, wherever they land.
    const statuses = [];
    for (let i = 0; i < 8; i++) statuses.push(await attempt(i % 2 ? a : b));
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
  });

  test("scheduled actions take effect once each (one statement, one enforcement_action.updated) while both instances start and revoke them", async () => {
    const clients = [await a.orgClient(), await b.orgClient()];
    const sdkB = await b.sdkClient();
    const path = { orgSlug: a.demo.orgSlug, projectId: a.demo.projectId };
    // Created through both instances, all to start in a second.
    const made = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        clients[i % 2]!.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", {
          params: { path },
          body: { kind: "suspension", reason: "grace period over", startsInSeconds: 1, durationSeconds: 3600, identity: { type: "user", externalId: `graced-${i}` } },
        }),
      ),
    );
    const ids = made.map((r) => r.data!.action.id);
    expect(made.map((r) => r.data!.action.status)).toEqual(Array(8).fill("scheduled"));
    // At the start, half are revoked through the second instance, racing the scheduler: an
    // action whose start the scheduler recorded first is revoked (it started: one announcement,
    // one statement), one it had not recorded yet is cancelled and never starts (its status
    // follows its recorded start, never the clock alone: docs/enforcement.md).
    const lastStart = Math.max(...made.map((r) => Date.parse(r.data!.action.startsAt)));
    await Bun.sleep(Math.max(0, lastStart - Date.now()) + 5);
    const revoked = await Promise.all(
      ids.slice(0, 4).map((actionId) => clients[1]!.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/revoke", { params: { path: { ...path, actionId } }, body: {} })),
    );
    const outcomes = revoked.map((r) => r.data?.action.status);
    for (const outcome of outcomes) expect(["revoked", "cancelled"]).toContain(outcome!);
    const everStarted = ids.filter((_, i) => i >= 4 || outcomes[i] === "revoked");
    const started = (id: string) => received.filter((r) => r.verified && r.actionId === id && r.type === "enforcement_action.updated" && r.status === "active");
    await until("every start announced", async () => everStarted.every((id) => started(id).length > 0));
    await Bun.sleep(1500); // both instances' workers and the scheduler keep running: a second copy must not come
    const audit = await clients[0]!.GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug: path.orgSlug }, query: { action: "ENFORCEMENT_ACTION_STARTED", limit: 100 } } });
    for (const id of ids) {
      const once = everStarted.includes(id) ? 1 : 0;
      expect(started(id)).toHaveLength(once);
      expect(audit.data!.events.filter((e) => e.entityId === id)).toHaveLength(once);
      const statement = await sdkB.GET("/projects/{projectId}/enforcement-actions/{actionId}/statement", { params: { path: { projectId: path.projectId, actionId: id } } });
      expect(statement.response.status).toBe(once ? 200 : 404);
    }
  });

  test("the expiry scheduler runs on one instance and moves to the other when that one dies", async () => {
    const org = await a.orgClient();
    const action = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", {
      params: { path: { orgSlug: a.demo.orgSlug, projectId: a.demo.projectId } },
      body: { kind: "suspension", reason: "spam", durationSeconds: 3, identity: { type: "user", externalId: "expiring" } },
    });
    expect(action.response.status).toBe(201);
    // Kill the first instance (it started first, so it holds the singleton): the second takes over.
    await a.kill();
    const orgB = await b.orgClient();
    await until(
      "the suspension to expire through the surviving instance",
      async () => {
        const got = await orgB.GET("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}", {
          params: { path: { orgSlug: b.demo.orgSlug, projectId: b.demo.projectId, actionId: action.data!.action.id } },
        });
        return got.data?.action.expiredAt != null;
      },
      15_000,
    );
  });
});
