/**
 * Enforcement actions and appeals through HTTP: organization routes, the SDK pull route, the
 * resolve-with-action step, appeal → uphold / overturn with the statuses and audit events they
 * leave, and the expiry of suspensions by the scheduler.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { OrgClient, OrgComponents, OrgOperations, SdkClient, SdkOperations } from "../clients/typescript/index.ts";
import { fileReport, secondOrganization } from "./helpers/builders.ts";
import { withKey } from "./helpers/dashboard.ts";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

// Servers are real child processes and some waits span retries: more than the 5 s default.
setDefaultTimeout(30_000);

type CreateActionBody = OrgOperations["enforcement-create"]["requestBody"]["content"]["application/json"];
type ResolveBody = NonNullable<SdkOperations["reports-resolve"]["requestBody"]>["content"]["application/json"];
type AuditEvent = OrgComponents["schemas"]["AuditEvent"];

let server: TestServer;
let other: InitResult;
/** The demo secret key's clients. */
let sdk: SdkClient;
let org: OrgClient;
let orgSlug: string;
let projectId: string;
let n = 0;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000", FLAGSTAFF_ENFORCEMENT_TICK_MS: "200" });
  other = await secondOrganization(server);
  sdk = await server.sdkClient();
  org = await server.orgClient();
  orgSlug = server.demo.orgSlug;
  projectId = server.demo.projectId;
});
afterAll(() => server.dispose());

const user = () => ({ type: "user", externalId: `user-${++n}` });
/** Path parameters of the demo project's organization routes, and of one of its actions. */
const inProject = () => ({ path: { orgSlug, projectId } });
const onAction = (actionId: string) => ({ path: { orgSlug, projectId, actionId } });

const postAction = (body: Partial<CreateActionBody>, client = org) =>
  client.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", { params: inProject(), body: { kind: "warning", reason: "spam", identity: user(), ...body } });
async function createAction(body: Partial<CreateActionBody>) {
  const r = await postAction(body);
  expect(r.response.status).toBe(201);
  return r.data!.action;
}
const getAction = (actionId: string) => org.GET("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}", { params: onAction(actionId) });
const listActions = (query: NonNullable<OrgOperations["enforcement-list"]["parameters"]["query"]>) =>
  org.GET("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", { params: { ...inProject(), query } });
const revokeAction = (actionId: string, body: { reason?: string } = {}) =>
  org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/revoke", { params: onAction(actionId), body });
const changeAction = (actionId: string, body: NonNullable<OrgOperations["enforcement-update"]["requestBody"]>["content"]["application/json"]) =>
  org.PATCH("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}", { params: onAction(actionId), body });

/** A report with a subject (none: null) and a content target, alone in a fresh case. */
const freshReport = async (subject: { type: string; externalId: string } | null = user()): Promise<string> =>
  (await fileReport(server, { subject: subject ?? undefined, reason: "harassment" })).reportId;

const report = async (reportId: string) => {
  const r = await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } });
  expect(r.response.status).toBe(200);
  return r.data!.report;
};
const resolve = (reportId: string, body: ResolveBody) => sdk.POST("/reports/{reportId}/resolve", { params: { path: { reportId } }, body });
// The case detail is a dashboard procedure, only on tRPC: the platform's key reads it.
const caseStatus = async (caseId: string) => (await withKey(server).caseDetail(caseId)).case.status;
const audit = async (entityType: string, entityId: string) => {
  const r = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug }, query: { entityType, entityId } } });
  expect(r.response.status).toBe(200);
  return r.data!.events;
};
const actions = (events: AuditEvent[]) => events.map((e) => e.action);

/** A RESOLVED report with a suspension of its subject applied by the resolution. */
async function resolvedWithSuspension() {
  const reportId = await freshReport();
  const r = await resolve(reportId, { resolutionCode: "ACCOUNT_LEVEL_ACTION", note: "repeat offender", action: { kind: "suspension", durationSeconds: 7 * 24 * 3600 } });
  expect(r.response.status).toBe(200);
  expect(r.data!.ok).toBe(true);
  expect(r.data!.enforcementActionId).toBeString();
  return { reportId, actionId: r.data!.enforcementActionId!, caseId: (await report(reportId)).caseId };
}

