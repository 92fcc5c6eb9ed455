/**
 * Deleting a project (src/domain/accounts/project-deletion.ts): gone for every caller at once,
 * its rows deleted by slices of bounded size in transactions of their own, the project's row
 * last; another project's rows untouched.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, count, eq, getTableName, is, isNotNull } from "drizzle-orm";
import { getTableConfig as pgTableConfig, PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteTableConfig, type SQLiteTable } from "drizzle-orm/sqlite-core";
import { createApiKey, listApiKeys } from "../../src/domain/accounts/keys.ts";
import { deleteProject, deleteProjectSlice, PROJECT_DELETION_STEPS, PROJECT_ROW_TABLES } from "../../src/domain/accounts/project-deletion.ts";
import { FIRST_SLICE_ROWS, nextSliceRows, SLICE_TARGET_MS } from "../../src/domain/plumbing/sliced-deletion.ts";
import { listProjects, requireProject, type Project } from "../../src/domain/accounts/projects.ts";
import { createReport } from "../../src/domain/intake/reports.ts";
import { apiKeys, caseMedia, enforcementActions, jobs, mediaBankEntries, mediaMatches, projects, strikes } from "../../src/db/schema.ts";
import * as schema from "../../src/db/schema.ts";
import { JOB_KIND } from "../../src/domain/views/job.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";
import { startFakeOllama } from "../../scripts/fake-ollama.ts";
import { loadConfig } from "../../src/config.ts";
import { enrichReport } from "../../src/domain/analysis/enrichment.ts";
import { requireCase, reviewQueue } from "../../src/domain/cases/cases.ts";
import { requireReport } from "../../src/domain/intake/reports.ts";
import { caseDetail, identityProfile, overview, queue } from "../../src/domain/dashboard/dashboard.ts";
import { listQueues } from "../../src/domain/review/queues.ts";
import { systemActor } from "../../src/domain/core/audit.ts";
import { createEnforcementAction, expireDueActions, nextActionEnd, nextActionStart, startDueActions } from "../../src/domain/enforcement/enforcement.ts";
import { takeLadderStep } from "../../src/domain/enforcement/strike-ladder.ts";
import { processMedia } from "../../src/domain/banks/matching.ts";
import { importEvalSet } from "../../src/domain/evaluation/sets.ts";
import { startEvalRun, workEvalRun } from "../../src/domain/evaluation/runs.ts";
import { checkPastMedia } from "../../src/domain/banks/past-check.ts";
import { addEntry, createBank } from "../../src/domain/banks/banks.ts";
import { runLinkScan } from "../../src/domain/analysis/scan.ts";
import { decideOnReport } from "../../src/domain/review/decisions.ts";
import { setStrikePolicy } from "../../src/domain/strikes/strikes.ts";
import { strikePolicySchema } from "../../src/domain/views/strikes.ts";
import type { DomainContext } from "../../src/domain/core/context.ts";

/** Reports filed into the doomed project: more than a slice (500), so each large step takes two. */
const REPORTS = 620;

let world: DomainWorld;
let doomed: Project;
let kept: { reportId: string; caseId: string };
let firstDoomed: string;

/** The tables a table's foreign keys refer to, whichever engine's tables the pass uses. */
const referencedBy = (t: unknown): string[] =>
  (is(t, PgTable) ? pgTableConfig(t).foreignKeys : sqliteTableConfig(t as SQLiteTable).foreignKeys).map((fk) => getTableName(fk.reference().foreignTable));

/** Every table whose rows name a project by a foreign key (the cascade's reach). */
const projectTables = Object.values(schema).filter((t) => typeof t === "object" && t !== null && "projectId" in t && referencedBy(t).includes("projects")) as unknown as (SQLiteTable & {
  projectId: Parameters<typeof eq>[0];
})[];

async function rowsOf(projectId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const t of projectTables) {
    const [row] = await world.store.db.select({ n: count() }).from(t).where(eq(t.projectId, projectId));
    counts[getTableName(t)] = row!.n;
  }
  return counts;
}

const hex = (n: number, seed: number) => (seed.toString(16).padStart(8, "0").repeat(8)).slice(0, n);

