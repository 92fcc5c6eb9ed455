/**
 * The invariants writes kept by running one at a time now hold by the locks of the rows they
 * touch and by unique indexes (issue 25; src/db/store.ts lists them), tested with two instances
 * racing: on PostgreSQL two pools of their own on one database, each transaction beside the
 * others (no cluster-wide write lock); on SQLite two stores over the one writer. Each race runs
 * dozens of writes through both at once:
 * - reports on one target make exactly one open case, with their count and highest bucket;
 * - first sightings of one identity make one row, counting every report;
 * - a decision racing new reports on its case leaves no report open in a closed case;
 * - the report rate limit is exact across both;
 * - an organization's default queue, first needed by both at once, is made once.
 * (An ascending reader paging while instances write: test/listing-horizon.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, inArray } from "drizzle-orm";
import { cases, identities, queues, reports } from "../../src/db/schema.ts";
import type { Store } from "../../src/db/store.ts";
import { decideOnReport } from "../../src/domain/review/decisions.ts";
import { domainContext } from "../../src/domain/core/context.ts";
import { DomainError } from "../../src/domain/core/errors.ts";
import { requireProject } from "../../src/domain/accounts/projects.ts";
import { defaultQueue } from "../../src/domain/review/queues.ts";
import { createSharedRateLimiter, reportSlot } from "../../src/domain/plumbing/rate-limit.ts";
import { createReport, type CreateReportInput } from "../../src/domain/intake/reports.ts";
import { OPEN_STATUSES } from "../../src/domain/views/workflow.ts";
import { domainWorld, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;
let other: Store;
beforeAll(async () => {
  world = await domainWorld();
  other = world.anotherInstance();
});
afterAll(() => world.close());

const unique = () => crypto.randomUUID().slice(0, 8);
const through = (i: number) => (i % 2 ? other : world.store);

async function file(store: Store, input: Omit<CreateReportInput, "project" | "automated">) {
  const ctx = domainContext(store, world.clock, world.platform.actor, world.orgId);
  const project = await requireProject(ctx, world.project.id);
  return createReport(ctx, { project, automated: false, ...input });
}

describe("two instances racing (each engine)", () => {
  test("reports on one new target make exactly one open case, with their count and highest bucket", async () => {
    const target = { contentType: "post", contentExternalId: `raced-${unique()}` };
    const reasons = ["spam", "harassment", "child_safety", "spam"];
    const filed = await Promise.all(
      Array.from({ length: 40 }, (_, i) => file(through(i), { target, reasonNames: [reasons[i % 4]!], reporter: { type: "user", externalId: `r-${unique()}` } })),
    );
    const open = await world.store.db
      .select()
      .from(cases)
      .where(and(eq(cases.projectId, world.project.id), eq(cases.contentExternalId, target.contentExternalId), eq(cases.isOpen, 1)));
    expect(open).toHaveLength(1);
    expect(open[0]!.reportCount).toBe(40);
    // child_safety is CRITICAL: the bucket rose to emergency whatever the order.
    expect(open[0]!.bucket).toBe("emergency");
    expect(new Set(filed.map((f) => f.caseId))).toEqual(new Set([open[0]!.id]));
    const stored = await world.store.db.select({ caseId: reports.caseId }).from(reports).where(eq(reports.contentExternalId, target.contentExternalId));
    expect(stored).toHaveLength(40);
  });

  test("first sightings of one identity make one row, counting every report", async () => {
    const subject = { type: "user", externalId: `sighted-${unique()}`, display: { name: "Once" } };
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        file(through(i), { subject, reasonNames: ["spam"], target: { contentType: "post", contentExternalId: `p-${unique()}` } }),
      ),
    );
    const rows = await world.store.db
      .select()
      .from(identities)
      .where(and(eq(identities.projectId, world.project.id), eq(identities.type, "user"), eq(identities.externalId, subject.externalId)));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.reportCount).toBe(30);
    expect(rows[0]!.name).toBe("Once");
  });

  test("a decision racing new reports on its case leaves no report open in a closed case", async () => {
    const target = { contentType: "post", contentExternalId: `decided-${unique()}` };
    for (let round = 0; round < 5; round++) {
      const first = await file(world.store, { target, reasonNames: ["spam"] });
      const moderator = (store: Store) => domainContext(store, world.clock, world.ctx.actor, world.orgId);
      await Promise.all([
        ...Array.from({ length: 10 }, (_, i) => file(through(i), { target, reasonNames: ["spam"] })),
        decideOnReport(moderator(round % 2 ? other : world.store), { reportId: first.row.id, decision: { action: "dismiss", reason: "other" } }),
        ...Array.from({ length: 10 }, (_, i) => file(through(i + 1), { target, reasonNames: ["spam"] })),
      ]);
    }
    const ofTarget = await world.store.db.select().from(cases).where(and(eq(cases.projectId, world.project.id), eq(cases.contentExternalId, target.contentExternalId)));
    expect(ofTarget.filter((c) => c.isOpen === 1).length).toBeLessThanOrEqual(1);
    const closed = ofTarget.filter((c) => c.isOpen === 0).map((c) => c.id);
    expect(closed.length).toBeGreaterThanOrEqual(5);
    const leftOpen = await world.store.db
      .select({ id: reports.id, status: reports.status })
      .from(reports)
      .where(and(inArray(reports.caseId, closed), inArray(reports.status, [...OPEN_STATUSES])));
    expect(leftOpen).toEqual([]);
    // Every case's count is the number of its reports.
    for (const c of ofTarget) {
      const [n] = await world.store.db.select({ id: reports.id }).from(reports).where(eq(reports.caseId, c.id)).then((r) => [r.length]);
      expect(c.reportCount).toBe(n!);
    }
  });

  test("the report rate limit is exact across both: of 30 creations at once, 10 a minute are filed", async () => {
    const limiters = [createSharedRateLimiter({ store: world.store, clock: world.clock }), createSharedRateLimiter({ store: other, clock: world.clock })];
    const key = { id: `rate-${unique()}`, reportRateLimit: 10 };
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        file(through(i), {
          reasonNames: ["spam"],
          target: { contentType: "post", contentExternalId: `rated-${unique()}` },
          slot: reportSlot({ limiter: limiters[i % 2]!, defaultLimit: 10 }, { key }),
        }),
      ),
    );
    const filed = outcomes.filter((o) => o.status === "fulfilled");
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
    expect(filed).toHaveLength(10);
    expect(refused).toHaveLength(20);
    for (const r of refused) expect(r.reason).toBeInstanceOf(DomainError);
    expect(refused.every((r) => (r.reason as DomainError).kind === "rate_limited")).toBe(true);
  });
});

describe("first needs at once (each engine)", () => {
  test("an organization's default queue, needed by two instances at once, is made once", async () => {
    const fresh = await world.secondOrganization({ name: `Queues ${unique()}` });
    const made = await Promise.all(
      Array.from({ length: 8 }, (_, i) => defaultQueue(domainContext(i % 2 ? other : fresh.store, fresh.clock, fresh.platform.actor, fresh.orgId))),
    );
    expect(new Set(made.map((q) => q.id)).size).toBe(1);
    const defaults = await fresh.store.db.select().from(queues).where(and(eq(queues.orgId, fresh.orgId), eq(queues.isDefault, 1)));
    expect(defaults).toHaveLength(1);
  });
});
