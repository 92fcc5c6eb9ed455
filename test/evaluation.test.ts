/**
 * Measuring the classifier (issue 28), through the front door: a small set imported, run against
 * a fake Ollama whose answers are scripted per item text, and the run's stored figures checked
 * against figures computed by hand below; the refusals; a set built from decisions (one of them
 * overturned on appeal); frozen versions; comparing two runs; cancelling one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { classifiedText, startFakeOllama, type FakeAnswer, type FakeOllama } from "../scripts/fake-ollama.ts";
import { demoAdmin, expectRefused, newUser, refusal, withKey, type Caller } from "./helpers/dashboard.ts";
import { runCli, startServer, type TestServer } from "./helpers/server.ts";
import { join } from "node:path";
import { until } from "./helpers/wait.ts";

let server: TestServer;
let fake: FakeOllama;
let admin: Caller;
let at: { orgSlug: string; projectId: string };

/**
 * The set: 8 items, with the model's scripted answer to each (categories, severity, confidence).
 *
 *  #  text                          expected             answer
 *  1  Buy cheap pills now           spam, MEDIUM         spam, MEDIUM, 90
 *  2  Win a free prize click here   spam, MEDIUM         spam, HIGH, 80
 *  3  Visit my shop for deals       spam, MEDIUM         none, LOW, 70
 *  4  You are an idiot              harassment, HIGH     harassment, HIGH, 95
 *  5  Nobody likes you loser        harassment, HIGH     spam, MEDIUM, 60
 *  6  Nice weather today            none, LOW            none, LOW, 90
 *  7  Great match yesterday         none, LOW            spam, MEDIUM, 55
 *  8  See you at the meetup         none, LOW            none, LOW, 85
 */
const ITEMS: { text: string; categories: string[]; severity: string; answer: { categories: string[]; severity: string; confidence: number } }[] = [
  { text: "Buy cheap pills now", categories: ["spam"], severity: "MEDIUM", answer: { categories: ["spam"], severity: "MEDIUM", confidence: 90 } },
  { text: "Win a free prize click here", categories: ["spam"], severity: "MEDIUM", answer: { categories: ["spam"], severity: "HIGH", confidence: 80 } },
  { text: "Visit my shop for deals", categories: ["spam"], severity: "MEDIUM", answer: { categories: [], severity: "LOW", confidence: 70 } },
  { text: "You are an idiot", categories: ["harassment"], severity: "HIGH", answer: { categories: ["harassment"], severity: "HIGH", confidence: 95 } },
  { text: "Nobody likes you loser", categories: ["harassment"], severity: "HIGH", answer: { categories: ["spam"], severity: "MEDIUM", confidence: 60 } },
  { text: "Nice weather today", categories: [], severity: "LOW", answer: { categories: [], severity: "LOW", confidence: 90 } },
  { text: "Great match yesterday", categories: [], severity: "LOW", answer: { categories: ["spam"], severity: "MEDIUM", confidence: 55 } },
  { text: "See you at the meetup", categories: [], severity: "LOW", answer: { categories: [], severity: "LOW", confidence: 85 } },
];

const answerJson = (a: (typeof ITEMS)[number]["answer"]) => ({ reasoning: "Scripted.", ...a });

/** The scripted answer of each item, keyed on the text the request classifies; `delayMs` slows every answer. */
function scriptAnswers(answers: Map<string, (typeof ITEMS)[number]["answer"]>, delayMs = 0): void {
  fake.setDefault((request): FakeAnswer => {
    const a = answers.get(classifiedText(request));
    if (!a) return { json: { reasoning: "Unknown item.", categories: [], severity: "LOW", confidence: 50 }, delayMs };
    return { json: answerJson(a), delayMs };
  });
}

const CSV = ["text,categories,severity,id", ...ITEMS.map((it, i) => `${it.text},${it.categories.join("|")},${it.severity},item-${i + 1}`)].join("\n");

