/**
 * The matching rules of media banks as arithmetic (src/domain/banks/matching.ts, docs/media.md):
 * a PDQ entry matches at its bank's distance or less and only from its quality floor; a negative
 * bank suppresses the others' matches of the same media; an entry is quarantined past its count;
 * and a second instance's index (a store of its own, on the same data) sees an entry another
 * added at its next match.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { caseMedia, jobs } from "../../src/db/schema.ts";
import { addEntry, createBank, updateBank } from "../../src/domain/banks/banks.ts";
import { matchMedia } from "../../src/domain/banks/matching.ts";
import { buildIndex, hitsOf, projectIndex, type ProjectIndex } from "../../src/domain/intake/signal-index.ts";
import { mediaBankEntries } from "../../src/db/schema.ts";
import type { SignalType } from "../../src/domain/views/media-bank.ts";
import type { DomainContext } from "../../src/domain/core/context.ts";
import { createReport } from "../../src/domain/intake/reports.ts";
import { hammingDistance } from "../../src/domain/media/pdq.ts";
import { JOB_KIND } from "../../src/domain/views/job.ts";
import type { MediaInput } from "../../src/domain/views/media-bank.ts";
import { domainWorld, type DomainWorld } from "../helpers/builders.ts";

let w: DomainWorld;
beforeAll(async () => {
  w = await domainWorld();
});
afterAll(async () => {
  await w.close();
});

const sha = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");
/** A PDQ hash `bits` bits from `base` (its first bits flipped). */
function flipped(base: string, bits: number): string {
  const digits = base.split("").map((d) => parseInt(d, 16));
  for (let i = 0; i < bits; i++) digits[Math.floor(i / 4)]! ^= 8 >> i % 4;
  return digits.map((d) => d.toString(16)).join("");
}
const BASE = "d8f8f0cee0f4a84f0637022a078f67f0b36e2ed596621e1d33e6339c4e9c9b22";

/** Files a report with one media item and matches it in `ctx`'s store (as the media job does). */
async function matchOne(media: MediaInput, ctx: DomainContext = w.platform) {
  const created = await createReport(w.platform, { project: w.project, subject: { type: "user", externalId: `u-${crypto.randomUUID()}` }, reasonNames: ["spam"], automated: false, media: [media] });
  const [row] = await w.platform.db.select().from(caseMedia).where(eq(caseMedia.reportId, created.report.id));
  return matchMedia({ ...ctx, actor: w.platform.actor }, row!);
}

