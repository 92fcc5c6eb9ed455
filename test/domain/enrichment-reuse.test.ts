/**
 * One analysis per distinct content (issue 44), in process on the pass's engine with the fake
 * Ollama: a report whose description and content are those of a report analysed before (after
 * normalisation: case, width, white space, invisible characters) reuses that analysis within the
 * reuse window, with no model call, and the reuse is recorded on its own analysis (which one,
 * made when), in its AI_ANALYZED event, in the content-analyses list and in the counts; a new
 * analysis is made after the window, after a policy version goes live, with another model, and
 * for other content. Two jobs of one content at once ask the model once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../../scripts/fake-ollama.ts";
import { loadConfig, type Config } from "../../src/config.ts";
import type { Project } from "../../src/domain/accounts/projects.ts";
import { recentAnalyses } from "../../src/domain/analysis/analysis.ts";
import { enrichReport } from "../../src/domain/analysis/enrichment.ts";
import { enrichmentOutcomes } from "../../src/domain/analysis/model-meter.ts";
import { createPolicyVersion } from "../../src/domain/analysis/policies.ts";
import { listCategories } from "../../src/domain/categories/categories.ts";
import { domainWorld, type DomainWorld } from "../helpers/builders.ts";

const HOUR = 3_600_000;
let world: DomainWorld;
let fake: FakeOllama;
let project: Project;
let config: Config;
let serial = 0;

beforeAll(async () => {
  world = await domainWorld();
  fake = startFakeOllama({ models: ["llama3.2", "qwen2.5"] });
  project = await world.addProject({ name: "Reuse", ai: { threshold: 70 } });
  config = loadConfig({ OLLAMA_HOST: fake.url, FLAGSTAFF_AI_TIMEOUT_MS: "5000", FLAGSTAFF_AI_REUSE_WINDOW_MS: String(HOUR) });
});
afterAll(async () => {
  await world.close();
  await fake.stop();
});

const enrich = (reportId: string, c: Config = config) => enrichReport({ ...world.ctx, config: c }, reportId);

/** A report on a new post with this content (and description). */
async function file(content: string, description = "reported from the app"): Promise<string> {
  const n = ++serial;
  return (await world.fileReport({ project, reasons: ["harassment"], target: { contentType: "post", contentExternalId: `reuse-post-${n}`, content }, description })).reportId;
}

/** The project's analyses, newest first, by report. */
async function analysisOf(reportId: string) {
  const analyses = await recentAnalyses(world.ctx, { projectId: project.id, limit: 50 });
  const found = analyses.find((a) => a.reportId === reportId);
  if (!found) throw new Error(`no analysis of ${reportId}`);
  return found;
}

describe("one analysis per content", () => {
  test("a report of content analysed within the window reuses that analysis: no model call, the reuse recorded on its analysis, its event and the counts", async () => {
    const first = await file("You are worthless and everyone hates you");
    const asked = fake.requests.length;
    expect(await enrich(first)).toBe("enriched");
    expect(fake.requests.length).toBe(asked + 1);
    const original = await analysisOf(first);
    expect(original.reusedFrom).toBeNull();
    const before = enrichmentOutcomes(world.store);

    // The same content, as a brigade copies it: other case, other width, runs of spaces, a zero-width space.
    world.clock.advance(10 * 60_000);
    const copy = await file("  you are WORTHLESS and\u200b everyone   ｈａｔｅｓ you ", "Reported  from the APP");
    expect(await enrich(copy)).toBe("reused");
    expect(fake.requests.length).toBe(asked + 1);
    const reused = await analysisOf(copy);
    expect(reused.reusedFrom).toEqual({ analysisId: original.id, analyzedAt: original.createdAt });
    expect(reused.id).not.toBe(original.id);
    expect({ ...reused, id: "", reportId: "", sourceText: "", createdAt: "", reusedFrom: null }).toEqual({ ...original, id: "", reportId: "", sourceText: "", createdAt: "", reusedFrom: null });
    // The report carries the analysis as if the model had answered for it.
    const [a, b] = [await world.report(first), await world.report(copy)];
    expect([b.aiSeverity, b.aiCategories, b.aiConfidence, b.aiReasoning]).toEqual([a.aiSeverity, a.aiCategories, a.aiConfidence, a.aiReasoning]);
    expect(b.aiAnalyzedAt).toBe(world.clock.now());
    const { events } = await world.audit(copy);
    const analysed = events.find((e) => e.action === "AI_ANALYZED");
    expect(analysed?.data).toMatchObject({ reusedFrom: { analysisId: original.id, analyzedAt: original.createdAt } });
    expect(enrichmentOutcomes(world.store)).toEqual({ ...before, reused: before.reused + 1 });

    // A reuse of a reuse points to the analysis the model made.
    const third = await file("you are worthless and everyone hates you", "reported from the app");
    expect(await enrich(third)).toBe("reused");
    expect((await analysisOf(third)).reusedFrom?.analysisId).toBe(original.id);
  });

  test("a new analysis after the window, after a policy version goes live, with another model, and for another content", async () => {
    const text = "Meet me outside, you will regret it";
    const first = await file(text);
    expect(await enrich(first)).toBe("enriched");
    const asked = () => fake.requests.length;
    let n = asked();

    // Other content (the description counts too): asked.
    expect(await enrich(await file(text, "another description"))).toBe("enriched");
    expect(asked()).toBe(++n);
    // Within the window: reused.
    world.clock.advance(HOUR - 60_000);
    expect(await enrich(await file(text))).toBe("reused");
    expect(asked()).toBe(n);

    // Past the window (an hour after the analysis was made): a new analysis, reused in turn.
    world.clock.advance(2 * 60_000);
    const late = await file(text);
    expect(await enrich(late)).toBe("enriched");
    expect(asked()).toBe(++n);
    expect((await analysisOf(late)).reusedFrom).toBeNull();
    expect(await enrich(await file(text))).toBe("reused");
    expect(asked()).toBe(n);

    // A policy version goes live for a category: the classifier changed, a new analysis.
    const [harassment] = (await listCategories(world.ctx, project.id)).filter((c) => c.name === "harassment");
    await createPolicyVersion(world.ctx, { projectId: project.id, categoryId: harassment!.id, text: "Definition: abuse aimed at a person.", status: "live" });
    const afterPolicy = await file(text);
    expect(await enrich(afterPolicy)).toBe("enriched");
    expect(asked()).toBe(++n);
    expect((await analysisOf(afterPolicy)).policyVersions).toEqual({ harassment: 1 });
    expect(await enrich(await file(text))).toBe("reused");
    expect(asked()).toBe(n);

    // Another model: a new analysis.
    const qwen = { ...config, aiModel: "qwen2.5" };
    const other = await file(text);
    expect(await enrich(other, qwen)).toBe("enriched");
    expect(asked()).toBe(++n);
    expect((await analysisOf(other)).model).toBe("qwen2.5");

    // A window of 0 reuses nothing.
    expect(await enrich(await file(text), { ...qwen, aiReuseWindowMs: 0 })).toBe("enriched");
    expect(asked()).toBe(++n);
  });

  test("two jobs of one content at once ask the model once: the second waits for the first's answer", async () => {
    fake.setDefault(() => ({ delayMs: 300 }));
    try {
      const text = "Give me your password or else";
      const [a, b] = [await file(text), await file(text)];
      const n = fake.requests.length;
      const outcomes = await Promise.all([enrich(a), enrich(b)]);
      expect(outcomes.sort()).toEqual(["enriched", "reused"]);
      expect(fake.requests.length).toBe(n + 1);
    } finally {
      fake.setDefault(null);
    }
  });
});