async function runToEnd(runId: string) {
  return until(`run ${runId} to finish`, async () => {
    const { run } = await admin.trpc.evaluation.run.query({ ...at, runId });
    return run.status === "completed" || run.status === "failed" ? run : null;
  }, 20_000);
}

beforeAll(async () => {
  fake = startFakeOllama();
  server = await startServer({ OLLAMA_HOST: fake.url, FLAGSTAFF_JOB_POLL_MS: "50", FLAGSTAFF_JOB_BACKOFF_MS: "50", FLAGSTAFF_REPORT_RATE_LIMIT: "1000" });
  admin = await demoAdmin(server);
  at = { orgSlug: server.demo.orgSlug, projectId: server.demo.projectId };
});
afterAll(async () => {
  await server.dispose();
  await fake.stop();
});

describe("an evaluation run's figures, computed by hand", () => {
  let setId = "";
  let runId = "";

  test("import (CSV, categories separated by |), run, and the stored figures", async () => {
    const { set } = await admin.trpc.evaluation.importSet.mutate({ ...at, name: "Hand-checked", format: "csv", content: CSV });
    setId = set.id;
    expect(set).toMatchObject({ version: 1, frozen: false, items: 8, source: "import", itemsPerCategory: { spam: 3, harassment: 2, "": 3 } });

    scriptAnswers(new Map(ITEMS.map((it) => [it.text, it.answer])));
    fake.requests.length = 0;
    const started = await admin.trpc.evaluation.startRun.mutate({ ...at, setId });
    runId = started.run.id;
    expect(started.run).toMatchObject({ status: "queued", itemsDone: 0, itemsTotal: 8, setVersion: 1, model: "llama3.2", policyVersions: {} });
    expect(started.run.promptVersion).toMatch(/^p-[0-9a-f]{12}$/);
    const run = await runToEnd(runId);
    expect(run.status).toBe("completed");
    expect(run.itemsDone).toBe(8);
    // Each item asked once.
    expect(fake.requests.map(classifiedText).sort()).toEqual(ITEMS.map((i) => i.text).sort());
    const m = run.metrics!;
    expect(m.items).toBe(8);
    expect(m.failedItems).toBe(0);

    // spam: flagged by items 1, 2 (right), 5, 7 (wrong); item 3 missed. TP 2, FP 2, FN 1:
    // precision 2/4, recall 2/3, F1 2·2/(2·2+2+1) = 4/7.
    expect(m.perCategory.spam).toMatchObject({ truePositives: 2, falsePositives: 2, falseNegatives: 1 });
    expect(m.perCategory.spam!.precision).toBeCloseTo(0.5, 10);
    expect(m.perCategory.spam!.recall).toBeCloseTo(2 / 3, 10);
    expect(m.perCategory.spam!.f1).toBeCloseTo(4 / 7, 10);
    // harassment: item 4 right, item 5 missed. TP 1, FP 0, FN 1: precision 1, recall 1/2, F1 2/3.
    expect(m.perCategory.harassment).toMatchObject({ truePositives: 1, falsePositives: 0, falseNegatives: 1, precision: 1 });
    expect(m.perCategory.harassment!.recall).toBeCloseTo(0.5, 10);
    expect(m.perCategory.harassment!.f1).toBeCloseTo(2 / 3, 10);
    // Micro: TP 3, FP 2, FN 2 → 3/5, 3/5, 6/10. Macro over the categories with a figure (spam,
    // harassment; the others were neither expected nor flagged): P (1/2 + 1)/2 = 3/4,
    // R (2/3 + 1/2)/2 = 7/12, F1 (4/7 + 2/3)/2 = 13/21.
    expect(m.micro).toMatchObject({ truePositives: 3, falsePositives: 2, falseNegatives: 2 });
    expect(m.micro.precision).toBeCloseTo(0.6, 10);
    expect(m.micro.recall).toBeCloseTo(0.6, 10);
    expect(m.micro.f1).toBeCloseTo(0.6, 10);
    expect(m.macro.precision).toBeCloseTo(3 / 4, 10);
    expect(m.macro.recall).toBeCloseTo(7 / 12, 10);
    expect(m.macro.f1).toBeCloseTo(13 / 21, 10);

    // Severity, quadratic-weighted κ over LOW(0) MEDIUM(1) HIGH(2) CRITICAL(3), w = (i−j)²/9.
    // Pairs (expected, answered): (1,1) (1,2) (1,0) (2,2) (2,1) (0,0) (0,1) (0,0).
    // Observed Σw = 4 × 1/9 = 4/9. Marginals: expected (3,3,2,0), answered (3,3,2,0), n = 8.
    // Chance Σ w·r_i·c_j/n = [(1·9)·2 + (4·6)·2 + (1·6)·2]/9/8 = 78/72 = 13/12.
    // κ = 1 − (4/9)/(13/12) = 1 − 16/39 = 23/39.
    expect(m.severity.items).toBe(8);
    expect(m.severity.weightedKappa).toBeCloseTo(23 / 39, 10);

    // Calibration: the verdict is right for items 1, 2, 4, 5, 6, 8, wrong for 3 and 7.
    // Bins: [90,100] items 1, 4, 6 (conf .90 .95 .90, all right): |3 − 2.75| = 0.25;
    // [80,90) items 2, 8 (.80 .85, right): |2 − 1.65| = 0.35; [70,80) item 3 (.70, wrong): 0.70;
    // [60,70) item 5 (.60, right): 0.40; [50,60) item 7 (.55, wrong): 0.55.
    // ECE = Σ (n_b/N)·|acc_b − conf_b| = (0.25 + 0.35 + 0.70 + 0.40 + 0.55)/8 = 2.25/8 = 0.28125.
    expect(m.calibration.ece).toBeCloseTo(0.28125, 10);
    expect(m.calibration.bins[9]).toMatchObject({ items: 3, accuracy: 1 });
    expect(m.calibration.bins[7]).toMatchObject({ items: 1, accuracy: 0 });

    // Confusion (rows expected, columns predicted): item 5 (harassment → spam) at (harassment, spam).
    const labels = m.confusion.labels;
    const cell = (r: string, c: string) => m.confusion.counts[labels.indexOf(r)]![labels.indexOf(c)]!;
    expect(cell("spam", "spam")).toBe(2);
    expect(cell("harassment", "spam")).toBe(1);
    expect(cell("spam", "(none)")).toBe(1);
    expect(cell("(none)", "spam")).toBe(1);
    expect(cell("(none)", "(none)")).toBe(2);

    // Tokens: the fake counts an answer as ⌈its JSON's length / 4⌉ tokens.
    const completion = ITEMS.reduce((n, it) => n + Math.ceil(JSON.stringify(answerJson(it.answer)).length / 4), 0);
    expect(m.tokens.completion).toBe(completion);
    expect(m.tokens.prompt).toBeGreaterThan(0);
    expect(m.latencyMs.median).not.toBeNull();

    const { items } = await admin.trpc.evaluation.runItems.query({ ...at, runId });
    expect(items.map((i) => [i.externalId, i.categories, i.severity, i.confidence])).toEqual(
      ITEMS.map((it, i) => [`item-${i + 1}`, it.answer.categories, it.answer.severity, it.answer.confidence]),
    );
  });

  test("threshold advice at a 0.9 precision target", async () => {
    const { advice } = await admin.trpc.evaluation.thresholdAdvice.query({ ...at, runId, precisionTarget: 0.9 });
    expect(advice.currentThreshold).toBe(70);
    const spam = advice.categories.find((c) => c.category === "spam")!;
    // spam is flagged at confidences 90 (right), 80 (right), 60 (wrong), 55 (wrong). Precision:
    // 2/4 up to 55, 2/3 up to 60, 1 from 61 to 80. The curve's thresholds are 0, 5, …, 100 and
    // the confidences; the first at or above 61 is 65: advised 65, precision 1, recall 2/3.
    expect(spam.advisedThreshold).toBe(65);
    expect(spam.precisionAtAdvised).toBe(1);
    expect(spam.recallAtAdvised).toBeCloseTo(2 / 3, 10);
    // At the current 70: items 1 and 2 flagged, item 3 missed.
    expect(spam.atCurrent).toMatchObject({ threshold: 70, flagged: 2, truePositives: 2, falsePositives: 0, falseNegatives: 1 });
    // harassment: only item 4 is flagged (95, right): precision 1 from threshold 0, recall 1/2.
    const harassment = advice.categories.find((c) => c.category === "harassment")!;
    expect(harassment).toMatchObject({ advisedThreshold: 0, precisionAtAdvised: 1, recallAtAdvised: 0.5 });
  });

  test("without a target, the advice aims at the project's aiPrecisionTarget", async () => {
    expect((await admin.trpc.evaluation.thresholdAdvice.query({ ...at, runId })).advice.precisionTarget).toBe(0.9);
    await admin.trpc.ai.updateSettings.mutate({ ...at, aiPrecisionTarget: 0.6 });
    try {
      const { advice } = await admin.trpc.evaluation.thresholdAdvice.query({ ...at, runId });
      expect(advice.precisionTarget).toBe(0.6);
      // spam's precision is 2/4 at thresholds up to 55, 2/3 from 56 to 60: the first curve
      // threshold reaching 0.6 is 60 (items 1, 2 right, 5 wrong; item 3 missed): recall 2/3.
      const spam = advice.categories.find((c) => c.category === "spam")!;
      expect(spam.advisedThreshold).toBe(60);
      expect(spam.precisionAtAdvised).toBeCloseTo(2 / 3, 10);
      expect(spam.recallAtAdvised).toBeCloseTo(2 / 3, 10);
      // A target given still wins over the project's.
      expect((await admin.trpc.evaluation.thresholdAdvice.query({ ...at, runId, precisionTarget: 0.9 })).advice.categories.find((c) => c.category === "spam")!.advisedThreshold).toBe(65);
    } finally {
      await admin.trpc.ai.updateSettings.mutate({ ...at, aiPrecisionTarget: 0.9 });
    }
  });

  test("a run freezes its version: more items make version 2; compare needs one set version", async () => {
    const { set } = await admin.trpc.evaluation.set.query({ ...at, setId });
    expect(set).toMatchObject({ version: 1, frozen: true, items: 8 });

    // A second run of version 1, with item 3 now caught and item 4 now missed.
    const second = new Map(ITEMS.map((it) => [it.text, it.answer]));
    second.set(ITEMS[2]!.text, { categories: ["spam"], severity: "MEDIUM", confidence: 75 });
    second.set(ITEMS[3]!.text, { categories: [], severity: "LOW", confidence: 65 });
    scriptAnswers(second);
    const b = (await admin.trpc.evaluation.startRun.mutate({ ...at, setId })).run;
    expect(b.setVersion).toBe(1);
    await runToEnd(b.id);
    const { comparison } = await admin.trpc.evaluation.compare.query({ ...at, runId, otherRunId: b.id });
    expect(comparison).toMatchObject({ fixed: 1, broken: 1, otherwiseChanged: 0, unchanged: 6 });
    expect(comparison.changes.map((c) => [c.externalId, c.direction])).toEqual([
      ["item-3", "fixed"],
      ["item-4", "broken"],
    ]);

    // JSONL into the frozen set: version 2 with 8 + 1 items; version 1 stays as it was.
    const more = await admin.trpc.evaluation.importSet.mutate({ ...at, setId, format: "jsonl", content: JSON.stringify({ text: "Cheap watches here", categories: ["Spam"], id: "item-9" }) + "\n" });
    expect(more.set).toMatchObject({ version: 2, frozen: false, items: 9, itemsPerCategory: { spam: 4 } });
    expect((await admin.trpc.evaluation.set.query({ ...at, setId, version: 1 })).set).toMatchObject({ version: 1, frozen: true, items: 8 });

    const c = (await admin.trpc.evaluation.startRun.mutate({ ...at, setId })).run;
    expect(c).toMatchObject({ setVersion: 2, itemsTotal: 9 });
    await expectRefused(admin.trpc.evaluation.compare.query({ ...at, runId, otherRunId: c.id }), "BAD_REQUEST", /same set version/);
    await runToEnd(c.id);
  });
});

