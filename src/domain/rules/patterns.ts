/**
 * `matches` patterns, compiled (docs/rules.md, "What a pattern may cost"): a list of words by a
 * substring test, anything else by re2js, each compiled once and kept in a cache bounded by the
 * memory its entries hold; and an re2js search that stops when its deadline passes.
 *
 * re2js runs in time linear in the text, but its constant depends on the pattern. Its lazy DFA
 * builds a state at each (state, character class) it has not met yet and keeps it in a cache of
 * 8 MB; a pattern such as `(?i)\w*a\w{30}\d` meets a new state at almost every character of a
 * long text, and each costs microseconds, more for a larger program; when the cache fills
 * without progress the search starts again on its NFA, whose every step walks all the threads
 * alive. So no bound on the pattern short of refusing most keeps every search fast: a search
 * here is given a deadline, checked where re2js spends more than constant time per character
 * (a DFA state built, an NFA step) and nowhere else, so a search whose DFA states are all built
 * (the commonest case: the states of a word list or of `(?i)free\s+money` are few, and built
 * once for all the texts it searches) pays nothing.
 * This reaches into re2js's internals (version 2.10.0, pinned): test/domain/patterns.test.ts
 * fails if they move.
 */
import { RE2JS } from "re2js";
import { RULE_LIMITS } from "../views/rule.ts";

/** A compiled `matches` pattern. */
export interface Pattern {
  /** Whether the pattern is found in the text; undefined when the search passed `deadline` (performance.now()) before it knew. */
  test(text: string, deadline: number): boolean | undefined;
  /** An estimate of the memory it holds, in bytes: its program and the states its DFA has built. */
  bytes(): number;
}

/** A pattern that is never run: one whose program exceeds RULE_LIMITS.patternProgram (saved before the bound). Every search of it is over budget. */
const TOO_COSTLY: Pattern = { test: () => undefined, bytes: () => 0 };

// ---------------------------------------------------------------------------------------------
// re2js, stopped at a deadline

/** The parts of re2js reached here. */
interface Re2Internals {
  re2Input: { lazyDFA: DfaInternals | null; readonly dfa: DfaInternals; machinePool: object[] };
}
interface DfaInternals {
  maxMem: number;
  memBudget: number;
}
type Step = (this: unknown, ...args: unknown[]) => unknown;
interface Steps {
  prototype: { step: Step };
}

/**
 * The memory a compiled pattern's DFA may hold, by re2js's own count: its default, kept (a
 * smaller one makes patterns whose states would all fit, such as `(\w+\W+){300}`'s 600, build
 * them again at every search: hundreds of milliseconds instead of one).
 */
export const DFA_MAX_BYTES = 8 << 20;

/** Thrown inside re2js when the deadline has passed; caught by the search that set it. */
const PAST_DEADLINE = new Error("past the pattern's deadline");

/** The deadline (performance.now()) of the search running, Infinity when none is. */
let deadline = Infinity;
let steps = 0;

const internals = (re: RE2JS) => re as unknown as Re2Internals;

/** re2js's DFA class (built on first use by each compiled pattern), and its NFA (Machine), reached through the objects they build. */
function re2Classes(): { Dfa: Steps; Machine: Steps } {
  const Dfa = internals(RE2JS.compile("a")).re2Input.dfa.constructor as unknown as Steps;
  // A lookbehind goes straight to the NFA, which leaves its machine in the pool.
  const lookbehind = RE2JS.compile("(?<=a)b", RE2JS.LOOKBEHINDS);
  lookbehind.test("ab");
  const Machine = internals(lookbehind).re2Input.machinePool[0]?.constructor as unknown as Steps | undefined;
  if (typeof Dfa.prototype.step !== "function" || typeof Machine?.prototype.step !== "function" || !("lazyDFA" in internals(lookbehind).re2Input)) {
    throw new Error("re2js has changed: src/domain/rules/patterns.ts cannot bound its searches");
  }
  return { Dfa, Machine };
}

(() => {
  const classes = re2Classes();
  const dfaStep = classes.Dfa.prototype.step;
  // A DFA state built costs microseconds: the clock is read at each.
  classes.Dfa.prototype.step = function (this: unknown, ...args: unknown[]) {
    if (deadline !== Infinity && performance.now() > deadline) throw PAST_DEADLINE;
    return dfaStep.apply(this, args);
  };
  // An NFA step (one character) walks every live thread: the clock is read every 32nd.
  const machineStep = classes.Machine.prototype.step;
  classes.Machine.prototype.step = function (this: unknown, ...args: unknown[]) {
    if (deadline !== Infinity && (++steps & 31) === 0 && performance.now() > deadline) throw PAST_DEADLINE;
    return machineStep.apply(this, args);
  };
})();

/** Bytes of a compiled program per instruction (measured: about 120 on Bun 1.4). */
const BYTES_PER_INSTRUCTION = 150;
/** Real bytes per byte of re2js's own count of its DFA states (measured: about 1.2). */
const DFA_BYTES_FACTOR = 1.25;

