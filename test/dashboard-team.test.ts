/**
 * What a lead expects (issue 45, item 9), in Chromium: the Team page's workload per moderator
 * (held cases, decisions, time to decision, agreement with a second reviewer), a departing
 * moderator's held cases reassigned in one step (the dialog says how many move and names the one
 * that stays: the receiver may not work its queue), the rest sent back to the queue; and the
 * resolve dialog's strike preview (the strike the decision adds and the ladder step it reaches,
 * or why none), which the decision then bears out. axe-core finds nothing in any of these states.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";
import { signIn, type DashboardUser } from "./helpers/dashboard.ts";

const DIALOG = "dialog[open]";
let b: DashboardSession;
let page: Page;
let orgSlug: string;
let ana: DashboardUser;
let bob: DashboardUser;

const newModerator = async (name: string) => {
  const email = `${name}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const made = await b.platform.trpc.users.create.mutate({ email, role: "moderator" });
  return signIn(b.server, email, made.generatedPassword!);
};
const file = async (name: string, subject?: Record<string, unknown>) => {
  const reportId = await b.sdkReport({ reason: "spam", ...(subject ? { subject } : {}), target: { contentType: "post", contentExternalId: name, content: `Buy now, ${name}` } });
  return { reportId, caseId: (await b.platform.report(reportId)).caseId };
};

beforeAll(async () => {
  b = await openDashboard({ FLAGSTAFF_JOB_POLL_MS: "50" });
  page = b.page;
  orgSlug = b.server.demo.orgSlug;
  ana = await newModerator("ana");
  bob = await newModerator("bob");
}, BROWSER_T * 2);

afterAll(async () => {
  await b?.close();
});

describe("the Team page", () => {
  test(
    "each moderator's workload, then a departing moderator's cases reassigned: two move, one stays (its queue), then back to the queue",
    async () => {
      // Every decision of the default queue sampled; a queue only Ana may work.
      const def = (await b.platform.trpc.queues.list.query({ orgSlug })).queues.find((q) => q.isDefault)!;
      await b.platform.trpc.queues.update.mutate({ orgSlug, queueId: def.id, samplePercent: 100 });
      const special = (await b.platform.trpc.queues.create.mutate({ orgSlug, name: "Ana's specials", access: { users: [ana.id], roles: [] } })).queue;

      // Ana decides two cases (one she claimed first); Bob reviews the first blind and agrees.
      const [d1, d2] = [await file("team-d1"), await file("team-d2")];
      await ana.claim(d1.caseId);
      await ana.resolve(d1.reportId, { resolutionCode: "SPAM_CONFIRMED" });
      await ana.dismiss(d2.reportId, "other");
      const task = (await bob.trpc.quality.next.mutate({ orgSlug })).task!;
      expect(task.caseId).toBe(d1.caseId);
      await bob.trpc.quality.submit.mutate({ orgSlug, reviewId: task.id, decision: { action: "resolve", code: "SPAM_CONFIRMED" } });
      // Ana holds three open cases, one of them in her special queue.
      const [h1, h2, h3] = [await file("team-h1"), await file("team-h2"), await file("team-h3")];
      await b.platform.trpc.queues.moveCase.mutate({ orgSlug, caseId: h3.caseId, queueId: special.id });
      for (const h of [h1, h2, h3]) await ana.claim(h.caseId);

      await page.goto(`${b.server.url}/#/team`);
      await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Team" }).waitFor();
      await page.getByRole("heading", { name: "Team", level: 1 }).waitFor();
      const row = (email: string) => page.locator(`tr[data-moderator='${email}']`);
      const cell = (email: string, id: string) => row(email).getByTestId(id);
      await cell(ana.email, "held").getByText("3", { exact: true }).waitFor();
      expect(await cell(ana.email, "decisions").textContent()).toBe("2");
      // Time to decision over the one decision on a case she held (d1), measured from her claim.
      expect(await cell(ana.email, "time-to-decision").textContent()).toMatch(/^\d+ s \(n 1\)$/);
      expect(await cell(ana.email, "agreement").textContent()).toBe("100 % (n 1)");
      // One label on both sides: κ is not defined.
      expect(await cell(ana.email, "kappa").textContent()).toBe("—");
      expect(await cell(bob.email, "held").textContent()).toBe("0");
      expect(await cell(bob.email, "decisions").textContent()).toBe("0");
      await b.shot(page, "team.png");
      await expectNoA11yViolations(page, "the Team page");

      // Ana leaves: her cases to Bob. The dialog says how many move, and which stays and why.
      await row(ana.email).getByRole("button", { name: `Reassign cases of ${ana.email}` }).click();
      const dialog = page.getByRole("dialog", { name: `Reassign the cases of ${ana.email}` });
      await dialog.getByText("3 cases move back to the queue.").waitFor();
      await dialog.getByLabel("Give them to").selectOption({ label: bob.email });
      await dialog.getByText(`2 cases move to ${bob.email}.`).waitFor();
      await dialog.getByText(`1 case stays with ${ana.email}: ${bob.email} may not work the case's queue.`).waitFor();
      expect(await dialog.getByRole("link", { name: `Case ${h3.caseId.slice(-8)}` }).getAttribute("href")).toBe(`#/cases/${h3.caseId}`);
      await expectNoA11yViolations(page, "the reassignment dialog, one case staying", DIALOG);
      await dialog.getByRole("button", { name: "Move 2 cases" }).click();
      await page.locator(".toast", { hasText: `Moved 2 cases of ${ana.email} to ${bob.email}; 1 case stayed (${bob.email} may not work the case's queue)` }).waitFor();
      const holders = async () => Promise.all([h1, h2, h3].map(async (h) => (await b.platform.trpc.cases.detail.query({ caseId: h.caseId })).case.assigneeId));
      expect(await holders()).toEqual([bob.id, bob.id, ana.id]);
      // Each move is audited as one assignment is.
      const moved = (await b.platform.trpc.dashboard.audit.query({ entityType: "case", entityId: h1.caseId, action: "CASE_ASSIGNED" })).events[0]!;
      expect(moved).toMatchObject({ before: { assigneeId: ana.id }, after: { assigneeId: bob.id } });
      await cell(ana.email, "held").getByText("1", { exact: true }).waitFor();
      expect(await cell(bob.email, "held").textContent()).toBe("2");
      await expectNoA11yViolations(page, "the Team page after a reassignment");

      // What stayed goes back to the queue.
      await row(ana.email).getByRole("button", { name: `Reassign cases of ${ana.email}` }).click();
      await dialog.getByText("1 case moves back to the queue.").waitFor();
      await expectNoA11yViolations(page, "the reassignment dialog, back to the queue", DIALOG);
      await dialog.getByRole("button", { name: "Move 1 case" }).click();
      await page.locator(".toast", { hasText: `Moved 1 case of ${ana.email} back to the queue` }).waitFor();
      expect(await holders()).toEqual([bob.id, bob.id, null]);
      await cell(ana.email, "held").getByText("0", { exact: true }).waitFor();
      expect(await row(ana.email).getByRole("button", { name: /^Reassign/ }).count()).toBe(0);

      // In the dark at tablet width: nothing found either, and the page does not overflow sideways (the table scrolls in its frame).
      await page.emulateMedia({ colorScheme: "dark" });
      await page.setViewportSize({ width: 820, height: 1180 });
      try {
        await cell(bob.email, "held").getByText("2", { exact: true }).waitFor();
        await expectNoA11yViolations(page, "the Team page (dark, tablet)");
        await b.shot(page, "team-tablet-dark.png");
        expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
      } finally {
        await page.emulateMedia({ colorScheme: "light" });
        await page.setViewportSize({ width: 1366, height: 900 });
      }
    },
    BROWSER_T * 2,
  );

  test(
    "a moderator has no Team page: no link, and the page says it is for admins",
    async () => {
      const { page: mod } = await b.signedIn(bob.email, (await b.platform.trpc.users.resetPassword.mutate({ userId: bob.id })).generatedPassword!);
      await mod.goto(`${b.server.url}/#/team`);
      await mod.getByRole("heading", { name: "Admins only" }).waitFor();
      expect(await mod.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Team" }).count()).toBe(0);
      await mod.context().close();
    },
    BROWSER_T,
  );
});

describe("the strike preview in the resolve dialog", () => {
  test(
    "before confirming: the strike the decision adds and the ladder step it reaches, or why none; the decision bears it out",
    async () => {
      const { projectId } = b.server.demo;
      await b.platform.trpc.strikes.setPolicy.mutate({
        orgSlug, projectId, enabled: true, windowDays: 90,
        ladder: [{ threshold: 1, kind: "warning" }, { threshold: 2, kind: "suspension", durationSeconds: 86_400 }, { threshold: 4, kind: "ban" }],
      });
      const kim = { type: "user", externalId: "u-kim-team", display: { name: "Kim" } };
      const first = await file("kim-first", kim);
      await b.platform.resolve(first.reportId, { resolutionCode: "SPAM_CONFIRMED" });
      const second = await file("kim-second", kim);

      await page.goto(`${b.server.url}/#/cases/${second.caseId}`);
      await page.getByRole("heading", { name: "post kim-second" }).waitFor();
      await page.getByRole("button", { name: /^Resolve/ }).click();
      const dialog = page.getByRole("dialog", { name: "Resolve post kim-second" });
      const preview = dialog.getByTestId("strike-preview");
      // The dialog opens on "No violation", which the policy does not count.
      await preview.getByText("This decision adds no strike: the strike policy does not count this resolution. The account has 1 strike in force.").waitFor();
      await expectNoA11yViolations(page, "the resolve dialog, no strike", DIALOG);
      await dialog.getByLabel("Resolution").selectOption("SPAM_CONFIRMED");
      await preview.getByText("This decision adds a strike (2 in the last 90 days) and reaches step 2: suspension for 1 day.").waitFor();
      await expectNoA11yViolations(page, "the resolve dialog, a strike reaching a step", DIALOG);
      // With an action on the account: the same strike, the action's fields beside it.
      await dialog.getByLabel("Resolution").selectOption("ACCOUNT_LEVEL_ACTION");
      await dialog.getByLabel("Action", { exact: true }).selectOption("warning");
      await preview.getByText("This decision adds a strike (2 in the last 90 days) and reaches step 2: suspension for 1 day.").waitFor();
      await expectNoA11yViolations(page, "the resolve dialog with an action and its strike", DIALOG);
      await b.shot(page, "strike-preview.png");
      await dialog.getByRole("button", { name: "Confirm resolve" }).click();
      await page.locator(".toast", { hasText: "Resolved post kim-second" }).waitFor();

      const strikes = await b.platform.trpc.strikes.ofIdentity.query({ orgSlug, projectId, typeName: kim.type, externalId: kim.externalId });
      expect(strikes.total).toBe(2);
      expect(strikes.strikes[0]).toMatchObject({ caseId: second.caseId, count: 1, step: { threshold: 2, kind: "suspension" } });
    },
    BROWSER_T,
  );
});
