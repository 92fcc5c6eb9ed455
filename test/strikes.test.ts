/**
 * Strikes over HTTP (src/domain/strikes/strikes.ts, strike-ladder.ts): the policy's routes
 * and procedures (admins change it, its checks are 400s naming the field), a ladder reaching a
 * suspension through decisions taken on the dashboard, announced like a moderator's action
 * (webhook with its statement, automated) and marked as the policy's in the audit trail; an
 * identity's strikes on the organization route, the tRPC procedure and the SDK's pull, with the
 * cases of a queue the caller may not work left out of the list.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { OrgClient, SdkClient } from "../clients/typescript/index.ts";
import { demoAdmin, expectRefused, newUser, type DashboardUser } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10);

let server: TestServer;
let org: OrgClient;
let sdk: SdkClient;
let admin: DashboardUser;
let mod: DashboardUser;
let orgSlug: string;
let projectId: string;
let receiver: ReturnType<typeof Bun.serve>;
const received: { type: string; data: { action: { kind: string; identity: { externalId: string }; createdBy: { type: string } }; statement: { automated_decision: string } | null } }[] = [];

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1", FLAGSTAFF_JOB_POLL_MS: "50", FLAGSTAFF_WEBHOOK_RETRY_SCALE: "0.0001", FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  ({ orgSlug, projectId } = server.demo);
  org = await server.orgClient();
  sdk = await server.sdkClient();
  admin = await demoAdmin(server);
  mod = await newUser(server, "moderator", "striker");
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (req) => {
      received.push(await req.json());
      return new Response("ok");
    },
  });
  await org.POST("/organizations/{orgSlug}/webhook-endpoints", { params: { path: { orgSlug } }, body: { url: `http://127.0.0.1:${receiver.port}/hook` } });
});
afterAll(async () => {
  await receiver?.stop(true);
  await server?.stop();
});

const path = () => ({ orgSlug, projectId });
async function file(subject: { type: string; externalId: string }, reason = "spam"): Promise<string> {
  const filed = await sdk.POST("/projects/{projectId}/reports", {
    params: { path: { projectId } },
    body: { subject, reason, target: { contentType: "post", contentExternalId: `p-${unique()}` } },
  });
  return filed.data!.report.id;
}
async function until<T>(what: () => Promise<T | undefined>, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("timed out");
    await Bun.sleep(50);
  }
}

test("the policy: off by default; an admin replaces it (REST and tRPC), a moderator may read it but not change it; bad ladders are 400s naming the field", async () => {
  const got = await org.GET("/organizations/{orgSlug}/projects/{projectId}/strike-policy", { params: { path: path() } });
  expect(got.data?.policy).toMatchObject({ enabled: false, windowDays: 90, ladder: [] });
  expect((await mod.trpc.strikes.policy.query(path())).policy.enabled).toBe(false);
  await expectRefused(mod.trpc.strikes.setPolicy.mutate({ ...path(), enabled: true }), "FORBIDDEN", "admin");

  const bad = async (body: Record<string, unknown>) => {
    const r = await org.PUT("/organizations/{orgSlug}/projects/{projectId}/strike-policy", { params: { path: path() }, body: body as never });
    expect(r.response.status).toBe(400);
    return r.error!.error;
  };
  expect(await bad({ ladder: [{ threshold: 3, kind: "warning" }, { threshold: 2, kind: "ban" }] })).toContain("ladder[1].threshold: thresholds must increase");
  expect(await bad({ ladder: [{ threshold: 3, kind: "suspension" }] })).toContain("ladder[0].durationSeconds: a suspension needs a duration");
  expect(await bad({ ladder: [{ threshold: 3, kind: "content_removal" }] })).toContain("ladder[0].kind: a ladder acts on the account");
  expect(await bad({ ladder: [{ threshold: 3, kind: "demotion" }] })).toContain("ladder[0].kind");
  expect(await bad({ strikes: { byReason: { nope: 2 } } })).toContain("strikes.byReason.nope: not a report category of this project");
  await expectRefused(admin.trpc.strikes.setPolicy.mutate({ ...path(), windowDays: 0 }), "BAD_REQUEST", "windowDays");

  const put = await admin.trpc.strikes.setPolicy.mutate({
    ...path(),
    enabled: true,
    windowDays: 30,
    strikes: { default: 1, byReason: { harassment: 2 } },
    ladder: [{ threshold: 1, kind: "warning" }, { threshold: 3, kind: "suspension", durationSeconds: 86_400 }, { threshold: 5, kind: "ban" }],
  });
  expect(put.policy.ladder.map((s) => s.kind)).toEqual(["warning", "suspension", "ban"]);
  expect((await org.GET("/organizations/{orgSlug}/projects/{projectId}/strike-policy", { params: { path: path() } })).data?.policy).toEqual(put.policy);
});

test("unknown keys in a policy, at any depth (`__proto__` and `toString` among them), are a 400 naming them, REST and tRPC; nothing is saved", async () => {
  const policyPath = `/api/v1/organizations/${orgSlug}/projects/${projectId}/strike-policy`;
  const before = (await admin.trpc.strikes.policy.query(path())).policy;
  // Raw JSON: in an object literal, "__proto__" would set the prototype rather than make a key.
  // Each body, where its unknown keys are (REST names the path) and which they are.
  const cases: [string, string, string[]][] = [
    ['{"enabled":true,"__proto__":{"enabled":false},"toString":3}', "Unrecognized keys", ["__proto__", "toString"]],
    ['{"enabled":true,"strikes":{"default":1,"weights":{"spam":2}}}', "strikes: ", ["weights"]],
    ['{"enabled":true,"strikes":{"bySeverity":{"HIGH":2,"toString":1}}}', "strikes.bySeverity: ", ["toString"]],
    ['{"enabled":true,"strikes":{"byReason":{"__proto__":3}}}', "strikes.byReason: ", ["__proto__"]],
    ['{"enabled":true,"ladder":[{"threshold":1,"kind":"warning","durationSecs":60}]}', "ladder[0]: ", ["durationSecs"]],
  ];
  for (const [body, at, keys] of cases) {
    const r = await server.call("PUT", policyPath, { rawBody: body, headers: { "content-type": "application/json" } });
    expect({ body, status: r.status }).toEqual({ body, status: 400 });
    expect(r.body.error).toContain(at);
    for (const key of keys) expect(r.body.error).toContain(`"${key}"`);
    const refused = await expectRefused(admin.trpc.strikes.setPolicy.mutate({ ...path(), ...(JSON.parse(body) as object) }), "BAD_REQUEST", "Unrecognized key");
    for (const key of keys) expect(refused.message).toContain(key);
  }
  expect((await admin.trpc.strikes.policy.query(path())).policy).toEqual(before);
});

test("decisions climb the ladder to a suspension: taken by the system, announced with its automated statement, audited as the policy's; strikes on every reading", async () => {
  const subject = { type: "user", externalId: `climber-${unique()}` };
  await mod.resolve(await file(subject), { resolutionCode: "SPAM_CONFIRMED" });
  const warning = await until(async () => received.find((e) => e.data.action.identity.externalId === subject.externalId && e.data.action.kind === "warning"));
  expect(warning.type).toBe("enforcement_action.created");
  // A harassment finding weighs 2: from 1 to 3 strikes, the suspension's threshold.
  await mod.resolve(await file(subject, "harassment"), { resolutionCode: "HARASSMENT_CONFIRMED" });
  const t0 = performance.now();
  const suspension = await until(async () => received.find((e) => e.data.action.identity.externalId === subject.externalId && e.data.action.kind === "suspension"));
  console.log(`ladder suspension announced ${Math.round(performance.now() - t0)} ms after the decision`);
  expect(suspension.data.action.createdBy.type).toBe("system");
  expect(suspension.data.statement?.automated_decision).toBe("AUTOMATED_DECISION_FULLY");

  const strikes = await org.GET("/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}/strikes", {
    params: { path: { ...path(), typeName: subject.type, externalId: subject.externalId } },
  });
  expect(strikes.data).toMatchObject({ total: 3, nextStep: { threshold: 5, kind: "ban" } });
  expect(strikes.data!.strikes.map((s) => [s.count, s.step?.kind ?? null])).toEqual([[2, "suspension"], [1, "warning"]]);
  const suspensionId = strikes.data!.strikes[0]!.actionId!;
  const trail = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug }, query: { entityId: suspensionId } } });
  expect(trail.data?.events[0]).toMatchObject({ action: "ENFORCEMENT_ACTION_CREATED", actor: { type: "system" }, data: { automated: true, strikePolicy: { threshold: 3 } } });

  const pulled = await sdk.GET("/projects/{projectId}/identities/{typeName}/{externalId}/enforcement-actions", {
    params: { path: { projectId, typeName: subject.type, externalId: subject.externalId } },
  });
  expect(pulled.data?.actions.map((a) => a.kind)).toEqual(["suspension", "warning"]);
  expect(pulled.data?.strikes.total).toBe(3);
  expect((await mod.trpc.strikes.ofIdentity.query({ ...path(), typeName: subject.type, externalId: subject.externalId })).total).toBe(3);
});

test("an unknown identity's strikes are a 404; a restricted case's strike counts but is not listed to a moderator outside its queue", async () => {
  const unknown = await org.GET("/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}/strikes", {
    params: { path: { ...path(), typeName: "user", externalId: "nobody-here" } },
  });
  expect(unknown.response.status).toBe(404);

  const specialist = await newUser(server, "moderator", "specialist");
  const cs = await admin.trpc.queues.create.mutate({ orgSlug, name: `Restricted ${unique()}`, access: { users: [specialist.id], roles: [] } });
  const subject = { type: "user", externalId: `hidden-${unique()}` };
  const reportId = await file(subject);
  const { report } = (await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } })).data!;
  await admin.trpc.queues.moveCase.mutate({ orgSlug, caseId: report.caseId, queueId: cs.queue.id });
  await specialist.resolve(reportId, { resolutionCode: "SPAM_CONFIRMED" });
  const key = { ...path(), typeName: subject.type, externalId: subject.externalId };
  const seen = await specialist.trpc.strikes.ofIdentity.query(key);
  expect(seen.strikes.map((s) => s.caseId)).toEqual([report.caseId]);
  const outside = await mod.trpc.strikes.ofIdentity.query(key);
  expect(outside).toMatchObject({ total: 1, strikes: [] });
});
