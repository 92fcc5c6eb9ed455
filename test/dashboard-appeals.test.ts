/**
 * The appeals inbox in a real browser (Debian's Chromium, playwright-core): three reports
 * resolved with a suspension (the SDK's resolve route) and appealed by their users (the SDK's
 * appeal route). The Appeals page lists them oldest first with the user's text, the action and
 * its case; one is overturned and one upheld with a note in the dialog; the decided view, the
 * case page and the identity page show the outcome and the note; revoking the third appeal's
 * action on its case page settles the appeal (overturned) and closes the case instead of leaving
 * it in APPEALED. axe-core finds nothing on the page, in the dialog or in the appeals sections.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";

let b: DashboardSession;
let page: Page;

const DIALOG = "dialog[open]";

interface Appealed {
  name: string;
  post: string;
  text: string;
  reportId: string;
  caseId: string;
  actionId: string;
  appealId: string;
}
const appealed: Appealed[] = [];

/** A report about `name`'s post, resolved with a 7-day suspension, and the user's appeal of it. */
async function appealedSuspension(name: string, post: string, text: string): Promise<Appealed> {
  const { projectId } = b.server.demo;
  const reportId = await b.sdkReport({
    subject: { type: "user", externalId: `u-${post}`, display: { name } },
    target: { contentType: "post", contentExternalId: post, content: "You are pathetic and everyone knows it." },
    reason: "harassment",
    description: "Insults in the replies.",
  });
  const resolved = await b.server.call("POST", `/reports/${reportId}/resolve`, {
    body: { resolutionCode: "ACCOUNT_LEVEL_ACTION", note: "Clear harassment", action: { kind: "suspension", durationSeconds: 7 * 24 * 3600, reason: "Harassment of another user" } },
  });
  expect(resolved.status).toBe(200);
  const actionId = resolved.body.enforcementActionId as string;
  const appeal = await b.server.call("POST", `/projects/${projectId}/enforcement-actions/${actionId}/appeal`, { body: { text } });
  expect(appeal.status).toBe(201);
  const caseId = (await b.platform.report(reportId)).caseId as string;
  return { name, post, text, reportId, caseId, actionId, appealId: appeal.body.appeal.id };
}

beforeAll(async () => {
  b = await openDashboard();
  page = b.page;
  const users: [string, string, string][] = [
    ["Ada Appellant", "appeal-post-1", "I was answering someone who insulted me first; please read the whole thread."],
    ["Bo Baxter", "appeal-post-2", "I did nothing wrong, this is censorship."],
    ["Cy Cole", "appeal-post-3", "My little brother used my account."],
  ];
  for (const [name, post, text] of users) {
    appealed.push(await appealedSuspension(name, post, text));
    // Filed one after another: a millisecond apart at least, so "oldest first" has one answer.
    await Bun.sleep(5);
  }
}, BROWSER_T);

afterAll(async () => {
  await b?.close();
});

const card = (a: Appealed) => page.locator("article.appeal", { hasText: a.text });
const appealOf = (a: Appealed) => b.platform.trpc.enforcement.getAppeal.query({ orgSlug: b.server.demo.orgSlug, appealId: a.appealId });

/** Decides `a` in the dialog its card opens: the dialog passes axe-core first. */
async function decide(a: Appealed, button: RegExp, note: string, confirm: string) {
  await card(a).getByRole("button", { name: button }).click();
  const dialog = page.locator(DIALOG);
  await dialog.waitFor();
  // The note is where the dialog starts.
  await dialog.getByLabel("Note").waitFor();
  expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("TEXTAREA");
  await expectNoA11yViolations(page, `the ${confirm} dialog`, DIALOG);
  // No note, no decision.
  expect(await dialog.getByRole("button", { name: confirm }).isDisabled()).toBe(true);
  await dialog.getByLabel("Note").fill(note);
  await dialog.getByRole("button", { name: confirm }).click();
  await dialog.waitFor({ state: "detached", timeout: 10_000 });
}

