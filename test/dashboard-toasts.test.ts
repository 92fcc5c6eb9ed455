/**
 * Notices (toasts) in Chromium (issue 45, item 8: "toasts pile up across pages";
 * src/web/ui.tsx, ToastProvider): at most three at once, the oldest pushed out by a new one; a
 * change of page clears them, but for those offering an action (a bulk decision's Undo), which
 * stay for their time, and but when the page moved itself after saying what it did ("Rule
 * deleted", back to the list of rules). axe-core finds nothing with the notices shown.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";

let b: DashboardSession;
let page: Page;
/** Eight posts dismissed two at a time (a bulk decision: its notice offers Undo), and one assigned. */
const POSTS = Array.from({ length: 9 }, (_, i) => `toast-${i}`);

beforeAll(async () => {
  b = await openDashboard();
  page = b.page;
  for (const post of POSTS) await b.sdkReport({ reason: "spam", target: { contentType: "post", contentExternalId: post, content: `Text of ${post}` } });
}, BROWSER_T);
afterAll(async () => {
  await b?.close();
});

const notices = () => page.locator(".toasts .toast");
const row = (post: string) => page.locator("table.queue tbody tr", { has: page.getByRole("link", { name: `post ${post}`, exact: true }) });

/** Dismisses two cases at once from the queue's bulk bar: its notice offers Undo for the undo window (a minute). */
async function dismissTwo(posts: string[]): Promise<void> {
  const before = await notices().count();
  for (const post of posts) await row(post).getByRole("checkbox").check();
  await page.getByRole("region", { name: "Bulk actions" }).getByRole("button", { name: "Dismiss" }).click();
  await page.getByRole("dialog", { name: "Dismiss 2 cases" }).getByRole("button", { name: "Confirm dismiss" }).click();
  for (const post of posts) await row(post).waitFor({ state: "detached" });
  // Its notice is the newest (the count grows until the bound).
  await notices().last().filter({ hasText: "Dismissed 2 cases" }).filter({ has: page.getByRole("button", { name: "Undo" }) }).waitFor();
  if (before < 3) expect(await notices().count()).toBe(before + 1);
}

/**
 * Goes to another page the way a link does (a new hash, set by the browser's own navigation), and
 * answers the notices on screen once the change has been drawn: read within the same few frames,
 * long before any notice's own time (4 s at least) runs out.
 */
async function leaveFor(hash: string): Promise<string[]> {
  return page.evaluate(async (to) => {
    const changed = new Promise((done) => addEventListener("hashchange", done, { once: true }));
    location.hash = to;
    await changed;
    for (let i = 0; i < 3; i++) await new Promise((done) => requestAnimationFrame(done));
    return [...document.querySelectorAll(".toasts .toast > span:first-child")].map((t) => t.textContent ?? "");
  }, hash);
}

describe("notices", () => {
  test(
    "at most three at once, the oldest pushed out; leaving the page clears them but for those with Undo",
    async () => {
      await page.goto(`${b.server.url}/#/queue`);
      await row(POSTS[0]!).waitFor({ timeout: 15_000 });
      // Four bulk dismissals, each with its Undo notice (a minute each): three stay, the first is pushed out.
      for (let i = 0; i < 8; i += 2) await dismissTwo(POSTS.slice(i, i + 2));
      await expect(notices().count()).resolves.toBe(3);
      await expectNoA11yViolations(page, "the queue with three notices");

      // A plain notice pushes out the oldest Undo notice.
      await row(POSTS[8]!).getByRole("button", { name: `Assign to me: post ${POSTS[8]}` }).click();
      const assigned = notices().filter({ hasText: "Assigned the case to you" });
      await assigned.waitFor();
      await expect(notices().count()).resolves.toBe(3);
      expect(await notices().filter({ has: page.getByRole("button", { name: "Undo" }) }).count()).toBe(2);

      // Another page: the plain notice goes at once; the two Undo notices stay for their window.
      const left = await leaveFor("#/overview");
      expect(left).toEqual(["Dismissed 2 cases", "Dismissed 2 cases"]);
      await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
      // A change of the query alone (the same page) clears nothing.
      expect(await leaveFor("#/overview?days=30")).toEqual(left);
    },
    BROWSER_T,
  );

  test(
    "a page that moves itself after saying what it did keeps that notice: Rule deleted, back on the rules",
    async () => {
      const { rule } = await b.platform.trpc.rules.create.mutate({
        orgSlug: b.server.demo.orgSlug,
        name: "Short-lived rule",
        trigger: "report.created",
        mode: "shadow",
        when: { field: "report.reasons", op: "includes", value: "spam" },
        then: [{ type: "tag", tag: "short-lived" }],
      });
      await page.goto(`${b.server.url}/#/rules/${rule.id}`);
      await page.getByRole("button", { name: "Delete" }).waitFor({ timeout: 15_000 });
      page.once("dialog", (d) => void d.accept());
      await page.getByRole("button", { name: "Delete" }).click();
      await page.waitForURL((u) => u.hash === "#/rules");
      await notices().filter({ hasText: "Rule deleted" }).waitFor();
      await expectNoA11yViolations(page, "the rules with the deletion's notice");
    },
    BROWSER_T,
  );
});
