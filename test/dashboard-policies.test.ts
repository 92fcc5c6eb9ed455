/**
 * The policies page (issue 28, docs/ai.md "Policies and shadow runs") in Chromium: an admin
 * writes a live and a shadow version of a category through the page (the 4,000-character counter,
 * the server's message for an empty text), a report filed through the SDK is enriched by the
 * fake Ollama, whose answer depends on the policy text it is sent, so the live and the shadow
 * analyses differ; the page shows the comparison (1 pair, the difference) and promotes the shadow
 * version to live. A moderator reads it all and gets no button that writes. axe-core finds
 * nothing on the page, the new-version form and the comparison, in the light and dark schemes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { startFakeOllama, type FakeOllama, type RecordedChat } from "../scripts/fake-ollama.ts";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";
import { until } from "./helpers/wait.ts";

/** In the shadow version's text only: a request whose system prompt holds it is the shadow analysis. */
const SHADOW_MARKER = "SHADOWPOLICYMARK";
const LIVE_TEXT = "Definition: insults aimed at a person.\n\nViolates: \"you are worthless\".\nDoes not violate: criticism of an idea.";
const SHADOW_TEXT = `Definition: ${SHADOW_MARKER} any rude word counts as harassment.\n\nViolates: "idiot", "fool".\nEdge cases: none.`;

/** The live configuration finds nothing (LOW); the shadow one a CRITICAL harassment. */
function answerer(request: RecordedChat) {
  const system = request.messages[0]?.content ?? "";
  if (system.includes(SHADOW_MARKER)) return { json: { reasoning: "The shadow policy counts the rude word.", categories: ["harassment"], severity: "CRITICAL", confidence: 99 } };
  return { json: { reasoning: "Nothing wrong under the live policy.", categories: [], severity: "LOW", confidence: 90 } };
}

let fake: FakeOllama;
let b: DashboardSession;
let page: Page;

beforeAll(async () => {
  fake = startFakeOllama();
  fake.setDefault(answerer);
  b = await openDashboard({ OLLAMA_HOST: fake.url, FLAGSTAFF_JOB_POLL_MS: "100", FLAGSTAFF_JOB_BACKOFF_MS: "100", FLAGSTAFF_JOB_BACKOFF_CAP_MS: "300" });
  page = b.page;
  const { orgSlug, projectId } = b.server.demo;
  const settings = await b.server.call("PATCH", `/api/v1/organizations/${orgSlug}/projects/${projectId}/settings`, { body: { aiEnabled: true } });
  expect(settings.status).toBe(200);
}, BROWSER_T);
afterAll(async () => {
  await b?.close();
  await fake?.stop();
});

const categoryRow = (p: Page, name: string) => p.locator(`table.policies tr[data-category='${name}']`);
const versionRow = (p: Page, n: number) => p.locator(`table.policy-versions tr[data-version='${n}']`);
const statusOf = (p: Page, n: number) => versionRow(p, n).locator("[data-policy-status]").getAttribute("data-policy-status");
const figure = (name: string) => page.locator(`[data-figure='${name}'] dd`).first();

async function writeVersion(text: string, status: "draft" | "shadow" | "live", n: number): Promise<void> {
  const form = page.getByTestId("new-version-form");
  await form.getByLabel("Policy text").fill(text);
  await form.getByLabel("Status of the new version").selectOption(status);
  await form.getByRole("button", { name: `Write version ${n}` }).click();
  await until(`version ${n} listed as ${status}`, async () => (await statusOf(page, n).catch(() => null)) === status);
}

