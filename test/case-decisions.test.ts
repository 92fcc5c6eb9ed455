/**
 * Every decided case has its decision with its code (migration case_decisions, both engines):
 * the backfill redone from what the reports and appeals record, and a case that a Flagstaff
 * recording no decisions takes out of review (an instance not yet upgraded) filled by the
 * database itself, like an escalation it applies, while the workflow engine's own decisions
 * are left as it wrote them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, inArray, sql } from "drizzle-orm";
import { embeddedMigrations } from "../src/db/migrations-index.ts";
import { embeddedPgMigrations } from "../src/db/migrations-index-pg.ts";
import { appeals, cases, reports } from "../src/db/schema.ts";
import { decideAppeal, fileAppeal } from "../src/domain/enforcement/appeals.ts";
import { resolveReportWithAction } from "../src/domain/enforcement/enforcement.ts";
import { domainWorld, type DomainWorld } from "./helpers/builders.ts";
import { TEST_ENGINE } from "./helpers/pg.ts";

const migrations = TEST_ENGINE === "postgres" ? embeddedPgMigrations : embeddedMigrations;
const before = migrations.findIndex((m) => m.tag.endsWith("_case_decisions"));

const DECISION = { decision: cases.decision, code: cases.decisionCode, at: cases.decidedAt, byType: cases.decidedByType, byId: cases.decidedById, team: cases.escalatedTeam };
type Decision = { decision: string | null; code: string | null; at: number | null; byType: string | null; byId: string | null; team: string | null };

async function decisionsOf(world: DomainWorld, caseIds: string[]): Promise<Record<string, Decision>> {
  const rows = await world.store.db.select({ id: cases.id, ...DECISION }).from(cases).where(inArray(cases.id, caseIds));
  return Object.fromEntries(rows.map(({ id, ...d }) => [id, d]));
}

/** A report resolved with an action, appealed, and the appeal overturned (a CLOSED case). */
async function overturned(world: DomainWorld): Promise<{ caseId: string }> {
  const filed = await world.fileReport();
  const action = await resolveReportWithAction(world.ctx, { reportId: filed.reportId, resolution: { code: "ACCOUNT_LEVEL_ACTION" }, action: { kind: "warning" } });
  world.clock.advance(60_000);
  const appeal = await fileAppeal(world.platform, { projectId: action.projectId, actionId: action.id, text: "Not me" });
  world.clock.advance(60_000);
  await decideAppeal(world.ctx, { appealId: appeal.id, decision: "overturn" });
  return { caseId: filed.caseId };
}

/**
 * Takes the database back to how it was before case_decisions (its triggers and functions
 * dropped), so that the migration's own SQL can be run on it again. The cases are made on a
 * database migrated to the end, by the domain code as it is now, which reads the newest schema
 * (a migration after case_decisions that the decision path reads would fail on one migrated only
 * so far).
 */
const UNDO_CASE_DECISIONS =
  TEST_ENGINE === "postgres"
    ? [
        'DROP TRIGGER IF EXISTS "cases_decision_fill" ON "cases"',
        'DROP TRIGGER IF EXISTS "reports_escalation_fill" ON "reports"',
        "DROP FUNCTION IF EXISTS flagstaff_case_decision_fill()",
        "DROP FUNCTION IF EXISTS flagstaff_case_escalation_fill()",
      ]
    : ["DROP TRIGGER IF EXISTS `cases_decision_fill`", "DROP TRIGGER IF EXISTS `reports_escalation_fill`"];
async function runSql(world: DomainWorld, statements: readonly string[]): Promise<void> {
  const db = world.store.writer as unknown as { run?: (q: unknown) => unknown; execute?: (q: unknown) => Promise<unknown> };
  for (const statement of statements) {
    if (TEST_ENGINE === "postgres") await db.execute!(sql.raw(statement));
    else db.run!(sql.raw(statement));
  }
}

describe("the backfill", () => {
  let world: DomainWorld;
  beforeAll(async () => {
    expect(before).toBeGreaterThan(0);
    world = await domainWorld();
  });
  afterAll(() => world.close());

  test("gives every decided case the decision, code, time and decider its records hold, as the workflow engine records them", async () => {
    const made: string[] = [];
    for (const status of ["RESOLVED", "DISMISSED", "APPEALED", "CLOSED"] as const) {
      world.clock.advance(3_600_000);
      made.push((await world.reportIn(status)).caseId);
    }
    world.clock.advance(3_600_000);
    made.push((await overturned(world)).caseId);
    const recorded = await decisionsOf(world, made);
    expect(Object.values(recorded).map((d) => d.decision)).toEqual(["resolve", "dismiss", "resolve", "uphold", "overturn"]);

    // What 0012_moderators_day (PostgreSQL 0002) left of the same cases, and a case an older
    // instance decided after it ran: no decision at all.
    const [resolved, dismissed, appealed, upheld, lost] = made as [string, string, string, string, string];
    await runSql(world, UNDO_CASE_DECISIONS);
    await world.store.transaction(async () => {
      const asIfBackfilled = (id: string, decision: string | null) =>
        world.store.db.update(cases).set({ decision, decisionCode: null, decidedByType: null, decidedById: null }).where(eq(cases.id, id));
      await asIfBackfilled(resolved, "resolve");
      await asIfBackfilled(dismissed, "dismiss");
      await asIfBackfilled(appealed, null);
      await asIfBackfilled(upheld, null);
      await world.store.db.update(cases).set({ decision: null, decisionCode: null, decidedAt: null, decidedByType: null, decidedById: null }).where(eq(cases.id, lost));
    });

    // What migrating did: the migration's SQL, run again.
    await runSql(world, migrations[before]!.sql.split("--> statement-breakpoint"));
    expect(await decisionsOf(world, made)).toEqual(recorded);
  });
});

