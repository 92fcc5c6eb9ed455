/**
 * The review queue a moderator can work through in a day, in Chromium: views with their counts,
 * paging to every open case ("51–60 of 60"), escalations and tags on the rows and a tag filter,
 * claims that hold (a colleague's case is refused, then taken over when the moderator says so),
 * a resolution with a suspension in one step, a bulk dismissal that names the serious cases it
 * would sweep in and is undone from its notice, decision templates (made in the settings page,
 * filling the note), and the keyboard (Enter on a focused button presses it, `?` help in a
 * dialog, the highlight kept after a decision and after coming back from a case). axe-core finds
 * nothing on the queue and on each dialog.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";
import { until } from "./helpers/wait.ts";

let b: DashboardSession;
let page: Page;
const ids: Record<string, string> = {};
let colleague: { id: string; email: string };

const SPAM = 55;
/** Open cases seeded: 55 spam, 2 HIGH spam waves, a colleague's, an escalated one, one to suspend. */
const OPEN = SPAM + 5;

const caseOf = async (reportId: string): Promise<string> => (await b.platform.report(reportId)).caseId;
const statusOf = async (reportId: string): Promise<string> => (await b.platform.report(reportId)).status;
const row = (name: string) => page.locator("table.queue tbody tr", { has: page.getByRole("link", { name, exact: true }) });
const dialogOpen = "dialog[open]";

beforeAll(async () => {
  b = await openDashboard();
  page = b.page;
  const post = (id: string, reason: string | string[], extra: Record<string, unknown> = {}) =>
    b.sdkReport({ target: { contentType: "post", contentExternalId: id, content: `Reported post ${id}` }, reason, ...extra });
  // Two HIGH cases first (they lead the queue), then 55 spam cases, oldest first.
  ids.threat = await post("w-threat", ["spam", "threats"]);
  ids.hate = await post("w-hate", ["spam", "hate_speech"]);
  for (let i = 0; i < SPAM; i++) ids[`s-${i}`] = await post(`s-${i}`, "spam");
  ids.claimed = await post("claimed-1", "harassment", { subject: { type: "user", externalId: "u-501", display: { name: "Casey" } } });
  ids.esc = await post("esc-1", "impersonation");
  ids.susp = await post("susp-1", "harassment", { subject: { type: "user", externalId: "u-900", display: { name: "Vera" } } });

  // A colleague claims one case; one is escalated to legal; four carry the tag "wave-1".
  colleague = (await b.platform.trpc.users.create.mutate({ email: "mod2@demo.example", role: "moderator" })).user;
  await b.platform.assign(await caseOf(ids.claimed!), colleague.id);
  await b.platform.trpc.reports.escalate.mutate({ reportId: ids.esc, team: "legal" });
  for (const k of ["threat", "hate", "s-0", "s-1"]) await b.platform.trpc.cases.setTags.mutate({ caseId: await caseOf(ids[k]!), tags: ["wave-1"] });
}, BROWSER_T * 2);

afterAll(async () => {
  await b?.close();
});