const appeal = (actionId: string, text = "I was hacked", client = sdk, inProjectId = projectId) =>
  client.POST("/projects/{projectId}/enforcement-actions/{actionId}/appeal", { params: { path: { projectId: inProjectId, actionId } }, body: { text } });
const appealPath = (appealId: string, slug = orgSlug) => ({ path: { orgSlug: slug, appealId } });
const pendingAppeals = async () => {
  const r = await org.GET("/organizations/{orgSlug}/appeals", { params: { path: { orgSlug }, query: { status: "pending" } } });
  expect(r.response.status).toBe(200);
  return r.data!.appeals;
};

describe("enforcement actions", () => {
  test("each kind is created with all its fields", async () => {
    const alice = user();
    const suspension = await createAction({ kind: "suspension", reason: "harassment", note: "3rd strike", identity: alice, durationSeconds: 3600 });
    expect(suspension).toMatchObject({
      projectId, kind: "suspension", reason: "harassment", note: "3rd strike",
      identity: { type: "user", externalId: alice.externalId }, reportId: null, caseId: null, content: null,
      expiredAt: null, revokedAt: null, revokedBy: null, revokeReason: null, createdBy: { type: "api_key" },
      active: true, status: "active",
    });
    const ends = Date.parse(suspension.endsAt!) - Date.parse(suspension.startsAt);
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
    const ids = await sdk.GET("/projects/{projectId}/identities", { params: { path: { projectId }, query: { search: alice.externalId } } });
    expect(ids.data!.identities.map((i) => i.externalId)).toEqual([alice.externalId]);
    expect(actions(await audit("enforcement_action", suspension.id))).toEqual(["ENFORCEMENT_ACTION_CREATED"]);
  });

  test("invalid combinations → 400; unknown or foreign → 404; publishable key → 403", async () => {
    const bad = async (body: Partial<CreateActionBody>) => {
      const r = await postAction(body);
      expect(r.response.status).toBe(400);
      expect(r.error?.error).toBeString();
      return r.error!.error;
    };
    expect(await bad({ kind: "suspension" })).toContain("end");
    expect(await bad({ kind: "ban", durationSeconds: 60 })).toContain("no end");
    expect(await bad({ kind: "warning", endsAt: "2099-01-01T00:00:00Z" })).toContain("no end");
    expect(await bad({ kind: "suspension", endsAt: "2001-01-01T00:00:00Z" })).toContain("future");
    expect(await bad({ kind: "suspension", endsAt: "tomorrow" })).toContain("endsAt: must be a date-time with its zone");
    expect(await bad({ kind: "suspension", endsAt: "2099-01-01T00:00:00Z", durationSeconds: 60 })).toContain("not both");
    expect(await bad({ kind: "content_removal" })).toContain("content");
    // A kind the client's types forbid: this JSON is sent instead of the (valid, so 201) typed body.
    const shadowban = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", {
      params: inProject(),
      body: { kind: "warning", reason: "spam", identity: user() },
      bodySerializer: () => JSON.stringify({ kind: "shadowban", reason: "spam", identity: user() }),
    });
    expect(shadowban.response.status).toBe(400);
    expect(shadowban.error?.error).toBeString();
    expect(await bad({ reason: "" })).toBeString();
    expect(await bad({ identity: undefined })).toContain("identity");
    expect(await bad({ identity: { type: "user", externalId: "a\u0000b" } })).toBeString();

    expect((await postAction({ reason: "x", reportId: "nope" })).response.status).toBe(404);
    const foreignProject = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", {
      params: { path: { orgSlug, projectId: other.projectId } },
      body: { kind: "warning", reason: "x", identity: user() },
    });
    expect(foreignProject.response.status).toBe(404);
    expect((await org.GET("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", { params: { path: { orgSlug: other.orgSlug, projectId: other.projectId } } })).response.status).toBe(404);
    const pk = await postAction({ reason: "x" }, await server.orgClient(server.demo.publishableKey));
    expect(pk.response.status).toBe(403);
    expect((await (await server.orgClient(null)).GET("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", { params: inProject() })).response.status).toBe(401);
  });

  test("change and revoke, with audit events; a revoked action cannot change", async () => {
    const a = await createAction({ kind: "suspension", durationSeconds: 3600 });
    const changed = await changeAction(a.id, { reason: "threats", note: "escalated", durationSeconds: 7200 });
    expect(changed.response.status).toBe(200);
    expect(changed.data!.action).toMatchObject({ reason: "threats", note: "escalated", active: true });
    expect(Date.parse(changed.data!.action.endsAt!)).toBeGreaterThan(Date.parse(a.endsAt!));
    expect((await changeAction(a.id, { endsAt: null })).response.status).toBe(400); // a suspension keeps an end

    const revoked = await revokeAction(a.id, { reason: "mistake" });
    expect(revoked.response.status).toBe(200);
    expect(revoked.data!.action).toMatchObject({ active: false, status: "revoked", revokeReason: "mistake", revokedBy: { type: "api_key" } });
    expect(revoked.data!.action.revokedAt).toBeString();
    expect((await revokeAction(a.id)).response.status).toBe(409);
    expect((await changeAction(a.id, { note: "late" })).response.status).toBe(409);

    const events = await audit("enforcement_action", a.id);
    expect(actions(events)).toEqual(["ENFORCEMENT_ACTION_REVOKED", "ENFORCEMENT_ACTION_UPDATED", "ENFORCEMENT_ACTION_CREATED"]);
    expect(events[1]!.before).toMatchObject({ reason: "spam", note: null });
    expect(events[1]!.after).toMatchObject({ reason: "threats", note: "escalated" });
    expect(events[0]!.after).toEqual({ status: "revoked" });

    const got = await getAction(a.id);
    expect(got.response.status).toBe(200);
    expect(got.data!.action.status).toBe("revoked");
    expect(got.data!.appeals).toEqual([]);
    expect((await getAction("nope")).response.status).toBe(404);
  });

  test("a suspension ends on time: inactive at once, then marked expired by the scheduler", async () => {
    const bob = user();
    const a = await createAction({ kind: "suspension", identity: bob, durationSeconds: 1 });
    expect(a.active).toBe(true);
    const expired = await until("the expiry", async () => {
      const r = await getAction(a.id);
      return r.data?.action.expiredAt ? r.data.action : null;
    });
    expect(expired).toMatchObject({ active: false, status: "expired" });
    expect(Date.parse(expired.expiredAt!)).toBeGreaterThanOrEqual(Date.parse(a.endsAt!));
    const events = await audit("enforcement_action", a.id);
    expect(actions(events)).toEqual(["ENFORCEMENT_ACTION_EXPIRED", "ENFORCEMENT_ACTION_CREATED"]);
    expect(events[0]!.actor).toEqual({ type: "system", id: null });
    expect((await changeAction(a.id, { durationSeconds: 60 })).response.status).toBe(409);
  });

  test("the SDK pull route lists an identity's actions with whether each is in force", async () => {
    const carol = user();
    const ban = await createAction({ kind: "ban", identity: carol });
    const warning = await createAction({ kind: "warning", identity: carol });
    const short = await createAction({ kind: "mute", identity: carol, durationSeconds: 1 });
    await createAction({ kind: "ban" }); // someone else
    expect((await revokeAction(warning.id)).response.status).toBe(200);

    const pull = (query: NonNullable<SdkOperations["enforcement-identityActions"]["parameters"]["query"]> = {}, client = sdk, externalId = carol.externalId, inProjectId = projectId) =>
      client.GET("/projects/{projectId}/identities/{typeName}/{externalId}/enforcement-actions", { params: { path: { projectId: inProjectId, typeName: "user", externalId }, query } });
    const all = await until("the mute to end", async () => {
      const r = await pull();
      expect(r.response.status).toBe(200);
      return r.data!.actions.find((x) => x.id === short.id)?.active === false ? r.data! : null;
    });
    expect(all.actions.map((x) => x.id)).toEqual([short.id, warning.id, ban.id]); // newest first
    expect(all.actions.map((x) => [x.kind, x.active, x.status])).toEqual([
      ["mute", false, "expired"],
      ["warning", false, "revoked"],
      ["ban", true, "active"],
    ]);
    expect(all.actions.every((x) => x.identity.externalId === carol.externalId)).toBe(true);
    expect((await pull({ active: "true" })).data!.actions.map((x) => x.id)).toEqual([ban.id]);
    expect((await pull({ active: "false" })).data!.actions.map((x) => x.id)).toEqual([short.id, warning.id]);
    const page = await pull({ limit: 2 });
    expect(page.data!.actions.length).toBe(2);
    expect(page.data!.nextCursor).toBeString();
    const rest = await pull({ limit: 2, cursor: page.data!.nextCursor! });
    expect(rest.data!.actions.map((x) => x.id)).toEqual([ban.id]);
    expect(rest.data!.nextCursor).toBeNull();

    expect((await pull({}, sdk, "nobody")).response.status).toBe(404);
    expect((await pull({}, sdk, carol.externalId, other.projectId)).response.status).toBe(404);
    expect((await pull({}, await server.sdkClient(server.demo.publishableKey))).response.status).toBe(403);
    expect((await pull({}, await server.sdkClient(null))).response.status).toBe(401);

    // The organization list filters the same way.
    const list = await listActions({ identityType: "user", externalId: carol.externalId, status: "revoked" });
    expect(list.data!.actions.map((x) => x.id)).toEqual([warning.id]);
    const bans = await listActions({ kind: "ban", identityType: "user", externalId: carol.externalId });
    expect(bans.data!.actions.map((x) => x.id)).toEqual([ban.id]);
    expect((await listActions({ identityType: "user" })).response.status).toBe(400);
  });
});

