/**
 * Service levels over HTTP (issue 27): queue targets on the queue routes (create, change,
 * remove, bad values 400), the service-level route as admin and as a moderator held to one
 * queue, and a breach end to end: a server whose clock runs ahead finds the case past its
 * target, delivers `queue.sla_breached` once to the endpoint that lists it (a loopback receiver
 * checking the signature with `standardwebhooks`) and never to an endpoint without a filter, and
 * counts it in /metrics.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import type { OrgClient } from "../clients/typescript/index.ts";
import { fileReport } from "./helpers/builders.ts";
import { newUser, withKey } from "./helpers/dashboard.ts";
import { startServer, TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

setDefaultTimeout(60_000);

const MINUTE = 60_000;
let server: TestServer;
let org: OrgClient;
let orgSlug: string;

/** A loopback receiver: every message verified with its endpoint's secret, by path. */
const received: { path: string; id: string; payload: { type: string; data: Record<string, unknown> } }[] = [];
const secrets = new Map<string, string>();
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const path = new URL(req.url).pathname;
    const body = await req.text();
    const headers = Object.fromEntries(req.headers.entries());
    const payload = new Webhook(secrets.get(path)!).verify(body, headers) as (typeof received)[number]["payload"];
    received.push({ path, id: headers["webhook-id"] ?? "", payload });
    return new Response("ok");
  },
});

const ENV = {
  FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
  FLAGSTAFF_JOB_POLL_MS: "50",
  FLAGSTAFF_WEBHOOK_RETRY_SCALE: "0.0001",
  FLAGSTAFF_SLA_TICK_MS: "100",
};

beforeAll(async () => {
  server = await startServer(ENV);
  org = await server.orgClient();
  orgSlug = server.demo.orgSlug;
});
afterAll(async () => {
  await server.dispose();
  await receiver.stop(true);
});

const queuePath = (queueId: string) => ({ params: { path: { orgSlug, queueId } } });

describe("queue targets", () => {
  test("set on create, changed, removed with null; out of range or not whole is 400; the view names the oldest open case", async () => {
    const made = await org.POST("/organizations/{orgSlug}/queues", {
      params: { path: { orgSlug } },
      body: { name: `Timed ${Date.now()}`, firstReviewTargetMinutes: 30, decisionTargetMinutes: 240 },
    });
    expect(made.response.status).toBe(201);
    const queue = made.data!.queue;
    expect(queue).toMatchObject({ firstReviewTargetMinutes: 30, decisionTargetMinutes: 240, openCases: 0, oldestOpenCaseAt: null });

    const changed = await org.PATCH("/organizations/{orgSlug}/queues/{queueId}", { ...queuePath(queue.id), body: { firstReviewTargetMinutes: 15 } });
    expect(changed.response.status).toBe(200);
    expect(changed.data!.queue).toMatchObject({ firstReviewTargetMinutes: 15, decisionTargetMinutes: 240 });
    const removed = await org.PATCH("/organizations/{orgSlug}/queues/{queueId}", { ...queuePath(queue.id), body: { decisionTargetMinutes: null } });
    expect(removed.data!.queue).toMatchObject({ firstReviewTargetMinutes: 15, decisionTargetMinutes: null });

    for (const bad of [0, -5, 1.5, 90 * 24 * 60 + 1]) {
      const r = await org.PATCH("/organizations/{orgSlug}/queues/{queueId}", { ...queuePath(queue.id), body: { firstReviewTargetMinutes: bad } });
      expect(r.response.status).toBe(400);
      expect((r.error as { error: string }).error).toContain("firstReviewTargetMinutes");
    }

    const filed = await fileReport(server);
    await withKey(server).trpc.queues.moveCase.mutate({ orgSlug, caseId: filed.caseId, queueId: queue.id });
    const got = await org.GET("/organizations/{orgSlug}/queues/{queueId}", queuePath(queue.id));
    expect(got.data!.queue.openCases).toBe(1);
    expect(Date.parse(got.data!.queue.oldestOpenCaseAt!)).toBeGreaterThan(Date.now() - MINUTE);
  });
});

