/**
 * Quality review in the dashboard (issue 29), in Chromium: the lead sets the default queue's
 * sampling in the queue editor; a moderator's decision is sampled; a second moderator takes it
 * from "Quality" and decides blind (the first decision is nowhere on the page before they
 * commit, and beside theirs after); the lead sees the disagreement side by side, acknowledges it
 * reopening the case; the agreement page shows the pair. axe-core finds no violation in any state.
 * The case is named as the case page names it (its content), never by an id, and the lead's
 * disagreement shows what it is about (reasons, content, what the reporter wrote, the AI's
 * finding) without opening it (issue 45, item 7).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import { a11yViolations, BROWSER_T, openDashboard, type DashboardSession } from "./helpers/browser.ts";
import { signIn } from "./helpers/dashboard.ts";
import { until } from "./helpers/wait.ts";

let s: DashboardSession;
let fake: FakeOllama;
let orgSlug: string;
const AI_REASONING = "Sells replica watches with a link: spam.";

beforeAll(async () => {
  fake = startFakeOllama();
  fake.setDefault(() => ({ json: { reasoning: AI_REASONING, categories: ["spam"], severity: "MEDIUM", confidence: 88 } }));
  s = await openDashboard({ OLLAMA_HOST: fake.url, FLAGSTAFF_JOB_POLL_MS: "100" });
  orgSlug = s.server.demo.orgSlug;
  const { projectId } = s.server.demo;
  expect((await s.server.call("PATCH", `/api/v1/organizations/${orgSlug}/projects/${projectId}/settings`, { body: { aiEnabled: true } })).status).toBe(200);
}, BROWSER_T);
afterAll(async () => {
  await s?.close();
  await fake?.stop();
});

const newModerator = async (name: string) => {
  const email = `${name}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const made = await s.platform.trpc.users.create.mutate({ email, role: "moderator" });
  return { email, password: made.generatedPassword! };
};

describe("quality review in the dashboard", () => {
  test(
    "sampling set in the queue editor; a blind second review; the lead's disagreement and agreement pages; axe finds nothing",
    async () => {
      const p = s.page;
      // The lead: every decision of the default queue sampled.
      await p.goto(`${s.server.url}/#/queues`);
      await p.getByRole("heading", { name: "Queues" }).waitFor();
      const def = (await s.platform.trpc.queues.list.query({ orgSlug })).queues.find((q) => q.isDefault)!;
      await p.getByRole("button", { name: `Edit ${def.name}` }).click();
      const dialog = p.getByRole("dialog");
      await dialog.getByLabel("Sampling rate (%)").fill("100");
      await dialog.getByLabel("Always sample").selectOption("account_stopped");
      expect(await a11yViolations(p, "dialog[open]")).toEqual([]);
      await dialog.getByRole("button", { name: "Save" }).click();
      await until("the sampling saved", async () => (await s.platform.trpc.queues.get.query({ orgSlug, queueId: def.id })).queue.samplePercent === 100);
      expect((await s.platform.trpc.queues.get.query({ orgSlug, queueId: def.id })).queue.alwaysSample).toBe("account_stopped");
      const sampling = p.locator(`tr[data-queue='${def.name}'] [data-testid=queue-sampling]`);
      await until("the table shows the sampling", async () => (await sampling.textContent()) === "100 %; always: suspension, ban");

      // A moderator dismisses a case (through the dashboard's procedures, as that moderator).
      const first = await newModerator("first");
      const firstUser = await signIn(s.server, first.email, first.password);
      const post = `quality-${Date.now()}`;
      const title = `post ${post}`;
      const reportId = await s.sdkReport({ reason: "spam", description: "Same seller as yesterday", target: { contentType: "post", contentExternalId: post, content: "Cheap watches, click here" } });
      const caseId = (await s.platform.report(reportId)).caseId;
      // The AI's finding is in before the decision (enrichment, the fake Ollama).
      await until("the report's AI analysis", async () => (await s.platform.report(reportId)).ai != null, 15_000);
      await firstUser.dismiss(reportId, "duplicate");

      // A second moderator takes it from Quality and sees the case, not the decision.
      const second = await newModerator("second");
      const { page: q } = await s.signedIn(second.email, second.password);
      await q.getByRole("link", { name: "Quality" }).click();
      await q.getByRole("heading", { name: "Quality review" }).waitFor();
      await expect(q.getByTestId("quality-offered").textContent()).resolves.toBe("1 decision is waiting for a second review.");
      expect(await a11yViolations(q)).toEqual([]);
      await q.getByRole("button", { name: "Review the next decision" }).click();
      await q.getByRole("heading", { name: "Second review" }).waitFor();
      await q.getByTestId("blind-case").waitFor();
      await expect(q.getByTestId("blind-case").textContent()).resolves.toContain("Cheap watches, click here");
      // The case is named by what was reported, not by an id: here and in the list of the reviews one holds.
      await q.getByText(`${title}, in `).waitFor();
      expect(await q.getByText(caseId.slice(-8)).count()).toBe(0);
      const reviewUrl = q.url();
      await q.getByRole("link", { name: "My second reviews" }).click();
      await q.getByRole("link", { name: `Second review of ${title}` }).click();
      await until("back on the blind review", async () => q.url() === reviewUrl);
      await q.getByTestId("blind-case").waitFor();
      const before = (await q.locator("main").textContent()) ?? "";
      for (const leak of ["Dismissed", "DISMISSED", "dismissed", first.email, "Resolved", "RESOLVED"]) expect(before).not.toContain(leak);
      expect(await q.getByTestId("first-decision").count()).toBe(0);
      expect(await a11yViolations(q)).toEqual([]);

      // Committed: both decisions side by side.
      await q.getByLabel("Resolution").selectOption("SPAM_CONFIRMED");
      await q.getByRole("button", { name: "Commit my decision" }).click();
      await q.getByTestId("comparison").waitFor();
      await expect(q.getByTestId("first-decision").textContent()).resolves.toBe("Dismissed (duplicate)");
      await expect(q.getByTestId("second-decision").textContent()).resolves.toBe("Spam confirmed");
      await expect(q.getByTestId("comparison").textContent()).resolves.toContain(first.email);
      await expect(q.getByRole("heading", { name: "You decided differently" }).count()).resolves.toBe(1);
      expect(await a11yViolations(q)).toEqual([]);
      await s.shot(q, "quality-second-review.png");
      // The outcome is unchanged.
      expect((await s.platform.casePage(caseId)).case.status).toBe("DISMISSED");

      // The lead: the disagreement side by side, acknowledged with the case reopened.
      await p.goto(`${s.server.url}/#/quality/disagreements`);
      await p.getByRole("heading", { name: "Disagreements" }).waitFor();
      const card = p.getByTestId("disagreement").filter({ has: p.locator(`a[href='#/cases/${caseId}']`) });
      await card.waitFor();
      // Named by its content, and what it is about without opening it: reasons, content, the reporter's words, the AI's finding.
      await card.getByRole("heading", { name: new RegExp(`^${title} in `) }).getByRole("link", { name: title }).waitFor();
      const about = card.getByTestId("reviewed-case");
      await about.locator(".chip", { hasText: "spam" }).waitFor();
      await about.locator("blockquote", { hasText: "Cheap watches, click here" }).waitFor();
      await about.getByRole("list", { name: "What the reporters wrote" }).getByText("Same seller as yesterday").waitFor();
      await expect(about.locator(".ai").textContent()).resolves.toBe(`AI analysis MEDIUM 88% confident · spam: ${AI_REASONING}`);
      expect(await card.getByText(caseId.slice(-8)).count()).toBe(0);
      await expect(card.getByTestId("first-decision").textContent()).resolves.toBe("Dismissed (duplicate)");
      await expect(card.getByTestId("second-decision").textContent()).resolves.toBe("Spam confirmed");
      expect(await a11yViolations(p)).toEqual([]);
      await card.getByLabel("Lead's note (optional)").fill("Spam after all");
      await card.getByRole("checkbox", { name: /Reopen the case/ }).check();
      await card.getByRole("button", { name: "Acknowledge" }).click();
      await p.getByText("Acknowledged; the case is back in review").waitFor();
      expect((await s.platform.casePage(caseId)).case.status).toBe("IN_REVIEW");
      await p.getByRole("button", { name: "Acknowledged" }).click();
      await p.getByTestId("disagreement").filter({ hasText: "Spam after all" }).waitFor();
      expect(await a11yViolations(p)).toEqual([]);
      await s.shot(p, "quality-disagreements.png");

      // The agreement figures: one review, the pair's κ undefined on one item (—), agreement 0 %.
      await p.getByRole("link", { name: "Agreement", exact: true }).click();
      await p.getByRole("heading", { name: "Agreement", exact: true }).waitFor();
      const pair = p.getByTestId("agreement-pair");
      await pair.waitFor();
      const pairText = (await pair.textContent()) ?? "";
      expect(pairText).toContain(first.email);
      expect(pairText).toContain(second.email);
      await expect(pair.locator("td").nth(1).textContent()).resolves.toBe("1");
      await expect(pair.locator("td").nth(2).textContent()).resolves.toBe("0 %");
      expect(await a11yViolations(p)).toEqual([]);
    },
    BROWSER_T,
  );
});