describe("the matching rules", () => {
  test("PDQ: at the bank's distance or less, from its quality floor; a change of the bank is seen at the next match", async () => {
    const bank = await createBank(w.ctx, { projectId: w.project.id, name: `PDQ ${crypto.randomUUID()}`, pdqDistance: 10, qualityFloor: 60 });
    await addEntry(w.ctx, { bankId: bank.id, signalType: "pdq", value: BASE });
    expect(hammingDistance(BASE, flipped(BASE, 10))).toBe(10);
    expect(await matchOne({ pdq: flipped(BASE, 10), pdqQuality: 60 })).toHaveLength(1);
    expect(await matchOne({ pdq: flipped(BASE, 11), pdqQuality: 100 })).toHaveLength(0);
    expect(await matchOne({ pdq: flipped(BASE, 3), pdqQuality: 59 })).toHaveLength(0);
    await updateBank(w.ctx, { bankId: bank.id, pdqDistance: 11 });
    expect(await matchOne({ pdq: flipped(BASE, 11), pdqQuality: 100 })).toHaveLength(1);
    await updateBank(w.ctx, { bankId: bank.id, enabled: false });
    expect(await matchOne({ pdq: BASE, pdqQuality: 100 })).toHaveLength(0);
  });

  test("a negative bank suppresses the other banks' matches of the same media; quarantine past the count", async () => {
    const digest = sha(`neg ${crypto.randomUUID()}`);
    const positive = await createBank(w.ctx, { projectId: w.project.id, name: `Pos ${crypto.randomUUID()}`, action: { type: "tag", tag: "x" }, quarantine: { count: 2, windowSeconds: 600 } });
    await addEntry(w.ctx, { bankId: positive.id, signalType: "sha256", value: digest });
    // Two matches act; the third crosses the count: recorded, quarantined, no action; the fourth finds nothing.
    expect((await matchOne({ sha256: digest })).map((m) => m.acted)).toEqual([true]);
    expect((await matchOne({ sha256: digest })).map((m) => m.acted)).toEqual([true]);
    expect((await matchOne({ sha256: digest })).map((m) => m.acted)).toEqual([false]);
    expect(await matchOne({ sha256: digest })).toEqual([]);

    const other = sha(`neg2 ${crypto.randomUUID()}`);
    const listed = await createBank(w.ctx, { projectId: w.project.id, name: `Listed ${crypto.randomUUID()}` });
    const negative = await createBank(w.ctx, { projectId: w.project.id, name: `Neg ${crypto.randomUUID()}`, negative: true });
    await addEntry(w.ctx, { bankId: listed.id, signalType: "sha256", value: other });
    await addEntry(w.ctx, { bankId: negative.id, signalType: "sha256", value: other });
    const both = await matchOne({ sha256: other });
    expect(both).toHaveLength(2);
    expect(both.every((m) => !m.acted)).toBe(true);
  });

  test("a second instance (a store of its own on the same data) matches an entry the first added, from its next match", async () => {
    const store = w.anotherInstance();
    const second: DomainContext = { ...w.platform, store, db: store.db };
    const bank = await createBank(w.ctx, { projectId: w.project.id, name: `Shared ${crypto.randomUUID()}` });
    const first = sha(`first ${crypto.randomUUID()}`);
    const later = sha(`later ${crypto.randomUUID()}`);
    await addEntry(w.ctx, { bankId: bank.id, signalType: "sha256", value: first });
    // The second instance builds its index now (it holds `first`, not `later`).
    expect(await matchOne({ sha256: first }, second)).toHaveLength(1);
    expect(await matchOne({ sha256: later }, second)).toHaveLength(0);
    await addEntry(w.ctx, { bankId: bank.id, signalType: "sha256", value: later });
    expect(await matchOne({ sha256: later }, second)).toHaveLength(1);
  });

  test("hashes sent with a report are looked up at intake when the index is held: a miss is done there, a possible match or a changed bank goes to the job", async () => {
    const bank = await createBank(w.ctx, { projectId: w.project.id, name: `Intake ${crypto.randomUUID()}` });
    const banked = sha(`banked ${crypto.randomUUID()}`);
    await addEntry(w.ctx, { bankId: bank.id, signalType: "sha256", value: banked });
    /** Files a report with one media item; answers its row and whether a media job was enqueued for it. */
    const file = async (media: MediaInput) => {
      const created = await createReport(w.platform, { project: w.project, subject: { type: "user", externalId: `u-${crypto.randomUUID()}` }, reasonNames: ["spam"], automated: false, media: [media] });
      const [row] = await w.platform.db.select().from(caseMedia).where(eq(caseMedia.reportId, created.report.id));
      const queued = await w.platform.db.select().from(jobs).where(eq(jobs.entityId, row!.id));
      return { row: row!, jobs: queued.filter((j) => j.kind === JOB_KIND.mediaMatch).length };
    };
    // The banks changed since this instance last built its index: the job matches (and builds it).
    const first = await file({ sha256: sha(`miss ${crypto.randomUUID()}`) });
    expect(first).toMatchObject({ jobs: 1, row: { matchedAt: null } });
    expect(await matchMedia({ ...w.platform, actor: w.platform.actor }, first.row)).toHaveLength(0);
    // Held at the current version now: a miss is done at intake, with no job.
    const miss = await file({ sha256: sha(`miss ${crypto.randomUUID()}`), pdq: BASE, pdqQuality: 100 });
    expect(miss.jobs).toBe(0);
    expect(miss.row.matchedAt).not.toBeNull();
    // A hit goes to the job, which records it and acts.
    const hit = await file({ sha256: banked });
    expect(hit).toMatchObject({ jobs: 1, row: { matchedAt: null } });
    expect(await matchMedia({ ...w.platform, actor: w.platform.actor }, hit.row)).toHaveLength(1);
    // An entry added (the version moves): the held index is stale, so even a miss goes to the job.
    await addEntry(w.ctx, { bankId: bank.id, signalType: "md5", value: "0123456789abcdef0123456789abcdef" });
    const afterChange = await file({ sha256: sha(`miss ${crypto.randomUUID()}`) });
    expect(afterChange).toMatchObject({ jobs: 1, row: { matchedAt: null } });
    // A URL is always the job's (it is fetched and hashed there).
    const url = await file({ url: "https://media.example/x.jpg" });
    expect(url).toMatchObject({ jobs: 1, row: { matchedAt: null, status: "pending" } });
  });
});

