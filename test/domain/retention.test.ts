/**
 * Retention (src/domain/plumbing/retention.ts): each log lets go of exactly the rows past its retention,
 * in batches of the size asked for, and leaves the rest: jobs still to run, deliveries still
 * being retried, recent hits, live sessions.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, inArray } from "drizzle-orm";
import { jobs, ruleHits, sessions, webhookAttempts, webhookDeliveries, webhookEndpoints } from "../../src/db/schema.ts";
import { DAY_MS } from "../../src/domain/core/clock.ts";
import { claimJobs, completeJobs, enqueueJob, failJob, setBacklogBounds } from "../../src/domain/plumbing/jobs.ts";
import { deleteExpiredBatch, runRetention, type RetentionPolicy } from "../../src/domain/plumbing/retention.ts";
import { createSession } from "../../src/domain/plumbing/sessions.ts";
import { listUsers } from "../../src/domain/accounts/users.ts";
import { newId } from "../../src/domain/core/ids.ts";
import type { JobKind } from "../../src/domain/views/job.ts";
import { domainWorld, type DomainWorld } from "../helpers/builders.ts";

const HOUR = 3_600_000;
const policy: RetentionPolicy = { jobsMs: 7 * DAY_MS, deadJobsMs: 30 * DAY_MS, webhooksMs: 30 * DAY_MS, ruleHitsMs: 90 * DAY_MS };

let world: DomainWorld;
beforeAll(async () => {
  world = await domainWorld();
});
afterAll(() => world.close());

const ctx = () => ({ store: world.store, db: world.store.db, clock: world.clock });
const ids = async <T extends { id: string }>(rows: Promise<T[]>) => (await rows).map((r) => r.id).sort();
/** A kind no other test enqueues, so that a test sees only its own jobs (no worker runs here: it needs no lane). */
const ownKind = (name: string) => `${name}.${newId()}` as JobKind;