describe("resolving a report with an action", () => {
  test("ACCOUNT_LEVEL_ACTION applies a suspension to the subject, linked to the report and its case", async () => {
    const subject = user();
    const reportId = await freshReport(subject);
    const r = await resolve(reportId, { resolutionCode: "ACCOUNT_LEVEL_ACTION", note: "confirmed", action: { kind: "suspension", durationSeconds: 86_400 } });
    expect(r.response.status).toBe(200);
    expect(r.data).toEqual({ ok: true, enforcementActionId: expect.any(String) });
    const rep = await report(reportId);
    expect(rep.status).toBe("RESOLVED");
    expect(rep.resolution?.code).toBe("ACCOUNT_LEVEL_ACTION");
    const a = (await getAction(r.data!.enforcementActionId!)).data!.action;
    expect(a).toMatchObject({
      kind: "suspension", reason: "harassment", note: "confirmed", reportId, caseId: rep.caseId,
      identity: { type: subject.type, externalId: subject.externalId }, active: true,
    });
    expect(a.content).toMatchObject({ contentType: "post" });
  });

  test("CONTENT_LEVEL_ACTION removes the report's target by default", async () => {
    const reportId = await freshReport();
    const r = await resolve(reportId, { resolutionCode: "CONTENT_LEVEL_ACTION", action: { reason: "hate speech" } });
    expect(r.response.status).toBe(200);
    const rep = await report(reportId);
    const a = (await getAction(r.data!.enforcementActionId!)).data!.action;
    expect(a).toMatchObject({ kind: "content_removal", reason: "hate speech", reportId, content: rep.target && { contentType: "post", contentExternalId: rep.target.contentExternalId } });
  });

  test("a mismatched action is refused and the report is left untouched", async () => {
    const cases: [ResolveBody, number][] = [
      [{ resolutionCode: "NO_VIOLATION", action: { kind: "warning" } }, 400],
      [{ action: { kind: "warning" } }, 400],
      [{ resolutionCode: "CONTENT_LEVEL_ACTION", action: { kind: "ban" } }, 400],
      [{ resolutionCode: "ACCOUNT_LEVEL_ACTION", action: {} }, 400],
      [{ resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "content_removal" } }, 400],
      [{ resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "suspension" } }, 400],
    ];
    for (const [body, status] of cases) {
      const reportId = await freshReport();
      const r = await resolve(reportId, body);
      expect({ body, status: r.response.status }).toEqual({ body, status });
      expect((await report(reportId)).status).toBe("OPEN");
      expect((await listActions({ reportId })).data!.actions).toEqual([]);
    }
    // No subject to act on: 400, and the resolution is rolled back with it.
    const anonymous = await freshReport(null);
    const r = await resolve(anonymous, { resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "ban" } });
    expect(r.response.status).toBe(400);
    expect(r.error?.error).toContain("subject");
    expect((await report(anonymous)).status).toBe("OPEN");
    // Already resolved: 409 and no second action.
    const { reportId } = await resolvedWithSuspension();
    const again = await resolve(reportId, { resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "ban" } });
    expect(again.response.status).toBe(409);
    expect((await listActions({ reportId })).data!.actions.length).toBe(1);
  });
});

