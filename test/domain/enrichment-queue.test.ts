/**
 * The enrichment lane as the queue keeps it (issue 44), in process on the pass's engine: each
 * report's job gets its class's priority when it is filed, the lane takes the most urgent first,
 * past its bound it sheds the least urgent (never an emergency report, which waits), skipped
 * jobs are taken again most urgent first once the lane has room, expire after the catch-up age
 * with the reason, and an admin puts expired ones back in bulk by reason and time range.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { jobs } from "../../src/db/schema.ts";
import type { Project } from "../../src/domain/accounts/projects.ts";
import { KEPT_PRIORITY_MAX } from "../../src/domain/views/enrichment-order.ts";
import { catchUpEnrichments, retryExpiredEnrichments } from "../../src/domain/analysis/enrichment-catch-up.ts";
import { updateReporter } from "../../src/domain/identities/reporters.ts";
import { claimJobs, completeJobs, refreshBacklogs, setBacklogBounds } from "../../src/domain/plumbing/jobs.ts";
import { JOB_KIND } from "../../src/domain/views/job.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;
let project: Project;
let serial = 0;

beforeAll(async () => {
  world = await domainWorld();
  project = await world.addProject({ name: "Lane", ai: { threshold: 70 } });
});
afterAll(() => world.close());

const ctx = () => ({ store: world.store, db: world.store.db, clock: world.clock });

/** Files a report in the AI project: on a new post unless `post` names one, by a fresh reporter unless `reporter` names one. */
async function file(opts: { reason?: string; post?: string; reporter?: string } = {}): Promise<string> {
  const n = ++serial;
  world.clock.advance(1); // each report (and each job it skips) at a time of its own
  const filed = await world.fileReport({
    project,
    reasons: [opts.reason ?? "spam"],
    reporter: { type: "user", externalId: opts.reporter ?? `reporter-${n}` },
    target: { contentType: "post", contentExternalId: opts.post ?? `post-${n}`, content: `words number ${n}` },
  });
  return filed.reportId;
}

/** The enrichment job of each report: its status and priority. */
async function jobOf(reportId: string): Promise<{ id: string; status: string; priority: number; lastError: string | null }> {
  const [row] = await world.store.db
    .select({ id: jobs.id, status: jobs.status, priority: jobs.priority, lastError: jobs.lastError })
    .from(jobs)
    .where(and(eq(jobs.kind, JOB_KIND.enrich), eq(jobs.entityId, reportId)));
  if (!row) throw new Error(`no enrichment job for ${reportId}`);
  return row;
}

/** Claims the lane's jobs one at a time (as a worker with one slot), completing each: the reports in the order taken. */
async function drain(): Promise<string[]> {
  const order: string[] = [];
  for (;;) {
    const [job] = await claimJobs(ctx(), { kind: JOB_KIND.enrich, workerId: "w-test", leaseMs: 60_000, limit: 1 });
    if (!job) return order;
    order.push(job.entityId!);
    await completeJobs(ctx(), { ids: [job.id], workerId: "w-test" });
  }
}

async function trusted(externalId: string): Promise<void> {
  await file({ reporter: externalId }); // the reporter's identity exists once it reported
  await updateReporter(world.ctx, { projectId: project.id, type: "user", externalId, patch: { trustedFlagger: true } });
}

describe("the most urgent first", () => {
  test("each job gets its class's priority when its report is filed, and the lane takes them by priority, then oldest first", async () => {
    await trusted("flagger-1");
    await drain();
    const first = await file({ post: "post-shared" }); // opens its case
    const joining = await file({ post: "post-shared" }); // joins it
    const fresh = await file(); // opens another
    const flagger = await file({ reporter: "flagger-1", post: "post-shared" }); // a trusted flagger's, joining
    const emergency = await file({ reason: "child_safety", post: "post-shared" }); // a CRITICAL reason, joining
    const emergency2 = await file({ reason: "self_harm" });
    expect(await Promise.all([first, joining, fresh, flagger, emergency, emergency2].map(async (id) => (await jobOf(id)).priority))).toEqual([2, 3, 2, 1, 0, 0]);
    expect(await drain()).toEqual([emergency, emergency2, flagger, first, fresh, joining]);
  });
});

