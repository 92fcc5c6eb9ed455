/**
 * A case's reporter summary through the front door (cases.reporterSummary, tRPC's typed client as
 * the dashboard calls it): the figures of a small pile-on, an anonymous report and a trusted
 * flagger among them; a viewer reads it too; a moderator who may not work the case's queue gets
 * a 404 like for a case that does not exist, and so does everyone for a case of another
 * organization; a malformed input is a 400.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { fileReport, reportIn, secondOrganization } from "./helpers/builders.ts";
import { demoAdmin, expectRefused, newUser, type DashboardUser } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

setDefaultTimeout(30_000);

let server: TestServer;
let admin: DashboardUser;
let n = 0;
const person = (p: string) => ({ type: "user", externalId: `${p}-${++n}-${Date.now()}` });

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  admin = await demoAdmin(server);
});
afterAll(async () => {
  await server.dispose();
});

describe("cases.reporterSummary", () => {
  test("counts the case's reports, reporters, their standing and reasons; viewers read it", async () => {
    const { orgSlug, projectId } = server.demo;
    const [trusted, veteran, a, b] = ["trusted", "veteran", "a", "b"].map(person);
    for (let i = 0; i < 3; i++) await reportIn(server, "RESOLVED", { reporter: veteran! });
    await fileReport(server, { reporter: trusted! });
    await admin.trpc.identities.updateReporter.mutate({ orgSlug, projectId, typeName: "user", externalId: trusted!.externalId, trustedFlagger: true });

    const post = { contentType: "post", contentExternalId: `pile-${++n}` };
    const { caseId } = await fileReport(server, { reporter: a!, target: post, reason: "harassment" });
    for (const [who, reason] of [[b, ["harassment", "spam"]], [trusted, "harassment"], [veteran, "spam"], [null, "threats"], [b, "harassment"]] as const) {
      await fileReport(server, { ...(who ? { reporter: who } : {}), target: post, reason: reason as string | string[] });
    }

    const expected = {
      caseId,
      reports: 6,
      anonymousReports: 1,
      reportsLastHour: 6,
      distinctReporters: 4,
      newReporters: 2, // a and b; the trusted flagger and the veteran reported before the case opened
      trustedReporters: 1,
      mutedReporters: 0,
      accuracy: { noDecided: 3, fewDecided: 0, mostlyUpheld: 1, mixed: 0, mostlyNotUpheld: 0 },
      reasons: [
        { reason: "harassment", reports: 4 },
        { reason: "spam", reports: 2 },
        { reason: "threats", reports: 1 },
      ],
      moreReasons: 0,
    };
    expect(await admin.trpc.cases.reporterSummary.query({ caseId })).toEqual(expected);
    const viewer = await newUser(server, "viewer");
    expect(await viewer.trpc.cases.reporterSummary.query({ caseId })).toEqual(expected);
  });

  test("a moderator outside the case's queue, and anyone for another organization's case, gets a 404; a bad input a 400", async () => {
    const { orgSlug } = server.demo;
    const { caseId } = await fileReport(server, { reporter: person("r"), reason: "child_safety" });
    const specialist = await newUser(server, "moderator", "specialist");
    const outsider = await newUser(server, "moderator", "outsider");
    const queue = await admin.trpc.queues.create.mutate({ orgSlug, name: `Child safety ${++n}`, access: { users: [specialist.id], roles: [] } });
    await admin.trpc.queues.moveCase.mutate({ orgSlug, caseId, queueId: queue.queue.id });

    expect((await specialist.trpc.cases.reporterSummary.query({ caseId })).reports).toBe(1);
    await expectRefused(outsider.trpc.cases.reporterSummary.query({ caseId }), "NOT_FOUND", "Case not found");
    await expectRefused(outsider.trpc.cases.reporterSummary.query({ caseId: "no-such-case" }), "NOT_FOUND", "Case not found");

    const other = await secondOrganization(server, { name: `Other ${++n}` });
    const theirs = await fileReport(server, { tenant: other, reporter: person("theirs") });
    await expectRefused(admin.trpc.cases.reporterSummary.query({ caseId: theirs.caseId }), "NOT_FOUND");
    await expectRefused(admin.trpc.cases.reporterSummary.query({ caseId: "" }), "BAD_REQUEST");
  });
});
