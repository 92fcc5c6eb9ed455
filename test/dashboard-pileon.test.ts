/**
 * A pile-on reads as one case (issue 27, item 7), in a real browser (Debian's Chromium,
 * playwright-core): 48 reports from 45 reporters on one harmless post (two trusted flaggers,
 * three muted, five with a history elsewhere, the rest new). The case page shows the reporter
 * summary first, counted by the server (cases.reporterSummary), with the right figures; the
 * report cards are grouped by reason and start folded (and so do the audit trail's runs of alike
 * events and the reporters list), so the page is a fraction of its unfolded height (both
 * printed); a group unfolds and folds again; axe-core finds nothing with the summary shown and
 * the groups folded, nor with them unfolded. Each reporter's accuracy, on the case page and on
 * their identity page, says what the summary's bands say (issue 45, item 6).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { CASE_PAGE_REPORTS } from "../src/domain/cases/cases.ts";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";

let b: DashboardSession;
let page: Page;
let caseId = "";
const POST = { contentType: "post", contentExternalId: `harmless-post-${crypto.randomUUID().slice(0, 8)}` };
const REPORTERS = 45;
/** Reporters 0–1 trusted flaggers, 2–4 muted, 5–9 with earlier reports elsewhere (not new). */
const TRUSTED = [0, 1];
const MUTED = [2, 3, 4];
const reporter = (i: number) => ({ type: "user", externalId: `pile-${POST.contentExternalId}-${i}`, display: { name: `Reporter ${i}` } });
/** Reasons of the report of reporter i: 30 harassment, 10 spam, 5 both; reporters 10–12 (harassment) report twice. */
const reasonsOf = (i: number) => (i < 30 ? ["harassment"] : i < 40 ? ["spam"] : ["harassment", "spam"]);

beforeAll(async () => {
  b = await openDashboard();
  page = b.page;
  const { orgSlug, projectId } = b.server.demo;
  const elsewhere = async (i: number) =>
    (await b.sdkReport({ reason: "spam", reporter: reporter(i), target: { contentType: "post", contentExternalId: `elsewhere-${crypto.randomUUID()}` } })) as string;
  // A history: reporters 5 and 6 upheld three times, 7 dismissed three times, 8 once, 9 undecided.
  for (const i of [5, 6]) for (let k = 0; k < 3; k++) await b.platform.resolve(await elsewhere(i), { resolutionCode: "SPAM_CONFIRMED" });
  for (let k = 0; k < 3; k++) await b.platform.dismiss(await elsewhere(7), "false_positive");
  await b.platform.dismiss(await elsewhere(8), "false_positive");
  await elsewhere(9);

  for (const i of [...TRUSTED, ...MUTED]) {
    expect((await b.server.call("PUT", `/projects/${projectId}/identities/user/${reporter(i).externalId}`, { body: {} })).status).toBe(200);
    await b.platform.trpc.identities.updateReporter.mutate({
      orgSlug, projectId, typeName: "user", externalId: reporter(i).externalId,
      ...(TRUSTED.includes(i) ? { trustedFlagger: true } : { mutedUntil: new Date(Date.now() + 86_400_000).toISOString(), muteReason: "brigading" }),
    });
  }
  // The pile-on: the first report from a reporter neither muted nor trusted (a muted reporter's report alone would dismiss its case).
  const order = [10, ...Array.from({ length: REPORTERS }, (_, i) => i).filter((i) => i !== 10), 10, 11, 12];
  let first = "";
  for (const i of order) {
    const id = await b.sdkReport({ reason: reasonsOf(i), reporter: reporter(i), target: POST, description: `Reporter ${i} finds this post offensive and wants it gone at once.` });
    first ||= id;
  }
  caseId = (await b.platform.report(first)).caseId;
}, BROWSER_T);

afterAll(async () => {
  await b?.close();
});

