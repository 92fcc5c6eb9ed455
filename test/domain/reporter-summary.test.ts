/**
 * A case's reporter summary (src/domain/cases/reporter-summary.ts), in process on a fake clock:
 * reports, anonymous ones and those of the last hour; distinct reporters, new (no report before
 * the case opened), trusted and muted ones; the accuracy bands, adding up to the reporters; the
 * reasons' counts, most first; a case of another organization, or in a queue the caller may not
 * work, is not found.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { saveIdentity } from "../../src/domain/identities/identities.ts";
import { updateReporter } from "../../src/domain/identities/reporters.ts";
import { reporterSummary } from "../../src/domain/cases/reporter-summary.ts";
import { createQueue, moveCaseToQueue } from "../../src/domain/review/queues.ts";
import { createUser } from "../../src/domain/accounts/users.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;
beforeAll(async () => {
  world = await domainWorld();
});
afterAll(async () => {
  await world.close();
});

let n = 0;
const person = (p: string) => ({ type: "user", externalId: `${p}-${++n}-${Math.random().toString(36).slice(2, 8)}` });
const MINUTE = 60_000;

describe("the reporter summary of a case", () => {
  test("counts reports, reporters and their standing, accuracy bands and reasons over the whole case", async () => {
    const [trusted, muted, upheld3, dismissed3, once, mixed, fresh] = ["trusted", "muted", "upheld", "dismissed", "once", "mixed", "fresh"].map(person);
    // Histories filed before the case: upheld 3 of 3, upheld 0 of 3, 0 of 1, 2 of 4.
    for (let i = 0; i < 3; i++) await world.reportIn("RESOLVED", { reporter: upheld3! });
    for (let i = 0; i < 3; i++) await world.reportIn("DISMISSED", { reporter: dismissed3! });
    await world.reportIn("DISMISSED", { reporter: once! });
    for (const s of ["RESOLVED", "RESOLVED", "DISMISSED", "DISMISSED"] as const) await world.reportIn(s, { reporter: mixed! });
    for (const who of [trusted!, muted!]) await saveIdentity(world.ctx, { projectId: world.project.id, ...who, now: world.clock.now() });
    await updateReporter(world.ctx, { projectId: world.project.id, ...trusted!, patch: { trustedFlagger: true } });

    world.clock.advance(MINUTE);
    const post = { contentType: "post", contentExternalId: person("post").externalId };
    const first = await world.fileReport({ reporter: fresh!, target: post, reasons: ["harassment"] });
    const { caseId } = first;
    await world.fileReport({ reporter: trusted!, target: post, reasons: ["harassment", "spam"] });
    await world.fileReport({ reporter: trusted!, target: post, reasons: ["harassment"] });
    await world.fileReport({ reporter: upheld3!, target: post, reasons: ["spam"] });
    await world.fileReport({ reporter: null, target: post, reasons: ["threats"] });
    world.clock.advance(2 * 60 * MINUTE);
    // Muted after the case opened: counted as muted now, and new (no report before the case).
    await updateReporter(world.ctx, { projectId: world.project.id, ...muted!, patch: { mutedUntil: world.clock.now() + 86_400_000, muteReason: "brigading" } });
    for (const who of [muted!, dismissed3!, once!, mixed!, null]) await world.fileReport({ reporter: who, target: post, reasons: ["harassment"] });
    // A report of the same reporter elsewhere after the case opened does not make it old here.
    await world.fileReport({ reporter: fresh!, reasons: ["spam"] });

    const summary = await reporterSummary(world.ctx, { caseId });
    expect(summary).toEqual({
      caseId,
      reports: 10,
      anonymousReports: 2,
      reportsLastHour: 5,
      distinctReporters: 7,
      newReporters: 3, // fresh, trusted, muted
      trustedReporters: 1,
      mutedReporters: 1,
      accuracy: { noDecided: 3, fewDecided: 1, mostlyUpheld: 1, mixed: 1, mostlyNotUpheld: 1 },
      reasons: [
        { reason: "harassment", reports: 8 },
        { reason: "spam", reports: 2 },
        { reason: "threats", reports: 1 },
      ],
      moreReasons: 0,
    });
    // The muted reporter's report was dismissed unseen: it still counts; the case is the same one.
    expect((await world.caseOf(caseId)).reportCount).toBe(10);
  });

  test("a case of one anonymous report; a case of another organization and one in a queue the caller may not work are not found", async () => {
    const alone = await world.fileReport({ reporter: null });
    expect(await reporterSummary(world.ctx, { caseId: alone.caseId })).toMatchObject({
      reports: 1, anonymousReports: 1, distinctReporters: 0, newReporters: 0,
      accuracy: { noDecided: 0, fewDecided: 0, mostlyUpheld: 0, mixed: 0, mostlyNotUpheld: 0 },
      reasons: [{ reason: "spam", reports: 1 }],
    });

    const other = await world.secondOrganization({ name: `Other ${++n}` });
    const theirs = await other.fileReport({ reporter: person("theirs") });
    expect((await refusal(reporterSummary(world.ctx, { caseId: theirs.caseId }))).http).toBe(404);

    const restricted = await createQueue(world.ctx, { name: `Restricted ${++n}`, access: { users: [], roles: ["admin"] } });
    await moveCaseToQueue(world.ctx, { caseId: alone.caseId, queueId: restricted.id });
    const moderator = await createUser(world.ctx, { email: `mod-${++n}@example.com`, passwordHash: "unused", role: "moderator" });
    const asModerator = world.as({ type: "user", id: moderator.id });
    expect((await refusal(reporterSummary(asModerator, { caseId: alone.caseId }))).http).toBe(404);
    expect((await reporterSummary(world.ctx, { caseId: alone.caseId })).reports).toBe(1);
  });
});
