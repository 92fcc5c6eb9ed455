/**
 * What a pattern may cost (src/domain/rules/patterns.ts, src/domain/rules/rule-conditions.ts,
 * src/domain/views/rule.ts; docs/rules.md, "What a pattern may cost"): the bounds a rule's
 * patterns must keep when written, with the path of the first that does not; an re2js search
 * stopped at its deadline (the hooks into re2js's internals still hold); the search budget of
 * an evaluation, and the rules it leaves undecided; the cache of compiled patterns bounded by
 * its memory.
 */
import { describe, expect, test } from "bun:test";
import { RE2JS } from "re2js";
import { compiledPattern, DFA_MAX_BYTES, PATTERN_CACHE_BYTES, patternCacheUse, trimPatternCache } from "../../src/domain/rules/patterns.ts";
import { compileCondition, conditionError, searchBudget } from "../../src/domain/rules/rule-conditions.ts";
import { RULE_LIMITS, ruleInputSchema, ruleViewSchema, type Condition, type Facts } from "../../src/domain/views/rule.ts";

/** 20,000 characters of words and no digit: the longest report text (content and description of 10,000 each). */
const WORDS = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor x ".repeat(300).slice(0, 20_000);
/** The issue's pattern: 6,003 instructions, about 2 s on such a text. */
const ISSUE_PATTERN = "(?i)(\\w+\\W+){1000}x";
/** Within the bounds (1,803 instructions): a hundred milliseconds or more on its first long text, then its 600 DFA states are built. */
const COSTLY = "(?i)(\\w+\\W+){300}\\d";
/** 20,000 random `a` and `b`, no digit. */
const AB = Array.from({ length: 20_000 }, () => (Math.random() < 0.5 ? "a" : "b")).join("");
/** Within the bounds (500 instructions), and hundreds of milliseconds on AB every time: it meets a new DFA state at nearly every character. */
const THRASHING = "(?i)\\w*a\\w{494}\\d";

const matches = (value: string): Condition => ({ field: "report.text", op: "matches", value });

describe("the bounds a rule's patterns keep when written", () => {
  test("a pattern over RULE_LIMITS.patternProgram instructions is refused at its path; one within is accepted", () => {
    expect(RE2JS.compile(ISSUE_PATTERN).programSize()).toBeGreaterThan(RULE_LIMITS.patternProgram);
    const error = conditionError({ all: [{ field: "report.severity", op: "eq", value: "HIGH" }, matches("(?i)casino"), matches(ISSUE_PATTERN)] });
    expect(error?.path).toEqual(["all", 2, "value"]);
    expect(error?.message).toContain("too costly a pattern: it compiles to 6003 instructions, more than 2000");
    expect(conditionError(matches(COSTLY))).toBeNull();
  });

  test("a 1,000-character pattern without a counted repetition fits (a word list with word boundaries)", () => {
    const words = Array.from({ length: 200 }, (_, i) => `w${i.toString(36)}x`).join("|");
    const list = `(?i)\\b(${words})\\b`.slice(0, 990).replace(/\|[^|]*$/, ")\\b");
    expect(list.length).toBeGreaterThan(900);
    expect(conditionError(matches(list))).toBeNull();
  });

  test("a rule written with it is refused; a rule saved with it before the bound is still answered", () => {
    const rule = { name: "old", trigger: "report.created", mode: "live", when: matches(ISSUE_PATTERN), then: [{ type: "tag", tag: "x" }] };
    expect(ruleInputSchema.safeParse(rule).error?.issues.map((i) => [i.path, i.message.slice(0, 20)])).toEqual([[["when", "value"], "too costly a pattern"]]);
    const saved = { ...rule, id: "r1", version: 1, description: null, projectId: null, createdAt: new Date().toISOString(), updatedAt: new Date().toISOString() };
    expect(ruleViewSchema.safeParse(saved).success).toBe(true);
  });

  test("the patterns of a rule together: the one that takes them past RULE_LIMITS.ruleProgram is named", () => {
    const five = Array.from({ length: 5 }, (_, i) => matches(`(?i)(\\w+\\W+){${300 + i}}\\d`)); // 1,803 to 1,827 instructions each
    expect(conditionError({ any: five })).toBeNull();
    const six = [...five, { not: matches("(?i)(\\w+\\W+){305}\\d") }];
    const error = conditionError({ any: six });
    expect(error?.path).toEqual(["any", 5, "not", "value"]);
    expect(error?.message).toContain(`more than ${RULE_LIMITS.ruleProgram} in all`);
  });
});