const pageHeight = () => page.evaluate(() => document.documentElement.scrollHeight);
const reportsSection = () => page.locator("section", { has: page.getByRole("heading", { name: /^Reports \(/ }) });

describe("a case with many reporters", () => {
  test(
    "the summary comes first with the server's counts; the cards are grouped by reason, folded, and the page is short",
    async () => {
      await page.goto(`${b.server.url}/#/cases/${caseId}`);
      await page.getByRole("heading", { name: `post ${POST.contentExternalId}`, level: 1 }).waitFor({ timeout: 15_000 });
      await reportsSection().getByRole("heading", { name: "Reports (48)" }).waitFor();
      await page.getByRole("heading", { name: "Audit trail" }).waitFor();
      console.log(`pile-on case page height once its reports and audit trail are drawn: ${await pageHeight()} px`);
      const summary = page.locator("section", { has: page.getByRole("heading", { name: "Reporter summary" }) });
      await summary.waitFor({ timeout: 15_000 });
      const figure = async (name: string) => (await summary.getByTestId(`summary-${name}`).textContent())?.trim();
      expect(await figure("reports")).toBe("48");
      expect(await figure("distinctReporters")).toBe(String(REPORTERS));
      expect(await figure("newReporters")).toBe(String(REPORTERS - 5));
      expect(await figure("trustedReporters")).toBe("2");
      expect(await figure("mutedReporters")).toBe("3");
      expect(await figure("reportsLastHour")).toBe("48");
      expect(await figure("accuracy-mostlyUpheld")).toBe("2");
      expect(await figure("accuracy-mostlyNotUpheld")).toBe("1");
      expect(await figure("accuracy-fewDecided")).toBe("1");
      expect(await figure("accuracy-noDecided")).toBe(String(REPORTERS - 4));
      expect(await figure("reason-harassment")).toBe(String(30 + 3 + 5)); // reporters 10, 11 and 12 twice
      expect(await figure("reason-spam")).toBe(String(10 + 5));
      // The summary comes before the cards.
      const [summaryTop, reportsTop] = await Promise.all([summary.boundingBox(), reportsSection().boundingBox()]);
      expect(summaryTop!.y).toBeLessThan(reportsTop!.y);

      // Grouped by reasons, each group folded: no card is laid out until its group is opened.
      const reports = reportsSection();
      const groups = reports.getByRole("button", { name: /reports? ·/ });
      expect(await groups.count()).toBe(3);
      const harassment = reports.getByRole("button", { name: /^harassment · 33 reports · 30 reporters/ });
      expect(await harassment.getAttribute("aria-expanded")).toBe("false");
      expect(await reports.locator(".report:visible").count()).toBe(0);
      // The audit trail's 40-odd "Report filed" fold into runs, and the reporters list to its first five.
      const audit = page.locator("section", { has: page.getByRole("heading", { name: "Audit trail" }) });
      expect(await audit.locator(".audit-run").count()).toBeGreaterThan(0);
      expect(await audit.locator("ol.timeline > li").count()).toBeLessThan(15);
      const reporters = page.locator("section", { has: page.getByRole("heading", { name: "Reporters", exact: true }) });
      expect(await reporters.getByRole("link").count()).toBe(5);
      const folded = await pageHeight();
      await b.shot(page, "pileon-case-folded.png");
      await expectNoA11yViolations(page, "the case page of a pile-on, summary shown and groups folded");

      // Every group unfolded: what the page was before (one card per report).
      for (const g of await groups.all()) await g.click();
      await reports.locator(".report").first().waitFor();
      expect(await reports.locator(".report:visible").count()).toBe(48);
      const unfolded = await pageHeight();
      console.log(`pile-on case page height (48 reports, 45 reporters, 1366 px wide): ${folded} px folded, ${unfolded} px with every group unfolded`);
      expect(folded).toBeLessThan(unfolded / 3);
      expect(await harassment.getAttribute("aria-expanded")).toBe("true");
      await expectNoA11yViolations(page, "the case page of a pile-on, every group unfolded");

      // A group folds again.
      await harassment.click();
      expect(await harassment.getAttribute("aria-expanded")).toBe("false");
      expect(await reports.locator(".report:visible").count()).toBe(48 - 33);
    },
    BROWSER_T,
  );

  test(
    "each reporter's accuracy says what the summary's bands say: nothing decided is no figure, fewer than three are too few to tell (case page and identity page)",
    async () => {
      await page.goto(`${b.server.url}/#/cases/${caseId}`);
      const reporters = page.locator("section", { has: page.getByRole("heading", { name: "Reporters", exact: true }) });
      await reporters.getByRole("button", { name: /^Show \d+ more/ }).click();
      const accuracyOf = (i: number) => reporters.getByRole("listitem").filter({ has: page.getByRole("link", { name: `Reporter ${i}`, exact: true }) }).getByTestId("reporter-accuracy");
      // Reporter 10: nothing decided (the server's smoothed figure is 50 %: no finding).
      await expect(accuracyOf(10).textContent()).resolves.toBe("No decided report yet");
      // Reporter 8: one dismissal; 5: three upheld, (3 + 1) / (3 + 2); 7: three dismissed, 1 / 5.
      await expect(accuracyOf(8).textContent()).resolves.toBe("1 decided: too few to tell");
      await expect(accuracyOf(5).textContent()).resolves.toBe("Accuracy 80 % of 3 decided");
      await expect(accuracyOf(7).textContent()).resolves.toBe("Accuracy 20 % of 3 decided");
      await expectNoA11yViolations(page, "the reporters of a pile-on with their accuracy");

      // Their identity pages, reached from the links.
      const links = Object.fromEntries(
        await Promise.all([10, 8, 5].map(async (i) => [i, await reporters.getByRole("link", { name: `Reporter ${i}`, exact: true }).getAttribute("href")] as const)),
      );
      const identityAccuracy = async (i: number) => {
        await page.goto(`${b.server.url}/${links[i]}`);
        await page.getByRole("heading", { name: `Reporter ${i}`, level: 1 }).waitFor({ timeout: 15_000 });
        const shown = page.locator("section", { has: page.getByRole("heading", { name: "As a reporter" }) }).getByTestId("reporter-accuracy");
        await shown.waitFor({ timeout: 15_000 });
        return shown.textContent();
      };
      expect(await identityAccuracy(10)).toBe("No decided report yet");
      expect(await identityAccuracy(8)).toBe("1 decided: too few to tell");
      expect(await identityAccuracy(5)).toBe("80 % (3 decided)");
      await expectNoA11yViolations(page, "an identity page with its accuracy");
    },
    BROWSER_T,
  );

  test(
    "a case of more reports than the page shows says how many it has and shows the newest (CASE_PAGE_REPORTS), and a linked older one",
    async () => {
      const post = { contentType: "post", contentExternalId: `big-pile-${crypto.randomUUID().slice(0, 8)}` };
      let first = "";
      let last = "";
      for (let i = 0; i <= CASE_PAGE_REPORTS; i++) {
        last = await b.sdkReport({ reason: i === 0 ? ["threats"] : ["spam"], reporter: { type: "user", externalId: `big-pile-${i}` }, target: post, description: `Report ${i}` });
        first ||= last;
      }
      const bigCase = (await b.platform.report(first)).caseId;
      await page.goto(`${b.server.url}/#/cases/${bigCase}?report=${last}`);
      await reportsSection().getByRole("heading", { name: `Reports (${CASE_PAGE_REPORTS + 1})` }).waitFor({ timeout: 15_000 });
      expect(await reportsSection().getByTestId("reports-shown").textContent()).toBe(`The newest ${CASE_PAGE_REPORTS} are shown.`);
      // The newest report is there (its group opened by the link); the first, the only threat, is not.
      await page.locator(`#report-${last}`).waitFor({ state: "visible", timeout: 15_000 });
      expect(await reportsSection().getByRole("button", { name: /^threats ·/ }).count()).toBe(0);
      await expectNoA11yViolations(page, "the case page of more reports than it shows");
      // A link to the first report, older than those shown, shows it too.
      await page.goto(`${b.server.url}/#/cases/${bigCase}?report=${first}`);
      await page.getByTestId("linked-report").locator(`#report-${first}`).waitFor({ state: "visible", timeout: 15_000 });
      await expectNoA11yViolations(page, "the case page with a linked report older than those shown");
    },
    BROWSER_T,
  );

  test(
    "a link to one report opens its group",
    async () => {
      const reportId = await b.sdkReport({ reason: ["threats"], reporter: reporter(44), target: POST, description: "A lone threat report." });
      await page.goto(`${b.server.url}/#/cases/${caseId}?report=${reportId}`);
      const card = page.locator(`#report-${reportId}`);
      await card.waitFor({ state: "visible", timeout: 15_000 });
      expect(await reportsSection().getByRole("button", { name: /^threats · 1 report/ }).getAttribute("aria-expanded")).toBe("true");
    },
    BROWSER_T,
  );
});