describe("jobs", () => {
  test("done and skipped jobs go after FLAGSTAFF_RETENTION_JOBS_MS, dead ones after the dead retention; pending, running and recent ones stay", async () => {
    const c = { ...ctx(), orgId: world.orgId };
    const kind = ownKind("retention.test");
    const enqueue = () => world.store.transaction(() => enqueueJob(c, { orgId: world.orgId, kind, payload: {}, maxAttempts: 1 }));
    const claim = async (n: number) => claimJobs(c, { kind, workerId: "w-r", leaseMs: HOUR, limit: n });

    // Day 0: three jobs done, one dead, one left pending (its run time in the future: a retry).
    const old = [await enqueue(), await enqueue(), await enqueue(), await enqueue()];
    const claimed = await claim(4);
    expect(claimed.map((j) => j.id).sort()).toEqual([...old].sort());
    await completeJobs(c, { ids: old.slice(0, 3), workerId: "w-r" });
    expect(await failJob(c, { job: claimed.find((j) => j.id === old[3])!, workerId: "w-r", error: "boom", retryAt: 0 })).toBe("dead");
    const waiting = await enqueue();

    // Day 8: one more done; one running.
    world.clock.advance(8 * DAY_MS);
    const recent = await enqueue();
    await claim(2); // the pending one from day 0 and this one
    await completeJobs(c, { ids: [waiting, recent], workerId: "w-r" });
    const running = await enqueue();
    await claim(1);

    // Batches of two: the three old done jobs take two transactions.
    expect(await deleteExpiredBatch(c, { log: "jobs", policy, batch: 2 })).toBe(2);
    expect(await deleteExpiredBatch(c, { log: "jobs", policy, batch: 2 })).toBe(1);
    expect(await deleteExpiredBatch(c, { log: "jobs", policy, batch: 2 })).toBe(0);
    const left = () => ids(world.store.db.select({ id: jobs.id }).from(jobs).where(eq(jobs.kind, kind)));
    // The dead one stays (30 days), the two done on day 8 stay (recent), `running` runs.
    expect(await left()).toEqual([old[3]!, waiting, recent, running].sort());

    world.clock.advance(23 * DAY_MS); // day 31: the dead one's time, and the day-8 done ones'
    expect(await runRetention(c, { policy, batch: 100 })).toMatchObject({ jobs: 2, deadJobs: 1 });
    expect(await left()).toEqual([running]);
  });

  test("skipped jobs (past the enrichment backlog bound) go with the done ones", async () => {
    const c = { ...ctx(), orgId: world.orgId };
    const kind = ownKind("retention.skip");
    setBacklogBounds(world.store, { [kind]: 1 });
    try {
      const queued = await world.store.transaction(() => enqueueJob(c, { orgId: world.orgId, kind, payload: {} }));
      const skipped = await world.store.transaction(() => enqueueJob(c, { orgId: world.orgId, kind, payload: {} }));
      const rows = await world.store.db.select({ id: jobs.id, status: jobs.status, lastError: jobs.lastError }).from(jobs).where(eq(jobs.kind, kind));
      expect(rows.find((r) => r.id === skipped)).toMatchObject({ status: "skipped", lastError: expect.stringContaining("backlog bound") });
      world.clock.advance(8 * DAY_MS);
      expect(await runRetention(c, { policy, batch: 100 })).toMatchObject({ jobs: 1 });
      expect(await ids(world.store.db.select({ id: jobs.id }).from(jobs).where(eq(jobs.kind, kind)))).toEqual([queued]);
    } finally {
      setBacklogBounds(world.store, {});
    }
  });

  test("a retention of 0 keeps forever", async () => {
    const c = { ...ctx(), orgId: world.orgId };
    const kind = ownKind("retention.keep");
    const id = await world.store.transaction(() => enqueueJob(c, { orgId: world.orgId, kind, payload: {} }));
    await claimJobs(c, { kind, workerId: "w-k", leaseMs: HOUR, limit: 1 });
    await completeJobs(c, { ids: [id], workerId: "w-k" });
    world.clock.advance(400 * DAY_MS);
    expect(await deleteExpiredBatch(c, { log: "jobs", policy: { ...policy, jobsMs: 0 }, batch: 10 })).toBe(0);
    expect(await ids(world.store.db.select({ id: jobs.id }).from(jobs).where(eq(jobs.kind, kind)))).toEqual([id]);
  });

  test("a kind with a retention of its own (JOB_SPECS) keeps its finished jobs that long; the other kinds go with the default", async () => {
    const c = { ...ctx(), orgId: world.orgId };
    const [kept, longer, usual] = [ownKind("retention.kept"), ownKind("retention.longer"), ownKind("retention.usual")];
    const finish = async (kind: JobKind, outcome: "done" | "dead") => {
      const id = await world.store.transaction(() => enqueueJob(c, { orgId: world.orgId, kind, payload: {}, maxAttempts: 1 }));
      const [job] = await claimJobs(c, { kind, workerId: "w-o", leaseMs: HOUR, limit: 1 });
      if (outcome === "done") await completeJobs(c, { ids: [id], workerId: "w-o" });
      else await failJob(c, { job: job!, workerId: "w-o", error: "boom", retryAt: 0 });
      return id;
    };
    // Kept forever, done and dead; kept 60 days when done, 90 when dead; the default (7 and 30).
    const keptDone = await finish(kept, "done");
    const keptDead = await finish(kept, "dead");
    const longerDone = await finish(longer, "done");
    const longerDead = await finish(longer, "dead");
    // Named with the default's times: they go with the default.
    await finish(usual, "done");
    await finish(usual, "dead");
    const own = { ...policy, jobKinds: { [kept]: { doneMs: 0, deadMs: 0 }, [longer]: { doneMs: 60 * DAY_MS, deadMs: 90 * DAY_MS }, [usual]: { doneMs: policy.jobsMs, deadMs: policy.deadJobsMs } } };
    const left = () => ids(world.store.db.select({ id: jobs.id }).from(jobs).where(inArray(jobs.kind, [kept, longer, usual])));

    world.clock.advance(31 * DAY_MS); // past the default's 7 and 30 days
    await runRetention(c, { policy: own, batch: 100 });
    expect(await left()).toEqual([keptDone, keptDead, longerDone, longerDead].sort());
    world.clock.advance(30 * DAY_MS); // day 61: the longer kind's done job
    await runRetention(c, { policy: own, batch: 100 });
    expect(await left()).toEqual([keptDone, keptDead, longerDead].sort());
    world.clock.advance(30 * DAY_MS); // day 91: its dead one; the kind kept forever stays
    await runRetention(c, { policy: own, batch: 100 });
    expect(await left()).toEqual([keptDone, keptDead].sort());
  });
});

