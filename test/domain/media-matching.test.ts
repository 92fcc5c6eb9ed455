/**
 * The matching rules of media banks as arithmetic (src/domain/banks/matching.ts, docs/media.md):
 * a PDQ entry matches at its bank's distance or less and only from its quality floor; a negative
 * bank suppresses the others' matches of the same media; an entry is quarantined past its count;
 * and a second instance's index (a store of its own, on the same data) sees an entry another
 * added at its next match.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { count, eq, sql, type SQL } from "drizzle-orm";
import { caseMedia, jobs, mediaMatches, ruleHits } from "../../src/db/schema.ts";
import { addEntry, createBank, getBank, importEntries, listBanks, removeEntry, updateBank } from "../../src/domain/banks/banks.ts";
import { deleteBank, deleteBankSlice } from "../../src/domain/banks/bank-deletion.ts";
import { caseMediaMatches, decideMatch, matchMedia } from "../../src/domain/banks/matching.ts";
import { createRule, deleteRule } from "../../src/domain/rules/rules.ts";
import { bankCaseMedia } from "../../src/domain/banks/banking.ts";
import { decideOnReport } from "../../src/domain/review/decisions.ts";
import { migrateStore } from "../../src/db/migrate.ts";
import { embeddedMigrations } from "../../src/db/migrations-index.ts";
import { embeddedPgMigrations } from "../../src/db/migrations-index-pg.ts";
import { bankVersionMoving, buildIndex, hitsOf, projectIndex, type ProjectIndex } from "../../src/domain/intake/signal-index.ts";
import { mediaBankEntries, mediaBanks, mediaBankVersions } from "../../src/db/schema.ts";
import type { SignalType } from "../../src/domain/views/media-bank.ts";
import type { DomainContext } from "../../src/domain/core/context.ts";
import type { Store } from "../../src/db/store.ts";
import { createReport } from "../../src/domain/intake/reports.ts";
import { hammingDistance } from "../../src/domain/media/pdq.ts";
import { formatVpdq } from "../../src/domain/media/vpdq.ts";
import { JOB_KIND } from "../../src/domain/views/job.ts";
import type { MediaInput } from "../../src/domain/views/media-bank.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";
import { TEST_ENGINE } from "../helpers/pg.ts";

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

/**
 * Files a report with one media item in `world` (about the post `target` when given) and matches
 * it in `ctx`'s store (the world's by default), as the media job does.
 */
async function fileAndMatch(media: MediaInput, opts: { world?: DomainWorld; target?: string; ctx?: DomainContext } = {}) {
  const world = opts.world ?? w;
  const target = opts.target === undefined ? {} : { target: { contentType: "post", contentExternalId: opts.target } };
  const created = await createReport(world.platform, { project: world.project, subject: { type: "user", externalId: `u-${crypto.randomUUID()}` }, reasonNames: ["spam"], automated: false, ...target, media: [media] });
  const [row] = await world.platform.db.select().from(caseMedia).where(eq(caseMedia.reportId, created.report.id));
  const matched = await matchMedia({ ...(opts.ctx ?? world.platform), actor: world.platform.actor }, row!);
  return { reportId: created.report.id, caseId: created.caseId, mediaId: row!.id, matched };
}

