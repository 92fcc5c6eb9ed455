/**
 * Scheduled enforcement actions (issue 27, item 6), in process on a fake clock: an action created
 * to start later is `scheduled` until then and announced at once as such; at its start the
 * scheduler's pass (startDueActions) makes its statement of reasons and announces it
 * (`enforcement_action.updated`, status active) exactly once, even with two instances passing at
 * the same moment; it can be cancelled until then (409 after: revoke it). Its status follows the
 * recorded start, never the clock alone: due but not recorded, it is still scheduled.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { enforcementActions, statements, webhookDeliveries } from "../../src/db/schema.ts";
import type { Store } from "../../src/db/store.ts";
import {
  actionEnd,
  actionStart,
  createEnforcementAction,
  expireDueActions,
  findEnforcementActions,
  nextActionStart,
  startDueActions,
  updateEnforcementAction,
} from "../../src/domain/enforcement/enforcement.ts";
import { revokeActionSettlingAppeal } from "../../src/domain/enforcement/appeals.ts";
import { cancelScheduledAction } from "../../src/domain/enforcement/scheduled.ts";
import { transparencyReport } from "../../src/domain/dsa/transparency-report.ts";
import { createEndpoint } from "../../src/domain/webhooks/endpoints.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

const HOUR = 3600_000;
let world: DomainWorld;
let other: Store;
beforeAll(async () => {
  world = await domainWorld();
  other = world.anotherInstance();
  // An endpoint without a filter: it gets the enforcement action events.
  await createEndpoint(world.ctx, { url: "https://hooks.example.org/flagstaff" });
});
afterAll(() => world.close());

let serial = 0;
/** A suspension of a fresh user, starting `startsIn` ms from now, lasting `lasts` ms from its start. */
function schedule(startsIn = HOUR, lasts = 24 * HOUR, kind: "suspension" | "warning" = "suspension") {
  const ctx = world.platform;
  const startsAt = actionStart(ctx, { startsInSeconds: startsIn / 1000 });
  return createEnforcementAction(ctx, {
    project: world.project,
    kind,
    reason: "spam after the grace period",
    identity: { type: "user", externalId: `grace-${++serial}` },
    startsAt,
    endsAt: kind === "warning" ? undefined : actionEnd(ctx, { durationSeconds: lasts / 1000 }, startsAt),
  });
}

/** The webhook events written about an action, oldest first: type, status, and whether a statement came with it. */
async function events(actionId: string) {
  const rows = await world.store.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.orgId, world.orgId));
  return rows
    .map((r) => ({ id: r.id, type: r.eventType, body: JSON.parse(r.payload) as { data: { action: { id: string; status: string; active: boolean }; statement?: unknown } } }))
    .filter((e) => e.body.data.action.id === actionId)
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((e) => ({ type: e.type, status: e.body.data.action.status, active: e.body.data.action.active, statement: e.body.data.statement != null }));
}

const statementsOf = (actionId: string) => world.store.db.select({ id: statements.id }).from(statements).where(eq(statements.actionId, actionId));
const system = () => ({ store: world.store, db: world.store.db, clock: world.clock });

