/**
 * Report creation times (src/domain/report-time.ts), in process: every report of an
 * organization gets a microsecond of its own, in the order the reports were committed, even
 * when many share a millisecond and when two instances file them at the same moment.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { and, asc, eq } from "drizzle-orm";
import { reports } from "../../src/db/schema.ts";
import { domainContext } from "../../src/domain/context.ts";
import { requireProject } from "../../src/domain/projects.ts";
import { createReport } from "../../src/domain/reports.ts";
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

test("reports filed in one millisecond through two instances at once each get their own microsecond, in commit order", async () => {
  const other = world.anotherInstance();
  // The clock stands still: every report is filed in the same millisecond.
  const filed = await Promise.all(Array.from({ length: 40 }, (_, i) => fileThrough(i % 2 ? other : world.store)));
  const times = filed.map((r) => r.createdUs);
  expect(new Set(times).size).toBe(40);
  expect(Math.min(...times)).toBeGreaterThanOrEqual(world.clock.now() * 1000);

  // Stored as handed out; sorted by time, they are in the order they were written (their ids,
  // UUIDv7 of the same millisecond, carry no order of their own, so compare with the audit).
  const stored = await world.store.db
    .select({ id: reports.id, createdUs: reports.createdUs })
    .from(reports)
    .where(and(eq(reports.orgId, world.orgId)))
    .orderBy(asc(reports.createdUs));
  const ours = stored.filter((r) => filed.some((f) => f.id === r.id));
  expect(ours.map((r) => r.createdUs)).toEqual([...times].sort((a, b) => a - b));

  // And the next report through either instance comes after all of them.
  const later = await fileThrough(world.store);
  const laterOther = await fileThrough(other);
  expect(later.createdUs).toBeGreaterThan(Math.max(...times));
  expect(laterOther.createdUs).toBeGreaterThan(later.createdUs);
});