describe("service levels", () => {
  test("GET /service-levels answers every queue with its targets; a moderator held to one queue gets that one only", async () => {
    const moderator = await newUser(server, "moderator");
    const mine = await org.POST("/organizations/{orgSlug}/queues", {
      params: { path: { orgSlug } },
      body: { name: `Mine ${Date.now()}`, firstReviewTargetMinutes: 60, access: { users: [moderator.id], roles: [] } },
    });
    const theirs = await org.POST("/organizations/{orgSlug}/queues", {
      params: { path: { orgSlug } },
      body: { name: `Theirs ${Date.now()}`, decisionTargetMinutes: 60, access: { users: [], roles: ["admin"] } },
    });
    const all = await org.GET("/organizations/{orgSlug}/service-levels", { params: { path: { orgSlug }, query: { days: 30 } } });
    expect(all.response.status).toBe(200);
    expect(all.data!.days).toBe(30);
    const ids = all.data!.queues.map((q) => q.queueId);
    expect(ids).toContain(mine.data!.queue.id);
    expect(ids).toContain(theirs.data!.queue.id);
    expect(all.data!.queues.find((q) => q.queueId === mine.data!.queue.id)).toMatchObject({ firstReviewTargetMinutes: 60, decisionTargetMinutes: null, openCases: 0, oldestCase: null });

    const seen = await moderator.trpc.queues.serviceLevels.query({ orgSlug });
    expect(seen.queues.map((q) => q.queueId)).toContain(mine.data!.queue.id);
    expect(seen.queues.map((q) => q.queueId)).not.toContain(theirs.data!.queue.id);

    const bad = await org.GET("/organizations/{orgSlug}/service-levels", { params: { path: { orgSlug }, query: { days: 0 } } });
    expect(bad.response.status).toBe(400);
    const unknown = await org.GET("/organizations/{orgSlug}/service-levels", { params: { path: { orgSlug: "no-such-org" } } });
    expect(unknown.response.status).toBe(404);
  });

  test("a case past its target: queue.sla_breached once to the endpoint that lists it, not to an unfiltered one; counted in /metrics", async () => {
    const endpoint = async (path: string, eventTypes: ("queue.sla_breached" | "report.decided")[]) => {
      const r = await org.POST("/organizations/{orgSlug}/webhook-endpoints", {
        params: { path: { orgSlug } },
        body: { url: `http://127.0.0.1:${receiver.port}${path}`, eventTypes },
      });
      expect(r.response.status).toBe(201);
      secrets.set(path, r.data!.secret);
    };
    await endpoint("/listed", ["queue.sla_breached"]);
    await endpoint("/unfiltered", []);
    const made = await org.POST("/organizations/{orgSlug}/queues", { params: { path: { orgSlug } }, body: { name: `Breached ${Date.now()}`, firstReviewTargetMinutes: 1 } });
    const queueId = made.data!.queue.id;
    const filed = await fileReport(server);
    await withKey(server).trpc.queues.moveCase.mutate({ orgSlug, caseId: filed.caseId, queueId });

    // The same database, a server whose clock runs two minutes ahead: the case is past its target.
    await server.stop();
    const later = new TestServer(server.dir, { ...server.env, FLAGSTAFF_CLOCK_OFFSET_MS: String(2 * MINUTE) }, server.demo);
    await later.start();
    try {
      await until("the breach delivered", async () => received.some((r) => r.path === "/listed" && r.payload.data.caseId === filed.caseId));
      await Bun.sleep(500); // several more passes (every 100 ms): none announces it again
      const listed = received.filter((r) => r.path === "/listed" && r.payload.data.caseId === filed.caseId);
      expect(listed).toHaveLength(1);
      expect(listed[0]!.payload).toMatchObject({
        type: "queue.sla_breached",
        data: { target: "first_review", queueId, caseId: filed.caseId, appealId: null, projectId: server.demo.projectId, targetMinutes: 1 },
      });
      expect(received.filter((r) => r.path === "/unfiltered")).toEqual([]);

      const metrics = await (await fetch(`${later.url}/metrics`)).text();
      expect(metrics).toContain("# TYPE flagstaff_sla_breaches_total counter");
      expect(metrics).toContain(`flagstaff_sla_breaches_total{queue="${queueId}",target="first_review"} 1`);

      const levels = await (await later.orgClient()).GET("/organizations/{orgSlug}/service-levels", { params: { path: { orgSlug } } });
      expect(levels.data!.queues.find((q) => q.queueId === queueId)).toMatchObject({ overdue: { firstReview: 1, decision: 0 }, breaches: { firstReview: 1, decision: 0 } });
    } finally {
      await later.stop();
      await server.start();
    }
  });
});