describe("policies: a run asks with the selected policy texts and records their versions", () => {
  test("live by default, descriptions on request, a version named; an unknown version is a 400", async () => {
    const { set } = await admin.trpc.evaluation.importSet.mutate({ ...at, name: "Policies", format: "jsonl", content: JSON.stringify({ text: "Buy cheap pills now", categories: ["spam"] }) });
    const spam = (await admin.trpc.policies.list.query(at)).policies.find((p) => p.category === "spam")!;
    await admin.trpc.policies.createVersion.mutate({ ...at, categoryId: spam.categoryId, text: "Definition: SPAM-POLICY-ONE unsolicited advertising.", status: "live" });
    await admin.trpc.policies.createVersion.mutate({ ...at, categoryId: spam.categoryId, text: "Definition: SPAM-POLICY-TWO bulk messages.", status: "draft" });
    const system = () => fake.requests.map((r) => r.messages.find((m) => m.role === "system")?.content ?? "").join("\n");
    const runWith = async (policies?: Parameters<typeof admin.trpc.evaluation.startRun.mutate>[0]["policies"]) => {
      fake.requests.length = 0;
      const { run } = await admin.trpc.evaluation.startRun.mutate({ ...at, setId: set.id, policies });
      return { run: await runToEnd(run.id), system: system() };
    };

    const live = await runWith();
    expect(live.run.policyVersions).toEqual({ spam: 1 });
    expect(live.system).toContain("SPAM-POLICY-ONE");
    const descriptions = await runWith("descriptions");
    expect(descriptions.run.policyVersions).toEqual({});
    expect(descriptions.system).not.toContain("SPAM-POLICY");
    const named = await runWith({ spam: 2 });
    expect(named.run.policyVersions).toEqual({ spam: 2 });
    expect(named.system).toContain("SPAM-POLICY-TWO");
    expect(named.system).not.toContain("SPAM-POLICY-ONE");
    await expectRefused(admin.trpc.evaluation.startRun.mutate({ ...at, setId: set.id, policies: { spam: 9 } }), "BAD_REQUEST");
    // The live version back to none, so the other tests ask with the descriptions.
    await admin.trpc.policies.setStatus.mutate({ ...at, categoryId: spam.categoryId, version: 1, status: "retired" });
  });
});

