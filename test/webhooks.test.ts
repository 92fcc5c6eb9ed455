/**
 * Outbound webhooks, end to end: a real server delivers to a loopback receiver that checks
 * every message with the `standardwebhooks` package (an implementation we did not write).
 * Retry delays are shortened with FLAGSTAFF_WEBHOOK_RETRY_SCALE; waits poll with a deadline.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { startServer, type CallResult, type InitResult, type TestServer } from "./helpers/server.ts";
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

/** An organization of its own for each test, so endpoints of one test never see another's events. */
interface Tenant extends InitResult {
  org: string;
  project: string;
  call: (method: string, path: string, body?: unknown) => Promise<CallResult<any>>;
}

async function tenant(s: TestServer = server): Promise<Tenant> {
  const t = await s.initOrg(`Hooks ${++n}`);
  const org = `/api/v1/organizations/${t.orgSlug}`;
  return {
    ...t,
    org,
    project: `${org}/projects/${t.projectId}`,
    call: (method, path, body) => s.call(method, path, { key: t.secretKey, body }),
  };
}

/** Adds an endpoint at a fresh receiver path and teaches the receiver its secret. */
async function endpoint(t: Tenant, opts: { eventTypes?: string[]; behaviour?: Behaviour } = {}) {
  const path = `/hook-${++n}`;
  const r = await t.call("POST", `${t.org}/webhook-endpoints`, { url: receiver.url(path), eventTypes: opts.eventTypes });
  expect(r.status).toBe(201);
  receiver.secrets.set(path, r.body.secret);
  if (opts.behaviour) receiver.behaviours.set(path, opts.behaviour);
  return { path, id: r.body.endpoint.id as string, secret: r.body.secret as string };
}

async function createAction(t: Tenant, body: Record<string, unknown> = {}) {
  const r = await t.call("POST", `${t.project}/enforcement-actions`, {
    kind: "ban",
    reason: "spam",
    identity: { type: "user", externalId: `u-${++n}` },
    ...body,
  });
  expect(r.status).toBe(201);
  return r.body.action;
}

async function deliveries(t: Tenant, endpointId: string) {
  const r = await t.call("GET", `${t.org}/webhook-endpoints/${endpointId}/deliveries`);
  expect(r.status).toBe(200);
  return r.body.deliveries as any[];
}

async function deliveryDetail(t: Tenant, deliveryId: string) {
  const r = await t.call("GET", `${t.org}/webhook-deliveries/${deliveryId}`);
  expect(r.status).toBe(200);
  return r.body;
}

const verified = (path: string) => receiver.got(path).filter((r) => r.verified);

// ---------------------------------------------------------------------------------------------