describe("the policies page", () => {
  test(
    "an admin writes a live and a shadow version, sees the comparison of a report's two analyses, and promotes the shadow version; axe finds nothing",
    async () => {
      const { orgSlug, projectId } = b.server.demo;
      const harassmentId = (await b.platform.trpc.policies.list.query({ orgSlug, projectId })).policies.find((p) => p.category === "harassment")!.categoryId;

      // Reached from the navigation: every category, none with a version yet.
      await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Policies" }).click();
      await page.getByRole("heading", { name: "Policies", exact: true }).waitFor();
      await categoryRow(page, "harassment").waitFor();
      await expect(categoryRow(page, "harassment").locator("[data-cell=versions]").textContent()).resolves.toBe("0");
      await expect(page.getByTestId("shadow-comparison").textContent()).resolves.toContain("No category has a shadow version.");

      await categoryRow(page, "harassment").getByRole("link", { name: "Versions of harassment" }).click();
      await page.getByRole("heading", { name: "Versions of harassment" }).waitFor();
      const form = page.getByTestId("new-version-form");
      // The counter, and the limit: past 4,000 characters the form says so and does not send.
      await form.getByLabel("Policy text").fill("x".repeat(4_001));
      await expect(form.getByTestId("policy-count").textContent()).resolves.toBe("4,001 / 4,000 characters: too long");
      await expect(form.getByRole("button", { name: "Write version 1" }).isDisabled()).resolves.toBe(true);
      // An empty text (blanks only): the server's message.
      await form.getByLabel("Policy text").fill("   ");
      await expect(form.getByTestId("policy-count").textContent()).resolves.toBe("3 / 4,000 characters");
      await form.getByRole("button", { name: "Write version 1" }).click();
      await expect(form.getByRole("alert").textContent()).resolves.toContain("text is required");
      await expectNoA11yViolations(page, "the new-version form with an error", "[data-testid='new-version-form']");

      // A live version, then a shadow one.
      await writeVersion(LIVE_TEXT, "live", 1);
      await writeVersion(SHADOW_TEXT, "shadow", 2);
      await expect(versionRow(page, 2).locator("td").nth(1).textContent()).resolves.toBe(b.server.demo.adminEmail);
      // The full text, in a <details>.
      await versionRow(page, 2).locator("summary").click();
      await expect(versionRow(page, 2).locator("details pre").textContent()).resolves.toBe(SHADOW_TEXT);
      const harassment = categoryRow(page, "harassment");
      await until("the category lists both versions", async () => (await harassment.locator("[data-cell=versions]").textContent()) === "2");
      await expect(harassment.locator("[data-cell=live]").textContent()).resolves.toBe("v1 Definition: insults aimed at a person.");
      await expect(harassment.locator("[data-cell=shadow]").textContent()).resolves.toBe(`v2 Definition: ${SHADOW_MARKER} any rude word counts as harassment.`);
      await expectNoA11yViolations(page, "the policies page with a category's versions");

      // A report, enriched: the live analysis (LOW) and the shadow one (CRITICAL harassment).
      const reportId = await b.sdkReport({
        target: { contentType: "comment", contentExternalId: "policy-1", content: "you fool" },
        subject: { type: "user", externalId: "u-rude" },
        reason: "harassment",
      });
      await until("the shadow pair", async () => (await b.platform.trpc.policies.shadowComparison.query({ orgSlug, projectId })).pairs === 1, 30_000);
      await page.reload();
      const comparison = page.getByTestId("shadow-comparison");
      await until("the comparison on the page", async () => (await figure("pairs").textContent().catch(() => null)) === "1");
      await expect(figure("verdict").textContent()).resolves.toBe("0.0 % (0)");
      await expect(figure("categories").textContent()).resolves.toBe("0.0 % (0)");
      await expect(figure("severity").textContent()).resolves.toBe("0.0 % (0)");
      const diff = comparison.locator(`table.shadow-differences tr[data-report='${reportId}']`);
      await expect(comparison.locator("table.shadow-differences tbody tr").count()).resolves.toBe(1);
      await expect(diff.locator("[data-answer=live] [data-testid=answer-summary]").textContent()).resolves.toBe("LOW no category · 90");
      await expect(diff.locator("[data-answer=shadow] [data-testid=answer-summary]").textContent()).resolves.toBe("CRITICAL harassment · 99");
      await expect(diff.locator("[data-answer=shadow]").textContent()).resolves.toContain("policies: harassment v2");
      await expect(diff.locator("[data-answer=live]").textContent()).resolves.toContain("policies: harassment v1");
      await expectNoA11yViolations(page, "the shadow comparison", "[data-testid='shadow-comparison']");
      await b.shot(page, "policies.png");

      // Promote: the shadow version becomes live, the live one is retired.
      await comparison.getByRole("button", { name: "Make version 2 live for harassment" }).click();
      await until("version 2 live in the list", async () => (await harassment.locator("[data-cell=live]").textContent())?.startsWith("v2 ") === true);
      await expect(harassment.locator("[data-cell=shadow]").textContent()).resolves.toBe("—");
      await until("the versions follow", async () => (await statusOf(page, 2)) === "live" && (await statusOf(page, 1)) === "retired");
      const after = (await b.platform.trpc.policies.versions.query({ orgSlug, projectId, categoryId: harassmentId })).versions;
      expect(after.map((v) => [v.version, v.status])).toEqual([
        [2, "live"],
        [1, "retired"],
      ]);
      await expect(comparison.textContent()).resolves.toContain("No category has a shadow version.");
    },
    BROWSER_T * 2,
  );

  test(
    "a moderator reads the versions and the comparison but gets no button that writes",
    async () => {
      const { orgSlug, projectId } = b.server.demo;
      const harassmentId = (await b.platform.trpc.policies.list.query({ orgSlug, projectId })).policies.find((p) => p.category === "harassment")!.categoryId;
      // A shadow version again, so that a promote button would show.
      await b.platform.trpc.policies.createVersion.mutate({ orgSlug, projectId, categoryId: harassmentId, text: "Definition: a third try.", status: "shadow" });
      const made = await b.platform.trpc.users.create.mutate({ email: "policy-reader@demo.example", role: "moderator" });
      const { context, page: m } = await b.signedIn("policy-reader@demo.example", made.generatedPassword!);
      try {
        await m.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Policies" }).click();
        await categoryRow(m, "harassment").getByRole("link", { name: "Versions of harassment" }).click();
        await m.getByRole("heading", { name: "Versions of harassment" }).waitFor();
        await versionRow(m, 3).waitFor();
        await expect(statusOf(m, 3)).resolves.toBe("shadow");
        await expect(m.getByTestId("shadow-comparison").textContent()).resolves.toContain("harassment: shadow version 3");
        // No write: no status button, no form, no promote.
        expect(await m.locator("table.policy-versions button").count()).toBe(0);
        expect(await m.getByTestId("new-version-form").count()).toBe(0);
        expect(await m.getByRole("button", { name: /^Make version/ }).count()).toBe(0);
        await expectNoA11yViolations(m, "the policies page (moderator)");
      } finally {
        await context.close();
      }
    },
    BROWSER_T,
  );

  test(
    "in the dark colour scheme at tablet width: the page, the form and the comparison fit and axe finds nothing",
    async () => {
      const { orgSlug, projectId } = b.server.demo;
      const harassmentId = (await b.platform.trpc.policies.list.query({ orgSlug, projectId })).policies.find((p) => p.category === "harassment")!.categoryId;
      await page.setViewportSize({ width: 820, height: 1180 });
      await page.emulateMedia({ colorScheme: "dark" });
      try {
        await page.goto(`${b.server.url}/#/policies/${harassmentId}`);
        await versionRow(page, 3).waitFor();
        await page.getByTestId("shadow-comparison").locator("table.shadow-differences").waitFor();
        await page.getByTestId("new-version-form").getByLabel("Policy text").fill("Definition: draft in the dark.");
        expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
        await expectNoA11yViolations(page, "the policies page (tablet, dark)");
        await b.shot(page, "policies-dark-tablet.png");
      } finally {
        await page.emulateMedia({ colorScheme: "light" });
        await page.setViewportSize({ width: 1366, height: 900 });
      }
    },
    BROWSER_T,
  );
});
