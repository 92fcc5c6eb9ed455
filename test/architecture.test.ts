/**
 * The layer rules of docs/architecture.md, checked on every import of every file under src/.
 *
 * How: a small lexer (comments, strings, templates and regular expressions skipped) finds every
 * `import … from`, `import "…"`, `export … from`, `import("…")`, `typeof import("…")` and
 * `require("…")`; Bun's own transpiler (`Bun.Transpiler#scan`) says which of them remain at run
 * time. An import Bun erases (`import type`, `export type`, `import { type A }`) is type-only.
 * Relative paths are resolved to files; an import that resolves to nothing fails the test.
 *
 * The code does not satisfy the target rules yet: KNOWN_VIOLATIONS lists the imports that broke
 * them when the rules were written, each with its reason. The test fails on any violation not
 * listed, and on any listed one that is gone, so the list only ever shrinks.
 *
 * It also fails on any import circle under src/, naming its files (importCircles: Tarjan's
 * strongly connected components over the same graph), on any import between two folders of
 * src/domain that the domain's layering does not list (DOMAIN_FOUNDATIONS, DOMAIN_LAYERS: each
 * allowed dependency with its reason, no two folders importing each other), and on any member of
 * a vocabulary with a record (resolution codes, action kinds, event types, job kinds) spelt as a
 * string literal outside its record's module (VOCABULARY_RECORDS, parsed with the TypeScript
 * compiler).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { ACTION_KINDS } from "../src/domain/views/enforcement.ts";
import { JOB_KINDS } from "../src/domain/views/job.ts";
import { RESOLUTION_CODES } from "../src/domain/views/report.ts";
import { EVENT_TYPES } from "../src/domain/views/webhook.ts";

// ---------------------------------------------------------------------------------------------
// The rules (docs/architecture.md reproduces them for people).

/** The composition roots: they wire every layer together, so no layer imports them. */
const ROOTS = ["src/cli.ts", "src/server.ts", "src/services.ts"];

/**
 * What an import into a matched path may be: "no" never; "type-only" only erased imports;
 * "pure" only pure schema/vocabulary modules of src/domain (see pureDomainModules);
 * "pure-or-type" those, or any type-only import; "yes" anything.
 */
type Allow = "yes" | "no" | "type-only" | "pure" | "pure-or-type";

interface Rule {
  /** Files the rule applies to: a directory ("src/domain/") or a file. */
  from: string;
  name: string;
  /** Checked in order, first match wins; a target matching none is allowed. */
  to: [targets: string[], allow: Allow][];
  why: string;
}

export const RULES: Rule[] = [
  {
    from: "src/domain/",
    name: "domain",
    to: [[["src/api/", "src/jobs/", "src/web/", "src/commands/", ...ROOTS], "no"]],
    why: "business rules call storage and are called by transport and jobs, never the reverse",
  },
  {
    from: "src/jobs/",
    name: "jobs",
    to: [[["src/api/", "src/web/", "src/commands/", ...ROOTS], "no"]],
    why: "jobs run domain functions outside any request; they know nothing of transport",
  },
  {
    from: "src/db/",
    name: "storage",
    to: [
      [["src/api/", "src/jobs/", "src/web/", "src/commands/", "src/ai/", ...ROOTS], "no"],
      [["src/domain/"], "pure"],
    ],
    why: "storage sits under the domain: it may use the domain's vocabularies (enumerations), nothing else",
  },
  {
    from: "src/web/",
    name: "web",
    to: [
      [["src/web/"], "yes"],
      [["src/api/"], "type-only"],
      [["src/domain/"], "pure-or-type"],
      [["src/"], "no"],
    ],
    why: "the dashboard is a browser bundle: server code must not reach it (types are erased, pure zod schemas are fine)",
  },
  {
    from: "src/api/routers/",
    name: "routers",
    to: [[["src/db/"], "type-only"]],
    why: "routers are thin transport: queries belong in domain functions",
  },
  {
    from: "src/web/pages/",
    name: "dashboard pages",
    to: [[["src/web/pages/", "src/web/app.tsx"], "no"]],
    why: "a page is one route of the shell (app.tsx), which imports it: what two pages share lives in src/web/components/, so that one page changes without another",
  },
  {
    from: "src/ai/",
    name: "ai",
    to: [[["src/api/", "src/web/", "src/jobs/", "src/commands/", ...ROOTS], "no"]],
    why: "the model adapter is called by the domain and knows nothing of transport or jobs",
  },
];

/**
 * Imports that broke the rules when they were written (commit 990d717), "from → to": reason.
 * Only remove entries (the test says when one is gone); never add one to get a change through.
 */
export const KNOWN_VIOLATIONS: Record<string, string> = {
  // routers → storage: queries in routers
  // web → server code
};

// ---------------------------------------------------------------------------------------------
// The domain's folders, layered (docs/architecture.md, "The domain's folders"). A folder of
// src/domain is one concept; it may import the foundations below it and the concepts its entry
// of DOMAIN_LAYERS lists, each for the reason given, and nothing else: a dependency that is not
// here fails the test, whatever kind of import (`import type` too: a folder that needs another's
// types stands on it). Both lists are checked to form no circle, so no two folders import each
// other and the folders read bottom up; an allowed dependency that no import uses any more fails
// too, so the list stays the truth (remove it).

/**
 * The foundations, bottom up: each may import the ones before it, and every concept may import
 * them all.
 */
export const DOMAIN_FOUNDATIONS = [
  ["views", "pure modules: the zod schemas of what the API answers and the vocabularies with their records (storage and the dashboard import them too)"],
  ["core", "what every concept stands on: the context and its transactions, errors, the clock, ids, and the audit writer"],
  ["plumbing", "machinery with no business rule: the job queue, rate windows, sessions, safe fetch, search folding, CSV, retention"],
  ["access", "the one check of who may see and work a case's things (queue access, the blind-review wall), which every concept reading or changing them asks"],
] as const satisfies readonly (readonly [string, string])[];

