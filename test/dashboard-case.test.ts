/**
 * The case page in a real browser (Debian's Chromium, playwright-core): a link posted again and
 * again (a real link scan: a loopback page server and a fake Ollama) gives one card for its
 * identical automated reports and one for its identical analyses, each with its count and
 * expandable, and names who posted the link; tags added on the page show and persist; the
 * escalation (team, when) and the decision (what, code, who, when) show; a resolution with a
 * suspension is one step; focus goes to the case's heading after a decision; axe-core finds
 * nothing on the page or in its dialogs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";
import { startPageServer, type PageServer } from "./helpers/page-server.ts";
import { until } from "./helpers/wait.ts";

let fake: FakeOllama;
let pages: PageServer;
let b: DashboardSession;
let page: Page;
/** The case of the link posted three times, and the URL. */
let linkCase = "";
let url = "";

const DIALOG = "dialog[open]";
const SCANS = 3;

beforeAll(async () => {
  fake = startFakeOllama();
  // The scanned page reads as a scam (HIGH); anything else (the posts themselves) as harmless.
  fake.setDefault((req) => {
    const user = req.messages.find((m) => m.role === "user")?.content ?? "";
    return /watches|free money/i.test(user)
      ? { json: { reasoning: "A page selling replica watches: a scam.", categories: ["fraud_or_scam"], severity: "HIGH", confidence: 91 } }
      : { json: { reasoning: "Nothing wrong here.", categories: [], severity: "LOW", confidence: 5 } };
  });
  pages = await startPageServer();
  b = await openDashboard({
    OLLAMA_HOST: fake.url,
    FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
    FLAGSTAFF_SCAN_TIMEOUT_MS: "1500",
    FLAGSTAFF_JOB_POLL_MS: "100",
  });
  page = b.page;
  const { orgSlug, projectId } = b.server.demo;
  const settings = await b.server.call("PATCH", `/api/v1/organizations/${orgSlug}/projects/${projectId}/settings`, {
    body: { aiEnabled: true, scanLinks: true, aiThreshold: 70 },
  });
  expect(settings.status).toBe(200);

  // The same link, in three posts of the same user, one after another: each post's scan files a
  // report on the URL's case (the page from the scan cache after the first) and stores its analysis.
  url = `${pages.url}/page/shop-link`;
  const scanReports = async () =>
    ((await b.server.call("GET", `/api/v1/organizations/${orgSlug}/projects/${projectId}/content-analyses`)).body.analyses as { source: string; url: string | null; reportId: string | null }[]).filter(
      (a) => a.source === "link_scan" && a.url === url && a.reportId,
    );
  for (let i = 1; i <= SCANS; i++) {
    const posted = await b.server.call("POST", `/api/v1/organizations/${orgSlug}/projects/${projectId}/content`, {
      body: { content: `Great deal, see ${url} (post ${i})`, externalId: `post-with-link-${i}`, contentType: "post", author: { type: "user", externalId: "poster-7", display: { name: "Paula Poster", username: "paula" } } },
    });
    expect(posted.status).toBe(200);
    await until(`scan ${i}`, async () => (await scanReports()).length >= i, 20_000);
  }
  const [first] = await scanReports();
  linkCase = (await b.platform.report(first!.reportId!)).caseId!;
  // A person reports the same URL too: their report stays a card of its own.
  await b.sdkReport({
    target: { contentType: "url", contentExternalId: url, content: "Someone keeps posting this shop." },
    reporter: { type: "user", externalId: "u-rita", display: { name: "Rita Reporter" } },
    reason: "spam",
    description: "This shop link is everywhere today.",
  });
}, BROWSER_T);

afterAll(async () => {
  await b?.close();
  await pages?.stop();
  await fake?.stop();
});

