/**
 * Review queues over HTTP (issue 15): CRUD on the organization routes, exactly one default,
 * deleting a queue moves its open cases (audited), moving a case is audited, another
 * organization's queue is a 404, and a moderator who may not work a queue neither sees nor
 * decides its cases while an admin (and the platform's API key) can.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { OrgClient } from "../clients/typescript/index.ts";
import { fileReport, secondOrganization } from "./helpers/builders.ts";
import { rawDb } from "./helpers/raw-db.ts";
import { demoAdmin, expectRefused, newUser, withKey, type Caller, type Role } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
let org: OrgClient;
let orgSlug: string;
let projectId: string;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  org = await server.orgClient();
  orgSlug = server.demo.orgSlug;
  projectId = server.demo.projectId;
});
afterAll(async () => {
  await server.dispose();
});

/** The platform's key (not bound by queue access) and users of the demo organization, signed in. */
const platform = () => withKey(server);
const makeUser = (role: Role) => newUser(server, role);
const path = () => ({ orgSlug });
const listQueues = async () => {
  const r = await org.GET("/organizations/{orgSlug}/queues", { params: { path: path() } });
  expect(r.response.status).toBe(200);
  return r.data!.queues;
};
const createQueue = async (body: { name: string; ordering?: "severity_age" | "priority" | "age"; isDefault?: boolean; access?: { users: string[]; roles: ("viewer" | "moderator" | "admin")[] } }) => {
  const r = await org.POST("/organizations/{orgSlug}/queues", { params: { path: path() }, body });
  expect(r.response.status).toBe(201);
  return r.data!.queue;
};
const caseAudit = async (caseId: string) => {
  const r = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: path(), query: { entityType: "case", entityId: caseId } } });
  expect(r.response.status).toBe(200);
  return r.data!.events;
};
const moveCase = (caseId: string, queueId: string, by: Caller = platform()) => by.trpc.queues.moveCase.mutate({ orgSlug, caseId, queueId });