/** Each concept of src/domain and the other concepts it may import, with the reason (none: foundations only). */
export const DOMAIN_LAYERS: Record<string, Record<string, string>> = {
  media: {},
  webhooks: {},
  categories: {},
  identities: {},
  accounts: {
    categories: "a new project starts with the default categories (seedDefaultCategories)",
    webhooks: "an identity provider's issuer URL is checked as a webhook endpoint's is (checkWebhookUrl)",
  },
  audit: {
    webhooks: "a signed checkpoint is announced as the webhook event audit.checkpoint",
  },
  strikes: {
    accounts: "a strike policy is a project's setting",
  },
  cases: {
    accounts: "case search names assignees by their email",
    identities: "a case's search results and reporter summary show the accounts it is about and its reporters' tallies",
  },
  review: {
    accounts: "a queue may be a project's, and bulk decisions name their moderators by email",
    cases: "the workflow moves cases: locked, claimed, reopened for a target",
    identities: "a decision recounts its reporters' tallies",
    strikes: "a decision adds or takes back a strike (the engine's effect)",
    webhooks: "a decision is announced as report.decided",
  },
  "service-levels": {
    accounts: "appeal targets are a project's statement-of-reasons settings",
    review: "targets are set per queue",
    webhooks: "a breach is announced as a webhook event",
  },
  quality: {
    accounts: "second reviews name their moderators",
    review: "a disagreement reopens its case through the workflow engine",
  },
  team: {
    cases: "a moderator's held cases are those the claims name",
    quality: "a moderator's agreement with second reviews is the quality folder's arithmetic",
  },
  dsa: {
    "service-levels": "the transparency report counts decisions within their targets",
    webhooks: "the Transparency Database's URL is checked as a webhook endpoint's is, its Retry-After read as deliveries read it",
  },
  enforcement: {
    accounts: "actions, statements and appeals are a project's, under its settings",
    cases: "a sweep answers the cases it decided",
    dsa: "an action's statement of reasons is submitted to the Transparency Database",
    identities: "actions are taken on the accounts Flagstaff mirrors",
    review: "actions, appeals and sweeps decide reports through the workflow engine",
    strikes: "the strike ladder takes its steps from the strikes in force",
    webhooks: "actions are announced as webhook events",
  },
  rules: {
    accounts: "a rule may name a project, which must be one of the organization's that is not deleted",
    cases: "a rule's effect tags a case; conditions read its open case",
    enforcement: "a rule's effect resolves with an action",
    identities: "conditions read the accounts and reporters; an effect updates a reporter",
    review: "a rule's effect moves a case to a queue or decides it through the workflow engine",
  },
  intake: {
    accounts: "a report is filed into a project",
    cases: "a report opens or joins a case",
    categories: "a report's reasons are its project's categories",
    identities: "a report mirrors its reporter and subject",
    media: "a report's media hashes are looked up at once in the project's banked signals, held in the in-memory index",
    review: "a muted reporter's report is dismissed through the workflow engine; a report shows its outcome",
    rules: "rules run on every report filed",
  },
  attachments: {
    cases: "evidence hangs on a case, locked with it",
    intake: "evidence added to a report names it",
    media: "an upload's type, size and preview are read from its bytes",
  },
  banks: {
    accounts: "a bank is a project's",
    attachments: "a fetched file the platform asked to keep is an attachment of its report",
    cases: "a match tags its case, raises its bucket, and is shown to who may work the case",
    intake: "the media matched are a case's media items, sent with reports",
    media: "media are hashed and matched in the in-memory index",
    review: "a match routes its case to a queue or escalates it through the workflow engine",
    rules: "the report.media_matched rules run when a report's media matched",
    webhooks: "a match is announced as the webhook event media.matched",
  },
  analysis: {
    accounts: "AI analysis follows its project's settings and its organization's plan",
    cases: "an analysis raises its case's bucket",
    categories: "what the classifier is sent is the project's categories and their policies",
    identities: "analysed content's author is mirrored as a report's subject is",
    intake: "content whose analysis finds a violation is filed as a report",
    review: "an analysis moves a report into review through the workflow engine",
    rules: "rules run again on what an analysis found",
  },
  evaluation: {
    accounts: "evaluation sets and runs are a project's, under its organization's plan",
    analysis: "a run classifies through the AI analysis, with its policies",
    cases: "a set's labels are severities",
    categories: "a set's labels are the project's categories",
    enforcement: "a set built from decisions scrubs personal data as statements do",
    quality: "a run's figures are agreement statistics",
  },
  dashboard: {
    accounts: "the dashboard names people by their email",
    analysis: "a case's detail shows its analyses",
    audit: "a case's file holds its audit events",
    cases: "the dashboard reads cases, their notes, tags and claims",
    categories: "the queue's category filter finds every spelling of a category (categoryKey)",
    enforcement: "a case's detail and an account's profile show their actions",
    identities: "a case's detail and an account's profile show the accounts",
    intake: "a case's detail shows its reports",
    review: "the queue page lists queues in their order",
  },
};

const foundationIndex = (folder: string): number => DOMAIN_FOUNDATIONS.findIndex(([f]) => f === folder);

/** Whether folder `from` may import folder `to` of src/domain, by the lists above. */
export function mayImportFolder(from: string, to: string, layers: Record<string, Record<string, string>> = DOMAIN_LAYERS): boolean {
  const t = foundationIndex(to);
  const f = foundationIndex(from);
  if (f >= 0) return t >= 0 && t < f;
  return t >= 0 || Object.hasOwn(layers[from] ?? {}, to);
}

/** The folder of src/domain a file is in, or null outside it. */
export const domainFolderOf = (file: string): string | null => /^src\/domain\/([^/]+)\//.exec(file)?.[1] ?? null;

export interface FolderImport {
  from: string;
  to: string;
  /** One import that makes it, `file:line`. */
  example: string;
}

/** The imports from one folder of src/domain into another (every import, type-only too), one per pair of folders. */
export function folderImports(graph: Pick<Graph, "edges">): FolderImport[] {
  const pairs = new Map<string, FolderImport>();
  for (const e of graph.edges) {
    const from = domainFolderOf(e.from);
    const to = domainFolderOf(e.to);
    if (!from || !to || from === to) continue;
    const key = `${from} → ${to}`;
    if (!pairs.has(key)) pairs.set(key, { from, to, example: `${e.from}:${e.line} imports ${e.to}` });
  }
  return [...pairs.values()];
}