/** What matching one media item, filed in a report of its own, recorded. */
const matchOne = async (media: MediaInput, ctx?: DomainContext) => (await fileAndMatch(media, { ctx })).matched;

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

  test("one build at a time: callers at once share it; entries added since are taken into the held index, any other change builds it again", async () => {
    const project = await w.addProject({ name: `Shared ${crypto.randomUUID().slice(0, 8)}` });
    const bank = await createBank(w.ctx, { projectId: project.id, name: "List" });
    for (let i = 0; i < 3; i++) await addEntry(w.ctx, { bankId: bank.id, signalType: "md5" as SignalType, value: randomHex(32) });
    const [a, b, c] = await Promise.all([projectIndex(w.ctx, project.id), projectIndex(w.ctx, project.id), projectIndex(w.ctx, project.id)]);
    expect(b).toBe(a);
    expect(c).toBe(a);
    const [builtAt, size] = [a.version, a.entries.size];
    // An entry added: the held index takes it (callers at once share that too).
    const value = randomHex(64);
    const added = await addEntry(w.ctx, { bankId: bank.id, signalType: "sha256", value });
    const [d, e] = await Promise.all([projectIndex(w.ctx, project.id), projectIndex(w.ctx, project.id)]);
    expect(d).toBe(a);
    expect(e).toBe(d);
    expect(d.version).toBeGreaterThan(builtAt);
    expect(d.entries.size).toBe(size + 1);
    expect(found(d, "sha256", value)).toEqual([added.id]);
    // A change of the bank (its distance), an entry removed: built again.
    await updateBank(w.ctx, { bankId: bank.id, pdqDistance: 20 });
    const f = await projectIndex(w.ctx, project.id);
    expect(f).not.toBe(d);
    expect(found(f, "sha256", value)).toEqual([added.id]);
    await removeEntry(w.ctx, { bankId: bank.id, entryId: added.id });
    const g = await projectIndex(w.ctx, project.id);
    expect(g).not.toBe(f);
    expect(found(g, "sha256", value)).toEqual([]);
    // More added since than a lookup checks one by one (2,048): followed too, the PDQ buckets
    // built again after; the index answers what a whole build answers.
    const many = Array.from({ length: 2_600 }, (_, i) => (i % 2 ? `md5,${randomHex(32)}` : `pdq,${randomHex(64)}`));
    expect((await importEntries(w.ctx, { bankId: bank.id, format: "csv", content: ["signal_type,signal_value", ...many].join("\n") })).added).toBe(2_600);
    const h = await projectIndex(w.ctx, project.id);
    expect(h).toBe(g);
    expect(h.entries.size).toBe(3 + 2_600);
    expect(h.pdq.pending).toBe(0);
    const whole = await buildIndex(w.ctx, project.id, h.version);
    for (const line of many.slice(0, 200)) {
      const [signalType, value] = line.split(",") as [keyof typeof DIGITS, string];
      expect(found(h, signalType, value)).toEqual(found(whole, signalType, value));
      expect(found(h, signalType, value)).toHaveLength(1);
    }
  });

  test("writes of the previous release (entries without their version, the version moved without saying what changed): the index is built again, not followed", async () => {
    const project = await w.addProject({ name: `Old ${crypto.randomUUID().slice(0, 8)}` });
    const bank = await createBank(w.ctx, { projectId: project.id, name: "List" });
    await addEntry(w.ctx, { bankId: bank.id, signalType: "md5", value: randomHex(32) });
    let index = await projectIndex(w.ctx, project.id);
    // As the previous release wrote: the row first (no added_version), then the version moved.
    // (On SQLite this process remembers the version it read, as the sole writer: it is told, as
    // every change through this process tells it.)
    const movedAsBefore = async () => {
      bankVersionMoving(w.ctx, project.id);
      await w.store.db.update(mediaBankVersions).set({ version: sql`${mediaBankVersions.version} + 1` }).where(eq(mediaBankVersions.projectId, project.id));
    };
    const value = randomHex(64);
    const [old] = await w.store.transaction(async () => {
      const row = { id: Bun.randomUUIDv7(), orgId: w.orgId, projectId: project.id, bankId: bank.id, signalType: "sha256" as const, value, origin: null, metadata: null, addedByType: "system", addedById: null, quarantinedAt: null, quarantineReason: null, createdAt: Date.now(), additionId: null, frames: null, addedVersion: null };
      const rows = await w.store.db.insert(mediaBankEntries).values(row).returning();
      await movedAsBefore();
      return rows;
    });
    const afterAdd = await projectIndex(w.ctx, project.id);
    expect(afterAdd).not.toBe(index);
    expect(found(afterAdd, "sha256", value)).toEqual([old!.id]);
    index = afterAdd;
    for (const change of [
      () => w.store.db.delete(mediaBankEntries).where(eq(mediaBankEntries.id, old!.id)),
      () => w.store.db.update(mediaBanks).set({ pdqDistance: 12 }).where(eq(mediaBanks.id, bank.id)),
      () => w.store.db.update(mediaBankEntries).set({ quarantinedAt: 1, quarantineReason: "old" }).where(eq(mediaBankEntries.bankId, bank.id)),
    ]) {
      await w.store.transaction(async () => {
        await change();
        await movedAsBefore();
      });
      const next = await projectIndex(w.ctx, project.id);
      expect(next).not.toBe(index);
      index = next;
    }
    expect(found(index, "sha256", value)).toEqual([]);
    expect(index.entries.size).toBe(0); // the last entry quarantined
  });

  test("entries added since, many pages of them and of every type, on another instance too: the held index then answers what one built again answers", async () => {
    const project = await w.addProject({ name: `Added ${crypto.randomUUID().slice(0, 8)}` });
    const [live, off] = [await createBank(w.ctx, { projectId: project.id, name: "Live" }), await createBank(w.ctx, { projectId: project.id, name: "Off", enabled: false })];
    await addEntry(w.ctx, { bankId: live.id, signalType: "md5", value: randomHex(32) });
    const store = w.anotherInstance();
    const second: DomainContext = { ...w.ctx, store, db: store.db };
    const held = [await projectIndex(w.ctx, project.id), await projectIndex(second, project.id)];
    // Imports, entries added one by one, banked videos; and entries of a disabled bank (left out).
    const lines = (n: number) => ["signal_type,signal_value", ...Array.from({ length: n }, (_, i) => ["sha256,64", "md5,32", "pdq,64"][i % 3]!.split(",")).map(([t, d]) => `${t},${randomHex(Number(d))}`)].join("\n");
    await importEntries(w.ctx, { bankId: live.id, format: "csv", content: lines(45) });
    await addEntry(w.ctx, { bankId: live.id, signalType: "pdq", value: randomHex(64) });
    await importEntries(w.ctx, { bankId: off.id, format: "csv", content: lines(6) });
    await importEntries(w.ctx, { bankId: live.id, format: "csv", content: lines(30) });
    // Banked videos, more than a page of their frames (ENTRY_PAGE.vpdq, 2; and than the 20 it was).
    const videos = Array.from({ length: 23 }, () => formatVpdq(Array.from({ length: 3 }, (_, t) => ({ hash: randomHex(64), quality: 90, timestamp: t }))));
    for (const value of videos) await addEntry(w.ctx, { bankId: live.id, signalType: "vpdq", value });
    const whole = await buildIndex(w.ctx, project.id, 0);
    for (const [k, ctx] of [w.ctx, second].entries()) {
      const index = await projectIndex(ctx, project.id);
      expect(index).toBe(held[k]!);
      expect(index.entries.size).toBe(whole.entries.size);
      expect(index.entries.size).toBe(1 + 45 + 1 + 30 + 23);
      for (const video of videos) {
        const query = { sha256: null, md5: null, pdq: null, pdqQuality: null, vpdq: video };
        expect(hitsOf(index, query).map((h) => h.signalType)).toEqual(hitsOf(whole, query).map((h) => h.signalType));
        expect(hitsOf(index, query).filter((h) => h.signalType === "vpdq")).toHaveLength(1);
      }
      const rows = await w.ctx.db.select().from(mediaBankEntries).where(eq(mediaBankEntries.projectId, project.id));
      for (const r of rows) {
        const signalType = r.signalType as keyof typeof DIGITS;
        expect({ entry: r.id, found: found(index, signalType, r.value).includes(r.id) }).toEqual({ entry: r.id, found: found(whole, signalType, r.value).includes(r.id) });
      }
    }
  });
});

