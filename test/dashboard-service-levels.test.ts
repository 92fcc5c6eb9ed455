/**
 * Service levels in the dashboard (issue 27), in Chromium: the queue editor's target fields
 * (create and edit), the queues table's oldest open case against its target, and the
 * overview's breach tile once a case passed its target (the server restarted with its clock two
 * minutes ahead, the service-level pass every 100 ms), the review queue's service-level line and
 * the case's row past its target, and the appeal target in the project's DSA
 * settings. axe-core finds no violation.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { a11yViolations, BROWSER_T, openDashboard, type DashboardSession } from "./helpers/browser.ts";
import { until } from "./helpers/wait.ts";

let s: DashboardSession;
let orgSlug: string;

beforeAll(async () => {
  s = await openDashboard({ FLAGSTAFF_SLA_TICK_MS: "100" });
  orgSlug = s.server.demo.orgSlug;
}, BROWSER_T);
afterAll(async () => {
  await s?.close();
});

describe("service levels in the dashboard", () => {
  test(
    "targets set in the queue editor; a case past its target shows as a breach on the overview's tile; axe finds nothing",
    async () => {
      const p = s.page;
      await p.goto(`${s.server.url}/#/queues`);
      await p.getByRole("heading", { name: "Queues" }).waitFor();
      const form = p.getByRole("form", { name: "Create a queue" });
      await form.getByLabel("Name").fill("Timed");
      await form.getByLabel("First review within (minutes)").fill("1");
      await form.getByLabel("Decision within (minutes)").fill("240");
      await form.getByRole("button", { name: "Create queue" }).click();
      await p.locator("tr[data-queue='Timed']").waitFor();
      const timed = (await s.platform.trpc.queues.list.query({ orgSlug })).queues.find((q) => q.name === "Timed")!;
      expect(timed).toMatchObject({ firstReviewTargetMinutes: 1, decisionTargetMinutes: 240 });
      await expect(p.locator("tr[data-queue='Timed']").textContent()).resolves.toContain("first review 1 min · decision 4 h");
      expect(await a11yViolations(p)).toEqual([]);

      // The editor shows the targets; the decision target is removed (emptied).
      await p.getByRole("button", { name: "Edit Timed" }).click();
      const dialog = p.getByRole("dialog");
      await expect(dialog.getByLabel("First review within (minutes)").inputValue()).resolves.toBe("1");
      await dialog.getByLabel("Decision within (minutes)").fill("");
      expect(await a11yViolations(p, "dialog[open]")).toEqual([]);
      await dialog.getByRole("button", { name: "Save" }).click();
      await until("the target removed", async () => (await s.platform.trpc.queues.get.query({ orgSlug, queueId: timed.id })).queue.decisionTargetMinutes === null);

      // A case in the queue; the overview shows no breach yet.
      const reportId = await s.sdkReport({ reason: "spam", target: { contentType: "post", contentExternalId: `sla-${Date.now()}` } });
      const caseId = (await s.platform.report(reportId)).caseId;
      await s.platform.trpc.queues.moveCase.mutate({ orgSlug, caseId, queueId: timed.id });
      await p.goto(`${s.server.url}/#/overview`);
      const tile = p.locator("[data-tile='sla-breaches']");
      await tile.waitFor();
      await expect(tile.locator("dd").first().textContent()).resolves.toBe("0");

      // Two minutes later (the same database, a server whose clock runs ahead): past the 1 min target.
      await s.server.stop();
      s.server.env.FLAGSTAFF_CLOCK_OFFSET_MS = String(2 * 60_000);
      await s.server.start();
      await until("the breach recorded", async () => (await s.platform.trpc.queues.serviceLevels.query({ orgSlug })).queues.find((q) => q.queueId === timed.id)?.breaches.firstReview === 1);
      await p.goto(`${s.server.url}/#/overview`);
      await until("the tile shows the breach", async () => (await tile.locator("dd").first().textContent()) === "1");
      await expect(tile.textContent()).resolves.toContain("past target now: 1 first review");
      const row = p.locator("tr[data-queue='Timed']");
      await row.waitFor();
      await expect(row.textContent()).resolves.toContain("past the 1 min target");
      await expect(row.getByRole("link").getAttribute("href")).resolves.toBe(`#/cases/${caseId}`);
      expect(await a11yViolations(p)).toEqual([]);
      await s.shot(p, "service-levels-overview.png");

      // The queues page: the oldest open case against the target (measured on this browser's clock).
      await p.goto(`${s.server.url}/#/queues`);
      await expect(p.locator("tr[data-queue='Timed']").textContent()).resolves.toMatch(/\(within the 1 min target\)|\(past the 1 min target\)/);

      // The review queue, with the queue chosen: its targets, the oldest case and how many are
      // past each target now (the server's figures), and the case's row marked past its target.
      await p.goto(`${s.server.url}/#/queue`);
      await p.getByTestId("queue-picker").selectOption(timed.id);
      const sla = p.getByTestId("queue-sla");
      await sla.waitFor();
      await expect(sla.textContent()).resolves.toContain("Targets: first review 1 min");
      await expect(sla.textContent()).resolves.toContain("1 past the first-review target");
      await expect(sla.getByRole("link").getAttribute("href")).resolves.toBe(`#/cases/${caseId}`);
      const caseRow = p.locator("tr", { has: p.locator(`a.case-link[href='#/cases/${caseId}']`) });
      await caseRow.getByTestId("past-target").waitFor();
      expect(await a11yViolations(p)).toEqual([]);
    },
    BROWSER_T,
  );

  test(
    "the appeal target is set in the project's DSA settings and cleared again; axe finds nothing",
    async () => {
      const p = s.page;
      const { projectId } = s.server.demo;
      await p.goto(`${s.server.url}/#/settings`);
      await p.getByRole("heading", { name: "Statements of reasons (DSA)" }).waitFor();
      const field = p.getByLabel("Decide appeals within (minutes)");
      await field.fill("4320");
      expect(await a11yViolations(p)).toEqual([]);
      await p.locator("form[aria-labelledby=dsa-title] button[type=submit]").click();
      await p.getByText("Statement-of-reasons settings saved").waitFor();
      expect((await s.platform.trpc.transparency.getDsaSettings.query({ orgSlug, projectId })).settings.appealTargetMinutes).toBe(4320);

      await field.fill("");
      await p.locator("form[aria-labelledby=dsa-title] button[type=submit]").click();
      await until("the target cleared", async () => (await s.platform.trpc.transparency.getDsaSettings.query({ orgSlug, projectId })).settings.appealTargetMinutes === undefined);
    },
    BROWSER_T,
  );
});
