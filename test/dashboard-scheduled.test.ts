/**
 * Scheduled enforcement actions in Chromium (issue 27, item 6; src/web/components/enforcement-list.tsx):
 * the identity page shows an action that starts later as scheduled, with its start and a Cancel
 * button and no statement of reasons yet; cancelling it there leaves it "cancelled before it
 * started". Another one, due in two seconds, still shows as scheduled once its start time passed
 * while the scheduler (its tick ten minutes away) has not recorded the start: no statement, no
 * Revoke. Once a change records its start (test/scheduled-actions.test.ts has the scheduler do
 * it), it shows in force, with its statement and Revoke. axe-core finds nothing on the page in
 * each state.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";
import { until } from "./helpers/wait.ts";

let b: DashboardSession;
const grace = { type: "user", externalId: "u-grace" };

beforeAll(async () => {
  // The scheduler's tick is ten minutes away: a start whose time passes stays unrecorded.
  b = await openDashboard({ FLAGSTAFF_ENFORCEMENT_TICK_MS: "600000" });
}, BROWSER_T);

afterAll(async () => {
  await b?.close();
});

const schedule = (startsInSeconds: number, reason: string) =>
  b.platform.trpc.enforcement.create.mutate({
    orgSlug: b.server.demo.orgSlug,
    projectId: b.server.demo.projectId,
    kind: "suspension",
    reason,
    identity: grace,
    startsInSeconds,
    durationSeconds: 7 * 86_400,
  });
const statusOf = async (actionId: string) =>
  (await b.platform.trpc.enforcement.get.query({ orgSlug: b.server.demo.orgSlug, projectId: b.server.demo.projectId, actionId })).action.status;

describe("scheduled actions on the identity page", () => {
  test(
    "a scheduled suspension is shown with its start and cancelled from the page; one whose start time passed unrecorded still shows as scheduled, and in force with its statement once recorded",
    async () => {
      const { page } = b;
      const later = (await schedule(3600, "Spam after the grace period")).action;
      const soon = (await schedule(2, "Repeated spam")).action;
      expect([later.status, soon.status]).toEqual(["scheduled", "scheduled"]);

      await page.goto(`${b.server.url}/#/identity/${later.identityId}`);
      const item = page.getByRole("listitem").filter({ hasText: "Spam after the grace period" });
      await item.getByText(/scheduled, starts/).waitFor();
      expect(await item.getByText("Statement of reasons").count()).toBe(0);
      expect(await item.getByRole("button", { name: "Revoke" }).count()).toBe(0);
      await b.shot(page, "scheduled-action-identity.png");
      await expectNoA11yViolations(page, "the identity page with a scheduled action");

      page.once("dialog", (d) => void d.accept());
      await item.getByRole("button", { name: "Cancel the scheduled suspension" }).click();
      await page.locator(".toast", { hasText: "Scheduled action cancelled" }).waitFor();
      await item.getByText(/cancelled before it started/).waitFor();
      expect(await item.getByRole("button", { name: "Cancel the scheduled suspension" }).count()).toBe(0);
      expect(await statusOf(later.id)).toBe("cancelled");
      await expectNoA11yViolations(page, "the identity page with a cancelled action");

      // Its start time passed, not recorded: still scheduled, with no statement and no Revoke.
      await until("the second suspension's start time to pass", async () => Date.now() > Date.parse(soon.startsAt) + 300);
      await page.reload();
      const due = page.getByRole("listitem").filter({ hasText: "Repeated spam" });
      await due.getByText(/scheduled, starts/).waitFor();
      expect(await due.getByText("Statement of reasons").count()).toBe(0);
      expect(await due.getByRole("button", { name: "Revoke" }).count()).toBe(0);
      expect(await statusOf(soon.id)).toBe("scheduled");

      // A change records its start first (its statement, its announcement), then it is in force.
      await b.platform.trpc.enforcement.update.mutate({ orgSlug: b.server.demo.orgSlug, projectId: b.server.demo.projectId, actionId: soon.id, note: "grace period over" });
      expect(await statusOf(soon.id)).toBe("active");
      await page.reload();
      const started = page.getByRole("listitem").filter({ hasText: "Repeated spam" });
      await started.getByRole("button", { name: "Revoke" }).waitFor();
      expect(await started.getByText(/scheduled/).count()).toBe(0);
      await started.getByText("Statement of reasons").click();
      await started.getByText("DECISION_ACCOUNT_SUSPENDED").waitFor();
      await expectNoA11yViolations(page, "the identity page once the scheduled action took effect");
    },
    BROWSER_T,
  );
});
