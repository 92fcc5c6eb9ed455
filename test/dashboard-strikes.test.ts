/**
 * Strikes in Chromium (src/web/components/strikes.tsx): an admin writes a strike policy in the
 * settings page's Strikes section (a ladder whose thresholds do not increase is refused, the
 * server's message shown), then a moderator's decisions on Kim's cases climb the ladder to a
 * suspension, taken by Flagstaff itself; Kim's identity page and case page show the strikes and
 * the suspension. axe-core finds nothing on the section or on the identity page with strikes.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";

let b: DashboardSession;
let page: Page;
let mod: Page;
const r: string[] = [];
const c: string[] = [];
const kim = { type: "user", externalId: "u-kim", display: { name: "Kim" } };

beforeAll(async () => {
  b = await openDashboard({ FLAGSTAFF_JOB_POLL_MS: "50" });
  page = b.page;
  for (const n of [0, 1, 2]) {
    r.push(await b.sdkReport({ reason: "spam", subject: kim, target: { contentType: "post", contentExternalId: `kim-${n}`, content: `Buy now ${n}` } }));
    c.push((await b.platform.report(r[n]!)).caseId);
  }
  const created = await b.platform.trpc.users.create.mutate({ email: "striker@demo.example", role: "moderator" });
  ({ page: mod } = await b.signedIn("striker@demo.example", created.generatedPassword!));
}, BROWSER_T * 2);

afterAll(async () => {
  await b?.close();
});

test(
  "an admin writes the strike policy; a ladder out of order is refused with the server's words",
  async () => {
    await page.goto(`${b.server.url}/#/settings`);
    const section = page.getByRole("form", { name: "Strikes" });
    await section.waitFor();
    await expectNoA11yViolations(page, "the settings page's Strikes section (off)", "form[aria-labelledby='strikes-title']");
    await section.getByLabel("Count strikes").check();
    await section.getByLabel("Strikes count for (days)").fill("30");
    await section.getByRole("button", { name: "Add a step" }).click();
    await section.getByRole("button", { name: "Add a step" }).click();
    await section.getByLabel("Step 2: action").selectOption("suspension");
    await section.getByLabel("Step 2: duration in hours").fill("24");
    await section.getByLabel("Step 2: at strikes").fill("1");
    await section.getByRole("button", { name: "Save strike policy" }).click();
    await section.getByText("ladder[1].threshold: thresholds must increase: 1 follows 1").waitFor();
    await section.getByLabel("Step 2: at strikes").fill("3");
    await expectNoA11yViolations(page, "the settings page's Strikes section (a ladder)", "form[aria-labelledby='strikes-title']");
    await b.shot(page, "strikes-settings.png");
    await section.getByRole("button", { name: "Save strike policy" }).click();
    await page.getByText("Strike policy saved").waitFor();
    const { policy } = await b.platform.trpc.strikes.policy.query({ orgSlug: b.server.demo.orgSlug, projectId: b.server.demo.projectId });
    expect(policy).toMatchObject({ enabled: true, windowDays: 30, ladder: [{ threshold: 1, kind: "warning" }, { threshold: 3, kind: "suspension", durationSeconds: 86_400 }] });
  },
  BROWSER_T,
);

test(
  "three decisions on Kim's cases reach the suspension through the ladder; the identity and case pages show the strikes",
  async () => {
    for (const n of [0, 1, 2]) {
      await mod.goto(`${b.server.url}/#/cases/${c[n]}`);
      await mod.getByRole("heading", { name: `post kim-${n}` }).waitFor();
      await mod.getByRole("button", { name: /^Resolve/ }).click();
      const dialog = mod.getByRole("dialog", { name: `Resolve post kim-${n}` });
      await dialog.getByLabel("Resolution").selectOption("SPAM_CONFIRMED");
      await dialog.getByRole("button", { name: "Confirm resolve" }).click();
      await mod.locator(".toast", { hasText: `Resolved post kim-${n}` }).waitFor();
      expect((await b.platform.report(r[n]!)).status).toBe("RESOLVED");
    }
    const identityId = (await b.platform.trpc.dashboard.case.query({ caseId: c[2]! })).subject!.id;
    await mod.goto(`${b.server.url}/#/identity/${identityId}`);
    const panel = mod.getByTestId("strikes-panel");
    await panel.getByText("3 strikes", { exact: true }).waitFor();
    // The ladder's suspension is taken by its job just after the third decision commits.
    for (let i = 0; i < 40 && !(await panel.getByText(/took the step: suspension$/).count()); i++) {
      await mod.waitForTimeout(100);
      await mod.reload();
    }
    await panel.getByText(/took the step: suspension$/).waitFor();
    await panel.getByText(/took the step: warning$/).waitFor();
    const { orgSlug, projectId } = b.server.demo;
    const { actions } = await b.platform.trpc.enforcement.list.query({ orgSlug, projectId, identityType: kim.type, externalId: kim.externalId });
    expect(actions.map((a) => [a.kind, a.createdBy.type, a.status])).toEqual([["suspension", "system", "active"], ["warning", "system", "active"]]);
    await b.shot(mod, "strikes-identity.png");
    await expectNoA11yViolations(mod, "the identity page with strikes");

    await mod.goto(`${b.server.url}/#/cases/${c[2]}`);
    const onCase = mod.getByTestId("strikes-panel");
    await onCase.getByText("3 strikes", { exact: true }).waitFor();
    await onCase.getByText("this case").waitFor();
  },
  BROWSER_T,
);
