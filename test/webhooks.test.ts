/**
 * Outbound webhooks, end to end: a real server delivers to a loopback receiver that checks
 * every message with the `standardwebhooks` package (an implementation we did not write).
 * Retry delays are shortened with FLAGSTAFF_WEBHOOK_RETRY_SCALE; waits poll with a deadline.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import type { OrgClient, OrgComponents, OrgOperations } from "../clients/typescript/index.ts";
import { expectRefused, withKey, type Caller } from "./helpers/dashboard.ts";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

// Servers are real child processes and some waits span retries: more than the 5 s default.
setDefaultTimeout(30_000);

// ---------------------------------------------------------------------------------------------
// The receiver

interface Received {
  path: string;
  id: string;
  timestamp: string;
  headers: Record<string, string>;
  body: string;
  payload: any;
  verified: boolean;
  error: string | null;
  at: number;
}

type Behaviour = (nth: number, rec: Received) => Response | Promise<Response>;

class Receiver {
  server: ReturnType<typeof Bun.serve> | null = null;
  port = 0;
  records: Received[] = [];
  behaviours = new Map<string, Behaviour>();
  secrets = new Map<string, string>();

  start(): void {
    this.server = Bun.serve({ hostname: "127.0.0.1", port: this.port, idleTimeout: 60, fetch: (req) => this.handle(req) });
    this.port = this.server.port!;
  }

  async stop(): Promise<void> {
    await this.server?.stop(true);
    this.server = null;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Verified messages received on a path. */
  got(path: string): Received[] {
    return this.records.filter((r) => r.path === path);
  }

  private async handle(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    const body = await req.text();
    const headers = Object.fromEntries(req.headers.entries());
    const rec: Received = {
      path,
      id: headers["webhook-id"] ?? "",
      timestamp: headers["webhook-timestamp"] ?? "",
      headers,
      body,
      payload: null,
      verified: false,
      error: null,
      at: Date.now(),
    };
    try {
      const secret = this.secrets.get(path);
      if (!secret) throw new Error(`no secret for ${path}`);
      rec.payload = new Webhook(secret).verify(body, headers);
      rec.verified = true;
    } catch (err) {
      rec.error = String(err);
    }
    const nth = this.records.filter((r) => r.path === path && r.id === rec.id).length + 1;
    this.records.push(rec);
    const behaviour = this.behaviours.get(path);
    return behaviour ? behaviour(nth, rec) : new Response("ok");
  }
}

// ---------------------------------------------------------------------------------------------
// Set-up

const receiver = new Receiver();
let server: TestServer;
let n = 0;

const BASE_ENV = {
  FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
  FLAGSTAFF_JOB_POLL_MS: "50",
  FLAGSTAFF_JOB_LEASE_MS: "3000",
  FLAGSTAFF_WEBHOOK_TIMEOUT_MS: "1500",
  FLAGSTAFF_WEBHOOK_RETRY_SCALE: "0.0001",
  FLAGSTAFF_ENFORCEMENT_TICK_MS: "200",
};

beforeAll(async () => {
  receiver.start();
  server = await startServer(BASE_ENV);
});
afterAll(async () => {
  await server.dispose();
  await receiver.stop();
});

type EndpointBody = OrgOperations["webhooks-create"]["requestBody"]["content"]["application/json"];
type EventType = NonNullable<EndpointBody["eventTypes"]>[number];
type EndpointChange = NonNullable<OrgOperations["webhooks-update"]["requestBody"]>["content"]["application/json"];
type Action = OrgComponents["schemas"]["EnforcementAction"];

/** An organization of its own for each test, so endpoints of one test never see another's events. */
interface Tenant extends InitResult {
  /**
   * The typed organization client with the tenant's secret key, for the server as it runs now:
   * a restart gives the server a new port, so each call asks for the client afresh.
   */
  org: () => Promise<OrgClient>;
  /** The dashboard's procedures (tRPC) with the tenant's secret key. */
  platform: () => Caller;
}

async function tenant(s: TestServer = server): Promise<Tenant> {
  const t = await s.initOrg(`Hooks ${++n}`);
  return {
    ...t,
    org: () => s.orgClient(t.secretKey),
    platform: () => withKey(s, t.secretKey),
  };
}

