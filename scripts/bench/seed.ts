/**
 * Seeds a Flagstaff database with many reports straight through bun:sqlite (bulk inserts in
 * large transactions), for the GET /reports benchmark: going through HTTP would take an hour.
 *
 * The rows follow the schema and the domain's rules (src/domain/intake/reports.ts):
 * - every report belongs to a case of the same project and content target; a case's
 *   report_count is the number of its reports;
 * - `created_us` strictly increases (one report every ~2.6 s over the last 30 days), ids are
 *   UUIDv7 of the same instant;
 * - `reasons` is the JSON list of the report's category names, `severity` the highest of their
 *   hints, with one report_reasons row per reason;
 * - subjects are identities of the project (report_count and last_reported_at kept right),
 *   reporters too (their kept tallies counted at the end by the statement of the migration that
 *   brought them, which a test checks against the domain); statuses, automated flags and
 *   decisions are spread like a busy installation (most reports OPEN, a third decided).
 *
 * It adds to whatever the database holds, so it can run again on the same database (or on one
 * with real data): external ids are `s-0…`, `r-0…` and `post-0…` the first time and carry a run
 * tag (`s-2-0…`, `s-3-0…`) when ids of that shape exist already, and a report never takes a
 * `created_us` an earlier report of the organization has (it is unique per organization).
 *
 * Usage as a module: `seedReports(dbPath, { count })`; alone: `bun scripts/bench/seed.ts <db> [count]`.
 */
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";

export interface SeedResult {
  reports: number;
  cases: number;
  identities: number;
  /** Values that exist, for the filters of the benchmark. */
  sample: { subjectExternalId: string; contentExternalId: string; reason: string };
  ms: number;
}

interface Category {
  name: string;
  severity_hint: "LOW" | "MEDIUM" | "HIGH" | "CRITICAL";
}

const SEVERITY_RANK = { LOW: 0, MEDIUM: 1, HIGH: 2, CRITICAL: 3 } as const;
const BUCKET = { LOW: "normal", MEDIUM: "normal", HIGH: "high", CRITICAL: "emergency" } as const;

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

