/**
 * Reporters' weight through HTTP (DSA Art. 22, 23): the organization route of an identity as a
 * reporter (GET and PATCH, roles, 404, 400), accuracy with its prior, a muted reporter's report
 * (an ordinary 201, stored, dismissed not_actionable by the system, never queued, audited, no
 * report.decided event), unmuting, and a trusted flagger's report first in the queue.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import type { OrgClient, OrgComponents, SdkClient } from "../clients/typescript/index.ts";
import { fileReport } from "./helpers/builders.ts";
import { demoAdmin, expectRefused, withKey, type Caller, type Input, type QueueFilter } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

setDefaultTimeout(30_000);

type AuditEvent = OrgComponents["schemas"]["AuditEvent"];

let server: TestServer;
let sdk: SdkClient;
let org: OrgClient;
let orgSlug: string;
let projectId: string;
let n = 0;

/** A webhook receiver verifying each message with the endpoint's secret (standardwebhooks). */
const received: { type: string; reportId: string | undefined }[] = [];
let hookSecret = "";
let receiver: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (req) => {
      const payload = new Webhook(hookSecret).verify(await req.text(), Object.fromEntries(req.headers.entries())) as { type: string; data: { reportId?: string } };
      received.push({ type: payload.type, reportId: payload.data.reportId });
      return new Response("ok");
    },
  });
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000", FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1", FLAGSTAFF_JOB_POLL_MS: "50" });
  sdk = await server.sdkClient();
  org = await server.orgClient();
  orgSlug = server.demo.orgSlug;
  projectId = server.demo.projectId;
});
afterAll(async () => {
  await server.dispose();
  await receiver.stop(true);
});

const person = (prefix = "reporter") => ({ type: "user", externalId: `${prefix}-${++n}-${Date.now()}` });
const at = (who: { type: string; externalId: string }) => ({ path: { orgSlug, projectId, typeName: who.type, externalId: who.externalId } });
const getReporter = (who: { type: string; externalId: string }) => org.GET("/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}", { params: at(who) });
const patchReporter = (who: { type: string; externalId: string }, body: { trustedFlagger?: boolean; mutedUntil?: string | null; muteReason?: string | null }) =>
  org.PATCH("/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}", { params: at(who), body });
/** A reporter known to the project: one report filed, left open. */
async function knownReporter(prefix?: string) {
  const who = person(prefix);
  await fileReport(server, { reporter: who });
  return who;
}
const report = async (reportId: string) => {
  const r = await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } });
  expect(r.response.status).toBe(200);
  return r.data!.report;
};
const audit = async (entityType: string, entityId: string): Promise<AuditEvent[]> => {
  const r = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug }, query: { entityType: entityType as never, entityId } } });
  expect(r.response.status).toBe(200);
  return r.data!.events;
};
/** The dashboard's queue of the project, as the secret key sees it. */
const queue = (input: Omit<QueueFilter, "projectId"> = {}) => withKey(server).queue({ projectId, ...input });
const inFuture = (ms: number) => new Date(Date.now() + ms).toISOString();