/** The circles of a folder graph given as lists of what each folder may import. */
export function folderCircles(layers: Record<string, Record<string, string>> = DOMAIN_LAYERS): string[][] {
  const folders = [...DOMAIN_FOUNDATIONS.map(([f]) => f as string), ...Object.keys(layers)];
  const edges: Edge[] = [];
  for (const from of folders) for (const to of folders) if (from !== to && mayImportFolder(from, to, layers)) edges.push({ from, to, runtime: true, line: 0 });
  return importCircles({ files: folders, edges });
}

// ---------------------------------------------------------------------------------------------
// Finding imports.

export interface FoundImport {
  specifier: string;
  line: number;
}

const EXPRESSION_KEYWORDS = new Set([
  "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await",
]);

type Token = { t: "id" | "str" | "punct" | "num" | "other"; v: string; line: number };

/** Identifiers, punctuation and string literals of a TypeScript source, without comments, templates or regexes. */
function tokenize(code: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let line = 1;
  /** Open `${` of templates: the brace depth inside each. */
  const templates: number[] = [];
  const n = code.length;
  if (code.startsWith("#!")) while (i < n && code[i] !== "\n") i++;

  const push = (t: Token["t"], v: string, at = line) => out.push({ t, v, line: at });
  const regexAllowed = (): boolean => {
    const prev = out.at(-1);
    if (!prev) return true;
    if (prev.t === "punct") return !")]}".includes(prev.v);
    if (prev.t === "id") return EXPRESSION_KEYWORDS.has(prev.v);
    return false;
  };
  /** Reads template text from i (just after ` or }) to the closing ` or the next ${. */
  const templateText = (): void => {
    while (i < n) {
      const c = code[i]!;
      if (c === "\\") i += 2;
      else if (c === "`") {
        i++;
        push("other", "`");
        return;
      } else if (c === "$" && code[i + 1] === "{") {
        i += 2;
        templates.push(0);
        push("punct", "${");
        return;
      } else {
        if (c === "\n") line++;
        i++;
      }
    }
  };

  while (i < n) {
    const c = code[i]!;
    if (c === "\n") {
      line++;
      i++;
    } else if (c === " " || c === "\t" || c === "\r") i++;
    else if (c === "/" && code[i + 1] === "/") while (i < n && code[i] !== "\n") i++;
    else if (c === "/" && code[i + 1] === "*") {
      const end = code.indexOf("*/", i + 2);
      const stop = end < 0 ? n : end + 2;
      for (let k = i; k < stop; k++) if (code[k] === "\n") line++;
      i = stop;
    } else if (c === "'" || c === '"') {
      // Strings end at their quote, or (unterminated, e.g. an apostrophe in JSX text) at the line's end.
      let v = "";
      i++;
      while (i < n && code[i] !== c && code[i] !== "\n") {
        if (code[i] === "\\") {
          v += code[i + 1] ?? "";
          i += 2;
        } else v += code[i++];
      }
      if (code[i] === c) i++;
      push("str", v);
    } else if (c === "`") {
      i++;
      templateText();
    } else if (c === "{") {
      if (templates.length) templates[templates.length - 1]!++;
      push("punct", "{");
      i++;
    } else if (c === "}") {
      i++;
      if (templates.length && templates.at(-1) === 0) {
        templates.pop();
        templateText();
      } else {
        if (templates.length) templates[templates.length - 1]!--;
        push("punct", "}");
      }
    } else if (c === "/" && regexAllowed()) {
      let inClass = false;
      i++;
      while (i < n && code[i] !== "\n") {
        const d = code[i]!;
        if (d === "\\") i += 2;
        else {
          i++;
          if (d === "[") inClass = true;
          else if (d === "]") inClass = false;
          else if (d === "/" && !inClass) break;
        }
      }
      while (i < n && /[a-z]/i.test(code[i]!)) i++;
      push("other", "regex");
    } else if (/[A-Za-z_$\u0080-\uffff]/.test(c)) {
      const start = i;
      while (i < n && /[\w$\u0080-\uffff]/.test(code[i]!)) i++;
      push("id", code.slice(start, i));
    } else if (/[0-9]/.test(c)) {
      const start = i;
      while (i < n && /[\w.]/.test(code[i]!)) i++;
      push("num", code.slice(start, i));
    } else {
      push("punct", c);
      i++;
    }
  }
  return out;
}

/** Every module specifier a source names: static, re-exported, dynamic, `typeof import()` and require. */
export function findImports(code: string): FoundImport[] {
  const tokens = tokenize(code);
  const found: FoundImport[] = [];
  const at = (k: number): Token | undefined => tokens[k];
  const isCall = (k: number): boolean => at(k)?.v === "(" && at(k + 1)?.t === "str";
  /** From k, the `from "…"` closing an import or export clause, at brace depth 0. */
  const fromClause = (k: number): Token | undefined => {
    let depth = 0;
    for (let j = k; j < tokens.length && j < k + 500; j++) {
      const tok = tokens[j]!;
      if (tok.t === "punct") {
        if (tok.v === "{") depth++;
        else if (tok.v === "}") depth--;
        else if (depth === 0 && (tok.v === ";" || tok.v === "=" || tok.v === "(")) return undefined;
      } else if (depth === 0 && tok.t === "id" && tok.v === "from" && at(j + 1)?.t === "str") return at(j + 1);
      else if (depth === 0 && tok.t === "id" && (tok.v === "import" || tok.v === "export") && j > k) return undefined;
    }
    return undefined;
  };

  for (let k = 0; k < tokens.length; k++) {
    const tok = tokens[k]!;
    if (tok.t !== "id") continue;
    const prev = at(k - 1);
    if (prev?.v === "." || at(k + 1)?.v === ":") continue; // obj.import(…), { import: … }
    if (tok.v === "import") {
      const next = at(k + 1);
      if (next?.t === "str") found.push({ specifier: next.v, line: next.line });
      else if (isCall(k + 1)) found.push({ specifier: at(k + 2)!.v, line: at(k + 2)!.line });
      else if (next?.v !== ".") {
        const spec = fromClause(k + 1);
        if (spec) found.push({ specifier: spec.v, line: spec.line });
        else {
          // import x = require("…")
          const eq = tokens.findIndex((t, j) => j > k && j < k + 6 && t.v === "=");
          if (eq > 0 && at(eq + 1)?.v === "require" && isCall(eq + 2)) found.push({ specifier: at(eq + 3)!.v, line: at(eq + 3)!.line });
        }
      }
    } else if (tok.v === "export") {
      const next = at(k + 1);
      const clause = next?.v === "type" ? at(k + 2) : next;
      if (clause?.v === "*" || clause?.v === "{") {
        const spec = fromClause(k + 1);
        if (spec) found.push({ specifier: spec.v, line: spec.line });
      }
    } else if (tok.v === "require" && isCall(k + 1)) {
      found.push({ specifier: at(k + 2)!.v, line: at(k + 2)!.line });
    }
  }
  return found;
}

