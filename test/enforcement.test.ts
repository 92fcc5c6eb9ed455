/**
 * Enforcement actions and appeals through HTTP: organization routes, the SDK pull route, the
 * resolve-with-action step, appeal → uphold / overturn with the statuses and audit events they
 * leave, and the expiry of suspensions by the scheduler.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

// Servers are real child processes and some waits span retries: more than the 5 s default.
setDefaultTimeout(30_000);

let server: TestServer;
let other: InitResult;
let org: string;
let project: string;
let n = 0;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000", FLAGSTAFF_ENFORCEMENT_TICK_MS: "200" });
  other = await server.initOrg("Other Org");
  org = `/api/v1/organizations/${server.demo.orgSlug}`;
  project = `${org}/projects/${server.demo.projectId}`;
});
afterAll(() => server.dispose());

const user = () => ({ type: "user", externalId: `user-${++n}` });

async function createAction(body: Record<string, unknown>) {
  const r = await server.call("POST", `${project}/enforcement-actions`, { body: { kind: "warning", reason: "spam", identity: user(), ...body } });
  expect(r.status).toBe(201);
  return r.body.action;
}

/** A report with a subject and a content target, alone in a fresh case. */
async function freshReport(subject: { type: string; externalId: string } | null = user()): Promise<string> {
  const r = await server.call("POST", `/projects/${server.demo.projectId}/reports`, {
    body: { ...(subject ? { subject } : {}), target: { contentExternalId: `post-${++n}`, contentType: "post" }, reason: "harassment" },
  });
  expect(r.status).toBe(201);
  return r.body.report.id;
}

const report = async (id: string) => (await server.call("GET", `/reports/${id}`)).body.report;
const caseStatus = async (caseId: string) => {
  const r = await server.call("GET", `/trpc/cases.detail?input=${encodeURIComponent(JSON.stringify({ caseId }))}`);
  expect(r.status).toBe(200);
  return r.body.result.data.case.status;
};
const audit = async (entityType: string, entityId: string) => {
  const r = await server.call("GET", `${org}/audit-events?entityType=${entityType}&entityId=${entityId}`);
  expect(r.status).toBe(200);
  return r.body.events as any[];
};
const actions = (events: any[]) => events.map((e) => e.action);

/** A RESOLVED report with a suspension of its subject applied by the resolution. */
async function resolvedWithSuspension() {
  const reportId = await freshReport();
  const r = await server.call("POST", `/reports/${reportId}/resolve`, {
    body: { resolutionCode: "ACCOUNT_LEVEL_ACTION", note: "repeat offender", action: { kind: "suspension", durationSeconds: 7 * 24 * 3600 } },
  });
  expect(r.status).toBe(200);
  expect(r.body.ok).toBe(true);
  return { reportId, actionId: r.body.enforcementActionId as string, caseId: (await report(reportId)).caseId as string };
}

const appeal = (actionId: string, text = "I was hacked", key?: string) =>
  server.call("POST", `/projects/${server.demo.projectId}/enforcement-actions/${actionId}/appeal`, { key, body: { text } });

