/**
 * The rule language, pure (src/domain/views/rule.ts, src/domain/rules/rule-conditions.ts): each op on
 * the kinds it suits, null and missing facts, all/any/not, `matches` through re2js (linear
 * time: a pattern that backtracks catastrophically elsewhere answers at once here), and the
 * checks of a condition tree with the path of the first error.
 */
import { describe, expect, test } from "bun:test";
import { RE2JS } from "re2js";
import { compileCondition, conditionError, evaluateCondition, patternProblem, slotTable } from "../../src/domain/rules/rule-conditions.ts";
import { EFFECT_TYPES, effectSchema, OPS_BY_KIND, referenceOf, RULE_EFFECTS, RULE_FIELDS, RULE_OPS, ruleInputSchema, type Condition, type Facts } from "../../src/domain/views/rule.ts";
import { describeZodError } from "../../src/api/http-errors.ts";

const facts: Facts = {
  "report.reasons": ["spam", "child_safety"],
  "report.severity": "HIGH",
  "report.automated": false,
  "report.contentType": null,
  "report.text": "Buy FREE money now at example.com",
  "ai.severity": "CRITICAL",
  "ai.confidence": 96,
  "ai.categories": ["csam"],
  "subject.reportCount": 4,
  "subject.activeActions": 1,
  "reporter.trusted": true,
  "reporter.accuracy": 0.08,
  "target.distinctReportersLast24h": 5,
};
const is = (when: Condition, f: Facts = facts) => evaluateCondition(when, f);

describe("ops", () => {
  test("eq and ne on strings, numbers, booleans and null", () => {
    expect(is({ field: "report.severity", op: "eq", value: "HIGH" })).toBe(true);
    expect(is({ field: "report.severity", op: "eq", value: "high" })).toBe(false);
    expect(is({ field: "report.severity", op: "ne", value: "LOW" })).toBe(true);
    expect(is({ field: "subject.reportCount", op: "eq", value: 4 })).toBe(true);
    expect(is({ field: "report.automated", op: "eq", value: false })).toBe(true);
    expect(is({ field: "report.automated", op: "ne", value: false })).toBe(false);
    expect(is({ field: "report.contentType", op: "eq", value: null })).toBe(true);
    expect(is({ field: "report.contentType", op: "ne", value: null })).toBe(false);
    // A missing fact reads as null.
    expect(is({ field: "ai.severity", op: "eq", value: null }, {})).toBe(true);
    expect(is({ field: "ai.severity", op: "ne", value: "LOW" }, {})).toBe(true);
  });

  test("in: the fact is one of the values; never for null", () => {
    expect(is({ field: "report.severity", op: "in", value: ["HIGH", "CRITICAL"] })).toBe(true);
    expect(is({ field: "report.severity", op: "in", value: ["LOW"] })).toBe(false);
    expect(is({ field: "subject.reportCount", op: "in", value: [1, 4] })).toBe(true);
    expect(is({ field: "report.contentType", op: "in", value: ["post"] })).toBe(false);
  });

  test("includes: a list fact holds the value", () => {
    expect(is({ field: "report.reasons", op: "includes", value: "child_safety" })).toBe(true);
    expect(is({ field: "report.reasons", op: "includes", value: "fraud" })).toBe(false);
    expect(is({ field: "ai.categories", op: "includes", value: "csam" }, {})).toBe(false);
  });

  test("gt, gte, lt, lte on numbers; a null number compares false every way", () => {
    expect(is({ field: "ai.confidence", op: "gte", value: 95 })).toBe(true);
    expect(is({ field: "ai.confidence", op: "gt", value: 96 })).toBe(false);
    expect(is({ field: "ai.confidence", op: "lte", value: 96 })).toBe(true);
    expect(is({ field: "reporter.accuracy", op: "lt", value: 0.1 })).toBe(true);
    for (const op of ["gt", "gte", "lt", "lte"] as const) expect(is({ field: "ai.confidence", op, value: 0 }, { "ai.confidence": null })).toBe(false);
  });

  test("contains: a substring, case-insensitive", () => {
    expect(is({ field: "report.text", op: "contains", value: "free money" })).toBe(true);
    expect(is({ field: "report.text", op: "contains", value: "scam" })).toBe(false);
    expect(is({ field: "report.contentType", op: "contains", value: "post" })).toBe(false);
  });

  test("matches: an re2js pattern found anywhere in the text ((?i) for case-insensitive, ^…$ for the whole)", () => {
    expect(is({ field: "report.text", op: "matches", value: "FREE\\s+money" })).toBe(true);
    expect(is({ field: "report.text", op: "matches", value: "free\\s+money" })).toBe(false);
    expect(is({ field: "report.text", op: "matches", value: "(?i)free\\s+money" })).toBe(true);
    expect(is({ field: "report.text", op: "matches", value: "^money" })).toBe(false);
    expect(is({ field: "report.text", op: "matches", value: "[a-z]+\\.com$" })).toBe(true);
  });

  test("a catastrophic-backtracking pattern answers, and correctly, on a long text", () => {
    const long = "a".repeat(50_000);
    expect(is({ field: "report.text", op: "matches", value: "(a+)+$" }, { "report.text": long + "!" })).toBe(false);
    expect(is({ field: "report.text", op: "matches", value: "^(a+)+$" }, { "report.text": long })).toBe(true);
    expect(is({ field: "report.text", op: "matches", value: "(a|aa)*b" }, { "report.text": long })).toBe(false);
    expect(is({ field: "report.text", op: "matches", value: "(.*a){20}" }, { "report.text": long + "b" })).toBe(true);
  });
});