describe("building a project's index", () => {
  const randomHex = (digits: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(digits / 2))).toString("hex");
  const DIGITS = { sha256: 64, md5: 32, pdq: 64 } as const;
  /** The index's entries a media item carrying exactly this signal finds. */
  const found = (index: ProjectIndex, signalType: keyof typeof DIGITS, value: string) =>
    hitsOf(index, { sha256: signalType === "sha256" ? value : null, md5: signalType === "md5" ? value : null, pdq: signalType === "pdq" ? value : null, pdqQuality: 100, vpdq: null }).map((h) => h.entryId);

  test("a page at a time (two entries a page here, across banks and signal types) it holds every entry of the enabled banks not quarantined, and nothing else", async () => {
    const project = await w.addProject({ name: `Paged ${crypto.randomUUID().slice(0, 8)}` });
    const banks = [
      await createBank(w.ctx, { projectId: project.id, name: "Live" }),
      await createBank(w.ctx, { projectId: project.id, name: "Near", pdqDistance: 20 }),
      await createBank(w.ctx, { projectId: project.id, name: "Off" }),
    ];
    const entries: { id: string; bankId: string; signalType: keyof typeof DIGITS; value: string }[] = [];
    for (const bank of banks)
      for (const signalType of ["sha256", "md5", "pdq"] as const)
        for (let i = 0; i < 5; i++) {
          const value = randomHex(DIGITS[signalType]);
          entries.push({ id: (await addEntry(w.ctx, { bankId: bank.id, signalType, value })).id, bankId: bank.id, signalType, value });
        }
    await updateBank(w.ctx, { bankId: banks[2]!.id, enabled: false });
    // One entry of each type quarantined in the live bank (as a flood of matches leaves it).
    const quarantined = new Set([0, 5, 10].map((k) => entries[k]!.id));
    await w.store.transaction(async () => {
      for (const id of quarantined) await w.store.db.update(mediaBankEntries).set({ quarantinedAt: 1, quarantineReason: "test" }).where(eq(mediaBankEntries.id, id));
    });
    const held = entries.filter((e) => e.bankId !== banks[2]!.id && !quarantined.has(e.id));
    expect(held.length).toBe(27);

    const paged = await buildIndex(w.ctx, project.id, 1, 2);
    const whole = await buildIndex(w.ctx, project.id, 1);
    for (const index of [paged, whole]) {
      expect(index.entries.size).toBe(held.length);
      for (const e of entries) expect({ entry: e.id, found: found(index, e.signalType, e.value).includes(e.id) }).toEqual({ entry: e.id, found: held.includes(e) });
    }
  });

  test("one build at a time: callers at once share it; after a change, the next caller builds it again with the change", async () => {
    const project = await w.addProject({ name: `Shared ${crypto.randomUUID().slice(0, 8)}` });
    const bank = await createBank(w.ctx, { projectId: project.id, name: "List" });
    for (let i = 0; i < 3; i++) await addEntry(w.ctx, { bankId: bank.id, signalType: "md5" as SignalType, value: randomHex(32) });
    const [a, b, c] = await Promise.all([projectIndex(w.ctx, project.id), projectIndex(w.ctx, project.id), projectIndex(w.ctx, project.id)]);
    expect(b).toBe(a);
    expect(c).toBe(a);
    const value = randomHex(64);
    const added = await addEntry(w.ctx, { bankId: bank.id, signalType: "sha256", value });
    const [d, e] = await Promise.all([projectIndex(w.ctx, project.id), projectIndex(w.ctx, project.id)]);
    expect(d).not.toBe(a);
    expect(e).toBe(d);
    expect(d.version).toBeGreaterThan(a.version);
    expect(d.entries.size).toBe(a.entries.size + 1);
    expect(found(d, "sha256", value)).toEqual([added.id]);
  });
});
