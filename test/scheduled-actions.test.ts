/**
 * Scheduled enforcement actions through HTTP (issue 27, item 6): created with `startsAt` or
 * `startsInSeconds`, listed as `scheduled` on the organization's list and the SDK's pull route,
 * cancelled through their cancel route until they take effect (then 409: revoke), and taking
 * effect through the server's scheduler with their statement of reasons and one
 * `enforcement_action.updated` delivered to a receiver; while the scheduler has not recorded a
 * start whose time passed, the action still reads `scheduled` everywhere (no statement yet) and
 * may still be cancelled. Two instances: test/multi-instance.test.ts.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import type { OrgClient, OrgOperations, SdkClient } from "../clients/typescript/index.ts";
import { withKey } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

setDefaultTimeout(30_000);

type CreateActionBody = OrgOperations["enforcement-create"]["requestBody"]["content"]["application/json"];
interface Received {
  id: string;
  type: string;
  actionId: string;
  status: string;
  statement: boolean;
}

/** A receiver that verifies every message and keeps what it says about the action. */
const received: Received[] = [];
let secret = "";
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = await req.text();
    const event = new Webhook(secret).verify(body, Object.fromEntries(req.headers.entries())) as {
      type: string;
      data: { action: { id: string; status: string }; statement?: unknown };
    };
    received.push({ id: req.headers.get("webhook-id") ?? "", type: event.type, actionId: event.data.action.id, status: event.data.action.status, statement: event.data.statement != null });
    return new Response("ok");
  },
});

let server: TestServer;
let sdk: SdkClient;
let org: OrgClient;
let orgSlug: string;
let projectId: string;
let n = 0;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1", FLAGSTAFF_JOB_POLL_MS: "50", FLAGSTAFF_WEBHOOK_RETRY_SCALE: "0.0001", FLAGSTAFF_ENFORCEMENT_TICK_MS: "200" });
  sdk = await server.sdkClient();
  org = await server.orgClient();
  orgSlug = server.demo.orgSlug;
  projectId = server.demo.projectId;
  const ep = await org.POST("/organizations/{orgSlug}/webhook-endpoints", { params: { path: { orgSlug } }, body: { url: `http://127.0.0.1:${receiver.port}/hook` } });
  expect(ep.response.status).toBe(201);
  secret = ep.data!.secret;
});
afterAll(async () => {
  await server.dispose();
  await receiver.stop(true);
});

const user = () => ({ type: "user", externalId: `graced-${++n}` });
const onAction = (actionId: string) => ({ path: { orgSlug, projectId, actionId } });
const post = (body: Partial<CreateActionBody>) =>
  org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", {
    params: { path: { orgSlug, projectId } },
    body: { kind: "suspension", reason: "spam after a warning", identity: user(), durationSeconds: 86_400, ...body },
  });
async function schedule(body: Partial<CreateActionBody> = {}) {
  const r = await post({ startsInSeconds: 3600, ...body });
  expect(r.response.status).toBe(201);
  return r.data!.action;
}
const cancel = (actionId: string, body: { reason?: string } = {}) =>
  org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/cancel", { params: onAction(actionId), body });
const getAction = async (actionId: string) => (await org.GET("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}", { params: onAction(actionId) })).data!.action;
const statement = (actionId: string) => sdk.GET("/projects/{projectId}/enforcement-actions/{actionId}/statement", { params: { path: { projectId, actionId } } });
const pull = (externalId: string, active?: "true" | "false") =>
  sdk.GET("/projects/{projectId}/identities/{typeName}/{externalId}/enforcement-actions", { params: { path: { projectId, typeName: "user", externalId }, query: active ? { active } : {} } });
/** The events received about an action, by type (deliveries are not ordered; each type once here). */
const eventsOf = (actionId: string) => received.filter((r) => r.actionId === actionId).sort((a, b) => a.type.localeCompare(b.type));

