/**
 * Quality review through the front door (issue 29): a queue's sampling rate (0 % and 100 %) and
 * its always-sample condition, only moderators' decisions sampled, the first decider never
 * offered their own decision, the blind view without the first decision (checked on the answer's
 * JSON), the second review committed without changing the outcome, the disagreement listed for
 * the lead, the lead's acknowledgment (and a dismissed case reopened through the workflow
 * engine) audited, the agreement figures of a pair computed by hand, and the refusals.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { OrgClient } from "../clients/typescript/index.ts";
import { fileReport } from "./helpers/builders.ts";
import { demoAdmin, expectRefused, newUser, signIn, withKey, type DashboardUser } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

setDefaultTimeout(60_000);

let server: TestServer;
let org: OrgClient;
let orgSlug: string;
let admin: DashboardUser;
let first: DashboardUser;
let second: DashboardUser;
let defaultQueueId: string;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  org = await server.orgClient();
  orgSlug = server.demo.orgSlug;
  admin = await demoAdmin(server);
  first = await newUser(server, "moderator", "first");
  second = await newUser(server, "moderator", "second");
  const { queues } = await admin.trpc.queues.list.query({ orgSlug });
  defaultQueueId = queues.find((q) => q.isDefault)!.id;
});
afterAll(() => server.dispose());

const sampling = (samplePercent: number, alwaysSample: "none" | "any_action" | "account_action" | "account_stopped" = "none") =>
  admin.trpc.queues.update.mutate({ orgSlug, queueId: defaultQueueId, samplePercent, alwaysSample });

let subjects = 0;
const withSubject = () => fileReport(server, { subject: { type: "user", externalId: `quality-subject-${++subjects}-${Date.now()}` } });

describe("sampling", () => {
  test("0 % samples nothing; 100 % samples a moderator's decision, not an API key's", async () => {
    await sampling(0);
    const none = await fileReport(server);
    await first.resolve(none.reportId, { resolutionCode: "SPAM_CONFIRMED" });
    expect((await second.trpc.quality.next.mutate({ orgSlug })).task).toBeNull();

    await sampling(100);
    const byKey = await fileReport(server);
    await withKey(server).resolve(byKey.reportId, { resolutionCode: "SPAM_CONFIRMED" });
    expect((await second.trpc.quality.next.mutate({ orgSlug })).task).toBeNull();

    const sampled = await fileReport(server);
    await first.dismiss(sampled.reportId, "duplicate");
    const { task } = await second.trpc.quality.next.mutate({ orgSlug });
    expect(task).toMatchObject({ caseId: sampled.caseId, queue: { id: defaultQueueId } });
    // Taken: asking again answers the same task, and it is listed as the caller's.
    expect((await second.trpc.quality.next.mutate({ orgSlug })).task?.id).toBe(task!.id);
    expect((await second.trpc.quality.mine.query({ orgSlug })).tasks.map((t) => t.id)).toEqual([task!.id]);
    const done = await second.trpc.quality.submit.mutate({ orgSlug, reviewId: task!.id, decision: { action: "dismiss", reason: "out_of_scope" } });
    expect(done.review).toMatchObject({ agree: true, first: { by: { id: first.id }, decision: { label: "DISMISSED" } }, second: { by: { id: second.id }, decision: { label: "DISMISSED" } } });
  });

  test("always-sample: at 0 % a ban is sampled, a warning is not", async () => {
    await sampling(0, "account_stopped");
    const warned = await withSubject();
    await first.resolve(warned.reportId, { resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "warning" } });
    expect((await second.trpc.quality.next.mutate({ orgSlug })).task).toBeNull();
    const banned = await withSubject();
    await first.resolve(banned.reportId, { resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "ban" } });
    // The first decider is never offered their own decision.
    expect((await first.trpc.quality.next.mutate({ orgSlug })).task).toBeNull();
    const { task } = await second.trpc.quality.next.mutate({ orgSlug });
    expect(task?.caseId).toBe(banned.caseId);
    // Never told why it was sampled (that would name the kind of action).
    expect(JSON.stringify(task)).not.toContain("always");
  });
});

describe("the blind second review", () => {
  test("the blind view holds the case and nothing of the first decision; committing shows both; the outcome is unchanged", async () => {
    const { task } = await second.trpc.quality.next.mutate({ orgSlug });
    const reviewId = task!.id;
    const before = await admin.casePage(task!.caseId);
    expect(before.case.status).toBe("RESOLVED");
    const reportId = before.reports[0]!.id;

    const blind = await second.trpc.quality.blind.query({ orgSlug, reviewId });
    expect(blind.case.id).toBe(task!.caseId);
    expect(blind.reports.map((r) => r.id)).toEqual([reportId]);
    expect(blind.subject?.externalId).toMatch(/^quality-subject-/);
    const text = JSON.stringify(blind);
    for (const leak of ["ACCOUNT_LEVEL_ACTION", '"ban"', "RESOLVED", "resolution", "dismissal", "status", "decision", "enforcement", "audit", first.id, first.email, "always"]) {
      expect(text).not.toContain(leak);
    }
    // Nor do the case page and the audit log tell the reviewer the first decision until they commit.
    await expectRefused(second.trpc.dashboard.case.query({ caseId: task!.caseId }), "FORBIDDEN", "reviewing this case blind");
    const auditOf = (user: typeof second, entityType: "case" | "report", entityId: string) => user.trpc.dashboard.audit.query({ entityType, entityId }).then((p) => p.events.length);
    expect(await auditOf(second, "case", task!.caseId)).toBe(0);
    expect(await auditOf(second, "report", reportId)).toBe(0);
    expect(await auditOf(admin, "report", reportId)).toBeGreaterThan(0);
    // Nor do the closed cases' list (with the decisions) or the subject's page (its ban).
    const closedIds = async (user: typeof second) => (await user.trpc.search.closedCases.query({ limit: 100 })).items.map((i) => i.id);
    const subjectId = before.case.subjectIdentityId!;
    expect(await closedIds(admin)).toContain(task!.caseId);
    expect(await closedIds(second)).not.toContain(task!.caseId);
    await expectRefused(second.trpc.dashboard.identity.query({ identityId: subjectId }), "FORBIDDEN", "reviewing a case about this account blind");
    // The first decider may not see, take or commit it.
    await expectRefused(first.trpc.quality.blind.query({ orgSlug, reviewId }), "NOT_FOUND");
    await expectRefused(first.trpc.quality.submit.mutate({ orgSlug, reviewId, decision: { action: "resolve", code: "NO_VIOLATION" } }), "NOT_FOUND");
    // A code that does not carry the kind named is refused.
    await expectRefused(second.trpc.quality.submit.mutate({ orgSlug, reviewId, decision: { action: "resolve", code: "NO_VIOLATION", actionKind: "ban" } }), "CONFLICT");

    const { review } = await second.trpc.quality.submit.mutate({ orgSlug, reviewId, decision: { action: "resolve", code: "ACCOUNT_LEVEL_ACTION", actionKind: "warning" }, note: "A warning is enough" });
    expect(review).toMatchObject({
      agree: false,
      reason: "always",
      first: { by: { id: first.id }, decision: { action: "resolve", code: "ACCOUNT_LEVEL_ACTION", actionKind: "ban", label: "ACCOUNT_LEVEL_ACTION/ban" } },
      second: { by: { id: second.id }, decision: { label: "ACCOUNT_LEVEL_ACTION/warning" }, note: "A warning is enough" },
      acknowledgment: null,
    });
    await expectRefused(second.trpc.quality.submit.mutate({ orgSlug, reviewId, decision: { action: "dismiss", reason: "other" } }), "CONFLICT", "committed already");
    // Committed: the case opens to the reviewer, with its trail.
    expect((await second.trpc.dashboard.case.query({ caseId: task!.caseId })).case.status).toBe("RESOLVED");
    expect(await auditOf(second, "report", reportId)).toBeGreaterThan(0);
    expect(await closedIds(second)).toContain(task!.caseId);
    expect((await second.trpc.dashboard.identity.query({ identityId: subjectId })).enforcement.map((a) => a.kind)).toContain("ban");

    // Nothing of the case changed: its status, decision, the report's outcome, the ban.
    const after = await admin.casePage(task!.caseId);
    expect(after.case).toEqual(before.case);
    expect(after.reports[0]!.status).toBe("RESOLVED");
    expect(after.reports[0]!.resolution).toEqual(before.reports[0]!.resolution);
    expect(after.caseEnforcement.map((a) => [a.kind, a.status])).toEqual(before.caseEnforcement.map((a) => [a.kind, a.status]));
    expect(after.caseEnforcement.map((a) => a.kind)).toEqual(["ban"]);
    expect(after.audit.map((e) => e.action)).toContain("QUALITY_REVIEW_SUBMITTED");
  });
});

describe("the lead", () => {
  test("sees the disagreement side by side, acknowledges it (a resolved case is not reopened here), audited", async () => {
    await expectRefused(second.trpc.quality.disagreements.query({ orgSlug }), "FORBIDDEN");
    const { reviews } = await admin.trpc.quality.disagreements.query({ orgSlug });
    const review = reviews.find((r) => r.first.decision.label === "ACCOUNT_LEVEL_ACTION/ban")!;
    expect(review.second?.decision.label).toBe("ACCOUNT_LEVEL_ACTION/warning");
    await expectRefused(admin.trpc.quality.acknowledge.mutate({ orgSlug, reviewId: review.id, reopen: true }), "CONFLICT", "appeal");
    const acked = await admin.trpc.quality.acknowledge.mutate({ orgSlug, reviewId: review.id, note: "The ban stands: repeated" });
    expect(acked.review.acknowledgment).toMatchObject({ by: { id: admin.id }, note: "The ban stands: repeated", reopened: false });
    await expectRefused(admin.trpc.quality.acknowledge.mutate({ orgSlug, reviewId: review.id }), "CONFLICT", "acknowledged already");
    expect((await admin.trpc.quality.disagreements.query({ orgSlug })).reviews.map((r) => r.id)).not.toContain(review.id);
    expect((await admin.trpc.quality.disagreements.query({ orgSlug, acknowledged: true })).reviews.map((r) => r.id)).toContain(review.id);
    const page = await admin.casePage(review.caseId);
    expect(page.case.status).toBe("RESOLVED");
    const ack = page.audit.find((e) => e.action === "QUALITY_REVIEW_ACKNOWLEDGED");
    expect(ack).toMatchObject({ actor: { type: "user", id: admin.id }, data: { reviewId: review.id, reopened: false } });
  });

  test("reopens a dismissed case through the workflow engine: back in review, escalated, audited", async () => {
    await sampling(100);
    const dismissed = await fileReport(server);
    await first.dismiss(dismissed.reportId, "not_actionable");
    const { task } = await second.trpc.quality.next.mutate({ orgSlug });
    expect(task?.caseId).toBe(dismissed.caseId);
    await second.trpc.quality.submit.mutate({ orgSlug, reviewId: task!.id, decision: { action: "resolve", code: "SPAM_CONFIRMED" } });
    expect((await admin.casePage(dismissed.caseId)).case.status).toBe("DISMISSED");
    const { review } = await admin.trpc.quality.acknowledge.mutate({ orgSlug, reviewId: task!.id, reopen: true, note: "Spam after all" });
    expect(review.acknowledgment).toMatchObject({ reopened: true, note: "Spam after all" });
    const page = await admin.casePage(dismissed.caseId);
    expect(page.case.status).toBe("IN_REVIEW");
    const escalated = page.audit.find((e) => e.action === "REPORT_ESCALATED");
    expect(escalated).toMatchObject({ actor: { type: "user", id: admin.id }, data: { team: "senior_moderator", note: "Spam after all" } });
    expect(page.audit.map((e) => e.action)).toContain("QUALITY_REVIEW_ACKNOWLEDGED");
  });
});

describe("agreement figures", () => {
  test("a pair's κ as computed by hand; per queue and category; on the REST route", async () => {
    await sampling(100);
    const a = await newUser(server, "moderator", "pair-a");
    const b = await newUser(server, "moderator", "pair-b");
    // Four decisions of A, reviewed by B:       A                B
    //   1  SPAM_CONFIRMED   SPAM_CONFIRMED
    //   2  SPAM_CONFIRMED   SPAM_CONFIRMED
    //   3  DISMISSED        DISMISSED
    //   4  SPAM_CONFIRMED   DISMISSED
    // pₒ = 3/4 = 0.75; A: SPAM 3, DISMISSED 1; B: SPAM 2, DISMISSED 2
    // pₑ = (3·2 + 1·2) / 4² = 8/16 = 0.5;  κ = (0.75 − 0.5) / (1 − 0.5) = 0.5
    const plan: [("spam" | "dismiss"), ("spam" | "dismiss")][] = [["spam", "spam"], ["spam", "spam"], ["dismiss", "dismiss"], ["spam", "dismiss"]];
    for (const [mine, theirs] of plan) {
      const r = await fileReport(server);
      if (mine === "spam") await a.resolve(r.reportId, { resolutionCode: "SPAM_CONFIRMED" });
      else await a.dismiss(r.reportId, "other");
      const { task } = await b.trpc.quality.next.mutate({ orgSlug });
      expect(task?.caseId).toBe(r.caseId);
      await b.trpc.quality.submit.mutate({
        orgSlug,
        reviewId: task!.id,
        decision: theirs === "spam" ? { action: "resolve", code: "SPAM_CONFIRMED" } : { action: "dismiss", reason: "other" },
      });
    }
    const figures = await admin.trpc.quality.agreement.query({ orgSlug, days: 1 });
    const pair = figures.pairs.find((p) => p.moderators.some((m) => m.id === a.id));
    expect(pair).toBeDefined();
    expect(pair!.moderators.map((m) => m.id).sort()).toEqual([a.id, b.id].sort());
    expect(pair!.n).toBe(4);
    expect(pair!.agreement).toBeCloseTo(0.75, 12);
    expect(pair!.kappa).toBeCloseTo(0.5, 12);
    // Every review of this server so far is in the default queue, of category spam.
    const all = figures.overall.n;
    expect(all).toBe(7);
    expect(figures.queues).toEqual([expect.objectContaining({ queue: { id: defaultQueueId, name: expect.any(String) }, n: all })]);
    expect(figures.categories.find((c) => c.category === "spam")?.n).toBe(all);
    // 7 reviews: agreeing: the first dismissal, pair 1, 2, 3 (4); disagreeing: ban/warning, dismissed/spam, pair 4 (3).
    expect(figures.overall.agreement).toBeCloseTo(4 / 7, 12);

    const rest = await org.GET("/organizations/{orgSlug}/quality/agreement", { params: { path: { orgSlug }, query: { days: 1 } } });
    expect(rest.response.status).toBe(200);
    const { from: _f, to: _t, ...restFigures } = rest.data!;
    const { from: _f2, to: _t2, ...trpcFigures } = figures;
    expect(restFigures).toEqual(trpcFigures);
  });
});

describe("refusals", () => {
  test("a viewer cannot take or commit a review; an API key reviews nothing; another organization sees none of it", async () => {
    const viewer = await newUser(server, "viewer");
    await expectRefused(viewer.trpc.quality.next.mutate({ orgSlug }), "FORBIDDEN");
    await expectRefused(viewer.trpc.quality.submit.mutate({ orgSlug, reviewId: "x", decision: { action: "dismiss", reason: "other" } }), "FORBIDDEN");
    await expectRefused(withKey(server).trpc.quality.next.mutate({ orgSlug }), "FORBIDDEN");
    await expectRefused(first.trpc.quality.acknowledge.mutate({ orgSlug, reviewId: "x" }), "FORBIDDEN");
    await expectRefused(admin.trpc.quality.submit.mutate({ orgSlug, reviewId: "no-such-review", decision: { action: "dismiss", reason: "other" } }), "NOT_FOUND");

    const other = await server.initOrg(`quality-other-${Date.now()}`);
    const otherAdmin = await signIn(server, other.adminEmail, other.adminPassword);
    const { reviews } = await admin.trpc.quality.disagreements.query({ orgSlug, acknowledged: true });
    await expectRefused(otherAdmin.trpc.quality.acknowledge.mutate({ orgSlug: other.orgSlug, reviewId: reviews[0]!.id }), "NOT_FOUND");
    expect((await otherAdmin.trpc.quality.agreement.query({ orgSlug: other.orgSlug, days: 30 })).overall.n).toBe(0);
    // Another organization's slug: not found for this admin.
    await expectRefused(admin.trpc.quality.agreement.query({ orgSlug: other.orgSlug, days: 30 }), "NOT_FOUND");
  });
});

describe("undo", () => {
  test("a bulk decision undone in its window takes its pending second review with it", async () => {
    await sampling(100);
    const offered = async () => (await second.trpc.quality.mine.query({ orgSlug })).offered;
    const before = await offered();
    const r = await fileReport(server);
    const bulk = await first.bulkDecide([r.caseId], { action: "dismiss", reason: "other" });
    expect(bulk.decided).toHaveLength(1);
    expect(await offered()).toBe(before + 1);
    await first.trpc.cases.undoBulk.mutate({ bulkId: bulk.bulkId! });
    expect((await admin.casePage(r.caseId)).case.status).toBe("OPEN");
    expect(await offered()).toBe(before);
  });
});
