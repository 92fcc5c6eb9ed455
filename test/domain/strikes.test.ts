/**
 * Strikes (src/domain/strikes/strikes.ts, strike-ladder.ts): the policy's checks, a ladder
 * step taken once per threshold crossing with decisions at once, strikes expiring with the
 * window (a fake clock), an overturned appeal removing its strike, sweeps adding none, undo
 * taking them back, and the rule field `subject.strikes`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { and, eq, isNotNull } from "drizzle-orm";
import { strikes } from "../../src/db/schema.ts";
import { decideOnReport } from "../../src/domain/review/decisions.ts";
import { decideAppeal, fileAppeal } from "../../src/domain/enforcement/appeals.ts";
import { resolveReport } from "../../src/domain/enforcement/enforcement.ts";
import { getActionStatement } from "../../src/domain/enforcement/statements.ts";
import { takeLadderStep } from "../../src/domain/enforcement/strike-ladder.ts";
import { identityStrikes, setStrikePolicy } from "../../src/domain/strikes/strikes.ts";
import { decideInBulk, undoBulkDecision } from "../../src/domain/review/bulk.ts";
import { gatherFacts } from "../../src/domain/rules/rule-engine.ts";
import { createRule, deleteRule } from "../../src/domain/rules/rules.ts";
import { tagsOfCases } from "../../src/domain/cases/tags.ts";
import { strikePolicySchema, type StrikePolicyInput } from "../../src/domain/views/strikes.ts";
import { domainWorld, fakeClock, refusal, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;
const clock = fakeClock();
beforeAll(async () => {
  world = await domainWorld({ clock });
});
afterAll(async () => {
  await world.close();
});

const DAY = 86_400_000;
let n = 0;
const fresh = () => ({ type: "user", externalId: `striker-${++n}` });
const policy = (p: StrikePolicyInput) => setStrikePolicy(world.ctx, { projectId: world.project.id, policy: strikePolicySchema.parse(p) });
const strikesOf = (subject: { type: string; externalId: string }) => identityStrikes(world.ctx, { projectId: world.project.id, ...subject });
const resolveSpam = (reportId: string) => decideOnReport(world.ctx, { reportId, decision: { action: "resolve", code: "SPAM_CONFIRMED" } });
/** The ladder steps reached and not taken yet, taken as their jobs would (each twice: a job run again takes nothing). */
async function takeSteps(): Promise<string[]> {
  const pending = await world.store.db.select({ id: strikes.id }).from(strikes).where(and(eq(strikes.orgId, world.orgId), isNotNull(strikes.step)));
  const taken: string[] = [];
  for (const s of pending) {
    const a = await takeLadderStep(world.as({ type: "system", id: null }), { strikeId: s.id });
    if (a) taken.push(`${a.kind}@${a.identity.externalId}`);
    expect(await takeLadderStep(world.as({ type: "system", id: null }), { strikeId: s.id })).toBeNull();
  }
  return taken;
}

test("the policy's checks: thresholds increasing, account-level kinds from ACTION_KIND_SPECS, a suspension's duration, the project's reasons", async () => {
  const issues = (p: unknown) => strikePolicySchema.safeParse(p).error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  expect(issues({ ladder: [{ threshold: 3, kind: "warning" }, { threshold: 3, kind: "ban" }] })).toEqual(["ladder.1.threshold: thresholds must increase: 3 follows 3"]);
  expect(issues({ ladder: [{ threshold: 1, kind: "content_removal" }] })).toEqual(["ladder.0.kind: a ladder acts on the account: warning, mute, suspension or ban, not content_removal"]);
  expect(issues({ ladder: [{ threshold: 2, kind: "suspension" }] })).toEqual(["ladder.0.durationSeconds: a suspension needs a duration (a permanent one is a ban)"]);
  expect(issues({ ladder: [{ threshold: 2, kind: "ban", durationSeconds: 3600 }] })).toEqual(["ladder.0.durationSeconds: a ban has no end"]);
  expect(issues({ ladder: [{ threshold: 1, kind: "warning" }, { threshold: 2, kind: "mute", durationSeconds: 3600 }, { threshold: 3, kind: "mute" }] })).toBeUndefined();
  const refused = await refusal(policy({ enabled: true, strikes: { byReason: { not_a_category: 2 } } }));
  expect(refused.http).toBe(400);
  expect(refused.message).toBe("strikes.byReason.not_a_category: not a report category of this project");
});

test("decisions at once: each threshold's step is reached by exactly one strike and taken once, by the system, with its statement automated", async () => {
  await policy({ enabled: true, windowDays: 30, ladder: [{ threshold: 1, kind: "warning" }, { threshold: 3, kind: "suspension", durationSeconds: 86_400 }, { threshold: 5, kind: "ban" }] });
  const subject = fresh();
  const filed = [];
  for (let i = 0; i < 6; i++) filed.push(await world.fileReport({ subject }));
  // Six decisions on six cases of one subject, all at once (on PostgreSQL, six transactions side by side).
  await Promise.all(filed.map((f) => resolveSpam(f.reportId)));
  const after = await strikesOf(subject);
  expect(after.total).toBe(6);
  expect(after.strikes.filter((s) => s.step).map((s) => s.step!.threshold).sort()).toEqual([1, 3, 5]);
  expect(after.nextStep).toBeNull();

  const taken = await takeSteps();
  expect(taken.sort()).toEqual([`ban@${subject.externalId}`, `suspension@${subject.externalId}`, `warning@${subject.externalId}`]);
  const suspension = (await strikesOf(subject)).strikes.find((s) => s.step?.kind === "suspension")!;
  expect(suspension.actionId).not.toBeNull();
  const trail = await world.audit(suspension.actionId!);
  expect(trail.actions).toEqual(["ENFORCEMENT_ACTION_CREATED"]);
  expect(trail.events[0]!.actor).toEqual({ type: "system", id: null });
  expect(trail.events[0]!.data).toMatchObject({ strikePolicy: { strikeId: suspension.id, threshold: 3 }, automated: true });
  const statement = await getActionStatement(world.ctx, { projectId: world.project.id, actionId: suspension.actionId! });
  expect(statement.statement.automated_decision).toBe("AUTOMATED_DECISION_FULLY");
  expect(statement.statement.decision_account).toBe("DECISION_ACCOUNT_SUSPENDED");
});

