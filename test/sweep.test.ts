/**
 * The sweep over HTTP (src/domain/enforcement/sweep.ts): a moderator who suspends an account resolves its
 * other open cases with that decision, previewed first, as one bulk decision undone like any
 * other; queue access holds (a case of a queue the moderator may not work is named as skipped,
 * by id only). The dashboard's procedures through the typed tRPC client, the organization's
 * routes through the typed REST client (every answer checked against the published document).
 *
 * The account "x" has: the case the moderator decides (p0), two plain open cases (p1, p2), a
 * case about it without content (its profile), a case in a child-safety queue only a specialist
 * may work (p3), a case whose other report names another account too (p4), one a colleague
 * claimed (p5) and one already decided (p6). Another account has a case of its own (p7).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { OrgClient } from "../clients/typescript/index.ts";
import { demoAdmin, newUser, type DashboardUser } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10);
/** The restricted case's text: never in an answer to someone outside its queue. */
const SECRET = `secretmark${unique()}`;

let server: TestServer;
let org: OrgClient;
let admin: DashboardUser;
let mod: DashboardUser;
let specialist: DashboardUser;
let colleague: DashboardUser;
let viewer: DashboardUser;
let orgSlug: string;
let projectId: string;
const x = { type: "user", externalId: `x-${unique()}` };
const other = { type: "user", externalId: `y-${unique()}` };
/** Case and report ids by name. */
const c: Record<string, string> = {};
const r: Record<string, string> = {};

async function file(name: string, body: Record<string, unknown>): Promise<void> {
  const filed = await server.call("POST", `/projects/${projectId}/reports`, { body });
  expect(filed.status).toBe(201);
  r[name] = filed.body.report.id;
  c[name] = (await server.call("GET", `/reports/${r[name]}`)).body.report.caseId;
}
const post = (id: string, content = `Post ${id}`) => ({ contentType: "post", contentExternalId: `${id}-${unique()}`, content });
const statusOf = async (name: string) => (await server.call("GET", `/reports/${r[name]}`)).body.report.status as string;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  ({ orgSlug, projectId } = server.demo);
  org = await server.orgClient();
  admin = await demoAdmin(server);
  mod = await newUser(server, "moderator", "sweeper");
  specialist = await newUser(server, "moderator", "specialist");
  colleague = await newUser(server, "moderator", "colleague");
  viewer = await newUser(server, "viewer");
  const cs = await admin.trpc.queues.create.mutate({ orgSlug, name: "Child safety", access: { users: [specialist.id], roles: [] } });
  await admin.trpc.rules.create.mutate({
    orgSlug,
    name: "Child safety to specialists",
    trigger: "report.created",
    mode: "live",
    when: { field: "report.reasons", op: "includes", value: "child_safety" },
    then: [{ type: "route", queueId: cs.queue.id }],
  });
  for (const name of ["p0", "p1", "p2"]) await file(name, { reason: "harassment", subject: x, target: post(name) });
  await file("profile", { reason: "impersonation", subject: x });
  await file("p3", { reason: "child_safety", subject: x, target: post("p3", `Look at ${SECRET}`), description: `It says ${SECRET}` });
  const shared = post("p4");
  await file("p4", { reason: "spam", subject: x, target: shared });
  await file("p4b", { reason: "spam", subject: other, target: shared });
  expect(c.p4b!).toBe(c.p4!);
  await file("p5", { reason: "harassment", subject: x, target: post("p5") });
  await colleague.trpc.cases.assign.mutate({ caseId: c.p5!, assigneeId: colleague.id });
  await file("p6", { reason: "spam", subject: x, target: post("p6") });
  await admin.trpc.reports.dismiss.mutate({ reportId: r.p6!, reason: "other" });
  await file("p7", { reason: "harassment", subject: other, target: post("p7") });
}, 60_000);

afterAll(async () => {
  await server?.dispose();
});

let actionId = "";
let bulkId = "";