describe("refusals", () => {
  test("a bad CSV line, an unknown category, a bad JSONL line: 400 naming the line", async () => {
    const bad = "text,categories\nfine,spam\nbroken,spam,extra\n";
    await expectRefused(admin.trpc.evaluation.importSet.mutate({ ...at, name: "x", format: "csv", content: bad }), "BAD_REQUEST", /^Line 3: 3 cells where the header has 2/);
    const unknown = "text,categories\nfine,spam\nodd,spam;astrology\n";
    await expectRefused(admin.trpc.evaluation.importSet.mutate({ ...at, name: "x", format: "csv", content: unknown }), "BAD_REQUEST", /^Line 3: unknown category "astrology"/);
    await expectRefused(admin.trpc.evaluation.importSet.mutate({ ...at, name: "x", format: "jsonl", content: '{"text":"a","categories":[]}\n{"text":"b"}\n' }), "BAD_REQUEST", /^Line 2: categories/);
    await expectRefused(admin.trpc.evaluation.importSet.mutate({ ...at, name: "x", format: "jsonl", content: '{"text":"a","categories":[],"severity":"HUGE"}' }), "BAD_REQUEST", /^Line 1: severity/);
    const big = "text,categories\n" + Array.from({ length: 20_001 }, (_, i) => `t${i},`).join("\n");
    await expectRefused(admin.trpc.evaluation.importSet.mutate({ ...at, name: "x", format: "csv", content: big }), "BAD_REQUEST", /at most 20000/);
  });

  test("a run of an unknown set, another organization's set: 404; a viewer and a moderator may not build or run", async () => {
    await expectRefused(admin.trpc.evaluation.startRun.mutate({ ...at, setId: "no-such-set" }), "NOT_FOUND");
    const { set } = await admin.trpc.evaluation.importSet.mutate({ ...at, name: "Mine", format: "csv", content: CSV });

    const other = await server.initOrg("Other Org");
    const theirs = withKey(server, other.secretKey);
    const there = { orgSlug: other.orgSlug, projectId: other.projectId };
    await expectRefused(theirs.trpc.evaluation.startRun.mutate({ ...there, setId: set.id }), "NOT_FOUND");
    await expectRefused(theirs.trpc.evaluation.set.query({ ...there, setId: set.id }), "NOT_FOUND");
    await expectRefused(theirs.trpc.evaluation.sets.query(at), "NOT_FOUND");

    const viewer = await newUser(server, "viewer");
    await expectRefused(viewer.trpc.evaluation.sets.query(at), "FORBIDDEN");
    await expectRefused(viewer.trpc.evaluation.startRun.mutate({ ...at, setId: set.id }), "FORBIDDEN");
    const moderator = await newUser(server, "moderator");
    expect((await moderator.trpc.evaluation.sets.query(at)).sets.map((s) => s.id)).toContain(set.id);
    await expectRefused(moderator.trpc.evaluation.startRun.mutate({ ...at, setId: set.id }), "FORBIDDEN");
    await expectRefused(moderator.trpc.evaluation.importSet.mutate({ ...at, name: "x", format: "csv", content: CSV }), "FORBIDDEN");
  });
});

