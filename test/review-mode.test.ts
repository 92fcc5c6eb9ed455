/**
 * Assignment and review mode over HTTP (issue 27), through the dashboard's typed client:
 * - a case is assigned to a named moderator who may work its queue, reassigned and released,
 *   each audited; anyone else is a 400 naming why, a case the caller may not work a 404; the
 *   assignee sees it in "mine" and in the navigation's count; the picker lists who may hold it;
 * - review mode takes a queue's cases in the queue's order, each claimed for its moderator; a
 *   skip needs a reason, is audited and keeps the case from that moderator in that session;
 * - moderators calling "next" all at once never get the same case (run on SQLite and on
 *   PostgreSQL, where the take is FOR UPDATE SKIP LOCKED).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { OrgClient } from "../clients/typescript/index.ts";
import { fileReport } from "./helpers/builders.ts";
import { demoAdmin, expectRefused, newUser, withKey, type DashboardUser } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
let org: OrgClient;
let admin: DashboardUser;
let mod: DashboardUser;
let mod2: DashboardUser;
let outsider: DashboardUser;
let viewer: DashboardUser;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  org = await server.orgClient();
  admin = await demoAdmin(server);
  [mod, mod2, outsider, viewer] = await Promise.all([newUser(server, "moderator", "mod"), newUser(server, "moderator", "mod2"), newUser(server, "moderator", "outsider"), newUser(server, "viewer")]);
});
afterAll(async () => {
  await server.dispose();
});

const orgSlug = () => server.demo.orgSlug;
const session = () => crypto.randomUUID();

/** A queue of its own (the test's cases only), worked by `users` (and admins), ordered by `ordering`. */
async function queueFor(users: DashboardUser[], ordering: "severity_age" | "priority" | "age" = "age"): Promise<string> {
  const r = await org.POST("/organizations/{orgSlug}/queues", {
    params: { path: { orgSlug: orgSlug() } },
    body: { name: `Review ${crypto.randomUUID().slice(0, 8)}`, ordering, access: { users: users.map((u) => u.id), roles: [] } },
  });
  expect(r.response.status).toBe(201);
  return r.data!.queue.id;
}

/** `n` cases filed one after the other, each moved into `queueId`: oldest first. */
async function casesIn(queueId: string, n: number, reason: "spam" | "child_safety" = "spam"): Promise<{ caseId: string; reportId: string }[]> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const filed = await fileReport(server, { reason });
    await withKey(server).trpc.queues.moveCase.mutate({ orgSlug: orgSlug(), caseId: filed.caseId, queueId });
    out.push(filed);
  }
  return out;
}

const caseAudit = async (caseId: string) => {
  const r = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug: orgSlug() }, query: { entityType: "case", entityId: caseId } } });
  expect(r.response.status).toBe(200);
  return r.data!.events;
};

