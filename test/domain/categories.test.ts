/**
 * Report reasons against the project's categories, in process: report creation keeps the
 * categories in memory (resolveProjectReasons), and every change of a category, made through
 * this instance or another, is seen by the next report that reads the project.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createCategory, deleteCategory, updateCategory } from "../../src/domain/categories/categories.ts";
import { domainContext } from "../../src/domain/core/context.ts";
import { requireProject } from "../../src/domain/accounts/projects.ts";
import { createReport } from "../../src/domain/intake/reports.ts";
import type { Store } from "../../src/db/store.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;
beforeAll(async () => {
  world = await domainWorld();
});
afterAll(() => world.close());

let n = 0;
/** Files a report with `reason` through `store` (this instance's, or another's), reading the project as a request does. */
async function fileWith(store: Store, reason: string) {
  const ctx = domainContext(store, world.clock, world.platform.actor, world.orgId);
  const project = await requireProject(ctx, world.project.id);
  return createReport(ctx, { project, reasonNames: [reason], subject: { type: "user", externalId: `reasons-${++n}` }, automated: false });
}

test("every change of a category bumps the project's categories version", async () => {
  const version = async () => (await requireProject(world.ctx, world.project.id)).categoriesVersion;
  const v0 = await version();
  expect(v0).toBeGreaterThan(0); // the default categories were seeded
  const made = await createCategory(world.ctx, { projectId: world.project.id, name: "version-probe", severityHint: "LOW" });
  expect(await version()).toBe(v0 + 1);
  await updateCategory(world.ctx, { projectId: world.project.id, categoryId: made.id, description: "changed" });
  expect(await version()).toBe(v0 + 2);
  await deleteCategory(world.ctx, { projectId: world.project.id, categoryId: made.id });
  expect(await version()).toBe(v0 + 3);
});

test("a category added, renamed or deleted through another instance is seen by this one's next report", async () => {
  const other = world.anotherInstance();
  await fileWith(world.store, "spam"); // this instance has the categories in memory now
  expect((await refusal(fileWith(world.store, "brigading"))).http).toBe(400);

  const added = await createCategory(domainContext(other, world.clock, world.ctx.actor, world.orgId), {
    projectId: world.project.id,
    name: "brigading",
    severityHint: "HIGH",
  });
  const filed = await fileWith(world.store, "brigading");
  expect(filed.row.severity).toBe("HIGH");

  await updateCategory(domainContext(other, world.clock, world.ctx.actor, world.orgId), { projectId: world.project.id, categoryId: added.id, name: "raids" });
  expect((await refusal(fileWith(world.store, "brigading"))).message).toContain('Unknown reason "brigading"');
  expect((await fileWith(world.store, "raids")).row.reasons).toBe('["raids"]');

  await deleteCategory(domainContext(other, world.clock, world.ctx.actor, world.orgId), { projectId: world.project.id, categoryId: added.id });
  expect((await refusal(fileWith(world.store, "raids"))).http).toBe(400);
  // The other instance answers the same.
  expect((await refusal(fileWith(other, "raids"))).http).toBe(400);
  expect((await fileWith(other, "spam")).row.reasons).toBe('["spam"]');
});