const createEndpoint = async (t: Tenant, body: EndpointBody) =>
  (await t.org()).POST("/organizations/{orgSlug}/webhook-endpoints", { params: { path: { orgSlug: t.orgSlug } }, body });
const getEndpoint = async (t: Tenant, endpointId: string) =>
  (await t.org()).GET("/organizations/{orgSlug}/webhook-endpoints/{endpointId}", { params: { path: { orgSlug: t.orgSlug, endpointId } } });
const changeEndpoint = async (t: Tenant, endpointId: string, body: EndpointChange) =>
  (await t.org()).PATCH("/organizations/{orgSlug}/webhook-endpoints/{endpointId}", { params: { path: { orgSlug: t.orgSlug, endpointId } }, body });
const replay = async (t: Tenant, deliveryId: string) =>
  (await t.org()).POST("/organizations/{orgSlug}/webhook-deliveries/{deliveryId}/replay", { params: { path: { orgSlug: t.orgSlug, deliveryId } } });
const auditEvents = async (t: Tenant, query: NonNullable<OrgOperations["audit-list"]["parameters"]["query"]>) => {
  const r = await (await t.org()).GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug: t.orgSlug }, query } });
  expect(r.response.status).toBe(200);
  return r.data!;
};

/** Adds an endpoint at a fresh receiver path and teaches the receiver its secret. */
async function endpoint(t: Tenant, opts: { eventTypes?: EventType[]; behaviour?: Behaviour } = {}) {
  const path = `/hook-${++n}`;
  const r = await createEndpoint(t, { url: receiver.url(path), eventTypes: opts.eventTypes });
  expect(r.response.status).toBe(201);
  const { endpoint: created, secret } = r.data!;
  receiver.secrets.set(path, secret);
  if (opts.behaviour) receiver.behaviours.set(path, opts.behaviour);
  return { path, id: created.id, secret };
}

async function createAction(t: Tenant, body: Partial<OrgOperations["enforcement-create"]["requestBody"]["content"]["application/json"]> = {}): Promise<Action> {
  const r = await (await t.org()).POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", {
    params: { path: { orgSlug: t.orgSlug, projectId: t.projectId } },
    body: { kind: "ban", reason: "spam", identity: { type: "user", externalId: `u-${++n}` }, ...body },
  });
  expect(r.response.status).toBe(201);
  return r.data!.action;
}

async function deliveries(t: Tenant, endpointId: string) {
  const r = await (await t.org()).GET("/organizations/{orgSlug}/webhook-endpoints/{endpointId}/deliveries", { params: { path: { orgSlug: t.orgSlug, endpointId } } });
  expect(r.response.status).toBe(200);
  return r.data!.deliveries;
}

async function deliveryDetail(t: Tenant, deliveryId: string) {
  const r = await (await t.org()).GET("/organizations/{orgSlug}/webhook-deliveries/{deliveryId}", { params: { path: { orgSlug: t.orgSlug, deliveryId } } });
  expect(r.response.status).toBe(200);
  return r.data!;
}

const verified = (path: string) => receiver.got(path).filter((r) => r.verified);

// ---------------------------------------------------------------------------------------------