describe("assignment", () => {
  test("assign to a named moderator, reassign, release: each audited; the assignee's view and count follow", async () => {
    const queueId = await queueFor([mod, mod2, viewer]);
    const [c] = await casesIn(queueId, 1);
    const before = (await mod.trpc.dashboard.assignedToMe.query()).count;

    const assigned = await admin.assign(c!.caseId, mod.id);
    expect(assigned.case.assigneeId).toBe(mod.id);
    expect((await mod.trpc.dashboard.assignedToMe.query()).count).toBe(before + 1);
    expect((await mod.queue({ view: "mine", queueId })).items.map((i) => i.id)).toEqual([c!.caseId]);
    const page = await mod.casePage(c!.caseId);
    expect(page.assignee).toEqual({ id: mod.id, email: mod.email });
    expect(page.claimUntil).toBeNull();

    await admin.assign(c!.caseId, mod2.id);
    expect((await mod.trpc.dashboard.assignedToMe.query()).count).toBe(before);
    expect((await mod2.queue({ view: "mine", queueId })).items.map((i) => i.id)).toEqual([c!.caseId]);
    await mod2.assign(c!.caseId, null);
    expect((await mod2.casePage(c!.caseId)).assignee).toBeNull();

    // The audit trail, oldest first.
    const trail = (await caseAudit(c!.caseId)).filter((e) => e.action === "CASE_ASSIGNED" || e.action === "CASE_UNASSIGNED").reverse();
    expect(trail.map((e) => [e.action, e.before, e.after])).toEqual([
      ["CASE_ASSIGNED", { assigneeId: null }, { assigneeId: mod.id }],
      ["CASE_ASSIGNED", { assigneeId: mod.id }, { assigneeId: mod2.id }],
      ["CASE_UNASSIGNED", { assigneeId: mod2.id }, { assigneeId: null }],
    ]);
  });

  test("only a moderator who may work the case's queue can hold it (400 naming why); a case the caller may not work is a 404", async () => {
    const queueId = await queueFor([mod, viewer]);
    const [c] = await casesIn(queueId, 1);
    await expectRefused(admin.assign(c!.caseId, outsider.id), 400, "assigneeId: this user may not work the case's queue");
    await expectRefused(admin.assign(c!.caseId, viewer.id), 400, "assigneeId: a viewer cannot work cases (moderators and admins can)");
    await expectRefused(admin.assign(c!.caseId, "no-such-user"), 404, "User not found");
    await expectRefused(outsider.assign(c!.caseId, outsider.id), 404, "Case not found");
    await expectRefused(outsider.trpc.cases.assignees.query({ caseId: c!.caseId }), 404, "Case not found");
    // The picker lists who may hold it: the moderator and the admins, not the outsider nor the viewer.
    const listed = (await mod.trpc.cases.assignees.query({ caseId: c!.caseId })).assignees.map((a) => a.id);
    expect(listed).toContain(mod.id);
    expect(listed).toContain(admin.id);
    expect(listed).not.toContain(outsider.id);
    expect(listed).not.toContain(viewer.id);
    expect((await mod.trpc.cases.assignees.query({ caseId: c!.caseId })).assignees.find((a) => a.id === mod.id)).toEqual({ id: mod.id, email: mod.email, role: "moderator" });
    // Nothing changed.
    expect((await admin.casePage(c!.caseId)).assignee).toBeNull();
  });
});

