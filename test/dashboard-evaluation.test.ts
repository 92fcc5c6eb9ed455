/**
 * The evaluation page (issue 28) in Chromium: a set imported from a JSONL file, run twice
 * against the fake Ollama with two scripted answerers (A, then a "better model" B), the run's
 * figures as the page shows them (each computed by hand below from the scripted answers), the
 * plots, the threshold advice, the two runs side by side with the items that changed, and the
 * advice the project settings show before a new threshold is saved. axe-core finds nothing on
 * the page, the comparison and the settings' dialog. The "Start a run" dialog offers the models
 * the fake Ollama has installed (`/api/tags`) in a select, and says so when Ollama cannot be
 * reached (issue 45, item 8).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { startFakeOllama, type FakeAnswer, type FakeOllama, type RecordedChat } from "../scripts/fake-ollama.ts";
import { BROWSER_T, expectNoA11yViolations, openDashboard, type DashboardSession } from "./helpers/browser.ts";
import { until } from "./helpers/wait.ts";

let fake: FakeOllama;
let b: DashboardSession;
let page: Page;
/** The two runs of the first test (the second looks at them at tablet width and in the dark). */
const runs = { a: "", b: "" };

/**
 * The set: 8 items, each text carrying its id after "ITEM-" so the fake model can tell them
 * apart (the prompt puts a zero-width space after "[", so no brackets).
 */
const ITEMS = [
  { id: "e1", text: "ITEM-e1 buy cheap pills now", categories: ["spam"], severity: "MEDIUM" },
  { id: "e2", text: "ITEM-e2 visit my shop for deals", categories: ["spam"], severity: "MEDIUM" },
  { id: "e3", text: "ITEM-e3 I will hurt you tonight", categories: ["threats"], severity: "HIGH" },
  { id: "e4", text: "ITEM-e4 you had better watch your back", categories: ["threats"], severity: "HIGH" },
  { id: "e5", text: "ITEM-e5 nice photo", categories: [], severity: "LOW" },
  { id: "e6", text: "ITEM-e6 see you tomorrow", categories: [], severity: "LOW" },
  { id: "e7", text: "ITEM-e7 great game yesterday", categories: [], severity: "LOW" },
  { id: "e8", text: "ITEM-e8 free money here", categories: ["spam"], severity: "HIGH" },
] as const;

type Answer = [categories: string[], severity: "LOW" | "MEDIUM" | "HIGH" | "CRITICAL", confidence: number];
/** Model A: misses e2 (LOW), calls e4 spam, flags e6 as spam. */
const A: Record<string, Answer> = {
  e1: [["spam"], "MEDIUM", 90],
  e2: [[], "LOW", 60],
  e3: [["threats"], "HIGH", 80],
  e4: [["spam"], "MEDIUM", 60],
  e5: [[], "LOW", 93],
  e6: [["spam"], "MEDIUM", 70],
  e7: [[], "LOW", 85],
  e8: [["spam"], "HIGH", 95],
};
/** Model B: gets e2 and e6 right (fixed), e4's category right (changed), flags e7 (broken). */
const B: Record<string, Answer> = {
  ...A,
  e2: [["spam"], "MEDIUM", 75],
  e4: [["threats"], "HIGH", 65],
  e6: [[], "LOW", 80],
  e7: [["spam"], "MEDIUM", 53],
};

const answerer =
  (answers: Record<string, Answer>) =>
  (req: RecordedChat): FakeAnswer => {
    const text = req.messages.findLast((m) => m.role === "user")?.content ?? "";
    const id = /ITEM-(e\d+)/.exec(text)?.[1] ?? "";
    const [categories, severity, confidence] = answers[id] ?? [[], "LOW", 50];
    return { json: { reasoning: `Scripted answer for ${id}.`, categories, severity, confidence } };
  };