beforeAll(async () => {
  world = await domainWorld();
  doomed = await world.addProject({ name: "Doomed" });
  for (let i = 0; i < REPORTS; i++) {
    const created = await createReport(world.platform, {
      project: doomed,
      reasonNames: ["spam"],
      subject: { type: "user", externalId: `doomed-user-${i}` },
      target: { contentType: "post", contentExternalId: `doomed-post-${i}` },
      automated: false,
      media: [{ sha256: hex(64, i), md5: hex(32, i), pdq: hex(64, i + 1), pdqQuality: 90 }],
    });
    firstDoomed ??= created.report.id;
  }
  kept = await world.fileReport();
}, 120_000);

afterAll(() => world.close());

describe("deleting a project", () => {
  test("every table that names a project is deleted by slices or goes with the project's row", () => {
    const sliced = PROJECT_DELETION_STEPS.map((s) => getTableName(s.table));
    const withRow: readonly string[] = PROJECT_ROW_TABLES;
    expect(projectTables.length).toBeGreaterThan(20);
    for (const t of projectTables.map((x) => getTableName(x))) expect({ t, listed: sliced.includes(t) !== withRow.includes(t) }).toEqual({ t, listed: true });
  });

  test("gone for its callers at once; its rows go a slice at a time, the project's row last; the other project untouched", async () => {
    const { key } = await createApiKey(world.ctx, { projectId: doomed.id, kind: "secret", name: "doomed" });
    expect(key.startsWith("sk_")).toBe(true);
    await world.warn(firstDoomed);
    const keptBefore = await rowsOf(world.project.id);
    const before = await rowsOf(doomed.id);
    expect(before).toMatchObject({ reports: REPORTS, cases: REPORTS, identities: REPORTS, case_media: REPORTS, enforcement_actions: 1, api_keys: 1 });

    await deleteProject(world.ctx, { projectId: doomed.id });
    // At once: no lookup finds it, its keys are gone; its rows are still there.
    expect((await refusal(requireProject(world.ctx, doomed.id))).http).toBe(404);
    expect((await listProjects(world.ctx)).map((p) => p.id)).not.toContain(doomed.id);
    expect((await listApiKeys(world.ctx, { orgId: world.orgId })).map((k) => k.projectId)).not.toContain(doomed.id);
    expect((await refusal(createApiKey(world.ctx, { projectId: doomed.id, kind: "secret" }))).http).toBe(404);
    expect(await rowsOf(doomed.id)).toMatchObject({ reports: REPORTS, cases: REPORTS });
    expect((await world.audit(doomed.id)).actions).toContain("PROJECT_DELETED");

    // Slice by slice: each deletes at most its step's rows of its table, the steps in order.
    const stepNames = PROJECT_DELETION_STEPS.map((s) => getTableName(s.table));
    const seen: { table: string; deleted: number }[] = [];
    let answer: string;
    let previous = before;
    // The job deleteProject enqueued: the first slice's size; each slice's job names the next one's.
    const pendingJobs = () => world.store.db.select().from(jobs).where(and(eq(jobs.kind, JOB_KIND.projectDelete), eq(jobs.entityId, doomed.id), eq(jobs.status, "pending")));
    const [first] = await pendingJobs();
    expect(JSON.parse(first!.payload)).toEqual({ projectId: doomed.id, rows: FIRST_SLICE_ROWS });
    let enqueued = 1;
    do {
      // Slices of 500 here (the job's size is what the last slice took: nextSliceRows, below).
      answer = await deleteProjectSlice(world.platform, { projectId: doomed.id, rows: 500 });
      const pending = await pendingJobs();
      expect(pending.length).toBe(answer === "continued" ? ++enqueued : enqueued);
      if (answer === "continued") {
        const next = pending.sort((a, b) => b.id.localeCompare(a.id))[0]!;
        const { rows } = JSON.parse(next.payload) as { rows: number };
        expect(rows).toBeGreaterThanOrEqual(1);
        expect(rows).toBeLessThanOrEqual(2_000);
        expect(next.runAt).toBeGreaterThanOrEqual(world.clock.now());
      }
      if (answer === "done") break;
      const now = await rowsOf(doomed.id);
      const fell = stepNames.filter((t) => now[t]! < previous[t]!);
      expect(fell).toHaveLength(1);
      const table = fell[0]!;
      const deleted = previous[table]! - now[table]!;
      expect(deleted).toBeLessThanOrEqual(PROJECT_DELETION_STEPS.find((s) => getTableName(s.table) === table)!.rows);
      seen.push({ table, deleted });
      previous = now;
      // Another project's reports go in between slices.
      await world.fileReport();
    } while (answer === "continued");
    expect(answer).toBe("done");
    // Every step with rows took its turn in order, the large ones in two slices.
    const order = [...new Set(seen.map((s) => s.table))];
    expect(order).toEqual(stepNames.filter((t) => before[t]! > 0));
    expect(seen.filter((s) => s.table === "reports").map((s) => s.deleted)).toEqual([500, REPORTS - 500]);
    expect(seen.filter((s) => s.table === "cases").map((s) => s.deleted)).toEqual([500, REPORTS - 500]);

    const after = await rowsOf(doomed.id);
    expect(Object.entries(after).filter(([, n]) => n > 0)).toEqual([]);
    expect(await world.store.db.select().from(projects).where(eq(projects.id, doomed.id))).toEqual([]);
    expect(await world.store.db.select().from(apiKeys).where(eq(apiKeys.projectId, doomed.id))).toEqual([]);
    expect(await deleteProjectSlice(world.platform, { projectId: doomed.id })).toBe("gone");

    // The project kept: every row it had, its report as filed, and the ones filed meanwhile.
    const keptAfter = await rowsOf(world.project.id);
    expect(keptAfter.reports).toBe(keptBefore.reports! + seen.length);
    expect((await world.report(kept.reportId)).caseId).toBe(kept.caseId);
  }, 120_000);

  test("a slice's size follows what the last one took, about SLICE_TARGET_MS' worth, within bounds", () => {
    expect(SLICE_TARGET_MS).toBe(10);
    expect(nextSliceRows(200, 20)).toBe(100);
    expect(nextSliceRows(200, 10)).toBe(200);
    // Growing at most twofold a slice: one fast slice (a cache warm) does not make the next huge.
    expect(nextSliceRows(200, 2)).toBe(400);
    expect(nextSliceRows(200, 0)).toBe(400);
    expect(nextSliceRows(1_500, 1)).toBe(2_000);
    expect(nextSliceRows(50, 10_000)).toBe(10);
  });

  test("a deleted project's reports are not enriched while its rows are deleted: no model call", async () => {
    const fake = startFakeOllama();
    try {
      const config = loadConfig({ OLLAMA_HOST: fake.url, FLAGSTAFF_AI_TIMEOUT_MS: "5000" });
      const ai = await world.addProject({ name: "AI, doomed", ai: { threshold: 70 } });
      const target = { contentType: "post", contentExternalId: "ai-doomed-post", content: "You are worthless and everyone hates you" };
      const live = await world.fileReport({ project: ai, target });
      expect(await enrichReport({ ...world.ctx, config }, live.reportId)).toBe("enriched");
      const filed = await world.fileReport({ project: ai, target: { ...target, contentExternalId: "ai-doomed-post-2", content: "Nobody will ever miss you, go away" } });
      await deleteProject(world.ctx, { projectId: ai.id });
      const asked = fake.requests.length;
      expect(await enrichReport({ ...world.ctx, config }, filed.reportId)).toBe("skipped");
      expect(fake.requests.length).toBe(asked);
    } finally {
      await fake.stop();
    }
  });

  test("its cases are gone for every caller at once, while its rows wait for their slices; Flagstaff's own jobs still reach them", async () => {
    const going = await world.addProject({ name: "Going" });
    const filed = [];
    for (let i = 0; i < 3; i++) filed.push(await world.fileReport({ project: going, subject: { type: "user", externalId: `going-${i}` } }));
    const stays = await world.fileReport({ subject: { type: "user", externalId: "stays" } });
    // Each check as a request makes it: a fresh actor object, whose access is read once (queue-access.ts).
    const admin = () => world.as({ ...world.ctx.actor });
    const secretKey = () => world.as({ type: "api_key", id: "key-of-another-project" });
    const seen = async (ctx: DomainContext) => ({
      listed: (await queue(ctx, { limit: 100 })).items.map((c) => c.id),
      reviewQueue: (await reviewQueue(ctx, { limit: 100 })).cases.map((c) => c.id),
      openInQueues: (await listQueues(ctx)).reduce((n, q) => n + q.openCases, 0),
      ...(await overview(ctx, { days: 7 }).then((o) => ({
        openCases: Object.values(o.figures.openCases).reduce((a, b) => a + b, 0),
        pending: o.figures.pending,
        received: o.figures.received,
        // Each report gives one reason: the counts by category drop with them.
        byCategory: o.byCategory.reduce((n, c) => n + c.total, 0),
      }))),
    });
    const before = await seen(admin());
    for (const f of filed) expect(before.listed).toContain(f.caseId);
    expect((await requireCase(secretKey(), filed[0]!.caseId)).projectId).toBe(going.id);

    await deleteProject(world.ctx, { projectId: going.id });
    for (const ctx of [admin(), secretKey()]) {
      for (const f of filed) {
        expect((await refusal(requireCase(ctx, f.caseId))).http).toBe(404);
        expect((await refusal(requireReport(ctx, f.reportId))).http).toBe(404);
      }
      expect((await requireCase(ctx, stays.caseId)).id).toBe(stays.caseId);
    }
    expect((await refusal(caseDetail(admin(), filed[0]!.caseId))).http).toBe(404);
    // And the accounts its reports were about.
    const subjectId = (await world.caseOf(filed[0]!.caseId)).subjectIdentityId!;
    expect((await refusal(identityProfile(admin(), subjectId))).http).toBe(404);
    const after = await seen(admin());
    for (const f of filed) {
      expect(after.listed).not.toContain(f.caseId);
      expect(after.reviewQueue).not.toContain(f.caseId);
    }
    expect(after.listed).toContain(stays.caseId);
    expect(after.openInQueues).toBe(before.openInQueues - filed.length);
    expect(after.openCases).toBe(before.openCases - filed.length);
    expect(after.pending).toBe(before.pending - filed.length);
    expect(after.received).toBe(before.received - filed.length);
    expect(after.byCategory).toBe(before.byCategory - filed.length);
    // Its rows are still there, and the deletion's slices (Flagstaff's jobs) reach them.
    expect(await rowsOf(going.id)).toMatchObject({ reports: 3, cases: 3 });
    expect((await requireCase(world.as(systemActor), filed[0]!.caseId)).id).toBe(filed[0]!.caseId);
    while ((await deleteProjectSlice(world.platform, { projectId: going.id, rows: 500 })) === "continued");
    expect(Object.values(await rowsOf(going.id)).every((n) => n === 0)).toBe(true);
  });

  test("nothing is fetched, matched, asked of the model, enforced or announced for it while its rows go: its media's URLs, its links, its bank's past check, its evaluation run, its scheduled actions, its strike steps", async () => {
    const fetched: string[] = [];
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => (fetched.push(new URL(req.url).pathname), new Response("<p>hello</p>", { headers: { "content-type": "text/html" } })) });
    try {
      const going = await world.addProject({ name: "Going quietly" });
      const sys = world.as(systemActor);
      const config = loadConfig({});
      const HOUR = 3_600_000;
      // A media item to fetch, a ban to start in an hour, a suspension to end in an hour, a strike whose step is a ban.
      const filed = await createReport(world.platform, { project: going, reasonNames: ["spam"], subject: { type: "user", externalId: "quiet-1" }, automated: false, media: [{ url: `http://127.0.0.1:${server.port}/a.png` }] });
      const [media] = await world.store.db.select().from(caseMedia).where(eq(caseMedia.reportId, filed.report.id));
      const scheduled = await createEnforcementAction(world.platform, { project: going, kind: "ban", reason: "r", identity: { type: "user", externalId: "quiet-2" }, startsAt: world.clock.now() + HOUR });
      const ending = await createEnforcementAction(world.platform, { project: going, kind: "suspension", reason: "r", identity: { type: "user", externalId: "quiet-3" }, endsAt: world.clock.now() + HOUR });
      await setStrikePolicy(world.ctx, { projectId: going.id, policy: strikePolicySchema.parse({ enabled: true, windowDays: 30, ladder: [{ threshold: 1, kind: "ban" }] }) });
      await decideOnReport(world.ctx, { reportId: filed.report.id, decision: { action: "resolve", code: "SPAM_CONFIRMED" } });
      const [strike] = await world.store.db.select().from(strikes).where(and(eq(strikes.projectId, going.id), isNotNull(strikes.step)));
      expect(strike).toBeDefined();
      // A bank's entry added after a report that carries its digest: the past media check would match it.
      const digest = "ab".repeat(32);
      await createReport(world.platform, { project: going, reasonNames: ["spam"], subject: { type: "user", externalId: "quiet-4" }, automated: false, media: [{ sha256: digest }] });
      const bank = await createBank(world.ctx, { projectId: going.id, name: "Going's list" });
      const entry = await addEntry(world.ctx, { bankId: bank.id, signalType: "sha256", value: digest });
      // An evaluation run started, its items not yet sent to the model.
      const evalSet = await importEvalSet(world.ctx, { projectId: going.id, name: "Going's set", format: "jsonl", content: JSON.stringify({ text: "Buy cheap pills now", categories: ["spam"] }) });
      const evalRun = await startEvalRun({ ...world.ctx, defaultModel: "m" }, { projectId: going.id, setId: evalSet.id });
      const [{ additionId }] = (await world.store.db.select({ additionId: mediaBankEntries.additionId }).from(mediaBankEntries).where(eq(mediaBankEntries.id, entry.id))) as [{ additionId: string }];

      await deleteProject(world.ctx, { projectId: going.id });
      const { maxBytes, perCase, orgBytes, maxPixels, orphanMs } = config.attachments;
      await processMedia(sys, { mediaId: media!.id, allowPrivate: true, timeoutMs: 2_000, attachmentLimits: { maxBytes, perCase, orgBytes, maxPixels, orphanMs }, video: { ...config.video, ffmpegPath: null } });
      await runLinkScan({ ...sys, config, allowPrivate: true, timeoutMs: 2_000 }, { orgId: world.orgId, projectId: going.id, url: `http://127.0.0.1:${server.port}/post` });
      expect(fetched).toEqual([]);
      const fake = startFakeOllama();
      try {
        const aiConfig = loadConfig({ OLLAMA_HOST: fake.url, FLAGSTAFF_AI_TIMEOUT_MS: "5000" });
        expect(await workEvalRun({ ...sys, config: aiConfig, budgetMs: 10_000 }, evalRun.id)).toBe("stopped");
        expect(fake.requests.length).toBe(0);
      } finally {
        await fake.stop();
      }
      expect((await world.store.db.select({ status: caseMedia.status }).from(caseMedia).where(eq(caseMedia.id, media!.id)))[0]!.status).toBe("pending");
      expect(await takeLadderStep(sys, { strikeId: strike!.id })).toBeNull();
      expect(await checkPastMedia(sys, { additionId, after: null, settled: true, batch: 100, pauseMs: 0 })).toBe("stopped");
      expect(await world.store.db.select().from(mediaMatches).where(eq(mediaMatches.projectId, going.id))).toEqual([]);
      world.clock.advance(2 * HOUR);
      try {
        expect((await startDueActions(sys)).found).toBe(0);
        expect((await expireDueActions(sys)).found).toBe(0);
        // Nor does the scheduler wake for them.
        for (const next of [await nextActionStart(sys), await nextActionEnd(sys)]) expect(next === null || next > world.clock.now()).toBe(true);
        const rows = await world.store.db.select({ id: enforcementActions.id, awaitingStart: enforcementActions.awaitingStart, expiredAt: enforcementActions.expiredAt }).from(enforcementActions).where(eq(enforcementActions.projectId, going.id));
        expect(rows.map((r) => r.id).sort()).toEqual([scheduled.id, ending.id].sort());
        expect(rows.find((r) => r.id === scheduled.id)!.awaitingStart).toBe(1);
        expect(rows.find((r) => r.id === ending.id)!.expiredAt).toBeNull();
      } finally {
        world.clock.advance(-2 * HOUR);
      }
      while ((await deleteProjectSlice(world.platform, { projectId: going.id, rows: 500 })) === "continued");
    } finally {
      server.stop(true);
    }
  });

  test("a project that was never deleted is not touched by a slice's job", async () => {
    expect(await deleteProjectSlice(world.platform, { projectId: world.project.id })).toBe("gone");
    expect((await requireProject(world.ctx, world.project.id)).id).toBe(world.project.id);
  });
});
