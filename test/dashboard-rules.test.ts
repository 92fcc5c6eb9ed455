/**
 * The rules editor in a real browser (issue 15): an admin builds "reason includes child_safety →
 * route to the Child safety queue" with the form (no JSON typed), sees the server's validation
 * error next to the part it names, tests the draft against the organization's reports (the
 * existing child_safety report matches, nothing changes), saves it in shadow mode, switches it
 * live, and a new child_safety report filed through the SDK lands in that queue: the rule's hits
 * list shows it applied, and the review queue's queue picker shows it in the specialists' queue.
 * axe-core finds nothing on the rules list, the editor and its test result. Every effect type the
 * editor offers adds its row, with its label, its inputs and its default.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { EFFECT_TYPES } from "../src/domain/views/rule-effects.ts";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";
import { until } from "./helpers/wait.ts";

let b: DashboardSession;
let page: Page;
let queueId = "";
let oldChildSafety = "";
const QUEUE = "Child safety specialists";
const RULE = "Child safety to the specialists";

beforeAll(async () => {
  b = await openDashboard();
  page = b.page;
  oldChildSafety = await b.sdkReport({
    target: { contentType: "post", contentExternalId: "rules-old", content: "an old post" },
    subject: { type: "user", externalId: "u-rules-old" },
    reason: "child_safety",
  });
  await b.sdkReport({ subject: { type: "user", externalId: "u-rules-spam" }, reason: "spam" });
  const created = await b.server.call("POST", `/api/v1/organizations/${b.server.demo.orgSlug}/queues`, {
    body: { name: QUEUE, description: "Trained for child safety reports", ordering: "severity_age" },
  });
  expect(created.status).toBe(201);
  queueId = created.body.queue.id;
}, BROWSER_T);

afterAll(async () => {
  await b?.close();
});

test(
  "build a rule with the form, test it, save it in shadow, switch it live: a new report lands in its queue",
  async () => {
    // The list, empty.
    await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Rules" }).click();
    await page.getByRole("heading", { name: "Rules", exact: true }).waitFor();
    await page.getByText("No rule yet").waitFor();
    await expectNoA11yViolations(page, "the rules list (empty)");

    // The editor: name, one comparison built with the selects.
    await page.getByRole("link", { name: "New rule" }).click();
    await page.getByRole("heading", { name: "New rule" }).waitFor();
    await page.getByLabel("Name", { exact: true }).fill(RULE);
    const conditions = page.getByRole("group", { name: "Conditions" });
    await expect(conditions.getByLabel("Field").inputValue()).resolves.toBe("report.reasons");
    // A list field offers only the ops of its kind.
    const ops = await conditions.getByLabel("Operator").locator("option").allTextContents();
    expect(ops).toEqual(["includes"]);
    // The value is a category of the project, picked from a select.
    await conditions.getByLabel("Value", { exact: true }).selectOption("child_safety");

    // The builder adds and removes comparisons and nested groups; a number field offers number ops.
    await conditions.getByRole("button", { name: "Add group" }).click();
    const group = conditions.getByRole("group", { name: "Any of" });
    await group.getByLabel("Field").selectOption("reporter.accuracy");
    const numberOps = await group.getByLabel("Operator").locator("option").allTextContents();
    expect(numberOps).toContain("is at least");
    expect(numberOps).not.toContain("includes");
    await expect(group.getByLabel("Value").getAttribute("type")).resolves.toBe("number");
    await group.getByRole("button", { name: "Remove this group" }).click();
    await expect(conditions.getByRole("group", { name: "Any of" }).count()).resolves.toBe(0);
    await expect(conditions.locator(".cond-row").count()).resolves.toBe(1);

    // Without an effect the server refuses the rule and names the part: the error shows next to "Then".
    await page.getByRole("button", { name: "Test", exact: true }).click();
    await page.locator(".rule-then [role=alert]").first().waitFor();

    // The effect: route to the specialists' queue (the queue select lists the org's queues).
    await page.getByLabel("Effect to add").selectOption("route");
    await page.getByRole("button", { name: "Add effect" }).click();
    await page.getByLabel("Queue", { exact: true }).selectOption({ label: QUEUE });
    await expect(page.locator(".rule-then [role=alert]").count()).resolves.toBe(0);
    await expect(page.getByLabel("Mode", { exact: true }).inputValue()).resolves.toBe("shadow");

    // The JSON the form built.
    await page.getByRole("button", { name: "Show JSON" }).click();
    const json = JSON.parse((await page.locator("#rule-json").textContent()) ?? "{}");
    expect(json).toMatchObject({
      name: RULE,
      trigger: "report.created",
      mode: "shadow",
      when: { all: [{ field: "report.reasons", op: "includes", value: "child_safety" }] },
      then: [{ type: "route", queueId }],
    });

    // Test the draft: the existing child_safety report matches, the spam one does not; nothing changes.
    await page.getByRole("button", { name: "Test", exact: true }).click();
    const result = page.getByRole("region", { name: "Test result" });
    await result.waitFor();
    await expect(result.textContent()).resolves.toMatch(/against 2 recent reports and matches 1\b/);
    await result.getByRole("link", { name: oldChildSafety }).waitFor();
    await expect(result.textContent()).resolves.toContain(`route to ${QUEUE}`);
    await expectNoA11yViolations(page, "the rule editor with its test result");

    // Save: the rule exists in shadow mode, version 1.
    await page.getByRole("button", { name: "Create rule" }).click();
    await page.getByRole("heading", { name: `Rule: ${RULE}` }).waitFor();
    const ruleId = decodeURIComponent(new URL(page.url()).hash.split("/")[2] ?? "");
    expect(ruleId).not.toBe("");
    const saved = (await b.server.call("GET", `/api/v1/organizations/${b.server.demo.orgSlug}/rules/${ruleId}`)).body.rule;
    expect(saved).toMatchObject({ mode: "shadow", version: 1, then: [{ type: "route", queueId }] });
    await page.getByRole("region", { name: "Hits" }).getByText("No report has matched this rule yet.").waitFor();
    await expectNoA11yViolations(page, "the saved rule's editor");

    // Switch it live: version 2.
    await page.getByRole("button", { name: "Switch live" }).click();
    await page.getByText("The rule is live").waitFor();
    await until("the rule live at version 2", async () => {
      const rule = (await b.server.call("GET", `/api/v1/organizations/${b.server.demo.orgSlug}/rules/${ruleId}`)).body.rule;
      return rule?.mode === "live" && rule.version === 2;
    });

    // A new child_safety report: the live rule routes it into the specialists' queue.
    const fresh = await b.sdkReport({
      target: { contentType: "post", contentExternalId: "rules-new", content: "a new post" },
      subject: { type: "user", externalId: "u-rules-new" },
      reason: "child_safety",
    });
    // The rule's hits show it, applied, at version 2.
    const hits = page.getByRole("region", { name: "Hits" });
    await hits.getByRole("link", { name: fresh }).waitFor({ timeout: 15_000 });
    await hits.getByText("applied", { exact: true }).waitFor();
    await expect(hits.textContent()).resolves.toContain("1 in the last 24 hours");

    // The list: live, version 2, one hit.
    await page.getByRole("link", { name: "All rules" }).click();
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: RULE }) });
    await row.waitFor();
    // (the hit counts load after the row)
    const cells = await until("the row's hit counts", async () => {
      const texts = await row.locator("td").allTextContents();
      return texts.includes("…") ? null : texts;
    });
    expect(cells).toEqual([RULE, "report.created", "live", "2", "1", "1"]);
    await expectNoA11yViolations(page, "the rules list");

    // The review queue: the specialists' queue holds the new report's case, the default one does not.
    await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Review queue" }).click();
    await page.getByRole("heading", { name: "Review queue" }).waitFor();
    const picker = page.getByLabel("Queue", { exact: true });
    const option = picker.locator("option", { hasText: QUEUE });
    await option.waitFor({ state: "attached" });
    // The picker counts the queue's open cases: the new report's case.
    await expect(option.textContent()).resolves.toBe(`${QUEUE} (1)`);
    await picker.selectOption({ label: `${QUEUE} (1)` });
    // (the page keeps the previous list while the queue's loads: wait for the old one to go)
    await page.getByRole("link", { name: "post rules-old" }).waitFor({ state: "detached", timeout: 15_000 });
    await page.getByRole("link", { name: "post rules-new" }).waitFor({ timeout: 15_000 });
    // The old child_safety report (only tested, never routed) stays in the default queue.
    const defaultOption = picker.locator("option", { hasText: "(default)" });
    await picker.selectOption({ label: (await defaultOption.textContent())! });
    await page.getByRole("link", { name: "post rules-new" }).waitFor({ state: "detached", timeout: 15_000 });
    await page.getByRole("link", { name: "post rules-old" }).waitFor({ timeout: 15_000 });
  },
  BROWSER_T * 2,
);

test(
  "every effect type the editor offers adds its row: its label, its inputs, its default in the JSON",
  async () => {
    await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Rules" }).click();
    await page.getByRole("link", { name: "New rule" }).click();
    await page.getByRole("heading", { name: "New rule" }).waitFor();
    const adding = page.getByLabel("Effect to add");
    const offered = await adding.locator("option").evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
    expect(offered).toEqual(EFFECT_TYPES);
    for (const type of offered) {
      await adding.selectOption(type);
      await page.getByRole("button", { name: "Add effect" }).click();
    }
    const rows = page.locator(".effect-row");
    await expect(rows.count()).resolves.toBe(EFFECT_TYPES.length);
    const labels = await rows.evaluateAll((lis) => lis.map((li) => li.getAttribute("aria-label")));
    expect(labels).toEqual(["Route to a queue", "Raise the priority", "Tag the case", "Escalate to a team", "Dismiss the report", "Resolve the report", "Mute the reporter"]);
    // Each row's inputs, by their labels.
    const inputs = await rows.evaluateAll((lis) => lis.map((li) => [...li.querySelectorAll("label")].map((l) => l.textContent?.trim())));
    expect(inputs).toEqual([["Queue"], ["Raise by"], ["Tag"], ["Team"], ["Reason"], ["Resolution", "Enforcement"], ["For (hours)"]]);
    await page.getByRole("button", { name: "Show JSON" }).click();
    const json = JSON.parse((await page.locator("#rule-json").textContent()) ?? "{}");
    expect(json.then).toEqual([
      { type: "route", queueId },
      { type: "priority", by: 10 },
      { type: "tag", tag: "" },
      { type: "escalate", team: "safety" },
      { type: "dismiss", reason: "false_positive" },
      { type: "resolve", resolutionCode: "NO_VIOLATION" },
      { type: "mute_reporter", durationSeconds: 86_400 },
    ]);
  },
  BROWSER_T,
);