describe("deleting a bank", () => {
  test("hidden at once (404, matching nothing, its name free); its entries go a slice at a time, the bank's row last", async () => {
    const name = `Doomed ${crypto.randomUUID()}`;
    const bank = await createBank(w.ctx, { projectId: w.project.id, name });
    const digests = Array.from({ length: 450 }, (_, i) => sha(`${name} ${i}`));
    const imported = await importEntries(w.ctx, { bankId: bank.id, format: "csv", content: ["signal_type,signal_value", ...digests.map((d) => `sha256,${d}`)].join("\n") });
    expect(imported.added).toBe(450);
    expect(await matchOne({ sha256: digests[0]! })).toHaveLength(1);
    // A case matched by it, and a rule on the media facts that names it: it hits on the case's next report.
    const target = `doomed-${crypto.randomUUID()}`;
    const matched = await fileAndMatch({ sha256: digests[2]! }, { target });
    expect(matched.matched).toHaveLength(1);
    const rule = await createRule(w.ctx, { name: `Named ${name}`, trigger: "report.created", mode: "live", when: { field: "media.banks", op: "includes", value: name }, then: [{ type: "tag", tag: "banked-match" }] });
    const hitsOfRule = async () => (await w.ctx.db.select({ n: count() }).from(ruleHits).where(eq(ruleHits.ruleId, rule.id)))[0]!.n;
    const another = () => createReport(w.platform, { project: w.project, subject: null, reasonNames: ["spam"], automated: false, target: { contentType: "post", contentExternalId: target } });
    expect((await another()).caseId).toBe(matched.caseId);
    expect(await hitsOfRule()).toBe(1);
    const entriesLeft = async () => (await w.ctx.db.select({ n: count() }).from(mediaBankEntries).where(eq(mediaBankEntries.bankId, bank.id)))[0]!.n;

    await deleteBank(w.ctx, { bankId: bank.id });
    // At once: a 404 everywhere, no match from the next one on, the name free; the entries still there.
    expect((await refusal(getBank(w.ctx, { bankId: bank.id }))).http).toBe(404);
    expect((await listBanks(w.ctx, { projectId: w.project.id })).map((b) => b.id)).not.toContain(bank.id);
    expect((await refusal(addEntry(w.ctx, { bankId: bank.id, signalType: "sha256", value: sha("late") }))).http).toBe(404);
    expect(await matchOne({ sha256: digests[1]! })).toHaveLength(0);
    // Its matches recorded before are gone with it, though their rows wait for the slices: not on
    // the case's page, no verdict on them, no longer a fact the rules read.
    const page = await caseMediaMatches(w.ctx, { caseId: matched.caseId });
    expect({ media: page.mediaTotal, matches: page.matches, total: page.matchesTotal }).toEqual({ media: 1, matches: [], total: 0 });
    expect((await refusal(decideMatch(w.ctx, { matchId: matched.matched[0]!.matchId, verdict: "confirmed" }))).http).toBe(404);
    expect((await another()).caseId).toBe(matched.caseId);
    expect(await hitsOfRule()).toBe(1);
    await deleteRule(w.ctx, { ruleId: rule.id });
    const again = await createBank(w.ctx, { projectId: w.project.id, name });
    expect(again.id).not.toBe(bank.id);
    expect(await entriesLeft()).toBe(450);

    // Slice by slice (200 rows here), then the bank's row.
    const left: number[] = [];
    let answer: string;
    do {
      answer = await deleteBankSlice(w.platform, { bankId: bank.id, rows: 200 });
      left.push(await entriesLeft());
    } while (answer === "continued");
    expect(answer).toBe("done");
    expect(left).toEqual([250, 50, 0, 0]);
    expect(await w.ctx.db.select().from(mediaBanks).where(eq(mediaBanks.id, bank.id))).toEqual([]);
    expect(await deleteBankSlice(w.platform, { bankId: bank.id })).toBe("gone");
    expect((await w.audit(bank.id)).actions).toContain("MEDIA_BANK_DELETED");
    // The bank of the same name made meanwhile is untouched.
    expect((await getBank(w.ctx, { bankId: again.id })).name).toBe(name);
  });
});

