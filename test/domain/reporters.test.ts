/**
 * The reporter accuracy rule (src/domain/identities/reporters.ts), in process: upheld ÷ decided with a
 * uniform prior, what counts as upheld (resolved, or closed with the resolution standing) and
 * as decided (resolved, dismissed, closed; a pending appeal and the system's dismissals of a
 * muted reporter's reports do not count), and a mute that ends on its time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, inArray, sql, type SQL } from "drizzle-orm";
import { identities } from "../../src/db/schema.ts";
import { decideAppeal } from "../../src/domain/enforcement/appeals.ts";
import { decideInBulk, undoBulkDecision } from "../../src/domain/review/bulk.ts";
import { decideOnReport } from "../../src/domain/review/decisions.ts";
import { transaction } from "../../src/domain/core/context.ts";
import { countTallies, recountCaseReporters } from "../../src/domain/identities/reporter-tally.ts";
import { getReporter, isMuted, reporterAccuracy, updateReporter } from "../../src/domain/identities/reporters.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;
beforeAll(async () => {
  world = await domainWorld();
});
afterAll(() => world.close());

let n = 0;
const person = () => ({ type: "user", externalId: `reporter-${++n}` });
const key = (who: { type: string; externalId: string }) => ({ projectId: world.project.id, type: who.type, externalId: who.externalId });

describe("reporterAccuracy", () => {
  test("(upheld + 1) / (decided + 2): no decision is 1/2, one report is never 0 % or 100 %", () => {
    expect(reporterAccuracy({ upheld: 0, decided: 0 })).toBe(0.5);
    expect(reporterAccuracy({ upheld: 1, decided: 1 })).toBeCloseTo(2 / 3, 12);
    expect(reporterAccuracy({ upheld: 0, decided: 1 })).toBeCloseTo(1 / 3, 12);
    expect(reporterAccuracy({ upheld: 9, decided: 10 })).toBeCloseTo(10 / 12, 12);
    expect(reporterAccuracy({ upheld: 0, decided: 1000 })).toBeGreaterThan(0);
    expect(reporterAccuracy({ upheld: 1000, decided: 1000 })).toBeLessThan(1);
  });
});

describe("the tally of a reporter's reports", () => {
  test("resolved and upheld-after-appeal count as upheld; dismissed and overturned as decided only; open and appealed not at all", async () => {
    const who = person();
    const as = { reporter: who };
    await world.reportIn("RESOLVED", as); // upheld
    await world.reportIn("DISMISSED", as); // decided
    await world.reportIn("CLOSED", as); // an appeal upheld the resolution: upheld
    await world.reportIn("APPEALED", as); // pending: neither
    await world.fileReport(as); // open: neither
    const overturned = await world.reportIn("APPEALED", as);
    await decideAppeal(world.ctx, { appealId: overturned.appealId!, decision: "overturn" }); // decided, not upheld
    const { identity, reporter } = await getReporter(world.ctx, key(who));
    expect((await world.report(overturned.reportId)).status).toBe("CLOSED");
    const tally = (await countTallies(world.ctx, [identity.id])).get(identity.id);
    expect(tally).toEqual({ upheld: 2, decided: 4 });
    expect(reporter.reportsDecided).toBe(4);
    expect(reporter.accuracy).toBeCloseTo(3 / 6, 12);
  });

  test("the tally each identity keeps follows every move: decisions, a bulk decision and its undo, an escalation out of a closed case", async () => {
    const [a, b] = [person(), person()];
    const kept = async (who: { type: string; externalId: string }) => {
      const { identity, reporter } = await getReporter(world.ctx, key(who));
      // What the identity keeps is what its reports count to, at every step.
      const counted = (await countTallies(world.ctx, [identity.id])).get(identity.id) ?? { upheld: 0, decided: 0 };
      expect(reporter.reportsDecided).toBe(counted.decided);
      expect(reporter.accuracy).toBeCloseTo(reporterAccuracy(counted), 12);
      return counted;
    };
    // Two reporters on one target (one case), and a case of a's own.
    const target = { contentType: "post", contentExternalId: `tally-${++n}` };
    const first = await world.fileReport({ target, reporter: a });
    await world.fileReport({ target, reporter: b });
    const own = await world.fileReport({ reporter: a });
    expect(await kept(a)).toEqual({ upheld: 0, decided: 0 });

    // One decision moves the case's reports together: both reporters are recounted.
    await decideOnReport(world.ctx, { reportId: first.reportId, decision: { action: "resolve", code: "SPAM_CONFIRMED" } });
    expect(await kept(a)).toEqual({ upheld: 1, decided: 1 });
    expect(await kept(b)).toEqual({ upheld: 1, decided: 1 });

    // A bulk dismissal counts, and its undo takes it back.
    const bulk = await decideInBulk(world.ctx, { caseIds: [own.caseId], decision: { action: "dismiss", reason: "false_positive" }, othersClaims: "skip" });
    expect(await kept(a)).toEqual({ upheld: 1, decided: 2 });
    await undoBulkDecision(world.ctx, { bulkId: bulk.bulkId! });
    expect(await kept(a)).toEqual({ upheld: 1, decided: 1 });

    // Dismissed, then escalated back into review out of its closed case: decided, then not.
    await decideOnReport(world.ctx, { reportId: own.reportId, decision: { action: "dismiss", reason: "not_actionable" } });
    expect(await kept(a)).toEqual({ upheld: 1, decided: 2 });
    await decideOnReport(world.ctx, { reportId: own.reportId, decision: { action: "escalate", team: "legal" } });
    expect((await world.report(own.reportId)).status).toBe("IN_REVIEW");
    expect(await kept(a)).toEqual({ upheld: 1, decided: 1 });
    expect(await kept(b)).toEqual({ upheld: 1, decided: 1 });
  });

  test("a case of more reporters than a statement takes is recounted in parts (a pile-on's), to the same tallies", async () => {
    const who = [person(), person(), person(), person(), person()];
    const target = { contentType: "post", contentExternalId: `tally-parts-${++n}` };
    const filed: { reportId: string; caseId: string }[] = [];
    for (const w of who) filed.push(await world.fileReport({ target, reporter: w }));
    // Each has a decided report elsewhere too: the recount counts all of a reporter's reports.
    await world.reportIn("DISMISSED", { reporter: who[0]! });
    await world.reportIn("RESOLVED", { reporter: who[4]! });
    await decideOnReport(world.ctx, { reportId: filed[0]!.reportId, decision: { action: "resolve", code: "SPAM_CONFIRMED" } });
    const ids = await Promise.all(who.map(async (w) => (await getReporter(world.ctx, key(w))).identity.id));
    // Nothing kept, then recounted two reporters a statement: 2 + 2 + 1.
    await transaction(world.ctx, async () => {
      await world.ctx.db.update(identities).set({ reportsUpheld: 0, reportsDecided: 0 }).where(inArray(identities.id, ids));
      await recountCaseReporters(world.ctx, { caseId: filed[0]!.caseId, reports: who.length, perStatement: 2 });
    });
    const counted = await countTallies(world.ctx, ids);
    const kept = await world.ctx.db.select({ id: identities.id, upheld: identities.reportsUpheld, decided: identities.reportsDecided }).from(identities).where(inArray(identities.id, ids));
    expect(kept.length).toBe(who.length);
    for (const k of kept) expect({ upheld: k.upheld, decided: k.decided }).toEqual(counted.get(k.id)!);
    expect(counted.get(ids[0]!)).toEqual({ upheld: 1, decided: 2 });
    expect(counted.get(ids[4]!)).toEqual({ upheld: 2, decided: 2 });
  });

  test("the migration that brought the kept tallies counts an installation's past decisions as the domain does", async () => {
    const who = person();
    await world.reportIn("RESOLVED", { reporter: who });
    await world.reportIn("DISMISSED", { reporter: who });
    const overturned = await world.reportIn("APPEALED", { reporter: who });
    await decideAppeal(world.ctx, { appealId: overturned.appealId!, decision: "overturn" });
    const { identity } = await getReporter(world.ctx, key(who));
    // As before the migration: nothing kept. Then its last statement, the backfill.
    await transaction(world.ctx, () => world.ctx.db.update(identities).set({ reportsUpheld: 0, reportsDecided: 0 }).where(eq(identities.id, identity.id)));
    const file = world.store.engine === "sqlite" ? "drizzle/0018_reporter_tally.sql" : "drizzle-pg/0008_reporter_tally.sql";
    const backfill = sql.raw((await Bun.file(new URL(`../../${file}`, import.meta.url)).text()).split("--> statement-breakpoint").at(-1)!);
    if (world.store.engine === "sqlite") world.store.writer.run(backfill);
    else await (world.store.db as unknown as { execute(q: SQL): Promise<unknown> }).execute(backfill);
    expect((await getReporter(world.ctx, key(who))).reporter).toMatchObject({ reportsDecided: 3, accuracy: 2 / 5 });
    expect((await countTallies(world.ctx, [identity.id])).get(identity.id)).toEqual({ upheld: 1, decided: 3 });
  });

  test("a muted reporter's reports, dismissed by the system, are no decision; the mute ends on its time", async () => {
    const who = person();
    await world.reportIn("RESOLVED", { reporter: who });
    const hour = 3_600_000;
    const muted = await updateReporter(world.ctx, { ...key(who), patch: { mutedUntil: world.clock.now() + hour, muteReason: "floods" } });
    expect(muted.reporter.muteReason).toBe("floods");
    const filed = await world.fileReport({ reporter: who });
    const row = await world.report(filed.reportId);
    expect(row.status).toBe("DISMISSED");
    expect(JSON.parse(row.dismissal!)).toMatchObject({ reason: "not_actionable", by: { type: "system", id: null } });
    expect((await world.caseOf(filed.caseId)).isOpen).toBe(0);
    const after = await getReporter(world.ctx, key(who));
    expect(after.reporter).toMatchObject({ reportsDecided: 1, accuracy: 2 / 3 });

    expect(isMuted({ mutedUntil: world.clock.now() + hour }, world.clock.now())).toBe(true);
    world.clock.advance(hour + 1);
    expect((await getReporter(world.ctx, key(who))).reporter.mutedUntil).toBeNull();
    const later = await world.fileReport({ reporter: who });
    expect((await world.report(later.reportId)).status).toBe("OPEN");
  });

  test("a mute must end in the future; a reason needs a mute", async () => {
    const who = person();
    await world.fileReport({ reporter: who });
    expect((await refusal(updateReporter(world.ctx, { ...key(who), patch: { mutedUntil: world.clock.now() - 1 } }))).http).toBe(400);
    expect((await refusal(updateReporter(world.ctx, { ...key(who), patch: { muteReason: "why" } }))).http).toBe(400);
    expect((await refusal(getReporter(world.ctx, key(person())))).http).toBe(404);
  });
});

describe("a trusted flagger's report on intake", () => {
  test("records the mark on the report and marks the case it opens or joins; an ordinary report does not", async () => {
    const flagger = person();
    const plain = await world.fileReport({ reporter: flagger });
    expect((await world.report(plain.reportId)).reporterTrusted).toBe(0);
    expect((await world.caseOf(plain.caseId)).trustedFlagged).toBe(0);
    await updateReporter(world.ctx, { ...key(flagger), patch: { trustedFlagger: true } });
    const target = { contentType: "post", contentExternalId: `joined-${++n}` };
    const opened = await world.fileReport({ target, reporter: person() });
    const joined = await world.fileReport({ target, reporter: flagger });
    expect(joined.caseId).toBe(opened.caseId);
    expect((await world.report(joined.reportId)).reporterTrusted).toBe(1);
    expect((await world.report(opened.reportId)).reporterTrusted).toBe(0);
    expect((await world.caseOf(opened.caseId)).trustedFlagged).toBe(1);
    // Muted, the mark carries no weight: the report is dismissed and marks nothing.
    await updateReporter(world.ctx, { ...key(flagger), patch: { mutedUntil: world.clock.now() + 60_000 } });
    const muted = await world.fileReport({ reporter: flagger });
    expect((await world.report(muted.reportId)).reporterTrusted).toBe(0);
    expect((await world.caseOf(muted.caseId)).trustedFlagged).toBe(0);
  });
});
