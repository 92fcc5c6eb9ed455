/**
 * The queue page's counts are bounded (QUEUE_COUNT_CAP, src/domain/dashboard/dashboard.ts): the
 * page is asked at every poll, and an exact count is a scan of every open case on the serving
 * thread (issue 44's soak: intake's p99 grew with the backlog). Each count of the page is exact
 * up to the cap and cap + 1 ("more than") past it; the queues page and the REST queue list,
 * asked once, keep the exact figure.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fileReport } from "./helpers/builders.ts";
import { withKey } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
const CAP = 1_000;
const NORMAL = CAP + 3;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  // NORMAL reports of the normal bucket, each on a post of its own (a case each), and two emergencies.
  for (let i = 0; i < NORMAL; i += 25) await Promise.all(Array.from({ length: Math.min(25, NORMAL - i) }, () => fileReport(server, { reason: "spam" })));
  await fileReport(server, { reason: "child_safety" });
  await fileReport(server, { reason: "child_safety" });
}, 120_000);
afterAll(async () => {
  await server.dispose();
});

describe("the queue page's counts past the cap", () => {
  test("say cap + 1 (more than); counts under the cap stay exact; the picker likewise", async () => {
    const { orgSlug } = server.demo;
    const page = await withKey(server).trpc.dashboard.queue.query({});
    expect(page.countCap).toBe(CAP);
    expect(page.counts).toEqual({ emergency: 2, high: 0, normal: CAP + 1, total: CAP + 1 });
    expect(page.views.open).toBe(CAP + 1);
    expect(page.views.unassigned).toBe(CAP + 1);
    expect(page.views.mine).toBe(0);
    // The emergencies come first, then the oldest normal ones: the page is the same whatever the count.
    expect(page.items.slice(0, 2).map((c) => c.bucket)).toEqual(["emergency", "emergency"]);
    expect(page.nextCursor).not.toBeNull();
    const [picked] = page.queues;
    expect(page.queues).toHaveLength(1);
    expect(picked).toMatchObject({ isDefault: true, openCases: CAP + 1 });

    // One bucket under the cap: exact.
    const emergency = await withKey(server).trpc.dashboard.queue.query({ bucket: "emergency" });
    expect(emergency.counts).toEqual({ emergency: 2, high: 0, normal: 0, total: 2 });

    // The queues page (and the REST list) counts exactly: asked once, not at every poll.
    const listed = await withKey(server).trpc.queues.list.query({ orgSlug });
    expect(listed.queues.find((q) => q.isDefault)!.openCases).toBe(NORMAL + 2);
  });
});