describe("the reporter route", () => {
  test("GET answers the identity (the spec's fifteen fields) and a fresh reporter's standing", async () => {
    const who = await knownReporter();
    const r = await getReporter(who);
    expect(r.response.status).toBe(200);
    expect(Object.keys(r.data!.identity).sort()).toHaveLength(15);
    expect(r.data!.identity.externalId).toBe(who.externalId);
    expect(r.data!.reporter).toEqual({ trustedFlagger: false, mutedUntil: null, muteReason: null, accuracy: 0.5, reportsDecided: 0 });
  });

  test("an unknown identity is a 404, on GET and PATCH", async () => {
    const nobody = person("nobody");
    expect((await getReporter(nobody)).response.status).toBe(404);
    const p = await patchReporter(nobody, { mutedUntil: inFuture(3_600_000) });
    expect(p.response.status).toBe(404);
    expect((p.error as { error: string }).error).toBeString();
  });

  test("bad dates and lengths are 400s", async () => {
    const who = await knownReporter();
    for (const body of [
      { mutedUntil: "tomorrow" },
      { mutedUntil: "2020-01-01T00:00:00Z" }, // in the past
      { mutedUntil: inFuture(20 * 365 * 24 * 3_600_000) }, // more than ten years on
      { mutedUntil: inFuture(3_600_000), muteReason: "x".repeat(1001) },
      { muteReason: "no mute to explain" },
    ]) {
      const r = await patchReporter(who, body);
      expect(r.response.status).toBe(400);
      expect(typeof (r.error as { error: string }).error).toBe("string");
    }
    expect((await getReporter(who)).data!.reporter.mutedUntil).toBeNull();
  });

  test("PATCH marks a trusted flagger (audited) and answers the new standing", async () => {
    const who = await knownReporter();
    const r = await patchReporter(who, { trustedFlagger: true });
    expect(r.response.status).toBe(200);
    expect(r.data!.reporter.trustedFlagger).toBe(true);
    expect((await getReporter(who)).data!.reporter.trustedFlagger).toBe(true);
    const events = await audit("identity", r.data!.identity.id);
    const changed = events.find((e) => e.action === "REPORTER_TRUSTED_CHANGED");
    expect(changed?.before).toEqual({ trustedFlagger: false });
    expect(changed?.after).toEqual({ trustedFlagger: true });
    // Unmarking is audited too; a PATCH that changes nothing writes nothing.
    await patchReporter(who, { trustedFlagger: false });
    await patchReporter(who, { trustedFlagger: false });
    expect((await audit("identity", r.data!.identity.id)).filter((e) => e.action === "REPORTER_TRUSTED_CHANGED")).toHaveLength(2);
  });

  test("roles: a moderator mutes but may not mark a trusted flagger; an admin may; a viewer neither", async () => {
    // Dashboard sessions: the REST routes take keys only; roles are a session's.
    const admin = await demoAdmin(server);
    const moderator = await admin.createUser("moderator");
    const viewer = await admin.createUser("viewer");
    const who = await knownReporter();
    const key = { orgSlug, projectId, typeName: who.type, externalId: who.externalId };

    const updateReporter = (by: Caller, input: Omit<Input["identities"]["updateReporter"], keyof typeof key>) =>
      by.trpc.identities.updateReporter.mutate({ ...key, ...input });
    await expectRefused(updateReporter(moderator, { trustedFlagger: true }), "FORBIDDEN");
    const muted = await updateReporter(moderator, { mutedUntil: inFuture(3_600_000), muteReason: "floods the queue" });
    expect(muted.reporter.muteReason).toBe("floods the queue");
    await expectRefused(updateReporter(viewer, { mutedUntil: null }), "FORBIDDEN");
    // A viewer reads the standing (a read needs no CSRF token).
    const read = await viewer.withHeaders({ "x-flagstaff-csrf": null }).trpc.identities.reporter.query(key);
    expect(read.reporter.mutedUntil).toBeString();
    const asAdmin = await updateReporter(admin, { trustedFlagger: true });
    expect(asAdmin.reporter.trustedFlagger).toBe(true);
    // The mark stayed off while the moderator was refused.
    const trustEvents = (await audit("identity", asAdmin.identity.id)).filter((e) => e.action === "REPORTER_TRUSTED_CHANGED");
    expect(trustEvents).toHaveLength(1);
  });
});