const transpilers = { ts: new Bun.Transpiler({ loader: "ts" }), tsx: new Bun.Transpiler({ loader: "tsx" }) };

/** The specifiers still imported once types are erased, by Bun's own transpiler. */
function runtimeSpecifiers(path: string, code: string): Set<string> {
  if (path.endsWith(".d.ts")) return new Set();
  const transpiler = path.endsWith(".tsx") ? transpilers.tsx : transpilers.ts;
  return new Set(transpiler.scan(code.replace(/^#!.*/, "")).imports.map((i) => i.path));
}

// ---------------------------------------------------------------------------------------------
// The import graph of src/.

const ROOT = resolve(import.meta.dir, "..");

export interface Edge {
  from: string;
  to: string;
  /** Some import of `to` by `from` remains at run time. */
  runtime: boolean;
  line: number;
}

export interface Graph {
  files: string[];
  edges: Edge[];
  /** Imports of packages (`zod`, `drizzle-orm`, `bun:sqlite`…), by file. */
  packages: Map<string, Set<string>>;
  unresolved: string[];
  /** Runtime imports Bun found that the lexer missed: a bug of this test. */
  missed: string[];
}

const isFile = (p: string): boolean => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

function resolveImport(fromAbs: string, specifier: string): string | null {
  const base = resolve(dirname(fromAbs), specifier);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts"), join(base, "index.tsx")]) {
    if (isFile(candidate)) return candidate;
  }
  return null;
}

export function buildGraph(root = ROOT): Graph {
  const files = [...new Bun.Glob("src/**/*.{ts,tsx}").scanSync({ cwd: root })].map((f) => f.split("\\").join("/")).sort();
  const graph: Graph = { files, edges: [], packages: new Map(), unresolved: [], missed: [] };
  for (const file of files) {
    const abs = join(root, file);
    const code = readFileSync(abs, "utf8");
    const found = findImports(code);
    const runtime = runtimeSpecifiers(file, code);
    const names = new Set(found.map((f) => f.specifier));
    for (const spec of runtime) if (!names.has(spec)) graph.missed.push(`${file}: ${spec}`);
    const byTarget = new Map<string, Edge>();
    const packages = new Set<string>();
    for (const f of found) {
      if (!f.specifier.startsWith(".")) {
        packages.add(f.specifier);
        continue;
      }
      const target = resolveImport(abs, f.specifier);
      if (!target) {
        graph.unresolved.push(`${file}:${f.line}: ${f.specifier}`);
        continue;
      }
      const to = relative(root, target).split("\\").join("/");
      const isRuntime = runtime.has(f.specifier);
      const edge = byTarget.get(to);
      if (!edge) byTarget.set(to, { from: file, to, runtime: isRuntime, line: f.line });
      else if (isRuntime && !edge.runtime) Object.assign(edge, { runtime: true, line: f.line });
    }
    graph.edges.push(...byTarget.values());
    graph.packages.set(file, packages);
  }
  return graph;
}

/**
 * Pure schema/vocabulary modules of src/domain: files that import only `zod` and other pure
 * modules (or nothing), such as the status list or a view's zod schema. Detected, not named.
 */
export function pureDomainModules(graph: Graph): Set<string> {
  const pure = new Set(graph.files.filter((f) => f.startsWith("src/domain/") && [...graph.packages.get(f)!].every((p) => p === "zod" || p.startsWith("zod/"))));
  for (let changed = true; changed; ) {
    changed = false;
    for (const e of graph.edges) {
      if (pure.has(e.from) && !pure.has(e.to)) {
        pure.delete(e.from);
        changed = true;
      }
    }
  }
  return pure;
}

const matches = (path: string, target: string): boolean => (target.endsWith("/") ? path.startsWith(target) : path === target);

export interface Violation {
  key: string;
  message: string;
}

export function violations(graph: Graph, pure: Set<string>): Violation[] {
  const out: Violation[] = [];
  for (const e of graph.edges) {
    for (const rule of RULES) {
      if (!matches(e.from, rule.from)) continue;
      const hit = rule.to.find(([targets]) => targets.some((t) => matches(e.to, t)));
      if (!hit) continue;
      const [targets, allow] = hit;
      const ok =
        allow === "yes" ||
        (allow === "type-only" && !e.runtime) ||
        (allow === "pure" && pure.has(e.to)) ||
        (allow === "pure-or-type" && (pure.has(e.to) || !e.runtime));
      if (ok) continue;
      const what = { no: "nothing", "type-only": "only `import type`", pure: "only pure schema/vocabulary modules", "pure-or-type": "only pure schema/vocabulary modules or `import type`", yes: "" }[allow];
      out.push({
        key: `${e.from} → ${e.to}`,
        message:
          `${e.from}:${e.line} ${e.runtime ? "imports" : "type-imports"} ${e.to}\n` +
          `    rule "${rule.name}": ${rule.from} may import ${what} from ${targets.join(", ")}\n` +
          `    because ${rule.why} (docs/architecture.md)`,
      });
      break;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Import circles.

/**
 * The import circles of a graph: its strongly connected components of more than one file, and
 * any file importing itself (Tarjan's algorithm, iterative). Every edge counts, `import type`
 * too: a circle of types is still two modules that cannot be understood, moved or split apart.
 * Each circle's files sorted, circles by their first file.
 */
export function importCircles(graph: Pick<Graph, "files" | "edges">): string[][] {
  const next = new Map<string, string[]>();
  for (const e of graph.edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  let counter = 0;
  for (const start of graph.files) {
    if (index.has(start)) continue;
    // Each frame: a file and how many of its imports were visited.
    const frames: [file: string, at: number][] = [[start, 0]];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (frames.length) {
      const frame = frames.at(-1)!;
      const [file, at] = frame;
      const targets = next.get(file) ?? [];
      if (at < targets.length) {
        frame[1]++;
        const to = targets[at]!;
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          frames.push([to, 0]);
        } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!));
        continue;
      }
      frames.pop();
      const parent = frames.at(-1);
      if (parent) low.set(parent[0], Math.min(low.get(parent[0])!, low.get(file)!));
      if (low.get(file) !== index.get(file)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || targets.includes(file)) circles.push(component.sort());
    }
  }
  return circles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** One path around a circle, from its first file back to it, for the failure message. */
export function circlePath(graph: Pick<Graph, "edges">, circle: string[]): string[] {
  const members = new Set(circle);
  const start = circle[0]!;
  // Breadth-first from start, inside the circle, until an edge leads back to start.
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let k = 0; k < queue.length; k++) {
    const file = queue[k]!;
    for (const e of graph.edges) {
      if (e.from !== file || !members.has(e.to)) continue;
      if (e.to === start) {
        const path = [file];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
        return [...path, start];
      }
      if (!cameFrom.has(e.to)) {
        cameFrom.set(e.to, file);
        queue.push(e.to);
      }
    }
  }
  return circle;
}

// ---------------------------------------------------------------------------------------------
// The tests.

describe("architecture: import rules of docs/architecture.md", () => {
  const graph = buildGraph();
  const pure = pureDomainModules(graph);
  const found = violations(graph, pure);

  test("every import under src/ is found and resolves to a file", () => {
    expect(graph.files.length).toBeGreaterThan(50);
    if (graph.missed.length) {
      throw new Error(`The import lexer of test/architecture.test.ts missed imports that Bun sees (a bug of the test; fix findImports):\n  ${graph.missed.join("\n  ")}`);
    }
    if (graph.unresolved.length) throw new Error(`Relative imports that resolve to no file:\n  ${graph.unresolved.join("\n  ")}`);
  });

  test("no import breaks a layer rule, except the known ones", () => {
    const fresh = found.filter((v) => !(v.key in KNOWN_VIOLATIONS));
    if (fresh.length) {
      throw new Error(
        `${fresh.length} import(s) break the layer rules of docs/architecture.md:\n\n${fresh.map((v) => v.message).join("\n\n")}\n\n` +
          "Move the code to the layer that may hold it (docs/architecture.md, \"Where a rule lives\"). " +
          "KNOWN_VIOLATIONS in test/architecture.test.ts records the debts that existed when the rules were written; it only shrinks.",
      );
    }
  });

  test("every entry of KNOWN_VIOLATIONS still exists (the list only shrinks)", () => {
    const current = new Set(found.map((v) => v.key));
    const gone = Object.keys(KNOWN_VIOLATIONS).filter((k) => !current.has(k));
    if (gone.length) {
      throw new Error(
        `No longer found (fixed, or the file moved): remove it from KNOWN_VIOLATIONS in test/architecture.test.ts, the list only shrinks:\n  ${gone.map((k) => JSON.stringify(k)).join("\n  ")}`,
      );
    }
  });
});

describe("architecture: the checker itself", () => {
  test("finds every kind of import, and nothing in comments, strings or regexes", () => {
    const code = [
      "#!/usr/bin/env bun",
      'import type { A } from "./a.ts";',
      'import { type B, C } from "./b.ts";',
      "import D, {",
      "  E,",
      '} from "./d.ts";',
      'import * as F from "./f.ts";',
      'import "./side-effect.ts";',
      'import sql from "../drizzle/0000.sql" with { type: "text" };',
      'export * from "./star.ts";',
      'export type { G } from "./g.ts";',
      'export { H as I } from "./h.ts";',
      "export { C };",
      'type J = typeof import("./j.ts");',
      'const k = await import("./k.ts");',
      'const l = require("./l.ts");',
      '// import { M } from "./comment.ts";',
      '/* export * from "./block-comment.ts"; */',
      "const s = 'import { N } from \"./string.ts\"';",
      'const t = `${k}import("./template.ts")${`nested ${"}"}`}`;',
      'const r = /import("\\.\\/regex.ts")/g.test(s) ? 1 / 2 : import.meta.dir;',
      "const o = { import: 1, from: 2 }; o.import;",
    ].join("\n");
    expect(findImports(code).map((f) => `${f.line}:${f.specifier}`)).toEqual([
      "2:./a.ts", "3:./b.ts", "6:./d.ts", "7:./f.ts", "8:./side-effect.ts", "9:../drizzle/0000.sql",
      "10:./star.ts", "11:./g.ts", "12:./h.ts", "14:./j.ts", "15:./k.ts", "16:./l.ts",
    ]);
    // Bun erases `import type`, `export type` and imports whose every name is a type.
    expect([...runtimeSpecifiers("x.ts", code)].sort()).toEqual(
      ["../drizzle/0000.sql", "./b.ts", "./d.ts", "./f.ts", "./h.ts", "./k.ts", "./side-effect.ts", "./star.ts"],
    );
  });

  test("applies the rules: forbidden layers, type-only and pure modules", () => {
    const graph: Graph = {
      files: ["src/domain/status.ts", "src/domain/intake/reports.ts", "src/web/page.tsx", "src/db/schema.ts", "src/api/routers/r.ts", "src/web/pages/a.tsx"],
      edges: [
        { from: "src/domain/intake/reports.ts", to: "src/domain/status.ts", runtime: true, line: 1 },
        { from: "src/domain/intake/reports.ts", to: "src/api/trpc.ts", runtime: false, line: 2 },
        { from: "src/web/page.tsx", to: "src/api/router.ts", runtime: false, line: 1 },
        { from: "src/web/page.tsx", to: "src/api/trpc-batch.ts", runtime: true, line: 2 },
        { from: "src/web/page.tsx", to: "src/domain/status.ts", runtime: true, line: 3 },
        { from: "src/web/page.tsx", to: "src/domain/intake/reports.ts", runtime: true, line: 4 },
        { from: "src/db/schema.ts", to: "src/domain/status.ts", runtime: true, line: 1 },
        { from: "src/db/schema.ts", to: "src/domain/intake/reports.ts", runtime: false, line: 2 },
        { from: "src/api/routers/r.ts", to: "src/db/client.ts", runtime: false, line: 1 },
        { from: "src/api/routers/r.ts", to: "src/db/schema.ts", runtime: true, line: 2 },
        { from: "src/web/pages/a.tsx", to: "src/web/components/c.tsx", runtime: true, line: 1 },
        { from: "src/web/pages/a.tsx", to: "src/web/pages/b.tsx", runtime: true, line: 2 },
        { from: "src/web/pages/a.tsx", to: "src/web/app.tsx", runtime: false, line: 3 },
      ],
      packages: new Map([
        ["src/domain/status.ts", new Set(["zod"])],
        ["src/domain/intake/reports.ts", new Set(["drizzle-orm"])],
      ]),
      unresolved: [],
      missed: [],
    };
    const pure = pureDomainModules(graph);
    expect([...pure]).toEqual(["src/domain/status.ts"]);
    expect(violations(graph, pure).map((v) => v.key)).toEqual([
      "src/domain/intake/reports.ts → src/api/trpc.ts",
      "src/web/page.tsx → src/api/trpc-batch.ts",
      "src/web/page.tsx → src/domain/intake/reports.ts",
      "src/db/schema.ts → src/domain/intake/reports.ts",
      "src/api/routers/r.ts → src/db/schema.ts",
      "src/web/pages/a.tsx → src/web/pages/b.tsx",
      "src/web/pages/a.tsx → src/web/app.tsx",
    ]);
  });
});

describe("architecture: no import circles in src/", () => {
  test("no file under src/ imports, through any chain of imports, a file that imports it", () => {
    const graph = buildGraph();
    const circles = importCircles(graph);
    if (circles.length) {
      throw new Error(
        `${circles.length} import circle(s) under src/ (every import counts, \`import type\` too):\n\n` +
          circles.map((c) => `  ${c.length} files: ${c.join(", ")}\n    for example ${circlePath(graph, c).join(" → ")}`).join("\n\n") +
          "\n\nBreak each: move what both sides need into a module of its own that imports neither (a shared type into " +
          "its views module, a dashboard component into src/web/components/), or import a thing from its owner, not through a re-export.",
      );
    }
  });

  test("the circle finder finds circles, self-imports and nothing else", () => {
    const edge = (from: string, to: string): Edge => ({ from, to, runtime: true, line: 1 });
    const graph = {
      files: ["a", "b", "c", "d", "e", "f", "g"],
      edges: [edge("a", "b"), edge("b", "c"), edge("c", "a"), edge("c", "d"), edge("d", "e"), edge("e", "e"), edge("f", "g"), edge("g", "d")],
    };
    expect(importCircles(graph)).toEqual([["a", "b", "c"], ["e"]]);
    expect(circlePath(graph, ["a", "b", "c"])).toEqual(["a", "b", "c", "a"]);
    expect(circlePath(graph, ["e"])).toEqual(["e", "e"]);
    expect(importCircles({ files: graph.files, edges: graph.edges.filter((e) => e.from !== "c" && e.from !== "e") })).toEqual([]);
  });
});

describe("architecture: the domain's folders are layered", () => {
  const graph = buildGraph();
  const folders = [...new Set(graph.files.map(domainFolderOf).filter((f): f is string => f !== null))].sort();
  const listed = [...DOMAIN_FOUNDATIONS.map(([f]) => f as string), ...Object.keys(DOMAIN_LAYERS)];

  test("every folder of src/domain is a foundation or a concept of the layering, and src/domain has no file at its top", () => {
    expect(folders.length).toBeGreaterThan(10);
    expect(graph.files.filter((f) => /^src\/domain\/[^/]+$/.test(f))).toEqual([]);
    const unlisted = folders.filter((f) => !listed.includes(f));
    if (unlisted.length) {
      throw new Error(
        `Folders of src/domain the layering does not know: ${unlisted.join(", ")}. Add each to DOMAIN_LAYERS in test/architecture.test.ts ` +
          "with the folders it imports and why, and give it its line in docs/architecture.md (\"The domain's folders\").",
      );
    }
    expect(listed.filter((f) => !folders.includes(f))).toEqual([]);
    expect(new Set(listed).size).toBe(listed.length);
  });

  test("no import between two folders of src/domain that the layering does not allow (import type too): no two folders import each other", () => {
    const refused = folderImports(graph).filter((i) => !mayImportFolder(i.from, i.to));
    if (refused.length) {
      throw new Error(
        `${refused.length} import(s) between folders of src/domain that DOMAIN_LAYERS (test/architecture.test.ts) does not allow:\n\n` +
          refused.map((i) => `  ${i.from}/ → ${i.to}/, e.g. ${i.example}`).join("\n") +
          "\n\nMove what both need to the lower folder (a shared type or a small pure helper to views/, a thing to the folder that owns it), " +
          "or pass it in from above (a callback, a record). Allow a new dependency in DOMAIN_LAYERS only with its reason, and only downwards: " +
          "the layering must stay free of circles (docs/architecture.md, \"The domain's folders\").",
      );
    }
  });

  test("every dependency DOMAIN_LAYERS allows is used by some import (the list stays the truth)", () => {
    const used = new Set(folderImports(graph).map((i) => `${i.from} → ${i.to}`));
    const unused = Object.entries(DOMAIN_LAYERS).flatMap(([from, to]) => Object.keys(to).map((t) => `${from} → ${t}`)).filter((k) => !used.has(k));
    if (unused.length) throw new Error(`Allowed in DOMAIN_LAYERS but imported by nothing any more: remove them:\n  ${unused.join("\n  ")}`);
  });

  test("the layering has no circle: the folders read bottom up, and no two may import each other", () => {
    expect(folderCircles()).toEqual([]);
    for (const [from, to] of Object.entries(DOMAIN_LAYERS)) {
      for (const t of Object.keys(to)) expect(Object.keys(DOMAIN_LAYERS).includes(t), `${from} → ${t}: a concept of DOMAIN_LAYERS (a foundation needs no entry)`).toBe(true);
    }
  });

  test("docs/architecture.md's table of the domain's folders gives each folder its purpose and, bottom up, what it may import: these lists", () => {
    const doc = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");
    const start = doc.indexOf("## The domain's folders");
    const section = doc.slice(start, doc.indexOf("\n## ", start + 1));
    const rows = [...section.matchAll(/^\| `([a-z-]+)\/` \| (.+) \| (.+) \|$/gm)].map((m) => ({
      folder: m[1]!,
      purpose: m[2]!.trim(),
      imports: [...m[3]!.matchAll(/`([a-z-]+)\/`/g)].map((i) => i[1]!).filter((f) => f !== m[1]),
    }));
    expect(rows.map((r) => r.folder).sort()).toEqual(folders);
    for (const r of rows) expect(r.purpose.length, r.folder).toBeGreaterThan(20);
    const foundations = DOMAIN_FOUNDATIONS.map(([f]) => f as string);
    const expected = (folder: string): string[] =>
      foundations.includes(folder) ? foundations.slice(0, foundations.indexOf(folder)) : Object.keys(DOMAIN_LAYERS[folder] ?? {});
    for (const r of rows) expect([...r.imports].sort(), `the row of ${r.folder}/`).toEqual(expected(r.folder).sort());
    // Bottom up: a row names only folders of rows above it.
    const above = (r: { folder: string; imports: string[] }, i: number) => r.imports.filter((f) => !rows.slice(0, i).some((o) => o.folder === f));
    expect(rows.flatMap((r, i) => above(r, i).map((f) => `${r.folder}/ → ${f}/`))).toEqual([]);
  });

  test("the checker refuses an import the layering does not list, and finds two folders allowed to import each other", () => {
    const layers = { cases: { accounts: "a" }, accounts: {}, review: { cases: "b" } };
    expect(mayImportFolder("review", "cases", layers)).toBe(true);
    expect(mayImportFolder("cases", "review", layers)).toBe(false);
    expect(mayImportFolder("review", "access", layers)).toBe(true);
    expect(mayImportFolder("views", "core", layers)).toBe(false);
    expect(mayImportFolder("core", "views", layers)).toBe(true);
    expect(mayImportFolder("plumbing", "access", layers)).toBe(false);
    expect(mayImportFolder("access", "cases", layers)).toBe(false);
    const edge = (from: string, to: string, line = 1): Edge => ({ from, to, runtime: false, line });
    expect(
      folderImports({
        edges: [edge("src/domain/review/a.ts", "src/domain/cases/b.ts"), edge("src/domain/review/c.ts", "src/domain/cases/b.ts", 7), edge("src/domain/cases/b.ts", "src/domain/cases/d.ts"), edge("src/api/x.ts", "src/domain/cases/b.ts")],
      }),
    ).toEqual([{ from: "review", to: "cases", example: "src/domain/review/a.ts:1 imports src/domain/cases/b.ts" }]);
    expect(folderCircles(layers)).toEqual([]);
    expect(folderCircles({ ...layers, accounts: { review: "c" } })).toEqual([["accounts", "cases", "review"]]);
    expect(folderCircles({ ...layers, cases: { review: "d" } })).toEqual([["cases", "review"]]);
  });
});

// ---------------------------------------------------------------------------------------------
// Tests call the dashboard's procedures through test/helpers/dashboard.ts (tRPC's typed client),
// never by a tRPC URL of their own: a procedure renamed or an input changed is then a compile
// error in the tests, not a 404 at run time. Only the tests of the transport itself write the
// URL by hand, each for the reason given here.

/**
 * A tRPC URL written by hand: the endpoint trpc after a slash, then a slash, a question mark or
 * a closing quote or backtick (so an import of api/trpc.ts is none).
 */
const TRPC_URL = /\/trpc(?=[/?"'`])/;

const TRPC_URL_ALLOWED: Record<string, string> = {
  "test/helpers/dashboard.ts": "the typed client itself: its tRPC link, the page's sign-in and `raw` for transport tests",
  "test/signin-abuse.test.ts": "batches, parallel sign-ins and their timings at the HTTP level, from chosen source addresses",
  "test/signin-proxies.test.ts": "sign-ins from chosen source addresses (node:http) behind a trusted proxy",
  "test/host-header.test.ts": "a bad Host header on every route, the tRPC endpoint among them, over a raw socket",
  "test/dashboard.test.ts": "calls made inside the browser page, with the HttpOnly session cookie the browser holds",
};

/** Each line of `files` (path → text) holding a hand-written tRPC URL, as `path:line: text`. */
export function handWrittenTrpcUrls(files: Map<string, string>): string[] {
  const found: string[] = [];
  for (const [path, text] of files) {
    text.split("\n").forEach((line, i) => {
      if (TRPC_URL.test(line)) found.push(`${path}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

function testFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const path of new Bun.Glob("test/**/*.{ts,tsx}").scanSync({ cwd: ROOT })) files.set(path, readFileSync(join(ROOT, path), "utf8"));
  return files;
}

describe("architecture: tests reach the dashboard through its typed client", () => {
  test("no tRPC URL written by hand in a test file, but in the transport tests allowed here", () => {
    const files = testFiles();
    expect(files.size).toBeGreaterThan(50);
    const outside = handWrittenTrpcUrls(new Map([...files].filter(([path]) => !(path in TRPC_URL_ALLOWED))));
    expect(outside).toEqual([]);
    // The list only ever shrinks: an allowed file that no longer writes a tRPC URL leaves it.
    const unused = Object.keys(TRPC_URL_ALLOWED).filter((path) => handWrittenTrpcUrls(new Map([[path, files.get(path) ?? ""]])).length === 0);
    expect(unused).toEqual([]);
  });

  test("the check finds a URL in a string, a template or a fetch, and not an import of api/trpc.ts", () => {
    const url = "/" + "trpc"; // spelt in two, so that this file holds no URL of its own
    const found = handWrittenTrpcUrls(
      new Map([
        ["a.ts", `await fetch(\`\${server.url}${url}/cases.detail?input=x\`);`],
        ["b.ts", `server.call("GET", "${url}/jobs.stats");`],
        ["c.ts", `httpLink({ url: \`\${base}${url}\` });`],
        ["d.ts", `const u = "${url}?batch=1";`],
        ["e.ts", `import type { Meta } from "../src/api${url}.ts";\nimport { batch } from "../src/api${url}-batch.ts";\nawait user.trpc.cases.detail.query({ caseId });`],
      ]),
    );
    expect(found.map((f) => f.split(":")[0])).toEqual(["a.ts", "b.ts", "c.ts", "d.ts"]);
  });
});

// ---------------------------------------------------------------------------------------------
// A vocabulary whose members carry facts has one record (docs/architecture.md, "Conventions"):
// what code needs to know of a member is a field of its entry, and code that means one member
// names it through the record (ACTION_KIND.ban, EVENT_TYPE.reportDecided, JOB_KIND.enrich). So
// no member is spelt as a string literal outside its record's module: a fact cannot hide in a
// `new Set(["NO_VIOLATION", …])` or a `kind === "ban"`, and a member's uses are found by name.

interface VocabularyRecord {
  vocabulary: string;
  members: readonly string[];
  /** The one module that may spell them: the vocabulary and its record. */
  record: string;
  why: string;
}

export const VOCABULARY_RECORDS: VocabularyRecord[] = [
  {
    vocabulary: "resolution code",
    members: RESOLUTION_CODES,
    record: "src/domain/views/report.ts",
    why: "what a code carries, finds and counts is a field of RESOLUTION_CODE_SPECS",
  },
  {
    vocabulary: "action kind",
    members: ACTION_KINDS,
    record: "src/domain/views/enforcement.ts",
    why: "what a kind acts on, ends, sweeps and shows is a field of ACTION_KIND_SPECS; a kind meant by name is ACTION_KIND.x",
  },
  {
    vocabulary: "webhook event type",
    members: EVENT_TYPES,
    record: "src/domain/views/webhook.ts",
    why: "who gets a type is a field of EVENT_TYPE_SPECS; a type emitted is EVENT_TYPE.x",
  },
  {
    vocabulary: "job kind",
    members: JOB_KINDS,
    record: "src/domain/views/job.ts",
    why: "a kind is enqueued as JOB_KIND.x; its handler, lane and retention are its entry of JOB_SPECS (src/jobs/job-specs.ts)",
  },
];

/**
 * Every string literal of `files` (path → source) that spells a member of a vocabulary outside
 * its record's module, as `path:line: "member" (a vocabulary: why)`. Parsed with the TypeScript
 * compiler: string literals and templates without substitutions, in code, types and JSX
 * attributes alike; comments, regular expressions and JSX text are not literals.
 */
export function strayVocabularyLiterals(files: Map<string, string>, records: readonly VocabularyRecord[] = VOCABULARY_RECORDS): string[] {
  const owner = new Map<string, VocabularyRecord>();
  for (const r of records) for (const m of r.members) owner.set(m, r);
  const found: string[] = [];
  for (const [path, text] of files) {
    // Only a file holding a member's letters somewhere can spell it: the others need no parse.
    if (![...owner.keys()].some((m) => text.includes(m))) continue;
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, path.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
        const r = owner.get(node.text);
        if (r && r.record !== path) {
          const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
          found.push(`${path}:${line}: "${node.text}" (a ${r.vocabulary}: ${r.why}; its record is ${r.record})`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

function sourceFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const path of new Bun.Glob("src/**/*.{ts,tsx}").scanSync({ cwd: ROOT })) files.set(path.split("\\").join("/"), readFileSync(join(ROOT, path), "utf8"));
  return files;
}

describe("architecture: each vocabulary's members are spelt only in their record", () => {
  test("no resolution code, action kind, event type or job kind is a string literal outside its record's module", () => {
    const files = sourceFiles();
    expect(files.size).toBeGreaterThan(50);
    for (const r of VOCABULARY_RECORDS) {
      expect(files.has(r.record), r.record).toBe(true);
      expect(r.members.length, r.vocabulary).toBeGreaterThan(0);
    }
    const stray = strayVocabularyLiterals(files);
    if (stray.length) {
      throw new Error(
        `${stray.length} member(s) of a vocabulary spelt outside its record (docs/architecture.md, "Conventions"):\n  ${stray.join("\n  ")}\n\n` +
          "Make the fact a field of the member's entry in its record and read it, or name the member through the record (ACTION_KIND.ban, EVENT_TYPE.reportDecided, JOB_KIND.enrich).",
      );
    }
  });

  test("the check finds a member in a string, a template, a type, a key and a JSX attribute, and nothing in comments, regexes, JSX text or the record", () => {
    const records: VocabularyRecord[] = [{ vocabulary: "colour", members: ["red", "light.blue"], record: "colours.ts", why: "see COLOUR_SPECS" }];
    const code = [
      'const a = "red";', // 1
      "const b = `light.blue`;", // 2
      'type C = "red" | "green";', // 3
      'const d = specs["light.blue"];', // 4
      "// \"red\" in a comment",
      "const r = /red/.test(x) ? /\"red\"/ : `${x}red`;",
      'const e = { red: 1, "green": 2 };',
      "const f = `red${x}`;",
    ].join("\n");
    const jsx = ['const p = <Badge tone="red">red</Badge>;', "const q = <p>light.blue</p>;"].join("\n");
    expect(strayVocabularyLiterals(new Map([["a.ts", code], ["b.tsx", jsx], ["colours.ts", code]]), records).map((f) => f.split(" (")[0])).toEqual([
      'a.ts:1: "red"', 'a.ts:2: "light.blue"', 'a.ts:3: "red"', 'a.ts:4: "light.blue"', 'b.tsx:1: "red"',
    ]);
  });
});
