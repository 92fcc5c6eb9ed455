/**
 * The Transparency page in a real browser (Debian's Chromium): reached from the navigation, it
 * shows the report of the period picked (figures, bar charts with their tables), changes with
 * the period, and — for the admin — the Transparency Database submission form and its attempts;
 * axe-core finds nothing on it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";

let b: DashboardSession;
let page: Page;

beforeAll(async () => {
  b = await openDashboard({ FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1" });
  page = b.page;
  const { projectId } = b.server.demo;
  const report = await b.sdkReport({ target: { contentType: "post", contentExternalId: "tr-1" }, subject: { type: "user", externalId: "tr-u1" }, reason: "spam" });
  await b.platform.trpc.reports.resolve.mutate({ reportId: report, resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "ban", reason: "spam" } });
  await b.sdkReport({ target: { contentType: "post", contentExternalId: "tr-2" }, subject: { type: "user", externalId: "tr-u2" }, reason: "harassment" });
  expect(projectId).toBeString();
}, BROWSER_T);
afterAll(() => b?.close());

describe("the Transparency page", () => {
  test(
    "from the navigation: figures and charts of the last 30 days; an empty earlier period; the submission form; no axe violation",
    async () => {
      await page.getByRole("link", { name: "Transparency" }).click();
      await page.getByRole("heading", { level: 1, name: "Transparency" }).waitFor();
      const reports = page.locator(".figure", { hasText: "Reports" }).first();
      await expect(reports.locator("dd").first().textContent()).resolves.toBe("2");
      await page.getByRole("img", { name: /Reports by category: .*spam 1/ }).waitFor();
      await page.getByRole("img", { name: /Enforcement actions by kind: ban 1/ }).waitFor();
      await page.getByRole("heading", { name: "Submission to the EU Transparency Database" }).waitFor();
      await expectNoA11yViolations(page, "the Transparency page");
      await b.shot(page, "transparency.png");

      // An earlier period: nothing in it.
      await page.getByLabel("From", { exact: true }).fill("2021-01-01");
      await page.getByLabel("To", { exact: true }).fill("2021-01-31");
      await page.waitForFunction(() => document.querySelector(".figure dd")?.textContent === "0");
      await page.getByRole("img", { name: /Reports by category/ }).waitFor({ state: "detached" });
      await expectNoA11yViolations(page, "the Transparency page, an empty period");
    },
    BROWSER_T,
  );
});