describe("enforcement actions", () => {
  test("each kind is created with all its fields", async () => {
    const alice = user();
    const suspension = await createAction({ kind: "suspension", reason: "harassment", note: "3rd strike", identity: alice, durationSeconds: 3600 });
    expect(suspension).toMatchObject({
      projectId: server.demo.projectId, kind: "suspension", reason: "harassment", note: "3rd strike",
      identity: { type: "user", externalId: alice.externalId }, reportId: null, caseId: null, content: null,
      expiredAt: null, revokedAt: null, revokedBy: null, revokeReason: null, createdBy: { type: "api_key" },
      active: true, status: "active",
    });
    const ends = Date.parse(suspension.endsAt) - Date.parse(suspension.startsAt);
    expect(ends).toBeGreaterThanOrEqual(3_599_000);
    expect(ends).toBeLessThanOrEqual(3_601_000);
    expect(suspension.identityId).toBe(suspension.identity.id);

    const mute = await createAction({ kind: "mute", identity: alice, endsAt: "2099-01-01T00:00:00Z" });
    expect(mute.endsAt).toBe("2099-01-01T00:00:00.000Z");
    expect((await createAction({ kind: "mute", identity: alice })).endsAt).toBeNull();
    expect((await createAction({ kind: "ban", identity: alice })).endsAt).toBeNull();
    expect((await createAction({ kind: "warning", identity: alice })).kind).toBe("warning");
    const removal = await createAction({ kind: "content_removal", identity: alice, content: { contentType: "comment", contentExternalId: "c-1" } });
    expect(removal.content).toEqual({ contentType: "comment", contentExternalId: "c-1" });

    // The identity was created in the mirror by the first action.
    const ids = await server.call("GET", `/projects/${server.demo.projectId}/identities?search=${alice.externalId}`);
    expect(ids.body.identities.map((i: any) => i.externalId)).toEqual([alice.externalId]);
    expect(actions(await audit("enforcement_action", suspension.id))).toEqual(["ENFORCEMENT_ACTION_CREATED"]);
  });

  test("invalid combinations → 400; unknown or foreign → 404; publishable key → 403", async () => {
    const bad = async (body: Record<string, unknown>) => {
      const r = await server.call("POST", `${project}/enforcement-actions`, { body: { kind: "warning", reason: "spam", identity: user(), ...body } });
      expect(r.status).toBe(400);
      expect(r.body.error).toBeString();
      return r.body.error as string;
    };
    expect(await bad({ kind: "suspension" })).toContain("end");
    expect(await bad({ kind: "ban", durationSeconds: 60 })).toContain("no end");
    expect(await bad({ kind: "warning", endsAt: "2099-01-01T00:00:00Z" })).toContain("no end");
    expect(await bad({ kind: "suspension", endsAt: "2001-01-01T00:00:00Z" })).toContain("future");
    expect(await bad({ kind: "suspension", endsAt: "tomorrow" })).toContain("ISO");
    expect(await bad({ kind: "suspension", endsAt: "2099-01-01T00:00:00Z", durationSeconds: 60 })).toContain("not both");
    expect(await bad({ kind: "content_removal" })).toContain("content");
    expect(await bad({ kind: "shadowban" })).toBeString();
    expect(await bad({ reason: "" })).toBeString();
    expect(await bad({ identity: undefined })).toContain("identity");
    expect(await bad({ identity: { type: "user", externalId: "a\u0000b" } })).toBeString();

    expect((await server.call("POST", `${project}/enforcement-actions`, { body: { kind: "warning", reason: "x", identity: user(), reportId: "nope" } })).status).toBe(404);
    const foreignProject = `${org}/projects/${other.projectId}/enforcement-actions`;
    expect((await server.call("POST", foreignProject, { body: { kind: "warning", reason: "x", identity: user() } })).status).toBe(404);
    expect((await server.call("GET", `/api/v1/organizations/${other.orgSlug}/projects/${other.projectId}/enforcement-actions`)).status).toBe(404);
    const pk = await server.call("POST", `${project}/enforcement-actions`, { key: server.demo.publishableKey, body: { kind: "warning", reason: "x", identity: user() } });
    expect(pk.status).toBe(403);
    expect((await server.call("GET", `${project}/enforcement-actions`, { key: null })).status).toBe(401);
  });

  test("change and revoke, with audit events; a revoked action cannot change", async () => {
    const a = await createAction({ kind: "suspension", durationSeconds: 3600 });
    const changed = await server.call("PATCH", `${project}/enforcement-actions/${a.id}`, { body: { reason: "threats", note: "escalated", durationSeconds: 7200 } });
    expect(changed.status).toBe(200);
    expect(changed.body.action).toMatchObject({ reason: "threats", note: "escalated", active: true });
    expect(Date.parse(changed.body.action.endsAt)).toBeGreaterThan(Date.parse(a.endsAt));
    expect((await server.call("PATCH", `${project}/enforcement-actions/${a.id}`, { body: { endsAt: null } })).status).toBe(400); // a suspension keeps an end

    const revoked = await server.call("POST", `${project}/enforcement-actions/${a.id}/revoke`, { body: { reason: "mistake" } });
    expect(revoked.status).toBe(200);
    expect(revoked.body.action).toMatchObject({ active: false, status: "revoked", revokeReason: "mistake", revokedBy: { type: "api_key" } });
    expect(revoked.body.action.revokedAt).toBeString();
    expect((await server.call("POST", `${project}/enforcement-actions/${a.id}/revoke`, { body: {} })).status).toBe(409);
    expect((await server.call("PATCH", `${project}/enforcement-actions/${a.id}`, { body: { note: "late" } })).status).toBe(409);

    const events = await audit("enforcement_action", a.id);
    expect(actions(events)).toEqual(["ENFORCEMENT_ACTION_REVOKED", "ENFORCEMENT_ACTION_UPDATED", "ENFORCEMENT_ACTION_CREATED"]);
    expect(events[1].before).toMatchObject({ reason: "spam", note: null });
    expect(events[1].after).toMatchObject({ reason: "threats", note: "escalated" });
    expect(events[0].after).toEqual({ status: "revoked" });

    const got = await server.call("GET", `${project}/enforcement-actions/${a.id}`);
    expect(got.status).toBe(200);
    expect(got.body.action.status).toBe("revoked");
    expect(got.body.appeals).toEqual([]);
    expect((await server.call("GET", `${project}/enforcement-actions/nope`)).status).toBe(404);
  });

  test("a suspension ends on time: inactive at once, then marked expired by the scheduler", async () => {
    const bob = user();
    const a = await createAction({ kind: "suspension", identity: bob, durationSeconds: 1 });
    expect(a.active).toBe(true);
    const expired = await until("the expiry", async () => {
      const r = await server.call("GET", `${project}/enforcement-actions/${a.id}`);
      return r.body.action.expiredAt ? r.body.action : null;
    });
    expect(expired).toMatchObject({ active: false, status: "expired" });
    expect(Date.parse(expired.expiredAt)).toBeGreaterThanOrEqual(Date.parse(a.endsAt));
    const events = await audit("enforcement_action", a.id);
    expect(actions(events)).toEqual(["ENFORCEMENT_ACTION_EXPIRED", "ENFORCEMENT_ACTION_CREATED"]);
    expect(events[0].actor).toEqual({ type: "system", id: null });
    expect((await server.call("PATCH", `${project}/enforcement-actions/${a.id}`, { body: { durationSeconds: 60 } })).status).toBe(409);
  });

  test("the SDK pull route lists an identity's actions with whether each is in force", async () => {
    const carol = user();
    const ban = await createAction({ kind: "ban", identity: carol });
    const warning = await createAction({ kind: "warning", identity: carol });
    const short = await createAction({ kind: "mute", identity: carol, durationSeconds: 1 });
    await createAction({ kind: "ban" }); // someone else
    await server.call("POST", `${project}/enforcement-actions/${warning.id}/revoke`, { body: {} });

    const path = `/projects/${server.demo.projectId}/identities/user/${carol.externalId}/enforcement-actions`;
    const all = await until("the mute to end", async () => {
      const r = await server.call("GET", path);
      expect(r.status).toBe(200);
      return r.body.actions.find((x: any) => x.id === short.id)?.active === false ? r.body : null;
    });
    expect(all.actions.map((x: any) => x.id)).toEqual([short.id, warning.id, ban.id]); // newest first
    expect(all.actions.map((x: any) => [x.kind, x.active, x.status])).toEqual([
      ["mute", false, "expired"],
      ["warning", false, "revoked"],
      ["ban", true, "active"],
    ]);
    expect(all.actions.every((x: any) => x.identity.externalId === carol.externalId)).toBe(true);
    expect((await server.call("GET", `${path}?active=true`)).body.actions.map((x: any) => x.id)).toEqual([ban.id]);
    expect((await server.call("GET", `${path}?active=false`)).body.actions.map((x: any) => x.id)).toEqual([short.id, warning.id]);
    const page = await server.call("GET", `${path}?limit=2`);
    expect(page.body.actions.length).toBe(2);
    const rest = await server.call("GET", `${path}?limit=2&cursor=${page.body.nextCursor}`);
    expect(rest.body.actions.map((x: any) => x.id)).toEqual([ban.id]);
    expect(rest.body.nextCursor).toBeNull();

    expect((await server.call("GET", `/projects/${server.demo.projectId}/identities/user/nobody/enforcement-actions`)).status).toBe(404);
    expect((await server.call("GET", `/projects/${other.projectId}/identities/user/${carol.externalId}/enforcement-actions`)).status).toBe(404);
    expect((await server.call("GET", path, { key: server.demo.publishableKey })).status).toBe(403);
    expect((await server.call("GET", path, { key: null })).status).toBe(401);

    // The organization list filters the same way.
    const list = await server.call("GET", `${project}/enforcement-actions?identityType=user&externalId=${carol.externalId}&status=revoked`);
    expect(list.body.actions.map((x: any) => x.id)).toEqual([warning.id]);
    const bans = await server.call("GET", `${project}/enforcement-actions?kind=ban&identityType=user&externalId=${carol.externalId}`);
    expect(bans.body.actions.map((x: any) => x.id)).toEqual([ban.id]);
    expect((await server.call("GET", `${project}/enforcement-actions?identityType=user`)).status).toBe(400);
  });
});