/*
 * The figures, by hand (docs: src/domain/views/evaluation.ts).
 *
 * Run A. Predicted categories (severity not LOW): e1 spam, e3 threats, e4 spam, e6 spam, e8 spam.
 *   spam: expected e1 e2 e8 → TP e1 e8 = 2, FP e4 e6 = 2, FN e2 = 1: P 50.0 %, R 66.7 %, F1 4/7 = 57.1 %
 *   threats: expected e3 e4 → TP 1, FP 0, FN 1: P 100 %, R 50 %, F1 2/3 = 66.7 %
 *   micro: TP 3, FP 2, FN 2 → P 60 %, R 60 %, F1 60.0 %; macro F1 (4/7 + 2/3)/2 = 61.9 %
 *   κ (quadratic): matrix L→L 2, L→M 1, M→M 1, M→L 1, H→H 2, H→M 1; observed 3/9, chance 11/9 → 8/11 = 0.727
 *   ECE: bins [60,70) e2 e4: conf .6, acc .5; [70,80) e6: .7, 0; [80,90) e3 e7: .825, 1;
 *        [90,100] e1 e5 e8: .9267, 1 → (2·.1 + .7 + 2·.175 + 3·.0733)/8 = 1.47/8 = 0.18375
 *   Advice at 90 % precision: spam first reaches it at 75 (e1 e8 flagged: P 100 %, R 66.7 %);
 *   threats at 0 (P 100 %, R 50 %). At the current threshold 70, spam flags e6 e1 e8: P 66.7 %.
 * Run B. Predicted: e1 e2 e7 e8 spam, e3 e4 threats.
 *   spam TP 3, FP 1, FN 0 → F1 6/7 = 85.7 %; threats TP 2 → F1 100 %; micro TP 5 FP 1 FN 0 → F1 10/11 = 90.9 %
 *   macro F1 (6/7 + 1)/2 = 92.9 %; κ: only e7 L→M off by one: observed 1/9, chance 11/9 → 10/11 = 0.909
 *   ECE: e7 .53 wrong (.53), e4 .65 (.35), e2 .75 (.25), e3 e6 .8 (2·.2), e1 e5 e8 (.22) → 1.75/8 = 0.21875
 *   Advice: spam at 55 (e2 e1 e8: P 100 %, R 100 %); at 50 e7 is flagged too: P 75 %, R 100 %.
 * A → B: fixed e2, e6 (wrong verdict in A, right in B); broken e7; changed e4 (spam → threats, both
 * a violation); unchanged e1 e3 e5 e8.
 */

const DIALOG = "dialog[open]";
/** The fake Ollama's installed models: the server's own (FLAGSTAFF_AI_MODEL's default, llama3.2) and another. */
const INSTALLED = ["llama3.2", "qwen2.5:7b"];

beforeAll(async () => {
  fake = startFakeOllama({ models: INSTALLED });
  b = await openDashboard({ OLLAMA_HOST: fake.url, FLAGSTAFF_JOB_POLL_MS: "100" });
  page = b.page;
}, BROWSER_T);
afterAll(async () => {
  await b?.close();
  await fake?.stop();
});

const figure = (name: string) => page.locator(`[data-figure='${name}'] dd`).first();

async function startRunFromUi(model?: string): Promise<string> {
  const { orgSlug, projectId } = b.server.demo;
  const before = (await b.platform.trpc.evaluation.runs.query({ orgSlug, projectId })).runs.length;
  await page.goto(`${b.server.url}/#/evaluation`);
  await page.getByRole("button", { name: "Start a run of labelled" }).click();
  const dialog = page.locator(DIALOG);
  // The model is chosen among those Ollama has installed, the server's own first.
  const select = dialog.getByRole("combobox", { name: "Model" });
  await select.waitFor();
  await expect(select.locator("option").allTextContents()).resolves.toEqual(["llama3.2:latest (3.2B, 2.0 GB) · the server's model", "qwen2.5:7b (3.2B, 2.0 GB)"]);
  await expect(select.inputValue()).resolves.toBe("llama3.2:latest");
  if (model) await select.selectOption(model);
  await expectNoA11yViolations(page, "the Start a run dialog with the installed models", DIALOG);
  await dialog.getByRole("button", { name: "Start run" }).click();
  await dialog.waitFor({ state: "detached" }).catch(() => {});
  let runId = "";
  await until("the run started", async () => {
    const runs = (await b.platform.trpc.evaluation.runs.query({ orgSlug, projectId })).runs;
    runId = runs[0]?.id ?? "";
    return runs.length === before + 1;
  });
  // The progress bar, refreshed while the run works, reaches 8 / 8 and the status "completed".
  const row = page.locator(`tr[data-run='${runId}']`);
  await row.waitFor();
  await until("the run completed on the page", async () => (await row.locator("[data-run-status]").getAttribute("data-run-status")) === "completed", 30_000);
  await expect(row.getByTestId("run-progress").textContent()).resolves.toContain("8 / 8");
  await expect(row.locator("progress").getAttribute("value")).resolves.toBe("8");
  return runId;
}