describe("endpoints", () => {
  test("create shows a whsec_ secret once; list, get, change, delete; refusals", async () => {
    const t = await tenant();
    const org = await t.org();
    const orgPath = { path: { orgSlug: t.orgSlug } };
    const created = await createEndpoint(t, {
      url: receiver.url("/managed"),
      description: "moderation sync",
      eventTypes: ["enforcement_action.revoked"],
    });
    expect(created.response.status).toBe(201);
    const { endpoint: ep, secret } = created.data!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const key = Buffer.from(secret.slice("whsec_".length), "base64");
    expect(key.length).toBeGreaterThanOrEqual(24);
    expect(key.length).toBeLessThanOrEqual(64);
    expect(ep).toMatchObject({ url: receiver.url("/managed"), description: "moderation sync", eventTypes: ["enforcement_action.revoked"], enabled: true, disabledReason: null });

    // The secret is never shown again.
    const list = await org.GET("/organizations/{orgSlug}/webhook-endpoints", { params: orgPath });
    expect(list.response.status).toBe(200);
    expect(list.data!.endpoints.length).toBe(1);
    expect(JSON.stringify(list.data)).not.toContain(secret.slice(10));
    expect(list.data!.endpoints[0]!.secretHint).toBe(`${secret.slice(0, 10)}…`);
    expect((await getEndpoint(t, ep.id)).data!.endpoint.id).toBe(ep.id);

    const changed = await changeEndpoint(t, ep.id, { eventTypes: [], enabled: false });
    expect(changed.response.status).toBe(200);
    expect(changed.data!.endpoint).toMatchObject({ eventTypes: [], enabled: false, disabledReason: "Disabled by its owner" });
    const again = await changeEndpoint(t, ep.id, { enabled: true });
    expect(again.data!.endpoint).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });

    // Invalid input. An event type the client's types forbid: this JSON is sent instead of the
    // (valid, so 201) typed body, still through the typed client.
    const unknownEvent = await org.POST("/organizations/{orgSlug}/webhook-endpoints", {
      params: orgPath,
      body: { url: receiver.url("/x") },
      bodySerializer: () => JSON.stringify({ url: receiver.url("/x"), eventTypes: ["user.created"] }),
    });
    expect(unknownEvent.response.status).toBe(400);
    expect((await createEndpoint(t, { url: "ftp://example.com/hook" })).response.status).toBe(400);
    expect((await createEndpoint(t, { url: "https://user:pw@example.com/hook" })).response.status).toBe(400);
    expect((await createEndpoint(t, { url: "not a url" })).response.status).toBe(400);

    // Keys: a publishable key is refused, another organization sees nothing.
    const pk = await (await server.orgClient(t.publishableKey)).GET("/organizations/{orgSlug}/webhook-endpoints", { params: orgPath });
    expect(pk.response.status).toBe(403);
    const other = await tenant();
    const theirs = await other.org();
    expect((await theirs.GET("/organizations/{orgSlug}/webhook-endpoints", { params: orgPath })).response.status).toBe(404);
    expect((await theirs.GET("/organizations/{orgSlug}/webhook-endpoints/{endpointId}", { params: { path: { orgSlug: other.orgSlug, endpointId: ep.id } } })).response.status).toBe(404);
    expect((await theirs.DELETE("/organizations/{orgSlug}/webhook-endpoints/{endpointId}", { params: { path: { orgSlug: other.orgSlug, endpointId: ep.id } } })).response.status).toBe(404);

    // tRPC has the same operations.
    const viaTrpc = await t.platform().trpc.webhooks.list.query({ orgSlug: t.orgSlug });
    expect(viaTrpc.endpoints[0]!.id).toBe(ep.id);

    // Rotation: a new secret, shown once.
    const rotated = await org.POST("/organizations/{orgSlug}/webhook-endpoints/{endpointId}/rotate-secret", { params: { path: { orgSlug: t.orgSlug, endpointId: ep.id } } });
    expect(rotated.response.status).toBe(200);
    expect(rotated.data!.secret).toMatch(/^whsec_/);
    expect(rotated.data!.secret).not.toBe(secret);

    expect((await org.DELETE("/organizations/{orgSlug}/webhook-endpoints/{endpointId}", { params: { path: { orgSlug: t.orgSlug, endpointId: ep.id } } })).response.status).toBe(200);
    expect((await getEndpoint(t, ep.id)).response.status).toBe(404);

    const audit = await auditEvents(t, { entityType: "webhook_endpoint", entityId: ep.id });
    expect(audit.events.map((e) => e.action)).toEqual([
      "WEBHOOK_ENDPOINT_DELETED", "WEBHOOK_SECRET_ROTATED", "WEBHOOK_ENDPOINT_UPDATED", "WEBHOOK_ENDPOINT_UPDATED", "WEBHOOK_ENDPOINT_CREATED",
    ]);
    expect(JSON.stringify(audit)).not.toContain(secret.slice(10));
  });
});