describe("resolving a report with an action", () => {
  test("ACCOUNT_LEVEL_ACTION applies a suspension to the subject, linked to the report and its case", async () => {
    const subject = user();
    const reportId = await freshReport(subject);
    const r = await server.call("POST", `/reports/${reportId}/resolve`, {
      body: { resolutionCode: "ACCOUNT_LEVEL_ACTION", note: "confirmed", action: { kind: "suspension", durationSeconds: 86_400 } },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, enforcementActionId: expect.any(String) });
    const rep = await report(reportId);
    expect(rep.status).toBe("RESOLVED");
    expect(rep.resolution.code).toBe("ACCOUNT_LEVEL_ACTION");
    const a = (await server.call("GET", `${project}/enforcement-actions/${r.body.enforcementActionId}`)).body.action;
    expect(a).toMatchObject({
      kind: "suspension", reason: "harassment", note: "confirmed", reportId, caseId: rep.caseId,
      identity: { type: subject.type, externalId: subject.externalId }, active: true,
    });
    expect(a.content).toMatchObject({ contentType: "post" });
  });

  test("CONTENT_LEVEL_ACTION removes the report's target by default", async () => {
    const reportId = await freshReport();
    const r = await server.call("POST", `/reports/${reportId}/resolve`, { body: { resolutionCode: "CONTENT_LEVEL_ACTION", action: { reason: "hate speech" } } });
    expect(r.status).toBe(200);
    const rep = await report(reportId);
    const a = (await server.call("GET", `${project}/enforcement-actions/${r.body.enforcementActionId}`)).body.action;
    expect(a).toMatchObject({ kind: "content_removal", reason: "hate speech", reportId, content: rep.target && { contentType: "post", contentExternalId: rep.target.contentExternalId } });
  });

  test("a mismatched action is refused and the report is left untouched", async () => {
    const cases: [Record<string, unknown>, number][] = [
      [{ resolutionCode: "NO_VIOLATION", action: { kind: "warning" } }, 400],
      [{ action: { kind: "warning" } }, 400],
      [{ resolutionCode: "CONTENT_LEVEL_ACTION", action: { kind: "ban" } }, 400],
      [{ resolutionCode: "ACCOUNT_LEVEL_ACTION", action: {} }, 400],
      [{ resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "content_removal" } }, 400],
      [{ resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "suspension" } }, 400],
    ];
    for (const [body, status] of cases) {
      const reportId = await freshReport();
      const r = await server.call("POST", `/reports/${reportId}/resolve`, { body });
      expect({ body, status: r.status }).toEqual({ body, status });
      expect((await report(reportId)).status).toBe("OPEN");
      expect((await server.call("GET", `${project}/enforcement-actions?reportId=${reportId}`)).body.actions).toEqual([]);
    }
    // No subject to act on: 400, and the resolution is rolled back with it.
    const anonymous = await freshReport(null);
    const r = await server.call("POST", `/reports/${anonymous}/resolve`, { body: { resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "ban" } } });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain("subject");
    expect((await report(anonymous)).status).toBe("OPEN");
    // Already resolved: 409 and no second action.
    const { reportId } = await resolvedWithSuspension();
    const again = await server.call("POST", `/reports/${reportId}/resolve`, { body: { resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "ban" } } });
    expect(again.status).toBe(409);
    expect((await server.call("GET", `${project}/enforcement-actions?reportId=${reportId}`)).body.actions.length).toBe(1);
  });
});