describe("accuracy", () => {
  test("upheld ÷ decided with the prior: (upheld + 1) / (decided + 2); open reports do not count", async () => {
    const who = person();
    const reports = [];
    for (let i = 0; i < 4; i++) reports.push((await fileReport(server, { reporter: who })).reportId);
    expect((await getReporter(who)).data!.reporter).toMatchObject({ accuracy: 0.5, reportsDecided: 0 });
    const onReport = (reportId: string) => ({ params: { path: { reportId } } });
    expect((await sdk.POST("/reports/{reportId}/resolve", onReport(reports[0]!))).response.status).toBe(200);
    // One resolved report: 2/3, not 100 %.
    expect((await getReporter(who)).data!.reporter).toMatchObject({ accuracy: 2 / 3, reportsDecided: 1 });
    expect((await sdk.POST("/reports/{reportId}/resolve", onReport(reports[1]!))).response.status).toBe(200);
    expect((await sdk.POST("/reports/{reportId}/dismiss", { ...onReport(reports[2]!), body: { reason: "false_positive" } })).response.status).toBe(200);
    // 2 upheld of 3 decided (the fourth is open): (2 + 1) / (3 + 2).
    const r = (await getReporter(who)).data!.reporter;
    expect(r.reportsDecided).toBe(3);
    expect(r.accuracy).toBeCloseTo(3 / 5, 10);
  });
});

describe("a muted reporter", () => {
  test("gets the ordinary 201; the report is stored, dismissed not_actionable by the system, never queued, audited", async () => {
    const who = await knownReporter("muted");
    const patched = await patchReporter(who, { mutedUntil: inFuture(24 * 3_600_000), muteReason: "bad-faith reports" });
    expect(patched.response.status).toBe(200);
    const identityId = patched.data!.identity.id;
    expect(patched.data!.reporter.muteReason).toBe("bad-faith reports");
    const mutedEvent = (await audit("identity", identityId)).find((e) => e.action === "REPORTER_MUTED");
    expect(mutedEvent?.after).toMatchObject({ muteReason: "bad-faith reports" });

    const body = { reason: "spam", reporter: who, target: { contentType: "post", contentExternalId: `muted-post-${Date.now()}` } };
    const created = await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body });
    expect(created.response.status).toBe(201);
    // The same answer as any report: nothing says the reporter is muted.
    expect(Object.keys(created.data!.report).sort()).toEqual(["createdAt", "id", "projectId", "status"]);
    expect(created.data!.report.status).toBe("OPEN");
    const reportId = created.data!.report.id;

    const stored = await report(reportId);
    expect(stored.status).toBe("DISMISSED");
    expect(stored.dismissal?.reason).toBe("not_actionable");
    expect(stored.dismissal?.by).toEqual({ type: "system", id: null });

    const q = await queue();
    expect(q.items.map((c) => c.id)).not.toContain(stored.caseId);
    const openReports = await sdk.GET("/reports", { params: { query: { status: "OPEN", limit: 100 } } });
    expect(openReports.data!.reports.map((r) => r.id)).not.toContain(reportId);

    const dismissed = (await audit("report", reportId)).find((e) => e.action === "REPORT_DISMISSED");
    expect(dismissed?.actor.type).toBe("system");
    expect(dismissed?.data).toMatchObject({ reason: "not_actionable", mutedReporter: true });
    // The case it opened is dismissed with it.
    const caseEvents = await audit("case", stored.caseId);
    expect(caseEvents.find((e) => e.action === "CASE_STATUS_CHANGED")?.after).toEqual({ status: "DISMISSED" });
    // A system dismissal of a muted report is no decision on the reporter's accuracy.
    expect((await getReporter(who)).data!.reporter.reportsDecided).toBe(0);
  });

  test("a muted report joining an open case leaves that case and its other reports as they were", async () => {
    const who = await knownReporter("muted");
    expect((await patchReporter(who, { mutedUntil: inFuture(3_600_000) })).response.status).toBe(200);
    const target = { contentType: "post", contentExternalId: `shared-post-${Date.now()}` };
    const first = await fileReport(server, { target, reporter: person() });
    const muted = await fileReport(server, { target, reporter: who });
    expect(muted.caseId).toBe(first.caseId);
    expect((await report(muted.reportId)).status).toBe("DISMISSED");
    expect((await report(first.reportId)).status).toBe("OPEN");
    expect((await queue()).items.map((c) => c.id)).toContain(first.caseId);
  });

  test("no report.decided event for it, while an ordinary decision has one", async () => {
    const hook = await org.POST("/organizations/{orgSlug}/webhook-endpoints", {
      params: { path: { orgSlug } },
      body: { url: `http://127.0.0.1:${receiver.port}/hook`, eventTypes: ["report.decided"] },
    });
    expect(hook.response.status).toBe(201);
    hookSecret = hook.data!.secret;
    const who = await knownReporter("muted");
    expect((await patchReporter(who, { mutedUntil: inFuture(3_600_000) })).response.status).toBe(200);
    const muted = await fileReport(server, { reporter: who });
    expect((await report(muted.reportId)).status).toBe("DISMISSED");
    const ordinary = await fileReport(server, { reporter: person() });
    const dismissed = await sdk.POST("/reports/{reportId}/dismiss", { params: { path: { reportId: ordinary.reportId } }, body: { reason: "not_actionable" } });
    expect(dismissed.response.status).toBe(200);
    await until("the ordinary dismissal's report.decided", async () => received.some((m) => m.type === "report.decided" && m.reportId === ordinary.reportId), 15_000);
    expect(received.filter((m) => m.reportId === muted.reportId)).toEqual([]);
  });

  test("unmuting is audited, and the next report is queued as usual", async () => {
    const who = await knownReporter("muted");
    const muted = await patchReporter(who, { mutedUntil: inFuture(3_600_000), muteReason: "spam reports" });
    const identityId = muted.data!.identity.id;
    const unmuted = await patchReporter(who, { mutedUntil: null });
    expect(unmuted.response.status).toBe(200);
    expect(unmuted.data!.reporter).toMatchObject({ mutedUntil: null, muteReason: null });
    const event = (await audit("identity", identityId)).find((e) => e.action === "REPORTER_UNMUTED");
    expect(event?.before).toMatchObject({ muteReason: "spam reports" });
    expect(event?.after).toEqual({ mutedUntil: null, muteReason: null });
    const next = await fileReport(server, { reporter: who });
    expect((await report(next.reportId)).status).toBe("OPEN");
    expect((await queue()).items.map((c) => c.id)).toContain(next.caseId);
  });
});

