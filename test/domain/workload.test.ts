/**
 * What a lead sees and does (issue 45): the workload arithmetic (src/domain/team/workload.ts)
 * against figures worked out by hand; the workload read from a world's decisions, holds and
 * second reviews (team-workload.ts) with a fake clock, and only of the caller's queues; moving a
 * moderator's held cases in one step (reassignment.ts), cases of a queue the receiver may not
 * work staying; and the strike preview (strike-preview.ts) answering what the decision then adds.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, disableUser } from "../../src/domain/accounts/users.ts";
import { decideOnReport } from "../../src/domain/review/decisions.ts";
import { strikePreview } from "../../src/domain/enforcement/strike-preview.ts";
import { identityStrikes, setStrikePolicy } from "../../src/domain/strikes/strikes.ts";
import { assignCase } from "../../src/domain/review/assignment.ts";
import { decideInBulk, undoBulkDecision } from "../../src/domain/review/bulk.ts";
import { nextQualityTask, submitSecondReview } from "../../src/domain/quality/quality-review.ts";
import { createQueue, moveCaseToQueue } from "../../src/domain/review/queues.ts";
import { planReassignment, reassignHeldCases } from "../../src/domain/review/reassignment.ts";
import { teamWorkload } from "../../src/domain/team/team-workload.ts";
import { decisionsOf, heldSince, median, workloadFigures, type HolderChange, type StatusChange } from "../../src/domain/team/workload.ts";
import { strikePolicySchema, type StrikePolicyInput } from "../../src/domain/views/strikes.ts";
import type { Role } from "../../src/domain/views/user.ts";
import { domainWorld, fakeClock, refusal, type DomainWorld } from "../helpers/builders.ts";

const MIN = 60_000;
const DAY = 86_400_000;

describe("the arithmetic (workload.ts)", () => {
  const change = (caseId: string, at: number, userId: string | null, action: string): StatusChange => ({ caseId, id: `e-${String(at).padStart(6, "0")}`, at, userId, action });
  const holder = (caseId: string, at: number, holderId: string | null, byDecision = false): HolderChange => ({ caseId, id: `h-${String(at).padStart(6, "0")}`, at, holderId, byDecision });

  test("a decision is a user's resolve or dismiss; an undo takes back the decision before it; rules and other moves are none", () => {
    const decisions = decisionsOf([
      change("A", 10, "u1", "resolve"),
      change("B", 20, "u2", "dismiss"),
      change("B", 30, "u2", "undo"), // B's dismissal taken back
      change("B", 40, "u1", "resolve"), // …and decided anew: counts
      change("C", 50, null, "dismiss"), // a rule's or the platform's
      change("D", 60, "u1", "triage"),
      change("D", 70, "u1", "escalate"),
      change("E", 80, "u2", "dismiss"),
      change("E", 90, "u2", "escalate"), // reopened by an escalation: the dismissal stands
      change("E", 95, "u2", "undo"), // an undo after another move takes nothing back
    ]);
    expect(decisions).toEqual([
      { caseId: "A", at: 10, userId: "u1" },
      { caseId: "B", at: 40, userId: "u1" },
      { caseId: "E", at: 80, userId: "u2" },
    ]);
    // Order is by time, whatever order the rows come in.
    expect(decisionsOf([change("B", 30, "u2", "undo"), change("B", 20, "u2", "dismiss")])).toEqual([]);
  });

  test("time to decision starts when the case became the decider's: the last hold of theirs before it, none when it was not theirs", () => {
    const d = { caseId: "A", at: 100, userId: "u1" };
    expect(heldSince(d, [holder("A", 10, "u1")])).toBe(10);
    // Assigned, released, claimed again: from the last claim.
    expect(heldSince(d, [holder("A", 10, "u1"), holder("A", 20, null), holder("A", 40, "u1")])).toBe(40);
    // Given to someone else after: not theirs when they decided (a take-over by the decision).
    expect(heldSince(d, [holder("A", 10, "u1"), holder("A", 50, "u2"), holder("A", 100, "u1", true)])).toBeNull();
    expect(heldSince(d, [holder("A", 10, "u1"), holder("A", 30, null)])).toBeNull();
    // A hold after the decision, or of another case, is not this decision's.
    expect(heldSince(d, [holder("A", 150, "u1"), holder("B", 10, "u1")])).toBeNull();
    expect(heldSince(d, [])).toBeNull();
  });

  test("the median: the middle value, the mean of the middle two, none for nothing", () => {
    expect(median([])).toBeNull();
    expect(median([30, 10, 20])).toBe(20);
    expect(median([40, 10, 30, 20])).toBe(25);
  });

  test("each moderator's figures: held and since when, decisions, the median over timed ones, agreement and κ", () => {
    const figures = workloadFigures({
      listed: ["u1", "u2", "idle"],
      held: [{ holderId: "u2", since: 500 }, { holderId: "u2", since: 300 }, { holderId: "gone", since: 700 }],
      decisions: [
        { caseId: "A", at: 1_000, userId: "u1", heldSince: 400 }, // 600
        { caseId: "B", at: 2_000, userId: "u1", heldSince: 1_800 }, // 200
        { caseId: "C", at: 3_000, userId: "u1", heldSince: null }, // not timed
        { caseId: "D", at: 4_000, userId: "u1", heldSince: 3_000 }, // 1000
      ],
      // u1's decisions against their second reviews: S/S, D/S, H/H.
      // pₒ = 2/3; u1 gave S, D, H one each (1/3); the reviewers S twice, H once
      // pₑ = 1/3·2/3 (S) + 1/3·0 (D) + 1/3·1/3 (H) = 3/9 = 1/3; κ = (2/3 − 1/3) / (1 − 1/3) = 1/2
      reviews: [
        { firstById: "u1", first: "S", second: "S" },
        { firstById: "u1", first: "D", second: "S" },
        { firstById: "u1", first: "H", second: "H" },
        { firstById: "u2", first: "S", second: "S" }, // every label alike: κ undefined
      ],
    });
    const of = (id: string) => figures.find((f) => f.userId === id)!;
    expect(of("u1")).toEqual({
      userId: "u1", held: 0, heldSince: null, decisions: 4,
      timeToDecision: { medianMs: 600, n: 3 },
      agreement: { n: 3, agreed: 2, share: 2 / 3, kappa: expect.closeTo(0.5, 12) as unknown as number },
    });
    expect(of("u2")).toMatchObject({ held: 2, heldSince: 300, decisions: 0, timeToDecision: { medianMs: null, n: 0 }, agreement: { n: 1, agreed: 1, share: 1, kappa: null } });
    expect(of("idle")).toMatchObject({ held: 0, decisions: 0, agreement: { n: 0, share: null, kappa: null } });
    // Not listed, but holding a case: shown.
    expect(of("gone")).toMatchObject({ held: 1, heldSince: 700 });
  });
});

describe("in a world (both engines)", () => {
  let world: DomainWorld;
  const clock = fakeClock();
  let n = 0;
  beforeAll(async () => {
    world = await domainWorld({ clock });
  });
  afterAll(async () => {
    await world.close();
  });
  const user = async (role: Role) => {
    const u = await createUser(world.ctx, { email: `${role}-${++n}@example.com`, passwordHash: "unused", role });
    return { id: u.id, ctx: world.as({ type: "user", id: u.id }) };
  };

  test("the workload: decisions in the period, undone ones left out, time from the hold, agreement; a lead of other queues sees none of it", async () => {
    const m1 = await user("moderator");
    const m2 = await user("moderator");
    const outsider = await user("moderator");
    // The team's queue, every decision sampled for a second review; the outsider may not work it.
    const queue = await createQueue(world.ctx, { name: `Team ${++n}`, access: { users: [m1.id, m2.id], roles: [] }, samplePercent: 100 });
    const file = async (reasons = ["spam"]) => {
      const f = await world.fileReport({ reasons });
      await moveCaseToQueue(world.ctx, { caseId: f.caseId, queueId: queue.id });
      return f;
    };
    const resolve = (ctx: typeof m1.ctx, reportId: string, code: "SPAM_CONFIRMED" | "HARASSMENT_CONFIRMED", takeOver = false) =>
      decideOnReport(ctx, { reportId, decision: { action: "resolve", code }, takeOver });

    // Eight days ago: a decision outside the week.
    const old = await file();
    await resolve(m1.ctx, old.reportId, "SPAM_CONFIRMED");
    clock.advance(8 * DAY);

    const [a, b, c, d, e, f, g] = [await file(), await file(), await file(), await file(), await file(), await file(), await file()];
    // A: m1 claims it, decides 10 minutes later.
    await assignCase(m1.ctx, { caseId: a.caseId, assigneeId: m1.id });
    clock.advance(10 * MIN);
    await resolve(m1.ctx, a.reportId, "SPAM_CONFIRMED");
    // B: the lead assigns it to m1, who dismisses it 30 minutes later.
    await assignCase(world.ctx, { caseId: b.caseId, assigneeId: m1.id });
    clock.advance(30 * MIN);
    await decideOnReport(m1.ctx, { reportId: b.reportId, decision: { action: "dismiss", reason: "other" } });
    // C: decided without a hold (not timed).
    await resolve(m1.ctx, c.reportId, "HARASSMENT_CONFIRMED");
    // D: m2 holds it, m1 takes it over with the decision (not timed: it was not m1's before).
    await assignCase(m2.ctx, { caseId: d.caseId, assigneeId: m2.id });
    clock.advance(5 * MIN);
    await resolve(m1.ctx, d.reportId, "SPAM_CONFIRMED", true);
    // E and F: held by m2 (E since 45 minutes ago, F since 40).
    const eSince = clock.now();
    await assignCase(world.ctx, { caseId: e.caseId, assigneeId: m2.id });
    clock.advance(5 * MIN);
    await assignCase(m2.ctx, { caseId: f.caseId, assigneeId: m2.id });
    // G: m2's bulk dismissal, undone.
    const bulk = await decideInBulk(m2.ctx, { caseIds: [g.caseId], decision: { action: "dismiss", reason: "other" }, othersClaims: "skip" });
    await undoBulkDecision(m2.ctx, { bulkId: bulk.bulkId! });
    // m2 reviews m1's first four decisions blind, oldest first (the old one's review is committed
    // this week): agrees on the old one and A (spam) and on C (harassment), not on B (dismissed).
    for (const decision of [
      { action: "resolve", code: "SPAM_CONFIRMED" },
      { action: "resolve", code: "SPAM_CONFIRMED" },
      { action: "resolve", code: "SPAM_CONFIRMED" },
      { action: "resolve", code: "HARASSMENT_CONFIRMED" },
    ] as const) {
      const task = (await nextQualityTask(m2.ctx))!;
      await submitSecondReview(m2.ctx, { reviewId: task.id, decision });
    }
    clock.advance(MIN);

    const now = clock.now();
    const week = await teamWorkload(world.ctx, { from: now - 7 * DAY, to: now });
    const of = (w: typeof week, id: string) => w.moderators.find((m) => m.user.id === id)!;
    expect(of(week, m1.id)).toEqual({
      user: { id: m1.id, email: expect.stringMatching(/^moderator-/) as unknown as string, role: "moderator", disabled: false },
      held: 0, heldSince: null, decisions: 4,
      // A: 10 min, B: 30 min; C and D not timed.
      timeToDecision: { medianMs: 20 * MIN, n: 2 },
      // S/S, S/S, D/S, H/H: pₒ = 3/4; m1 gave S 1/2, D 1/4, H 1/4, m2 S 3/4, H 1/4
      // pₑ = 1/2·3/4 + 1/4·0 + 1/4·1/4 = 7/16; κ = (3/4 − 7/16) / (1 − 7/16) = (5/16) / (9/16) = 5/9
      agreement: { n: 4, agreed: 3, share: 3 / 4, kappa: expect.closeTo(5 / 9, 12) as unknown as number },
    });
    expect(of(week, m2.id)).toMatchObject({ held: 2, heldSince: new Date(eSince).toISOString(), decisions: 0, agreement: { n: 0 } });
    expect(week.moderators.map((m) => m.user.email)).toEqual([...week.moderators.map((m) => m.user.email)].sort((x, y) => x.localeCompare(y)));
    // Thirty days: the old decision too.
    expect(of(await teamWorkload(world.ctx, { from: now - 30 * DAY, to: now }), m1.id).decisions).toBe(5);

    // A lead held to other queues counts none of the team queue's work (listed, with nothing).
    const theirs = await teamWorkload(outsider.ctx, { from: now - 30 * DAY, to: now });
    expect(of(theirs, m1.id)).toMatchObject({ held: 0, decisions: 0, timeToDecision: { n: 0 }, agreement: { n: 0 } });
    expect(of(theirs, m2.id)).toMatchObject({ held: 0, decisions: 0 });

    // A moderator who left (disabled) still shows while they hold cases.
    await disableUser(world.ctx, { userId: m2.id });
    expect(of(await teamWorkload(world.ctx, { from: now - 7 * DAY, to: now }), m2.id)).toMatchObject({ user: { disabled: true }, held: 2 });
  });

  test("reassigning a moderator's held cases: those the receiver may work move, audited one by one; the rest stay, named; back to the queue", async () => {
    const leaving = await user("moderator");
    const receiver = await user("moderator");
    const special = await createQueue(world.ctx, { name: `Special ${++n}`, access: { users: [leaving.id], roles: [] } });
    const held = [await world.fileReport(), await world.fileReport(), await world.fileReport()];
    await moveCaseToQueue(world.ctx, { caseId: held[2]!.caseId, queueId: special.id });
    for (const h of held) {
      await assignCase(world.ctx, { caseId: h.caseId, assigneeId: leaving.id });
      clock.advance(MIN);
    }
    const [one, two, three] = held.map((h) => h.caseId) as [string, string, string];

    const plan = await planReassignment(world.ctx, { fromUserId: leaving.id, toUserId: receiver.id });
    expect(plan).toMatchObject({ from: { id: leaving.id }, to: { id: receiver.id }, moved: [one, two], refused: [{ caseId: three, reason: "queue" }], left: 0 });
    // The receiver, as a lead of the default queue only, sees only what it holds.
    expect((await planReassignment(receiver.ctx, { fromUserId: leaving.id, toUserId: null })).moved).toEqual([one, two]);
    // Planning changed nothing.
    expect((await world.caseOf(one)).assigneeId).toBe(leaving.id);

    const done = await reassignHeldCases(world.ctx, { fromUserId: leaving.id, toUserId: receiver.id });
    expect({ moved: done.moved, refused: done.refused }).toEqual({ moved: [one, two], refused: [{ caseId: three, reason: "queue" }] });
    expect([(await world.caseOf(one)).assigneeId, (await world.caseOf(two)).assigneeId, (await world.caseOf(three)).assigneeId]).toEqual([receiver.id, receiver.id, leaving.id]);
    const lastAssigned = async (caseId: string) => (await world.audit(caseId)).events.filter((e) => e.action === "CASE_ASSIGNED").at(-1)!;
    const [assigned, other] = [await lastAssigned(one), await lastAssigned(two)];
    const step = (assigned.data as { reassignmentId?: string }).reassignmentId;
    expect(typeof step).toBe("string");
    expect(assigned).toMatchObject({ before: { assigneeId: leaving.id }, after: { assigneeId: receiver.id }, data: { reassignmentId: step } });
    expect(other).toMatchObject({ before: { assigneeId: leaving.id }, after: { assigneeId: receiver.id }, data: { reassignmentId: step } });

    // The rest back to the queue: released, CASE_UNASSIGNED.
    const back = await reassignHeldCases(world.ctx, { fromUserId: leaving.id, toUserId: null });
    expect(back).toMatchObject({ to: null, moved: [three], refused: [] });
    expect((await world.caseOf(three)).assigneeId).toBeNull();
    expect((await world.audit(three)).events.at(-1)).toMatchObject({ action: "CASE_UNASSIGNED", before: { assigneeId: leaving.id }, after: { assigneeId: null } });
    // Nothing left: an empty step.
    expect(await reassignHeldCases(world.ctx, { fromUserId: leaving.id, toUserId: receiver.id })).toMatchObject({ moved: [], refused: [], left: 0 });

    // Who may receive: a viewer, a disabled user, the same user are 400s; an unknown or another organization's user 404.
    const viewer = await user("viewer");
    const gone = await user("moderator");
    await disableUser(world.ctx, { userId: gone.id });
    const refused = async (toUserId: string, fromUserId = receiver.id) => {
      const r = await refusal(reassignHeldCases(world.ctx, { fromUserId, toUserId }));
      return `${r.http} ${r.message}`;
    };
    expect(await refused(viewer.id)).toBe("400 toUserId: a viewer cannot work cases (moderators and admins can)");
    expect(await refused(gone.id)).toBe("400 toUserId: this user is disabled");
    expect(await refused(receiver.id)).toBe("400 toUserId: these cases are held by this user already");
    expect(await refused("no-such-user")).toBe("404 User not found");
    const elsewhere = await world.secondOrganization({ name: `Elsewhere ${++n}` });
    const stranger = await createUser(elsewhere.ctx, { email: `stranger-${++n}@example.com`, passwordHash: "unused", role: "moderator" });
    expect(await refused(stranger.id)).toBe("404 User not found");
    expect(await refused(receiver.id, stranger.id)).toBe("404 User not found");
    expect((await world.caseOf(one)).assigneeId).toBe(receiver.id);
  });

  test("the strike preview answers what the resolution then adds: its count, the total in the window, the step reached; or why none", async () => {
    const setPolicy = (p: StrikePolicyInput) => setStrikePolicy(world.ctx, { projectId: world.project.id, policy: strikePolicySchema.parse(p) });
    const subject = { type: "user", externalId: `struck-${++n}` };
    const strikesOfSubject = () => identityStrikes(world.ctx, { projectId: world.project.id, ...subject });

    const first = await world.fileReport({ subject });
    expect(await strikePreview(world.ctx, { caseId: first.caseId, code: "SPAM_CONFIRMED" })).toMatchObject({ adds: false, noStrike: "policy_off", count: 0, step: null, nextStep: null });
    await setPolicy({
      enabled: true, windowDays: 30, strikes: { default: 1, byReason: { hate_speech: 2 } },
      ladder: [{ threshold: 1, kind: "warning" }, { threshold: 3, kind: "suspension", durationSeconds: 86_400 }, { threshold: 5, kind: "ban" }],
    });
    expect(await strikePreview(world.ctx, { caseId: first.caseId, code: "NO_VIOLATION" })).toMatchObject({ adds: false, noStrike: "code_not_counted", before: 0, total: 0 });
    const one = await strikePreview(world.ctx, { caseId: first.caseId, code: "SPAM_CONFIRMED" });
    expect(one).toEqual({
      adds: true, noStrike: null, count: 1, before: 0, total: 1, windowDays: 30,
      step: { number: 1, threshold: 1, kind: "warning" }, nextStep: { number: 2, threshold: 3, kind: "suspension", durationSeconds: 86_400 },
    });
    await decideOnReport(world.ctx, { reportId: first.reportId, decision: { action: "resolve", code: "SPAM_CONFIRMED" } });
    expect((await strikesOfSubject()).strikes[0]).toMatchObject({ count: 1, step: { threshold: 1, kind: "warning" } });
    // Decided: nothing open to decide.
    expect(await strikePreview(world.ctx, { caseId: first.caseId, code: "SPAM_CONFIRMED" })).toMatchObject({ adds: false, noStrike: "nothing_open", before: 1, total: 1 });

    // Hate speech weighs 2: from 1 to 3, the suspension's step (the second).
    const second = await world.fileReport({ subject, reasons: ["hate_speech"] });
    const preview = await strikePreview(world.ctx, { caseId: second.caseId, code: "HATE_SPEECH_CONFIRMED" });
    expect(preview).toMatchObject({ adds: true, count: 2, before: 1, total: 3, step: { number: 2, threshold: 3, kind: "suspension", durationSeconds: 86_400 }, nextStep: { number: 3, threshold: 5, kind: "ban" } });
    await decideOnReport(world.ctx, { reportId: second.reportId, decision: { action: "resolve", code: "HATE_SPEECH_CONFIRMED" } });
    const after = await strikesOfSubject();
    expect(after.total).toBe(preview.total);
    expect(after.strikes[0]).toMatchObject({ count: preview.count, step: { threshold: preview.step!.threshold, kind: preview.step!.kind } });

    // No account to strike; a weight of 0.
    const noSubject = await world.fileReport({ subject: null });
    expect(await strikePreview(world.ctx, { caseId: noSubject.caseId, code: "SPAM_CONFIRMED" })).toMatchObject({ adds: false, noStrike: "no_subject", before: 0 });
    await setPolicy({ enabled: true, windowDays: 30, strikes: { default: 0 }, ladder: [{ threshold: 5, kind: "ban" }] });
    const third = await world.fileReport({ subject });
    expect(await strikePreview(world.ctx, { caseId: third.caseId, code: "SPAM_CONFIRMED" })).toMatchObject({ adds: false, noStrike: "weighs_nothing", before: 3, total: 3, nextStep: { number: 1, threshold: 5 } });

    // Queue access: a moderator who may not work the case's queue gets a 404.
    const locked = await createQueue(world.ctx, { name: `Locked ${++n}`, access: { users: [], roles: ["admin"] } });
    await moveCaseToQueue(world.ctx, { caseId: third.caseId, queueId: locked.id });
    const outsider = await user("moderator");
    expect((await refusal(strikePreview(outsider.ctx, { caseId: third.caseId, code: "SPAM_CONFIRMED" }))).http).toBe(404);
    await setPolicy({});
  });
});