describe("the evaluation page", () => {
  test(
    "a set imported, run twice, its figures, plots and threshold advice, the two runs compared, and the advice before a new threshold is saved; axe finds nothing",
    async () => {
      const { orgSlug, projectId } = b.server.demo;

      // Before any run: changing the threshold says there is no advice yet.
      await page.goto(`${b.server.url}/#/settings`);
      await page.getByLabel("Confidence threshold (1–100)").fill("75");
      await page.getByRole("button", { name: "Save settings" }).click();
      await page.locator(DIALOG).getByTestId("no-advice").waitFor();
      await page.locator(DIALOG).getByRole("button", { name: "Keep editing" }).click();
      await page.getByRole("button", { name: "Undo changes" }).first().click();

      // The page, reached from the navigation; the set imported from a JSONL file.
      await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Evaluation" }).click();
      await page.getByRole("heading", { name: "Evaluation", exact: true }).waitFor();
      await page.getByLabel("CSV or JSONL file").setInputFiles({
        name: "labelled.jsonl",
        mimeType: "application/x-ndjson",
        buffer: Buffer.from(ITEMS.map((i) => JSON.stringify(i)).join("\n") + "\n"),
      });
      await page.getByRole("button", { name: "Import set" }).click();
      const setRow = page.locator("tr[data-set='labelled']");
      await setRow.waitFor();
      await expect(setRow.textContent()).resolves.toContain("8");
      await expectNoA11yViolations(page, "the evaluation page with a set");

      // Two runs: model A's answers, then model B's.
      fake.setDefault(answerer(A));
      const runA = await startRunFromUi();
      fake.setDefault(answerer(B));
      const runB = await startRunFromUi("qwen2.5:7b");
      Object.assign(runs, { a: runA, b: runB });
      // Each run asked the model chosen in the dialog.
      const runModels = Object.fromEntries((await b.platform.trpc.evaluation.runs.query({ orgSlug, projectId })).runs.map((r) => [r.id, r.model]));
      expect([runModels[runA], runModels[runB]]).toEqual(["llama3.2:latest", "qwen2.5:7b"]);
      expect(new Set(fake.requests.map((r) => r.model))).toEqual(new Set(["llama3.2:latest", "qwen2.5:7b"]));
      // Each item was asked once per run.
      expect(fake.requests.filter((r) => /ITEM-e1\b/.test(r.messages.at(-1)?.content ?? "")).length).toBe(2);

      // Run A's detail: the figures computed above.
      await page.locator(`tr[data-run='${runA}']`).getByRole("link", { name: /^Open run/ }).click();
      await page.getByRole("heading", { name: /^Run of labelled v1/ }).waitFor();
      await expect(figure("micro-f1").textContent()).resolves.toBe("60.0 %");
      await expect(figure("macro-f1").textContent()).resolves.toBe("61.9 %");
      await expect(figure("kappa").textContent()).resolves.toBe((8 / 11).toFixed(3));
      await expect(figure("ece").textContent()).resolves.toBe("0.184");
      await expect(figure("latency").textContent()).resolves.toMatch(/\d+ ms|\d\.\d s/);
      await expect(figure("tokens").textContent()).resolves.toMatch(/^[\d,]+$/);
      const spam = page.locator("table.eval-categories tr[data-category='spam']");
      await expect(spam.locator("td").allTextContents()).resolves.toEqual(["50.0 %", "66.7 %", "57.1 %", "2", "2", "1"]);
      await expect(page.locator("table.eval-categories tr[data-category='threats'] td").allTextContents()).resolves.toEqual(["100.0 %", "50.0 %", "66.7 %", "1", "0", "1"]);
      // Categories the set does not touch are left out.
      expect(await page.locator("table.eval-categories tr[data-category='hate_speech']").count()).toBe(0);

      // The plots: each an image with a name, its numbers in a table.
      const reliability = page.getByTestId("reliability-diagram");
      await expect(reliability.getByRole("img").getAttribute("aria-label")).resolves.toContain("expected calibration error 0.184, 4 of 10 confidence bins");
      await reliability.getByText("The numbers").click();
      await expect(reliability.locator("tbody tr").nth(9).locator("td").allTextContents()).resolves.toEqual(["3", "92.7 %", "100.0 %", "+7.3 pts"]);
      const heat = page.getByTestId("confusion-heatmap");
      // Rows spam, threats, (none): spam→spam 2, spam→(none) 1 (e2); threats→threats 1, threats→spam 1 (e4); (none)→spam 1 (e6), (none)→(none) 2.
      await heat.getByText("The numbers").click();
      await expect(heat.locator("tbody tr").nth(0).locator("td").allTextContents()).resolves.toEqual(["2", "0", "1"]);
      await expect(heat.locator("tbody tr").nth(1).locator("td").allTextContents()).resolves.toEqual(["1", "1", "0"]);
      await expect(heat.locator("tbody tr").nth(2).locator("td").allTextContents()).resolves.toEqual(["1", "0", "2"]);
      await expect(heat.locator("svg text.heat-count").allTextContents()).resolves.toEqual(["2", "0", "1", "1", "1", "0", "1", "0", "2"]);
      await expect(page.getByTestId("pr-chart").getByRole("img").getAttribute("aria-label")).resolves.toContain("2 categories (spam, threats)");

      // Threshold advice at the default target of 90 %: spam at 75 (recall 66.7 %), threats at 0.
      const advice = page.getByTestId("threshold-advice");
      const spamAdvice = advice.locator("table.threshold-advice tr[data-category='spam']");
      await spamAdvice.waitFor();
      await expect(spamAdvice.getByTestId("advised-threshold").textContent()).resolves.toBe("75 (100.0 % precision)");
      await expect(spamAdvice.locator("td").nth(1).textContent()).resolves.toBe("66.7 %");
      await expect(spamAdvice.locator("td").nth(2).textContent()).resolves.toBe("66.7 % precision · 66.7 % recall · 3 flagged");
      // Threats reach the target with no threshold at all (e3, at 80, the one flagged): not "0", but any up to 80.
      await expect(advice.locator("tr[data-category='threats']").getByTestId("advised-threshold").textContent()).resolves.toBe("any up to 80 (100.0 % precision)");
      await advice.getByLabel("Curve of category").selectOption("threats");
      await expect(page.getByTestId("threshold-chart-threats").getByRole("img").getAttribute("aria-label")).resolves.toContain("at the advised threshold any up to 80, precision 100.0 %");
      await expect(page.getByTestId("threshold-chart-threats").locator("text.mark-label").allTextContents()).resolves.toEqual(["current 70", "advised any up to 80"]);
      await expectNoA11yViolations(page, "a run's advice of no threshold needed");
      await advice.getByLabel("Curve of category").selectOption("spam");
      // A lower target: spam's advice moves down to 65 (e6 e1 e8: 66.7 %), the curve's plot follows.
      await advice.getByLabel("Precision target (%)").fill("60");
      await until("the advice at 60 %", async () => (await spamAdvice.getByTestId("advised-threshold").textContent()) === "65 (66.7 % precision)");
      await expect(page.getByTestId("threshold-chart-spam").getByRole("img").getAttribute("aria-label")).resolves.toContain("at the advised threshold 65");
      await expectNoA11yViolations(page, "a run's detail");
      await b.shot(page, "evaluation-run.png");

      // Two runs side by side, chosen on the page.
      await page.goto(`${b.server.url}/#/evaluation`);
      await page.getByRole("checkbox", { name: /^Choose run/ }).nth(0).check();
      await page.getByRole("checkbox", { name: /^Choose run/ }).nth(1).check();
      await page.getByRole("link", { name: "Compare the two chosen runs" }).click();
      await page.getByRole("heading", { name: "Two runs side by side" }).waitFor();
      // The list is newest first: B was chosen first, so A is the newer run in the URL's b; make A the left one.
      await page.getByLabel("Run A").selectOption(runA);
      await page.getByLabel("Run B").selectOption(runB);
      await until("the comparison", async () => (await page.getByTestId("change-counts").count()) === 1);
      await expect(page.getByTestId("change-counts").textContent()).resolves.toBe("2 fixed · 1 broken · 1 otherwise changed · 4 unchanged");
      const cells = async (name: string) => page.locator(`table.eval-compare tr[data-figure='${name}'] td`).allTextContents();
      await expect(cells("micro-f1")).resolves.toEqual(["60.0 %", "90.9 %", "+30.9 pts (better)▲"]);
      await expect(cells("f1-spam")).resolves.toEqual(["57.1 %", "85.7 %", "+28.6 pts (better)▲"]);
      await expect(cells("kappa")).resolves.toEqual([(8 / 11).toFixed(3), (10 / 11).toFixed(3), "+0.182 (better)▲"]);
      await expect(cells("ece")).resolves.toEqual(["0.184", "0.219", "+0.035 (worse)▼"]);
      const change = (id: string) => page.locator(`table.eval-changes tr[data-item='${id}']`);
      await expect(change("e2").getAttribute("data-direction")).resolves.toBe("fixed");
      await expect(change("e2").locator("[data-answer=a]").textContent()).resolves.toBe("none · LOW · 60");
      await expect(change("e2").locator("[data-answer=b]").textContent()).resolves.toBe("spam · MEDIUM · 75");
      await expect(change("e6").getAttribute("data-direction")).resolves.toBe("fixed");
      await expect(change("e7").getAttribute("data-direction")).resolves.toBe("broken");
      await expect(change("e4").getAttribute("data-direction")).resolves.toBe("changed");
      await expect(change("e4").locator("[data-answer=b]").textContent()).resolves.toBe("threats · HIGH · 65");
      expect(await page.locator("table.eval-changes tbody tr").count()).toBe(4);
      await page.getByLabel("Show", { exact: true }).selectOption("broken");
      await expect(page.locator("table.eval-changes tbody tr").count()).resolves.toBe(1);
      await expectNoA11yViolations(page, "two runs side by side");
      await b.shot(page, "evaluation-compare.png");

      // The settings: a new threshold shows the advice of the latest completed run (B) first.
      await page.goto(`${b.server.url}/#/settings`);
      await page.getByLabel("Confidence threshold (1–100)").fill("50");
      await page.getByRole("button", { name: "Save settings" }).click();
      const dialog = page.locator(DIALOG);
      const spamRow = dialog.locator("tr[data-category='spam']");
      await spamRow.waitFor();
      await expect(dialog.getByRole("heading").first().textContent()).resolves.toBe("Change the threshold from 70 to 50?");
      await expect(spamRow.getByTestId("advised-threshold").textContent()).resolves.toBe("55 (100.0 % precision)");
      // At 70 (the current): e1 e2 e8 flagged, all spam; at 50 e7 (53) too, wrongly.
      await expect(spamRow.locator("td").nth(2).textContent()).resolves.toBe("100.0 % precision · 100.0 % recall · 3 flagged");
      await expect(spamRow.getByTestId("at-proposed").textContent()).resolves.toBe("75.0 % precision · 100.0 % recall · 4 flagged");
      // The table fits the dialog (it wraps, it does not scroll).
      expect(await page.evaluate(() => { const el = document.querySelector(".threshold-change .table-wrap")!; return el.scrollWidth <= el.clientWidth; })).toBe(true);
      await b.shot(page, "evaluation-settings-advice.png");
      await expectNoA11yViolations(page, "the threshold's advice in the settings", DIALOG);
      // Nothing saved until the dialog says so.
      expect((await b.platform.trpc.ai.settings.query({ orgSlug, projectId })).settings.aiThreshold).toBe(70);
      await dialog.getByRole("button", { name: "Save with threshold 50" }).click();
      await until("the threshold saved", async () => (await b.platform.trpc.ai.settings.query({ orgSlug, projectId })).settings.aiThreshold === 50);

      // The precision target beside the threshold, saved with a new one: the advice aims at it.
      await page.getByLabel("Precision target for threshold advice (50–99.9 %)").fill("75");
      await page.getByLabel("Confidence threshold (1–100)").fill("60");
      await page.getByRole("button", { name: "Save settings" }).click();
      await until("the advice at 75 %", async () => (await dialog.locator("th").allTextContents()).includes("Advised threshold (precision ≥ 75 %)"));
      await dialog.getByRole("button", { name: "Save with threshold 60" }).click();
      await until("the target saved", async () => {
        const { settings } = await b.platform.trpc.ai.settings.query({ orgSlug, projectId });
        return settings.aiThreshold === 60 && settings.aiPrecisionTarget === 0.75;
      });
    },
    BROWSER_T * 2,
  );

  test(
    "a running run's progress bar moves without a reload, and Cancel stops it with its figures over the items done",
    async () => {
      const { orgSlug, projectId } = b.server.demo;
      // A slow model: 400 ms an answer.
      fake.setDefault((req) => ({ ...(answerer(A)(req) as { json: unknown }), delayMs: 400 }));
      const setId = (await b.platform.trpc.evaluation.sets.query({ orgSlug, projectId })).sets[0]!.id;
      await page.goto(`${b.server.url}/#/evaluation`);
      await page.getByRole("heading", { name: "Runs" }).waitFor();
      const { run } = await b.platform.trpc.evaluation.startRun.mutate({ orgSlug, projectId, setId });
      const row = page.locator(`tr[data-run='${run.id}']`);
      await until("the page shows items done while the run works", async () => {
        const done = Number(await row.locator("progress").getAttribute("value").catch(() => null));
        return done >= 1 && done < 8 && (await row.locator("[data-run-status]").getAttribute("data-run-status")) === "running";
      });
      await row.getByRole("button", { name: /^Cancel run/ }).click();
      await until("the run cancelled on the page", async () => (await row.locator("[data-run-status]").getAttribute("data-run-status")) === "cancelled");
      const cancelled = (await b.platform.trpc.evaluation.run.query({ orgSlug, projectId, runId: run.id })).run;
      expect(cancelled.itemsDone).toBeLessThan(8);
      expect(cancelled.metrics?.items).toBe(cancelled.itemsDone);
      expect(await row.getByRole("button", { name: /^Cancel run/ }).count()).toBe(0);
      fake.setDefault(null);
    },
    BROWSER_T,
  );

  test(
    "at tablet width and in the dark colour scheme: a run and the comparison fit the screen; axe finds nothing",
    async () => {
      expect(runs.a && runs.b).toBeTruthy();
      await page.setViewportSize({ width: 820, height: 1180 });
      await page.emulateMedia({ colorScheme: "dark" });
      try {
        const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        await page.goto(`${b.server.url}/#/evaluation/runs/${runs.a}`);
        await page.getByTestId("threshold-advice").locator("table.threshold-advice").waitFor();
        // The target starts at the project's (75 %, saved in the settings step).
        await expect(page.getByTestId("threshold-advice").getByLabel("Precision target (%)").inputValue()).resolves.toBe("75");
        expect(await overflow()).toBeLessThanOrEqual(0);
        await expectNoA11yViolations(page, "a run (tablet, dark)");
        await b.shot(page, "evaluation-run-dark-tablet.png");
        await page.goto(`${b.server.url}/#/evaluation/compare?a=${runs.a}&b=${runs.b}`);
        await page.getByTestId("change-counts").waitFor();
        expect(await overflow()).toBeLessThanOrEqual(0);
        await expectNoA11yViolations(page, "two runs side by side (tablet, dark)");
      } finally {
        await page.emulateMedia({ colorScheme: "light" });
        await page.setViewportSize({ width: 1366, height: 900 });
      }
    },
    BROWSER_T,
  );

  test(
    "with Ollama gone, the Start a run dialog says it cannot be reached and offers the server's model only; axe finds nothing",
    async () => {
      await fake.stop();
      await page.goto(`${b.server.url}/#/evaluation`);
      await page.getByRole("button", { name: "Start a run of labelled" }).click();
      const dialog = page.locator(DIALOG);
      await expect(dialog.getByTestId("models-unavailable").textContent()).resolves.toBe(
        "The AI backend (Ollama) cannot be reached, so its installed models could not be listed; try again later. A run started now uses the server's model and waits until Ollama answers.",
      );
      await expect(dialog.getByRole("combobox", { name: "Model" }).locator("option").allTextContents()).resolves.toEqual(["The server's model"]);
      await expectNoA11yViolations(page, "the Start a run dialog with Ollama unreachable", DIALOG);
      await dialog.getByRole("button", { name: "Cancel" }).click();
    },
    BROWSER_T,
  );
});
