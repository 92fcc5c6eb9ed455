/**
 * Statements of reasons in a real browser (Debian's Chromium, playwright-core): the case page
 * shows a "Statement of reasons" disclosure under a suspension (none under a warning) with the
 * Transparency Database's fields; the project settings page maps a category and narrows the
 * territorial scope, and the saved settings are what the organization route answers; axe-core
 * finds nothing on either page.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";

let b: DashboardSession;
let page: Page;

beforeAll(async () => {
  b = await openDashboard();
  page = b.page;
}, BROWSER_T);
afterAll(() => b?.close());

describe("statements of reasons on the dashboard", () => {
  test(
    "the case page: a disclosure under the suspension with its statement, none under the warning",
    async () => {
      const { orgSlug, projectId } = b.server.demo;
      const reportId = await b.sdkReport({ reason: "harassment", subject: { type: "user", externalId: "dash-subject-1" }, target: { contentType: "post", contentExternalId: "dash-post-1" } });
      const report = await b.server.call("GET", `/reports/${reportId}`);
      const caseId = report.body.report.caseId as string;
      const actions = `/api/v1/organizations/${orgSlug}/projects/${projectId}/enforcement-actions`;
      const susp = await b.server.call("POST", actions, { body: { kind: "suspension", reason: "Harassment", reportId, durationSeconds: 86_400 } });
      expect(susp.status).toBe(201);
      const warn = await b.server.call("POST", actions, { body: { kind: "warning", reason: "Be kind", reportId } });
      expect(warn.status).toBe(201);

      await page.goto(`${b.server.url}/#/cases/${caseId}`);
      const disclosure = page.locator("details.statement");
      await disclosure.first().waitFor();
      // Two lists show the case's actions (the subject's and the case's); only the suspension has one in each.
      const items = page.locator("li", { has: page.locator("details.statement") });
      expect(await items.filter({ hasText: "Be kind" }).count()).toBe(0);
      await disclosure.first().locator("summary").click();
      await page.getByText("DECISION_ACCOUNT_SUSPENDED").first().waitFor();
      const text = await disclosure.first().innerText();
      expect(text).toContain("end_date_account_restriction");
      expect(text).toContain("SOURCE_VOLUNTARY");
      expect(text).not.toContain("dash-subject-1");
      await expectNoA11yViolations(page, "the case page with a statement open");
      await b.shot(page, "statement-case.png");
    },
    BROWSER_T,
  );

  test(
    "project settings: map a category, narrow the territorial scope, save",
    async () => {
      const { orgSlug, projectId } = b.server.demo;
      await page.goto(`${b.server.url}/#/settings`);
      await page.getByRole("heading", { name: "Statements of reasons (DSA)" }).waitFor();
      await page.getByLabel("DSA category of spam").selectOption("STATEMENT_CATEGORY_SCAMS_AND_FRAUD");
      await page.getByLabel("Terms clause for spam").fill("Terms §4 (spam)");
      await page.getByRole("checkbox", { name: "FR", exact: true }).uncheck();
      await expectNoA11yViolations(page, "the settings page");
      await b.shot(page, "statement-settings.png");
      await page.locator("form[aria-labelledby=dsa-title] button[type=submit]").click();
      await page.getByText("Statement-of-reasons settings saved").waitFor();
      const saved = await b.server.call("GET", `/api/v1/organizations/${orgSlug}/projects/${projectId}/dsa-settings`);
      expect(saved.body.settings.categories.spam).toEqual({ category: "STATEMENT_CATEGORY_SCAMS_AND_FRAUD", ground: "DECISION_GROUND_INCOMPATIBLE_CONTENT", termsReference: "Terms §4 (spam)" });
      expect(saved.body.settings.territorialScope).toHaveLength(29);
      expect(saved.body.settings.territorialScope).not.toContain("FR");
    },
    BROWSER_T,
  );
});