describe("endpoints", () => {
  test("create shows a whsec_ secret once; list, get, change, delete; refusals", async () => {
    const t = await tenant();
    const created = await t.call("POST", `${t.org}/webhook-endpoints`, {
      url: receiver.url("/managed"),
      description: "moderation sync",
      eventTypes: ["enforcement_action.revoked"],
    });
    expect(created.status).toBe(201);
    const { endpoint: ep, secret } = created.body;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const key = Buffer.from(secret.slice("whsec_".length), "base64");
    expect(key.length).toBeGreaterThanOrEqual(24);
    expect(key.length).toBeLessThanOrEqual(64);
    expect(ep).toMatchObject({ url: receiver.url("/managed"), description: "moderation sync", eventTypes: ["enforcement_action.revoked"], enabled: true, disabledReason: null });

    // The secret is never shown again.
    const list = await t.call("GET", `${t.org}/webhook-endpoints`);
    expect(list.status).toBe(200);
    expect(list.body.endpoints.length).toBe(1);
    expect(JSON.stringify(list.body)).not.toContain(secret.slice(10));
    expect(list.body.endpoints[0].secretHint).toBe(`${secret.slice(0, 10)}…`);
    expect((await t.call("GET", `${t.org}/webhook-endpoints/${ep.id}`)).body.endpoint.id).toBe(ep.id);

    const changed = await t.call("PATCH", `${t.org}/webhook-endpoints/${ep.id}`, { eventTypes: [], enabled: false });
    expect(changed.status).toBe(200);
    expect(changed.body.endpoint).toMatchObject({ eventTypes: [], enabled: false, disabledReason: "Disabled by its owner" });
    const again = await t.call("PATCH", `${t.org}/webhook-endpoints/${ep.id}`, { enabled: true });
    expect(again.body.endpoint).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });

    // Invalid input.
    expect((await t.call("POST", `${t.org}/webhook-endpoints`, { url: receiver.url("/x"), eventTypes: ["user.created"] })).status).toBe(400);
    expect((await t.call("POST", `${t.org}/webhook-endpoints`, { url: "ftp://example.com/hook" })).status).toBe(400);
    expect((await t.call("POST", `${t.org}/webhook-endpoints`, { url: "https://user:pw@example.com/hook" })).status).toBe(400);
    expect((await t.call("POST", `${t.org}/webhook-endpoints`, { url: "not a url" })).status).toBe(400);

    // Keys: a publishable key is refused, another organization sees nothing.
    const pk = await server.call("GET", `${t.org}/webhook-endpoints`, { key: t.publishableKey });
    expect(pk.status).toBe(403);
    const other = await tenant();
    expect((await other.call("GET", `${t.org}/webhook-endpoints`)).status).toBe(404);
    expect((await other.call("GET", `${other.org}/webhook-endpoints/${ep.id}`)).status).toBe(404);
    expect((await other.call("DELETE", `${other.org}/webhook-endpoints/${ep.id}`)).status).toBe(404);

    // tRPC has the same operations.
    const viaTrpc = await t.call("GET", `/trpc/webhooks.list?input=${encodeURIComponent(JSON.stringify({ orgSlug: t.orgSlug }))}`);
    expect(viaTrpc.status).toBe(200);
    expect(viaTrpc.body.result.data.endpoints[0].id).toBe(ep.id);

    // Rotation: a new secret, shown once.
    const rotated = await t.call("POST", `${t.org}/webhook-endpoints/${ep.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(secret);

    expect((await t.call("DELETE", `${t.org}/webhook-endpoints/${ep.id}`)).status).toBe(200);
    expect((await t.call("GET", `${t.org}/webhook-endpoints/${ep.id}`)).status).toBe(404);

    const audit = await t.call("GET", `${t.org}/audit-events?entityType=webhook_endpoint&entityId=${ep.id}`);
    expect(audit.body.events.map((e: any) => e.action)).toEqual([
      "WEBHOOK_ENDPOINT_DELETED", "WEBHOOK_SECRET_ROTATED", "WEBHOOK_ENDPOINT_UPDATED", "WEBHOOK_ENDPOINT_UPDATED", "WEBHOOK_ENDPOINT_CREATED",
    ]);
    expect(JSON.stringify(audit.body)).not.toContain(secret.slice(10));
  });
});

describe("delivery", () => {
  test("created, updated, expired and revoked actions each arrive signed (verified by standardwebhooks)", async () => {
    const t = await tenant();
    const all = await endpoint(t);
    const revokedOnly = await endpoint(t, { eventTypes: ["enforcement_action.revoked"] });

    const suspension = await createAction(t, { kind: "suspension", reason: "harassment", durationSeconds: 2, identity: { type: "user", externalId: "alice" } });
    const changed = await t.call("PATCH", `${t.project}/enforcement-actions/${suspension.id}`, { note: "second warning ignored" });
    expect(changed.status).toBe(200);
    const ban = await createAction(t, { kind: "ban", reason: "fraud", identity: { type: "user", externalId: "bob" } });
    const revoked = await t.call("POST", `${t.project}/enforcement-actions/${ban.id}/revoke`, { reason: "wrong account" });
    expect(revoked.status).toBe(200);

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
    const detail = await deliveryDetail(t, log[0].id);
    expect(detail.attempts.length).toBe(1);
    expect(detail.attempts[0]).toMatchObject({ statusCode: 200, error: null });
    expect(detail.attempts[0].latencyMs).toBeGreaterThanOrEqual(0);
    expect(detail.payload.type).toMatch(/^enforcement_action\./);

    // The expiry is in the audit trail, by the system.
    const audit = await t.call("GET", `${t.org}/audit-events?entityType=enforcement_action&entityId=${suspension.id}`);
    expect(audit.body.events.map((e: any) => e.action)).toEqual(["ENFORCEMENT_ACTION_EXPIRED", "ENFORCEMENT_ACTION_UPDATED", "ENFORCEMENT_ACTION_CREATED"]);
    expect(audit.body.events[0].actor).toEqual({ type: "system", id: null });
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
        expect(detail.attempts.slice(0, -1).every((a: any) => a.statusCode === null && a.error)).toBe(true);
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
          ? new Response("boom", { status: 500 })
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

    const [d] = await until("delivered", async () => {
      const l = await deliveries(t, ep.id);
      return l[0]?.status === "delivered" ? l : null;
    });
    expect(d.id).toBe(got[0]!.id);
    const detail = await deliveryDetail(t, d.id);
    expect(detail.attempts.map((a: any) => a.statusCode)).toEqual([500, 429, 302, 204]);
    expect(detail.attempts[0].error).toContain("HTTP 500");
    expect(detail.attempts[2].error).toContain("redirects are not followed");
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
    const [d] = await until("delivered on the second attempt", async () => {
      const l = await deliveries(t, ep.id);
      return l[0]?.status === "delivered" ? l : null;
    });
    const detail = await deliveryDetail(t, d.id);
    expect(detail.attempts.length).toBe(2);
    expect(detail.attempts[0].statusCode).toBeNull();
    expect(detail.attempts[0].error).toContain("timeout");
    expect(detail.attempts[0].latencyMs).toBeGreaterThanOrEqual(1_400);
    expect(detail.attempts[1].statusCode).toBe(200);
    expect(new Set(receiver.got(ep.path).map((r) => r.id))).toEqual(new Set([d.id]));
  });

  test("410 Gone disables the endpoint with a reason; after re-enabling, a manual replay resends the same webhook-id", async () => {
    const t = await tenant();
    let gone = true;
    const ep = await endpoint(t, { behaviour: () => (gone ? new Response("gone", { status: 410 }) : new Response("ok")) });
    await createAction(t);
    const disabled = await until("the endpoint disabled", async () => {
      const r = await t.call("GET", `${t.org}/webhook-endpoints/${ep.id}`);
      return r.body.endpoint.enabled === false ? r.body.endpoint : null;
    });
    expect(disabled.disabledReason).toContain("410");
    expect(disabled.disabledAt).toBeString();
    const [failed] = await deliveries(t, ep.id);
    expect(failed).toMatchObject({ status: "failed", attempts: 1, lastStatusCode: 410 });
    expect(receiver.got(ep.path).length).toBe(1);

    // A disabled endpoint gets no new deliveries, and cannot be replayed to.
    await createAction(t);
    expect((await deliveries(t, ep.id)).length).toBe(1);
    expect((await t.call("POST", `${t.org}/webhook-deliveries/${failed.id}/replay`)).status).toBe(409);

    gone = false;
    const enabled = await t.call("PATCH", `${t.org}/webhook-endpoints/${ep.id}`, { enabled: true });
    expect(enabled.body.endpoint).toMatchObject({ enabled: true, disabledReason: null });
    const replay = await t.call("POST", `${t.org}/webhook-deliveries/${failed.id}/replay`);
    expect(replay.status).toBe(200);
    expect(replay.body.delivery).toMatchObject({ id: failed.id, status: "pending" });
    await until("the replay", async () => verified(ep.path).filter((r) => r.headers["webhook-id"] === failed.id).length >= 2);
    const d = await until("delivered", async () => {
      const x = (await deliveries(t, ep.id))[0];
      return x?.status === "delivered" ? x : null;
    });
    expect(d).toMatchObject({ id: failed.id, attempts: 2, lastStatusCode: 200 });

    // Replaying a delivered message again is allowed; another organization's is a 404.
    const other = await tenant();
    expect((await other.call("POST", `${other.org}/webhook-deliveries/${failed.id}/replay`)).status).toBe(404);
    expect((await other.call("GET", `${other.org}/webhook-deliveries/${failed.id}`)).status).toBe(404);
    const audit = await t.call("GET", `${t.org}/audit-events?action=WEBHOOK_ENDPOINT_DISABLED`);
    expect(audit.body.events.length).toBe(1);
    expect(audit.body.events[0].actor.type).toBe("system");
  });
});

describe("crashes", () => {
  test("SIGKILL between the commit and the delivery: the message still arrives after restart", async () => {
    const t = await tenant();
    const ep = await endpoint(t);
    await receiver.stop(); // nothing can be delivered before the kill
    let action: any;
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
    expect(got.payload.data.action.id).toBe(action.id);
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
    const [d] = await until("delivered", async () => {
      const l = await deliveries(t, ep.id);
      return l[0]?.status === "delivered" ? l : null;
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
      const r = await t.call("GET", `${t.org}/webhook-endpoints/${ep.id}`);
      return r.body.endpoint.enabled === false ? r.body.endpoint : null;
    }, 15_000);
    expect(disabled.disabledReason).toContain("failed without a break");
    expect(disabled.disabledReason).toContain("HTTP 500");
    expect(disabled.failingSince).toBeString();
    const [d] = await deliveries(t, ep.id);
    expect(d.status).toBe("failed");
    expect(d.attempts).toBeGreaterThanOrEqual(2);
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
      const r = await t.call("POST", `${t.org}/webhook-endpoints`, { url });
      expect({ url, status: r.status, error: String(r.body.error).slice(0, 4) }).toEqual({ url, status: 400, error: "url:" });
    }
    expect((await t.call("PATCH", `${t.org}/webhook-endpoints/${ep.id}`, { url: "http://127.0.0.1:9/" })).status).toBe(400);

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
    const created = await t.call("POST", `${t.org}/webhook-endpoints`, { url: nowhere });
    expect(created.status).toBe(400);
    expect(created.body.error).toBe("url: the host name hooks.no-such-host.invalid does not resolve");

    // localhost resolves (private addresses are allowed in tests).
    const ok = await t.call("POST", `${t.org}/webhook-endpoints`, { url: `http://localhost:${receiver.port}/named` });
    expect(ok.status).toBe(201);
    const id = ok.body.endpoint.id;
    const changed = await t.call("PATCH", `${t.org}/webhook-endpoints/${id}`, { url: nowhere, description: "moved" });
    expect(changed.status).toBe(400);
    expect(changed.body.error).toContain("does not resolve");
    expect((await t.call("GET", `${t.org}/webhook-endpoints/${id}`)).body.endpoint).toMatchObject({ url: `http://localhost:${receiver.port}/named`, description: null });

    const viaTrpc = await t.call("POST", "/trpc/webhooks.create", { orgSlug: t.orgSlug, url: "http://nowhere.invalid:8080/x" });
    expect(viaTrpc.status).toBe(400);
    expect(viaTrpc.body.error.message).toBe("url: the host name nowhere.invalid does not resolve");
    const updateViaTrpc = await t.call("POST", "/trpc/webhooks.update", { orgSlug: t.orgSlug, endpointId: id, url: nowhere });
    expect(updateViaTrpc.status).toBe(400);
    expect(updateViaTrpc.body.error.message).toContain("does not resolve");
    expect((await t.call("GET", `${t.org}/webhook-endpoints`)).body.endpoints.length).toBe(1);
  });
});
