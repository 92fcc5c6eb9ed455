/**
 * Evaluating a rule's condition tree over a report's facts (docs/rules.md). Pure: no database.
 * `matches` runs through re2js, whose patterns run in time linear in the input (no
 * backtracking), each pattern compiled once and cached (src/domain/rules/patterns.ts); the searches
 * of one evaluation share a time budget.
 */
import { compiledPattern, lowered } from "./patterns.ts";
import type { Comparison, Condition, Facts } from "../views/rule.ts";

export { conditionError, conditionSchema, patternCheck, patternProblem } from "../views/rule.ts";

/**
 * The time one evaluation (a report against the rules of a trigger, or a report in a rule's
 * test) may spend searching text (`matches` and `contains`): docs/rules.md, "What a pattern may
 * cost". A search that would start after it is spent, or is still running when it is (re2js is
 * stopped: src/domain/rules/patterns.ts), does not answer, and the rules it leaves undecided neither
 * match nor not (`budgetExceeded`).
 */
export const SEARCH_BUDGET_MS = 50;

/** What is left of an evaluation's search budget: `ms`, and whether a search went unanswered for want of it. */
export interface SearchBudget {
  ms: number;
  exceeded: boolean;
}

export const searchBudget = (ms: number = SEARCH_BUDGET_MS): SearchBudget => ({ ms, exceeded: false });

/** True when the facts satisfy the condition. A missing fact reads as null. No budget: every search runs to its end. */
export function evaluateCondition(when: Condition, facts: Facts): boolean {
  return compileCondition(when).test(facts, null, false, null) === true;
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
 * partial, budget)` answers true or false, or undefined when it cannot tell: when `partial`,
 * while the condition depends on a fact not gathered yet (`{ all: [reasons includes
 * "child_safety", subject…] }` is false for any other reason before anything is queried); and
 * while it depends on a search the budget left unanswered (`budget.exceeded` is then set). A
 * part nobody could tell is no obstacle where the others decide: `any` with a true part holds,
 * `all` with a false part does not. Each distinct comparison has a slot in `memo` (`slots.next`
 * of them, 0 unknown, 1 false, 2 true), so one evaluation in two steps (the report's own facts,
 * then the queried ones) of every rule of a set runs each comparison, and each pattern, once.
 * A null budget: every search runs to its end.
 */
export interface CompiledCondition {
  test: (facts: Facts, memo: Uint8Array | null, partial: boolean, budget: SearchBudget | null) => boolean | undefined;
}

type Test = CompiledCondition["test"];

export function compileCondition(when: Condition, slots: SlotTable = slotTable()): CompiledCondition {
  // `all` stops at the first false part, `any` at the first true one; either is undecided
  // (undefined) when a part is and none stopped it.
  const settledBy = (parts: Test[], stop: boolean): Test => (facts, memo, partial, budget) => {
    let open = false;
    for (let i = 0; i < parts.length; i++) {
      const v = parts[i]!(facts, memo, partial, budget);
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
      return (facts, memo, partial, budget) => {
        const v = inner(facts, memo, partial, budget);
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
    return (facts, memo, partial, budget) => {
      const known = memo?.[slot];
      if (known) return known === 2;
      const fact = facts[field]; // a gathered fact is never undefined (a missing one is null)
      if (partial && fact === undefined) return undefined;
      const v = holds(fact ?? null, budget);
      if (v === undefined) return undefined; // a search the budget left unanswered: asked again, never remembered
      if (memo) memo[slot] = v ? 2 : 1;
      return v;
    };
  };
  return { test: build(when) };
}

/**
 * What each op means: a comparison's test of a fact (null when missing), built once. The
 * searches (`contains`, `matches` on a string) are timed against the budget and do not answer
 * (undefined) once it is spent.
 */
function comparisonTest({ op, value }: Comparison): (fact: unknown, budget: SearchBudget | null) => boolean | undefined {
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
      return (fact, budget) => {
        if (typeof fact !== "string") return false;
        if (!budget) return lowered(fact).includes(needle);
        if (budget.ms <= 0) return unanswered(budget);
        const start = performance.now();
        const found = lowered(fact).includes(needle);
        budget.ms -= performance.now() - start;
        return found;
      };
    }
    case "matches": {
      const re = typeof value === "string" ? compiledPattern(value) : null;
      if (re === null) return never;
      return (fact, budget) => {
        if (typeof fact !== "string") return false;
        if (!budget) return re.test(fact, Infinity);
        if (budget.ms <= 0) return unanswered(budget);
        const start = performance.now();
        const found = re.test(fact, start + budget.ms);
        budget.ms -= performance.now() - start;
        return found === undefined ? unanswered(budget) : found;
      };
    }
  }
}

/** A search the budget leaves unanswered: past its deadline, or a pattern too costly to run at all (saved before its bound). */
function unanswered(budget: SearchBudget): undefined {
  budget.exceeded = true;
  return undefined;
}
