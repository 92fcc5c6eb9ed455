/**
 * What media hashes sent with a report cost PostgreSQL, counted by scripts/pg-proxy.ts between
 * the store and the database (a round trip: a client→server flight that follows a server→client
 * one). The banks' version is read in the round trip of the report's first lookups and the media
 * rows (and a possible match's job) are written with the COMMIT (case-media.ts), so a report
 * with media takes as many round trips as one without: on a database on another host, each one
 * is a report's connection held longer (docs/operations.md, "Distance").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import type { PgProxy } from "../scripts/pg-proxy.ts";
import { caseMedia, jobs } from "../src/db/schema.ts";
import type { Store } from "../src/db/store.ts";
import { requireProject } from "../src/domain/accounts/projects.ts";
import { addEntry, createBank } from "../src/domain/banks/banks.ts";
import { systemActor } from "../src/domain/core/audit.ts";
import { domainContext, type DomainContext } from "../src/domain/core/context.ts";
import { projectIndex } from "../src/domain/intake/signal-index.ts";
import { createReport } from "../src/domain/intake/reports.ts";
import type { MediaInput } from "../src/domain/views/media-bank.ts";
import { JOB_KIND } from "../src/domain/views/job.ts";
import { fakeClock } from "./helpers/builders.ts";
import { organizationThroughProxy, TEST_PG_URL } from "./helpers/pg.ts";

const hex = (digits: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(digits / 2))).toString("hex");
/** A PDQ hash drawn at random: about 128 bits from any other, far beyond a bank's distance. */
const randomPdq = () => hex(64);

describe.skipIf(!TEST_PG_URL)("round trips of a report with media hashes (PostgreSQL)", () => {
  let proxy: PgProxy;
  let store: Store;
  let close: (() => Promise<void>) | undefined;
  let admin: DomainContext;
  let platform: DomainContext;
  let projectId: string;
  let bankId: string;
  const banked = { sha256: hex(64), pdq: randomPdq() };
  const clock = fakeClock(Date.now());
  let serial = 0;

  beforeAll(async () => {
    const org = await organizationThroughProxy("Media trips", clock);
    ({ store, proxy, projectId, close } = org);
    admin = domainContext(store, clock, systemActor, org.orgId);
    platform = domainContext(store, clock, { type: "api_key", id: null }, org.orgId);
    bankId = (await createBank(admin, { projectId, name: "Shared list" })).id;
    await addEntry(admin, { bankId, signalType: "sha256", value: banked.sha256 });
    await addEntry(admin, { bankId, signalType: "pdq", value: banked.pdq });
    // Held by this instance at the banks' current version, as the media job leaves it.
    await projectIndex(admin, projectId);
  });
  afterAll(async () => {
    await close?.();
  });

  /** Files a report on a new target, with these media; answers its round trips and its id. */
  async function fileReport(media?: MediaInput[]): Promise<{ trips: number; reportId: string }> {
    const project = await requireProject(platform, projectId);
    const n = ++serial;
    proxy.resetStats();
    const created = await createReport(platform, {
      project,
      reasonNames: ["harassment"],
      subject: { type: "user", externalId: `media-trips-${n}` },
      target: { contentType: "post", contentExternalId: `media-trips-post-${n}`, content: "a picture" },
      description: null,
      automated: false,
      media,
    });
    return { trips: proxy.stats().roundTrips, reportId: created.report.id };
  }

  /**
   * The fewest round trips of three reports alike (and the last one's id): a statement's first
   * use on one of the pool's connections costs a round trip more (Parse), and which connection a
   * transaction takes is the pool's choice; a round trip that media add shows in all three.
   */
  async function fewest(file: () => Promise<{ trips: number; reportId: string }>): Promise<{ trips: number; reportId: string }> {
    const tries = [await file(), await file(), await file()];
    return { trips: Math.min(...tries.map((t) => t.trips)), reportId: tries[2]!.reportId };
  }

  const unknownMedia = (): MediaInput => ({ sha256: hex(64), md5: hex(32), pdq: randomPdq(), pdqQuality: 90 });
  const mediaOf = async (reportId: string) => store.db.select().from(caseMedia).where(eq(caseMedia.reportId, reportId));
  const jobsOf = async (mediaId: string) => store.db.select().from(jobs).where(and(eq(jobs.kind, JOB_KIND.mediaMatch), eq(jobs.entityId, mediaId)));

  test("media hashes add no round trip to a report, whether they match nothing, match a banked hash, or meet banks changed since the index was built", async () => {
    // Warm: the pool's connections are open and the statements prepared on most of them.
    for (let i = 0; i < 12; i++) {
      await fileReport();
      await fileReport([unknownMedia()]);
      await fileReport([{ sha256: banked.sha256 }]);
    }

    const without = await fewest(() => fileReport());
    const unknown = await fewest(() => fileReport([unknownMedia(), unknownMedia()]));
    const matching = await fewest(() => fileReport([{ sha256: banked.sha256.toUpperCase(), pdq: banked.pdq, pdqQuality: 90 }]));
    console.log(`round trips of one report: ${without.trips} without media, ${unknown.trips} with two media items matching nothing, ${matching.trips} with one matching a banked hash`);
    expect(unknown.trips).toBe(without.trips);
    expect(matching.trips).toBe(without.trips);

    // Matched nothing: done at intake, no job.
    const done = await mediaOf(unknown.reportId);
    expect(done).toHaveLength(2);
    for (const m of done) {
      expect(m.matchedAt).not.toBeNull();
      expect(await jobsOf(m.id)).toHaveLength(0);
    }
    // A possible match: left to the media job, which records it and acts.
    const [possible] = await mediaOf(matching.reportId);
    expect(possible!.sha256).toBe(banked.sha256);
    expect(possible!.matchedAt).toBeNull();
    expect(await jobsOf(possible!.id)).toHaveLength(1);

    // The banks change (here, or on another instance): the held index is behind, so intake
    // leaves the media to the job, still in the same round trips.
    await addEntry(admin, { bankId, signalType: "md5", value: hex(32) });
    const behind = await fewest(() => fileReport([unknownMedia()]));
    expect(behind.trips).toBe(without.trips);
    const [waiting] = await mediaOf(behind.reportId);
    expect(waiting!.matchedAt).toBeNull();
    expect(await jobsOf(waiting!.id)).toHaveLength(1);
  });
});