describe("the appeals inbox", () => {
  test(
    "lists pending appeals oldest first, each with the user's text, the action (kind, reason, duration, subject) and a link to its case",
    async () => {
      await page.getByRole("link", { name: "Appeals", exact: true }).click();
      await page.getByRole("heading", { name: "Appeals", level: 1 }).waitFor();
      await card(appealed[2]!).waitFor({ timeout: 10_000 });
      expect(await page.locator("article.appeal blockquote.appeal-text").allInnerTexts()).toEqual(appealed.map((a) => a.text));
      expect(await page.getByRole("button", { name: /^Pending/ }).getAttribute("aria-pressed")).toBe("true");
      expect(await page.getByRole("button", { name: /^Pending/ }).innerText()).toContain("3");

      const ada = card(appealed[0]!);
      await ada.getByRole("heading", { name: "Ada Appellant appeals a suspension" }).waitFor();
      const facts = (await ada.locator("dl").textContent()) ?? "";
      expect(facts).toContain("Suspension");
      expect(facts).toContain("Harassment of another user");
      expect(facts).toContain("7 d (until");
      await ada.getByRole("link", { name: "Ada Appellant" }).waitFor();
      expect(await ada.getByRole("link", { name: "post appeal-post-1" }).getAttribute("href")).toBe(`#/cases/${appealed[0]!.caseId}`);
      await ada.locator("[data-status='APPEALED']").waitFor();
      await expectNoA11yViolations(page, "the appeals inbox");
      await b.shot(page, "appeals-inbox.png");
    },
    BROWSER_T,
  );

  test(
    "overturn one and uphold another with a note; the decided view shows each outcome and note",
    async () => {
      const [ada, bo] = [appealed[0]!, appealed[1]!];
      await decide(ada, /^Overturn/, "Read the thread: Ada answered an insult. Suspension lifted.", "Overturn the appeal");
      await page.getByText("Appeal overturned: 1 action revoked").waitFor();
      await card(ada).waitFor({ state: "detached" });
      const overturned = await appealOf(ada);
      expect(overturned.appeal).toMatchObject({ status: "overturned", decision: { note: "Read the thread: Ada answered an insult. Suspension lifted.", by: { type: "user" } } });
      expect(overturned.action.status).toBe("revoked");

      await decide(bo, /^Uphold/, "Repeated insults; the suspension stands.", "Uphold the appeal");
      await page.getByText("Appeal upheld: the suspension stands").waitFor();
      await card(bo).waitFor({ state: "detached" });
      const upheld = await appealOf(bo);
      expect(upheld.appeal).toMatchObject({ status: "upheld", decision: { note: "Repeated insults; the suspension stands." } });
      expect(upheld.action.status).toBe("active");
      expect((await b.platform.casePage(bo.caseId)).case.status).toBe("CLOSED");

      // One left to decide.
      expect(await page.locator("article.appeal").count()).toBe(1);
      await page.getByRole("button", { name: /^Decided/ }).click();
      await card(bo).waitFor();
      // Newest decision first.
      expect(await page.locator("article.appeal blockquote.appeal-text").allInnerTexts()).toEqual([bo.text, ada.text]);
      await card(ada).locator("[data-appeal-status='overturned']").first().waitFor();
      expect(await card(ada).locator("blockquote.appeal-note").innerText()).toBe("Read the thread: Ada answered an insult. Suspension lifted.");
      await card(ada).getByText(`by ${b.server.demo.adminEmail}`).waitFor();
      await card(bo).locator("[data-appeal-status='upheld']").first().waitFor();
      expect(await card(bo).locator("blockquote.appeal-note").innerText()).toBe("Repeated insults; the suspension stands.");
      expect(await page.locator("article.appeal").getByRole("button", { name: /^(Uphold|Overturn)/ }).count()).toBe(0);
      await expectNoA11yViolations(page, "the decided appeals");
      await b.shot(page, "appeals-decided.png");
    },
    BROWSER_T,
  );

  test(
    "the case page and the identity page show the decided appeal with its note",
    async () => {
      const ada = appealed[0]!;
      await card(ada).getByRole("link", { name: "post appeal-post-1" }).click();
      await page.getByRole("heading", { name: "post appeal-post-1", level: 1 }).waitFor();
      const onCase = page.locator("section.appeals-section");
      await onCase.getByRole("heading", { name: "Appeals (1)" }).waitFor({ timeout: 10_000 });
      await onCase.getByText(ada.text).waitFor();
      await onCase.locator("[data-appeal-status='overturned']").first().waitFor();
      expect(await onCase.locator("blockquote.appeal-note").innerText()).toBe("Read the thread: Ada answered an insult. Suspension lifted.");
      await page.locator(".case-head [data-status='CLOSED']").waitFor();
      await expectNoA11yViolations(page, "the case page's appeals", "section.appeals-section");

      await onCase.getByRole("link", { name: "Ada Appellant" }).click();
      await page.getByRole("heading", { name: "Ada Appellant", level: 1 }).waitFor();
      const onIdentity = page.locator("section.appeals-section");
      await onIdentity.getByRole("heading", { name: "Appeals (1)" }).waitFor({ timeout: 10_000 });
      await onIdentity.getByText(ada.text).waitFor();
      expect(await onIdentity.locator("blockquote.appeal-note").innerText()).toBe("Read the thread: Ada answered an insult. Suspension lifted.");
      expect(await onIdentity.getByRole("link", { name: "post appeal-post-1" }).getAttribute("href")).toBe(`#/cases/${ada.caseId}`);
      await expectNoA11yViolations(page, "the identity page's appeals", "section.appeals-section");
    },
    BROWSER_T,
  );

  test(
    "revoking the appealed action on the case page overturns the appeal and closes the case (never stuck in APPEALED)",
    async () => {
      const cy = appealed[2]!;
      await page.goto(`${b.server.url}/#/cases/${cy.caseId}`);
      await page.getByRole("heading", { name: "post appeal-post-3", level: 1 }).waitFor({ timeout: 15_000 });
      await page.locator(".case-head [data-status='APPEALED']").waitFor();
      const onCase = page.locator("section.appeals-section");
      await onCase.locator("[data-appeal-status='pending']").first().waitFor({ timeout: 10_000 });

      // The page asks in its own dialog before revoking, with a reason kept on the action.
      await page.getByRole("button", { name: /^Revoke the / }).first().click();
      const revoking = page.getByRole("dialog", { name: /^Revoke the / });
      await revoking.getByLabel("Reason (optional)").fill("Appeal convinced us");
      await revoking.getByRole("button", { name: /^Revoke the / }).click();
      await page.getByText("Action revoked", { exact: true }).waitFor();
      await page.locator(".case-head [data-status='CLOSED']").waitFor({ timeout: 10_000 });
      await onCase.locator("[data-appeal-status='overturned']").first().waitFor({ timeout: 10_000 });
      // The revocation's reason settles the appeal with it.
      expect(await onCase.locator("blockquote.appeal-note").innerText()).toBe("Overturned by revoking the action: Appeal convinced us");

      const settled = await appealOf(cy);
      expect(settled.appeal).toMatchObject({ status: "overturned", decision: { note: "Overturned by revoking the action: Appeal convinced us", by: { type: "user" } } });
      expect(settled.action).toMatchObject({ status: "revoked", revokeReason: "Appeal convinced us" });
      expect((await b.platform.report(cy.reportId)).status).toBe("CLOSED");

      // Nothing left waiting in the inbox.
      await page.getByRole("link", { name: "Appeals", exact: true }).click();
      await page.getByRole("heading", { name: "Appeals", level: 1 }).waitFor();
      await page.getByText("No appeal is waiting for a decision.").waitFor({ timeout: 10_000 });
      expect(await page.getByRole("button", { name: /^Pending/ }).innerText()).toContain("0");
      expect(await page.getByRole("button", { name: /^Decided/ }).innerText()).toContain("3");
    },
    BROWSER_T,
  );
});
