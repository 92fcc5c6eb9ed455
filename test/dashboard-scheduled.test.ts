/**
 * Scheduled enforcement actions in Chromium (issue 27, item 6; issue 45, item 5;
 * src/web/components/enforcement-list.tsx, src/web/decisions.tsx):
 * - the identity page shows an action that starts later as scheduled, with its start and a Cancel
 *   button and no statement of reasons yet; cancelling it there asks why in a dialog and leaves it
 *   "cancelled before it started" with the reason. Another one, due in two seconds, still shows as
 *   scheduled once its start time passed unrecorded (the scheduler's tick is ten minutes away: no
 *   statement, no Revoke), and in force with its statement and Revoke once a change records it;
 * - a moderator schedules a suspension from the case page's Enforce dialog ("Start later"), and
 *   resolves another case with a ban that starts later from the resolve dialog (the sweep, which
 *   follows an action in force, is not offered then), then cancels the ban with a reason.
 * axe-core finds nothing on the page and the dialogs in each state.
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
const actionOf = async (actionId: string) =>
  (await b.platform.trpc.enforcement.get.query({ orgSlug: b.server.demo.orgSlug, projectId: b.server.demo.projectId, actionId })).action;
const statusOf = async (actionId: string) => (await actionOf(actionId)).status;
const DIALOG = "dialog[open]";
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Whether an instant is `ms` after `from`, give or take a minute (the request's own time). */
const about = (at: string, from: number, ms: number) => Math.abs(Date.parse(at) - from - ms) < 60_000;

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

      // Cancelling asks why in the page's own dialog (no browser confirm()), and sends the reason.
      await item.getByRole("button", { name: "Cancel the scheduled suspension" }).click();
      const dialog = page.getByRole("dialog", { name: "Cancel the scheduled suspension" });
      await dialog.getByLabel("Reason (optional)").waitFor();
      await expectNoA11yViolations(page, "the cancel dialog", DIALOG);
      // "Keep it scheduled" changes nothing.
      await dialog.getByRole("button", { name: "Keep it scheduled" }).click();
      await dialog.waitFor({ state: "hidden" });
      expect(await statusOf(later.id)).toBe("scheduled");
      await item.getByRole("button", { name: "Cancel the scheduled suspension" }).click();
      await dialog.getByLabel("Reason (optional)").fill("The user deleted the posts during the grace period");
      await dialog.getByRole("button", { name: "Cancel the suspension" }).click();
      await page.locator(".toast", { hasText: "Scheduled action cancelled" }).waitFor();
      await item.getByText(/cancelled before it started: The user deleted the posts during the grace period/).waitFor();
      expect(await item.getByRole("button", { name: "Cancel the scheduled suspension" }).count()).toBe(0);
      expect(await actionOf(later.id)).toMatchObject({ status: "cancelled", revokeReason: "The user deleted the posts during the grace period" });
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

  test(
    "a suspension scheduled from the Enforce dialog, a ban that starts later from the resolve dialog (no sweep offered), then cancelled with a reason",
    async () => {
      const { page } = b;
      const subject = (id: string, name: string) => ({ type: "user", externalId: id, display: { name } });
      // Sid: one case, suspended from the Enforce dialog in two days, for a week.
      const sidReport = await b.sdkReport({ subject: subject("u-sid", "Sid Spammer"), reason: "spam", description: "Links in every thread." });
      const sidCase = (await b.platform.report(sidReport)).caseId!;
      await page.goto(`${b.server.url}/#/cases/${sidCase}`);
      await page.getByRole("heading", { name: "User Sid Spammer", level: 1 }).waitFor({ timeout: 15_000 });
      await page.getByRole("toolbar", { name: "Case actions" }).getByRole("button", { name: /^Enforce/ }).click();
      const enforce = page.getByRole("dialog", { name: "Enforce" });
      await enforce.getByLabel("Action", { exact: true }).selectOption("suspension");
      await enforce.getByLabel("Duration").fill("7");
      await enforce.getByLabel("Unit", { exact: true }).selectOption("days");
      await enforce.getByLabel(/Start later/).check();
      await enforce.getByLabel("Starts in").fill("2");
      await enforce.getByLabel("Delay counted in").selectOption("days");
      await expectNoA11yViolations(page, "the Enforce dialog with a later start", DIALOG);
      const asked = Date.now();
      await enforce.getByRole("button", { name: "Schedule suspension" }).click();
      await page.locator(".toast", { hasText: /^suspension scheduled, starting / }).waitFor();
      const sidActions = (await b.platform.trpc.enforcement.list.query({ orgSlug: b.server.demo.orgSlug, projectId: b.server.demo.projectId, identityType: "user", externalId: "u-sid" })).actions;
      expect(sidActions).toHaveLength(1);
      const sid = sidActions[0]!;
      expect(sid).toMatchObject({ kind: "suspension", status: "scheduled", active: false });
      expect(about(sid.startsAt, asked, 2 * DAY)).toBe(true);
      // The week counts from the start.
      expect(Date.parse(sid.endsAt!) - Date.parse(sid.startsAt)).toBe(7 * DAY);
      const subjectPanel = page.locator("section", { has: page.getByRole("heading", { name: "Subject", exact: true }) });
      await subjectPanel.getByRole("listitem").filter({ hasText: /scheduled, starts/ }).first().waitFor();

      // Bea: two open cases; one resolved with a ban starting in 24 hours.
      const beaReport = await b.sdkReport({ subject: subject("u-bea", "Bea Banned"), reason: "harassment", description: "Threats in DMs." });
      await b.sdkReport({ subject: subject("u-bea", "Bea Banned"), target: { contentType: "post", contentExternalId: "bea-post-2", content: "Another one" }, reason: "harassment" });
      const beaCase = (await b.platform.report(beaReport)).caseId!;
      await page.goto(`${b.server.url}/#/cases/${beaCase}`);
      await page.getByRole("heading", { name: "User Bea Banned", level: 1 }).waitFor({ timeout: 15_000 });
      await page.getByRole("toolbar", { name: "Case actions" }).getByRole("button", { name: /^Resolve/ }).click();
      const resolve = page.locator(DIALOG);
      await resolve.getByLabel("Resolution").selectOption("ACCOUNT_LEVEL_ACTION");
      await resolve.getByLabel("Action", { exact: true }).selectOption("ban");
      await resolve.getByLabel("Action reason").fill("Threats");
      // At once, the ban would sweep Bea's other open case: offered.
      await resolve.getByTestId("sweep-offer").getByText(/Also resolve this other case/).waitFor();
      await resolve.getByLabel(/Start later/).check();
      await resolve.getByLabel("Starts in").fill("24");
      // Starting later, there is no action in force to sweep with: not offered.
      await resolve.getByTestId("sweep-offer").waitFor({ state: "detached" });
      await expectNoA11yViolations(page, "the resolve dialog with a later start", DIALOG);
      const resolvedAt = Date.now();
      await resolve.getByRole("button", { name: "Confirm resolve" }).click();
      await page.locator(".toast", { hasText: "with a ban starting in 24 hours" }).waitFor();
      const beaDetail = await b.platform.casePage(beaCase);
      expect(beaDetail.case.status).toBe("RESOLVED");
      expect(beaDetail.caseEnforcement).toHaveLength(1);
      const ban = beaDetail.caseEnforcement[0]!;
      expect(ban).toMatchObject({ kind: "ban", status: "scheduled", reason: "Threats", endsAt: null });
      expect(about(ban.startsAt, resolvedAt, DAY)).toBe(true);

      // Cancelled from the case page, with a reason.
      const banItem = page.locator("section", { has: page.getByRole("heading", { name: "Actions taken on this case" }) }).getByRole("listitem").filter({ hasText: "Threats" }).first();
      await banItem.getByRole("button", { name: "Cancel the scheduled ban" }).click();
      const cancel = page.getByRole("dialog", { name: "Cancel the scheduled ban" });
      await cancel.getByLabel("Reason (optional)").fill("Decided on appeal before the start");
      await expectNoA11yViolations(page, "the cancel dialog on the case page", DIALOG);
      await cancel.getByRole("button", { name: "Cancel the ban" }).click();
      await banItem.getByText(/cancelled before it started: Decided on appeal before the start/).waitFor();
      expect(await actionOf(ban.id)).toMatchObject({ status: "cancelled", revokeReason: "Decided on appeal before the start" });
      await expectNoA11yViolations(page, "the case page with a cancelled ban");
    },
    BROWSER_T,
  );
});