describe("appeals", () => {
  test("appeal → APPEALED; uphold → CLOSED with the action standing; all audited", async () => {
    const { reportId, actionId, caseId } = await resolvedWithSuspension();
    const filed = await appeal(actionId, "It was my brother on my phone");
    expect(filed.status).toBe(201);
    expect(filed.body.appeal).toMatchObject({ actionId, reportId, caseId, projectId: server.demo.projectId, text: "It was my brother on my phone", status: "pending", decision: null });
    const appealId = filed.body.appeal.id;
    expect((await report(reportId)).status).toBe("APPEALED");
    expect(await caseStatus(caseId)).toBe("APPEALED");

    // A second appeal while one is pending → 409.
    const second = await appeal(actionId);
    expect(second.status).toBe(409);
    expect(second.body.error).toContain("pending");

    const pending = await server.call("GET", `${org}/appeals?status=pending`);
    expect(pending.status).toBe(200);
    expect(pending.body.appeals.map((a: any) => a.id)).toContain(appealId);

    const upheld = await server.call("POST", `${org}/appeals/${appealId}/uphold`, { body: { note: "evidence is clear" } });
    expect(upheld.status).toBe(200);
    expect(upheld.body.appeal).toMatchObject({ status: "upheld", decision: { by: { type: "api_key" }, note: "evidence is clear" } });
    expect((await report(reportId)).status).toBe("CLOSED");
    expect(await caseStatus(caseId)).toBe("CLOSED");
    const action = (await server.call("GET", `${project}/enforcement-actions/${actionId}`)).body;
    expect(action.action).toMatchObject({ active: true, revokedAt: null });
    expect(action.appeals.map((a: any) => [a.id, a.status])).toEqual([[appealId, "upheld"]]);
    expect((await server.call("GET", `${org}/appeals?status=pending`)).body.appeals.map((a: any) => a.id)).not.toContain(appealId);

    // Decided is final.
    expect((await server.call("POST", `${org}/appeals/${appealId}/uphold`, { body: {} })).status).toBe(409);
    expect((await server.call("POST", `${org}/appeals/${appealId}/overturn`, { body: {} })).status).toBe(409);
    expect((await appeal(actionId)).status).toBe(409);

    const appealEvents = await audit("appeal", appealId);
    expect(actions(appealEvents)).toEqual(["APPEAL_UPHELD", "APPEAL_FILED"]);
    expect(appealEvents[0].data).toMatchObject({ note: "evidence is clear", reportMoved: true, revokedActionIds: [] });
    const reportEvents = await audit("report", reportId);
    expect(actions(reportEvents).slice(0, 3)).toEqual(["REPORT_UPHELD", "REPORT_APPEALED", "REPORT_RESOLVED"]);
    expect(reportEvents[0].before).toEqual({ status: "APPEALED" });
    expect(reportEvents[0].after).toEqual({ status: "CLOSED" });
    expect(reportEvents[1].before).toEqual({ status: "RESOLVED" });
    expect(reportEvents[1].after).toEqual({ status: "APPEALED" });
    const caseEvents = (await audit("case", caseId)).filter((e) => e.action === "CASE_STATUS_CHANGED");
    expect(caseEvents.slice(0, 2).map((e) => [e.before.status, e.after.status, e.data.action])).toEqual([
      ["APPEALED", "CLOSED", "uphold"],
      ["RESOLVED", "APPEALED", "appeal"],
    ]);
    expect(actions(await audit("enforcement_action", actionId))).toEqual(["ENFORCEMENT_ACTION_CREATED"]);
  });

  test("overturn → CLOSED and the report's actions revoked, audited", async () => {
    const { reportId, actionId, caseId } = await resolvedWithSuspension();
    // A second action from the same decision: a removal of the reported post.
    const removal = await createAction({ kind: "content_removal", reportId, identity: undefined });
    expect(removal).toMatchObject({ reportId, caseId });
    const unrelated = await createAction({ kind: "ban" });

    const appealId = (await appeal(actionId)).body.appeal.id;
    const r = await server.call("POST", `${org}/appeals/${appealId}/overturn`, { body: { note: "context shows sarcasm" } });
    expect(r.status).toBe(200);
    expect(r.body.appeal).toMatchObject({ status: "overturned", decision: { note: "context shows sarcasm" } });
    expect(new Set(r.body.revoked.map((a: any) => a.id))).toEqual(new Set([actionId, removal.id]));
    for (const id of [actionId, removal.id]) {
      const a = (await server.call("GET", `${project}/enforcement-actions/${id}`)).body.action;
      expect(a).toMatchObject({ active: false, status: "revoked", revokeReason: "Appeal overturned: context shows sarcasm" });
      const events = await audit("enforcement_action", id);
      expect(events[0]).toMatchObject({ action: "ENFORCEMENT_ACTION_REVOKED", data: { appealId } });
    }
    expect((await server.call("GET", `${project}/enforcement-actions/${unrelated.id}`)).body.action.active).toBe(true);
    expect((await report(reportId)).status).toBe("CLOSED");
    expect(await caseStatus(caseId)).toBe("CLOSED");
    expect(actions(await audit("appeal", appealId))).toEqual(["APPEAL_OVERTURNED", "APPEAL_FILED"]);
    expect(actions(await audit("report", reportId)).slice(0, 2)).toEqual(["REPORT_OVERTURNED", "REPORT_APPEALED"]);
    // A revoked action cannot be appealed again.
    expect((await appeal(actionId)).status).toBe(409);
  });

  test("refusals: report not RESOLVED → 409; revoked → 409; unknown or foreign → 404; publishable → 403; empty text → 400", async () => {
    const reportId = await freshReport();
    const onOpen = await createAction({ kind: "warning", reportId, identity: undefined });
    const r = await appeal(onOpen.id);
    expect(r.status).toBe(409);
    expect(r.body.error).toContain("RESOLVED");
    expect((await report(reportId)).status).toBe("OPEN");

    const revoked = await createAction({ kind: "ban" });
    await server.call("POST", `${project}/enforcement-actions/${revoked.id}/revoke`, { body: {} });
    expect((await appeal(revoked.id)).status).toBe(409);

    expect((await appeal("01a20000-0000-7000-8000-000000000000")).status).toBe(404);
    const { actionId } = await resolvedWithSuspension();
    expect((await appeal(actionId, "please", server.demo.publishableKey)).status).toBe(403);
    expect((await appeal(actionId, "  ")).status).toBe(400);
    const foreign = await server.call("POST", `/projects/${other.projectId}/enforcement-actions/${actionId}/appeal`, { body: { text: "x" } });
    expect(foreign.status).toBe(404);
    const wrongOrg = await server.call("POST", `/projects/${server.demo.projectId}/enforcement-actions/${actionId}/appeal`, { key: other.secretKey, body: { text: "x" } });
    expect(wrongOrg.status).toBe(404);
    expect((await server.call("POST", `/api/v1/organizations/${other.orgSlug}/appeals/x/uphold`, { body: {} })).status).toBe(404);
    expect((await server.call("POST", `${org}/appeals/nope/uphold`, { body: {} })).status).toBe(404);
  });

  test("an action without a report can be appealed and overturned; tRPC has the same operations", async () => {
    const a = await createAction({ kind: "mute" });
    const filed = await appeal(a.id);
    expect(filed.status).toBe(201);
    expect(filed.body.appeal).toMatchObject({ reportId: null, caseId: null, status: "pending" });
    const input = encodeURIComponent(JSON.stringify({ orgSlug: server.demo.orgSlug, status: "pending", actionId: a.id }));
    const listed = await server.call("GET", `/trpc/enforcement.listAppeals?input=${input}`);
    expect(listed.status).toBe(200);
    expect(listed.body.result.data.appeals.map((x: any) => x.id)).toEqual([filed.body.appeal.id]);
    const decided = await server.call("POST", "/trpc/enforcement.overturnAppeal", { body: { orgSlug: server.demo.orgSlug, appealId: filed.body.appeal.id } });
    expect(decided.status).toBe(200);
    expect(decided.body.result.data.revoked.map((x: any) => x.id)).toEqual([a.id]);
    expect((await server.call("GET", `${project}/enforcement-actions/${a.id}`)).body.action.status).toBe("revoked");
  });
});
