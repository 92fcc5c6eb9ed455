/**
 * `bun run bench:dashboard`: how fast the dashboard's review queue shows its first rows with
 * 20,000 open cases, on the production build, in Debian's Chromium (playwright-core), and
 * whether the last of those cases can be reached from the queue.
 *
 *   bun scripts/bench/dashboard-queue.ts [--cases 20000] [--runs 5] [--binary dist/flagstaff] [--no-build]
 *
 * What runs (about 1½ minutes on the 2-core benchmark machine, most of it paging through 400
 * pages in the browser):
 *  1. the binary is built (scripts/build.ts, the dashboard in React's production build, minified);
 *  2. a database is made by `flagstaff init --json` and seeded straight through bun:sqlite
 *     (seedOpenCases below) with exactly `--cases` open cases, 1–3 reports each, following the
 *     domain's rules (one case per content target, buckets from the reasons' severity hints,
 *     report counts, subjects' counts);
 *  3. `flagstaff serve` on that database; the admin signs in in Chromium;
 *  4. first rows: `--runs` times in a fresh browser context (cold HTTP cache, the session
 *     cookie carried over) and `--runs` times reloading one page (warm cache), the time from
 *     the navigation's start (the page's time origin) to the first animation frame in which a
 *     queue row (`tr[data-case-id]`) is in the page and visible, read in the page itself;
 *     printed with the median beside the ceiling of 1.5 s;
 *  5. the last page: the queue is paged through in the browser with its "Next" button until
 *     the range reads "… of M" ending at M (M the open cases), then the same walk through the
 *     API's cursor (tRPC dashboard.queue with the secret key) counts distinct cases.
 * It prints figures and never fails on a ratio; it fails only when something does not work
 * (the server does not start, rows never appear, the last page is not reached).
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { fmtInt, ROOT, run, startServer, type Server } from "./lib.ts";

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    cases: { type: "string", default: "20000" },
    runs: { type: "string", default: "5" },
    binary: { type: "string", default: "dist/flagstaff" },
    "no-build": { type: "boolean" },
  },
});
const CASES = Number(args.cases);
const RUNS = Math.max(1, Number(args.runs));
const BINARY = resolve(ROOT, args.binary!);
const CEILING_MS = 1500;
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const BUN = process.execPath;
const log = (s: string) => console.error(`[bench:dashboard ${new Date().toISOString().slice(11, 19)}] ${s}`);

// ---------------------------------------------------------------------------------------------
// Seeding

const SEVERITY_RANK = { LOW: 0, MEDIUM: 1, HIGH: 2, CRITICAL: 3 } as const;
const BUCKET_OF = ["normal", "normal", "high", "emergency"] as const;

/** A small deterministic generator, so two runs seed the same data. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Seeds exactly `cases` open cases into a database made by `flagstaff init` (its first project):
 * each about one post (`bq-post-<i>`) of a subject, with 1–3 reports filed one after another
 * (one every few seconds over the last week, `created_us` strictly increasing, UUIDv7 ids of the
 * same instant), reasons from the project's categories (mostly the low and medium ones), the
 * case's bucket from the highest severity hint; 80 % OPEN, 10 % TRIAGED, 10 % IN_REVIEW, the
 * reports in the case's status; one case in twenty claimed by the admin.
 */
