/**
 * A bulk resolution never records an action that was not taken: the codes that carry an
 * enforcement action (ACCOUNT_LEVEL_ACTION, CONTENT_LEVEL_ACTION) are refused in bulk (each case
 * is resolved with its action, reports.resolve), and nothing changes.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { decideInBulk } from "../../src/domain/review/bulk.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;
beforeAll(async () => {
  world = await domainWorld();
});
afterAll(async () => {
  await world.close();
});

test("resolution codes that carry an action are refused in bulk with a 400 saying what to do, and the cases stay open", async () => {
  const a = await world.fileReport();
  const b = await world.fileReport();
  for (const code of ["ACCOUNT_LEVEL_ACTION", "CONTENT_LEVEL_ACTION"] as const) {
    const error = await refusal(decideInBulk(world.ctx, { caseIds: [a.caseId, b.caseId], decision: { action: "resolve", code }, othersClaims: "skip" }));
    expect(error.http).toBe(400);
    expect(error.message).toBe(`decision.code: ${code} takes an enforcement action per case; resolve each case with its action (reports.resolve with action)`);
  }
  expect([(await world.report(a.reportId)).status, (await world.report(b.reportId)).status]).toEqual(["OPEN", "OPEN"]);
  // Another code resolves both.
  const out = await decideInBulk(world.ctx, { caseIds: [a.caseId, b.caseId], decision: { action: "resolve", code: "SPAM_CONFIRMED" }, othersClaims: "skip" });
  expect(out.decided.sort()).toEqual([a.caseId, b.caseId].sort());
});