function re2Pattern(pattern: string): Pattern {
  const re = RE2JS.compile(pattern);
  const size = re.programSize();
  if (size > RULE_LIMITS.patternProgram) return TOO_COSTLY;
  const input = internals(re).re2Input;
  const programBytes = 1000 + 2 * pattern.length + BYTES_PER_INSTRUCTION * size;
  return {
    test(text, until) {
      if (until === Infinity) return re.test(text);
      deadline = until;
      try {
        return re.test(text);
      } catch (e) {
        if (e === PAST_DEADLINE) return undefined;
        throw e;
      } finally {
        deadline = Infinity;
      }
    },
    bytes: () => programBytes + (input.lazyDFA ? DFA_BYTES_FACTOR * (input.lazyDFA.maxMem - input.lazyDFA.memBudget) : 0),
  };
}

// ---------------------------------------------------------------------------------------------
// Lists of words

/**
 * The commonest pattern of all, a list of words (`(?i)casino|lottery winner`): literal text
 * only, between `|`, optionally after `(?i)`. It is tested as substrings, or, under `(?i)` with
 * non-ASCII words or text, by a JavaScript RegExp of the same literals, which re2js is many
 * times slower than here: with no group, class, repetition or other operator there is nothing
 * to backtrack over, so it stays linear in the text. The `u` flag gives `(?i)` RE2's meaning,
 * Unicode simple case folding (ſ matches s, K matches k). Linear and quick (a 20,000-character
 * text is searched for 1,000 characters of words in well under a millisecond), it has no deadline.
 */
function literalAlternation(pattern: string): Pattern | null {
  const m = /^(\(\?i\))?([^\\.^$|?*+()[\]{}]*(?:\|[^\\.^$|?*+()[\]{}]*)*)$/u.exec(pattern);
  if (!m) return null;
  const caseless = !!m[1];
  const re = new RegExp(m[2]!, caseless ? "iu" : "u");
  const words = m[2]!.split("|");
  const bytes = () => 500 + 6 * pattern.length;
  // Faster still, and the same answer: a literal is a substring test; under (?i), when the
  // words and the text are ASCII, folding case is lowering it (the folds that reach outside
  // ASCII, ſ to s and K to k, need a non-ASCII character in the text).
  if (!caseless) return { test: (text) => words.some((w) => text.includes(w)), bytes };
  if (!ASCII.test(m[2]!)) return { test: (text) => re.test(text), bytes };
  const lowerWords = words.map((w) => w.toLowerCase());
  return { test: (text) => (isAscii(text) ? lowerWords.some((w) => lowered(text).includes(w)) : re.test(text)), bytes };
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
/** The text in lower case (`contains` and the ASCII word lists), computed once per text. */
export const lowered = forLastText((text) => text.toLowerCase());

// ---------------------------------------------------------------------------------------------
// The cache

/**
 * The memory the cache's patterns may hold (their estimates: bytes()). Patterns are few (those
 * of the rules, and of the drafts being tried), most of them a few KB: this keeps thousands.
 */
export const PATTERN_CACHE_BYTES = 32 << 20;

/** Compiled patterns by their text, least recently used first; null: an invalid pattern. */
const cache = new Map<string, Pattern | null>();

/**
 * The compiled pattern, from the cache or compiled now (null for a pattern re2js refuses: rules
 * are checked when saved, and an invalid pattern never matches). Each compilation trims the
 * cache (trimPatternCache); a pattern still held by a compiled rule stays usable there.
 */
export function compiledPattern(pattern: string): Pattern | null {
  let re = cache.get(pattern);
  if (re !== undefined) {
    cache.delete(pattern);
    cache.set(pattern, re);
    return re;
  }
  try {
    re = literalAlternation(pattern) ?? re2Pattern(pattern);
  } catch {
    re = null;
  }
  cache.set(pattern, re);
  trimPatternCache();
  return re;
}

/**
 * Counts the cache's memory again (its patterns' DFAs grow as they search) and drops the least
 * recently used patterns while it exceeds PATTERN_CACHE_BYTES (the newest stays). Run at each
 * compilation, and by the rule test thread after each batch (its searches grow DFAs most).
 */
export function trimPatternCache(): void {
  let total = 0;
  for (const [text, re] of cache) total += entryBytes(text, re);
  for (const [text, re] of cache) {
    if (total <= PATTERN_CACHE_BYTES || cache.size === 1) break;
    total -= entryBytes(text, re);
    cache.delete(text);
  }
}

const entryBytes = (text: string, re: Pattern | null) => (re ? re.bytes() : 100 + 2 * text.length);

/** What the cache holds (for tests and scripts/rule-cost.ts). */
export function patternCacheUse(): { patterns: number; bytes: number } {
  let bytes = 0;
  for (const [text, re] of cache) bytes += entryBytes(text, re);
  return { patterns: cache.size, bytes };
}
