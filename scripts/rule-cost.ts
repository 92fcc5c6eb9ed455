/**
 * What a rule may cost (issue 24, item 3; docs/rules.md, "What a pattern may cost"): prints
 *
 * 1. the worst pattern the bounds accept, searched over a 20,000-character report (the longest:
 *    content and description of 10,000 characters each): patterns of the shapes that cost re2js
 *    most, each as large as RULE_LIMITS.patternProgram lets it be, over texts chosen against
 *    them; each search alone without a deadline (a fresh compilation: its DFA empty), and as an
 *    evaluation does it, under the search budget;
 * 2. what one evaluation may cost at worst: a report against many rules of such patterns;
 * 3. the slowest `/healthz` while a rule is tried on such reports (a draft test of three costly
 *    patterns over three reports, then the same rule live while three such reports are filed
 *    with the publishable key, then 300 draft tests of distinct patterns), on a server of its
 *    own, and the server's RSS before and after those 300;
 * 4. the RSS of a process after 300 distinct costly patterns have each been compiled and have
 *    searched such a report, with this cache (bounded by memory, searches under the budget) and
 *    as before (up to 2,000 patterns kept, searches to their end), each in a fresh process.
 *
 *   bun scripts/rule-cost.ts [--quick]      (--quick: fewer shapes and texts, 100 patterns)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { RE2JS } from "re2js";
import { patternCacheUse, trimPatternCache } from "../src/domain/rules/patterns.ts";
import { compileCondition, SEARCH_BUDGET_MS, searchBudget } from "../src/domain/rules/rule-conditions.ts";
import { RULE_LIMITS } from "../src/domain/views/rule.ts";
import { ROOT, rssMb, run, startServer } from "./bench/lib.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { quick: { type: "boolean" }, rss: { type: "string" } } });
const quick = !!values.quick;

// ---------------------------------------------------------------------------------------------
// Texts: 20,000 characters without a digit (the patterns end in \d and never match)

let seed = 7;
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = (alphabet: string) => alphabet[Math.floor(random() * alphabet.length)]!;
const words = (letters: string, min: number, spread: number, gaps: string, length: number) => {
  let out = "";
  while (out.length < length) out += Array.from({ length: min + Math.floor(random() * spread) }, () => pick(letters)).join("") + pick(gaps);
  return out.slice(0, length);
};
/** A report's text as rules see it: description, a blank line, content. */
const report = (description: string, content: string) => `${description}\n\n${content}`;
const TEXTS: Record<string, () => string> = {
  "short words": () => report(words("abcdefghij", 1, 9, " ,.\n", 10_000), words("klmnopqrst", 1, 9, " ,.\n", 10_000)),
  "long words of a and b": () => report(words("ab", 300, 300, " ", 10_000), words("ab", 300, 300, " ", 10_000)),
  "a and b": () => report(words("ab", 10_000, 1, "a", 10_000), words("ab", 10_000, 1, "b", 10_000)),
  "lorem ipsum": () => report(...(["", ""].map(() => "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ".repeat(130).slice(0, 10_000)) as [string, string])),
  "non-ASCII": () => report(words("éàçøſKaZ", 1, 9, " \n", 10_000), words("éàçøſKaZ", 1, 9, " \n", 10_000)),
};

// ---------------------------------------------------------------------------------------------
// Shapes: each grown until its program is as large as the bound lets it be

const SHAPES: [string, (k: number) => string][] = [
  ["(?i)(\\w+\\W+){k}\\d: counted words", (k) => `(?i)(\\w+\\W+){${k}}\\d`],
  ["(?i)(\\w+\\s*){k}\\d", (k) => `(?i)(\\w+\\s*){${k}}\\d`],
  ["(?i)\\w*a\\w{k}\\d: a position k back", (k) => `(?i)\\w*a\\w{${k}}\\d`],
  ["(?i)\\w*a\\w\\w…\\d (written out)", (k) => `(?i)\\w*a${"\\w".repeat(k)}\\d`],
  ["(?s).{k}\\d", (k) => `(?s).{${k}}\\d`],
  ["(.*a){k}\\d", (k) => `(.*a){${k}}\\d`],
  ["(?i)(\\w|\\W){k}\\d", (k) => `(?i)(\\w|\\W){${k}}\\d`],
  ["(?i)(\\pL+\\PL+){k}\\d", (k) => `(?i)(\\pL+\\PL+){${k}}\\d`],
  ["[ab]*a[ab]{k}c", (k) => `[ab]*a[ab]{${k}}c`],
  ["(?i)\\b(\\w+\\s){k}\\d", (k) => `(?i)\\b(\\w+\\s){${k}}\\d`],
];