describe("a case decided by a Flagstaff that records no decisions", () => {
  let world: DomainWorld;
  beforeAll(async () => {
    world = await domainWorld();
  });
  afterAll(() => world.close());

  const admin = () => ({ type: "user", id: world.ctx.actor.id });
  const stamp = (extra: Record<string, unknown>) => JSON.stringify({ ...extra, note: null, at: new Date(world.clock.now()).toISOString(), by: admin() });

  /** What a Flagstaff before 0.2.0's decision columns writes: the reports, then the case's status. */
  async function oldDecision(caseId: string, to: string, record: Partial<typeof reports.$inferInsert>): Promise<void> {
    const now = world.clock.now();
    await world.store.transaction(async () => {
      await world.store.db.update(reports).set({ status: to, updatedAt: now, ...record }).where(eq(reports.caseId, caseId));
      await world.store.db.update(cases).set({ status: to, isOpen: 0, updatedAt: now }).where(eq(cases.id, caseId));
    });
  }

  test("resolved, dismissed, appealed and upheld: each gets the decision the workflow engine would have recorded", async () => {
    world.clock.advance(3_600_000);
    const a = await world.reportIn("IN_REVIEW");
    world.clock.advance(60_000);
    await oldDecision(a.caseId, "RESOLVED", { resolution: stamp({ code: "SPAM_CONFIRMED" }) });
    const resolvedAt = world.clock.now();
    expect((await decisionsOf(world, [a.caseId]))[a.caseId]).toEqual({ decision: "resolve", code: "SPAM_CONFIRMED", at: resolvedAt, byType: "user", byId: world.ctx.actor.id, team: null });

    const b = await world.fileReport();
    world.clock.advance(60_000);
    await oldDecision(b.caseId, "DISMISSED", { dismissal: stamp({ reason: "duplicate" }) });
    expect((await decisionsOf(world, [b.caseId]))[b.caseId]).toMatchObject({ decision: "dismiss", code: "duplicate", at: world.clock.now() });

    // Appealed: the resolution stands recorded; then upheld through the old path.
    world.clock.advance(60_000);
    await oldDecision(a.caseId, "APPEALED", {});
    expect((await decisionsOf(world, [a.caseId]))[a.caseId]).toMatchObject({ decision: "resolve", code: "SPAM_CONFIRMED", at: resolvedAt });
    world.clock.advance(60_000);
    const appealId = crypto.randomUUID();
    const decidedAt = world.clock.now();
    await world.store.transaction(async () => {
      const [report] = await world.store.db.select().from(reports).where(eq(reports.caseId, a.caseId));
      const action = await world.warn(report!.id);
      await world.store.db.insert(appeals).values({
        id: appealId, orgId: world.orgId, actionId: action.actionId, reportId: report!.id, caseId: a.caseId, text: "no",
        status: "upheld", decidedByType: "user", decidedById: world.ctx.actor.id, decisionNote: null, createdAt: decidedAt - 1000, decidedAt,
      });
    });
    await oldDecision(a.caseId, "CLOSED", {});
    expect((await decisionsOf(world, [a.caseId]))[a.caseId]).toEqual({ decision: "uphold", code: "SPAM_CONFIRMED", at: decidedAt, byType: "user", byId: world.ctx.actor.id, team: null });
  });

  test("an escalation it applies marks the case as escalated to its team", async () => {
    const filed = await world.fileReport();
    world.clock.advance(60_000);
    const now = world.clock.now();
    await world.store.transaction(async () => {
      await world.store.db.update(reports).set({ status: "IN_REVIEW", updatedAt: now, escalation: stamp({ team: "legal", applied: true }) }).where(eq(reports.caseId, filed.caseId));
      await world.store.db.update(cases).set({ status: "IN_REVIEW", isOpen: 1, updatedAt: now }).where(eq(cases.id, filed.caseId));
    });
    expect((await decisionsOf(world, [filed.caseId]))[filed.caseId]).toMatchObject({ team: "legal", decision: null });
    expect((await world.caseOf(filed.caseId)).escalatedAt).toBe(now);
    // Then decided the old way: the decision ends the escalation, as the engine's do.
    world.clock.advance(60_000);
    await oldDecision(filed.caseId, "DISMISSED", { dismissal: stamp({ reason: "out_of_scope" }) });
    expect((await decisionsOf(world, [filed.caseId]))[filed.caseId]).toMatchObject({ team: null, decision: "dismiss", code: "out_of_scope" });
  });

  test("the workflow engine's own decisions are left as it wrote them", async () => {
    const made: string[] = [];
    for (const status of ["RESOLVED", "DISMISSED", "APPEALED", "CLOSED"] as const) made.push((await world.reportIn(status)).caseId);
    made.push((await overturned(world)).caseId);
    const rows = await decisionsOf(world, made);
    // The clock stood still: every decision of the engine has the same time as the one before it.
    expect(made.map((id) => rows[id]!.decision)).toEqual(["resolve", "dismiss", "resolve", "uphold", "overturn"]);
    for (const id of made) expect(rows[id]).toMatchObject({ byType: "user", byId: world.ctx.actor.id });
    expect(made.map((id) => rows[id]!.code)).toEqual(["SPAM_CONFIRMED", "other", "ACCOUNT_LEVEL_ACTION", "ACCOUNT_LEVEL_ACTION", "ACCOUNT_LEVEL_ACTION"]);
  });
});