describe("the sweep, in the dashboard's procedures", () => {
  test("the preview lists the account's other open cases oldest first, and names what it would skip without showing it", async () => {
    const key = { orgSlug, projectId, typeName: x.type, externalId: x.externalId };
    const preview = await mod.trpc.sweeps.preview.query({ ...key, exceptCaseId: c.p0! });
    expect(preview.identity).toMatchObject(x);
    expect(preview.cases.map((k) => k.id)).toEqual([c.p1!, c.p2!, c.profile!, c.p5!]);
    expect(preview.skipped).toEqual([
      { caseId: c.p3!, reason: "in a queue you may not work" },
      { caseId: c.p4!, reason: "also about another account: decide it on its own" },
    ]);
    expect(preview).toMatchObject({ total: 6, capped: false, cap: 500, actions: [] });
    // The restricted case is named by its id, and nothing of it is shown.
    const raw = await mod.raw("sweeps.preview", "query", { ...key, exceptCaseId: c.p0! });
    expect(raw.text).toContain(c.p3!);
    expect(raw.text).not.toContain(SECRET);
    expect(raw.text).not.toContain(r.p3!);
    // The specialist may work it: listed for them.
    expect((await specialist.trpc.sweeps.preview.query(key)).cases.map((k) => k.id)).toContain(c.p3!);
    // Without exceptCaseId the case being decided is listed too; an unknown identity is a 404.
    expect((await mod.trpc.sweeps.preview.query(key)).cases.map((k) => k.id)).toContain(c.p0!);
    expect((await mod.raw("sweeps.preview", "query", { ...key, externalId: "nobody" })).status).toBe(404);
  });

  test("after a suspension the sweep resolves the cases as one bulk decision, skips and names the rest, and is audited", async () => {
    const resolved = await mod.trpc.reports.resolve.mutate({
      reportId: r.p0!,
      resolutionCode: "ACCOUNT_LEVEL_ACTION",
      action: { kind: "suspension", reason: "Harassment", durationSeconds: 86_400 },
    });
    actionId = resolved.enforcementActionId!;
    const preview = await mod.trpc.sweeps.preview.query({ orgSlug, projectId, typeName: x.type, externalId: x.externalId });
    expect(preview.actions.map((a) => a.id)).toEqual([actionId]);
    expect(preview.cases.map((k) => k.id)).not.toContain(c.p0!);

    const out = await mod.trpc.sweeps.commit.mutate({ orgSlug, projectId, actionId, caseIds: [...preview.cases.map((k) => k.id), c.p3!, c.p4!, c.p6!, c.p7!] });
    expect(out.decided).toEqual([c.p1!, c.p2!, c.profile!]);
    expect(out.skipped).toEqual([
      { caseId: c.p3!, reason: "in a queue you may not work" },
      { caseId: c.p4!, reason: "also about another account: decide it on its own" },
      { caseId: c.p6!, reason: "not an open case of this account" },
      { caseId: c.p7!, reason: "not an open case of this account" },
      { caseId: c.p5!, reason: `assigned to ${colleague.email}` },
    ]);
    expect(out).toMatchObject({ actionId, identityId: preview.identity.id });
    bulkId = out.bulkId!;
    expect(Date.parse(out.undoUntil!)).toBeGreaterThan(Date.now());
    for (const name of ["p1", "p2", "profile"]) expect(await statusOf(name)).toBe("RESOLVED");
    for (const name of ["p3", "p4", "p4b", "p5", "p7"]) expect(await statusOf(name)).toBe("OPEN");
    const report = (await admin.trpc.reports.get.query({ reportId: r.p1! })).report;
    expect(report.resolution).toMatchObject({ code: "ACCOUNT_LEVEL_ACTION", note: `Resolved with the account's suspension (enforcement action ${actionId})` });

    const events = (await admin.trpc.dashboard.audit.query({ entityType: "bulk_decision", entityId: bulkId })).events;
    expect(events.map((e) => e.action)).toEqual(["BULK_DECISION_MADE"]);
    expect(events[0]!.data).toMatchObject({
      action: "resolve",
      caseIds: [c.p1!, c.p2!, c.profile!],
      sweep: { actionId, identityId: preview.identity.id, kind: "suspension", skipped: 4 },
    });
    // No new enforcement action: the one suspension stands for all of them.
    const actions = await org.GET("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", { params: { path: { orgSlug, projectId }, query: { externalId: x.externalId, identityType: x.type } } });
    expect(actions.data!.actions.map((a) => a.id)).toEqual([actionId]);
  });

  test("its undo puts the cases back (once), and the suspension stays", async () => {
    expect((await mod.raw("sweeps.undo", "mutation", { orgSlug, bulkId })).status).toBe(200);
    for (const name of ["p1", "p2", "profile"]) expect(await statusOf(name)).toBe("OPEN");
    expect((await mod.raw("sweeps.undo", "mutation", { orgSlug, bulkId })).status).toBe(409);
    // The existing undo of bulk decisions answers the same way: it is one bulk decision.
    expect((await mod.raw("cases.undoBulk", "mutation", { bulkId })).status).toBe(409);
    const events = (await admin.trpc.dashboard.audit.query({ entityType: "bulk_decision", entityId: bulkId })).events.map((e) => e.action);
    expect(events).toEqual(["BULK_DECISION_UNDONE", "BULK_DECISION_MADE"]);
    const action = await admin.trpc.enforcement.get.query({ orgSlug, projectId, actionId });
    expect(action.action.status).toBe("active");
  });

  test("refusals: a warning does not sweep (400), a revoked ban is 409, an unseen action 404, a viewer 403, over the cap 400", async () => {
    const commit = (u: DashboardUser, input: Record<string, unknown>) => u.raw("sweeps.commit", "mutation", { orgSlug, projectId, caseIds: [c.p1!], ...input });
    const warning = await admin.trpc.enforcement.create.mutate({ orgSlug, projectId, kind: "warning", reason: "Be kind", identity: x });
    const refusedWarning = await commit(mod, { actionId: warning.action.id });
    expect(refusedWarning.status).toBe(400);
    expect(refusedWarning.body.error.message).toContain("only a suspension or a ban sweeps");

    const ban = await admin.trpc.enforcement.create.mutate({ orgSlug, projectId, kind: "ban", reason: "Spam", identity: x });
    await admin.trpc.enforcement.revoke.mutate({ orgSlug, projectId, actionId: ban.action.id });
    const revoked = await commit(mod, { actionId: ban.action.id });
    expect(revoked.status).toBe(409);
    expect(revoked.body.error.message).toBe("The ban is revoked: a sweep follows an action in force");

    // A suspension taken on the restricted case: the moderator outside its queue does not see it.
    const onRestricted = await specialist.trpc.enforcement.create.mutate({ orgSlug, projectId, kind: "suspension", reason: "Child safety", reportId: r.p3!, durationSeconds: 3600 });
    expect((await commit(mod, { actionId: onRestricted.action.id })).status).toBe(404);
    expect((await mod.trpc.sweeps.preview.query({ orgSlug, projectId, typeName: x.type, externalId: x.externalId })).actions.map((a) => a.id)).toEqual([actionId]);

    expect((await commit(viewer, { actionId })).status).toBe(403);
    const tooMany = await commit(mod, { actionId, caseIds: Array.from({ length: 501 }, (_, i) => `case-${i}`) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.text).toContain("at most 500 cases in one sweep");
    for (const name of ["p1", "p2", "profile", "p3"]) expect(await statusOf(name)).toBe("OPEN");
  });
});

describe("the sweep, in the organization's routes", () => {
  test("preview, commit (with a key: every queue, no claims) and undo; 404 and 409 as documented", async () => {
    const identityPath = { orgSlug, projectId, typeName: x.type, externalId: x.externalId };
    const preview = await org.GET("/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}/sweep", { params: { path: identityPath } });
    expect(preview.response.status).toBe(200);
    const listed = preview.data!.cases.map((k) => k.id);
    // A secret key works every queue and holds no claims.
    expect(listed).toEqual([c.p1!, c.p2!, c.profile!, c.p3!, c.p5!]);
    expect(preview.data!.skipped).toEqual([{ caseId: c.p4!, reason: "also about another account: decide it on its own" }]);
    expect(preview.data!.actions.map((a) => a.id)).toContain(actionId);

    const swept = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/sweep", {
      params: { path: { orgSlug, projectId, actionId } },
      body: { caseIds: listed, note: "Account suspended" },
    });
    expect(swept.response.status).toBe(200);
    expect(swept.data!.decided).toEqual(listed);
    expect(swept.data!.skipped).toEqual([]);
    for (const name of ["p1", "p2", "profile", "p3", "p5"]) expect(await statusOf(name)).toBe("RESOLVED");
    // A dashboard user cannot undo the key's bulk decision (403); the key can, once.
    expect((await mod.raw("sweeps.undo", "mutation", { orgSlug, bulkId: swept.data!.bulkId })).status).toBe(403);
    const undo = () => org.POST("/organizations/{orgSlug}/bulk-decisions/{bulkId}/undo", { params: { path: { orgSlug, bulkId: swept.data!.bulkId! } } });
    const undone = await undo();
    expect(undone.response.status).toBe(200);
    expect(undone.data!.restored.sort()).toEqual([...listed].sort());
    expect((await undo()).response.status).toBe(409);
    for (const name of ["p1", "p2", "profile", "p3", "p5"]) expect(await statusOf(name)).toBe("OPEN");

    const unknown = await org.GET("/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}/sweep", { params: { path: { ...identityPath, externalId: "nobody" } } });
    expect(unknown.response.status).toBe(404);
    const noAction = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions/{actionId}/sweep", {
      params: { path: { orgSlug, projectId, actionId: "no-such-action" } },
      body: { caseIds: listed },
    });
    expect(noAction.response.status).toBe(404);
  });
});
