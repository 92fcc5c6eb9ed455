/**
 * Rule tests off the serving thread: a rule's condition is evaluated over reports' facts on a
 * Worker (./rule-test-worker.ts), so that `/healthz` and every other request stay quick however
 * long a test's searches take. One thread per process, started on the first test; tests share
 * it in turn. It holds the process open only while a test waits on it.
 */
import type { RuleTestAnswer, RuleTestBatch } from "./rule-test-worker.ts";
import type { Condition, Facts } from "../views/rule.ts";

interface Waiting {
  resolve: (outcomes: (boolean | null)[]) => void;
  reject: (error: Error) => void;
}

/** Bun's Worker, which can let the process exit while it runs (the DOM's type lacks it). */
type Thread = Worker & { ref(): void; unref(): void };

let worker: Thread | null = null;
const waiting = new Map<number, Waiting>();
let lastId = 0;

/**
 * The thread's module: beside this one when running from the sources; in the single-file
 * binary (scripts/build.ts), the entrypoint of its own that the build embeds, under its path
 * from the project's root (there import.meta.url still names this file on the machine that
 * built the binary).
 */
const WORKER_MODULE = Bun.main.startsWith("/$bunfs/") ? "/$bunfs/root/src/domain/rules/rule-test-worker.js" : new URL("./rule-test-worker.ts", import.meta.url).href;

function thread(): Thread {
  if (worker) return worker;
  const started = new Worker(WORKER_MODULE) as Thread;
  started.onmessage = (event: MessageEvent) => {
    const answer = event.data as RuleTestAnswer;
    const w = waiting.get(answer.id);
    if (!w) return;
    settle(answer.id);
    if ("error" in answer) w.reject(new Error(`rule test: ${answer.error}`));
    else w.resolve(answer.outcomes);
  };
  started.onerror = (event) => {
    // A thread that died fails what it held; the next test starts another.
    if (worker === started) worker = null;
    started.terminate();
    for (const [id, w] of waiting) {
      settle(id);
      w.reject(new Error(`rule test thread failed: ${event.message}`));
    }
  };
  started.unref();
  worker = started;
  return started;
}

function settle(id: number): void {
  waiting.delete(id);
  if (waiting.size === 0) worker?.unref();
}

/**
 * The condition's outcome for each report's facts, evaluated on the thread: true, false, or
 * null when the budget ran out (SEARCH_BUDGET_MS for each report; none is evaluated after
 * `until`, a Date.now() time).
 */
export function evaluateOffThread(when: Condition, facts: Facts[], until: number): Promise<(boolean | null)[]> {
  const t = thread();
  const id = ++lastId;
  return new Promise((resolve, reject) => {
    if (waiting.size === 0) t.ref();
    waiting.set(id, { resolve, reject });
    const batch: RuleTestBatch = { id, when, facts, until };
    t.postMessage(batch);
  });
}
