/**
 * Report creation times (src/domain/intake/report-time.ts), in process: every report of an
 * organization gets a microsecond of its own, even when many share a millisecond and when two
 * instances file them at the same moment; each instance's follow the order it wrote them in (on
 * SQLite, the one writer's: the order of the commits). Where instances write side by side,
 * ascending listings wait out LISTING_HORIZON_MS instead of relying on one order of commits
 * across instances (test/pg-scale.test.ts pages through them while both write).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { and, asc, eq } from "drizzle-orm";
import { reports } from "../../src/db/schema.ts";
import { domainContext } from "../../src/domain/core/context.ts";
import { requireProject } from "../../src/domain/accounts/projects.ts";
import { createReport } from "../../src/domain/intake/reports.ts";
import type { Store } from "../../src/db/store.ts";
import { domainWorld, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;
beforeAll(async () => {
  world = await domainWorld();
});
afterAll(() => world.close());

let n = 0;
async function fileThrough(store: Store) {
  const ctx = domainContext(store, world.clock, world.platform.actor, world.orgId);
  const project = await requireProject(ctx, world.project.id);
  const created = await createReport(ctx, { project, reasonNames: ["spam"], subject: { type: "user", externalId: `timed-${++n}` }, automated: false });
  return created.row;
}

test("reports filed in one millisecond through two instances at once each get their own microsecond, each instance's in its order", async () => {
  const other = world.anotherInstance();
  // The clock stands still: every report is filed in the same millisecond.
  const filed = await Promise.all(Array.from({ length: 40 }, (_, i) => fileThrough(i % 2 ? other : world.store)));
  const times = filed.map((r) => r.createdUs);
  expect(new Set(times).size).toBe(40);
  expect(Math.min(...times)).toBeGreaterThanOrEqual(world.clock.now() * 1000);

  // Stored as handed out.
  const stored = await world.store.db
    .select({ id: reports.id, createdUs: reports.createdUs })
    .from(reports)
    .where(and(eq(reports.orgId, world.orgId)))
    .orderBy(asc(reports.createdUs));
  const ours = stored.filter((r) => filed.some((f) => f.id === r.id));
  expect(ours.map((r) => r.createdUs)).toEqual([...times].sort((a, b) => a - b));

  // The next report through each instance comes after that instance's own (on SQLite, where one
  // process writes, after all of them).
  const later = await fileThrough(world.store);
  const laterOther = await fileThrough(other);
  const own = (i: number) => times.filter((_, k) => k % 2 === i);
  expect(later.createdUs).toBeGreaterThan(Math.max(...own(0)));
  expect(laterOther.createdUs).toBeGreaterThan(Math.max(...own(1)));
  if (world.store.soleWriter) expect(later.createdUs).toBeGreaterThan(Math.max(...times));
});
