/**
 * The review screen protects the reviewer (issue 42, item 4) in a real browser (Debian's
 * Chromium, playwright-core), with axe-core at 0 violations on each new screen:
 * - the Viewing page (the user menu's "Viewing"): the preview picture blurred and in grayscale by
 *   default (the filter Chromium applies), revealed by the Reveal button (aria-pressed), by a
 *   click on it and by the keyboard, blurred again by Escape, by the pointer leaving and by the
 *   focus leaving; "Show colours";
 * - a moderator's preferences (maximum blur, no grayscale, reveal on hover) previewed before
 *   saving, kept after a reload, and hover revealing until the pointer leaves;
 * - the warning screen before a case of a graphic category and before a CRITICAL one (why, no
 *   reported content, no shortcut acting behind it), "Back to the queue", "Show the case" (focus
 *   on the case's heading), again on coming back; none before an ordinary case; in review mode
 *   with "Skip this case…"; turned off by the moderator, then required by the organization;
 * - an admin marking a category graphic on the project settings page;
 * - no Content-Security-Policy complaint in the whole session (the blur's radius reaches the
 *   stylesheet as a CSS variable set through the CSSOM).
 * The viewer on a case's own attachments is test/dashboard-attachments.test.ts's; its rules are
 * test/media-reveal.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BrowserContext, Locator, Page } from "playwright-core";
import { BROWSER_T, expectNoA11yViolations, openDashboard, signIn, type DashboardSession } from "./helpers/browser.ts";
import { until } from "./helpers/wait.ts";

let b: DashboardSession;
let mod: { id: string; email: string; context: BrowserContext; page: Page };
/** CSP complaints of both users' pages. */
const csp: string[] = [];
const cases = { graphic: "", critical: "", plain: "", toMark: "" };
/** The texts reported: none may show on a warning screen. */
const TEXT = { graphic: "Footage of the crash, shown up close.", critical: "A goodbye note posted tonight." };

async function watchCsp(context: BrowserContext): Promise<void> {
  await context.exposeBinding("__cspViolation", (_source, what: string) => void csp.push(what));
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => (window as any).__cspViolation(`${e.effectiveDirective} blocked ${e.blockedURI || "inline"}`));
  });
  context.on("console", (msg) => {
    if (msg.type() === "error" && /Content Security Policy/i.test(msg.text())) csp.push(msg.text());
  });
}

beforeAll(async () => {
  b = await openDashboard();
  await watchCsp(b.admin);
  const email = `mod-${crypto.randomUUID().slice(0, 6)}@example.com`;
  const made = await b.platform.trpc.users.create.mutate({ email, role: "moderator" });
  const context = await b.browser.newContext({ viewport: { width: 1366, height: 900 } });
  await watchCsp(context);
  const page = await context.newPage();
  await signIn(page, b.server.url, email, made.generatedPassword!);
  mod = { id: made.user.id, email, context, page };
  const caseOf = async (reportId: string) => (await b.platform.report(reportId)).caseId!;
  cases.graphic = await caseOf(await b.sdkReport({ target: { contentType: "video", contentExternalId: "crash-1", content: TEXT.graphic }, reason: "violence" }));
  cases.critical = await caseOf(await b.sdkReport({ target: { contentType: "post", contentExternalId: "note-1", content: TEXT.critical }, reason: "self_harm" }));
  cases.plain = await caseOf(await b.sdkReport({ target: { contentType: "post", contentExternalId: "spam-1", content: "Cheap watches here." }, reason: "spam" }));
  cases.toMark = await caseOf(await b.sdkReport({ target: { contentType: "post", contentExternalId: "insult-1", content: "You are a fool." }, reason: "harassment" }));
}, BROWSER_T);

afterAll(async () => {
  await b?.close();
});

const go = (p: Page, hash: string) => p.evaluate((h) => void (location.hash = h), hash);
/** The filter Chromium applies to an element now (after its transition). */
const filterOf = (l: Locator) => l.evaluate((el) => getComputedStyle(el).filter);
async function expectFilter(l: Locator, want: string): Promise<void> {
  let last = "";
  await until(`the filter ${want} (last: ${last})`, async () => (last = await filterOf(l)) === want, 5000).catch(() => {
    throw new Error(`the preview's filter stayed ${last}, expected ${want}`);
  });
}
const preview = (p: Page) => p.getByRole("group", { name: "Preview of these choices" });
const pointerAway = (p: Page) => p.mouse.move(2, 2);

async function openViewingPage(p: Page): Promise<void> {
  await p.getByRole("link", { name: "Viewing", exact: true }).click();
  await p.getByRole("heading", { level: 1, name: "Viewing" }).waitFor();
  await preview(p).locator("img").waitFor();
}