describe("a word list (literal text between |, optionally after (?i)) answers as re2js does", () => {
  // Taken by a faster path than re2js (rule-conditions.ts, literalAlternation): its answers must not differ.
  const patterns = ["casino|lottery winner", "(?i)casino|lottery winner", "(?i)Straße|KELVIN", "(?i)s|k", "(?i)é", "kasino|", "(?i)DİY", "(?i)ǅ"];
  const texts = [
    "Play at our CASINO now", "the Lottery Winner is you", "nothing here", "", "ſ alone", "K (the Kelvin sign)", "straße", "STRASSE",
    "Kelvin", "É majuscule", "é minuscule", "diy", "DİY", "ǆ", "ǅ", "Ǆ", "mixed ASCII and ſtuff: casino",
  ];
  test.each(patterns)("%s", (pattern) => {
    const re = RE2JS.compile(pattern);
    for (const text of texts) {
      expect([text, is({ field: "report.text", op: "matches", value: pattern }, { "report.text": text })]).toEqual([text, re.matcher(text).find()]);
    }
  });
});

describe("conditions compiled to share one memo (a rule set)", () => {
  test("the same comparison in two rules takes one slot, and each rule answers as alone, in one step or two", () => {
    const table = slotTable();
    const spam: Condition = { field: "report.reasons", op: "includes", value: "spam" };
    const busy: Condition = { field: "subject.openCases", op: "gt", value: 2 };
    const first = compileCondition({ all: [spam, busy] }, table);
    const second = compileCondition({ all: [spam, { not: busy }, { field: "report.severity", op: "eq", value: "HIGH" }] }, table);
    expect(table.next).toBe(3); // spam and busy once each, severity
    const own: Facts = { "report.reasons": ["spam"], "report.severity": "HIGH" };
    const all: Facts = { ...own, "subject.openCases": 5 };
    const memo = new Uint8Array(table.next);
    expect(first.test(own, memo, true, null)).toBeUndefined(); // needs the queried fact
    expect(second.test(own, memo, true, null)).toBeUndefined();
    expect(first.test(all, memo, false, null)).toBe(true);
    expect(second.test(all, memo, false, null)).toBe(false);
    for (const [c, want] of [[first, true], [second, false]] as const) expect(c.test(all, null, false, null)).toBe(want);
  });
});

describe("all, any, not", () => {
  const yes: Condition = { field: "report.severity", op: "eq", value: "HIGH" };
  const no: Condition = { field: "report.severity", op: "eq", value: "LOW" };
  test("all needs every one (empty: true); any needs one (empty: false); not inverts", () => {
    expect(is({ all: [yes, yes] })).toBe(true);
    expect(is({ all: [yes, no] })).toBe(false);
    expect(is({ all: [] })).toBe(true);
    expect(is({ any: [no, yes] })).toBe(true);
    expect(is({ any: [no, no] })).toBe(false);
    expect(is({ any: [] })).toBe(false);
    expect(is({ not: no })).toBe(true);
    expect(is({ not: { any: [no, { not: yes }] } })).toBe(true);
  });

  test("the docs' example: CRITICAL with confidence ≥ 95 on a subject with a prior action", () => {
    const when: Condition = {
      all: [
        { field: "ai.severity", op: "eq", value: "CRITICAL" },
        { field: "ai.confidence", op: "gte", value: 95 },
        { field: "subject.activeActions", op: "gte", value: 1 },
      ],
    };
    expect(is(when)).toBe(true);
    expect(is(when, { ...facts, "ai.confidence": 94 })).toBe(false);
  });
});