describe("scheduled enforcement actions (HTTP)", () => {
  test("startsAt or startsInSeconds make it scheduled, the end counted from the start; a start now or past, beyond a year, or given twice is 400", async () => {
    const before = Date.now();
    const inSeconds = await schedule({ startsInSeconds: 7200, durationSeconds: 3600 });
    expect(inSeconds.status).toBe("scheduled");
    expect(inSeconds.active).toBe(false);
    const startsAt = Date.parse(inSeconds.startsAt);
    expect(startsAt).toBeGreaterThanOrEqual(before + 7_200_000);
    expect(Date.parse(inSeconds.endsAt!)).toBe(startsAt + 3_600_000);
    const at = new Date(Date.now() + 86_400_000).toISOString();
    const atInstant = await schedule({ startsInSeconds: undefined, startsAt: at });
    expect(atInstant.startsAt).toBe(at);

    const refused = async (body: Partial<CreateActionBody>, message: RegExp) => {
      const r = await post(body);
      expect(r.response.status).toBe(400);
      expect(r.error?.error).toMatch(message);
    };
    await refused({ startsAt: new Date(Date.now() - 1000).toISOString() }, /startsAt: must be in the future/);
    await refused({ startsAt: new Date(Date.now() + 400 * 86_400_000).toISOString() }, /startsAt: at most a year ahead/);
    await refused({ startsInSeconds: 366 * 86_400 }, /startsInSeconds/);
    await refused({ startsInSeconds: 60, startsAt: at }, /not both/);
    await refused({ startsAt: at, endsAt: new Date(Date.now() + 3_600_000).toISOString(), durationSeconds: undefined }, /endsAt: must be after the action's start/);
    await refused({ startsAt: "tomorrow" }, /startsAt/);
  });

  test("a resolution's action may start later too (action.startsInSeconds or startsAt): the report resolved now, the action scheduled with its end from the start; both, or a start now, is 400 and the report stays open", async () => {
    const file = async (subject: { type: string; externalId: string }) => {
      const r = await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { reason: "spam", subject } });
      expect(r.response.status).toBe(201);
      return r.data!.report.id;
    };
    const resolve = (reportId: string, action: Record<string, unknown>) =>
      sdk.POST("/reports/{reportId}/resolve", { params: { path: { reportId } }, body: { resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "suspension", ...action } } });
    const before = Date.now();
    const who = user();
    const reportId = await file(who);
    const resolved = await resolve(reportId, { startsInSeconds: 7200, durationSeconds: 3600 });
    expect(resolved.response.status).toBe(200);
    const action = await getAction(resolved.data!.enforcementActionId!);
    expect(action).toMatchObject({ status: "scheduled", active: false, reportId });
    const startsAt = Date.parse(action.startsAt);
    expect(startsAt).toBeGreaterThanOrEqual(before + 7_200_000);
    expect(Date.parse(action.endsAt!)).toBe(startsAt + 3_600_000);
    expect((await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } })).data!.report.status).toBe("RESOLVED");
    expect((await statement(action.id)).response.status).toBe(404);
    const at = new Date(Date.now() + 86_400_000).toISOString();
    const atInstant = await resolve(await file(user()), { startsAt: at, durationSeconds: 3600 });
    expect((await getAction(atInstant.data!.enforcementActionId!)).startsAt).toBe(at);

    for (const [action, message] of [
      [{ startsInSeconds: 60, startsAt: at, durationSeconds: 3600 }, /not both/],
      [{ startsAt: new Date(Date.now() - 1000).toISOString(), durationSeconds: 3600 }, /startsAt: must be in the future/],
    ] as const) {
      const open = await file(user());
      const r = await resolve(open, action);
      expect(r.response.status).toBe(400);
      expect((r.error as { error: string }).error).toMatch(message);
      expect((await sdk.GET("/reports/{reportId}", { params: { path: { reportId: open } } })).data!.report.status).toBe("OPEN");
    }
  });

  test("listed as scheduled on the organization's list and the SDK's pull (active false); announced at creation, with no statement yet", async () => {
    const who = user();
    const action = await schedule({ identity: who });
    const scheduled = await org.GET("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", { params: { path: { orgSlug, projectId }, query: { status: "scheduled" } } });
    expect(scheduled.data!.actions.map((a) => a.id)).toContain(action.id);
    expect(scheduled.data!.actions.every((a) => a.status === "scheduled")).toBe(true);
    const pulled = await pull(who.externalId);
    expect(pulled.data!.actions.map((a) => [a.id, a.status, a.active, a.startsAt])).toEqual([[action.id, "scheduled", false, action.startsAt]]);
    expect((await pull(who.externalId, "true")).data!.actions).toEqual([]);
    expect((await pull(who.externalId, "false")).data!.actions.map((a) => a.id)).toEqual([action.id]);
    expect((await statement(action.id)).response.status).toBe(404);
    await until("the creation's webhook", async () => eventsOf(action.id).length > 0);
    expect(eventsOf(action.id).map((e) => [e.type, e.status, e.statement])).toEqual([["enforcement_action.created", "scheduled", false]]);
  });

  test("cancelled until it takes effect: status cancelled, announced as revoked, never started; cancelling again is 409, an unknown one 404", async () => {
    const action = await schedule();
    const cancelled = await cancel(action.id, { reason: "the user removed the post" });
    expect(cancelled.response.status).toBe(200);
    expect(cancelled.data!.action).toMatchObject({ status: "cancelled", active: false, revokeReason: "the user removed the post" });
    expect((await getAction(action.id)).status).toBe("cancelled");
    const again = await cancel(action.id);
    expect(again.response.status).toBe(409);
    expect(again.error?.error).toMatch(/cancelled/);
    expect((await cancel("no-such-action")).response.status).toBe(404);
    const listed = await org.GET("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", { params: { path: { orgSlug, projectId }, query: { status: "cancelled" } } });
    expect(listed.data!.actions.map((a) => a.id)).toContain(action.id);
    await until("the cancellation's webhook", async () => eventsOf(action.id).some((e) => e.type === "enforcement_action.revoked"));
    expect(eventsOf(action.id).map((e) => [e.type, e.status])).toEqual([
      ["enforcement_action.created", "scheduled"],
      ["enforcement_action.revoked", "cancelled"],
    ]);
    const audit = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug }, query: { entityType: "enforcement_action", entityId: action.id } } });
    expect(audit.data!.events.map((e) => e.action)).toEqual(["ENFORCEMENT_ACTION_CANCELLED", "ENFORCEMENT_ACTION_CREATED"]);
  });

  test("it takes effect at its start: active, its statement made, enforcement_action.updated with the statement delivered once; then cancel is 409 and revoke works", async () => {
    const action = await schedule({ startsInSeconds: 1 });
    await until("the action to take effect", async () => eventsOf(action.id).some((e) => e.type === "enforcement_action.updated"), 10_000);
    expect((await getAction(action.id)).status).toBe("active");
    expect((await statement(action.id)).response.status).toBe(200);
    // The scheduler keeps ticking (every 200 ms): a second announcement would come within a few ticks.
    await Bun.sleep(800);
    expect(eventsOf(action.id).map((e) => [e.type, e.status, e.statement])).toEqual([
      ["enforcement_action.created", "scheduled", false],
      ["enforcement_action.updated", "active", true],
    ]);
    const refused = await cancel(action.id);
    expect(refused.response.status).toBe(409);
    expect(refused.error?.error).toMatch(/revoke it instead/);
    const revoked = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/revoke", { params: onAction(action.id), body: {} });
    expect(revoked.data!.action.status).toBe("revoked");
  });

  test("an action that starts now is unchanged: active at once, its statement and enforcement_action.created with it", async () => {
    const r = await post({});
    expect(r.response.status).toBe(201);
    const action = r.data!.action;
    expect(action.status).toBe("active");
    expect(action.startsAt).toBe(action.createdAt);
    expect((await statement(action.id)).response.status).toBe(200);
    await until("the creation's webhook", async () => eventsOf(action.id).length > 0);
    expect(eventsOf(action.id).map((e) => [e.type, e.status, e.statement])).toEqual([["enforcement_action.created", "active", true]]);
    expect((await cancel(action.id)).response.status).toBe(409);
  });
});