describe("the Viewing page and its preview", () => {
  test(
    "blurred and in grayscale by default; revealed by the button, a click and the keyboard; blurred again by Escape, the pointer leaving and the focus leaving",
    async () => {
      const p = mod.page;
      await openViewingPage(p);
      const img = preview(p).locator("img");
      const reveal = preview(p).getByRole("button", { name: /^Reveal/ });
      const colours = preview(p).getByRole("button", { name: /^Show colours/ });
      // Flagstaff's defaults: a strong blur (24 px) and grayscale.
      await expectFilter(img, "blur(24px) grayscale(1)");
      expect(await reveal.getAttribute("aria-pressed")).toBe("false");
      await expectNoA11yViolations(p, "the Viewing page, blurred");
      await b.shot(p, "viewing.png");

      // The button: revealed (still in grayscale), then Escape blurs it again.
      await reveal.click();
      expect(await reveal.getAttribute("aria-pressed")).toBe("true");
      await expectFilter(img, "grayscale(1)");
      await expectNoA11yViolations(p, "the Viewing page, revealed");
      await p.keyboard.press("Escape");
      await expectFilter(img, "blur(24px) grayscale(1)");
      expect(await reveal.getAttribute("aria-pressed")).toBe("false");
      expect(await p.evaluate(() => location.hash)).toBe("#/viewing");

      // A click on the picture reveals it; the pointer leaving blurs it again.
      await img.click();
      await expectFilter(img, "grayscale(1)");
      await pointerAway(p);
      await expectFilter(img, "blur(24px) grayscale(1)");

      // The keyboard: Space on the button reveals, focus moving within the item keeps it, leaving the item blurs it.
      await reveal.focus();
      await p.keyboard.press("Space");
      await expectFilter(img, "grayscale(1)");
      await p.keyboard.press("Tab");
      expect(await colours.evaluate((el) => el === document.activeElement)).toBe(true);
      await p.keyboard.press("Space");
      await expectFilter(img, "none");
      expect(await colours.getAttribute("aria-pressed")).toBe("true");
      await p.keyboard.press("Tab");
      await expectFilter(img, "blur(24px) grayscale(1)");
      expect(await colours.getAttribute("aria-pressed")).toBe("false");
    },
    BROWSER_T,
  );

  test(
    "a moderator's preferences: previewed before saving, kept after a reload; hover reveals until the pointer leaves",
    async () => {
      const p = mod.page;
      await openViewingPage(p);
      const img = preview(p).locator("img");
      await p.getByLabel("Blur", { exact: true }).selectOption("maximum");
      await p.getByLabel("Grayscale", { exact: true }).selectOption("off");
      await p.getByLabel("Reveal a blurred preview").selectOption("hover");
      // The preview shows the choices before they are saved.
      await expectFilter(img, "blur(40px)");
      expect(await preview(p).getByRole("button", { name: /^Show colours/ }).count()).toBe(0);
      await p.getByRole("button", { name: "Save my preferences" }).click();
      await p.getByText("Viewing preferences saved").waitFor();
      await p.reload();
      await preview(p).locator("img").waitFor();
      expect(await p.getByLabel("Blur", { exact: true }).inputValue()).toBe("maximum");
      expect(await p.getByLabel("Grayscale", { exact: true }).inputValue()).toBe("off");
      expect(await p.getByLabel("Reveal a blurred preview").inputValue()).toBe("hover");
      const kept = preview(p).locator("img");
      await expectFilter(kept, "blur(40px)");
      // Hover mode: resting on the picture reveals it, leaving blurs it again.
      await kept.hover();
      await expectFilter(kept, "none");
      await pointerAway(p);
      await expectFilter(kept, "blur(40px)");
      await expectNoA11yViolations(p, "the Viewing page with a moderator's choices");
      // At tablet width the preview goes under the choices, and nothing overflows sideways.
      await p.setViewportSize({ width: 820, height: 1180 });
      try {
        expect(await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
        await expectNoA11yViolations(p, "the Viewing page at tablet width");
      } finally {
        await p.setViewportSize({ width: 1366, height: 900 });
      }
    },
    BROWSER_T,
  );
});

describe("the warning screen", () => {
  const warning = (p: Page) => p.getByTestId("case-warning");

  test(
    "before a graphic case and a CRITICAL one: why, nothing of the reports, no shortcut behind it; back to the queue, show the case; none before an ordinary case",
    async () => {
      const p = mod.page;
      await go(p, `#/cases/${cases.graphic}`);
      await p.getByRole("heading", { level: 1, name: "This case may be distressing" }).waitFor();
      await warning(p).getByText("marks as graphic").waitFor();
      expect(await warning(p).locator("code").allInnerTexts()).toEqual(["violence"]);
      expect(await p.getByText(TEXT.graphic).count()).toBe(0);
      expect(await p.evaluate(() => document.activeElement?.id)).toBe("case-title");
      await expectNoA11yViolations(p, "the warning screen");
      await b.shot(p, "case-warning.png");
      // The case's shortcuts do not act behind the warning: no resolve dialog.
      await p.keyboard.press("r");
      expect(await p.locator("dialog[open]").count()).toBe(0);
      await warning(p).getByRole("link", { name: "Back to the queue" }).click();
      await p.getByRole("heading", { level: 1, name: "Review queue" }).waitFor();

      await go(p, `#/cases/${cases.graphic}`);
      await warning(p).waitFor();
      await warning(p).getByRole("button", { name: "Show the case" }).click();
      await p.getByRole("heading", { level: 1, name: "video crash-1" }).waitFor();
      await p.getByText(TEXT.graphic).waitFor();
      expect(await p.evaluate(() => document.activeElement?.id)).toBe("case-title");
      // Leaving and coming back asks again.
      await go(p, "#/queue");
      await p.getByRole("heading", { level: 1, name: "Review queue" }).waitFor();
      await go(p, `#/cases/${cases.graphic}`);
      await warning(p).waitFor();
      // Escape leaves for the queue, as on the case page.
      await p.keyboard.press("Escape");
      await p.getByRole("heading", { level: 1, name: "Review queue" }).waitFor();

      await go(p, `#/cases/${cases.critical}`);
      await warning(p).getByText("Its severity is CRITICAL (the emergency bucket).").waitFor();
      expect(await p.getByText(TEXT.critical).count()).toBe(0);

      await go(p, `#/cases/${cases.plain}`);
      await p.getByRole("heading", { level: 1, name: "post spam-1" }).waitFor();
      expect(await warning(p).count()).toBe(0);
    },
    BROWSER_T,
  );

  test(
    "in review mode: the warning offers to skip the case unopened",
    async () => {
      const p = mod.page;
      await go(p, "#/review");
      // The emergency comes first in the queue's order.
      await warning(p).getByText("Its severity is CRITICAL (the emergency bucket).").waitFor();
      expect(await p.evaluate(() => document.activeElement?.id)).toBe("case-title");
      await expectNoA11yViolations(p, "the warning screen in review mode");
      await warning(p).getByRole("button", { name: "Skip this case…" }).click();
      const skip = p.getByRole("dialog", { name: "Skip this case" });
      await skip.waitFor();
      await p.keyboard.press("Escape");
      await skip.waitFor({ state: "detached" });
      await warning(p).getByRole("button", { name: "Show the case" }).click();
      await p.getByRole("heading", { level: 1, name: "post note-1" }).waitFor();
      await p.getByRole("button", { name: "Stop reviewing" }).click();
      await p.getByRole("heading", { level: 1, name: "Review queue" }).waitFor();
    },
    BROWSER_T,
  );

  test(
    "a moderator turns the warning off; the organization requires it and it is back, the choice locked",
    async () => {
      const p = mod.page;
      await openViewingPage(p);
      await p.getByLabel("Warning before CRITICAL or graphic cases").selectOption("off");
      await p.getByRole("button", { name: "Save my preferences" }).click();
      await p.getByText("Viewing preferences saved").waitFor();
      await go(p, `#/cases/${cases.graphic}`);
      await p.getByRole("heading", { level: 1, name: "video crash-1" }).waitFor();
      expect(await warning(p).count()).toBe(0);

      // The admin requires the warning for everyone.
      const admin = b.page;
      await openViewingPage(admin);
      await admin.getByRole("heading", { name: "Organization defaults" }).waitFor();
      await expectNoA11yViolations(admin, "the Viewing page of an admin, with the organization's defaults");
      await admin.getByLabel("Require the warning: nobody can turn it off").check();
      await admin.getByRole("button", { name: "Save the defaults" }).click();
      await admin.getByText("Organization defaults saved").waitFor();

      await go(p, "#/queue");
      await p.getByRole("heading", { level: 1, name: "Review queue" }).waitFor();
      await p.reload();
      await go(p, `#/cases/${cases.graphic}`);
      await warning(p).waitFor();
      await openViewingPage(p);
      const choice = p.getByLabel("Warning before CRITICAL or graphic cases");
      expect(await choice.isDisabled()).toBe(true);
      expect(await choice.inputValue()).toBe("on");
      await p.getByText("Your organization requires it for everyone.").waitFor();
    },
    BROWSER_T,
  );

  test(
    "an admin marks a category graphic in the project settings; its cases open behind the warning",
    async () => {
      const admin = b.page;
      await admin.getByRole("link", { name: "Project settings" }).click();
      await admin.getByRole("heading", { level: 1, name: "Project settings" }).waitFor();
      const row = admin.locator("tr", { has: admin.getByText("harassment", { exact: true }) });
      await row.getByRole("button", { name: "Edit harassment" }).click();
      const dialog = admin.getByRole("dialog", { name: "Edit harassment" });
      await dialog.getByLabel("Graphic").check();
      await expectNoA11yViolations(admin, "the category dialog with its graphic mark", "dialog[open]");
      await dialog.getByRole("button", { name: "Save category" }).click();
      await dialog.waitFor({ state: "detached" });
      await row.getByText("Graphic: warning first").waitFor();

      const p = mod.page;
      await go(p, `#/cases/${cases.toMark}`);
      await warning(p).waitFor();
      expect(await warning(p).locator("code").allInnerTexts()).toEqual(["harassment"]);
      expect(csp).toEqual([]);
    },
    BROWSER_T,
  );
});
