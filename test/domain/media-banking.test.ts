/**
 * Banking a case's media and the past media check as rules (src/domain/banks/banking.ts,
 * past-check.ts; docs/media.md): what a case's media give a bank (each hash once, a PDQ hash
 * only from the bank's floor); the check reads a batch of the project's media per call and
 * keeps its cursor, a job run again with a cursor that moved on stops instead of starting a
 * second chain; entries added one after another share one waiting check, a check started takes
 * no more; where instances write side by side (PostgreSQL) its first batch waits for the reports
 * in flight. No worker runs here: the check's jobs wait, and each batch is called by hand.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, asc, eq } from "drizzle-orm";
import { caseMedia, jobs, mediaBankAdditions, mediaBankEntries, mediaMatches } from "../../src/db/schema.ts";
import { addEntry, createBank, exportEntries, importEntries, openBankFile, updateBank } from "../../src/domain/banks/banks.ts";
import { createQueue } from "../../src/domain/review/queues.ts";
import { signalsToBank } from "../../src/domain/banks/banking.ts";
import { checkPastMedia, pastCheckStatus } from "../../src/domain/banks/past-check.ts";
import { ROW_LOCKED } from "../../src/domain/core/context.ts";
import { LISTING_HORIZON_MS } from "../../src/domain/intake/report-time.ts";
import { createReport } from "../../src/domain/intake/reports.ts";
import { projectIndex } from "../../src/domain/intake/signal-index.ts";
import { JOB_KIND } from "../../src/domain/views/job.ts";
import { entryInputSchema, MAX_CSV_METADATA_COLUMNS, MAX_ENTRY_METADATA_KEYS, SIGNAL_TYPES, type MediaInput, type SignalType } from "../../src/domain/views/media-bank.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

let w: DomainWorld;
beforeAll(async () => {
  w = await domainWorld();
});
afterAll(async () => {
  await w.close();
});

const sha = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");
const PDQ = "d8f8f0cee0f4a84f0637022a078f67f0b36e2ed596621e1d33e6339c4e9c9b22";

async function file(media: MediaInput[]) {
  const created = await createReport(w.platform, { project: w.project, subject: { type: "user", externalId: `u-${crypto.randomUUID()}` }, reasonNames: ["spam"], automated: false, media });
  return created.report;
}

const additionOf = async (entryId: string) => {
  const [entry] = await w.platform.db.select({ additionId: mediaBankEntries.additionId }).from(mediaBankEntries).where(eq(mediaBankEntries.id, entryId));
  const [row] = await w.platform.db.select().from(mediaBankAdditions).where(eq(mediaBankAdditions.id, entry!.additionId!));
  return row!;
};

describe("what a case's media give a bank", () => {
  test("each hash once; a PDQ hash only when its quality reaches the floor (the others counted); missing hashes skipped", () => {
    const a = sha("a");
    const got = signalsToBank(
      [
        { sha256: a, md5: "ab".repeat(16), pdq: PDQ, pdqQuality: 50 },
        { sha256: a, md5: null, pdq: PDQ.replace("d8", "00"), pdqQuality: 49 },
        { sha256: null, md5: null, pdq: null, pdqQuality: null },
      ],
      50,
    );
    expect(got.signals).toEqual([
      { signalType: "sha256", value: a },
      { signalType: "md5", value: "ab".repeat(16) },
      { signalType: "pdq", value: PDQ },
    ]);
    expect(got.belowFloor).toBe(1);
    expect(signalsToBank([{ sha256: null, md5: null, pdq: PDQ, pdqQuality: 90 }], 91)).toEqual({ signals: [], belowFloor: 1 });
  });

  test("a check's status: waiting, running, done, stopped (undone before it ended)", () => {
    expect(pastCheckStatus({ checkThrough: null, checkedAt: null, undoneAt: null })).toBe("waiting");
    expect(pastCheckStatus({ checkThrough: "m", checkedAt: null, undoneAt: null })).toBe("running");
    expect(pastCheckStatus({ checkThrough: "m", checkedAt: 1, undoneAt: 2 })).toBe("done");
    expect(pastCheckStatus({ checkThrough: "m", checkedAt: null, undoneAt: 2 })).toBe("stopped");
  });
});

describe("the past media check", () => {
  test("a batch a call from its cursor; a job whose cursor moved on stops; the newest media item at the start is the last checked", async () => {
    const digest = sha(`past ${crypto.randomUUID()}`);
    for (let i = 0; i < 4; i++) await file([{ sha256: sha(`other ${i} ${crypto.randomUUID()}`) }]);
    const past = await file([{ sha256: digest }]);
    const bank = await createBank(w.ctx, { projectId: w.project.id, name: `Checked ${crypto.randomUUID()}` });
    const entry = await addEntry(w.ctx, { bankId: bank.id, signalType: "sha256", value: digest });
    const addition = await additionOf(entry.id);
    expect(addition).toMatchObject({ kind: "entries", added: 1, checkThrough: null, checked: 0 });
    // The addition's job waits in its lane, from no cursor.
    const waiting = await w.platform.db.select().from(jobs).where(and(eq(jobs.kind, JOB_KIND.mediaPastCheck), eq(jobs.entityId, addition.id)));
    expect(waiting.map((j) => JSON.parse(j.payload))).toEqual([{ additionId: addition.id, after: null }]);

    const media = await w.platform.db.select({ id: caseMedia.id }).from(caseMedia).where(eq(caseMedia.projectId, w.project.id)).orderBy(asc(caseMedia.id));
    // (`settled`: the reports in flight waited for already; the test below waits for them.)
    const run = (after: string | null) => checkPastMedia(w.platform, { additionId: addition.id, after, settled: true, batch: 2, pauseMs: 0 });
    expect(await run(null)).toBe("continued");
    let row = (await w.platform.db.select().from(mediaBankAdditions).where(eq(mediaBankAdditions.id, addition.id)))[0]!;
    expect(row).toMatchObject({ checkThrough: media.at(-1)!.id, checkAfter: media[1]!.id, checked: 2 });
    // The same job run again (a crash after its commit): the cursor moved on, it stops; nothing counted twice.
    expect(await run(null)).toBe("stopped");
    expect((await w.platform.db.select().from(mediaBankAdditions).where(eq(mediaBankAdditions.id, addition.id)))[0]!.checked).toBe(2);
    // A media item filed now is after the check's bound (matched live): the check ends at the bound.
    await file([{ sha256: digest }]);
    let after: string | null = row.checkAfter;
    let outcome = "continued";
    let calls = 1;
    while (outcome === "continued") {
      outcome = await run(after);
      calls++;
      row = (await w.platform.db.select().from(mediaBankAdditions).where(eq(mediaBankAdditions.id, addition.id)))[0]!;
      after = row.checkAfter;
    }
    expect(outcome).toBe("done");
    expect(calls).toBe(Math.ceil(media.length / 2));
    expect(row).toMatchObject({ checked: media.length, checkMatches: 1, checkAfter: media.at(-1)!.id });
    expect(row.checkedAt).not.toBeNull();
    const found = await w.platform.db.select().from(mediaMatches).where(eq(mediaMatches.entryId, entry.id));
    expect(found.map((m) => m.reportId)).toEqual([past.id]);
    // Each batch's job named the cursor it continues from.
    const chain = await w.platform.db.select().from(jobs).where(and(eq(jobs.kind, JOB_KIND.mediaPastCheck), eq(jobs.entityId, addition.id))).orderBy(asc(jobs.id));
    expect(chain.map((j) => (JSON.parse(j.payload) as { after: string | null }).after)).toEqual([null, ...media.slice(0, -1).filter((_, i) => i % 2 === 1).map((m) => m.id)]);
  });

  test("entries added one after another share the waiting check; once it started, the next entry starts another", async () => {
    const bank = await createBank(w.ctx, { projectId: w.project.id, name: `Joined ${crypto.randomUUID()}` });
    await file([{ sha256: sha(`something ${crypto.randomUUID()}`) }]);
    const first = await addEntry(w.ctx, { bankId: bank.id, signalType: "sha256", value: sha(`first ${crypto.randomUUID()}`) });
    const second = await addEntry(w.ctx, { bankId: bank.id, signalType: "md5", value: "ef".repeat(16) });
    const shared = await additionOf(first.id);
    expect((await additionOf(second.id)).id).toBe(shared.id);
    expect((await additionOf(second.id)).added).toBe(2);
    expect(await checkPastMedia(w.platform, { additionId: shared.id, after: null, settled: true, batch: 1, pauseMs: 0 })).toBe("continued");
    const third = await addEntry(w.ctx, { bankId: bank.id, signalType: "pdq", value: PDQ });
    const next = await additionOf(third.id);
    expect(next.id).not.toBe(shared.id);
    expect(pastCheckStatus(next)).toBe("waiting");
  });

  test("where instances write side by side, the first batch waits for the reports in flight: media matched at intake against the version before, committed after the entry was added, are checked", async () => {
    const bank = await createBank(w.ctx, { projectId: w.project.id, name: `In flight ${crypto.randomUUID()}` });
    await addEntry(w.ctx, { bankId: bank.id, signalType: "sha256", value: sha(`first ${crypto.randomUUID()}`) });
    await projectIndex(w.platform, w.project.id); // held: a report's hashes are matched at intake
    const later = sha(`later ${crypto.randomUUID()}`);
    let reported!: () => void;
    const filed = new Promise<void>((resolve) => (reported = resolve));
    let commit!: () => void;
    const held = new Promise<void>((resolve) => (commit = resolve));
    // PostgreSQL: a report's transaction (beside others, as intake's) files media with `later`, a
    // miss at intake against the index without it, and stays open while `later` is added. On
    // SQLite one write transaction runs at a time: the report commits first.
    const onPostgres = !w.store.soleWriter;
    let reportId = "";
    const report = w.platform.store.transaction(async () => {
      reportId = (await file([{ sha256: later }])).id;
      reported();
      if (onPostgres) await held;
    }, ROW_LOCKED);
    await filed;
    if (!onPostgres) await report;
    const entry = await addEntry(w.ctx, { bankId: bank.id, signalType: "sha256", value: later });
    const addition = await additionOf(entry.id);
    const first = await checkPastMedia(w.platform, { additionId: addition.id, after: null, batch: 100, pauseMs: 0 });
    if (onPostgres) {
      // The first batch is put off until every report begun before has committed, or run again (reportsSettleMs).
      expect(first).toBe("waiting");
      expect((await additionOf(entry.id)).checkThrough).toBeNull();
      const [again] = await w.platform.db.select().from(jobs).where(and(eq(jobs.kind, JOB_KIND.mediaPastCheck), eq(jobs.entityId, addition.id), eq(jobs.status, "pending"))).orderBy(asc(jobs.runAt)).limit(1).offset(1);
      expect(JSON.parse(again!.payload)).toEqual({ additionId: addition.id, after: null, settled: true });
      expect(again!.runAt).toBe(w.clock.now() + LISTING_HORIZON_MS);
      commit();
      await report;
      expect(await checkPastMedia(w.platform, { additionId: addition.id, after: null, settled: true, batch: 100, pauseMs: 0 })).toBe("done");
    } else expect(first).toBe("done"); // a sole writer: nothing in flight, it starts at once
    const [media] = await w.platform.db.select().from(caseMedia).where(eq(caseMedia.reportId, reportId));
    expect(media!.matchedAt).not.toBeNull(); // matched at intake, against the version before `later`
    expect((await w.platform.db.select().from(mediaMatches).where(eq(mediaMatches.mediaId, media!.id))).map((m) => m.entryId)).toEqual([entry.id]);
  });
});

describe("a bank's action", () => {
  test("routes to a queue of the organization (of the bank's project, when the queue has one): another organization's is a 400, on creation and on change", async () => {
    const other = await w.secondOrganization({ name: `Elsewhere ${crypto.randomUUID()}` });
    const theirs = await createQueue(other.ctx, { name: "Their queue" });
    const ours = await createQueue(w.ctx, { name: `Our queue ${crypto.randomUUID()}` });
    const refused = await refusal(createBank(w.ctx, { projectId: w.project.id, name: `Routed ${crypto.randomUUID()}`, action: { type: "route", queueId: theirs.id } }));
    expect(refused).toMatchObject({ http: 400, message: "action.queueId: no such queue in this organization" });
    const bank = await createBank(w.ctx, { projectId: w.project.id, name: `Routed ${crypto.randomUUID()}`, action: { type: "route", queueId: ours.id } });
    expect(bank.action).toEqual({ type: "route", queueId: ours.id });
    expect(await refusal(updateBank(w.ctx, { bankId: bank.id, action: { type: "route", queueId: theirs.id } }))).toMatchObject({ http: 400 });
  });
});

describe("a bank's export", () => {
  test("a page at a time (two entries a page here): every entry once, by signal type then value, as in one piece", async () => {
    const bank = await createBank(w.ctx, { projectId: w.project.id, name: `Exported ${crypto.randomUUID()}` });
    const added: { signalType: SignalType; value: string }[] = [];
    for (const [signalType, n] of [["sha256", 5], ["md5", 4], ["pdq", 3]] as const)
      for (let i = 0; i < n; i++) {
        const value = sha(`${signalType} ${i} ${crypto.randomUUID()}`).slice(0, signalType === "md5" ? 32 : 64);
        await addEntry(w.ctx, { bankId: bank.id, signalType, value, origin: "list v1", metadata: { n: i } });
        added.push({ signalType, value });
      }
    const inOrder = [...added].sort((a, b) => SIGNAL_TYPES.indexOf(a.signalType) - SIGNAL_TYPES.indexOf(b.signalType) || (a.value < b.value ? -1 : 1));
    for (const format of ["csv", "json"] as const) {
      const paged = await exportEntries(w.ctx, { bankId: bank.id, format }, 2);
      expect(paged.entries).toBe(added.length);
      expect(paged).toEqual(await exportEntries(w.ctx, { bankId: bank.id, format }));
    }
    const json = JSON.parse((await exportEntries(w.ctx, { bankId: bank.id, format: "json" }, 2)).content) as { signalType: string; value: string; origin: string }[];
    expect(json.map((i) => ({ signalType: i.signalType, value: i.value }))).toEqual(inOrder);
    expect(new Set(json.map((i) => i.origin))).toEqual(new Set(["list v1"]));
    const lines = (await exportEntries(w.ctx, { bankId: bank.id, format: "csv" }, 2)).content.split("\r\n");
    expect(lines[0]).toBe("signal_type,signal_value,origin,n");
    expect(lines.at(-1)).toBe("");
    expect(lines.slice(1, -1).map((l) => l.split(",").slice(0, 2).join(","))).toEqual(inOrder.map((e) => `${e.signalType},${e.value}`));
    // Streamed (the download route's source): a piece a page, never the file whole; the pieces are the export's text.
    for (const format of ["csv", "json"] as const) {
      const file = await openBankFile(w.ctx, { bankId: bank.id, format }, 2);
      const pieces: string[] = [];
      for await (const piece of file.chunks) pieces.push(piece);
      expect(pieces.join("")).toBe((await exportEntries(w.ctx, { bankId: bank.id, format })).content);
      // Six pages of two (5 + 4 + 3 entries: 3 + 2 + 2 pages) and the header, or the brackets.
      expect(pieces.length).toBe(format === "csv" ? 1 + 7 : 2 + 7);
      expect(Math.max(...pieces.map((p) => p.split(format === "csv" ? "\r\n" : "},{").length))).toBeLessThanOrEqual(3);
      expect(file.entries()).toBe(added.length);
    }
    expect((await refusal(openBankFile(w.ctx, { bankId: crypto.randomUUID(), format: "csv" }))).http).toBe(404);
    // In one answer up to a bound (MAX_INLINE_EXPORT_ENTRIES; here the bank's 12): past it, a 400 naming the download.
    expect((await exportEntries(w.ctx, { bankId: bank.id, format: "csv" }, undefined, added.length)).entries).toBe(added.length);
    const tooMany = await refusal(exportEntries(w.ctx, { bankId: bank.id, format: "json" }, undefined, added.length - 1));
    expect(tooMany.http).toBe(400);
    expect(tooMany.message).toBe(`the bank holds more than ${added.length - 1} entries, too many for one answer: download its file from GET …/media-banks/${bank.id}/export/download?format=json`);
  });

  test("metadata keys are bounded: an entry given more than MAX_ENTRY_METADATA_KEYS, a CSV of more columns, and a CSV of a bank whose entries have more than MAX_CSV_METADATA_COLUMNS keys are refused (its JSON file is not)", async () => {
    const keys = (n: number, prefix: string) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));
    // As given over the API (entryInputSchema) and in a file.
    const entry = (n: number) => ({ signalType: "md5", value: "ab".repeat(16), metadata: keys(n, "k") });
    expect(entryInputSchema.safeParse(entry(MAX_ENTRY_METADATA_KEYS)).success).toBe(true);
    expect(entryInputSchema.safeParse(entry(MAX_ENTRY_METADATA_KEYS + 1)).success).toBe(false);
    const bank = await createBank(w.ctx, { projectId: w.project.id, name: `Keys ${crypto.randomUUID()}` });
    const wide = ["signal_type", "signal_value", ...Object.keys(keys(MAX_ENTRY_METADATA_KEYS + 1, "c"))].join(",");
    const csv = await refusal(importEntries(w.ctx, { bankId: bank.id, format: "csv", content: `${wide}\nmd5,${"cd".repeat(16)}` }));
    expect(csv).toMatchObject({ http: 400, message: `Line 1: ${MAX_ENTRY_METADATA_KEYS + 1} metadata columns; an entry has at most ${MAX_ENTRY_METADATA_KEYS}` });
    const json = await importEntries(w.ctx, { bankId: bank.id, format: "json", content: JSON.stringify([entry(MAX_ENTRY_METADATA_KEYS + 1)]) });
    expect(json.added).toBe(0);
    expect(json.errors).toEqual([{ line: 1, error: `metadata must be an object of at most ${MAX_ENTRY_METADATA_KEYS} short values` }]);
    // Entries stored with more keys than a CSV holds (written before the bound; the domain's
    // addEntry takes what the transport checked): their CSV is a 400 before any piece, their JSON is whole.
    const per = Math.ceil((MAX_CSV_METADATA_COLUMNS + 1) / 3);
    for (let i = 0; i < 3; i++) await addEntry(w.ctx, { bankId: bank.id, signalType: "sha256", value: sha(`keys ${i} ${crypto.randomUUID()}`), metadata: keys(per, `e${i}-`) });
    const message = `the bank's entries have more than ${MAX_CSV_METADATA_COLUMNS} metadata keys, a column each in a CSV: export it as JSON (format=json)`;
    expect(await refusal(exportEntries(w.ctx, { bankId: bank.id, format: "csv" }))).toMatchObject({ http: 400, message });
    expect(await refusal(openBankFile(w.ctx, { bankId: bank.id, format: "csv" }))).toMatchObject({ http: 400, message });
    expect((await exportEntries(w.ctx, { bankId: bank.id, format: "json" })).entries).toBe(3);
  });
});