describe("review mode", () => {
  test("takes the queue's cases in its order, each claimed for its moderator until a while; the next releases an escalated case", async () => {
    const queueId = await queueFor([mod, mod2]);
    const cs = await casesIn(queueId, 3);
    const s1 = session();
    const first = await mod.trpc.review.next.mutate({ queueId, sessionId: s1 });
    expect(first.case?.id).toBe(cs[0]!.caseId);
    expect(first.waiting).toBe(2);
    const until = Date.parse(first.claimUntil!);
    expect(until).toBeGreaterThan(Date.now() + 10 * 60_000);
    expect((await mod.casePage(cs[0]!.caseId))).toMatchObject({ assignee: { id: mod.id }, claimUntil: first.claimUntil });
    // Held: another moderator's review gets the next one; a decision by them needs a take-over.
    const other = await mod2.trpc.review.next.mutate({ queueId, sessionId: session() });
    expect(other.case?.id).toBe(cs[1]!.caseId);
    await expectRefused(mod2.dismiss(cs[0]!.reportId), 409, `This case is assigned to ${mod.email}: take it over to decide on it`);
    expect((await mod.trpc.dashboard.assignedToMe.query()).count).toBe(1);

    // A decision, then next: the decided case stays decided, the next is the queue's third.
    await mod.dismiss(cs[0]!.reportId);
    const second = await mod.trpc.review.next.mutate({ queueId, sessionId: s1, leaving: cs[0]!.caseId });
    expect(second.case?.id).toBe(cs[2]!.caseId);
    expect(second.waiting).toBe(0);
    // An escalation leaves the case open for its team: moving on releases the review claim, and
    // review mode does not offer escalated cases.
    await mod.trpc.reports.escalate.mutate({ reportId: cs[2]!.reportId, team: "legal" });
    const none = await mod.trpc.review.next.mutate({ queueId, sessionId: s1, leaving: cs[2]!.caseId });
    expect(none).toEqual({ case: null, claimUntil: null, waiting: 0 });
    expect((await admin.casePage(cs[2]!.caseId)).assignee).toBeNull();
    const released = (await caseAudit(cs[2]!.caseId)).find((e) => e.action === "CASE_UNASSIGNED");
    expect(released).toMatchObject({ before: { assigneeId: mod.id }, after: { assigneeId: null }, data: { review: true, why: "next" } });

    // Stopping releases the claim the moderator was on.
    await mod2.trpc.review.stop.mutate({ caseId: other.case!.id });
    expect((await admin.casePage(other.case!.id)).assignee).toBeNull();
  });

  test("the default order puts an emergency case first, whatever its age", async () => {
    const queueId = await queueFor([mod], "severity_age");
    const [older] = await casesIn(queueId, 1);
    const [urgent] = await casesIn(queueId, 1, "child_safety");
    const s = session();
    const first = await mod.trpc.review.next.mutate({ queueId, sessionId: s });
    expect(first.case?.id).toBe(urgent!.caseId);
    const second = await mod.trpc.review.next.mutate({ queueId, sessionId: s, leaving: urgent!.caseId });
    expect(second.case?.id).toBe(older!.caseId);
    await mod.trpc.review.stop.mutate({ caseId: older!.caseId });
  });

  test("a skip needs a reason, is audited, and the case is not offered again to that moderator in that session", async () => {
    const queueId = await queueFor([mod, mod2]);
    const [a, b] = await casesIn(queueId, 2);
    const s = session();
    const first = await mod.trpc.review.next.mutate({ queueId, sessionId: s });
    expect(first.case?.id).toBe(a!.caseId);
    await expectRefused(mod.trpc.review.skip.mutate({ queueId, sessionId: s, caseId: a!.caseId, reason: "  " }), 400, /reason: say why you skip the case/);
    const after = await mod.trpc.review.skip.mutate({ queueId, sessionId: s, caseId: a!.caseId, reason: "Needs someone who reads Polish" });
    expect(after.case?.id).toBe(b!.caseId);
    const skipped = (await caseAudit(a!.caseId)).find((e) => e.action === "CASE_SKIPPED");
    expect(skipped).toMatchObject({ actor: { type: "user", id: mod.id }, data: { reason: "Needs someone who reads Polish", sessionId: s, queueId } });
    expect((await admin.casePage(a!.caseId)).assignee).toBeNull();
    // In the same session: after b, nothing (a is held back); another moderator gets a; a new session of mod's gets it too.
    const rest = await mod.trpc.review.next.mutate({ queueId, sessionId: s, leaving: b!.caseId });
    expect(rest.case).toBeNull();
    const forOther = await mod2.trpc.review.next.mutate({ queueId, sessionId: session() });
    expect(forOther.case?.id).toBe(a!.caseId);
    await mod2.trpc.review.stop.mutate({ caseId: a!.caseId });
    expect((await mod.trpc.review.next.mutate({ queueId, sessionId: session() })).case?.id).toBe(a!.caseId);
  });

  test("a queue the caller may not work is a 404; an API key holds no cases (400); a viewer may not review (403)", async () => {
    const queueId = await queueFor([mod]);
    const [c] = await casesIn(queueId, 1);
    await expectRefused(outsider.trpc.review.next.mutate({ queueId, sessionId: session() }), 404, "Queue not found");
    await expectRefused(outsider.trpc.review.skip.mutate({ queueId, sessionId: session(), caseId: c!.caseId, reason: "x" }), 404);
    await expectRefused(outsider.trpc.review.stop.mutate({ caseId: c!.caseId }), 404, "Case not found");
    await expectRefused(withKey(server).trpc.review.next.mutate({ queueId, sessionId: session() }), 400, /dashboard users/);
    await expectRefused(viewer.trpc.review.next.mutate({ queueId, sessionId: session() }), 403);
    expect((await admin.casePage(c!.caseId)).assignee).toBeNull();
  });

  test("moderators asking for the next case all at once never get the same one", async () => {
    const reviewers = [mod, mod2, admin];
    const queueId = await queueFor([mod, mod2]);
    const cs = await casesIn(queueId, 12);
    const sessions = reviewers.map(() => session());
    // Each reviewer fires five calls at once, without waiting: 15 takes for 12 cases.
    const turns = await Promise.all(reviewers.flatMap((r, i) => Array.from({ length: 5 }, () => r.trpc.review.next.mutate({ queueId, sessionId: sessions[i]! }))));
    const taken = turns.flatMap((t) => (t.case ? [t.case.id] : []));
    expect(taken).toHaveLength(12);
    expect(new Set(taken).size).toBe(12);
    expect(new Set(taken)).toEqual(new Set(cs.map((c) => c.caseId)));
    // Each case is held by the reviewer its take answered.
    for (const [i, t] of turns.entries()) {
      if (!t.case) continue;
      const holder = reviewers[Math.floor(i / 5)]!;
      expect((await admin.casePage(t.case.id)).assignee?.id).toBe(holder.id);
    }
  });
});