describe("a trusted flagger", () => {
  test("their report's case goes first in the queue, above older cases of the same bucket, and says so", async () => {
    const older = await fileReport(server, { reporter: person() });
    const flagger = await knownReporter("trusted");
    expect((await patchReporter(flagger, { trustedFlagger: true })).response.status).toBe(200);
    const trusted = await fileReport(server, { reporter: flagger });
    const q = await queue({ bucket: "normal", limit: 100 });
    const ids = q.items.map((c) => c.id);
    expect(ids.indexOf(trusted.caseId)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(trusted.caseId)).toBeLessThan(ids.indexOf(older.caseId));
    // Every trusted case comes before every other one; the row says which it is.
    const flags = q.items.map((c) => c.trustedFlagged);
    expect(flags.indexOf(false)).toBeGreaterThan(flags.lastIndexOf(true));
    expect(q.items.find((c) => c.id === trusted.caseId)?.trustedFlagged).toBe(true);
    expect(q.items.find((c) => c.id === older.caseId)?.trustedFlagged).toBe(false);

    // Paging stays whole: one case a page, each case once, in the same order.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await queue({ bucket: "normal", limit: 1, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((c) => c.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor && seen.length <= ids.length);
    expect(seen).toEqual(ids);

    // An ordinary report joining the flagged case keeps it first.
    const joined = await fileReport(server, { reporter: person(), target: { contentType: "post", contentExternalId: (await report(trusted.reportId)).target!.contentExternalId! } });
    expect(joined.caseId).toBe(trusted.caseId);
    expect((await queue({ bucket: "normal", limit: 100 })).items.find((c) => c.id === trusted.caseId)?.trustedFlagged).toBe(true);
  });
});