describe("webhook deliveries, rule hits, sessions", () => {
  test("settled deliveries (with their attempts) older than the retention go; pending and recent ones stay", async () => {
    const now = world.clock.now();
    const endpointId = newId();
    await world.store.transaction(async () => {
      await world.store.db.insert(webhookEndpoints).values({
        id: endpointId, orgId: world.orgId, url: "https://example.com/hook", secret: "whsec_x", eventTypes: "[]", enabled: 1, createdAt: now, updatedAt: now,
      });
    });
    const delivery = async (status: "pending" | "delivered" | "failed", ageMs: number) => {
      const id = newId();
      await world.store.transaction(async () => {
        await world.store.db.insert(webhookDeliveries).values({ id, orgId: world.orgId, endpointId, eventType: "enforcement_action.created", payload: "{}", status, attempts: 1, createdAt: now - ageMs });
        await world.store.db.insert(webhookAttempts).values({ id: newId(), deliveryId: id, attemptedAt: now - ageMs, statusCode: 200, latencyMs: 5 });
      });
      return id;
    };
    const oldDelivered = await delivery("delivered", 31 * DAY_MS);
    const oldFailed = await delivery("failed", 40 * DAY_MS);
    const oldPending = await delivery("pending", 31 * DAY_MS);
    const recent = await delivery("delivered", 29 * DAY_MS);

    expect(await deleteExpiredBatch(ctx(), { log: "webhookDeliveries", policy, batch: 1 })).toBe(1);
    expect((await runRetention(ctx(), { policy, batch: 1 })).webhookDeliveries).toBe(1);
    expect(await ids(world.store.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId)))).toEqual(
      [oldPending, recent].sort(),
    );
    const attempts = await world.store.db.select({ deliveryId: webhookAttempts.deliveryId }).from(webhookAttempts);
    const attemptsOf = new Set(attempts.map((a) => a.deliveryId));
    expect([oldDelivered, oldFailed].some((id) => attemptsOf.has(id))).toBe(false);
    expect(attemptsOf.has(oldPending) && attemptsOf.has(recent)).toBe(true);
  });

  test("rule hits older than the retention go, newer ones stay", async () => {
    const now = world.clock.now();
    const hit = async (ageMs: number) => {
      const id = newId();
      await world.store.transaction(async () => {
        await world.store.db.insert(ruleHits).values({ id, orgId: world.orgId, ruleId: "r-retention", version: 1, reportId: "x", effects: "[]", applied: 1, at: now - ageMs });
      });
      return id;
    };
    await hit(91 * DAY_MS);
    await hit(100 * DAY_MS);
    const kept = [await hit(89 * DAY_MS), await hit(0)];
    expect((await runRetention(ctx(), { policy, batch: 500 })).ruleHits).toBe(2);
    expect(await ids(world.store.db.select({ id: ruleHits.id }).from(ruleHits).where(eq(ruleHits.ruleId, "r-retention")))).toEqual(kept.sort());
  });

  test("ended sessions (idle 12 hours, or 7 days after sign-in) go; live ones stay", async () => {
    const [user] = await listUsers({ db: world.store.db, orgId: world.orgId });
    await createSession(ctx(), { id: user!.id, orgId: world.orgId }); // live
    const now = world.clock.now();
    // Ended sessions as sign-ins long ago leave them (createSession sweeps at each sign-in; a quiet installation has none).
    const ended = { idle: { createdAt: now - 13 * HOUR, expiresAt: now + DAY_MS, lastSeenAt: now - 13 * HOUR }, expired: { createdAt: now - 8 * DAY_MS, expiresAt: now - DAY_MS, lastSeenAt: now - HOUR } };
    for (const times of Object.values(ended)) {
      await world.store.transaction(async () => {
        await world.store.db.insert(sessions).values({ id: newId(), tokenHash: newId(), userId: user!.id, orgId: world.orgId, csrfToken: "c", ...times });
      });
    }
    const all = async () => (await world.store.db.select({ id: sessions.id, lastSeenAt: sessions.lastSeenAt, expiresAt: sessions.expiresAt }).from(sessions)).filter((s) => s.expiresAt > now && s.lastSeenAt > now - 12 * HOUR);
    const live = await all();
    expect(live.length).toBeGreaterThan(0);
    expect((await runRetention(ctx(), { policy, batch: 500 })).sessions).toBe(2);
    const left = await world.store.db.select({ id: sessions.id }).from(sessions);
    expect(left.map((s) => s.id).sort()).toEqual(live.map((s) => s.id).sort());
  });
});