describe("an re2js search stopped at its deadline", () => {
  test("a costly search past its deadline does not answer; without one it runs to its answer", () => {
    const re = compiledPattern(THRASHING)!;
    expect(re.test(AB, performance.now() + 5)).toBeUndefined();
    expect(re.test(AB, Infinity)).toBe(false);
    expect(re.test(`${AB}a${"b".repeat(494)}7`, Infinity)).toBe(true);
  });

  test("ordinary patterns answer as re2js does, deadline or not", () => {
    for (const p of ["(?i)\\bcsam\\b", "(?i)free\\s+money", "https?://[^\\s]+", "^lorem", "\\d$", "(a+)+$"]) {
      const re = compiledPattern(p)!;
      for (const text of [WORDS, "Buy FREE   money at https://x.example", "csam", "aaaa!"]) {
        expect([p, text.slice(0, 20), re.test(text, performance.now() + 10_000)]).toEqual([p, text.slice(0, 20), RE2JS.compile(p).test(text)]);
      }
    }
  });

  test("a pattern over the bound (saved before it) never runs: every search of it is unanswered", () => {
    expect(compiledPattern(ISSUE_PATTERN)!.test(WORDS, Infinity)).toBeUndefined();
  });
});

describe("the search budget of an evaluation", () => {
  const facts: Facts = { "report.text": AB, "report.severity": "HIGH" };
  const costly = matches(THRASHING);
  const high: Condition = { field: "report.severity", op: "eq", value: "HIGH" };
  const low: Condition = { field: "report.severity", op: "eq", value: "LOW" };

  test("a rule that depends on a search the budget cut is undecided, and the budget says so", () => {
    const budget = searchBudget(5);
    expect(compileCondition(costly).test(facts, null, false, budget)).toBeUndefined();
    expect(budget.exceeded).toBe(true);
    expect(compileCondition({ not: costly }).test(facts, null, false, searchBudget(5))).toBeUndefined();
    expect(compileCondition({ all: [high, costly] }).test(facts, null, false, searchBudget(5))).toBeUndefined();
  });

  test("where the other parts decide, the cut search does not matter", () => {
    expect(compileCondition({ any: [costly, high] }).test(facts, null, false, searchBudget(5))).toBe(true);
    expect(compileCondition({ all: [costly, low] }).test(facts, null, false, searchBudget(5))).toBe(false);
  });

  test("a spent budget answers no more searches (contains too), and the others as usual", () => {
    const budget = searchBudget(0);
    expect(compileCondition({ field: "report.text", op: "contains", value: "abba" }).test(facts, null, false, budget)).toBeUndefined();
    expect(compileCondition(matches("(?i)abba")).test(facts, null, false, budget)).toBeUndefined();
    expect(compileCondition(high).test(facts, null, false, budget)).toBe(true);
    // Enough budget: the same searches answer.
    expect(compileCondition({ field: "report.text", op: "contains", value: "abba" }).test(facts, null, false, searchBudget())).toBe(true);
    expect(compileCondition(matches("(?i)abba|casino")).test(facts, null, false, searchBudget())).toBe(true);
  });

  test("an unanswered search is not remembered: with budget again it answers", () => {
    const c = compileCondition(matches("(?i)ab{3}a"));
    const memo = new Uint8Array(1);
    expect(c.test(facts, memo, false, searchBudget(0))).toBeUndefined();
    expect(memo[0]).toBe(0);
    expect(c.test(facts, memo, false, searchBudget())).toBe(true);
  });
});

describe("the cache of compiled patterns", () => {
  test("is bounded by the memory its patterns hold, not by their number", () => {
    // Costly patterns whose DFAs fill as they search, until they hold twice what the cache may.
    let held = 0;
    let compiled = 0;
    let largest = 0;
    while (held < 2 * PATTERN_CACHE_BYTES) {
      const re = compiledPattern(`(?i)(\\w+\\W+){${200 + compiled++}}\\d`)!;
      re.test(WORDS, performance.now() + 30);
      held += re.bytes();
      largest = Math.max(largest, re.bytes());
    }
    trimPatternCache();
    const use = patternCacheUse();
    expect(use.bytes).toBeLessThanOrEqual(PATTERN_CACHE_BYTES);
    expect(use.patterns).toBeLessThan(compiled);
    expect(largest).toBeLessThanOrEqual(DFA_MAX_BYTES * 1.25 + 400_000);
    // Small patterns are many for the same memory.
    for (let i = 0; i < 3000; i++) compiledPattern(`(?i)\\bword${i}\\b`);
    expect(patternCacheUse().patterns).toBeGreaterThan(2000);
    expect(patternCacheUse().bytes).toBeLessThanOrEqual(PATTERN_CACHE_BYTES);
  });
});