function seedOpenCases(dbPath: string, opts: { cases: number }): { cases: number; reports: number; buckets: Record<string, number>; ms: number } {
  const started = performance.now();
  const db = new Database(dbPath);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = OFF"); // seeding only: the benchmark starts over after a crash
  db.exec("PRAGMA foreign_keys = ON");
  const project = db.query("SELECT id, org_id FROM projects ORDER BY created_at LIMIT 1").get() as { id: string; org_id: string } | null;
  if (!project) throw new Error("seed: the database has no project (run `flagstaff init` first)");
  const categories = db.query("SELECT name, severity_hint FROM report_categories WHERE project_id = ? ORDER BY name").all(project.id) as {
    name: string;
    severity_hint: keyof typeof SEVERITY_RANK;
  }[];
  if (!categories.length) throw new Error("seed: the project has no categories");
  const mild = categories.filter((c) => SEVERITY_RANK[c.severity_hint] <= 1);
  const severe = categories.filter((c) => SEVERITY_RANK[c.severity_hint] >= 2);
  const keyId = (db.query("SELECT id FROM api_keys WHERE project_id = ? AND kind = 'secret' LIMIT 1").get(project.id) as { id: string }).id;
  const admin = db.query("SELECT id FROM users WHERE org_id = ? ORDER BY created_at LIMIT 1").get(project.org_id) as { id: string } | null;

  const random = rng(20_000);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const n = opts.cases;
  const subjects = Math.max(10, Math.floor(n / 4));
  const reporters = Math.max(10, Math.floor(n / 2));
  // Plan: reports per case, so the times can be spread over the last week.
  const perCase = Array.from({ length: n }, () => (random() < 0.6 ? 1 : random() < 0.6 ? 2 : 3));
  const totalReports = perCase.reduce((a, b) => a + b, 0);
  const nowMs = Date.now() - 60_000;
  const startUs = (nowMs - 7 * 86_400_000) * 1000;
  const stepUs = Math.floor((7 * 86_400_000 * 1000) / (totalReports + 1));

  const insertIdentity = db.prepare(
    `INSERT INTO identities (id, project_id, type, external_id, name, username, avatar_url, metadata, report_count, last_seen_at, last_reported_at, created_at, updated_at)
     VALUES (?, ?, 'user', ?, ?, ?, NULL, NULL, ?, ?, ?, ?, ?)`,
  );
  const insertCase = db.prepare(
    `INSERT INTO cases (id, org_id, project_id, status, bucket, is_open, content_type, content_external_id, subject_identity_id, report_count, assignee_id, assigned_at, created_at, updated_at, last_report_at)
     VALUES (?, ?, ?, ?, ?, 1, 'post', ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertReport = db.prepare(
    `INSERT INTO reports (id, org_id, project_id, case_id, status, severity, reasons, description, automated, subject_identity_id, subject_external_id, reporter_identity_id,
       content_type, content_external_id, content, escalation, resolution, dismissal, created_by_id, ai_severity, ai_categories, ai_confidence, ai_reasoning, ai_analyzed_at, created_us, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, 'post', ?, ?, NULL, NULL, NULL, ?, NULL, NULL, NULL, NULL, NULL, ?, ?)`,
  );
  const insertReason = db.prepare("INSERT INTO report_reasons (report_id, org_id, name, created_us) VALUES (?, ?, ?, ?)");

  const subjectIds = Array.from({ length: subjects }, (_, i) => Bun.randomUUIDv7("hex", startUs / 1000 - 86_400_000 + i));
  const reporterIds = Array.from({ length: reporters }, (_, i) => Bun.randomUUIDv7("hex", startUs / 1000 - 86_400_000 + i));
  const subjectReports = new Int32Array(subjects);
  const subjectLast = new Float64Array(subjects);
  const buckets: Record<string, number> = { emergency: 0, high: 0, normal: 0 };
  let slot = 0;

  db.transaction(() => {
    // Identities first (the foreign keys), then each case with its reports; the subjects'
    // report counts once all are known.
    const t0 = startUs / 1000 - 86_400_000;
    for (let i = 0; i < subjects; i++) insertIdentity.run(subjectIds[i]!, project.id, `bq-s-${i}`, `Bench Subject ${i}`, `bench_subject_${i}`, 0, t0, null, t0, t0);
    for (let i = 0; i < reporters; i++) insertIdentity.run(reporterIds[i]!, project.id, `bq-r-${i}`, `Bench Reporter ${i}`, null, 0, t0, null, t0, t0);
    for (let c = 0; c < n; c++) {
      const k = perCase[c]!;
      const subject = Math.floor(random() * subjects);
      const roll = random();
      const status = roll < 0.8 ? "OPEN" : roll < 0.9 ? "TRIAGED" : "IN_REVIEW";
      // Most reports are about spam and the like; a few carry a HIGH or CRITICAL reason.
      const reports = Array.from({ length: k }, () => {
        const reason = severe.length && random() < 0.12 ? pick(severe) : pick(mild.length ? mild : categories);
        return { reason, us: startUs + ++slot * stepUs };
      });
      const rank = Math.max(...reports.map((r) => SEVERITY_RANK[r.reason.severity_hint]));
      const bucket = BUCKET_OF[rank]!;
      buckets[bucket]!++;
      const firstMs = Math.floor(reports[0]!.us / 1000);
      const lastMs = Math.floor(reports.at(-1)!.us / 1000);
      const caseId = Bun.randomUUIDv7("hex", firstMs);
      const claimed = admin && c % 20 === 7 ? admin.id : null;
      insertCase.run(caseId, project.org_id, project.id, status, bucket, `bq-post-${c}`, subjectIds[subject]!, k, claimed, claimed ? lastMs : null, firstMs, lastMs, lastMs);
      for (const [j, r] of reports.entries()) {
        const ms = Math.floor(r.us / 1000);
        const id = Bun.randomUUIDv7("hex", ms);
        insertReport.run(
          id, project.org_id, project.id, caseId, status, r.reason.severity_hint, JSON.stringify([r.reason.name]),
          j === 0 ? `Bench report about post ${c}.` : null, subjectIds[subject]!, `bq-s-${subject}`, reporterIds[Math.floor(random() * reporters)]!,
          `bq-post-${c}`, j === 0 ? `Post number ${c}: text long enough to look like something a person wrote on the platform.` : null,
          keyId, r.us, ms,
        );
        insertReason.run(id, project.org_id, r.reason.name, r.us);
      }
      subjectReports[subject]! += k;
      subjectLast[subject] = lastMs;
    }
    const updateSubject = db.prepare("UPDATE identities SET report_count = ?, last_reported_at = ? WHERE id = ?");
    for (let s = 0; s < subjects; s++) if (subjectReports[s]) updateSubject.run(subjectReports[s]!, subjectLast[s]!, subjectIds[s]!);
  })();
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  return { cases: n, reports: totalReports, buckets, ms: performance.now() - started };
}

// ---------------------------------------------------------------------------------------------
// The browser

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const ms = (x: number) => `${Math.round(x)} ms`;

/**
 * Installed in every page of a context: records, in the page's own clock (milliseconds since
 * the navigation started), the first animation frame in which a queue row is in the page and
 * has a box inside the viewport.
 */
function firstRowsProbe(): void {
  const w = window as unknown as { __firstRowsAt?: number };
  const visibleRow = () => {
    const row = document.querySelector("tr[data-case-id]");
    if (!row) return false;
    const box = row.getBoundingClientRect();
    return box.height > 0 && box.top < innerHeight && box.bottom > 0;
  };
  const check = () => {
    if (w.__firstRowsAt !== undefined) return;
    if (visibleRow()) {
      w.__firstRowsAt = performance.now();
      return;
    }
    requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
}

async function firstRowsMs(page: Page, url: string): Promise<{ inPage: number; wall: number }> {
  const t0 = performance.now();
  await page.goto(url, { waitUntil: "commit" });
  await page.waitForFunction(() => (window as unknown as { __firstRowsAt?: number }).__firstRowsAt !== undefined, null, { timeout: 30_000, polling: 20 });
  const wall = performance.now() - t0;
  const inPage = await page.evaluate(() => (window as unknown as { __firstRowsAt: number }).__firstRowsAt);
  return { inPage, wall };
}

/** Numbers of a range such as "1–50 of 20,000" (any digit grouping). */
function parseRange(text: string): { from: number; to: number; total: number } | null {
  const m = /(\d[\d,.\u202f\u00a0 ]*)\s*[–-]\s*(\d[\d,.\u202f\u00a0 ]*)\s+of\s+(\d[\d,.\u202f\u00a0 ]*)/.exec(text);
  if (!m) return null;
  const num = (s: string) => Number(s.replace(/\D/g, ""));
  return { from: num(m[1]!), to: num(m[2]!), total: num(m[3]!) };
}

/** The queue's range text ("51–100 of 20,000"), wherever the page shows it. */
async function rangeText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const candidates = ["[data-testid='queue-range']", ".pager .range", ".pager"].map((sel) => document.querySelector(sel)).filter((el) => el !== null);
    for (const el of candidates) if (/\d\s*[–-]\s*\d[\d,.\s\u202f\u00a0]*\s+of\s+\d/.test(el.textContent ?? "")) return el.textContent ?? "";
    const all = document.querySelector("main")?.textContent ?? document.body.textContent ?? "";
    return /\d[\d,.\u202f\u00a0 ]*\s*[–-]\s*\d[\d,.\u202f\u00a0 ]*\s+of\s+\d[\d,.\u202f\u00a0 ]*/.exec(all)?.[0] ?? "";
  });
}

/**
 * Pages through the queue in the browser with its "Next" button until the range ends at its
 * total. Answers the pages seen, the last range and how long it took.
 */
async function walkToLastPage(page: Page, url: string): Promise<{ pages: number; last: { from: number; to: number; total: number }; ms: number; lastCaseLink: string | null }> {
  await page.goto(url);
  await page.locator("tr[data-case-id]").first().waitFor({ timeout: 30_000 });
  const started = performance.now();
  let range = parseRange(await rangeText(page));
  if (!range) throw new Error(`the queue shows no "N–M of T" range (saw: ${JSON.stringify(await rangeText(page))})`);
  let pages = 1;
  // A button that jumps to the last page, when the queue has one, is used first.
  const lastButton = page.getByRole("button", { name: /^last( page)?\b/i });
  if ((await lastButton.count()) > 0 && (await lastButton.first().isEnabled())) {
    await lastButton.first().click();
    await page.waitForFunction((total) => {
      const t = document.body.textContent ?? "";
      return new RegExp(`[–-]\\s*${total}\\s+of\\s+${total}`).test(t.replace(/[,.\u202f\u00a0]/g, ""));
    }, range.total, { timeout: 60_000 });
    range = parseRange(await rangeText(page))!;
    return { pages: 2, last: range, ms: performance.now() - started, lastCaseLink: await lastLink(page) };
  }
  const next = page.getByRole("button", { name: /^next( page)?\b/i }).first();
  while (range.to < range.total) {
    const before = { from: range.from, firstRow: await page.evaluate(() => document.querySelector("tr[data-case-id]")?.getAttribute("data-case-id") ?? null) };
    await next.click();
    // The next page is there when the range has moved on and the rows are new ones (the old
    // rows may stay on screen while the next page loads).
    await page.waitForFunction(
      (prev) => {
        const el = document.querySelector("[data-testid='queue-range']") ?? document.querySelector(".pager .range") ?? document.querySelector(".pager") ?? document.querySelector("main");
        const text = el?.textContent ?? "";
        const m = /(\d[\d,.\u202f\u00a0 ]*)\s*[–-]/.exec(text);
        const firstRow = document.querySelector("tr[data-case-id]")?.getAttribute("data-case-id") ?? null;
        return m !== null && Number(m[1]!.replace(/\D/g, "")) > prev.from && firstRow !== null && firstRow !== prev.firstRow;
      },
      before,
      { timeout: 30_000, polling: 10 },
    );
    const seen = parseRange(await rangeText(page));
    if (!seen) throw new Error("the range disappeared while paging");
    range = seen;
    pages++;
    if (pages > 100_000) throw new Error("paging does not end");
  }
  return { pages, last: range, ms: performance.now() - started, lastCaseLink: await lastLink(page) };
}

const lastLink = (page: Page) => page.evaluate(() => document.querySelectorAll("tr[data-case-id]")[document.querySelectorAll("tr[data-case-id]").length - 1]?.getAttribute("data-case-id") ?? null);

/** The same walk through the API's cursor: distinct cases seen, pages, time. */
async function walkApi(base: string, secretKey: string): Promise<{ distinct: number; pages: number; total: number; ms: number }> {
  const started = performance.now();
  const seen = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  let total = 0;
  do {
    const input = encodeURIComponent(JSON.stringify({ limit: 50, ...(cursor ? { cursor } : {}) }));
    const res = await fetch(`${base}/trpc/dashboard.queue?input=${input}`, { headers: { authorization: `Bearer ${secretKey}` } });
    if (res.status !== 200) throw new Error(`dashboard.queue: ${res.status} ${await res.text()}`);
    const page = ((await res.json()) as { result: { data: { items: { id: string }[]; nextCursor: string | null; counts: { total: number } } } }).result.data;
    for (const item of page.items) seen.add(item.id);
    total = page.counts.total;
    cursor = page.nextCursor ?? undefined;
    pages++;
  } while (cursor && pages < 100_000);
  return { distinct: seen.size, pages, total, ms: performance.now() - started };
}

// ---------------------------------------------------------------------------------------------
// The run

const work = mkdtempSync(join(tmpdir(), "flagstaff-bench-dashboard-"));
let server: Server | null = null;
let browser: Browser | null = null;
const cleanEnv = (extra: Record<string, string> = {}): Record<string, string> => ({ PATH: "/usr/bin:/bin", HOME: work, ...extra });

try {
  if (!args["no-build"]) {
    log("building the binary (production dashboard)");
    await run([BUN, join(ROOT, "scripts/build.ts"), "--no-smoke", "--outfile", BINARY]);
  }
  const dbPath = join(work, "flagstaff.db");
  const init = JSON.parse(await run([BINARY, "init", "--json"], cleanEnv({ FLAGSTAFF_DB: dbPath }), work)) as {
    projectId: string;
    secretKey: string;
    adminEmail: string;
    adminPassword: string;
  };
  log(`seeding ${fmtInt(CASES)} open cases`);
  const seeded = seedOpenCases(dbPath, { cases: CASES });
  log(`seeded ${fmtInt(seeded.cases)} cases, ${fmtInt(seeded.reports)} reports in ${ms(seeded.ms)}`);

  server = await startServer([BINARY, "serve"], cleanEnv({ FLAGSTAFF_DB: dbPath, PORT: "0", HOST: "127.0.0.1", FLAGSTAFF_LOG_LEVEL: "warn" }), { cwd: work });
  const base = server.url;
  log(`serving at ${base}`);

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const viewport = { width: 1366, height: 900 };
  const signedIn: BrowserContext = await browser.newContext({ viewport });
  const signInPage = await signedIn.newPage();
  await signInPage.goto(base + "/");
  await signInPage.getByLabel("Email").fill(init.adminEmail);
  await signInPage.getByLabel("Password").fill(init.adminPassword);
  await signInPage.getByRole("button", { name: "Sign in" }).click();
  await signInPage.getByRole("heading", { name: "Review queue" }).waitFor({ timeout: 30_000 });
  await signInPage.locator("tr[data-case-id]").first().waitFor({ timeout: 30_000 });
  const state = await signedIn.storageState();
  const queueUrl = base + "/#/queue";

  // Warm-up: the server's first queries and Chromium's first start of the page.
  {
    const ctx = await browser.newContext({ viewport, storageState: state });
    await ctx.addInitScript(firstRowsProbe);
    await firstRowsMs(await ctx.newPage(), queueUrl);
    await ctx.close();
  }

  log(`first rows, ${RUNS} cold runs (a fresh context each: nothing cached)`);
  const cold: { inPage: number; wall: number }[] = [];
  for (let i = 0; i < RUNS; i++) {
    const ctx = await browser.newContext({ viewport, storageState: state });
    await ctx.addInitScript(firstRowsProbe);
    cold.push(await firstRowsMs(await ctx.newPage(), queueUrl));
    await ctx.close();
  }
  log(`first rows, ${RUNS} warm runs (one page reloaded: script and styles cached)`);
  const warm: { inPage: number; wall: number }[] = [];
  {
    const ctx = await browser.newContext({ viewport, storageState: state });
    await ctx.addInitScript(firstRowsProbe);
    const page = await ctx.newPage();
    await firstRowsMs(page, queueUrl);
    // Another query string: a real navigation (a new document), served the same page.
    for (let i = 0; i < RUNS; i++) warm.push(await firstRowsMs(page, `${base}/?run=${i}#/queue`));
    await ctx.close();
  }

  log("paging to the last page in the browser");
  const walk = await walkToLastPage(signInPage, queueUrl);
  log("walking the cursor through the API");
  const api = await walkApi(base, init.secretKey);

  const coldMedian = median(cold.map((r) => r.inPage));
  const warmMedian = median(warm.map((r) => r.inPage));
  const verdict = (x: number) => (x <= CEILING_MS ? "within" : "ABOVE");
  const out = [
    `## Dashboard queue with ${fmtInt(seeded.cases)} open cases (${fmtInt(seeded.reports)} reports; ${seeded.buckets.emergency} emergency, ${seeded.buckets.high} high, ${seeded.buckets.normal} normal)`,
    "",
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Bun ${Bun.version}, Chromium ${browser.version()}, production build (${BINARY.replace(ROOT + "/", "")}).`,
    "",
    "| first queue rows visible (navigation start → first frame with a row) | median | runs | ceiling |",
    "|---|---:|---|---:|",
    `| cold (fresh context, nothing cached) | ${ms(coldMedian)} (${verdict(coldMedian)}) | ${cold.map((r) => ms(r.inPage)).join(", ")} | ${ms(CEILING_MS)} |`,
    `| warm (reload, script and styles cached) | ${ms(warmMedian)} (${verdict(warmMedian)}) | ${warm.map((r) => ms(r.inPage)).join(", ")} | ${ms(CEILING_MS)} |`,
    "",
    `Wall clock seen by the driver (goto → rows seen), medians: cold ${ms(median(cold.map((r) => r.wall)))}, warm ${ms(median(warm.map((r) => r.wall)))}.`,
    "",
    `Last page in the browser: ${fmtInt(walk.pages)} pages with "Next", the last reads ${walk.last.from}–${walk.last.to} of ${walk.last.total}` +
      ` (${walk.last.to === walk.last.total && walk.last.total === seeded.cases ? "every open case reachable" : "NOT every case reached"}), in ${ms(walk.ms)} (${ms(walk.ms / Math.max(1, walk.pages - 1))} a page); last case ${walk.lastCaseLink}.`,
    `The API's cursor: ${fmtInt(api.pages)} pages, ${fmtInt(api.distinct)} distinct cases of ${fmtInt(api.total)} in ${ms(api.ms)}.`,
  ];
  console.log(out.join("\n"));
  if (walk.last.to !== walk.last.total || walk.last.total !== seeded.cases || api.distinct !== seeded.cases) process.exitCode = 1;
} finally {
  await browser?.close().catch(() => {});
  await server?.stop().catch(() => 0);
  rmSync(work, { recursive: true, force: true });
}