describe("appeals", () => {
  test("appeal → APPEALED; uphold → CLOSED with the action standing; all audited", async () => {
    const { reportId, actionId, caseId } = await resolvedWithSuspension();
    const filed = await appeal(actionId, "It was my brother on my phone");
    expect(filed.response.status).toBe(201);
    expect(filed.data!.appeal).toMatchObject({ actionId, reportId, caseId, projectId, text: "It was my brother on my phone", status: "pending", decision: null });
    const appealId = filed.data!.appeal.id;
    expect((await report(reportId)).status).toBe("APPEALED");
    expect(await caseStatus(caseId)).toBe("APPEALED");

    // A second appeal while one is pending → 409.
    const second = await appeal(actionId);
    expect(second.response.status).toBe(409);
    expect(second.error?.error).toContain("pending");

    expect((await pendingAppeals()).map((a) => a.id)).toContain(appealId);

    const upheld = await org.POST("/organizations/{orgSlug}/appeals/{appealId}/uphold", { params: appealPath(appealId), body: { note: "evidence is clear" } });
    expect(upheld.response.status).toBe(200);
    expect(upheld.data!.appeal).toMatchObject({ status: "upheld", decision: { by: { type: "api_key" }, note: "evidence is clear" } });
    expect((await report(reportId)).status).toBe("CLOSED");
    expect(await caseStatus(caseId)).toBe("CLOSED");
    const action = (await getAction(actionId)).data!;
    expect(action.action).toMatchObject({ active: true, revokedAt: null });
    expect(action.appeals.map((a) => [a.id, a.status])).toEqual([[appealId, "upheld"]]);
    expect((await pendingAppeals()).map((a) => a.id)).not.toContain(appealId);

    // Decided is final.
    expect((await org.POST("/organizations/{orgSlug}/appeals/{appealId}/uphold", { params: appealPath(appealId), body: {} })).response.status).toBe(409);
    expect((await org.POST("/organizations/{orgSlug}/appeals/{appealId}/overturn", { params: appealPath(appealId), body: {} })).response.status).toBe(409);
    expect((await appeal(actionId)).response.status).toBe(409);

    const appealEvents = await audit("appeal", appealId);
    expect(actions(appealEvents)).toEqual(["APPEAL_UPHELD", "APPEAL_FILED"]);
    expect(appealEvents[0]!.data).toMatchObject({ note: "evidence is clear", reportMoved: true, revokedActionIds: [] });
    const reportEvents = await audit("report", reportId);
    expect(actions(reportEvents).slice(0, 3)).toEqual(["REPORT_UPHELD", "REPORT_APPEALED", "REPORT_RESOLVED"]);
    expect(reportEvents[0]!.before).toEqual({ status: "APPEALED" });
    expect(reportEvents[0]!.after).toEqual({ status: "CLOSED" });
    expect(reportEvents[1]!.before).toEqual({ status: "RESOLVED" });
    expect(reportEvents[1]!.after).toEqual({ status: "APPEALED" });
    const caseEvents = (await audit("case", caseId)).filter((e) => e.action === "CASE_STATUS_CHANGED");
    expect(caseEvents.length).toBeGreaterThanOrEqual(2);
    expect(caseEvents.slice(0, 2).map((e) => [e.before, e.after, e.data])).toMatchObject([
      [{ status: "APPEALED" }, { status: "CLOSED" }, { action: "uphold" }],
      [{ status: "RESOLVED" }, { status: "APPEALED" }, { action: "appeal" }],
    ]);
    expect(actions(await audit("enforcement_action", actionId))).toEqual(["ENFORCEMENT_ACTION_CREATED"]);
  });

  test("overturn → CLOSED and the report's actions revoked, audited", async () => {
    const { reportId, actionId, caseId } = await resolvedWithSuspension();
    // A second action from the same decision: a removal of the reported post.
    const removal = await createAction({ kind: "content_removal", reportId, identity: undefined });
    expect(removal).toMatchObject({ reportId, caseId });
    const unrelated = await createAction({ kind: "ban" });

    const filed = await appeal(actionId);
    expect(filed.response.status).toBe(201);
    const appealId = filed.data!.appeal.id;
    const r = await org.POST("/organizations/{orgSlug}/appeals/{appealId}/overturn", { params: appealPath(appealId), body: { note: "context shows sarcasm" } });
    expect(r.response.status).toBe(200);
    expect(r.data!.appeal).toMatchObject({ status: "overturned", decision: { note: "context shows sarcasm" } });
    expect(new Set(r.data!.revoked.map((a) => a.id))).toEqual(new Set([actionId, removal.id]));
    for (const id of [actionId, removal.id]) {
      const a = (await getAction(id)).data!.action;
      expect(a).toMatchObject({ active: false, status: "revoked", revokeReason: "Appeal overturned: context shows sarcasm" });
      const events = await audit("enforcement_action", id);
      expect(events[0]).toMatchObject({ action: "ENFORCEMENT_ACTION_REVOKED", data: { appealId } });
    }
    expect((await getAction(unrelated.id)).data!.action.active).toBe(true);
    expect((await report(reportId)).status).toBe("CLOSED");
    expect(await caseStatus(caseId)).toBe("CLOSED");
    expect(actions(await audit("appeal", appealId))).toEqual(["APPEAL_OVERTURNED", "APPEAL_FILED"]);
    expect(actions(await audit("report", reportId)).slice(0, 2)).toEqual(["REPORT_OVERTURNED", "REPORT_APPEALED"]);
    // A revoked action cannot be appealed again.
    expect((await appeal(actionId)).response.status).toBe(409);
  });

  test("escalating an APPEALED report moves it and its case to IN_REVIEW (the specification); the appeal stays pending and still closes it", async () => {
    // The specification's table: escalate moves any status but resolved to IN_REVIEW. The pending
    // appeal stays in the inbox and decides the report from IN_REVIEW.
    const { reportId, actionId, caseId } = await resolvedWithSuspension();
    const filed = await appeal(actionId);
    expect(filed.response.status).toBe(201);
    const appealId = filed.data!.appeal.id;

    const escalated = await sdk.POST("/reports/{reportId}/escalate", { params: { path: { reportId } }, body: { team: "legal", note: "they threaten to sue" } });
    expect(escalated.response.status).toBe(200);
    expect(escalated.data).toEqual({ ok: true, reportId });
    const after = await report(reportId);
    expect(after.status).toBe("IN_REVIEW");
    expect(after.escalation).toMatchObject({ team: "legal", applied: true, note: "they threaten to sue" });
    expect(await caseStatus(caseId)).toBe("IN_REVIEW");
    const [escalation] = (await audit("report", reportId)).filter((e) => e.action === "REPORT_ESCALATED");
    expect(escalation).toMatchObject({ before: { status: "APPEALED" }, after: { status: "IN_REVIEW" }, data: { team: "legal", applied: true, caseId } });
    const pending = await org.GET("/organizations/{orgSlug}/appeals", { params: { path: { orgSlug }, query: { status: "pending", actionId } } });
    expect(pending.data!.appeals.map((a) => [a.id, a.status])).toEqual([[appealId, "pending"]]);

    const upheld = await org.POST("/organizations/{orgSlug}/appeals/{appealId}/uphold", { params: appealPath(appealId), body: {} });
    expect(upheld.response.status).toBe(200);
    expect((await report(reportId)).status).toBe("CLOSED");
    expect(await caseStatus(caseId)).toBe("CLOSED");
    expect((await audit("appeal", appealId))[0]!.data).toMatchObject({ reportMoved: true });
    expect(actions(await audit("report", reportId)).slice(0, 3)).toEqual(["REPORT_UPHELD", "REPORT_ESCALATED", "REPORT_APPEALED"]);
  });

  test("refusals: report not RESOLVED → 409; revoked → 409; unknown or foreign → 404; publishable → 403; empty text → 400", async () => {
    const reportId = await freshReport();
    const onOpen = await createAction({ kind: "warning", reportId, identity: undefined });
    const r = await appeal(onOpen.id);
    expect(r.response.status).toBe(409);
    expect(r.error?.error).toContain("RESOLVED");
    expect((await report(reportId)).status).toBe("OPEN");

    const revoked = await createAction({ kind: "ban" });
    expect((await revokeAction(revoked.id)).response.status).toBe(200);
    expect((await appeal(revoked.id)).response.status).toBe(409);

    expect((await appeal("01a20000-0000-7000-8000-000000000000")).response.status).toBe(404);
    const { actionId } = await resolvedWithSuspension();
    expect((await appeal(actionId, "please", await server.sdkClient(server.demo.publishableKey))).response.status).toBe(403);
    expect((await appeal(actionId, "  ")).response.status).toBe(400);
    const foreign = await appeal(actionId, "x", sdk, other.projectId);
    expect(foreign.response.status).toBe(404);
    const wrongOrg = await appeal(actionId, "x", await server.sdkClient(other.secretKey));
    expect(wrongOrg.response.status).toBe(404);
    expect((await org.POST("/organizations/{orgSlug}/appeals/{appealId}/uphold", { params: appealPath("x", other.orgSlug), body: {} })).response.status).toBe(404);
    expect((await org.POST("/organizations/{orgSlug}/appeals/{appealId}/uphold", { params: appealPath("nope"), body: {} })).response.status).toBe(404);
  });

  test("an action without a report can be appealed and overturned; tRPC has the same operations", async () => {
    const a = await createAction({ kind: "mute" });
    const filed = await appeal(a.id);
    expect(filed.response.status).toBe(201);
    const appealed = filed.data!.appeal;
    expect(appealed).toMatchObject({ reportId: null, caseId: null, status: "pending" });
    // This test is about the tRPC procedures, which the REST clients do not reach.
    const platform = withKey(server);
    const listed = await platform.trpc.enforcement.listAppeals.query({ orgSlug, status: "pending", actionId: a.id });
    expect(listed.appeals.map((x) => x.id)).toEqual([appealed.id]);
    const decided = await platform.trpc.enforcement.overturnAppeal.mutate({ orgSlug, appealId: appealed.id });
    expect(decided.revoked.map((x) => x.id)).toEqual([a.id]);
    expect((await getAction(a.id)).data!.action.status).toBe("revoked");
  });
});
