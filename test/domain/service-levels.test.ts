/**
 * Service levels (src/domain/service-levels/service-levels.ts): a breach is an open case older than its
 * queue's target (first review: unclaimed and undecided; decision: undecided) or a pending
 * appeal older than its project's target; the pass records each once (also with two instances
 * passing together), announces it only to endpoints that list `queue.sla_breached`, and the
 * figures leave out the queues a moderator may not work. On a fake clock.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { slaBreaches, webhookDeliveries } from "../../src/db/schema.ts";
import { decideOnReport } from "../../src/domain/review/decisions.ts";
import { assignCase } from "../../src/domain/review/assignment.ts";
import { createEndpoint } from "../../src/domain/webhooks/endpoints.ts";
import { createUser } from "../../src/domain/accounts/users.ts";
import { decideAppeal } from "../../src/domain/enforcement/appeals.ts";
import { getDsaSettings, setDsaSettings } from "../../src/domain/enforcement/statements.ts";
import { transparencyReport } from "../../src/domain/dsa/transparency-report.ts";
import { createQueue, moveCaseToQueue } from "../../src/domain/review/queues.ts";
import { recordDueBreaches, serviceLevels } from "../../src/domain/service-levels/service-levels.ts";
import { iso } from "../../src/domain/core/clock.ts";
import { domainWorld, type DomainWorld } from "../helpers/builders.ts";

const MINUTE = 60_000;
let world: DomainWorld;
beforeAll(async () => {
  world = await domainWorld();
});
afterAll(() => world.close());

const pass = (store = world.store) => recordDueBreaches({ store, db: store.db, clock: world.clock });
const breachesOf = async (subjectId: string) =>
  (await world.store.db.select().from(slaBreaches).where(eq(slaBreaches.subjectId, subjectId))).map((b) => b.target).sort();

describe("service levels", () => {
  test("a case past its queue's targets is recorded once per target; claimed or decided in time, it is not; two instances record it once", async () => {
    const queue = await createQueue(world.ctx, { name: "Timed", firstReviewTargetMinutes: 30, decisionTargetMinutes: 120 });
    expect(queue).toMatchObject({ firstReviewTargetMinutes: 30, decisionTargetMinutes: 120 });
    const start = world.clock.now();
    const filed = [await world.fileReport(), await world.fileReport(), await world.fileReport(), await world.fileReport()];
    for (const f of filed) await moveCaseToQueue(world.ctx, { caseId: f.caseId, queueId: queue.id });
    const [claimed, decided, late, other] = filed as [(typeof filed)[0], (typeof filed)[0], (typeof filed)[0], (typeof filed)[0]];
    world.clock.advance(10 * MINUTE);
    await assignCase(world.ctx, { caseId: claimed.caseId, assigneeId: world.ctx.actor.id });
    await decideOnReport(world.ctx, { reportId: decided.reportId, decision: { action: "dismiss", reason: "other" } });

    // 29 minutes: nothing due yet.
    world.clock.advance(19 * MINUTE);
    expect(await pass()).toBe(0);
    // 31 minutes: the two unclaimed, undecided cases passed their first-review target.
    world.clock.advance(2 * MINUTE);
    const levels = await serviceLevels(world.ctx, { days: 7 });
    const timed = levels.queues.find((q) => q.queueId === queue.id)!;
    expect(timed).toMatchObject({ openCases: 3, overdue: { firstReview: 2, decision: 0 }, breaches: { firstReview: 0, decision: 0 } });
    expect(timed.oldestCase?.openedAt).toBe(iso(start));

    // Two instances pass at once: each breach is written (and announced) once.
    const [a, b] = await Promise.all([pass(), pass(world.anotherInstance())]);
    expect(a + b).toBe(2);
    expect(await pass()).toBe(0);
    expect(await breachesOf(late.caseId)).toEqual(["first_review"]);
    expect(await breachesOf(other.caseId)).toEqual(["first_review"]);
    expect(await breachesOf(claimed.caseId)).toEqual([]);
    expect(await breachesOf(decided.caseId)).toEqual([]);

    // 121 minutes: the three undecided cases passed their decision target (the claimed one too).
    world.clock.advance(90 * MINUTE);
    expect(await pass()).toBe(3);
    expect(await breachesOf(claimed.caseId)).toEqual(["decision"]);
    expect(await breachesOf(late.caseId)).toEqual(["decision", "first_review"]);
    const after = (await serviceLevels(world.ctx, { days: 7 })).queues.find((q) => q.queueId === queue.id)!;
    expect(after).toMatchObject({ overdue: { firstReview: 2, decision: 3 }, breaches: { firstReview: 2, decision: 3 } });
  });

  test("the event goes to an endpoint that lists queue.sla_breached, never to one without a filter", async () => {
    const listed = await createEndpoint(world.ctx, { url: "https://listed.example/hook", eventTypes: ["queue.sla_breached"] });
    const unfiltered = await createEndpoint(world.ctx, { url: "https://all.example/hook", eventTypes: [] });
    const queue = await createQueue(world.ctx, { name: "Webhooked", firstReviewTargetMinutes: 5 });
    const f = await world.fileReport();
    await moveCaseToQueue(world.ctx, { caseId: f.caseId, queueId: queue.id });
    world.clock.advance(6 * MINUTE);
    expect(await pass()).toBe(1);
    const sent = async (endpointId: string) =>
      (await world.store.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId))).map((d) => JSON.parse(d.payload));
    const got = await sent(listed.endpoint.id);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ type: "queue.sla_breached", data: { target: "first_review", queueId: queue.id, caseId: f.caseId, appealId: null, targetMinutes: 5 } });
    expect(await sent(unfiltered.endpoint.id)).toEqual([]);
  });

  test("a moderator who may not work a queue sees neither it nor its breaches", async () => {
    const user = await createUser(world.ctx, { email: `mod-${crypto.randomUUID().slice(0, 8)}@example.org`, role: "moderator", passwordHash: "unused" });
    const restricted = await createQueue(world.ctx, { name: "Restricted", firstReviewTargetMinutes: 1, access: { users: [], roles: ["admin"] } });
    const f = await world.fileReport();
    await moveCaseToQueue(world.ctx, { caseId: f.caseId, queueId: restricted.id });
    world.clock.advance(2 * MINUTE);
    await pass();
    const asAdmin = await serviceLevels(world.ctx, { days: 7 });
    expect(asAdmin.queues.find((q) => q.queueId === restricted.id)?.breaches.firstReview).toBe(1);
    const asModerator = await serviceLevels(world.as({ type: "user", id: user.id }), { days: 7 });
    expect(asModerator.queues.map((q) => q.queueId)).not.toContain(restricted.id);
    expect(JSON.stringify(asModerator)).not.toContain(f.caseId);
  });

  test("an appeal pending past its project's target is a breach; the transparency report gives the shares decided within target", async () => {
    const from = iso(world.clock.now()).slice(0, 10);
    const settings = await getDsaSettings(world.ctx, { projectId: world.project.id });
    await setDsaSettings(world.ctx, { projectId: world.project.id, settings: { ...settings, appealTargetMinutes: 60 } });
    const slow = await world.reportIn("APPEALED");
    const quick = await world.reportIn("APPEALED");
    world.clock.advance(30 * MINUTE);
    await decideAppeal(world.ctx, { appealId: quick.appealId!, decision: "uphold" });
    world.clock.advance(31 * MINUTE);
    expect(await pass()).toBeGreaterThanOrEqual(1);
    expect(await breachesOf(slow.appealId!)).toEqual(["appeal"]);
    expect(await breachesOf(quick.appealId!)).toEqual([]);
    const levels = await serviceLevels(world.ctx, { days: 7 });
    expect(levels.appeals).toMatchObject({ pending: 1, overdue: 1, breaches: 1 });
    await decideAppeal(world.ctx, { appealId: slow.appealId!, decision: "uphold" });

    const report = await transparencyReport(world.ctx, { from, to: iso(world.clock.now() + 24 * 60 * MINUTE).slice(0, 10) });
    expect(report.serviceLevels).toMatchObject({ appealsDecided: 2, appealsWithinTarget: 1, appealsShareWithinTarget: 0.5 });
    // The cases of the first test: one dismissed within its queue's 120 minutes.
    expect(report.serviceLevels.casesDecided).toBeGreaterThanOrEqual(1);
    expect(report.serviceLevels.casesWithinTarget).toBeGreaterThanOrEqual(1);
  });
});
