/**
 * Evaluating a rule's condition tree over a report's facts (docs/rules.md). Pure: no database.
 * `matches` runs through re2js, whose patterns run in time linear in the input (no
 * backtracking), each pattern compiled once and cached.
 */
import { RE2JS } from "re2js";
import type { Comparison, Condition, Facts } from "./views/rule.ts";

export { conditionError, conditionSchema, patternProblem } from "./views/rule.ts";

/** A compiled `matches` pattern. */
interface Pattern {
  test(text: string): boolean;
}

/** Compiled patterns by their text; bounded (cleared when full: rules hold few distinct patterns). */
const PATTERNS = new Map<string, Pattern | null>();
const MAX_PATTERNS = 2000;

function compiled(pattern: string): Pattern | null {
  let re = PATTERNS.get(pattern);
  if (re === undefined) {
    try {
      re = literalAlternation(pattern) ?? RE2JS.compile(pattern);
    } catch {
      re = null; // an invalid pattern (rules are checked when saved) never matches
    }
    if (PATTERNS.size >= MAX_PATTERNS) PATTERNS.clear();
    PATTERNS.set(pattern, re);
  }
  return re;
}

/**
 * The commonest pattern of all, a list of words (`(?i)casino|lottery winner`): literal text
 * only, between `|`, optionally after `(?i)`. It is tested as substrings, or, under `(?i)` with
 * non-ASCII words or text, by a JavaScript RegExp of the same literals, which re2js is many
 * times slower than here: with no group, class, repetition or other operator there is nothing
 * to backtrack over, so it stays linear in the text. The `u` flag gives `(?i)` RE2's meaning,
 * Unicode simple case folding (ſ matches s, K matches k).
 */
function literalAlternation(pattern: string): Pattern | null {
  const m = /^(\(\?i\))?([^\\.^$|?*+()[\]{}]*(?:\|[^\\.^$|?*+()[\]{}]*)*)$/u.exec(pattern);
  if (!m) return null;
  const caseless = !!m[1];
  const re = new RegExp(m[2]!, caseless ? "iu" : "u");
  const words = m[2]!.split("|");
  // Faster still, and the same answer: a literal is a substring test; under (?i), when the
  // words and the text are ASCII, folding case is lowering it (the folds that reach outside
  // ASCII, ſ to s and K to k, need a non-ASCII character in the text).
  if (!caseless) return { test: (text) => words.some((w) => text.includes(w)) };
  if (!ASCII.test(m[2]!)) return re;
  const lowerWords = words.map((w) => w.toLowerCase());
  return { test: (text) => (isAscii(text) ? lowerWords.some((w) => lowered(text).includes(w)) : re.test(text)) };
}

/**
 * `of(text)`, computed again only for a text other than the last one asked about: the rules of
 * one evaluation read the same text.
 */
function forLastText<T>(of: (text: string) => T): (text: string) => T {
  let last: string | undefined;
  let answer!: T;
  return (text) => {
    if (text !== last) {
      last = text;
      answer = of(text);
    }
    return answer;
  };
}

const ASCII = /^[\x00-\x7f]*$/;
const isAscii = forLastText((text) => ASCII.test(text));
const lowered = forLastText((text) => text.toLowerCase());

/** True when the facts satisfy the condition. A missing fact reads as null. */
export function evaluateCondition(when: Condition, facts: Facts): boolean {
  return compileCondition(when).test(facts, null, false) === true;
}

/**
 * The memo slots of conditions compiled to share one memo (the rules of a set): a comparison
 * met before (the same field, op and value, in this rule or another) takes the same slot, so the
 * rules of one evaluation make each distinct comparison once.
 */
export interface SlotTable {
  /** How many slots are taken. */
  next: number;
  byComparison: Map<string, number>;
}

export const slotTable = (): SlotTable => ({ next: 0, byComparison: new Map() });

/**
 * A condition compiled once (the rule engine keeps its rules compiled): `test(facts, memo,
 * partial)` answers true or false, or, when `partial`, undefined while the condition depends on
 * a fact not gathered yet (`{ all: [reasons includes "child_safety", subject…] }` is false for
 * any other reason before anything is queried). Each distinct comparison has a slot in `memo`
 * (`slots.next` of them, 0 unknown, 1 false, 2 true), so one evaluation in two steps (the
 * report's own facts, then the queried ones) of every rule of a set runs each comparison, and
 * each pattern, once.
 */
export interface CompiledCondition {
  test: (facts: Facts, memo: Uint8Array | null, partial: boolean) => boolean | undefined;
}

type Test = CompiledCondition["test"];

export function compileCondition(when: Condition, slots: SlotTable = slotTable()): CompiledCondition {
  // `all` stops at the first false part, `any` at the first true one; either is undecided
  // (undefined) when a part is and none stopped it.
  const settledBy = (parts: Test[], stop: boolean): Test => (facts, memo, partial) => {
    let open = false;
    for (let i = 0; i < parts.length; i++) {
      const v = parts[i]!(facts, memo, partial);
      if (v === stop) return stop;
      if (v === undefined) open = true;
    }
    return open ? undefined : !stop;
  };
  const build = (c: Condition): Test => {
    if ("all" in c) return settledBy(c.all.map(build), false);
    if ("any" in c) return settledBy(c.any.map(build), true);
    if ("not" in c) {
      const inner = build(c.not);
      return (facts, memo, partial) => {
        const v = inner(facts, memo, partial);
        return v === undefined ? undefined : !v;
      };
    }
    const key = `${c.field}\u0000${c.op}\u0000${JSON.stringify(c.value)}`;
    let slot = slots.byComparison.get(key);
    if (slot === undefined) {
      slot = slots.next++;
      slots.byComparison.set(key, slot);
    }
    const field = c.field;
    const holds = comparisonTest(c);
    return (facts, memo, partial) => {
      const known = memo?.[slot];
      if (known) return known === 2;
      const fact = facts[field]; // a gathered fact is never undefined (a missing one is null)
      if (partial && fact === undefined) return undefined;
      const v = holds(fact ?? null);
      if (memo) memo[slot] = v ? 2 : 1;
      return v;
    };
  };
  return { test: build(when) };
}

/** What each op means: a comparison's test of a fact (null when missing), built once. */
function comparisonTest({ op, value }: Comparison): (fact: unknown) => boolean {
  const never = () => false;
  switch (op) {
    case "eq":
      return (fact) => fact === value;
    case "ne":
      return (fact) => fact !== value;
    case "in": {
      const values: unknown[] = Array.isArray(value) ? value : [];
      return (fact) => fact !== null && values.includes(fact);
    }
    case "includes":
      return (fact) => Array.isArray(fact) && fact.includes(value);
    case "gt":
      return typeof value === "number" ? (fact) => typeof fact === "number" && fact > value : never;
    case "gte":
      return typeof value === "number" ? (fact) => typeof fact === "number" && fact >= value : never;
    case "lt":
      return typeof value === "number" ? (fact) => typeof fact === "number" && fact < value : never;
    case "lte":
      return typeof value === "number" ? (fact) => typeof fact === "number" && fact <= value : never;
    case "contains": {
      if (typeof value !== "string") return never;
      const needle = value.toLowerCase();
      return (fact) => typeof fact === "string" && lowered(fact).includes(needle);
    }
    case "matches": {
      const re = typeof value === "string" ? compiled(value) : null;
      return re === null ? never : (fact) => typeof fact === "string" && re.test(fact);
    }
  }
}