test("strikes expire with the window (fake clock), and crossing a threshold again takes its step again", async () => {
  await policy({ enabled: true, windowDays: 1, ladder: [{ threshold: 2, kind: "warning" }] });
  const subject = fresh();
  await resolveSpam((await world.fileReport({ subject })).reportId);
  await resolveSpam((await world.fileReport({ subject })).reportId);
  expect((await strikesOf(subject)).total).toBe(2);
  expect(await takeSteps()).toEqual([`warning@${subject.externalId}`]);

  clock.advance(DAY - 1);
  expect((await strikesOf(subject)).total).toBe(2);
  const facts = await gatherFacts(world.ctx, { reportId: (await world.fileReport({ subject })).reportId, fields: new Set(["subject.strikes"]) });
  expect(facts["subject.strikes"]).toBe(2);
  clock.advance(1);
  const expired = await strikesOf(subject);
  expect(expired.total).toBe(0);
  expect(expired.strikes.map((s) => s.status)).toEqual(["expired", "expired"]);
  expect((await gatherFacts(world.ctx, { reportId: (await world.fileReport({ subject })).reportId, fields: new Set(["subject.strikes"]) }))["subject.strikes"]).toBe(0);

  await resolveSpam((await world.fileReport({ subject })).reportId);
  await resolveSpam((await world.fileReport({ subject })).reportId);
  expect(await takeSteps()).toEqual([`warning@${subject.externalId}`]);
});

test("an overturned appeal removes its decision's strike; codes, weights by reason and severity; off adds none", async () => {
  await policy({ enabled: true, codes: ["ACCOUNT_LEVEL_ACTION", "HARASSMENT_CONFIRMED"], strikes: { default: 1, byReason: { harassment: 2 }, bySeverity: { CRITICAL: 4 } } });
  const subject = fresh();
  const spam = await world.fileReport({ subject });
  await resolveSpam(spam.reportId); // SPAM_CONFIRMED is not one of the codes
  expect((await strikesOf(subject)).total).toBe(0);

  const harassment = await world.fileReport({ subject, reasons: ["harassment"] });
  const { enforcementActionId } = await resolveReport(world.ctx, {
    reportId: harassment.reportId,
    resolution: { code: "ACCOUNT_LEVEL_ACTION" },
    action: { kind: "warning", reason: "harassment" },
  });
  expect((await strikesOf(subject)).total).toBe(2);
  const child = await world.fileReport({ subject, reasons: ["child_safety"] });
  await decideOnReport(world.ctx, { reportId: child.reportId, decision: { action: "resolve", code: "HARASSMENT_CONFIRMED" } });
  expect((await strikesOf(subject)).total).toBe(6);

  const appeal = await fileAppeal(world.platform, { projectId: world.project.id, actionId: enforcementActionId!, text: "It was a joke" });
  await decideAppeal(world.ctx, { appealId: appeal.id, decision: "overturn", note: "Context" });
  const after = await strikesOf(subject);
  expect(after.total).toBe(4);
  const removed = after.strikes.find((s) => s.caseId === harassment.caseId)!;
  expect(removed).toMatchObject({ status: "removed", removedReason: "overturned", count: 2 });
  expect((await world.audit(world.project.id)).actions).toContain("PROJECT_STRIKE_POLICY_CHANGED");

  await policy({ enabled: false });
  await resolveSpam((await world.fileReport({ subject })).reportId);
  expect((await strikesOf(subject)).total).toBe(4);
});

test("a bulk decision's strikes are taken back by its undo", async () => {
  await policy({ enabled: true });
  const subject = fresh();
  const cases = [await world.fileReport({ subject }), await world.fileReport({ subject })];
  const bulk = await decideInBulk(world.ctx, { caseIds: cases.map((c) => c.caseId), decision: { action: "resolve", code: "SPAM_CONFIRMED" }, othersClaims: "skip" });
  expect((await strikesOf(subject)).total).toBe(2);
  await undoBulkDecision(world.ctx, { bulkId: bulk.bulkId! });
  const after = await strikesOf(subject);
  expect(after.total).toBe(0);
  expect(after.strikes.map((s) => s.removedReason)).toEqual(["undone", "undone"]);
});

test("a live rule reads subject.strikes: a report about someone with 2 strikes in force is tagged, one about someone with 1 is not", async () => {
  await policy({ enabled: true });
  const rule = await createRule(world.ctx, {
    name: "Repeat offenders",
    trigger: "report.created",
    mode: "live",
    when: { field: "subject.strikes", op: "gte", value: 2 },
    then: [{ type: "tag", tag: "repeat-offender" }],
  });
  const twice = fresh();
  const once = fresh();
  for (const subject of [twice, twice, once]) await resolveSpam((await world.fileReport({ subject })).reportId);
  const a = await world.fileReport({ subject: twice });
  const b = await world.fileReport({ subject: once });
  const tags = await tagsOfCases(world.ctx, { caseIds: [a.caseId, b.caseId] });
  expect(tags.get(a.caseId)).toEqual(["repeat-offender"]);
  expect(tags.get(b.caseId)).toBeUndefined();
  await deleteRule(world.ctx, { ruleId: rule.id });
});
