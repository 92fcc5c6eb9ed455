/**
 * The sweep in Chromium (src/domain/enforcement/sweep.ts, src/web/components/sweep.tsx): a moderator who
 * suspends Sam from one case's decision dialog sees Sam's other open cases listed first (and the
 * one in a queue they may not work named as skipped, by id, nothing of it shown), resolves them
 * with the suspension in the same step, and undoes the sweep from its notice (the case decided
 * and the suspension stay). The identity page offers the same sweep on its own, with the same
 * list in its dialog and the same undo. axe-core finds nothing on either dialog.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";

let b: DashboardSession;
let page: Page;
const r: Record<string, string> = {};
const c: Record<string, string> = {};
const SECRET = "Restricted words only specialists read";
const sam = { type: "user", externalId: "u-sam", display: { name: "Sam" } };

const statusOf = async (name: string): Promise<string> => (await b.platform.report(r[name]!)).status;
const dialogOpen = "dialog[open]";

beforeAll(async () => {
  b = await openDashboard();
  const { orgSlug } = b.server.demo;
  const specialist = (await b.platform.trpc.users.create.mutate({ email: "specialist@demo.example", role: "moderator" })).user;
  const mod = await b.platform.trpc.users.create.mutate({ email: "sweeper@demo.example", role: "moderator" });
  const queue = (await b.platform.trpc.queues.create.mutate({ orgSlug, name: "Child safety", access: { users: [specialist.id], roles: [] } })).queue;
  await b.platform.trpc.rules.create.mutate({
    orgSlug,
    name: "Child safety to specialists",
    trigger: "report.created",
    mode: "live",
    when: { field: "report.reasons", op: "includes", value: "child_safety" },
    then: [{ type: "route", queueId: queue.id }],
  });
  const file = async (name: string, reason: string, target: Record<string, unknown> | null, subject: Record<string, unknown> = sam) => {
    r[name] = await b.sdkReport({ reason, subject, ...(target ? { target } : {}) });
    c[name] = (await b.platform.report(r[name])).caseId;
  };
  for (const n of [0, 1, 2]) await file(`sam-${n}`, "harassment", { contentType: "post", contentExternalId: `sam-${n}`, content: `Post ${n} by Sam` });
  await file("profile", "impersonation", null);
  await file("restricted", "child_safety", { contentType: "post", contentExternalId: "sam-restricted", content: SECRET });
  await file("someone-else", "harassment", { contentType: "post", contentExternalId: "other-1", content: "Not Sam" }, { type: "user", externalId: "u-other" });
  ({ page } = await b.signedIn("sweeper@demo.example", mod.generatedPassword!));
}, BROWSER_T * 2);

afterAll(async () => {
  await b?.close();
});

describe("the sweep", () => {
  test(
    "the resolve dialog lists Sam's other open cases after a suspension, sweeps them in the same step, and its notice undoes the sweep",
    async () => {
      await page.goto(`${b.server.url}/#/cases/${c["sam-0"]}`);
      await page.getByRole("heading", { name: "post sam-0" }).waitFor();
      await page.getByRole("button", { name: /^Resolve/ }).click();
      const dialog = page.getByRole("dialog", { name: "Resolve post sam-0" });
      await dialog.getByLabel("Resolution").selectOption("ACCOUNT_LEVEL_ACTION");
      await dialog.getByLabel("Action", { exact: true }).selectOption("suspension");
      await dialog.getByLabel("Duration").fill("1");
      await dialog.getByLabel("Unit").selectOption("days");
      await dialog.getByLabel("Action reason").fill("Harassment campaign");
      const list = dialog.getByTestId("sweep-list");
      await list.getByText("3 other open cases of Sam:", { exact: true }).waitFor();
      expect(await list.getByRole("list", { name: "Open cases of Sam" }).getByRole("link").allInnerTexts()).toEqual(["post sam-1", "post sam-2", "the account itself"]);
      await list.getByText("1 case skipped:", { exact: true }).waitFor();
      expect(await list.getByRole("list", { name: "Skipped cases" }).innerText()).toBe(`Case ${c.restricted}: in a queue you may not work`);
      expect(await dialog.innerText()).not.toContain(SECRET);
      const offer = dialog.getByRole("checkbox", { name: /^Also resolve these 3 other cases with the suspension/ });
      expect(await offer.isChecked()).toBe(false);
      await b.shot(page, "sweep-resolve-dialog.png");
      await expectNoA11yViolations(page, "the resolve dialog offering the sweep", dialogOpen);
      await offer.check();
      await expectNoA11yViolations(page, "the resolve dialog with the sweep chosen", dialogOpen);
      await dialog.getByRole("button", { name: "Confirm resolve" }).click();

      const notice = page.locator(".toast", { hasText: "Resolved post sam-0 with a 1-day suspension; swept 3 other cases; skipped 1 (in a queue you may not work)" });
      await notice.waitFor();
      for (const name of ["sam-0", "sam-1", "sam-2", "profile"]) expect(await statusOf(name)).toBe("RESOLVED");
      for (const name of ["restricted", "someone-else"]) expect(await statusOf(name)).toBe("OPEN");

      await notice.getByRole("button", { name: "Undo" }).click();
      await page.getByText("Undone: 3 cases back as before").waitFor();
      for (const name of ["sam-1", "sam-2", "profile", "restricted"]) expect(await statusOf(name)).toBe("OPEN");
      // The decision on the case itself, and the suspension, stay.
      expect(await statusOf("sam-0")).toBe("RESOLVED");
      const { orgSlug, projectId } = b.server.demo;
      const { actions } = await b.platform.trpc.enforcement.list.query({ orgSlug, projectId, reportId: r["sam-0"] });
      expect(actions.map((a: { kind: string; status: string }) => [a.kind, a.status])).toEqual([["suspension", "active"]]);
    },
    BROWSER_T,
  );

  test(
    "the identity page sweeps Sam's open cases on its own, listed first in its dialog, and undoes it from the notice",
    async () => {
      const identityId = (await b.platform.trpc.dashboard.case.query({ caseId: c["sam-1"]! })).subject!.id;
      await page.goto(`${b.server.url}/#/identity/${identityId}`);
      // A fresh page: the previous test's notices ("Undone: …") are gone.
      await page.reload();
      await page.getByRole("heading", { name: "Sam", exact: true }).waitFor();
      await page.getByRole("button", { name: "Resolve open cases with the suspension…" }).click();
      const dialog = page.getByRole("dialog", { name: "Resolve Sam's open cases" });
      await dialog.getByText("3 open cases of Sam:", { exact: true }).waitFor();
      expect(await dialog.getByRole("list", { name: "Open cases of Sam" }).getByRole("link").allInnerTexts()).toEqual(["post sam-1", "post sam-2", "the account itself"]);
      expect(await dialog.getByRole("list", { name: "Skipped cases" }).innerText()).toBe(`Case ${c.restricted}: in a queue you may not work`);
      await dialog.getByText(/^Following the suspension until .*: Harassment campaign$/).waitFor();
      await b.shot(page, "sweep-identity-dialog.png");
      await expectNoA11yViolations(page, "the identity page's sweep dialog", dialogOpen);
      await dialog.getByRole("button", { name: "Resolve 3 cases" }).click();

      const notice = page.locator(".toast", { hasText: "Sam: swept 3 cases; skipped 1 (in a queue you may not work)" });
      await notice.waitFor();
      for (const name of ["sam-1", "sam-2", "profile"]) expect(await statusOf(name)).toBe("RESOLVED");
      expect(await statusOf("restricted")).toBe("OPEN");
      await expectNoA11yViolations(page, "the identity page after a sweep");

      await notice.getByRole("button", { name: "Undo" }).click();
      await page.getByText("Undone: 3 cases back as before").waitFor();
      for (const name of ["sam-1", "sam-2", "profile"]) expect(await statusOf(name)).toBe("OPEN");
    },
    BROWSER_T,
  );
});