const openCase = async (caseId: string, heading: string) => {
  await page.goto(`${b.server.url}/#/cases/${caseId}`);
  await page.getByRole("heading", { name: heading, level: 1 }).waitFor({ timeout: 15_000 });
};
const reportsSection = () => page.locator("section", { has: page.getByRole("heading", { name: /^Reports \(/ }) });
const analysesSection = () => page.locator("section", { has: page.getByRole("heading", { name: "AI analysis and link scans" }) });

describe("the case page", () => {
  test(
    "identical automated reports and identical analyses are one card each with their count; the link's poster is named",
    async () => {
      await openCase(linkCase, `url ${url}`);
      const reports = reportsSection();
      await reports.getByRole("heading", { name: `Reports (${SCANS + 1})` }).waitFor();
      // One card for the three scans, one for the person's report.
      await reports.getByText(`${SCANS} identical automated reports`).waitFor();
      expect(await reports.locator(".report").count()).toBe(2);
      expect(await reports.getByText("Automated AI analysis: severity HIGH").count()).toBe(1);
      await reports.getByText("This shop link is everywhere today.").waitFor();

      // The group expands to list each of its reports, and folds again.
      const toggle = reports.getByRole("button", { name: `Show all ${SCANS}` });
      expect(await toggle.getAttribute("aria-expanded")).toBe("false");
      await toggle.click();
      const list = reports.locator(".group-list");
      await list.waitFor({ state: "visible" });
      expect(await list.locator("li").count()).toBe(SCANS);
      expect(await reports.getByRole("button", { name: "Hide the list" }).getAttribute("aria-expanded")).toBe("true");
      await expectNoA11yViolations(page, "the case page with a group of identical reports opened");
      await reports.getByRole("button", { name: "Hide the list" }).click();
      await list.waitFor({ state: "hidden" });

      // The three link-scan analyses: one card with the count.
      const analyses = analysesSection();
      await analyses.getByText(`${SCANS} identical analyses`).waitFor();
      expect(await analyses.getByText("A page selling replica watches: a scam.").count()).toBe(1);
      await analyses.getByRole("button", { name: `Show all ${SCANS}` }).click();
      expect(await analyses.locator(".group-list li").count()).toBe(SCANS);

      // Who posted the link: the case's subject, and said on the scan's card.
      const subject = page.locator("section", { has: page.getByRole("heading", { name: "Subject", exact: true }) });
      await subject.getByRole("link", { name: "Paula Poster" }).waitFor();
      expect(await subject.getByText("No subject").count()).toBe(0);
      await reports.getByText("Link posted by").waitFor();
      await reports.locator(".report", { hasText: "Link posted by" }).getByRole("link", { name: "Paula Poster" }).waitFor();
      await expectNoA11yViolations(page, "the case page of a link scanned three times");
      await b.shot(page, "case-collapsed.png");
    },
    BROWSER_T,
  );

  test(
    "tags added on the case page show, persist across a reload, and can be removed",
    async () => {
      await openCase(linkCase, `url ${url}`);
      const tags = page.getByRole("list", { name: "Tags" });
      await tags.getByText("No tags.").waitFor();
      // The field opens on demand, with the focus in it.
      await page.getByRole("button", { name: "Add a tag…" }).click();
      await until("focus in the tag field", async () => (await page.evaluate(() => (document.activeElement as HTMLElement | null)?.getAttribute("list"))) !== null);
      await page.getByLabel("Add a tag").fill("Shop Spam");
      await page.getByRole("button", { name: "Add tag" }).click();
      await tags.getByText("shop-spam").waitFor(); // normalised as stored
      await page.getByLabel("Add a tag").fill("needs_review");
      await page.keyboard.press("Enter");
      await tags.getByText("needs_review").waitFor();
      expect((await b.platform.casePage(linkCase)).tags).toEqual(["needs_review", "shop-spam"]);
      await expectNoA11yViolations(page, "the case page with tags");

      await page.reload();
      await page.getByRole("heading", { name: `url ${url}`, level: 1 }).waitFor();
      await tags.getByText("shop-spam").waitFor();
      await tags.getByText("needs_review").waitFor();
      await page.getByRole("button", { name: "Remove tag needs_review" }).click();
      await tags.getByText("needs_review").waitFor({ state: "detached" });
      expect((await b.platform.casePage(linkCase)).tags).toEqual(["shop-spam"]);
      // The audit trail has the change.
      await page.locator(".timeline").getByText("CASE_TAGS_CHANGED").first().waitFor();
    },
    BROWSER_T,
  );

  test(
    "escalation and decision show with team, code, who and when; focus lands on the heading after each decision; the dialogs pass axe-core",
    async () => {
      await openCase(linkCase, `url ${url}`);
      const state = page.locator(".case-state");
      expect(await state.count()).toBe(0); // nothing to say yet

      // The Enforce dialog, checked and closed.
      await page.getByRole("button", { name: /^Enforce/ }).click();
      await page.locator(DIALOG).waitFor();
      await expectNoA11yViolations(page, "the Enforce dialog", DIALOG);
      await page.locator(DIALOG).getByRole("button", { name: "Cancel" }).click();
      await page.locator(DIALOG).waitFor({ state: "detached" });

      // Escalate to legal.
      await page.getByRole("button", { name: /^Escalate/ }).click();
      const dialog = page.locator(DIALOG);
      await dialog.waitFor();
      await expectNoA11yViolations(page, "the Escalate dialog", DIALOG);
      await dialog.getByLabel("Team").selectOption("legal");
      await dialog.getByRole("button", { name: "Confirm escalate" }).click();
      await state.getByText("Escalated to legal").waitFor({ timeout: 10_000 });
      await until("focus on the heading", async () => (await page.evaluate(() => document.activeElement?.id)) === "case-title");
      const escalation = (await b.platform.casePage(linkCase)).case.escalation;
      expect(escalation).toMatchObject({ team: "legal" });
      // When, as the page writes times (the browser's locale).
      const inPage = (iso: string) => page.evaluate((x) => new Date(x).toLocaleString(), iso);
      await state.getByText(`since ${await inPage(escalation!.at)}`).waitFor();

      // Resolve: the dialog, then the decision.
      await page.getByRole("button", { name: /^Resolve/ }).click();
      await dialog.waitFor();
      await expectNoA11yViolations(page, "the Resolve dialog", DIALOG);
      await dialog.getByLabel("Resolution").selectOption("FRAUD_OR_SCAM_CONFIRMED");
      await dialog.getByRole("button", { name: "Confirm resolve" }).click();
      await state.getByText(`Decision: Resolved (fraud or scam confirmed) by ${b.server.demo.adminEmail}`).waitFor({ timeout: 10_000 });
      // Decided: no longer escalated.
      await state.getByText("Escalated to legal").waitFor({ state: "detached" });
      await until("focus on the heading", async () => (await page.evaluate(() => document.activeElement?.id)) === "case-title");
      const decided = (await b.platform.casePage(linkCase)).case;
      expect(decided.decision).toMatchObject({ action: "resolve", code: "FRAUD_OR_SCAM_CONFIRMED", by: { type: "user" } });
      expect(decided.escalation).toBeNull();
      await state.getByText(`by ${b.server.demo.adminEmail} · ${await inPage(decided.decision!.at)}`).waitFor();
      await expectNoA11yViolations(page, "the decided case page");
      await b.shot(page, "case-decided.png");
    },
    BROWSER_T,
  );

  test(
    "Resolve → Account level action suspends the subject in the same step, and the case says so",
    async () => {
      const reportId = await b.sdkReport({
        subject: { type: "user", externalId: "u-troll", display: { name: "Terry Troll", username: "terry" } },
        reporter: { type: "user", externalId: "u-rita", display: { name: "Rita Reporter" } },
        reason: "harassment",
        description: "Insults in every thread I post in.",
      });
      const caseId = (await b.platform.report(reportId)).caseId;
      await openCase(caseId, "User Terry Troll");
      await page.keyboard.press("r");
      const dialog = page.locator(DIALOG);
      await dialog.waitFor();
      await dialog.getByLabel("Resolution").selectOption("ACCOUNT_LEVEL_ACTION");
      await dialog.getByLabel("Action", { exact: true }).selectOption("suspension");
      await dialog.getByLabel("Duration").fill("3");
      await dialog.getByLabel("Unit").selectOption("days");
      await dialog.getByLabel("Action reason").fill("Harassment of other members");
      await expectNoA11yViolations(page, "the Resolve dialog with its action fields", DIALOG);
      await dialog.getByRole("button", { name: "Confirm resolve" }).click();
      await page.locator(".case-state").getByText("Decision: Resolved (account level action)").waitFor({ timeout: 10_000 });
      const taken = page.locator("section", { has: page.getByRole("heading", { name: "Subject", exact: true }) });
      await taken.getByText("Harassment of other members").first().waitFor();
      await until("focus on the heading", async () => (await page.evaluate(() => document.activeElement?.id)) === "case-title");

      const detail = await b.platform.casePage(caseId);
      expect(detail.case.status).toBe("RESOLVED");
      expect(detail.caseEnforcement).toHaveLength(1);
      const action = detail.caseEnforcement[0]!;
      expect(action).toMatchObject({ kind: "suspension", reason: "Harassment of other members" });
      // Three days from when it was applied (the end is computed a moment before the start is stored).
      expect(Math.abs(Date.parse(action.endsAt!) - Date.parse(action.startsAt) - 3 * 86_400_000)).toBeLessThan(60_000);
    },
    BROWSER_T,
  );

  test(
    "the subject's earlier cases are those opened before this one, the latest first (issue 45, item 8)",
    async () => {
      const eve = { type: "user", externalId: "u-eve", display: { name: "Eve Earlier" } };
      const caseIds: string[] = [];
      for (const post of ["eve-post-1", "eve-post-2", "eve-post-3"]) {
        const reportId = await b.sdkReport({ subject: eve, target: { contentType: "post", contentExternalId: post, content: `Text of ${post}` }, reason: "spam" });
        caseIds.push((await b.platform.report(reportId)).caseId);
      }
      const earlier = async (caseId: string, post: string) => {
        await openCase(caseId, `post ${post}`);
        const subject = page.locator("section", { has: page.getByRole("heading", { name: "Subject", exact: true }) });
        const list = subject.getByRole("heading", { name: "Earlier cases" }).locator("xpath=following-sibling::*[1]");
        await list.waitFor();
        return list.getByRole("link").allInnerTexts();
      };
      expect(await earlier(caseIds[1]!, "eve-post-2")).toEqual(["eve-post-1"]);
      expect(await earlier(caseIds[2]!, "eve-post-3")).toEqual(["eve-post-2", "eve-post-1"]);
      expect(await earlier(caseIds[0]!, "eve-post-1")).toEqual([]);
      await page.locator("section", { has: page.getByRole("heading", { name: "Subject", exact: true }) }).getByText("None.").first().waitFor();
    },
    BROWSER_T,
  );
});