describe("scheduled enforcement actions", () => {
  test("scheduled until its start, announced at creation as such, with no statement yet; the end counts from the start", async () => {
    const created = world.clock.now();
    const action = await schedule(2 * HOUR, 24 * HOUR);
    expect(action.status).toBe("scheduled");
    expect(action.active).toBe(false);
    expect(Date.parse(action.startsAt)).toBe(created + 2 * HOUR);
    expect(Date.parse(action.endsAt!)).toBe(created + 26 * HOUR);
    expect(await events(action.id)).toEqual([{ type: "enforcement_action.created", status: "scheduled", active: false, statement: false }]);
    expect(await statementsOf(action.id)).toHaveLength(0);
    expect((await world.audit(action.id)).actions).toEqual(["ENFORCEMENT_ACTION_CREATED"]);
    const listed = await findEnforcementActions(world.ctx, { projectId: world.project.id, status: "scheduled", limit: 100 });
    expect(listed.actions.map((a) => a.id)).toContain(action.id);
    const inForce = await findEnforcementActions(world.ctx, { projectId: world.project.id, status: "active", limit: 100 });
    expect(inForce.actions.map((a) => a.id)).not.toContain(action.id);
  });

  test("a scheduled action can be changed: a new duration counts from its start, an end before its start is refused", async () => {
    const action = await schedule(2 * HOUR, HOUR);
    const input = { projectId: world.project.id, actionId: action.id };
    const changed = await updateEnforcementAction(world.ctx, { ...input, patch: { durationSeconds: 3 * 3600, note: "second thoughts" } });
    expect(changed.status).toBe("scheduled");
    expect(Date.parse(changed.endsAt!)).toBe(Date.parse(action.startsAt) + 3 * HOUR);
    expect((await refusal(updateEnforcementAction(world.ctx, { ...input, patch: { endsAt: world.clock.now() + HOUR } }))).http).toBe(400);
  });

  test("the transparency report counts an action in the period it took effect in, never a cancelled one", async () => {
    const world2 = await world.secondOrganization({ name: "Counting" });
    const ymd = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const schedule2 = (startsIn: number) =>
      createEnforcementAction(world2.platform, { project: world2.project, kind: "ban", reason: "r", identity: { type: "user", externalId: `c-${++serial}` }, startsAt: world2.clock.now() + startsIn });
    const counted = async () => (await transparencyReport(world2.ctx, { from: ymd(world2.clock.now() - 40 * 24 * HOUR), to: ymd(world2.clock.now() + 40 * 24 * HOUR) })).actions.total;
    await schedule2(HOUR);
    const cancelled = await schedule2(HOUR);
    await cancelScheduledAction(world2.ctx, { actionId: cancelled.id, projectId: world2.project.id });
    expect(await counted()).toBe(0);
    world.clock.advance(HOUR);
    await startDueActions(system());
    expect(await counted()).toBe(1);
  });

  test("a start in the past, more than a year ahead, or given twice, and an end before the start, are refused (400)", async () => {
    const ctx = world.platform;
    const base = { project: world.project, kind: "suspension" as const, reason: "x", identity: { type: "user", externalId: "refused" } };
    const now = world.clock.now();
    expect((await refusal(createEnforcementAction(ctx, { ...base, startsAt: now, endsAt: now + HOUR }))).http).toBe(400);
    expect((await refusal(createEnforcementAction(ctx, { ...base, startsAt: now + 366 * 24 * HOUR, endsAt: now + 400 * 24 * HOUR }))).http).toBe(400);
    expect((await refusal(createEnforcementAction(ctx, { ...base, startsAt: now + 2 * HOUR, endsAt: now + HOUR }))).message).toMatch(/endsAt: must be after the action's start/);
    expect(() => actionStart(ctx, { startsAt: now + HOUR, startsInSeconds: 60 })).toThrow(/not both/);
  });

  test("at its start the pass makes its statement and announces it once (enforcement_action.updated, active); a second pass finds nothing", async () => {
    const action = await schedule(HOUR);
    expect(await nextActionStart(world.store)).toBeLessThanOrEqual(Date.parse(action.startsAt));
    world.clock.advance(HOUR - 1);
    await startDueActions(system());
    expect(await events(action.id)).toHaveLength(1);
    world.clock.advance(1);
    expect((await startDueActions(system())).found).toBeGreaterThanOrEqual(1);
    expect((await startDueActions(system())).found).toBe(0);
    expect(await events(action.id)).toEqual([
      { type: "enforcement_action.created", status: "scheduled", active: false, statement: false },
      { type: "enforcement_action.updated", status: "active", active: true, statement: true },
    ]);
    expect(await statementsOf(action.id)).toHaveLength(1);
    const audit = await world.audit(action.id);
    expect(audit.actions).toEqual(["ENFORCEMENT_ACTION_CREATED", "ENFORCEMENT_ACTION_STARTED"]);
    expect(audit.events[1]!.actor.type).toBe("system");
  });

  test("two instances passing at the same moment start each due action once (one statement, one announcement each)", async () => {
    const due = await Promise.all(Array.from({ length: 12 }, () => schedule(HOUR)));
    world.clock.advance(HOUR);
    const passes = (store: Store) => startDueActions({ store, db: store.db, clock: world.clock });
    await Promise.all([passes(world.store), passes(other), passes(world.store), passes(other)]);
    for (const action of due) {
      expect((await events(action.id)).filter((e) => e.type === "enforcement_action.updated")).toHaveLength(1);
      expect(await statementsOf(action.id)).toHaveLength(1);
      expect((await world.audit(action.id)).actions.filter((a) => a === "ENFORCEMENT_ACTION_STARTED")).toHaveLength(1);
    }
  });

  test("cancelled until its start: status cancelled, no statement, announced as revoked; then 409", async () => {
    const action = await schedule(HOUR);
    const cancelled = await cancelScheduledAction(world.ctx, { actionId: action.id, projectId: world.project.id, reason: "paid the fine" });
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.active).toBe(false);
    expect(cancelled.revokeReason).toBe("paid the fine");
    expect((await refusal(cancelScheduledAction(world.ctx, { actionId: action.id, projectId: world.project.id }))).http).toBe(409);
    world.clock.advance(HOUR);
    expect((await startDueActions(system())).found).toBe(0);
    expect(await events(action.id)).toEqual([
      { type: "enforcement_action.created", status: "scheduled", active: false, statement: false },
      { type: "enforcement_action.revoked", status: "cancelled", active: false, statement: false },
    ]);
    expect(await statementsOf(action.id)).toHaveLength(0);
    expect((await world.audit(action.id)).actions).toEqual(["ENFORCEMENT_ACTION_CREATED", "ENFORCEMENT_ACTION_CANCELLED"]);
  });

  test("its start time come but not recorded by the pass, it is still scheduled: cancel and revoke cancel it, with no statement; once recorded, cancel is a 409 and revoke is the way", async () => {
    const cancelledLate = await schedule(HOUR);
    const revokedLate = await schedule(HOUR);
    const recorded = await schedule(HOUR);
    world.clock.advance(HOUR);
    // The clock alone starts nothing: until the pass records a start, the action reads scheduled.
    const scheduled = await findEnforcementActions(world.ctx, { projectId: world.project.id, status: "scheduled", limit: 100 });
    expect(scheduled.actions.map((a) => a.id)).toEqual(expect.arrayContaining([cancelledLate.id, revokedLate.id, recorded.id]));
    const inForce = await findEnforcementActions(world.ctx, { projectId: world.project.id, status: "active", limit: 100 });
    expect(inForce.actions.map((a) => a.id)).not.toContain(recorded.id);
    expect((await cancelScheduledAction(world.ctx, { actionId: cancelledLate.id, projectId: world.project.id })).status).toBe("cancelled");
    expect((await revokeActionSettlingAppeal(world.ctx, { actionId: revokedLate.id, projectId: world.project.id })).action.status).toBe("cancelled");
    for (const id of [cancelledLate.id, revokedLate.id]) {
      expect((await events(id)).map((e) => `${e.type}:${e.status}`)).toEqual(["enforcement_action.created:scheduled", "enforcement_action.revoked:cancelled"]);
      expect(await statementsOf(id)).toHaveLength(0);
      expect((await world.audit(id)).actions).toEqual(["ENFORCEMENT_ACTION_CREATED", "ENFORCEMENT_ACTION_CANCELLED"]);
    }
    const cancelledList = await findEnforcementActions(world.ctx, { projectId: world.project.id, status: "cancelled", limit: 100 });
    expect(cancelledList.actions.map((a) => a.id)).toEqual(expect.arrayContaining([cancelledLate.id, revokedLate.id]));

    // The pass records the last one: its statement, then active; cancel is a 409, revoke the way.
    await startDueActions(system());
    expect(await statementsOf(recorded.id)).toHaveLength(1);
    const refused = await refusal(cancelScheduledAction(world.ctx, { actionId: recorded.id, projectId: world.project.id }));
    expect(refused.http).toBe(409);
    expect(refused.message).toMatch(/revoke it instead/);
    const { action: revoked } = await revokeActionSettlingAppeal(world.ctx, { actionId: recorded.id, projectId: world.project.id });
    expect(revoked.status).toBe("revoked");
    expect((await events(recorded.id)).map((e) => `${e.type}:${e.status}`)).toEqual([
      "enforcement_action.created:scheduled",
      "enforcement_action.updated:active",
      "enforcement_action.revoked:revoked",
    ]);
    // The two cancelled ones were never started by the pass.
    for (const id of [cancelledLate.id, revokedLate.id]) expect(await statementsOf(id)).toHaveLength(0);
  });

  test("a change to an action whose start time came records its start first (statement, announcement), then applies", async () => {
    const action = await schedule(HOUR);
    world.clock.advance(HOUR);
    const changed = await updateEnforcementAction(world.ctx, { projectId: world.project.id, actionId: action.id, patch: { note: "grace period over" } });
    expect(changed.status).toBe("active");
    expect(await statementsOf(action.id)).toHaveLength(1);
    expect((await events(action.id)).map((e) => `${e.type}:${e.status}`)).toEqual([
      "enforcement_action.created:scheduled",
      "enforcement_action.updated:active",
      "enforcement_action.updated:active",
    ]);
  });

  test("a warning scheduled takes effect without a statement; an action whose start and end both passed starts, then expires", async () => {
    const warning = await schedule(HOUR, 0, "warning");
    const brief = await schedule(HOUR, HOUR);
    world.clock.advance(3 * HOUR);
    await startDueActions(system());
    await expireDueActions(system());
    expect(await events(warning.id)).toEqual([
      { type: "enforcement_action.created", status: "scheduled", active: false, statement: false },
      { type: "enforcement_action.updated", status: "active", active: true, statement: false },
    ]);
    expect(await statementsOf(warning.id)).toHaveLength(0);
    expect((await events(brief.id)).map((e) => `${e.type}:${e.status}`)).toEqual([
      "enforcement_action.created:scheduled",
      "enforcement_action.updated:expired",
      "enforcement_action.updated:expired",
    ]);
    expect((await world.audit(brief.id)).actions).toEqual(["ENFORCEMENT_ACTION_CREATED", "ENFORCEMENT_ACTION_STARTED", "ENFORCEMENT_ACTION_EXPIRED"]);
  });

  test("an action the domain refuses to start (its end in the year 10000: no statement can say it) fails alone; the pass starts the others and reports it", async () => {
    // Written as a release that took such an end would have kept it (clientDateTime refuses it now).
    const poisoned = await schedule(HOUR);
    await world.store.transaction(() => world.store.db.update(enforcementActions).set({ endsAt: Date.parse("9999-12-31T23:59:59Z") + 24 * HOUR }).where(eq(enforcementActions.id, poisoned.id)));
    const sound = await schedule(HOUR + 1);
    world.clock.advance(HOUR + 1);
    const pass = await startDueActions(system());
    expect(pass.found).toBe(2);
    expect(pass.failed.map((f) => [f.id, f.error.message])).toEqual([[poisoned.id, expect.stringContaining("statement of reasons")]]);
    expect((await events(sound.id)).map((e) => `${e.type}:${e.status}`)).toEqual(["enforcement_action.created:scheduled", "enforcement_action.updated:active"]);
    expect((await events(poisoned.id)).map((e) => `${e.type}:${e.status}`)).toEqual(["enforcement_action.created:scheduled"]);
    // Held back by the scheduler, it is left out of the next pass and of the next start it waits for.
    const held = new Set([poisoned.id]);
    expect((await startDueActions(system(), { heldBack: held })).found).toBe(0);
    const next = await nextActionStart(world.store, held);
    expect(next === null || next > world.clock.now()).toBe(true);
    await cancelScheduledAction(world.ctx, { actionId: poisoned.id, projectId: world.project.id });
  });
});