describe("a set from moderators' decisions", () => {
  test("resolved, dismissed, overturned on appeal (corrected label), personal data removed", async () => {
    const p = await server.initOrg("Decisions Org");
    const key = p.secretKey;
    const file = async (externalId: string, reason: string, content: string) => {
      const r = await server.call("POST", `/projects/${p.projectId}/reports`, {
        key,
        body: { subject: { type: "user", externalId, display: { name: "Jane Roe" } }, reason, target: { contentType: "post", contentExternalId: `post-${externalId}`, content } },
      });
      expect(r.status).toBe(201);
      return r.body.report.id as string;
    };
    const resolved = await file("alice", "spam", "Buy now at alice-shop, write to alice@example.com");
    expect((await server.call("POST", `/reports/${resolved}/resolve`, { key, body: { resolutionCode: "SPAM_CONFIRMED" } })).status).toBe(200);
    const dismissed = await file("bob", "harassment", "Have a nice day");
    expect((await server.call("POST", `/reports/${dismissed}/dismiss`, { key, body: { reason: "false_positive" } })).status).toBe(200);
    const appealed = await file("carol", "harassment", "That was a joke, Jane Roe");
    const action = await server.call("POST", `/reports/${appealed}/resolve`, {
      key,
      body: { resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "warning", reason: "Be kind" } },
    });
    expect(action.status).toBe(200);
    const appeal = await server.call("POST", `/projects/${p.projectId}/enforcement-actions/${action.body.enforcementActionId}/appeal`, { key, body: { text: "It was a joke" } });
    expect(appeal.status).toBe(201);
    expect((await server.call("POST", `/api/v1/organizations/${p.orgSlug}/appeals/${appeal.body.appeal.id}/overturn`, { key })).status).toBe(200);
    await file("dave", "spam", "Still open"); // not decided: left out

    const theirs = withKey(server, key);
    const there = { orgSlug: p.orgSlug, projectId: p.projectId };
    const { set } = await theirs.trpc.evaluation.createSetFromDecisions.mutate({ ...there, name: "From decisions" });
    expect(set).toMatchObject({ source: "decisions", version: 1, items: 3, itemsPerCategory: { spam: 1, "": 2 } });
    // A period's bounds are date-times with their zone: anything else is refused as such, not read as no decision.
    for (const from of ["garbage", "2026-12-01", "-1"]) {
      const bad = await refusal(theirs.trpc.evaluation.createSetFromDecisions.mutate({ ...there, name: `Bad ${from}`, from }));
      expect(bad.status).toBe(400);
      expect(bad.message).toContain("from");
    }

    // The items, through a run.
    scriptAnswers(new Map());
    const run = (await theirs.trpc.evaluation.startRun.mutate({ ...there, setId: set.id })).run;
    await until("the decisions run", async () => (await theirs.trpc.evaluation.run.query({ ...there, runId: run.id })).run.status === "completed");
    const { items } = await theirs.trpc.evaluation.runItems.query({ ...there, runId: run.id });
    const byText = Object.fromEntries(items.map((i) => [i.text, [i.expectedCategories, i.expectedSeverity]]));
    expect(byText).toEqual({
      // The subject's external id and name and every e-mail address are redacted, as in statements of reasons.
      "Buy now at [redacted]-shop, write to [redacted]": [["spam"], "LOW"],
      "Have a nice day": [[], "LOW"],
      // Resolved with a warning, then overturned on appeal: the corrected label is no violation.
      "That was a joke, [redacted]": [[], "LOW"],
    });
  });
});