/** The largest pattern of the shape within RULE_LIMITS.patternProgram (and 1,000 characters). */
function largest(make: (k: number) => string): string | null {
  let lo = 1;
  let hi = 1000;
  let best: string | null = null;
  while (lo <= hi) {
    const k = (lo + hi) >> 1;
    let fits = false;
    try {
      const p = make(k);
      fits = p.length <= RULE_LIMITS.string && RE2JS.compile(p).programSize() <= RULE_LIMITS.patternProgram;
      if (fits) best = p;
    } catch {
      fits = false;
    }
    if (fits) lo = k + 1;
    else hi = k - 1;
  }
  return best;
}

const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

function worstAccepted(): { pattern: string; text: string; raw: number; budgeted: number } {
  console.log(`\n## 1. The worst accepted pattern on a 20,000-character report (bound: ${RULE_LIMITS.patternProgram} instructions; budget ${SEARCH_BUDGET_MS} ms)\n`);
  console.log("| shape | instructions | worst text | alone, no deadline (ms) | in an evaluation (ms) |");
  console.log("|---|---|---|---|---|");
  const texts = Object.entries(TEXTS).slice(0, quick ? 3 : undefined).map(([name, make]) => [name, make()] as const);
  let worst = { pattern: "", text: "", raw: 0, budgeted: 0 };
  for (const [name, make] of SHAPES.slice(0, quick ? 4 : undefined)) {
    const pattern = largest(make);
    if (!pattern) continue;
    let row = { text: "", raw: 0, budgeted: 0 };
    for (const [textName, text] of texts) {
      const fresh = RE2JS.compile(pattern);
      let start = performance.now();
      fresh.test(text);
      const raw = performance.now() - start;
      // As an evaluation runs it: compiled by the rules' cache, under a fresh budget.
      const condition = compileCondition({ field: "report.text", op: "matches", value: pattern });
      start = performance.now();
      condition.test({ "report.text": text }, null, false, searchBudget());
      const budgeted = performance.now() - start;
      if (raw > row.raw) row = { text: textName, raw, budgeted: Math.max(row.budgeted, budgeted) };
      else row.budgeted = Math.max(row.budgeted, budgeted);
    }
    console.log(`| ${name} | ${RE2JS.compile(pattern).programSize()} | ${row.text} | ${ms(row.raw)} | ${ms(row.budgeted)} |`);
    if (row.raw > worst.raw) worst = { pattern, ...row };
    worst.budgeted = Math.max(worst.budgeted, row.budgeted);
  }
  console.log(`\nWorst accepted pattern alone: ${worst.pattern.slice(0, 60)} on "${worst.text}": ${ms(worst.raw)} ms; in an evaluation, any pattern: at most ${ms(worst.budgeted)} ms.`);
  return worst;
}

function worstEvaluation(): number {
  console.log(`\n## 2. One evaluation at worst: a report against 20 rules of costly patterns\n`);
  const text = TEXTS["long words of a and b"]!();
  const rules = Array.from({ length: 20 }, (_, i) =>
    compileCondition({ any: [0, 1, 2].map((j) => ({ field: "report.text", op: "matches", value: `(?i)\\w*${"ab"[j % 2]}\\w{${400 + 3 * i + j}}\\d` })) }),
  );
  let worst = 0;
  for (let round = 0; round < 3; round++) {
    const budget = searchBudget();
    const start = performance.now();
    let undecided = 0;
    for (const r of rules) if (r.test({ "report.text": text }, null, false, budget) === undefined) undecided++;
    const took = performance.now() - start;
    worst = Math.max(worst, took);
    console.log(`round ${round + 1}: ${ms(took)} ms, ${undecided} of ${rules.length} rules over budget`);
  }
  console.log(`\nWorst: ${ms(worst)} ms for the report (the budget is ${SEARCH_BUDGET_MS} ms; what is over is the last search's stop and the searches' bookkeeping).`);
  return worst;
}

// ---------------------------------------------------------------------------------------------
// 3. /healthz while a rule is tried, and while a costly live rule meets long reports

const COSTLY = ["(?i)(\\w+\\W+){300}\\d", "(?i)\\w*a\\w{494}\\d", "(?i)\\w*b\\w{494}\\d"];