describe("delivery", () => {
  test("an endpoint without a filter gets the enforcement_action events only: SDK resolve and dismiss announce report.decided to endpoints that list it", async () => {
    // The specification: webhooks announce enforcement actions; the SDK report operations emit
    // no event. A receiver written to it refuses any other type (and would be retried 10 times).
    const t = await tenant();
    const SPEC_TYPES = ["enforcement_action.created", "enforcement_action.updated", "enforcement_action.revoked"];
    const spec = await endpoint(t, { behaviour: (_nth, rec) => new Response(null, { status: SPEC_TYPES.includes(rec.payload?.type) ? 204 : 400 }) });
    const decided = await endpoint(t, { eventTypes: ["report.decided"] });
    const sdk = await server.sdkClient(t.secretKey);
    const file = async () => {
      const r = await sdk.POST("/projects/{projectId}/reports", {
        params: { path: { projectId: t.projectId } },
        body: { reason: "spam", target: { contentType: "post", contentExternalId: `p-${++n}` }, reporter: { type: "user", externalId: `r-${n}` } },
      });
      expect(r.response.status).toBe(201);
      return r.data!.report.id;
    };
    const [resolved, dismissed] = [await file(), await file()];
    expect((await sdk.POST("/reports/{reportId}/resolve", { params: { path: { reportId: resolved } }, body: { resolutionCode: "SPAM_CONFIRMED" } })).response.status).toBe(200);
    expect((await sdk.POST("/reports/{reportId}/dismiss", { params: { path: { reportId: dismissed } }, body: { reason: "duplicate" } })).response.status).toBe(200);
    const action = await createAction(t);

    const got = await until("both report.decided events", async () => (verified(decided.path).length >= 2 ? verified(decided.path) : null), 15_000);
    expect(got.map((r) => [r.payload.type, r.payload.data.reportId]).sort()).toEqual([["report.decided", dismissed], ["report.decided", resolved]].sort());
    await until("the action's event at the unfiltered endpoint", async () => verified(spec.path).some((r) => r.payload.data.action?.id === action.id));
    await Bun.sleep(300);
    expect(verified(spec.path).map((r) => r.payload.type)).toEqual(["enforcement_action.created"]);
    const specDeliveries = await deliveries(t, spec.id);
    expect(specDeliveries.map((d) => [d.eventType, d.status])).toEqual([["enforcement_action.created", "delivered"]]);
    // The event types an endpoint without a filter gets, as the list of endpoints says.
    const list = await (await t.org()).GET("/organizations/{orgSlug}/webhook-endpoints", { params: { path: { orgSlug: t.orgSlug } } });
    expect(list.data!.endpoints.find((e) => e.id === spec.id)?.eventTypes).toEqual([]);
  });

  test("created, updated, expired and revoked actions each arrive signed (verified by standardwebhooks)", async () => {
    const t = await tenant();
    const all = await endpoint(t);
    const revokedOnly = await endpoint(t, { eventTypes: ["enforcement_action.revoked"] });

    const suspension = await createAction(t, { kind: "suspension", reason: "harassment", durationSeconds: 2, identity: { type: "user", externalId: "alice" } });
    const actionPath = (actionId: string) => ({ path: { orgSlug: t.orgSlug, projectId: t.projectId, actionId } });
    const changed = await (await t.org()).PATCH("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}", { params: actionPath(suspension.id), body: { note: "second warning ignored" } });
    expect(changed.response.status).toBe(200);
    const ban = await createAction(t, { kind: "ban", reason: "fraud", identity: { type: "user", externalId: "bob" } });
    const revoked = await (await t.org()).POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/revoke", { params: actionPath(ban.id), body: { reason: "wrong account" } });
    expect(revoked.response.status).toBe(200);

    // The suspension ends after 2 s: the scheduler marks it and announces the change.
    const got = await until("five verified messages", async () => (verified(all.path).length >= 5 ? verified(all.path) : null), 15_000);
    expect(receiver.got(all.path).every((r) => r.verified)).toBe(true);

    const find = (type: string, actionId: string, pred: (p: any) => boolean = () => true) =>
      got.find((r) => r.payload.type === type && r.payload.data.action.id === actionId && pred(r.payload));
    const created = find("enforcement_action.created", suspension.id);
    const noted = find("enforcement_action.updated", suspension.id, (p) => p.data.action.active === true);
    const expired = find("enforcement_action.updated", suspension.id, (p) => p.data.action.active === false);
    const banCreated = find("enforcement_action.created", ban.id);
    const banRevoked = find("enforcement_action.revoked", ban.id);
    for (const r of [created, noted, expired, banCreated, banRevoked]) expect(r).toBeDefined();

    // The payload: the whole action plus the identity's type and external ID.
    expect(created!.payload.data.identity).toEqual({ id: suspension.identityId, type: "user", externalId: "alice" });
    expect(created!.payload.data.action).toMatchObject({
      id: suspension.id, projectId: t.projectId, kind: "suspension", reason: "harassment", active: true, status: "active",
      endsAt: suspension.endsAt, revokedAt: null, createdBy: { type: "api_key" },
    });
    expect(noted!.payload.data.action.note).toBe("second warning ignored");
    expect(expired!.payload.data.action).toMatchObject({ active: false, status: "expired" });
    expect(expired!.payload.data.action.expiredAt).toBeString();
    expect(banRevoked!.payload.data.action).toMatchObject({ active: false, status: "revoked", revokeReason: "wrong account" });
    expect(banRevoked!.payload.data.identity).toMatchObject({ type: "user", externalId: "bob" });
    for (const r of got) {
      expect(new Date(r.payload.timestamp).toISOString()).toBe(r.payload.timestamp);
      expect(r.id).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(r.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(r.headers["content-type"]).toBe("application/json");
      expect(Math.abs(Number(r.timestamp) - Date.now() / 1000)).toBeLessThan(60);
    }
    // Five distinct messages, each received once.
    expect(new Set(got.map((r) => r.id)).size).toBe(5);

    // The checks can fail: a wrong secret or a changed byte is refused by the same library.
    const sample = got[0]!;
    expect(() => new Webhook(revokedOnly.secret).verify(sample.body, sample.headers)).toThrow();
    expect(() => new Webhook(all.secret).verify(sample.body.replace("suspension", "suspensiom"), sample.headers)).toThrow();

    // The event filter: the second endpoint only ever got the revocation.
    await until("the revocation on the filtered endpoint", async () => verified(revokedOnly.path).length >= 1);
    const filtered = await deliveries(t, revokedOnly.id);
    expect(filtered.map((d) => d.eventType)).toEqual(["enforcement_action.revoked"]);
    expect(verified(revokedOnly.path)[0]!.payload.data.action.id).toBe(ban.id);

    // The delivery log: the webhook-id is the delivery id; status code and latency recorded.
    const log = await deliveries(t, all.id);
    expect(log.length).toBe(5);
    expect(new Set(log.map((d) => d.id))).toEqual(new Set(got.map((r) => r.id)));
    for (const d of log) expect(d).toMatchObject({ status: "delivered", attempts: 1, lastStatusCode: 200, lastError: null });
    const detail = await deliveryDetail(t, log[0]!.id);
    expect(detail.attempts.length).toBe(1);
    expect(detail.attempts[0]).toMatchObject({ statusCode: 200, error: null });
    expect(detail.attempts[0]!.latencyMs).toBeGreaterThanOrEqual(0);
    expect(detail.payload).toMatchObject({ type: expect.stringMatching(/^enforcement_action\./) });

    // The expiry is in the audit trail, by the system.
    const audit = await auditEvents(t, { entityType: "enforcement_action", entityId: suspension.id });
    expect(audit.events.map((e) => e.action)).toEqual(["ENFORCEMENT_ACTION_EXPIRED", "ENFORCEMENT_ACTION_UPDATED", "ENFORCEMENT_ACTION_CREATED"]);
    expect(audit.events[0]!.actor).toEqual({ type: "system", id: null });
  });

  test("with the receiver down, deliveries are retried and all arrive after it returns", async () => {
    const t = await tenant();
    const ep = await endpoint(t);
    await receiver.stop();
    try {
      const actions = [await createAction(t), await createAction(t), await createAction(t)];
      // Each delivery fails at least twice while the receiver is away.
      await until("two failed attempts per delivery", async () => {
        const log = await deliveries(t, ep.id);
        return log.length === 3 && log.every((d) => d.attempts >= 2 && d.status === "pending");
      });
      const failedLog = await deliveries(t, ep.id);
      for (const d of failedLog) {
        expect(d.lastStatusCode).toBeNull();
        expect(d.lastError).toBeString();
      }
      expect(receiver.got(ep.path).length).toBe(0);
      receiver.start(); // same port
      const got = await until("all three after the receiver is back", async () => (verified(ep.path).length >= 3 ? verified(ep.path) : null), 15_000);
      expect(new Set(got.map((r) => r.payload.data.action.id))).toEqual(new Set(actions.map((a) => a.id)));
      const log = await until("all delivered", async () => {
        const l = await deliveries(t, ep.id);
        return l.every((d) => d.status === "delivered") ? l : null;
      });
      expect(new Set(log.map((d) => d.id))).toEqual(new Set(got.map((r) => r.id)));
      for (const d of log) {
        const detail = await deliveryDetail(t, d.id);
        expect(detail.attempts.length).toBeGreaterThanOrEqual(3);
        expect(detail.attempts.slice(0, -1).every((a) => a.statusCode === null && a.error)).toBe(true);
        expect(detail.attempts.at(-1)).toMatchObject({ statusCode: 200, error: null });
      }
    } finally {
      if (!receiver.server) receiver.start();
    }
  });

  test("a retried delivery keeps its webhook-id; only 2xx delivers; Retry-After on 429 is honoured", async () => {
    const t = await tenant();
    const ep = await endpoint(t, {
      behaviour: (nth) =>
        nth === 1
          ? new Response("bo\u0000om", { status: 500 }) // a NUL in the answer: kept as a space
          : nth === 2
            ? new Response("slow down", { status: 429, headers: { "Retry-After": "2" } })
            : nth === 3
              ? new Response("moved", { status: 302, headers: { location: receiver.url("/elsewhere") } })
              : new Response(null, { status: 204 }),
    });
    const action = await createAction(t);
    const got = await until("four attempts", async () => (receiver.got(ep.path).length >= 4 ? receiver.got(ep.path) : null), 15_000);
    expect(got.every((r) => r.verified)).toBe(true);
    expect(new Set(got.map((r) => r.id)).size).toBe(1);
    expect(got.every((r) => r.payload.data.action.id === action.id)).toBe(true);
    expect(got.every((r) => r.body === got[0]!.body)).toBe(true);
    // The schedule's second step is 5 s × 0.0001; the 429's Retry-After: 2 is honoured instead.
    const gap1 = got[1]!.at - got[0]!.at;
    const gap2 = got[2]!.at - got[1]!.at;
    expect(gap1).toBeLessThan(1_000);
    expect(gap2).toBeGreaterThanOrEqual(1_900);
    expect(receiver.got("/elsewhere").length).toBe(0); // redirects are not followed

    const d = await until("delivered", async () => {
      const l = await deliveries(t, ep.id);
      return l[0]?.status === "delivered" ? l[0] : null;
    });
    expect(d.id).toBe(got[0]!.id);
    const detail = await deliveryDetail(t, d.id);
    expect(detail.attempts.map((a) => a.statusCode)).toEqual([500, 429, 302, 204]);
    expect(detail.attempts[0]!.error).toBe("HTTP 500: bo om");
    expect(detail.attempts[2]!.error).toContain("redirects are not followed");
    expect(d).toMatchObject({ attempts: 4, lastStatusCode: 204, lastError: null });
  });

  test("an answer slower than the timeout fails the attempt, and the message is sent again", async () => {
    const t = await tenant();
    const ep = await endpoint(t, {
      behaviour: async (nth) => {
        if (nth === 1) await Bun.sleep(2_500); // FLAGSTAFF_WEBHOOK_TIMEOUT_MS is 1500 here
        return new Response("ok");
      },
    });
    await createAction(t);
    const d = await until("delivered on the second attempt", async () => {
      const l = await deliveries(t, ep.id);
      return l[0]?.status === "delivered" ? l[0] : null;
    });
    const detail = await deliveryDetail(t, d.id);
    expect(detail.attempts.length).toBe(2);
    expect(detail.attempts[0]!.statusCode).toBeNull();
    expect(detail.attempts[0]!.error).toContain("timeout");
    expect(detail.attempts[0]!.latencyMs).toBeGreaterThanOrEqual(1_400);
    expect(detail.attempts[1]!.statusCode).toBe(200);
    expect(new Set(receiver.got(ep.path).map((r) => r.id))).toEqual(new Set([d.id]));
  });

  test("410 Gone disables the endpoint with a reason; after re-enabling, a manual replay resends the same webhook-id", async () => {
    const t = await tenant();
    let gone = true;
    const ep = await endpoint(t, { behaviour: () => (gone ? new Response("gone", { status: 410 }) : new Response("ok")) });
    await createAction(t);
    const disabled = await until("the endpoint disabled", async () => {
      const r = await getEndpoint(t, ep.id);
      return r.data?.endpoint.enabled === false ? r.data.endpoint : null;
    });
    expect(disabled.disabledReason).toContain("410");
    expect(disabled.disabledAt).toBeString();
    const failed = (await deliveries(t, ep.id))[0]!;
    expect(failed).toMatchObject({ status: "failed", attempts: 1, lastStatusCode: 410 });
    expect(receiver.got(ep.path).length).toBe(1);

    // A disabled endpoint gets no new deliveries, and cannot be replayed to.
    await createAction(t);
    expect((await deliveries(t, ep.id)).length).toBe(1);
    expect((await replay(t, failed.id)).response.status).toBe(409);

    gone = false;
    const enabled = await changeEndpoint(t, ep.id, { enabled: true });
    expect(enabled.data!.endpoint).toMatchObject({ enabled: true, disabledReason: null });
    const replayed = await replay(t, failed.id);
    expect(replayed.response.status).toBe(200);
    expect(replayed.data!.delivery).toMatchObject({ id: failed.id, status: "pending" });
    await until("the replay", async () => verified(ep.path).filter((r) => r.headers["webhook-id"] === failed.id).length >= 2);
    const d = await until("delivered", async () => {
      const x = (await deliveries(t, ep.id))[0];
      return x?.status === "delivered" ? x : null;
    });
    expect(d).toMatchObject({ id: failed.id, attempts: 2, lastStatusCode: 200 });

    // Replaying a delivered message again is allowed; another organization's is a 404.
    const other = await tenant();
    expect((await replay(other, failed.id)).response.status).toBe(404);
    const theirs = await (await other.org()).GET("/organizations/{orgSlug}/webhook-deliveries/{deliveryId}", { params: { path: { orgSlug: other.orgSlug, deliveryId: failed.id } } });
    expect(theirs.response.status).toBe(404);
    const audit = await auditEvents(t, { action: "WEBHOOK_ENDPOINT_DISABLED" });
    expect(audit.events.length).toBe(1);
    expect(audit.events[0]!.actor.type).toBe("system");
  });
});

describe("crashes", () => {
  test("SIGKILL between the commit and the delivery: the message still arrives after restart", async () => {
    const t = await tenant();
    const ep = await endpoint(t);
    await receiver.stop(); // nothing can be delivered before the kill
    let action: Action | undefined;
    try {
      action = await createAction(t);
      await server.kill();
    } finally {
      receiver.start();
    }
    expect(receiver.got(ep.path).length).toBe(0);
    await server.start();
    const got = await until("the message after restart", async () => verified(ep.path)[0], 15_000);
    expect(got.payload.type).toBe("enforcement_action.created");
    expect(got.payload.data.action.id).toBe(action!.id);
  });

  test("SIGKILL during a delivery: the retried delivery keeps its webhook-id", async () => {
    const t = await tenant();
    let release: () => void = () => {};
    const ep = await endpoint(t, {
      behaviour: async (nth) => {
        if (nth === 1) await new Promise<void>((resolve) => (release = resolve)); // hold the first request
        return new Response("ok");
      },
    });
    const action = await createAction(t);
    const first = await until("the first request", async () => receiver.got(ep.path)[0]);
    await server.kill(); // while the receiver still holds the request: the job stays leased
    release();
    await server.start();
    const second = await until("the same message again after restart", async () => receiver.got(ep.path)[1], 15_000);
    expect(first.verified).toBe(true);
    expect(second.verified).toBe(true);
    expect(second.id).toBe(first.id);
    expect(second.body).toBe(first.body);
    expect(second.payload.data.action.id).toBe(action.id);
    const d = await until("delivered", async () => {
      const l = await deliveries(t, ep.id);
      return l[0]?.status === "delivered" ? l[0] : null;
    });
    expect(d.id).toBe(first.id);
  });
});

describe("failing endpoints and SSRF rules (a server with a short disable period)", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ ...BASE_ENV, FLAGSTAFF_WEBHOOK_DISABLE_AFTER_MS: "1000" });
  });
  afterAll(() => s.dispose());

  test("an endpoint failing without a break for longer than the limit is disabled, and its owner sees why", async () => {
    const t = await tenant(s);
    const ep = await endpoint(t, { behaviour: () => new Response("broken", { status: 500 }) });
    await createAction(t);
    const disabled = await until("the endpoint disabled", async () => {
      const r = await getEndpoint(t, ep.id);
      return r.data?.endpoint.enabled === false ? r.data.endpoint : null;
    }, 15_000);
    expect(disabled.disabledReason).toContain("failed without a break");
    expect(disabled.disabledReason).toContain("HTTP 500");
    expect(disabled.failingSince).toBeString();
    const d = (await deliveries(t, ep.id))[0];
    expect(d?.status).toBe("failed");
    expect(d?.attempts).toBeGreaterThanOrEqual(2);
    expect(receiver.got(ep.path).every((r) => r.verified)).toBe(true);
  });

  test("webhook URLs follow the link-scanning SSRF rules, at creation and at delivery", async () => {
    const t = await tenant(s);
    const ep = await endpoint(t); // created while private addresses are allowed (tests only)

    // The same server and database, now with private addresses refused, as in production.
    s.env.FLAGSTAFF_SCAN_ALLOW_PRIVATE = "0";
    await s.stop();
    await s.start();
    for (const url of [
      receiver.url("/private"),
      "http://127.0.0.1/",
      "http://localhost:8080/hook",
      "http://[::1]/hook",
      "http://169.254.169.254/latest/meta-data",
      "http://10.0.0.7/hook",
      "http://2130706433/",
    ]) {
      const r = await createEndpoint(t, { url });
      expect({ url, status: r.response.status, error: String(r.error?.error).slice(0, 4) }).toEqual({ url, status: 400, error: "url:" });
    }
    expect((await changeEndpoint(t, ep.id, { url: "http://127.0.0.1:9/" })).response.status).toBe(400);

    // The stored loopback endpoint: the pinned fetch refuses it at delivery, nothing is sent.
    await createAction(t);
    const d = await until("a refused attempt", async () => (await deliveries(t, ep.id)).find((x) => x.attempts >= 1));
    expect(d.lastStatusCode).toBeNull();
    expect(d.lastError).toContain("refused");
    expect(d.lastError).toContain("loopback");
    expect(receiver.got(ep.path).length).toBe(0);
  });
});