describe("checking a tree", () => {
  test("every op is accepted on its kinds and refused on the others, at the op's path", () => {
    const sample = { string: "x", number: 1, boolean: true, strings: "x" } as const;
    for (const [field, spec] of Object.entries(RULE_FIELDS)) {
      for (const op of RULE_OPS) {
        const ok = OPS_BY_KIND[spec.kind].includes(op);
        const base = sample[spec.kind];
        const value = op === "in" ? [base] : op === "matches" ? "x+" : base;
        const error = conditionError({ all: [{ field, op, value }] });
        if (ok) expect(error).toBeNull();
        else expect(error?.path).toEqual(["all", 0, "op"]);
      }
    }
  });

  test("values must suit the field and op; null only where the field may be null", () => {
    expect(conditionError({ field: "ai.confidence", op: "eq", value: null })).toBeNull();
    expect(conditionError({ field: "subject.reportCount", op: "eq", value: null })?.path).toEqual(["value"]);
    expect(conditionError({ field: "subject.reportCount", op: "in", value: [1, "2"] })?.path).toEqual(["value", 1]);
    expect(conditionError({ field: "subject.reportCount", op: "in", value: [] })?.path).toEqual(["value"]);
    expect(conditionError({ field: "report.reasons", op: "includes", value: 3 })?.path).toEqual(["value"]);
    expect(conditionError({ field: "ai.confidence", op: "gt", value: Number.NaN })?.path).toEqual(["value"]);
    expect(conditionError({ field: "report.text", op: "contains" })?.message).toBe("required");
  });

  test("patterns re2js cannot compile are refused (backreferences, lookaround, bad syntax)", () => {
    expect(patternProblem("(a+)+$")).toBeNull();
    expect(patternProblem("(a)\\1")).toBeString();
    expect(patternProblem("(?<=a)b")).toBeString();
    expect(patternProblem("(")).toBeString();
    expect(conditionError({ any: [{ field: "report.text", op: "matches", value: "[" }] })?.path).toEqual(["any", 0, "value"]);
  });

  test("sizes: depth ≤ 10, nodes ≤ 100, strings ≤ 1000, effects ≤ 20", () => {
    let deep: unknown = { field: "report.automated", op: "eq", value: true };
    for (let i = 0; i < 10; i++) deep = { not: deep };
    expect(conditionError(deep)).toBeNull();
    expect(conditionError({ not: deep })?.message).toContain("10 deep");
    const leaf = { field: "report.automated", op: "eq", value: true };
    expect(conditionError({ all: Array.from({ length: 99 }, () => leaf) })).toBeNull();
    expect(conditionError({ all: Array.from({ length: 100 }, () => leaf) })?.message).toContain("100 nodes");
    expect(conditionError({ field: "report.text", op: "contains", value: "x".repeat(1000) })).toBeNull();
    expect(conditionError({ field: "report.text", op: "contains", value: "x".repeat(1001) })?.path).toEqual(["value"]);
    const rule = (then: unknown[]) => ({ name: "r", trigger: "report.created", mode: "live", when: { all: [] }, then });
    expect(ruleInputSchema.safeParse(rule(Array.from({ length: 20 }, () => ({ type: "tag", tag: "t" })))).success).toBe(true);
    expect(ruleInputSchema.safeParse(rule(Array.from({ length: 21 }, () => ({ type: "tag", tag: "t" })))).success).toBe(false);
  });

  test("a rule's first error reads as its path: when.all[2].op", () => {
    const parsed = ruleInputSchema.safeParse({
      name: "r",
      trigger: "report.created",
      mode: "shadow",
      when: { all: [{ field: "report.automated", op: "eq", value: true }, { any: [] }, { field: "report.reasons", op: "contains", value: "x" }] },
      then: [{ type: "route", queueId: "q" }],
    });
    expect(parsed.success).toBe(false);
    expect(describeZodError(parsed.error!)).toStartWith("when.all[2].op: contains does not apply to report.reasons");
  });

  test("effects: each type with its fields", () => {
    const good = [
      { type: "route", queueId: "q1" },
      { type: "priority", by: 10 },
      { type: "tag", tag: "brigading" },
      { type: "escalate", team: "safety" },
      { type: "dismiss", reason: "not_actionable" },
      { type: "resolve", resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "suspension", durationSeconds: 86_400 } },
      { type: "mute_reporter", durationSeconds: 3600 },
    ];
    for (const e of good) expect(effectSchema.safeParse(e).success).toBe(true);
    expect(effectSchema.safeParse({ type: "priority", by: 1.5 }).success).toBe(false);
    expect(effectSchema.safeParse({ type: "resolve", resolutionCode: "MAYBE" }).success).toBe(false);
    expect(effectSchema.safeParse({ type: "mute_reporter", durationSeconds: 0 }).success).toBe(false);
  });

  test("effects: the types and the union's variants are RULE_EFFECTS', in its order; a route names its queue, a tag nothing", () => {
    expect(Object.keys(RULE_EFFECTS)).toEqual(EFFECT_TYPES);
    expect(effectSchema.options.map((o) => o.shape.type.value)).toEqual(EFFECT_TYPES);
    expect(referenceOf({ type: "route", queueId: "q1" }, "queue")).toEqual({ field: "queueId", value: "q1" });
    expect(referenceOf({ type: "escalate", team: "safety" }, "team")).toEqual({ field: "team", value: "safety" });
    expect(referenceOf({ type: "tag", tag: "q1" }, "queue")).toBeNull();
  });
});