async function healthzDuringTests(): Promise<{ test: number; live: number; rss: [number, number] }> {
  console.log(`\n## 3. /healthz (every 20 ms) while costly patterns meet 20,000-character reports (a server of its own)\n`);
  const dir = mkdtempSync(join(tmpdir(), "flagstaff-rule-cost-"));
  // SQLite in a folder of its own, whatever the shell says.
  const { FLAGSTAFF_DATABASE_URL: _pg, ...inherited } = process.env as Record<string, string>;
  const env = { ...inherited, FLAGSTAFF_DB: join(dir, "flagstaff.db"), PORT: "0", HOST: "127.0.0.1", FLAGSTAFF_LOG_LEVEL: "warn", FLAGSTAFF_REPORT_RATE_LIMIT: "100000" };
  const init = JSON.parse(await run([process.execPath, join(ROOT, "src/cli.ts"), "init", "--json"], env)) as { orgSlug: string; projectId: string; secretKey: string; publishableKey: string };
  const server = await startServer([process.execPath, join(ROOT, "src/cli.ts"), "serve"], env);
  try {
    const call = async (method: string, path: string, body: unknown, key = init.secretKey) => {
      const res = await fetch(server.url + path, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const file = (key: string) => {
      const text = () => words("ab", 300, 300, " ", 10_000);
      return call("POST", `/sdk/flagstaff/v1/projects/${init.projectId}/reports`, { reason: "spam", target: { contentType: "post", contentExternalId: `p${random()}`, content: text() }, description: words("abcdefghij", 1, 9, " ,.\n", 10_000) }, key);
    };
    const polled = async <T>(during: () => Promise<T>) => {
      let done = false;
      let worst = 0;
      const poller = (async () => {
        while (!done) {
          const start = performance.now();
          await (await fetch(`${server.url}/healthz`)).text();
          const took = performance.now() - start;
          worst = Math.max(worst, took);
          if (took < 20) await Bun.sleep(20 - took);
        }
      })();
      const start = performance.now();
      const result = await during();
      const took = performance.now() - start;
      done = true;
      await poller;
      return { result, worst, took };
    };
    for (let i = 0; i < 3; i++) await file(init.secretKey);
    const rules = `/api/v1/organizations/${init.orgSlug}/rules`;
    const when = { any: COSTLY.map((value) => ({ field: "report.text", op: "matches", value })) };
    const tried = await polled(() => call("POST", `${rules}/test`, { rule: { when, then: [{ type: "tag", tag: "x" }] }, limit: 3 }));
    console.log(`draft test (${COSTLY.join(", ")}) over 3 reports: answered ${tried.result.status} in ${ms(tried.took)} ms, ${tried.result.body.budgetExceeded?.length} over budget; slowest /healthz ${ms(tried.worst)} ms`);
    const created = await call("POST", rules, { name: "costly", trigger: "report.created", mode: "live", when, then: [{ type: "tag", tag: "costly" }] });
    const live = await polled(async () => {
      const took: number[] = [];
      for (let i = 0; i < 3; i++) {
        const start = performance.now();
        await file(init.publishableKey);
        took.push(performance.now() - start);
      }
      return took;
    });
    const hits = await fetch(`${server.url}${rules}/${created.body.rule.id}/hits`, { headers: { authorization: `Bearer ${init.secretKey}` } }).then((r) => r.json() as Promise<any>);
    console.log(`live rule, 3 reports filed with the publishable key: answered in ${live.result.map(ms).join(", ")} ms; ${hits.hits.filter((h: { budgetExceeded: boolean }) => h.budgetExceeded).length} hits with budgetExceeded; slowest /healthz ${ms(live.worst)} ms`);
    await call("DELETE", `${rules}/${created.body.rule.id}`, undefined);

    // The issue's memory figure (219 MB to 588 MB after 297 patterns): distinct draft tests over a long report.
    const rssBefore = rssMb(server.proc.pid);
    const many = await polled(async () => {
      for (let i = 0; i < PATTERNS; i++) {
        const value = `(?i)(\\w+\\W+){${31 + i}}\\d`;
        const r = await call("POST", `${rules}/test`, { rule: { when: { field: "report.text", op: "matches", value }, then: [{ type: "tag", tag: "x" }] }, limit: 1 });
        if (r.status !== 200) throw new Error(`draft test ${i}: ${r.status} ${JSON.stringify(r.body)}`);
      }
    });
    const rssAfter = rssMb(server.proc.pid);
    console.log(`${PATTERNS} draft tests, each a distinct pattern over a long report: server RSS ${rssBefore.toFixed(0)} MB → ${rssAfter.toFixed(0)} MB; slowest /healthz meanwhile ${ms(many.worst)} ms`);
    return { test: Math.max(tried.worst, many.worst), live: live.worst, rss: [rssBefore, rssAfter] };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// 4. RSS after 300 distinct costly patterns (each mode in a process of its own)

const PATTERNS = quick ? 100 : 300;

async function rssChild(mode: "now" | "before"): Promise<void> {
  const text = TEXTS["short words"]!();
  Bun.gc(true);
  const before = process.memoryUsage().rss / 2 ** 20;
  const kept = new Map<string, RE2JS>();
  for (let i = 0; i < PATTERNS; i++) {
    const pattern = `(?i)(\\w+\\W+){${31 + i}}\\d`; // 189 to 1,989 instructions: all within the bound
    if (mode === "before") {
      // As before issue 24: up to 2,000 compiled patterns kept, each search run to its end.
      let re = kept.get(pattern);
      if (!re) kept.set(pattern, (re = RE2JS.compile(pattern)));
      re.test(text);
    } else {
      // As the rule test thread does: the rules' cache, each search under the budget, trimmed after.
      compileCondition({ field: "report.text", op: "matches", value: pattern }).test({ "report.text": text }, null, false, searchBudget());
      trimPatternCache();
    }
  }
  Bun.gc(true);
  const after = process.memoryUsage().rss / 2 ** 20;
  const heap = process.memoryUsage().heapUsed / 2 ** 20;
  const cache = mode === "now" ? patternCacheUse() : null;
  console.log(JSON.stringify({ before, after, heap, patterns: cache?.patterns ?? kept.size, cacheMb: cache ? cache.bytes / 2 ** 20 : null }));
}

async function rssFigures(): Promise<{ now: number; before: number }> {
  console.log(`\n## 4. RSS after ${PATTERNS} distinct costly patterns, each compiled and searching a 20,000-character report\n`);
  const out: Record<string, { before: number; after: number; heap: number; patterns: number; cacheMb: number | null }> = {};
  for (const mode of ["before", "now"] as const) {
    const start = performance.now();
    const printed = await run([process.execPath, import.meta.path, `--rss=${mode}`, ...(quick ? ["--quick"] : [])]);
    out[mode] = JSON.parse(printed.trim().split("\n").at(-1)!);
    const r = out[mode]!;
    const label = mode === "before" ? "before (2,000 kept, searches to their end)" : "now (cache bounded by memory, searches under the budget)";
    console.log(`${label}: RSS ${r.before.toFixed(0)} MB → ${r.after.toFixed(0)} MB (heap in use after a full collection: ${r.heap.toFixed(0)} MB), ${r.patterns} patterns kept${r.cacheMb === null ? "" : ` (${r.cacheMb.toFixed(1)} MB by the cache's estimate)`}, ${((performance.now() - start) / 1000).toFixed(0)} s`);
  }
  return { now: out.now!.after, before: out.before!.after };
}

if (values.rss === "now" || values.rss === "before") {
  await rssChild(values.rss);
} else {
  console.log(`# What a rule may cost (scripts/rule-cost.ts${quick ? " --quick" : ""}), ${new Date().toISOString().slice(0, 10)}`);
  const worst = worstAccepted();
  const evaluation = worstEvaluation();
  const healthz = await healthzDuringTests();
  const rss = await rssFigures();
  console.log(`\n## Summary\n`);
  console.log(`- worst accepted pattern on a 20,000-character report: ${ms(worst.raw)} ms alone (${worst.pattern.slice(0, 40)}), at most ${ms(worst.budgeted)} ms in an evaluation`);
  console.log(`- one evaluation at worst (20 rules of costly patterns): ${ms(evaluation)} ms`);
  console.log(`- slowest /healthz: ${ms(healthz.test)} ms during a draft test, ${ms(healthz.live)} ms while a costly live rule met long reports`);
  console.log(`- RSS after ${PATTERNS} distinct patterns: ${rss.now.toFixed(0)} MB now, ${rss.before.toFixed(0)} MB as before (in a process of their own); the server: ${healthz.rss[0].toFixed(0)} MB → ${healthz.rss[1].toFixed(0)} MB after ${PATTERNS} distinct draft tests`);
}
