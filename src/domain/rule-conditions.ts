/**
 * Evaluating a rule's condition tree over a report's facts (docs/rules.md). Pure: no database.
 * `matches` runs through re2js, whose patterns run in time linear in the input (no
 * backtracking), each pattern compiled once and cached.
 */
import { RE2JS } from "re2js";
import type { Comparison, Condition, Facts } from "./views/rule.ts";

export { conditionError, conditionSchema, patternProblem } from "./views/rule.ts";

/** Compiled patterns by their text; bounded (cleared when full: rules hold few distinct patterns). */
const PATTERNS = new Map<string, RE2JS | null>();
const MAX_PATTERNS = 2000;

function compiled(pattern: string): RE2JS | null {
  let re = PATTERNS.get(pattern);
  if (re === undefined) {
    try {
      re = RE2JS.compile(pattern);
    } catch {
      re = null; // an invalid pattern (rules are checked when saved) never matches
    }
    if (PATTERNS.size >= MAX_PATTERNS) PATTERNS.clear();
    PATTERNS.set(pattern, re);
  }
  return re;
}

/** True when the facts satisfy the condition. A missing fact reads as null. */
export function evaluateCondition(when: Condition, facts: Facts): boolean {
  if ("all" in when) return when.all.every((c) => evaluateCondition(c, facts));
  if ("any" in when) return when.any.some((c) => evaluateCondition(c, facts));
  if ("not" in when) return !evaluateCondition(when.not, facts);
  return compare(when, facts);
}

const sameValue = (a: unknown, b: unknown) => a === b;

function compare({ field, op, value }: Comparison, facts: Facts): boolean {
  const fact = facts[field] ?? null;
  switch (op) {
    case "eq":
      return sameValue(fact, value);
    case "ne":
      return !sameValue(fact, value);
    case "in":
      return fact !== null && Array.isArray(value) && value.some((v) => sameValue(fact, v));
    case "includes":
      return Array.isArray(fact) && fact.includes(value);
    case "gt":
      return typeof fact === "number" && typeof value === "number" && fact > value;
    case "gte":
      return typeof fact === "number" && typeof value === "number" && fact >= value;
    case "lt":
      return typeof fact === "number" && typeof value === "number" && fact < value;
    case "lte":
      return typeof fact === "number" && typeof value === "number" && fact <= value;
    case "contains":
      return typeof fact === "string" && typeof value === "string" && fact.toLowerCase().includes(value.toLowerCase());
    case "matches": {
      if (typeof fact !== "string" || typeof value !== "string") return false;
      const re = compiled(value);
      return re !== null && re.test(fact);
    }
  }
}
