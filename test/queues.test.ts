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

type Session = { cookie: string; csrf: string };
async function trpc(method: "GET" | "POST", path: string, input: unknown, s?: Session) {
  const url = method === "GET" ? `${server.url}/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}` : `${server.url}/trpc/${path}`;
  const headers: Record<string, string> = method === "POST" ? { "content-type": "application/json" } : {};
  // A session's call, else the demo secret key's (the platform).
  if (s) Object.assign(headers, { cookie: s.cookie, "x-flagstaff-csrf": s.csrf });
  else headers.authorization = `Bearer ${server.demo.secretKey}`;
  const res = await fetch(url, { method, headers, body: method === "POST" ? JSON.stringify(input) : undefined });
  return { status: res.status, body: (await res.json()) as any };
}
async function login(email: string, password: string): Promise<Session> {
  const res = await fetch(`${server.url}/trpc/auth.login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }) });
  expect(res.status).toBe(200);
  const body = (await res.json()) as any;
  const cookie = `flagstaff_session=${/flagstaff_session=([^;]+)/.exec(res.headers.get("set-cookie") ?? "")?.[1] ?? ""}`;
  return { cookie, csrf: body.result.data.csrfToken as string };
}
let admin: Session;
async function makeUser(role: "viewer" | "moderator" | "admin") {
  admin ??= await login(server.demo.adminEmail, server.demo.adminPassword);
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const r = await trpc("POST", "users.create", { email, role }, admin);
  expect(r.status).toBe(200);
  return { id: r.body.result.data.user.id as string, session: await login(email, r.body.result.data.generatedPassword) };
}
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
const moveCase = (caseId: string, queueId: string, s?: Session) => trpc("POST", "queues.moveCase", { orgSlug, caseId, queueId }, s);

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
    expect((await moveCase(caseId, queueId)).status).toBe(404);
    const still = await otherOrg.GET("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug: other.orgSlug, queueId } } });
    expect(still.data!.queue.name).toBe("Theirs");
  });
});

describe("cases in queues", () => {
  test("moving a case is audited with from and to; deleting its queue moves it to the default, audited", async () => {
    const def = (await listQueues()).find((q) => q.isDefault)!;
    const q = await createQueue({ name: `Move ${Date.now()}` });
    const { caseId } = await fileReport(server);
    const moved = await moveCase(caseId, q.id);
    expect(moved.status).toBe(200);
    expect(moved.body.result.data).toEqual({ changed: true, queueId: q.id });
    expect((await moveCase(caseId, q.id)).body.result.data.changed).toBe(false);
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
    const detail = await trpc("GET", "dashboard.case", { caseId }, admin ?? (admin = await login(server.demo.adminEmail, server.demo.adminPassword)));
    expect(detail.body.result.data.queue.id).toBe(def.id);
  });

  test("a moderator without access to a queue cannot see or decide its cases; an admin and the API key can", async () => {
    const mod = await makeUser("moderator");
    const other = await makeUser("moderator");
    const admin2 = await makeUser("admin");
    const restricted = await createQueue({ name: `Restricted ${Date.now()}`, access: { users: [other.id], roles: [] } });
    const { caseId, reportId } = await fileReport(server);
    expect((await moveCase(caseId, restricted.id)).status).toBe(200);
    const visible = await fileReport(server);

    // The dashboard queue: not among mod's cases, nor the queue among mod's queues.
    const modQueue = await trpc("GET", "dashboard.queue", { limit: 100 }, mod.session);
    expect(modQueue.status).toBe(200);
    const modIds = modQueue.body.result.data.items.map((i: { id: string }) => i.id);
    expect(modIds).not.toContain(caseId);
    expect(modIds).toContain(visible.caseId);
    expect(modQueue.body.result.data.queues.map((q: { id: string }) => q.id)).not.toContain(restricted.id);
    expect((await trpc("GET", "dashboard.queue", { queueId: restricted.id }, mod.session)).status).toBe(404);
    // The counts and views follow the same bound.
    const adminQueue = await trpc("GET", "dashboard.queue", { limit: 100 }, admin2.session);
    expect(adminQueue.body.result.data.counts.total).toBeGreaterThan(modQueue.body.result.data.counts.total);
    expect(adminQueue.body.result.data.views.open).toBe(modQueue.body.result.data.views.open + 1);

    // The case page: 404.
    expect((await trpc("GET", "dashboard.case", { caseId }, mod.session)).status).toBe(404);
    expect((await trpc("GET", "cases.detail", { caseId }, mod.session)).status).toBe(404);
    // Decisions: 404, and nothing changed.
    expect((await trpc("POST", "reports.resolve", { reportId, resolutionCode: "NO_VIOLATION" }, mod.session)).status).toBe(404);
    expect((await trpc("POST", "reports.dismiss", { reportId, reason: "other" }, mod.session)).status).toBe(404);
    expect((await trpc("POST", "cases.assign", { caseId, assigneeId: mod.id }, mod.session)).status).toBe(404);
    expect((await trpc("POST", "cases.triage", { caseId }, mod.session)).status).toBe(404);
    expect((await moveCase(caseId, (await listQueues()).find((q) => q.isDefault)!.id, mod.session)).status).toBe(404);
    const bulk = await trpc("POST", "cases.bulkDecide", { caseIds: [caseId], decision: { action: "dismiss", reason: "other" } }, mod.session);
    expect(bulk.status).toBe(200);
    expect(bulk.body.result.data.decided).toEqual([]);
    expect(bulk.body.result.data.skipped).toEqual([{ caseId, reason: "not found" }]);
    const sdk = await server.sdkClient();
    expect((await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } })).data!.report.status).toBe("OPEN");

    // The user the queue names: sees it and decides.
    const otherQueue = await trpc("GET", "dashboard.queue", { queueId: restricted.id }, other.session);
    expect(otherQueue.status).toBe(200);
    expect(otherQueue.body.result.data.items.map((i: { id: string }) => i.id)).toEqual([caseId]);
    expect((await trpc("POST", "cases.assign", { caseId, assigneeId: other.id }, other.session)).status).toBe(200);
    expect((await trpc("POST", "cases.assign", { caseId, assigneeId: null }, other.session)).status).toBe(200);

    // An admin sees and decides.
    expect((await trpc("GET", "dashboard.case", { caseId }, admin2.session)).status).toBe(200);
    expect((await trpc("POST", "reports.resolve", { reportId, resolutionCode: "NO_VIOLATION" }, admin2.session)).status).toBe(200);
    expect((await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } })).data!.report.status).toBe("RESOLVED");

    // The API key (the platform) is not bound by queue access.
    const another = await fileReport(server);
    expect((await moveCase(another.caseId, restricted.id)).status).toBe(200);
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
    expect((await moveCase(hidden.caseId, restricted.id)).status).toBe(200);
    const closed = await fileReport(server, { description: `${word} closed` });
    expect((await moveCase(closed.caseId, restricted.id)).status).toBe(200);
    expect((await trpc("POST", "reports.dismiss", { reportId: closed.reportId, reason: "other" }, admin2.session)).status).toBe(200);

    const found = async (s: Session) => {
      const r = await trpc("GET", "search.find", { q: word, kind: "reports" }, s);
      expect(r.status).toBe(200);
      return r.body.result.data.reports.items.map((i: { caseId: string }) => i.caseId);
    };
    expect(await found(admin2.session)).toEqual(expect.arrayContaining([hidden.caseId, shown.caseId, closed.caseId]));
    const modFound = await found(mod.session);
    expect(modFound).toContain(shown.caseId);
    expect(modFound).not.toContain(hidden.caseId);
    expect(modFound).not.toContain(closed.caseId);

    const closedIds = async (s: Session) => {
      const r = await trpc("GET", "search.closedCases", { limit: 100 }, s);
      expect(r.status).toBe(200);
      return r.body.result.data.items.map((i: { id: string }) => i.id);
    };
    expect(await closedIds(admin2.session)).toContain(closed.caseId);
    expect(await closedIds(mod.session)).not.toContain(closed.caseId);

    const detail = await trpc("GET", "cases.detail", { caseId: shown.caseId }, admin2.session);
    const identityId = detail.body.result.data.case.subjectIdentityId as string;
    // Cases and search hits carry their queue (null: the default queue).
    expect(detail.body.result.data.case.queueId).toBeNull();
    expect((await trpc("GET", "cases.detail", { caseId: hidden.caseId }, admin2.session)).body.result.data.case.queueId).toBe(restricted.id);
    const hits = (await trpc("GET", "search.find", { q: word, kind: "reports" }, admin2.session)).body.result.data.reports.items;
    expect(hits.find((h: { caseId: string }) => h.caseId === hidden.caseId).case.queueId).toBe(restricted.id);
    const profile = async (s: Session) => {
      const r = await trpc("GET", "dashboard.identity", { identityId }, s);
      expect(r.status).toBe(200);
      const d = r.body.result.data;
      return { cases: d.cases.map((c: { id: string }) => c.id), reports: d.reportsAbout.map((x: { id: string }) => x.id) };
    };
    const adminView = await profile(admin2.session);
    expect(adminView.cases).toEqual(expect.arrayContaining([hidden.caseId, shown.caseId]));
    expect(adminView.reports).toEqual(expect.arrayContaining([hidden.reportId, shown.reportId]));
    const modView = await profile(mod.session);
    expect(modView.cases).toEqual([shown.caseId]);
    expect(modView.reports).toEqual([shown.reportId]);
  });

  test("queues order their cases by their ordering, and paging neither skips nor repeats", async () => {
    const q = await createQueue({ name: `Ordered ${Date.now()}`, ordering: "age" });
    const filed: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { caseId } = await fileReport(server, { reason: i % 2 ? "spam" : "harassment" });
      expect((await moveCase(caseId, q.id)).status).toBe(200);
      filed.push(caseId);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await trpc("GET", "dashboard.queue", { queueId: q.id, limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.status).toBe(200);
      expect(page.body.result.data.ordering).toBe("age");
      seen.push(...page.body.result.data.items.map((i: { id: string }) => i.id));
      cursor = page.body.result.data.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(filed);
    // Priority ordering pages the same set.
    await org.PATCH("/organizations/{orgSlug}/queues/{queueId}", { params: { path: { orgSlug, queueId: q.id } }, body: { ordering: "priority" } });
    const byPriority: string[] = [];
    cursor = undefined;
    do {
      const page = await trpc("GET", "dashboard.queue", { queueId: q.id, limit: 2, ...(cursor ? { cursor } : {}) });
      byPriority.push(...page.body.result.data.items.map((i: { id: string }) => i.id));
      cursor = page.body.result.data.nextCursor ?? undefined;
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
      const page = await trpc("GET", "dashboard.queue", { queueId: q.id, limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.status).toBe(200);
      ranked.push(...page.body.result.data.items.map((i: { id: string }) => i.id));
      cursor = page.body.result.data.nextCursor ?? undefined;
    } while (cursor);
    expect(ranked.slice(0, 3)).toEqual([filed[3]!, filed[1]!, filed[4]!]);
    expect([...ranked].sort()).toEqual([...filed].sort());
    // A cursor of another ordering is a 400, never a 500.
    expect((await trpc("GET", "dashboard.queue", { queueId: q.id, cursor: "0.1.abc" })).status).toBe(400);
  });
});
