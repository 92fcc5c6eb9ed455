/**
 * Search and the closed cases in a real browser (Debian's Chromium, playwright-core): the top
 * bar's box (and its `/` shortcut) opens the search page, which finds "Mallory Müller" and the
 * reports about her from "muller", marks the words found and can keep to open cases; the
 * identities page finds a word in the middle of a name and an external ID's number; the closed
 * cases page lists decided cases and filters them. axe-core finds nothing on either page.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";
import { until } from "./helpers/wait.ts";

let b: DashboardSession;
let page: Page;
const cases = { threat: "", dismissed: "", resolved: "" };

beforeAll(async () => {
  b = await openDashboard();
  page = b.page;
  const caseOf = async (reportId: string): Promise<string> => (await b.platform.report(reportId)).caseId;
  const threat = await b.sdkReport({
    target: { contentType: "post", contentExternalId: "search-threat", content: "Meet me by the Brücke after school, or else." },
    subject: { type: "user", externalId: "U-1007", display: { name: "Mallory Müller", username: "mallory" } },
    reason: "harassment",
    description: "Threatening messages from Müller every night.",
  });
  cases.threat = await caseOf(threat);
  const dismissed = await b.sdkReport({
    target: { contentType: "post", contentExternalId: "search-watches", content: "Cheap watches, visit my shop" },
    subject: { type: "user", externalId: "u-webb", display: { name: "Alice Webb", username: "awebb" } },
    reason: "spam",
  });
  await b.platform.trpc.reports.dismiss.mutate({ reportId: dismissed, reason: "not_actionable" });
  cases.dismissed = await caseOf(dismissed);
  const resolved = await b.sdkReport({
    target: { contentType: "comment", contentExternalId: "search-comment", content: "MULLER sells fake tickets here." },
    reason: "spam",
  });
  await b.platform.trpc.reports.resolve.mutate({ reportId: resolved, resolutionCode: "SPAM_CONFIRMED" });
  cases.resolved = await caseOf(resolved);
}, BROWSER_T);

afterAll(async () => {
  await b?.close();
});

/** The case ids of the search page's report hits, in order. */
const hitCases = (p: Page) => p.locator(".search-hit").evaluateAll((els) => els.map((e) => e.getAttribute("data-case-id")));

describe("search", () => {
  test(
    "the top bar's box finds Müller from “muller”: the identity, the reports, the words marked; only open cases on demand",
    async () => {
      await page.keyboard.press("/");
      const box = page.getByRole("searchbox", { name: "Find reports and people" });
      expect(await box.evaluate((el) => el === document.activeElement)).toBe(true);
      await box.fill("muller");
      await box.press("Enter");
      await page.getByRole("heading", { level: 1, name: "Search" }).waitFor();
      expect(await page.evaluate(() => location.hash)).toBe("#/search?q=muller");

      await page.getByRole("link", { name: "Mallory Müller", exact: true }).waitFor();
      await until("both reports found", async () => (await hitCases(page)).length === 2);
      // Newest first: the resolved comment, then the threat.
      expect(await hitCases(page)).toEqual([cases.resolved, cases.threat]);
      const marked = await page.locator(".search-hit mark").allInnerTexts();
      expect(marked).toContain("Müller");
      expect(marked).toContain("MULLER");
      expect(await page.getByTestId("search-summary").innerText()).toContain("2 reports in 2 cases, 1 identity match “muller”");
      await expectNoA11yViolations(page, "the search page with results");
      await b.shot(page, "search.png");

      // From the queue's point of view: only cases still open.
      await page.getByLabel("Only open cases").check();
      await until("the resolved case left out", async () => JSON.stringify(await hitCases(page)) === JSON.stringify([cases.threat]));
      expect(await page.evaluate(() => location.hash)).toBe("#/search?q=muller&open=1");

      // The identity's external ID, searched from the page's own field.
      const field = page.getByLabel("Words to find");
      await field.fill("U-1007");
      await page.getByRole("button", { name: "Search", exact: true }).click();
      const summary = page.getByTestId("search-summary");
      await until("the external ID's answer", async () => (await summary.innerText()) === "0 reports in 0 cases still open, 1 identity match “U-1007”");
      await page.getByRole("cell", { name: "U-1007" }).waitFor();

      // A word of the reported content, without its umlaut, and on to the case.
      await field.fill("brucke");
      await field.press("Enter");
      await page.locator(".search-hit mark", { hasText: "Brücke" }).waitFor();
      await page.locator(`.search-hit[data-case-id="${cases.threat}"] a.case-link`).click();
      await until("the case page", async () => (await page.evaluate(() => location.hash)).startsWith(`#/cases/${cases.threat}`));
    },
    BROWSER_T,
  );

  test(
    "the identities page finds a word in the middle of a name, any case, any accents, an external ID's number",
    async () => {
      await page.getByRole("link", { name: "Identities", exact: true }).click();
      const box = page.getByRole("searchbox", { name: "Search", exact: true });
      // Each answer differs from the one before, so each is the new query's.
      for (const [q, name, not] of [
        ["MULLER", "Mallory Müller", "Alice Webb"],
        ["webb", "Alice Webb", "Mallory Müller"],
        ["1007", "Mallory Müller", "Alice Webb"],
      ] as const) {
        await box.fill(q);
        await page.getByRole("link", { name, exact: true }).waitFor();
        await page.getByRole("link", { name: not, exact: true }).waitFor({ state: "detached" });
        expect({ q, rows: await page.locator("#main tbody tr").count() }).toEqual({ q, rows: 1 });
      }
    },
    BROWSER_T,
  );
});

describe("closed cases", () => {
  test(
    "lists the decided cases, newest decision first, and filters them by status and decision",
    async () => {
      await page.getByRole("link", { name: "Closed cases", exact: true }).click();
      await page.getByRole("heading", { level: 1, name: "Closed cases" }).waitFor();
      const rows = () => page.locator("table.closed-cases tbody tr").evaluateAll((els) => els.map((e) => e.getAttribute("data-case-id")));
      await until("both decided cases", async () => (await rows()).length === 2);
      expect(await rows()).toEqual([cases.resolved, cases.dismissed]);
      expect(await page.getByTestId("closed-count").innerText()).toBe("2 cases out of review");
      expect(await page.locator(`tr[data-case-id="${cases.resolved}"]`).innerText()).toContain("SPAM_CONFIRMED");
      await expectNoA11yViolations(page, "the closed cases");
      await b.shot(page, "closed-cases.png");

      await page.getByLabel("Status").selectOption("DISMISSED");
      await until("the dismissed case only", async () => JSON.stringify(await rows()) === JSON.stringify([cases.dismissed]));
      expect(await page.getByTestId("closed-count").innerText()).toBe("1 case with these filters");
      expect(await page.locator(`tr[data-case-id="${cases.dismissed}"]`).innerText()).toContain("not_actionable");

      await page.getByRole("button", { name: "Clear filters" }).click();
      await page.getByLabel("Decision").selectOption("resolve");
      await until("the resolved case only", async () => JSON.stringify(await rows()) === JSON.stringify([cases.resolved]));
      await expectNoA11yViolations(page, "the closed cases, filtered");
    },
    BROWSER_T,
  );
});
