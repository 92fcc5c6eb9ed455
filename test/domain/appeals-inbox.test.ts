/**
 * The appeals inbox and what revoking an appealed action does, in process: pending appeals
 * oldest first with their action, identity and case; decided ones by decision with who and the
 * note; the case's and the identity's appeals; and a revocation that settles a pending appeal
 * (overturned, the report and case APPEALED → CLOSED through the workflow engine) instead of
 * leaving the case stuck in APPEALED.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appealsInbox, decideAppeal, fileAppeal, revokeActionSettlingAppeal, SETTLED_BY_REVOCATION } from "../../src/domain/enforcement/appeals.ts";
import { decideOnReport } from "../../src/domain/review/decisions.ts";
import { getActionView, requireAction, resolveReportWithAction, revokeEnforcementAction } from "../../src/domain/enforcement/enforcement.ts";
import type { Project } from "../../src/domain/accounts/projects.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;

beforeAll(async () => {
  world = await domainWorld();
});
afterAll(async () => {
  await world.close();
});

const actionOf = async (actionId: string) => getActionView(world.ctx, await requireAction(world.ctx, { actionId }));

describe("revoking an action whose appeal is pending", () => {
  test("settles the appeal as overturned by the revoker, with a note, and closes the report and its case through the workflow engine", async () => {
    const r = await world.reportIn("APPEALED");
    const actionId = r.actionId!;
    const appealId = r.appealId!;
    expect((await world.caseOf(r.caseId)).status).toBe("APPEALED");

    const out = await revokeActionSettlingAppeal(world.ctx, { actionId, projectId: world.project.id, reason: "issued by mistake" });

    expect(out.action).toMatchObject({ id: actionId, status: "revoked", revokeReason: "issued by mistake", revokedBy: world.ctx.actor });
    expect(out.appeal).toMatchObject({
      id: appealId,
      status: "overturned",
      decision: { by: world.ctx.actor, note: `${SETTLED_BY_REVOCATION}: issued by mistake` },
    });
    expect((await world.report(r.reportId)).status).toBe("CLOSED");
    const c = await world.caseOf(r.caseId);
    expect(c.status).toBe("CLOSED");
    expect(c.decision).toBe("overturn");

    const appealTrail = await world.audit(appealId);
    expect(appealTrail.actions).toEqual(["APPEAL_FILED", "APPEAL_OVERTURNED"]);
    expect(appealTrail.events[1]!.data).toMatchObject({ settledByRevocation: true, revokedActionIds: [actionId], reportMoved: true, actionId });
    expect((await world.audit(r.reportId)).actions).toContain("REPORT_OVERTURNED");
    expect((await world.audit(r.caseId)).events.filter((e) => e.action === "CASE_STATUS_CHANGED").at(-1)).toMatchObject({
      before: { status: "APPEALED" },
      after: { status: "CLOSED" },
      data: { action: "overturn" },
    });
    const actionTrail = await world.audit(actionId);
    expect(actionTrail.events.find((e) => e.action === "ENFORCEMENT_ACTION_REVOKED")?.data).toMatchObject({ reason: "issued by mistake", appealId });

    // Decided once and for all: no second decision, no second revocation.
    expect((await refusal(decideAppeal(world.ctx, { appealId, decision: "uphold" }))).http).toBe(409);
    expect((await refusal(revokeActionSettlingAppeal(world.ctx, { actionId }))).http).toBe(409);
  });

  test("without a reason the note says only that the revocation overturned it; the report's other actions stand", async () => {
    const r = await world.reportIn("APPEALED");
    const other = await world.warn(r.reportId);
    const out = await revokeActionSettlingAppeal(world.ctx, { actionId: r.actionId! });
    expect(out.appeal?.decision?.note).toBe(SETTLED_BY_REVOCATION);
    expect((await actionOf(other.actionId)).status).toBe("active");
    expect((await world.report(r.reportId)).status).toBe("CLOSED");
  });

  test("revoking another action of the report leaves the appeal pending and decidable", async () => {
    const r = await world.reportIn("APPEALED");
    const other = await world.warn(r.reportId);
    const out = await revokeActionSettlingAppeal(world.ctx, { actionId: other.actionId });
    expect(out.appeal).toBeNull();
    expect((await world.report(r.reportId)).status).toBe("APPEALED");
    const decided = await decideAppeal(world.ctx, { appealId: r.appealId!, decision: "overturn", note: "fair point" });
    expect(decided.appeal.status).toBe("overturned");
    expect(decided.revoked.map((a) => a.id)).toEqual([r.actionId!]);
    expect((await world.report(r.reportId)).status).toBe("CLOSED");
  });

  test("the bare revocation refuses an action with a pending appeal (409), changing nothing", async () => {
    const r = await world.reportIn("APPEALED");
    const error = await refusal(revokeEnforcementAction(world.ctx, { actionId: r.actionId! }));
    expect(error.http).toBe(409);
    expect(error.message).toContain("appeal of this action is pending");
    expect((await actionOf(r.actionId!)).status).toBe("active");
    expect((await world.report(r.reportId)).status).toBe("APPEALED");
  });

  test("an action whose appeal was decided is revoked plainly: the appeal keeps its outcome", async () => {
    const r = await world.reportIn("CLOSED");
    const out = await revokeActionSettlingAppeal(world.ctx, { actionId: r.actionId!, reason: "changed our mind" });
    expect(out.appeal).toBeNull();
    expect(out.action.status).toBe("revoked");
    const inbox = await appealsInbox(world.ctx, { caseId: r.caseId, limit: 10 });
    expect(inbox.items.map((i) => i.appeal.status)).toEqual(["upheld"]);
    expect((await world.report(r.reportId)).status).toBe("CLOSED");
  });
});

describe("an appealed report escalated back into review (the specification: escalate moves every status but RESOLVED to IN_REVIEW)", () => {
  test("the appeal stays pending in the inbox and on the case page; deciding it closes the report, its APPEALED fellows and the case", async () => {
    // Two reports about one post, resolved together with a warning and appealed together.
    const post = { contentType: "post", contentExternalId: `fellows-${Date.now()}` };
    const first = await world.fileReport({ target: post });
    const second = await world.fileReport({ target: post });
    expect(second.caseId).toBe(first.caseId);
    const action = await resolveReportWithAction(world.ctx, { reportId: first.reportId, resolution: { code: "ACCOUNT_LEVEL_ACTION" }, action: { kind: "warning" } });
    const appeal = await fileAppeal(world.platform, { projectId: world.project.id, actionId: action.id, text: "Not me" });
    expect((await world.report(second.reportId)).status).toBe("APPEALED");

    await decideOnReport(world.platform, { reportId: first.reportId, decision: { action: "escalate", team: "legal" } });
    expect((await world.report(first.reportId)).status).toBe("IN_REVIEW");
    expect((await world.caseOf(first.caseId)).status).toBe("IN_REVIEW");
    const pending = await appealsInbox(world.ctx, { status: "pending", limit: 100 });
    expect(pending.items.find((i) => i.appeal.id === appeal.id)?.case?.status).toBe("IN_REVIEW");
    expect((await appealsInbox(world.ctx, { caseId: first.caseId, limit: 10 })).items.map((i) => i.appeal.id)).toEqual([appeal.id]);

    await decideAppeal(world.ctx, { appealId: appeal.id, decision: "overturn", note: "fair" });
    expect((await world.report(first.reportId)).status).toBe("CLOSED");
    expect((await world.report(second.reportId)).status).toBe("CLOSED");
    expect((await world.caseOf(first.caseId)).status).toBe("CLOSED");
    expect((await actionOf(action.id)).status).toBe("revoked");
  });

  test("re-decided while its appeal waits: the decision on the appeal still closes the reports left APPEALED", async () => {
    const post = { contentType: "post", contentExternalId: `redecided-${Date.now()}` };
    const first = await world.fileReport({ target: post });
    const second = await world.fileReport({ target: post });
    const action = await resolveReportWithAction(world.ctx, { reportId: first.reportId, resolution: { code: "ACCOUNT_LEVEL_ACTION" }, action: { kind: "warning" } });
    const appeal = await fileAppeal(world.platform, { projectId: world.project.id, actionId: action.id, text: "Not me" });
    await decideOnReport(world.ctx, { reportId: first.reportId, decision: { action: "escalate", team: "legal" } });
    await decideOnReport(world.ctx, { reportId: first.reportId, decision: { action: "resolve", code: "HARASSMENT_CONFIRMED" } });
    expect((await world.report(first.reportId)).status).toBe("RESOLVED");

    const { appeal: decided } = await decideAppeal(world.ctx, { appealId: appeal.id, decision: "uphold" });
    expect(decided.status).toBe("upheld");
    // The re-decided report keeps its new decision; the one still waiting on the appeal is closed by it.
    expect((await world.report(first.reportId)).status).toBe("RESOLVED");
    expect((await world.report(second.reportId)).status).toBe("CLOSED");
    expect((await world.caseOf(first.caseId)).status).toBe("RESOLVED");
  });

  test("escalated into the case open for its post by then: the appeal shows on that case too, and its decision closes what it decides, not the new reports", async () => {
    const post = { contentType: "post", contentExternalId: `rehomed-${Date.now()}` };
    const r = await world.reportIn("APPEALED", { target: post });
    // The post is reported again while the appeal waits: the APPEALED case is not open, so a new case opens.
    const later = await world.fileReport({ target: post });
    expect(later.caseId).not.toBe(r.caseId);

    await decideOnReport(world.ctx, { reportId: r.reportId, decision: { action: "escalate", team: "safety" } });
    const moved = await world.report(r.reportId);
    expect(moved).toMatchObject({ status: "IN_REVIEW", caseId: later.caseId });
    expect((await appealsInbox(world.ctx, { caseId: later.caseId, limit: 10 })).items.map((i) => [i.appeal.id, i.appeal.status])).toEqual([[r.appealId!, "pending"]]);
    expect((await appealsInbox(world.ctx, { caseId: r.caseId, limit: 10 })).items.map((i) => i.appeal.id)).toEqual([r.appealId!]);

    await decideAppeal(world.ctx, { appealId: r.appealId!, decision: "uphold" });
    expect((await world.report(r.reportId)).status).toBe("CLOSED");
    // The new report was never decided: its case stays in review.
    expect((await world.report(later.reportId)).status).toBe("IN_REVIEW");
    expect((await world.caseOf(later.caseId)).status).toBe("IN_REVIEW");
    // The case the appeal was filed from, left without reports, is decided with it.
    expect((await world.caseOf(r.caseId)).status).toBe("CLOSED");
  });
});

describe("the inbox", () => {
  let project: Project;
  let filed: Awaited<ReturnType<DomainWorld["reportIn"]>>[];

  beforeAll(async () => {
    project = await world.addProject({ name: "Inbox" });
    filed = [];
    for (let i = 0; i < 3; i++) {
      filed.push(await world.reportIn("APPEALED", { project }));
      world.clock.advance(60_000);
    }
  });

  test("pending appeals come oldest first with the user's text, the action, whom it hit and the case; pages never skip or repeat", async () => {
    const first = await appealsInbox(world.ctx, { status: "pending", projectId: project.id, limit: 2 });
    expect(first.counts).toEqual({ pending: 3, decided: 0 });
    expect(first.nextCursor).toBeString();
    const second = await appealsInbox(world.ctx, { status: "pending", projectId: project.id, limit: 2, cursor: first.nextCursor! });
    expect(second.nextCursor).toBeNull();
    const all = [...first.items, ...second.items];
    expect(all.map((i) => i.appeal.id)).toEqual(filed.map((f) => f.appealId!));

    const item = all[0]!;
    const report = await world.report(filed[0]!.reportId);
    expect(item.appeal).toMatchObject({ text: "It was not me", status: "pending", decision: null, projectId: project.id });
    expect(item.action).toMatchObject({ id: filed[0]!.actionId!, kind: "warning", status: "active", reportId: filed[0]!.reportId });
    expect(item.identity).toMatchObject({ id: report.subjectIdentityId!, type: "user" });
    expect(item.identity.displayName).toBe(item.action.identity.externalId);
    expect(item.case).toEqual({ id: filed[0]!.caseId, status: "APPEALED", contentType: "post", contentExternalId: report.contentExternalId });
    expect(item.decidedByEmail).toBeNull();
  });

  test("decided appeals come by their decision, newest first, with the outcome, who decided and the note", async () => {
    await decideAppeal(world.ctx, { appealId: filed[0]!.appealId!, decision: "uphold", note: "The warning was deserved" });
    world.clock.advance(1000);
    await decideAppeal(world.ctx, { appealId: filed[1]!.appealId!, decision: "overturn", note: "Sarcasm, not abuse" });

    const decided = await appealsInbox(world.ctx, { status: "decided", projectId: project.id, limit: 10 });
    expect(decided.counts).toEqual({ pending: 1, decided: 2 });
    expect(decided.items.map((i) => [i.appeal.id, i.appeal.status, i.appeal.decision?.note])).toEqual([
      [filed[1]!.appealId!, "overturned", "Sarcasm, not abuse"],
      [filed[0]!.appealId!, "upheld", "The warning was deserved"],
    ]);
    expect(decided.items.map((i) => i.decidedByEmail)).toEqual([world.init.adminEmail, world.init.adminEmail]);
    expect(decided.items[0]!.action.status).toBe("revoked");
    expect(decided.items[0]!.case?.status).toBe("CLOSED");

    const upheld = await appealsInbox(world.ctx, { status: "upheld", projectId: project.id, limit: 10 });
    expect(upheld.items.map((i) => i.appeal.id)).toEqual([filed[0]!.appealId!]);
    const pending = await appealsInbox(world.ctx, { status: "pending", projectId: project.id, limit: 10 });
    expect(pending.items.map((i) => i.appeal.id)).toEqual([filed[2]!.appealId!]);
  });

  test("a case's appeals and an identity's appeals", async () => {
    const ofCase = await appealsInbox(world.ctx, { caseId: filed[2]!.caseId, limit: 10 });
    expect(ofCase.items.map((i) => i.appeal.id)).toEqual([filed[2]!.appealId!]);
    const identityId = (await world.report(filed[1]!.reportId)).subjectIdentityId!;
    const ofIdentity = await appealsInbox(world.ctx, { identityId, limit: 10 });
    expect(ofIdentity.items.map((i) => [i.appeal.id, i.appeal.status])).toEqual([[filed[1]!.appealId!, "overturned"]]);
  });

  test("another organization sees none of them; a cursor that was not handed out is a 400", async () => {
    const other = await world.secondOrganization({ name: "Elsewhere" });
    const theirs = await appealsInbox(other.ctx, { limit: 100 });
    expect(theirs.items).toEqual([]);
    expect(theirs.counts).toEqual({ pending: 0, decided: 0 });
    expect((await appealsInbox(other.ctx, { caseId: filed[2]!.caseId, limit: 10 })).items).toEqual([]);
    expect((await refusal(appealsInbox(world.ctx, { status: "pending", cursor: "not-a-cursor", limit: 10 }))).http).toBe(400);
  });
});
