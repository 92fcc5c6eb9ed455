/**
 * The sweep's bound (src/domain/enforcement/sweep.ts): an account with more open cases than the cap is
 * previewed as the first MAX_SWEEP_CASES (oldest first) with the total and `capped`, swept in
 * one bulk decision of that many, then previewed again for the rest; more ids than the cap are
 * refused with a 400 that says so.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { undoBulkDecision } from "../../src/domain/review/bulk.ts";
import { createEnforcementAction } from "../../src/domain/enforcement/enforcement.ts";
import { MAX_SWEEP_CASES, previewSweep, sweepCases } from "../../src/domain/enforcement/sweep.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;
beforeAll(async () => {
  world = await domainWorld();
});
afterAll(async () => {
  await world.close();
});

test("over the cap: the first 500 listed with the total, swept in one bulk decision (and undone), then the rest; 501 ids are a 400", async () => {
  const subject = { type: "user", externalId: "many-cases" };
  const filed: string[] = [];
  for (let i = 0; i < MAX_SWEEP_CASES + 2; i++) filed.push((await world.fileReport({ subject })).caseId);
  const key = { projectId: world.project.id, ...subject };
  const first = await previewSweep(world.ctx, key);
  expect(first).toMatchObject({ total: MAX_SWEEP_CASES + 2, capped: true, cap: MAX_SWEEP_CASES, skipped: [] });
  expect(first.cases.map((c) => c.id)).toEqual(filed.slice(0, MAX_SWEEP_CASES));

  const ban = await createEnforcementAction(world.ctx, { project: world.project, kind: "ban", reason: "Spam wave", identity: subject });
  expect(first.actions).toEqual([]);
  expect((await previewSweep(world.ctx, key)).actions.map((a) => a.id)).toEqual([ban.id]);

  const tooMany = await refusal(sweepCases(world.ctx, { projectId: world.project.id, actionId: ban.id, caseIds: filed.slice(0, MAX_SWEEP_CASES + 1), othersClaims: "skip" }));
  expect(tooMany.http).toBe(400);
  expect(tooMany.message).toBe("caseIds: at most 500 cases in one sweep");

  const started = performance.now();
  const swept = await sweepCases(world.ctx, { projectId: world.project.id, actionId: ban.id, caseIds: first.cases.map((c) => c.id), othersClaims: "skip" });
  console.log(`sweep of ${MAX_SWEEP_CASES} cases in one bulk decision: ${Math.round(performance.now() - started)} ms`);
  expect(swept.decided).toHaveLength(MAX_SWEEP_CASES);
  const rest = await previewSweep(world.ctx, key);
  expect(rest).toMatchObject({ total: 2, capped: false });
  expect(rest.cases.map((c) => c.id)).toEqual(filed.slice(MAX_SWEEP_CASES));

  const undone = await undoBulkDecision(world.ctx, { bulkId: swept.bulkId! });
  expect(undone.restored).toHaveLength(MAX_SWEEP_CASES);
  expect((await previewSweep(world.ctx, key)).total).toBe(MAX_SWEEP_CASES + 2);
}, 120_000);