describe("a start the scheduler has not recorded yet (its tick ten minutes away)", () => {
  let idle: TestServer;
  beforeAll(async () => {
    idle = await startServer({ FLAGSTAFF_ENFORCEMENT_TICK_MS: "600000" });
  });
  afterAll(async () => {
    await idle.dispose();
  });

  test("its start time passed: scheduled on the organization's routes, tRPC and the SDK's pull, with no statement; cancelled then, it never starts; a restart's scheduler records the other: its statement exists whenever it reads active", async () => {
    const at = { orgSlug: idle.demo.orgSlug, projectId: idle.demo.projectId };
    let org = await idle.orgClient();
    let sdk = await idle.sdkClient();
    const create = async (externalId: string) => {
      const r = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", {
        params: { path: at },
        body: { kind: "suspension", reason: "spam after a warning", identity: { type: "user", externalId }, durationSeconds: 86_400, startsInSeconds: 1 },
      });
      expect(r.response.status).toBe(201);
      return r.data!.action;
    };
    const due = await create("due-unrecorded");
    const toCancel = await create("due-cancelled");
    const get = async (actionId: string) => (await org.GET("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}", { params: { path: { ...at, actionId } } })).data!.action;
    const statementStatus = async (actionId: string) => (await sdk.GET("/projects/{projectId}/enforcement-actions/{actionId}/statement", { params: { path: { projectId: at.projectId, actionId } } })).response.status;
    await until("both starts to pass", async () => Date.now() > Math.max(Date.parse(due.startsAt), Date.parse(toCancel.startsAt)) + 300);

    // The clock alone says nothing: the start is not recorded, so it is still scheduled everywhere.
    expect(await get(due.id)).toMatchObject({ status: "scheduled", active: false });
    expect((await withKey(idle).trpc.enforcement.get.query({ ...at, actionId: due.id })).action.status).toBe("scheduled");
    const listed = async (status: "scheduled" | "active") =>
      (await org.GET("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", { params: { path: at, query: { status } } })).data!.actions.map((a) => a.id);
    expect(await listed("scheduled")).toContain(due.id);
    expect(await listed("active")).not.toContain(due.id);
    const pull = async (active?: "true") =>
      (await sdk.GET("/projects/{projectId}/identities/{typeName}/{externalId}/enforcement-actions", { params: { path: { projectId: at.projectId, typeName: "user", externalId: "due-unrecorded" }, query: active ? { active } : {} } })).data!.actions;
    expect((await pull()).map((a) => [a.id, a.status, a.active])).toEqual([[due.id, "scheduled", false]]);
    expect(await pull("true")).toEqual([]);
    expect(await statementStatus(due.id)).toBe(404);

    // Still scheduled, so still cancellable: cancelled, never started, no statement.
    const cancelled = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/cancel", { params: { path: { ...at, actionId: toCancel.id } }, body: {} });
    expect(cancelled.response.status).toBe(200);
    expect(cancelled.data!.action.status).toBe("cancelled");

    // A restart: the scheduler's first tick records the start (statement and announcement in one
    // transaction). Every answer that says active finds the statement there.
    await idle.stop();
    await idle.start();
    org = await idle.orgClient();
    sdk = await idle.sdkClient();
    await until("the start to be recorded", async () => {
      const status = (await get(due.id)).status;
      if (status === "active") expect(await statementStatus(due.id)).toBe(200);
      return status === "active";
    });
    expect((await pull("true")).map((a) => a.id)).toEqual([due.id]);
    expect((await get(toCancel.id)).status).toBe("cancelled");
    expect(await statementStatus(toCancel.id)).toBe(404);
    const audit = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug: at.orgSlug }, query: { entityType: "enforcement_action", entityId: toCancel.id } } });
    expect(audit.data!.events.map((e) => e.action)).toEqual(["ENFORCEMENT_ACTION_CANCELLED", "ENFORCEMENT_ACTION_CREATED"]);
  });
});