describe("the review queue", () => {
  test(
    "views with their counts; every open case reachable page by page (N of M); the escalation on its row",
    async () => {
      await page.reload();
      await page.getByRole("heading", { name: "Review queue" }).waitFor();
      const views = page.getByRole("list", { name: "Queue views" });
      const tab = (name: string) => views.getByRole("button", { name: new RegExp(`^${name}`) });
      await tab("All open").filter({ hasText: String(OPEN) }).waitFor();
      const counts: Record<string, string> = {};
      for (const name of ["All open", "Unassigned", "Assigned to me", "Escalated: safety", "Escalated: legal", "Escalated: senior moderator", "Appealed"]) {
        counts[name] = (await tab(name).locator(".view-count").innerText()).trim();
      }
      expect(counts).toEqual({
        "All open": String(OPEN),
        Unassigned: String(OPEN - 1),
        "Assigned to me": "0",
        "Escalated: safety": "0",
        "Escalated: legal": "1",
        "Escalated: senior moderator": "0",
        Appealed: "0",
      });
      expect(await tab("All open").getAttribute("aria-pressed")).toBe("true");

      // Page 1: the HIGH cases first, then the oldest spam; the newest spam is on page 2.
      const range = page.getByTestId("queue-range");
      await page.getByText(`1–50 of ${OPEN}`).waitFor();
      expect(await page.locator("table.queue tbody tr").count()).toBe(50);
      expect(await page.locator("table.queue tbody tr").first().getByRole("link").first().innerText()).toBe("post w-threat");
      expect(await page.getByRole("link", { name: "post s-54", exact: true }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "Previous page" }).isDisabled()).toBe(true);
      await expectNoA11yViolations(page, "the queue");

      await page.getByRole("button", { name: "Next page" }).click();
      await page.getByRole("link", { name: "post s-54", exact: true }).waitFor();
      expect(await range.innerText()).toBe(`51–${OPEN} of ${OPEN}`);
      expect(await page.locator("table.queue tbody tr").count()).toBe(OPEN - 50);
      expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);
      // The escalated case says so on its row.
      await row("post esc-1").getByText("Escalated to legal").waitFor();
      await b.shot(page, "queue-page-2.png");
      expect(await row("post s-54").getByTestId("escalation").count()).toBe(0);
      await page.getByRole("button", { name: "Previous page" }).click();
      await page.getByText(`1–50 of ${OPEN}`).waitFor();

      // The legal view holds the escalated case alone.
      await tab("Escalated: legal").click();
      await page.getByText("1–1 of 1").waitFor();
      expect(await tab("Escalated: legal").getAttribute("aria-pressed")).toBe("true");
      await row("post esc-1").getByTestId("escalation").waitFor();
      expect(await page.locator("table.queue tbody tr").count()).toBe(1);
      await tab("All open").click();
      await page.getByText(`1–50 of ${OPEN}`).waitFor();
    },
    BROWSER_T,
  );

  test(
    "keyboard: Enter on a focused button presses it (no navigation), `?` help in a dialog, the highlight stays after u and after a decision",
    async () => {
      const activeTitle = () => page.locator("table.queue tbody tr.active").getByRole("link").first().innerText();
      const focusedTitle = () => page.evaluate(() => (document.activeElement as HTMLElement | null)?.closest("a.case-link")?.textContent ?? null);
      await page.locator("h1").click();
      for (let i = 0; i < 10; i++) await page.keyboard.press("k");
      for (let i = 0; i < 4; i++) await page.keyboard.press("j");
      // Row 5: the HIGH cases, then s-0, s-1, s-2.
      expect(await activeTitle()).toBe("post s-2");

      // Enter on the focused case link opens that case; u comes back to the same row.
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "post s-2" }).waitFor();
      await page.keyboard.press("u");
      await page.getByRole("heading", { name: "Review queue" }).waitFor();
      await page.getByText(`1–50 of ${OPEN}`).waitFor();
      expect(await activeTitle()).toBe("post s-2");
      await page.waitForFunction(() => document.activeElement?.closest("a.case-link")?.textContent === "post s-2");

      // Enter on a focused "Assign to me" button assigns that case and stays on the queue.
      const claim = page.getByRole("button", { name: "Assign to me: post s-4", exact: true });
      await claim.focus();
      await page.keyboard.press("Enter");
      await row("post s-4").getByText("You", { exact: true }).waitFor();
      expect(new URL(page.url()).hash).not.toContain("cases");
      const release = page.getByRole("button", { name: "Unassign: post s-4", exact: true });
      await release.focus();
      await page.keyboard.press("Enter");
      await row("post s-4").getByRole("button", { name: "Assign to me: post s-4", exact: true }).waitFor();
      expect(new URL(page.url()).hash).not.toContain("cases");
      await page.getByRole("heading", { name: "Review queue" }).waitFor();

      // `?` opens the help as a dialog, in view at the top of the page.
      await page.keyboard.press("?");
      const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
      await help.waitFor();
      const box = (await help.boundingBox())!;
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height).toBeLessThanOrEqual(900);
      await expectNoA11yViolations(page, "the keyboard help", dialogOpen);
      await page.keyboard.press("Escape");
      await help.waitFor({ state: "detached" });

      // A decision from the keyboard: the row below takes the decided case's place, highlighted and focused.
      await page.locator("h1").click();
      for (let i = 0; i < 10; i++) await page.keyboard.press("k");
      for (let i = 0; i < 4; i++) await page.keyboard.press("j");
      expect(await activeTitle()).toBe("post s-2");
      await page.keyboard.press("d");
      const dialog = page.getByRole("dialog", { name: "Dismiss post s-2" });
      await dialog.getByRole("button", { name: "Confirm dismiss" }).click();
      await page.getByRole("link", { name: "post s-2", exact: true }).waitFor({ state: "detached" });
      await page.waitForFunction(() => document.activeElement?.closest("a.case-link")?.textContent === "post s-3");
      expect(await activeTitle()).toBe("post s-3");
      expect(await focusedTitle()).toBe("post s-3");
      expect(await page.locator("table.queue tbody tr.active").evaluate((tr) => (tr as HTMLTableRowElement).sectionRowIndex)).toBe(4);
      expect(await statusOf(ids["s-2"]!)).toBe("DISMISSED");
    },
    BROWSER_T,
  );

  test(
    "templates made in the settings page; a colleague's case is refused, then taken over once the dialog is told to",
    async () => {
      await page.getByRole("link", { name: "Project settings" }).click();
      await page.getByRole("heading", { name: "Decision templates" }).waitFor();
      await page.getByRole("button", { name: "Add template" }).click();
      const editor = page.getByRole("dialog", { name: "New template" });
      await editor.getByLabel("Template name").fill("Not for us");
      await editor.getByLabel("Offered in").selectOption("dismiss");
      await editor.getByLabel("Text").fill("Dismissed as {reason}: the {category} report does not break our rules.");
      await expectNoA11yViolations(page, "the template editor", dialogOpen);
      await editor.getByRole("button", { name: "Save template" }).click();
      await page.getByRole("cell", { name: "Not for us", exact: true }).waitFor();
      const listed = (await b.platform.trpc.templates.list.query({ projectId: b.server.demo.projectId })).templates;
      expect(listed.map((t: { name: string; kind: string }) => [t.name, t.kind])).toEqual([["Not for us", "dismiss"]]);

      await page.getByRole("link", { name: "Review queue" }).first().click();
      await page.getByRole("heading", { name: "Review queue" }).waitFor();
      await page.getByLabel("Category", { exact: true }).selectOption("harassment");
      await row("post claimed-1").getByText("Assigned to mod2@demo.example").waitFor();
      await page.getByRole("checkbox", { name: "Select post claimed-1" }).check();
      await page.getByRole("region", { name: "Bulk actions" }).getByRole("button", { name: "Dismiss" }).click();
      const dialog = page.getByRole("dialog", { name: "Dismiss post claimed-1" });
      await dialog.getByText("Taken by mod2@demo.example: they are working on this case.").waitFor();
      // The template fills the note with the dialog's reason and the case's category.
      await dialog.getByLabel("Reason").selectOption("out_of_scope");
      await dialog.getByLabel("Template").selectOption({ label: "Not for us" });
      const filled = "Dismissed as out of scope: the harassment report does not break our rules.";
      await until("the template fills the note", async () => (await dialog.getByLabel("Note (optional)").inputValue()) === filled);
      await expectNoA11yViolations(page, "the dismiss dialog on a claimed case", dialogOpen);

      // Sent without taking over: the server refuses, naming the holder.
      await dialog.getByRole("button", { name: "Confirm dismiss" }).click();
      await dialog.getByRole("alert").filter({ hasText: "This case is assigned to mod2@demo.example" }).waitFor();
      expect(await statusOf(ids.claimed!)).toBe("OPEN");
      // One word for a case's holder (issue 45, item 8): "assigned", never "claimed", on the queue
      // (its column, filter, buttons and bulk bar), in the dialog and the server's refusal.
      const shown = (await page.locator("body").innerText()).replaceAll("claimed-1", "");
      expect(shown).toContain("Assigned");
      expect(shown.match(/\bclaim\w*/gi)).toBeNull();
      await dialog.getByRole("checkbox", { name: "Take over this case from mod2@demo.example" }).check();
      await dialog.getByRole("button", { name: "Confirm dismiss" }).click();
      await page.getByText("Dismissed post claimed-1").waitFor();
      await row("post claimed-1").waitFor({ state: "detached" });
      const report = await b.platform.report(ids.claimed!);
      expect(report.status).toBe("DISMISSED");
      expect(report.dismissal).toMatchObject({ reason: "out_of_scope", note: "Dismissed as out of scope: the harassment report does not break our rules." });
      const detail = await b.platform.casePage(report.caseId!);
      expect(detail.assignee!.email).toBe(b.server.demo.adminEmail);
    },
    BROWSER_T,
  );

  test(
    "resolve with an account-level action: the suspension is applied in the same step",
    async () => {
      await row("post susp-1").getByRole("link", { name: "post susp-1" }).click();
      await page.getByRole("heading", { name: "post susp-1" }).waitFor();
      await page.getByRole("button", { name: /^Resolve/ }).click();
      const dialog = page.getByRole("dialog", { name: "Resolve post susp-1" });
      await dialog.getByLabel("Resolution").selectOption("ACCOUNT_LEVEL_ACTION");
      await dialog.getByLabel("Action", { exact: true }).selectOption("suspension");
      await dialog.getByLabel("Duration").fill("3");
      await dialog.getByLabel("Unit").selectOption("days");
      await dialog.getByLabel("Action reason").fill("Threatening messages");
      await expectNoA11yViolations(page, "the resolve dialog with an action", dialogOpen);
      await dialog.getByRole("button", { name: "Confirm resolve" }).click();
      await page.getByText("Resolved post susp-1 with a 3-day suspension").waitFor();
      // The case shows the action it took.
      await page.locator(".case-head [data-status='RESOLVED']").waitFor();
      await page.getByText("Threatening messages").first().waitFor();

      const report = await b.platform.report(ids.susp!);
      expect(report.status).toBe("RESOLVED");
      expect(report.resolution!.code).toBe("ACCOUNT_LEVEL_ACTION");
      const { actions } = await b.platform.trpc.enforcement.list.query({ orgSlug: b.server.demo.orgSlug, projectId: b.server.demo.projectId, reportId: ids.susp });
      expect(actions.map((a: { kind: string; reason: string; identity: { externalId: string } }) => [a.kind, a.reason, a.identity.externalId])).toEqual([
        ["suspension", "Threatening messages", "u-900"],
      ]);
      // Three days from the moment it was applied (start and end are read a moment apart).
      expect(Math.abs(Date.parse(actions[0]!.endsAt!) - Date.parse(actions[0]!.startsAt) - 3 * 86_400_000)).toBeLessThan(60_000);
    },
    BROWSER_T,
  );

  test(
    "tags on rows and the tag filter; a bulk dismissal names the HIGH cases and their other reasons, and is undone from its notice",
    async () => {
      await page.getByRole("link", { name: "Review queue" }).first().click();
      await page.getByRole("button", { name: "Clear filters" }).click();
      await page.getByLabel("Tag").selectOption("wave-1");
      await page.getByText("1–4 of 4").waitFor();
      const titles = await page.locator("table.queue tbody tr a.case-link").allInnerTexts();
      expect(titles).toEqual(["post w-threat", "post w-hate", "post s-0", "post s-1"]);
      for (const t of titles) await row(t).getByText("#wave-1").waitFor();

      await page.getByRole("checkbox", { name: "Select all cases shown" }).check();
      await page.getByRole("region", { name: "Bulk actions" }).getByRole("button", { name: "Dismiss" }).click();
      const dialog = page.getByRole("dialog", { name: "Dismiss 4 cases" });
      await dialog.getByText("2 are HIGH or emergency; they also carry: threats, hate_speech", { exact: true }).waitFor();
      await b.shot(page, "queue-bulk-dismiss.png");
      await expectNoA11yViolations(page, "the bulk dismiss dialog", dialogOpen);
      await dialog.getByRole("button", { name: "Confirm dismiss" }).click();
      const notice = page.locator(".toast", { hasText: "Dismissed 4 cases" });
      await notice.waitFor();
      await page.getByText("Nothing to review").waitFor();
      for (const k of ["threat", "hate", "s-0", "s-1"]) expect(await statusOf(ids[k]!)).toBe("DISMISSED");

      await notice.getByRole("button", { name: "Undo" }).click();
      await page.getByText("Undone: 4 cases back as before").waitFor();
      await page.getByText("1–4 of 4").waitFor();
      for (const k of ["threat", "hate", "s-0", "s-1"]) expect(await statusOf(ids[k]!)).toBe("OPEN");
      await expectNoA11yViolations(page, "the queue filtered by tag");
    },
    BROWSER_T,
  );
});
