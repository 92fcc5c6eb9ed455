/**
 * The thread rule tests are evaluated on (started by src/domain/rules/rule-test-thread.ts): a rule's
 * condition over the facts of a batch of reports, each report under its own search budget
 * (SEARCH_BUDGET_MS, as on intake), so that no pattern, however costly, holds up the serving
 * thread. It keeps its own cache of compiled patterns (src/domain/rules/patterns.ts), trimmed after
 * each batch.
 *
 * Message in: `{ id, when, facts, until }`, `until` the time (Date.now()) after which no report
 * is evaluated. Message out: `{ id, outcomes }`, one per report: true (matches), false (does
 * not), null (the budget ran out before the rule was decided); or `{ id, error }`.
 */
import { trimPatternCache } from "./patterns.ts";
import { compileCondition, searchBudget } from "./rule-conditions.ts";
import type { Condition, Facts } from "../views/rule.ts";

declare const self: Worker;

export interface RuleTestBatch {
  id: number;
  when: Condition;
  facts: Facts[];
  until: number;
}

export type RuleTestAnswer = { id: number; outcomes: (boolean | null)[] } | { id: number; error: string };

self.onmessage = (event: MessageEvent) => {
  const { id, when, facts, until } = event.data as RuleTestBatch;
  let answer: RuleTestAnswer;
  try {
    const condition = compileCondition(when);
    const outcomes = facts.map((f) => {
      if (Date.now() > until) return null;
      const v = condition.test(f, null, false, searchBudget());
      return v === undefined ? null : v;
    });
    answer = { id, outcomes };
  } catch (e) {
    answer = { id, error: e instanceof Error ? e.message : String(e) };
  }
  self.postMessage(answer);
  // The batch's searches grew its patterns' DFAs: the cache is brought back under its bound.
  trimPatternCache();
};
