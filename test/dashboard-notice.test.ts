/**
 * The case page shows a report's DSA Art. 16 notice (issue 16): a "Notice" block on the
 * report's card with the legal ground, the explanation, the notifier and the good-faith
 * statement; a report without one has none. In a real browser, checked with axe-core.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";

let b: DashboardSession;

beforeAll(async () => {
  b = await openDashboard();
}, BROWSER_T);
afterAll(() => b?.close());

test(
  "a report's notice shows on its card; a report without one shows none",
  async () => {
    const target = { contentType: "post", contentExternalId: "post-with-notice" };
    const withNotice = await b.sdkReport({
      reason: "harassment",
      target,
      notice: { explanation: "It names and threatens my neighbour.", legalGround: "§ 241 StGB", notifierName: "Erika Mustermann", notifierEmail: "erika@example.org", goodFaith: true },
    });
    const plain = await b.sdkReport({ reason: "spam", target });
    const caseId = (await b.platform.report(withNotice)).caseId as string;
    expect((await b.platform.report(plain)).caseId).toBe(caseId);

    const page = b.page;
    await page.goto(`${b.server.url}/#/cases/${caseId}`);
    const card = page.locator(`#report-${withNotice}`);
    await card.getByText("Notice", { exact: true }).waitFor({ timeout: 15_000 });
    const text = await card.locator(".notice").innerText();
    for (const part of ["Legal ground", "§ 241 StGB", "It names and threatens my neighbour.", "Erika Mustermann · erika@example.org", "Good faith", "stated"]) {
      expect(text).toContain(part);
    }
    expect(await page.locator(`#report-${plain} .notice`).count()).toBe(0);
    await expectNoA11yViolations(page, "the case page with a notice");
  },
  BROWSER_T,
);