export function seedReports(dbPath: string, opts: { count: number; log?: (s: string) => void }): SeedResult {
  const started = performance.now();
  const log = opts.log ?? (() => {});
  const db = new Database(dbPath);
  db.exec("PRAGMA journal_mode = WAL");
  // Seeding only: nothing here needs to survive a crash, the benchmark starts over.
  db.exec("PRAGMA synchronous = OFF");
  db.exec("PRAGMA cache_size = -512000");
  db.exec("PRAGMA foreign_keys = ON");

  const project = db.query("SELECT id, org_id FROM projects ORDER BY created_at LIMIT 1").get() as { id: string; org_id: string } | null;
  if (!project) throw new Error("seed: the database has no project (run `flagstaff init` first)");
  const categories = db.query("SELECT name, severity_hint FROM report_categories WHERE project_id = ? ORDER BY name").all(project.id) as Category[];
  const keyId = (db.query("SELECT id FROM api_keys WHERE project_id = ? AND kind = 'secret' LIMIT 1").get(project.id) as { id: string }).id;

  const random = rng(7);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const count = opts.count;
  const subjects = Math.max(10, Math.floor(count / 20)); // 50,000 users reported for 1M reports
  const reporters = Math.max(10, Math.floor(count / 10));
  const targets = Math.max(10, Math.floor(count / 5)); // 200,000 pieces of content

  const nowMs = Date.now();
  const startUs = (nowMs - 30 * 86_400_000) * 1000;
  const stepUs = Math.floor((30 * 86_400_000 * 1000) / (count + 1));
  const createdUs = plannedCreatedUs(db, project.org_id, startUs, stepUs, count);
  const createdUsOf = (i: number) => createdUs[i]!;
  const tag = freeRunTag(db, project.id);
  if (tag) log(`ids of earlier runs found: this run's are s-${tag}…, r-${tag}…, post-${tag}…`);

  // Identities: subjects s-0…, reporters r-0…, created before the first report.
  const insertIdentity = db.prepare(
    `INSERT INTO identities (id, project_id, type, external_id, name, username, avatar_url, metadata, report_count, last_seen_at, last_reported_at, created_at, updated_at)
     VALUES (?, ?, 'user', ?, ?, ?, NULL, NULL, 0, ?, NULL, ?, ?)`,
  );
  const subjectIds: string[] = [];
  const reporterIds: string[] = [];
  const t0 = Math.floor(startUs / 1000) - 86_400_000;
  db.transaction(() => {
    for (let i = 0; i < subjects; i++) {
      const id = Bun.randomUUIDv7("hex", t0 + i);
      subjectIds.push(id);
      insertIdentity.run(id, project.id, `s-${tag}${i}`, `Subject ${tag}${i}`, `subject_${tag.replace("-", "_")}${i}`, null, t0 + i, t0 + i);
    }
    for (let i = 0; i < reporters; i++) {
      const id = Bun.randomUUIDv7("hex", t0 + i);
      reporterIds.push(id);
      insertIdentity.run(id, project.id, `r-${tag}${i}`, `Reporter ${tag}${i}`, null, t0 + i, t0 + i, t0 + i);
    }
  })();
  log(`seeded ${subjects + reporters} identities`);

  const insertCase = db.prepare(
    `INSERT INTO cases (id, org_id, project_id, status, bucket, is_open, content_type, content_external_id, subject_identity_id, report_count, assignee_id, assigned_at, created_at, updated_at, last_report_at)
     VALUES (?, ?, ?, 'OPEN', ?, 1, 'post', ?, ?, ?, NULL, NULL, ?, ?, ?)`,
  );
  const insertReport = db.prepare(
    `INSERT INTO reports (id, org_id, project_id, case_id, status, severity, reasons, description, automated, subject_identity_id, subject_external_id, reporter_identity_id,
       content_type, content_external_id, content, escalation, resolution, dismissal, created_by_id, ai_severity, ai_categories, ai_confidence, ai_reasoning, ai_analyzed_at, created_us, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'post', ?, ?, NULL, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, ?, ?)`,
  );
  const insertReason = db.prepare("INSERT INTO report_reasons (report_id, org_id, name, created_us) VALUES (?, ?, ?, ?)");
  const updateSubject = db.prepare("UPDATE identities SET report_count = ?, last_reported_at = ? WHERE id = ?");

  // Plan every report first: the cases (one per content target, holding every report about it;
  // they stay open) are then known before their reports, as the foreign keys want.
  const plan: { target: number; subject: number; reporter: number; reasons: Category[]; status: string; automated: number }[] = [];
  const caseSubject = new Int32Array(targets).fill(-1);
  const caseReports = new Int32Array(targets);
  const caseFirstMs = new Float64Array(targets);
  const caseLastMs = new Float64Array(targets);
  const caseSeverity = new Uint8Array(targets);
  const subjectReports = new Int32Array(subjects);
  const subjectLastMs = new Float64Array(subjects);
  const statusRoll = (r: number) => (r < 0.55 ? "OPEN" : r < 0.65 ? "TRIAGED" : r < 0.75 ? "IN_REVIEW" : r < 0.88 ? "RESOLVED" : r < 0.97 ? "DISMISSED" : r < 0.99 ? "CLOSED" : "APPEALED");
  for (let i = 0; i < count; i++) {
    const target = Math.floor(random() * targets);
    if (caseSubject[target] === -1) caseSubject[target] = Math.floor(random() * subjects);
    const first = pick(categories);
    const second = pick(categories);
    const reasons = random() < 0.8 || second.name === first.name ? [first] : [first, second];
    const severity = reasons.reduce((a, c) => Math.max(a, SEVERITY_RANK[c.severity_hint]), 0);
    const ms = Math.floor(createdUsOf(i) / 1000);
    if (caseReports[target] === 0) caseFirstMs[target] = ms;
    caseReports[target]!++;
    caseLastMs[target] = ms;
    caseSeverity[target] = Math.max(caseSeverity[target]!, severity);
    const subject = caseSubject[target]!;
    subjectReports[subject]!++;
    subjectLastMs[subject] = ms;
    plan.push({ target, subject, reporter: Math.floor(random() * reporters), reasons, status: statusRoll(random()), automated: random() < 0.1 ? 1 : 0 });
  }

  const caseOfTarget: string[] = new Array(targets);
  let cases = 0;
  db.transaction(() => {
    for (let t = 0; t < targets; t++) {
      if (caseReports[t] === 0) continue;
      const id = Bun.randomUUIDv7("hex", caseFirstMs[t]!);
      caseOfTarget[t] = id;
      const severity = (["LOW", "MEDIUM", "HIGH", "CRITICAL"] as const)[caseSeverity[t]!]!;
      insertCase.run(id, project.org_id, project.id, BUCKET[severity], `post-${tag}${t}`, subjectIds[caseSubject[t]!]!, caseReports[t]!, caseFirstMs[t]!, caseLastMs[t]!, caseLastMs[t]!);
      cases++;
    }
    for (let s = 0; s < subjects; s++) if (subjectReports[s]) updateSubject.run(subjectReports[s]!, subjectLastMs[s]!, subjectIds[s]!);
  })();
  log(`seeded ${cases} cases`);

  // Reports, in creation order, 50,000 per transaction.
  const BATCH = 50_000;
  for (let from = 0; from < count; from += BATCH) {
    db.transaction(() => {
      for (let i = from; i < Math.min(count, from + BATCH); i++) {
        const p = plan[i]!;
        const createdUs = createdUsOf(i);
        const ms = Math.floor(createdUs / 1000);
        const severity = p.reasons.reduce<Category["severity_hint"]>((a, c) => (SEVERITY_RANK[c.severity_hint] > SEVERITY_RANK[a] ? c.severity_hint : a), "LOW");
        const decided = { note: null, at: new Date(ms + 3_600_000).toISOString(), by: { type: "user", id: null } };
        const id = Bun.randomUUIDv7("hex", ms);
        insertReport.run(
          id, project.org_id, project.id, caseOfTarget[p.target]!, p.status, severity, JSON.stringify(p.reasons.map((c) => c.name)),
          i % 3 === 0 ? `Report ${i}` : null, p.automated, subjectIds[p.subject]!, `s-${tag}${p.subject}`, reporterIds[p.reporter]!,
          `post-${tag}${p.target}`, i % 4 === 0 ? `Reported text number ${i}, long enough to look like a post.` : null,
          p.status === "RESOLVED" || p.status === "CLOSED" || p.status === "APPEALED" ? JSON.stringify({ code: "SPAM_CONFIRMED", ...decided }) : null,
          p.status === "DISMISSED" ? JSON.stringify({ reason: "false_positive", ...decided }) : null,
          keyId, createdUs, ms,
        );
        for (const c of p.reasons) insertReason.run(id, project.org_id, c.name, createdUs);
      }
    })();
    log(`seeded ${Math.min(count, from + BATCH)} / ${count} reports`);
  }
  db.exec(reporterTallyBackfill());
  log("counted the reporters' tallies");
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();

  const busiestSubject = subjectReports.indexOf(Math.max(...subjectReports));
  const busiestTarget = caseReports.indexOf(Math.max(...caseReports));
  return {
    reports: count,
    cases,
    identities: subjects + reporters,
    sample: { subjectExternalId: `s-${tag}${busiestSubject}`, contentExternalId: `post-${tag}${busiestTarget}`, reason: categories[0]!.name },
    ms: performance.now() - started,
  };
}

