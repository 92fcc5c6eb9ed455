/**
 * Review mode's time-bound rules, in process with a clock that moves when told: a claim taken
 * in review mode lapses after REVIEW_CLAIM_MS (then the case is nobody's: views, counts, the
 * claim check and another moderator's review agree), an assignment does not; a skipped case is
 * held back from its moderator's session for SKIP_HOLD_MS.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { addUser } from "../../src/domain/accounts/users.ts";
import { caseFile } from "../../src/domain/dashboard/case-file.ts";
import { decideOnReport } from "../../src/domain/review/decisions.ts";
import type { DomainContext } from "../../src/domain/core/context.ts";
import { assignCase, assignedToMeCount } from "../../src/domain/review/assignment.ts";
import { queue } from "../../src/domain/dashboard/dashboard.ts";
import { nextCase, REVIEW_CLAIM_MS, SKIP_HOLD_MS, skipCase, stopReviewing } from "../../src/domain/review/review-mode.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;
let bob: DomainContext;
let bobId: string;
let carol: DomainContext;

beforeAll(async () => {
  world = await domainWorld();
  bobId = (await addUser(world.ctx, { email: "bob@example.com", passwordHash: "x", role: "moderator" })).id;
  bob = world.as({ type: "user", id: bobId });
  carol = world.as({ type: "user", id: (await addUser(world.ctx, { email: "carol@example.com", passwordHash: "x", role: "moderator" })).id });
});
afterAll(async () => {
  await world.close();
});

/** Decides every case still waiting, so each test starts from an empty queue. */
async function emptyQueue(): Promise<void> {
  for (const item of (await queue(world.ctx, { limit: 200, userId: world.ctx.actor.id })).items) {
    if (item.openReportId) await decideOnReport(world.ctx, { reportId: item.openReportId, decision: { action: "dismiss", reason: "other" }, takeOver: true });
  }
}

test("a review claim lapses: then the case is nobody's, and another moderator's review takes it; an assignment does not lapse", async () => {
  await emptyQueue();
  const r = await world.fileReport();
  const assigned = await world.fileReport();
  await assignCase(world.ctx, { caseId: assigned.caseId, assigneeId: bobId });

  const bobs = await nextCase(bob, { sessionId: "s-bob" });
  expect(bobs.case?.id).toBe(r.caseId);
  expect((await nextCase(carol, { sessionId: "s-carol" })).case).toBeNull();
  expect(await assignedToMeCount(bob)).toBe(2);

  world.clock.advance(REVIEW_CLAIM_MS + 1);
  // Lapsed: not bob's in his view or his count, unclaimed in the queue; the assignment holds.
  expect(await assignedToMeCount(bob)).toBe(1);
  expect((await queue(bob, { view: "mine", limit: 50, userId: bobId })).items.map((i) => i.id)).toEqual([assigned.caseId]);
  expect((await queue(bob, { view: "unassigned", limit: 50, userId: bobId })).items.map((i) => i.id)).toEqual([r.caseId]);
  // The case's own view says so too: nobody holds it (the column still names bob until the next claim).
  expect((await caseFile(bob, r.caseId)).case).toMatchObject({ assigneeId: null, assignedAt: null });
  expect((await caseFile(bob, assigned.caseId)).case.assigneeId).toBe(bobId);
  const carols = await nextCase(carol, { sessionId: "s-carol" });
  expect(carols.case?.id).toBe(r.caseId);
  const { events } = await world.audit(r.caseId);
  expect(events.filter((e) => e.action === "CASE_ASSIGNED").map((e) => [e.before, e.after])).toEqual([
    [{ assigneeId: null }, { assigneeId: bobId }],
    [{ assigneeId: bobId }, { assigneeId: carol.actor.id }],
  ]);
  // Bob's decision now needs a take-over from carol.
  const refused = await refusal(decideOnReport(bob, { reportId: r.reportId, decision: { action: "dismiss", reason: "other" } }));
  expect(refused.http).toBe(409);
  expect(refused.message).toContain("carol@example.com");
  await stopReviewing(carol, { caseId: r.caseId });
});

test("a skipped case is held back from its moderator's session for SKIP_HOLD_MS, then offered again", async () => {
  await emptyQueue();
  const a = await world.fileReport();
  const b = await world.fileReport();
  expect((await nextCase(bob, { sessionId: "s1" })).case?.id).toBe(a.caseId);
  expect((await skipCase(bob, { sessionId: "s1", caseId: a.caseId, reason: "Not my language" })).case?.id).toBe(b.caseId);
  await stopReviewing(bob, { caseId: b.caseId });
  // b was left (stopped), a skipped: in session s1, b is next, then nothing.
  expect((await nextCase(bob, { sessionId: "s1" })).case?.id).toBe(b.caseId);
  expect((await nextCase(bob, { sessionId: "s1", leaving: b.caseId })).case).toBeNull();
  world.clock.advance(SKIP_HOLD_MS + 1);
  expect((await nextCase(bob, { sessionId: "s1" })).case?.id).toBe(a.caseId);
  await stopReviewing(bob, { caseId: a.caseId });
});