describe("a model that is not installed", () => {
  test("fails the run, with the reason", async () => {
    const { set } = await admin.trpc.evaluation.importSet.mutate({ ...at, name: "Missing model", format: "csv", content: CSV });
    const { run } = await admin.trpc.evaluation.startRun.mutate({ ...at, setId: set.id, model: "no-such-model" });
    const failed = await runToEnd(run.id);
    expect(failed).toMatchObject({ status: "failed", model: "no-such-model", itemsDone: 0, metrics: null });
    expect(failed.error).toContain('"no-such-model" is not installed');
  });
});

describe("the installed models (evaluation.models, the Start a run dialog's choice)", () => {
  test("the fake Ollama's /api/tags, by name with their tags, the server's model marked installed; admins only", async () => {
    const listed = await admin.trpc.evaluation.models.query({ orgSlug: at.orgSlug });
    expect(listed).toEqual({
      defaultModel: "llama3.2",
      defaultInstalled: true,
      models: [{ name: "llama3.2:latest", sizeBytes: 2_019_393_189, parameterSize: "3.2B", modifiedAt: "2025-01-01T00:00:00Z" }],
    });
    for (const role of ["viewer", "moderator"] as const) await expectRefused((await newUser(server, role)).trpc.evaluation.models.query({ orgSlug: at.orgSlug }), "FORBIDDEN");
  });

  test("another model configured than installed: listed as not installed; Ollama unreachable: 503 saying so, without its address", async () => {
    const other = startFakeOllama({ models: ["qwen2.5:7b", "gemma3:4b"] });
    const elsewhere = await startServer({ OLLAMA_HOST: other.url, FLAGSTAFF_AI_MODEL: "llama3.2" });
    try {
      const listed = await (await demoAdmin(elsewhere)).trpc.evaluation.models.query({ orgSlug: elsewhere.demo.orgSlug });
      expect(listed.defaultInstalled).toBe(false);
      expect(listed.models.map((m) => m.name)).toEqual(["gemma3:4b", "qwen2.5:7b"]);
      await other.stop();
      const refused = await expectRefused((await demoAdmin(elsewhere)).trpc.evaluation.models.query({ orgSlug: elsewhere.demo.orgSlug }), "SERVICE_UNAVAILABLE");
      expect(refused.message).toBe("The AI backend (Ollama) cannot be reached, so its installed models could not be listed; try again later");
      expect(refused.message).not.toContain(other.url.replace(/^https?:\/\//, ""));
    } finally {
      await other.stop();
      await elsewhere.dispose();
    }
  });
});

describe("cancelling", () => {
  test("a cancelled run stops promptly, its figures cover the items done", async () => {
    const { set } = await admin.trpc.evaluation.importSet.mutate({ ...at, name: "Slow", format: "csv", content: CSV });
    scriptAnswers(new Map(ITEMS.map((it) => [it.text, it.answer])), 300);
    fake.requests.length = 0;
    const { run } = await admin.trpc.evaluation.startRun.mutate({ ...at, setId: set.id });
    await until("two items done", async () => (await admin.trpc.evaluation.run.query({ ...at, runId: run.id })).run.itemsDone >= 2);
    const cancelled = (await admin.trpc.evaluation.cancelRun.mutate({ ...at, runId: run.id })).run;
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.finishedAt).not.toBeNull();
    expect(cancelled.metrics!.items).toBe(cancelled.itemsDone);
    await Bun.sleep(800);
    const later = (await admin.trpc.evaluation.run.query({ ...at, runId: run.id })).run;
    expect(later.itemsDone).toBe(cancelled.itemsDone);
    // At most the request in flight at the cancel was sent after it.
    expect(fake.requests.length).toBeLessThanOrEqual(cancelled.itemsDone + 1);
    await expectRefused(admin.trpc.evaluation.cancelRun.mutate({ ...at, runId: run.id }), "CONFLICT");

    // The admin's changes are in the audit trail.
    const events = async (entityType: "eval_set" | "eval_run", entityId: string) =>
      (await admin.trpc.dashboard.audit.query({ entityType, entityId })).events.map((e) => [e.action, e.after]);
    expect(await events("eval_set", set.id)).toEqual([["EVAL_SET_CREATED", { name: "Slow", source: "import", version: 1, items: 8 }]]);
    expect(await events("eval_run", run.id)).toEqual([
      ["EVAL_RUN_CANCELLED", { status: "cancelled", itemsDone: cancelled.itemsDone }],
      ["EVAL_RUN_STARTED", { setId: set.id, setVersion: 1, model: "llama3.2", promptVersion: run.promptVersion, items: 8 }],
    ]);
  });
});

describe("the command line", () => {
  test("flagstaff eval import, then eval run --wait with a progress bar on stderr; refusals exit 2 with the reason", async () => {
    const file = join(server.dir, "set.csv");
    await Bun.write(file, CSV);
    const args = ["--org", at.orgSlug, "--project", at.projectId];
    const imported = await runCli(["eval", "import", ...args, "--name", "From the CLI", "--json", file], server.env);
    expect(imported.code).toBe(0);
    const set = JSON.parse(imported.stdout);
    expect(set).toMatchObject({ name: "From the CLI", items: 8, version: 1 });

    scriptAnswers(new Map(ITEMS.map((it) => [it.text, it.answer])), 20);
    const ran = await runCli(["eval", "run", ...args, "--set", set.id, "--wait"], server.env);
    expect(ran.code).toBe(0);
    // The bar: items done of the total, drawn as it moves (one line per change off a terminal).
    const bars = ran.stderr.trim().split("\n");
    expect(bars.at(-1)).toBe(`[${"#".repeat(30)}] 8/8 items  completed`);
    expect(bars[0]).toMatch(/^\[[#.]{30}\] \d\/8 items  (queued|running)$/);
    expect(ran.stdout).toMatch(/: completed, 8\/8 items/);
    expect(ran.stdout).toContain("micro precision 60.0 %, recall 60.0 %, F1 60.0 %");

    const bad = join(server.dir, "bad.csv");
    await Bun.write(bad, "text,categories\nfine,spam\nodd,astrology\n");
    const refused = await runCli(["eval", "import", ...args, "--name", "Bad", bad], server.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('Line 3: unknown category "astrology"');
    const noSet = await runCli(["eval", "run", ...args, "--set", "no-such-set"], server.env);
    expect(noSet.code).toBe(2);
    expect(noSet.stderr).toContain("Evaluation set not found");
  }, 60_000);
});
