/**
 * Rule tests off the serving thread: a rule's condition is evaluated over reports' facts on a
 * Worker (./rule-test-worker.ts), so that `/healthz` and every other request stay quick however
 * long a test's searches take. One thread per process, started on the first test; tests share
 * it in turn. It holds the process open only while a test waits on it.
 */
import { requestThread } from "../plumbing/request-thread.ts";
import type { RuleTestAnswer, RuleTestBatch } from "./rule-test-worker.ts";
import type { Condition, Facts } from "../views/rule.ts";

const ask = requestThread<RuleTestBatch, RuleTestAnswer, (boolean | null)[]>({
  source: new URL("./rule-test-worker.ts", import.meta.url).href,
  bundled: "src/domain/rules/rule-test-worker.js",
  name: "rule test thread",
  settle: (answer) => ("error" in answer ? { error: new Error(`rule test: ${answer.error}`) } : { result: answer.outcomes }),
});

/**
 * The condition's outcome for each report's facts, evaluated on the thread: true, false, or
 * null when the budget ran out (SEARCH_BUDGET_MS for each report; none is evaluated after
 * `until`, a Date.now() time).
 */
export function evaluateOffThread(when: Condition, facts: Facts[], until: number): Promise<(boolean | null)[]> {
  return ask((id) => ({ id, when, facts, until }));
}