describe("a case's media", () => {
  test("are its reports' and attachments': a report moved to another case takes its media and their matches along", async () => {
    const digest = sha(`moved ${crypto.randomUUID()}`);
    const bank = await createBank(w.ctx, { projectId: w.project.id, name: `Moved ${crypto.randomUUID()}` });
    await addEntry(w.ctx, { bankId: bank.id, signalType: "sha256", value: digest });
    const target = `moved-${crypto.randomUUID()}`;
    const first = await fileAndMatch({ sha256: digest }, { target });
    expect(first.matched).toHaveLength(1);
    await decideOnReport(w.ctx, { reportId: first.reportId, decision: { action: "dismiss", reason: "other" } });
    // The case decided, the next report about the target opens another; escalating the first
    // report then moves it into that open case (workflow-engine.ts, rehome).
    const newer = await createReport(w.platform, { project: w.project, subject: null, reasonNames: ["spam"], automated: false, target: { contentType: "post", contentExternalId: target } });
    expect(newer.caseId).not.toBe(first.caseId);
    await decideOnReport(w.ctx, { reportId: first.reportId, decision: { action: "escalate", team: "legal" } });

    const there = await caseMediaMatches(w.ctx, { caseId: newer.caseId });
    expect(there.media.map((m) => m.id)).toEqual([first.mediaId]);
    expect(there.matches.map((m) => ({ id: m.id, caseId: m.caseId }))).toEqual([{ id: first.matched[0]!.matchId, caseId: newer.caseId }]);
    expect(await caseMediaMatches(w.ctx, { caseId: first.caseId })).toEqual({ media: [], mediaTotal: 0, nextCursor: null, matches: [], matchesTotal: 0 });
    // The row names its case for the media job, which acts on that case.
    const [row] = await w.ctx.db.select({ caseId: caseMedia.caseId }).from(caseMedia).where(eq(caseMedia.id, first.mediaId));
    expect(row!.caseId).toBe(newer.caseId);
    // Banking from the case it is in now finds its hashes.
    const other = await createBank(w.ctx, { projectId: w.project.id, name: `Banked ${crypto.randomUUID()}` });
    expect((await bankCaseMedia(w.ctx, { caseId: newer.caseId, bankId: other.id, reason: "moved with its report" })).added).toBe(1);
  });

  test("the migration that finds them through reports (0045 / 0037) keeps every media item and match, and what a case page shows", async () => {
    const list = TEST_ENGINE === "postgres" ? embeddedPgMigrations : embeddedMigrations;
    const at = list.findIndex((m) => m.tag.endsWith("_case_media_by_report"));
    expect(at).toBeGreaterThan(0);
    // Today's code reads and writes columns of later migrations (0048's projects.deleted_at,
    // 0049's media_banks.deleted_at): they stand in while the data of 0044 is made, and are
    // dropped before the migrations run.
    const standIns = [
      { table: "projects", column: "deleted_at", type: "bigint" },
      { table: "media_banks", column: "deleted_at", type: "bigint" },
    ];
    const alter = async (store: Store, change: (s: (typeof standIns)[number]) => string): Promise<void> =>
      void await Promise.all(standIns.map((c) => (store.engine === "postgres" ? (store.writer as unknown as { execute(q: SQL): Promise<unknown> }).execute(sql.raw(change(c))) : store.writer.run(sql.raw(change(c))))));
    const old = await domainWorld({ migrations: at, prepare: (store) => alter(store, (c) => `ALTER TABLE ${c.table} ADD COLUMN ${c.column} ${c.type}`) });
    try {
      const digest = sha(`old ${crypto.randomUUID()}`);
      const bank = await createBank(old.ctx, { projectId: old.project.id, name: "Old" });
      await addEntry(old.ctx, { bankId: bank.id, signalType: "sha256", value: digest });
      const filed = [await fileAndMatch({ sha256: digest }, { world: old, target: "old-1" }), await fileAndMatch({ sha256: digest, md5: "ab".repeat(16) }, { world: old, target: "old-2" })];
      const before = await Promise.all(filed.map((f) => caseMediaMatches(old.ctx, { caseId: f.caseId })));
      const rows = async () => ({
        media: await old.ctx.db.select().from(caseMedia).orderBy(caseMedia.id),
        matches: await old.ctx.db.select().from(mediaMatches).orderBy(mediaMatches.id),
      });
      const kept = await rows();
      expect(kept.matches).toHaveLength(2);
      await alter(old.store, (c) => `ALTER TABLE ${c.table} DROP COLUMN ${c.column}`);
      expect(await migrateStore(old.store)).toBe(list.length - at);
      expect(await rows()).toEqual(kept);
      if (TEST_ENGINE === "sqlite") {
        // The table built again: every foreign key still holds, and the file is sound.
        expect(old.store.writer.all(sql`PRAGMA foreign_key_check`)).toEqual([]);
        expect(old.store.writer.all(sql`PRAGMA integrity_check`)).toEqual([{ integrity_check: "ok" }]);
      }
      expect(await Promise.all(filed.map((f) => caseMediaMatches(old.ctx, { caseId: f.caseId })))).toEqual(before);
    } finally {
      await old.close();
    }
  });
});
