/**
 * Review queues in the dashboard (issue 15), in Chromium: the queue picker on the review queue
 * (each workable queue with its open count; a moderator is not offered a queue they may not
 * work), the admin page (create, edit access, make default, delete) and "Move to queue" on the
 * case page. axe-core finds no violation on the pages.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { a11yViolations, BROWSER_T, openDashboard, type DashboardSession } from "./helpers/browser.ts";
import { until } from "./helpers/wait.ts";

let s: DashboardSession;
let orgSlug: string;

beforeAll(async () => {
  s = await openDashboard();
  orgSlug = s.server.demo.orgSlug;
}, BROWSER_T);
afterAll(async () => {
  await s?.close();
});

const caseOf = async (reportId: string): Promise<string> => (await s.platform.report(reportId)).caseId;
const report = (id: string) => s.sdkReport({ reason: "spam", target: { contentType: "post", contentExternalId: id } });

describe("queues in the dashboard", () => {
  test(
    "the admin page creates a queue, restricts it, makes it default and back, deletes one; axe finds nothing",
    async () => {
      const p = s.page;
      await p.goto(`${s.server.url}/#/queues`);
      await p.getByRole("heading", { name: "Queues" }).waitFor();
      // The default queue is there from the first look.
      await p.locator("tr[data-queue='Default']").waitFor();
      await p.getByRole("link", { name: "Queues" }).waitFor();

      const form = p.getByRole("form", { name: "Create a queue" });
      await form.getByLabel("Name").fill("Legal");
      await form.getByLabel("Ordering").selectOption("age");
      await form.getByRole("checkbox", { name: "moderator" }).check();
      await form.getByRole("button", { name: "Create queue" }).click();
      await p.locator("tr[data-queue='Legal']").waitFor();
      await expect(p.locator("tr[data-queue='Legal']").textContent()).resolves.toContain("every moderator");
      const legal = (await s.platform.trpc.queues.list.query({ orgSlug })).queues.find((q: { name: string }) => q.name === "Legal")!;
      expect(legal).toMatchObject({ ordering: "age", access: { users: [], roles: ["moderator"] } });
      expect(await a11yViolations(p)).toEqual([]);

      // Edit: everyone may work it again, and a description.
      await p.getByRole("button", { name: "Edit Legal" }).click();
      const dialog = p.getByRole("dialog");
      await dialog.getByLabel("Description").fill("Court orders");
      await dialog.getByRole("checkbox", { name: "moderator" }).uncheck();
      expect(await a11yViolations(p, "dialog[open]")).toEqual([]);
      await dialog.getByRole("button", { name: "Save" }).click();
      await until("the dashboard caught up", async () => (await s.platform.trpc.queues.get.query({ orgSlug, queueId: legal.id })).queue.description === "Court orders");
      expect((await s.platform.trpc.queues.get.query({ orgSlug, queueId: legal.id })).queue.access).toEqual({ users: [], roles: [] });

      // Make default and back: exactly one default each time.
      await p.getByRole("button", { name: "Make default: Legal" }).click();
      await until("the dashboard caught up", async () => (await s.platform.trpc.queues.get.query({ orgSlug, queueId: legal.id })).queue.isDefault === true);
      await p.getByRole("button", { name: "Make default: Default" }).click();
      await until("the dashboard caught up", async () => (await s.platform.trpc.queues.get.query({ orgSlug, queueId: legal.id })).queue.isDefault === false);
      const all = (await s.platform.trpc.queues.list.query({ orgSlug })).queues;
      expect(all.filter((q: { isDefault: boolean }) => q.isDefault)).toHaveLength(1);

      // Delete a queue (in its dialog, its cases to the default queue).
      await form.getByLabel("Name").fill("Doomed");
      await form.getByRole("button", { name: "Create queue" }).click();
      await p.locator("tr[data-queue='Doomed']").waitFor();
      await p.getByRole("button", { name: "Delete Doomed" }).click();
      const deleting = p.getByRole("dialog", { name: "Delete Doomed" });
      await deleting.getByRole("button", { name: "Delete queue" }).click();
      await p.locator("tr[data-queue='Doomed']").waitFor({ state: "detached" });
      await s.shot(p, "queues-admin.png");
    },
    BROWSER_T,
  );

  test(
    "deleting a queue with an access list: its dialog offers a queue with the same access, a wider one is refused with the reason, and every case moves, closed ones too; axe finds nothing",
    async () => {
      const make = async (name: string) => (await s.platform.trpc.queues.create.mutate({ orgSlug, name, access: { users: [], roles: ["admin"] } })).queue.id as string;
      const vault = await make("Vault");
      const vault2 = await make("Vault 2");
      const openReport = await report(`vault-open-${Date.now()}`);
      const openCase = await caseOf(openReport);
      const closedReport = await report(`vault-closed-${Date.now()}`);
      const closedCase = await caseOf(closedReport);
      for (const caseId of [openCase, closedCase]) await s.platform.trpc.queues.moveCase.mutate({ orgSlug, caseId, queueId: vault });
      await s.platform.dismiss(closedReport, "other");

      const p = s.page;
      await p.goto(`${s.server.url}/#/queues`);
      await p.locator("tr[data-queue='Vault']").waitFor();
      await p.getByRole("button", { name: "Delete Vault", exact: true }).click();
      const dialog = p.getByRole("dialog", { name: "Delete Vault" });
      const target = dialog.getByLabel("Move its cases to");
      // The queue with the same access is offered first.
      expect(await target.inputValue()).toBe(vault2);
      expect(await a11yViolations(p, "dialog[open]")).toEqual([]);
      // The default queue is open to everyone: refused, with the reason, and nothing moved.
      const def = (await s.platform.trpc.queues.list.query({ orgSlug })).queues.find((q: { isDefault: boolean }) => q.isDefault)!;
      await target.selectOption(def.id);
      await dialog.getByRole("button", { name: "Delete queue" }).click();
      await dialog.getByRole("alert").filter({ hasText: "no wider" }).waitFor();
      expect((await s.platform.caseDetail(openCase)).case.queueId).toBe(vault);
      await s.shot(p, "queues-delete-refused.png");
      // The queue with the same access takes every case.
      await target.selectOption(vault2);
      await dialog.getByRole("button", { name: "Delete queue" }).click();
      await p.locator("tr[data-queue='Vault']").waitFor({ state: "detached" });
      await p.locator(".toast", { hasText: "2 cases (1 open) moved to “Vault 2”" }).waitFor();
      for (const caseId of [openCase, closedCase]) expect((await s.platform.caseDetail(caseId)).case.queueId).toBe(vault2);
      await s.platform.dismiss(openReport, "other");
    },
    BROWSER_T,
  );

  test(
    "the queue picker shows each workable queue with its count and the queue's cases; a moderator is not offered a queue they may not work",
    async () => {
      const trustId = (await s.platform.trpc.queues.create.mutate({ orgSlug, name: "Trust team", access: { users: [], roles: ["admin"] } })).queue.id as string;
      const inTrust = await caseOf(await report(`picker-${Date.now()}`));
      await s.platform.trpc.queues.moveCase.mutate({ orgSlug, caseId: inTrust, queueId: trustId });
      const elsewhere = await caseOf(await report(`picker-other-${Date.now()}`));

      const p = s.page;
      await p.goto(`${s.server.url}/#/queue`);
      await p.getByRole("heading", { name: "Review queue" }).waitFor();
      const picker = p.getByLabel("Queue", { exact: true });
      await until("the dashboard caught up", async () => (await picker.locator("option").allTextContents()).some((t) => t.startsWith("Trust team (1)")));
      await p.locator(`a[href$='/cases/${elsewhere}']`).first().waitFor();
      await picker.selectOption({ label: "Trust team (1)" });
      // Before: both cases under "All my queues"; after picking: the queue's case only.
      await until("the queue's page", async () => (await p.locator(`a[href$='/cases/${elsewhere}']`).count()) === 0);
      expect(await p.locator(`a[href$='/cases/${inTrust}']`).count()).toBeGreaterThan(0);
      expect(await a11yViolations(p)).toEqual([]);
      await s.shot(p, "queues-picker.png");
      await picker.selectOption("");

      // A moderator: the admin-only queue is not offered, its case not listed.
      const email = `mod-${Date.now()}@example.com`;
      const created = await s.platform.trpc.users.create.mutate({ email, role: "moderator" });
      const mod = await s.signedIn(email, created.generatedPassword!);
      const modPicker = mod.page.getByLabel("Queue", { exact: true });
      await until("the dashboard caught up", async () => (await modPicker.locator("option").count()) > 1);
      const offered = await modPicker.locator("option").allTextContents();
      expect(offered.some((t) => t.startsWith("Trust team"))).toBe(false);
      await mod.page.locator(`a[href$='/cases/${elsewhere}']`).first().waitFor();
      expect(await mod.page.locator(`a[href$='/cases/${inTrust}']`).count()).toBe(0);
      await mod.context.close();
    },
    BROWSER_T,
  );

  test(
    "Move to queue on the case page moves the case (audited)",
    async () => {
      const target = (await s.platform.trpc.queues.create.mutate({ orgSlug, name: `Move target ${Date.now()}` })).queue as { id: string; name: string };
      const caseId = await caseOf(await report(`move-${Date.now()}`));
      const p = s.page;
      await p.goto(`${s.server.url}/#/cases/${caseId}`);
      const select = p.getByTestId("move-to-queue");
      await until("the dashboard caught up", async () => (await select.locator("option").allTextContents()).includes(target.name));
      await select.selectOption(target.id);
      await until("the dashboard caught up", async () => (await s.platform.casePage(caseId)).queue.id === target.id);
      const audit = (await s.platform.casePage(caseId)).audit as { action: string }[];
      expect(audit.some((e) => e.action === "CASE_QUEUE_CHANGED")).toBe(true);
      expect(await a11yViolations(p)).toEqual([]);
    },
    BROWSER_T,
  );
});