describe("queues CRUD", () => {
  test("the default queue exists on first need, and there is exactly one", async () => {
    const first = await listQueues();
    expect(first.filter((q) => q.isDefault)).toHaveLength(1);
    const def = first.find((q) => q.isDefault)!;
    expect(def.ordering).toBe("severity_age");
    expect(def.access).toEqual({ users: [], roles: [] });

    const b = await createQueue({ name: `B ${Date.now()}`, isDefault: true });
    expect(b.isDefault).toBe(true);
    let all = await listQueues();
    expect(all.filter((q) => q.isDefault).map((q) => q.id)).toEqual([b.id]);

    // Making the old one default again moves the flag back.
    const back = await org.PATCH("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId: def.id } }, body: { isDefault: true } });
    expect(back.response.status).toBe(200);
    all = await listQueues();
    expect(all.filter((q) => q.isDefault).map((q) => q.id)).toEqual([def.id]);

    // The default cannot be deleted.
    const refused = await org.DELETE("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId: def.id } } });
    expect(refused.response.status).toBe(409);
    expect(refused.error?.error).toContain("default");
  });

  test("create, read, change, a duplicate name is 409, bad input 400, unknown 404", async () => {
    const name = `Legal ${Date.now()}`;
    const q = await createQueue({ name, ordering: "age", access: { users: [], roles: ["admin"] } });
    expect(q).toMatchObject({ name, ordering: "age", isDefault: false, projectId: null, openCases: 0 });
    const dup = await org.POST("/organizations/{orgSlug}/queues", { params: { path: path() }, body: { name } });
    expect(dup.response.status).toBe(409);

    const changed = await org.PATCH("/organizations/{orgSlug}/queues/{queueId}", {
      params: { path: { orgSlug, queueId: q.id } },
      body: { description: "Court orders", ordering: "priority", projectId },
    });
    expect(changed.response.status).toBe(200);
    expect(changed.data!.queue).toMatchObject({ description: "Court orders", ordering: "priority", projectId });
    const got = await org.GET("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId: q.id } } });
    expect(got.data!.queue.ordering).toBe("priority");

    const badOrdering = await org.POST("/organizations/{orgSlug}/queues", { params: { path: path() }, body: { name: "X", ordering: "random" as never } });
    expect(badOrdering.response.status).toBe(400);
    const badUser = await org.POST("/organizations/{orgSlug}/queues", { params: { path: path() }, body: { name: "Y", access: { users: ["nobody"], roles: [] } } });
    expect(badUser.response.status).toBe(400);
    const badProject = await org.POST("/organizations/{orgSlug}/queues", { params: { path: path() }, body: { name: "Z", projectId: "00000000-0000-4000-8000-000000000000" } });
    expect(badProject.response.status).toBe(404);
    const unknown = await org.GET("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId: "no-such-queue" } } });
    expect(unknown.response.status).toBe(404);

    const audit = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: path(), query: { entityType: "queue" as never, entityId: q.id } } });
    expect(audit.data!.events.map((e) => e.action).sort()).toEqual(["QUEUE_CREATED", "QUEUE_UPDATED"]);
  });

  test("another organization's queue is a 404", async () => {
    const other = await secondOrganization(server, { name: `Other ${Date.now()}` });
    const otherOrg = await server.orgClient(other.secretKey);
    const theirs = await otherOrg.POST("/organizations/{orgSlug}/queues", { params: { path: { orgSlug: other.orgSlug } }, body: { name: "Theirs" } });
    expect(theirs.response.status).toBe(201);
    const queueId = theirs.data!.queue.id;
    for (const r of [
      await org.GET("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId } } }),
      await org.PATCH("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId } }, body: { name: "Mine now" } }),
      await org.DELETE("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId } } }),
    ]) {
      expect(r.response.status).toBe(404);
    }
    // Their slug with our key: 404 too.
    const slug = await org.GET("/organizations/{orgSlug}/queues", { params: { path: { orgSlug: other.orgSlug } } });
    expect(slug.response.status).toBe(404);
    // Moving our case into their queue: 404.
    const { caseId } = await fileReport(server);
    await expectRefused(moveCase(caseId, queueId), "NOT_FOUND");
    const still = await otherOrg.GET("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug: other.orgSlug, queueId } } });
    expect(still.data!.queue.name).toBe("Theirs");
  });
});

describe("cases in queues", () => {
  test("moving a case is audited with from and to; deleting its queue moves it to the default, audited", async () => {
    const def = (await listQueues()).find((q) => q.isDefault)!;
    const q = await createQueue({ name: `Move ${Date.now()}` });
    const { caseId } = await fileReport(server);
    expect(await moveCase(caseId, q.id)).toEqual({ changed: true, queueId: q.id });
    expect((await moveCase(caseId, q.id)).changed).toBe(false);
    expect((await org.GET("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId: q.id } } })).data!.queue.openCases).toBe(1);

    let events = (await caseAudit(caseId)).filter((e) => e.action === "CASE_QUEUE_CHANGED");
    expect(events).toHaveLength(1);
    expect(events[0]!.before).toEqual({ queueId: def.id });
    expect(events[0]!.after).toEqual({ queueId: q.id });

    const deleted = await org.DELETE("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId: q.id } } });
    expect(deleted.response.status).toBe(200);
    expect((deleted.data as { movedCases: number }).movedCases).toBe(1);
    events = (await caseAudit(caseId)).filter((e) => e.action === "CASE_QUEUE_CHANGED");
    expect(events).toHaveLength(2);
    expect(events.map((e) => e.after)).toContainEqual({ queueId: def.id });
    expect((await (await demoAdmin(server)).casePage(caseId)).queue!.id).toBe(def.id);
  });

  test("deleting a queue with an access list that holds cases: 409 without a target, a wider target refused (409), a no-wider one takes every case, closed ones too, each move audited", async () => {
    const def = (await listQueues()).find((q) => q.isDefault)!;
    const insider = await makeUser("moderator");
    const outsider = await makeUser("moderator");
    const vault = await createQueue({ name: `Vault ${Date.now()}`, access: { users: [insider.id], roles: [] } });
    const open = await fileReport(server);
    const closed = await fileReport(server);
    await moveCase(open.caseId, vault.id);
    await moveCase(closed.caseId, vault.id);
    await (await demoAdmin(server)).dismiss(closed.reportId, "other");
    const del = (query: { targetQueueId?: string } = {}) =>
      org.DELETE("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId: vault.id }, query } });
    const stillThere = async () => {
      expect((await org.GET("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId: vault.id } } })).response.status).toBe(200);
      for (const caseId of [open.caseId, closed.caseId]) expect((await (await demoAdmin(server)).caseDetail(caseId)).case.queueId).toBe(vault.id);
    };

    // No target: refused, nothing moved (the default queue is open to every moderator and viewer).
    const untargeted = await del();
    expect(untargeted.response.status).toBe(409);
    expect(untargeted.error?.error).toContain("targetQueueId");
    await stillThere();
    // Wider targets: the default queue named, and a queue every moderator may work.
    const everyModerator = await createQueue({ name: `Moderators ${Date.now()}`, access: { users: [], roles: ["moderator"] } });
    for (const wider of [def.id, everyModerator.id]) {
      const refused = await del({ targetQueueId: wider });
      expect(refused.response.status).toBe(409);
      expect(refused.error?.error).toContain("no wider");
    }
    await stillThere();
    // The queue itself, or one that does not exist.
    expect((await del({ targetQueueId: vault.id })).response.status).toBe(400);
    expect((await del({ targetQueueId: "no-such-queue" })).response.status).toBe(404);
    await stillThere();

    // A target no wider (the same people, and admins): every case moves, the closed one too, each audited.
    const safe = await createQueue({ name: `Vault 2 ${Date.now()}`, access: { users: [insider.id], roles: [] } });
    const deleted = await del({ targetQueueId: safe.id });
    expect(deleted.response.status).toBe(200);
    expect(deleted.data).toEqual({ ok: true, movedCases: 1, movedClosedCases: 1, to: safe.id });
    for (const caseId of [open.caseId, closed.caseId]) {
      const moves = (await caseAudit(caseId)).filter((e) => e.action === "CASE_QUEUE_CHANGED" && (e.data as { reason?: string } | null)?.reason === "queue_deleted");
      expect(moves.map((e) => [e.before, e.after])).toEqual([[{ queueId: vault.id }, { queueId: safe.id }]]);
      expect((await (await demoAdmin(server)).caseDetail(caseId)).case.queueId).toBe(safe.id);
      // The moderator the queue named still works them; another moderator still gets nothing.
      expect((await insider.caseDetail(caseId)).case.id).toBe(caseId);
      await expectRefused(outsider.caseDetail(caseId), "NOT_FOUND");
    }
    expect((await org.GET("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId: vault.id } } })).response.status).toBe(404);

    // Over tRPC the same: 409 without a target; an empty queue with an access list needs none.
    const cased = await createQueue({ name: `Cased ${Date.now()}`, access: { users: [], roles: ["admin"] } });
    const inCased = await fileReport(server);
    await moveCase(inCased.caseId, cased.id);
    await expectRefused(platform().trpc.queues.delete.mutate({ orgSlug, queueId: cased.id }), "CONFLICT", /targetQueueId/);
    const empty = await createQueue({ name: `Empty ${Date.now()}`, access: { users: [], roles: ["admin"] } });
    expect(await platform().trpc.queues.delete.mutate({ orgSlug, queueId: empty.id })).toEqual({ ok: true, movedCases: 0, movedClosedCases: 0, to: def.id });
    // Decided, so that the other tests' counts of open cases do not see them.
    for (const reportId of [open.reportId, inCased.reportId]) await (await demoAdmin(server)).dismiss(reportId, "other");
  });

  test("a moderator without access to a queue cannot see or decide its cases; an admin and the API key can", async () => {
    const mod = await makeUser("moderator");
    const other = await makeUser("moderator");
    const admin2 = await makeUser("admin");
    const restricted = await createQueue({ name: `Restricted ${Date.now()}`, access: { users: [other.id], roles: [] } });
    const { caseId, reportId } = await fileReport(server);
    await moveCase(caseId, restricted.id);
    const visible = await fileReport(server);

    // The dashboard queue: not among mod's cases, nor the queue among mod's queues.
    const modQueue = await mod.queue({ limit: 100 });
    const modIds = modQueue.items.map((i) => i.id);
    expect(modIds).not.toContain(caseId);
    expect(modIds).toContain(visible.caseId);
    expect(modQueue.queues.map((q) => q.id)).not.toContain(restricted.id);
    await expectRefused(mod.queue({ queueId: restricted.id }), "NOT_FOUND");
    // The counts and views follow the same bound.
    const adminQueue = await admin2.queue({ limit: 100 });
    expect(adminQueue.counts.total).toBeGreaterThan(modQueue.counts.total);
    expect(adminQueue.views.open).toBe(modQueue.views.open + 1);

    // The case page: 404.
    await expectRefused(mod.casePage(caseId), "NOT_FOUND");
    await expectRefused(mod.caseDetail(caseId), "NOT_FOUND");
    // Decisions: 404, and nothing changed.
    await expectRefused(mod.resolve(reportId, { resolutionCode: "NO_VIOLATION" }), "NOT_FOUND");
    await expectRefused(mod.dismiss(reportId, "other"), "NOT_FOUND");
    await expectRefused(mod.claim(caseId), "NOT_FOUND");
    await expectRefused(mod.triage(caseId), "NOT_FOUND");
    await expectRefused(moveCase(caseId, (await listQueues()).find((q) => q.isDefault)!.id, mod), "NOT_FOUND");
    const bulk = await mod.bulkDecide([caseId], { action: "dismiss", reason: "other" });
    expect(bulk.decided).toEqual([]);
    expect(bulk.skipped).toEqual([{ caseId, reason: "not found" }]);
    const sdk = await server.sdkClient();
    expect((await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } })).data!.report.status).toBe("OPEN");

    // The user the queue names: sees it and decides.
    const otherQueue = await other.queue({ queueId: restricted.id });
    expect(otherQueue.items.map((i) => i.id)).toEqual([caseId]);
    await other.claim(caseId);
    await other.assign(caseId, null);

    // An admin sees and decides.
    await admin2.casePage(caseId);
    await admin2.resolve(reportId, { resolutionCode: "NO_VIOLATION" });
    expect((await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } })).data!.report.status).toBe("RESOLVED");

    // The API key (the platform) is not bound by queue access.
    const another = await fileReport(server);
    await moveCase(another.caseId, restricted.id);
    const dismissed = await sdk.POST("/reports/{reportId}/dismiss", { params: { path: { reportId: another.reportId } }, body: { reason: "other" } });
    expect(dismissed.response.status).toBe(200);
  });

  test("nor find them by search, among closed cases, or on their subject's page; cases and hits carry their queueId", async () => {
    const mod = await makeUser("moderator");
    const admin2 = await makeUser("admin");
    const restricted = await createQueue({ name: `Hidden ${Date.now()}`, access: { users: [], roles: ["admin"] } });
    const word = `zanzibar${crypto.randomUUID().slice(0, 6)}`;
    const subject = { type: "user", externalId: `hidden-${crypto.randomUUID().slice(0, 8)}` };
    const hidden = await fileReport(server, { description: `${word} hidden`, subject });
    const shown = await fileReport(server, { description: `${word} shown`, subject });
    await moveCase(hidden.caseId, restricted.id);
    const closed = await fileReport(server, { description: `${word} closed` });
    await moveCase(closed.caseId, restricted.id);
    await admin2.dismiss(closed.reportId, "other");

    const found = async (by: Caller) => (await by.search({ q: word, kind: "reports" })).reports.items.map((i) => i.caseId);
    expect(await found(admin2)).toEqual(expect.arrayContaining([hidden.caseId, shown.caseId, closed.caseId]));
    const modFound = await found(mod);
    expect(modFound).toContain(shown.caseId);
    expect(modFound).not.toContain(hidden.caseId);
    expect(modFound).not.toContain(closed.caseId);

    const closedIds = async (by: Caller) => (await by.trpc.search.closedCases.query({ limit: 100 })).items.map((i) => i.id);
    expect(await closedIds(admin2)).toContain(closed.caseId);
    expect(await closedIds(mod)).not.toContain(closed.caseId);

    const detail = await admin2.caseDetail(shown.caseId);
    const identityId = detail.case.subjectIdentityId!;
    // Cases and search hits carry their queue (null: the default queue).
    expect(detail.case.queueId).toBeNull();
    expect((await admin2.caseDetail(hidden.caseId)).case.queueId).toBe(restricted.id);
    const hits = (await admin2.search({ q: word, kind: "reports" })).reports.items;
    expect(hits.find((h) => h.caseId === hidden.caseId)!.case.queueId).toBe(restricted.id);
    const profile = async (by: Caller) => {
      const d = await by.trpc.dashboard.identity.query({ identityId });
      return { cases: d.cases.map((c) => c.id), reports: d.reportsAbout.map((x) => x.id) };
    };
    const adminView = await profile(admin2);
    expect(adminView.cases).toEqual(expect.arrayContaining([hidden.caseId, shown.caseId]));
    expect(adminView.reports).toEqual(expect.arrayContaining([hidden.reportId, shown.reportId]));
    const modView = await profile(mod);
    expect(modView.cases).toEqual([shown.caseId]);
    expect(modView.reports).toEqual([shown.reportId]);
  });

  test("queues order their cases by their ordering, and paging neither skips nor repeats", async () => {
    const q = await createQueue({ name: `Ordered ${Date.now()}`, ordering: "age" });
    const filed: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { caseId } = await fileReport(server, { reason: i % 2 ? "spam" : "harassment" });
      await moveCase(caseId, q.id);
      filed.push(caseId);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await platform().queue({ queueId: q.id, limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.ordering).toBe("age");
      seen.push(...page.items.map((i) => i.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(filed);
    // Priority ordering pages the same set.
    await org.PATCH("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId: q.id } }, body: { ordering: "priority" } });
    const byPriority: string[] = [];
    cursor = undefined;
    do {
      const page = await platform().queue({ queueId: q.id, limit: 2, ...(cursor ? { cursor } : {}) });
      byPriority.push(...page.items.map((i) => i.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect([...byPriority].sort()).toEqual([...filed].sort());
    expect(new Set(byPriority).size).toBe(5);
    // Priority first (as a rule's priority effect raises it), then the rest by severity and age, across pages.
    const db = await rawDb(server.dbPath);
    await db.run("update cases set priority = ? where id = ?", 5, filed[3]);
    await db.run("update cases set priority = ? where id = ?", 2, filed[1]);
    await db.run("update cases set priority = ? where id = ?", 2, filed[4]);
    await db.close();
    const ranked: string[] = [];
    cursor = undefined;
    do {
      const page = await platform().queue({ queueId: q.id, limit: 2, ...(cursor ? { cursor } : {}) });
      ranked.push(...page.items.map((i) => i.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(ranked.slice(0, 3)).toEqual([filed[3]!, filed[1]!, filed[4]!]);
    expect([...ranked].sort()).toEqual([...filed].sort());
    // A cursor of another ordering is a 400, never a 500.
    await expectRefused(platform().queue({ queueId: q.id, cursor: "0.1.abc" }), "BAD_REQUEST");
  });
});