describe("past the bound, the least urgent is shed; an emergency report waits", () => {
  test("a more urgent report sheds the newest of the least urgent waiting; one no more urgent than any is shed itself; an emergency one is never shed", async () => {
    await drain();
    setBacklogBounds(world.store, { [JOB_KIND.enrich]: { bound: 3, keptUpTo: KEPT_PRIORITY_MAX } });
    try {
      await refreshBacklogs(ctx());
      const a = await file({ post: "post-brigade" }); // new case (2)
      const b = await file({ post: "post-brigade" }); // joins (3)
      const c = await file({ post: "post-brigade" }); // joins (3)
      // At the bound: another report joining a case is the least urgent, and the newest: shed itself.
      const d = await file({ post: "post-brigade" });
      expect((await jobOf(d)).status).toBe("skipped");
      expect((await jobOf(d)).lastError).toContain("backlog bound");
      // A new case's report sheds the newest joining one (c) and takes its place.
      const e = await file();
      expect((await jobOf(e)).status).toBe("pending");
      expect((await jobOf(c)).status).toBe("skipped");
      expect((await jobOf(c)).lastError).toContain("the least urgent");
      // Emergencies: the first sheds the last joining one (b); the next ones shed the new cases' (e, then a)…
      const s1 = await file({ reason: "child_safety" });
      expect((await jobOf(b)).status).toBe("skipped");
      const s2 = await file({ reason: "child_safety" });
      expect((await jobOf(e)).status).toBe("skipped");
      const s3 = await file({ reason: "child_safety" });
      expect((await jobOf(a)).status).toBe("skipped");
      // …and with only emergencies waiting, another emergency waits past the bound; a less urgent one is shed.
      const s4 = await file({ reason: "self_harm" });
      const late = await file();
      expect((await jobOf(s4)).status).toBe("pending");
      expect((await jobOf(late)).status).toBe("skipped");
      expect(await Promise.all([s1, s2, s3, s4].map(async (id) => (await jobOf(id)).status))).toEqual(["pending", "pending", "pending", "pending"]);
      expect(await drain()).toEqual([s1, s2, s3, s4]);

      // Caught up once the lane has room (a tenth of the bound: 1 at a time here), most urgent then longest skipped first.
      const taken: string[] = [];
      for (let i = 0; i < 6; i++) {
        const { requeued } = await catchUpEnrichments(ctx(), { bound: 3, maxAgeMs: 3_600_000 });
        expect(requeued).toBe(1);
        taken.push(...(await drain()));
      }
      expect(taken).toEqual([e, a, late, d, c, b]);
      expect((await catchUpEnrichments(ctx(), { bound: 3, maxAgeMs: 3_600_000 })).requeued).toBe(0);
    } finally {
      setBacklogBounds(world.store, {});
    }
  });
});

describe("expiry and the bulk retry", () => {
  test("a skipped enrichment older than the catch-up age expires with the reason; an admin puts expired ones back by reason and time range", async () => {
    await drain();
    setBacklogBounds(world.store, { [JOB_KIND.enrich]: { bound: 1, keptUpTo: KEPT_PRIORITY_MAX } });
    try {
      await refreshBacklogs(ctx());
      const waiting = await file(); // the lane's one
      const t0 = world.clock.now();
      const spam = [await file(), await file()];
      world.clock.advance(60_000);
      const t1 = world.clock.now();
      const harassment = await file({ reason: "harassment" });
      const later = await file();
      for (const id of [...spam, harassment, later]) expect((await jobOf(id)).status).toBe("skipped");

      // The lane is full (1 waiting, room 1): nothing is caught up; an hour on, the skipped ones expire.
      world.clock.advance(3_600_001 - 60_000);
      expect(await catchUpEnrichments(ctx(), { bound: 1, maxAgeMs: 3_600_000 })).toMatchObject({ expired: 2, requeued: 0 });
      world.clock.advance(60_000);
      expect(await catchUpEnrichments(ctx(), { bound: 1, maxAgeMs: 3_600_000 })).toMatchObject({ expired: 2, requeued: 0 });
      for (const id of [...spam, harassment, later]) {
        const job = await jobOf(id);
        expect(job.status).toBe("expired");
        expect(job.lastError).toContain("FLAGSTAFF_ENRICH_CATCH_UP_MS");
      }
      expect((await jobOf(waiting)).status).toBe("pending");

      // By reason: only the harassment report's; by time range: the spam filed before t1; the rest after.
      expect(await retryExpiredEnrichments(world.ctx, { projectId: project.id, reason: "HARASSMENT" })).toEqual({ retried: 1 });
      expect((await jobOf(harassment)).status).toBe("skipped");
      expect(await retryExpiredEnrichments(world.ctx, { projectId: project.id, from: t0, to: t1 })).toEqual({ retried: 2 });
      for (const id of spam) expect((await jobOf(id)).status).toBe("skipped");
      expect((await jobOf(later)).status).toBe("expired");
      // Another project's expired enrichments are not this one's; nor another organization's.
      const elsewhere = await world.addProject({ name: "Elsewhere", ai: { threshold: 70 } });
      expect(await retryExpiredEnrichments(world.ctx, { projectId: elsewhere.id })).toEqual({ retried: 0 });
      const other = await world.secondOrganization();
      expect((await refusal(retryExpiredEnrichments(other.ctx, { projectId: project.id }))).http).toBe(404);
      expect((await refusal(retryExpiredEnrichments(world.ctx, { projectId: project.id, reason: "astrology" }))).http).toBe(400);
      expect((await refusal(retryExpiredEnrichments(world.ctx, { projectId: project.id, from: t1, to: t0 }))).http).toBe(400);
      expect(await retryExpiredEnrichments(world.ctx, { projectId: project.id })).toEqual({ retried: 1 });

      // Retried ones are caught up as the lane has room, and expire again only an age later.
      expect(await drain()).toEqual([waiting]);
      expect((await catchUpEnrichments(ctx(), { bound: 1, maxAgeMs: 3_600_000 })).requeued).toBe(1);
      expect(await drain()).toHaveLength(1);
    } finally {
      setBacklogBounds(world.store, {});
    }
  });
});