/**
 * The run tag for external ids: "" when no `s-…`/`r-…` identity and no open `post-…` case
 * exists in the project (a first run), else the first `N-` (2, 3…) no id starts with.
 */
function freeRunTag(db: Database, projectId: string): string {
  const identity = db.query("SELECT 1 FROM identities WHERE project_id = ? AND type = 'user' AND external_id >= ? AND external_id < ? LIMIT 1");
  const openCase = db.query(
    "SELECT 1 FROM cases WHERE project_id = ? AND content_type = 'post' AND is_open = 1 AND content_external_id IS NOT NULL AND content_external_id >= ? AND content_external_id < ? LIMIT 1",
  );
  // Every text starting with `prefix` sorts in [prefix, prefix with its last character + 1).
  const used = (query: typeof identity, prefix: string) => query.get(projectId, prefix, prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)) !== null;
  for (let n = 1; ; n++) {
    const tag = n === 1 ? "" : `${n}-`;
    if (!used(identity, `s-${tag}`) && !used(identity, `r-${tag}`) && !used(openCase, `post-${tag}`)) return tag;
  }
}

/**
 * created_us of each report: one every stepUs from startUs, strictly increasing, moved on by a
 * microsecond where a report of the organization already has that value (a merge with the
 * existing values, in order, without loading them all).
 */
function plannedCreatedUs(db: Database, orgId: string, startUs: number, stepUs: number, count: number): Float64Array {
  const out = new Float64Array(count);
  const existing = db.query("SELECT created_us AS us FROM reports WHERE org_id = ? AND created_us > ? ORDER BY created_us");
  const it = (existing.iterate(orgId, startUs) as IterableIterator<{ us: number }>)[Symbol.iterator]();
  let next = it.next();
  let prev = startUs;
  for (let i = 0; i < count; i++) {
    let us = Math.max(startUs + (i + 1) * stepUs, prev + 1);
    while (!next.done && next.value.us <= us) {
      if (next.value.us === us) us++;
      next = it.next();
    }
    out[i] = us;
    prev = us;
  }
  it.return?.();
  existing.finalize();
  return out;
}

/** The last statement of the migration that brought identities' kept tallies: it counts them all. */
function reporterTallyBackfill(): string {
  const migration = readFileSync(new URL("../../drizzle/0018_reporter_tally.sql", import.meta.url), "utf8");
  return migration.split("--> statement-breakpoint").at(-1)!;
}

if (import.meta.main) {
  const [path, n] = process.argv.slice(2);
  if (!path) {
    console.error("usage: bun scripts/bench/seed.ts <db> [count]");
    process.exit(2);
  }
  const r = seedReports(path, { count: Number(n ?? 1_000_000), log: console.log });
  console.log(JSON.stringify(r));
}