describe("host names", () => {
  test("a URL whose host name does not resolve is refused at creation and on change (REST and tRPC); names that resolve are kept", async () => {
    const t = await tenant();
    const nowhere = "https://hooks.no-such-host.invalid/flagstaff"; // .invalid never resolves (RFC 6761)
    const created = await createEndpoint(t, { url: nowhere });
    expect(created.response.status).toBe(400);
    expect(created.error?.error).toBe("url: the host name hooks.no-such-host.invalid does not resolve");

    // localhost resolves (private addresses are allowed in tests).
    const ok = await createEndpoint(t, { url: `http://localhost:${receiver.port}/named` });
    expect(ok.response.status).toBe(201);
    const id = ok.data!.endpoint.id;
    const changed = await changeEndpoint(t, id, { url: nowhere, description: "moved" });
    expect(changed.response.status).toBe(400);
    expect(changed.error?.error).toContain("does not resolve");
    expect((await getEndpoint(t, id)).data!.endpoint).toMatchObject({ url: `http://localhost:${receiver.port}/named`, description: null });

    // This half is about the tRPC procedures, which the REST clients do not reach.
    const viaTrpc = await expectRefused(t.platform().trpc.webhooks.create.mutate({ orgSlug: t.orgSlug, url: "http://nowhere.invalid:8080/x" }), "BAD_REQUEST");
    expect(viaTrpc.message).toBe("url: the host name nowhere.invalid does not resolve");
    await expectRefused(t.platform().trpc.webhooks.update.mutate({ orgSlug: t.orgSlug, endpointId: id, url: nowhere }), "BAD_REQUEST", "does not resolve");
    expect((await (await t.org()).GET("/organizations/{orgSlug}/webhook-endpoints", { params: { path: { orgSlug: t.orgSlug } } })).data!.endpoints.length).toBe(1);
  });
});
