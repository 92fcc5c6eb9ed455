/**
 * Search and the closed cases' list, in process, on the pass's engine (the same assertions on
 * SQLite's FTS5 index and on PostgreSQL's GIN index): case and accents ignored, a word in the
 * middle of a name, external IDs, reported content and AI reasoning, newest first and paged,
 * only the caller's organization, the index kept in step with writes (enrichment, renames,
 * deletions) and built by the migration over existing rows; closed cases by status, decision,
 * moderator and date.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql, type SQL } from "drizzle-orm";
import { startFakeOllama, type FakeOllama } from "../../scripts/fake-ollama.ts";
import { loadConfig } from "../../src/config.ts";
import { migrateStore } from "../../src/db/migrate.ts";
import { embeddedMigrations } from "../../src/db/migrations-index.ts";
import { embeddedPgMigrations } from "../../src/db/migrations-index-pg.ts";
import { openPostgresStore } from "../../src/db/store-pg.ts";
import { openSqliteStore, type Store } from "../../src/db/store.ts";
import { enrichReport } from "../../src/domain/analysis/enrichment.ts";
import { decideOnReport } from "../../src/domain/review/decisions.ts";
import { domainContext, type DomainContext } from "../../src/domain/core/context.ts";
import { saveIdentity } from "../../src/domain/identities/identities.ts";
import { deleteProject, deleteProjectSlice } from "../../src/domain/accounts/project-deletion.ts";
import { closedCases, excerptParts, search } from "../../src/domain/cases/search.ts";
import { addUser } from "../../src/domain/accounts/users.ts";
import { domainWorld, fakeClock, refusal, type DomainWorld } from "../helpers/builders.ts";
import { createTestDatabase, TEST_PG_URL } from "../helpers/pg.ts";

let world: DomainWorld;
let other: DomainWorld;
let fake: FakeOllama;

/** Each test's words are its own: the world is shared by the file. */
const tag = (w: string) => `${w}${Math.random().toString(36).slice(2, 7)}`;
const ids = (r: Awaited<ReturnType<typeof search>>) => ({
  reports: r.reports.items.map((h) => h.reportId),
  identities: r.identities.items.map((i) => i.id),
});

beforeAll(async () => {
  world = await domainWorld();
  other = await world.secondOrganization({ name: "Elsewhere" });
  fake = startFakeOllama();
});
afterAll(async () => {
  await world.close();
  await fake.stop();
});

async function person(externalId: string, display: { name?: string; username?: string }, w: DomainWorld = world): Promise<string> {
  const now = w.clock.now();
  return (await saveIdentity(w.ctx, { projectId: w.project.id, type: "user", externalId, display, now })).id;
}

describe("identities", () => {
  test("case and accents do not matter: muller, MULLER, Müller and mull find Mallory Müller", async () => {
    const id = await person(tag("mm-"), { name: "Mallory Müller", username: "mallory" });
    for (const q of ["muller", "MULLER", "Müller", "mull", "MÜLL", "mallory müller"]) {
      const r = await search(world.ctx, { q, kind: "identities" });
      expect({ q, found: ids(r).identities.includes(id) }).toEqual({ q, found: true });
    }
    // A word must start a word of the name: "uller" is inside one.
    expect(ids(await search(world.ctx, { q: "uller", kind: "identities" })).identities).not.toContain(id);
  });

  test("a word in the middle of a name, a username's part and an external ID's number", async () => {
    const webb = await person(tag("aw-"), { name: "Alice Webb" });
    const kevin = await person(tag("kv-"), { username: "kevin_w2" });
    const u1007 = await person("U-1007", { name: "Nobody In Particular" });
    expect(ids(await search(world.ctx, { q: "webb" })).identities).toContain(webb);
    expect(ids(await search(world.ctx, { q: "Kevin" })).identities).toContain(kevin);
    for (const q of ["U-1007", "u-1007", "1007", "U-10"]) {
      const found = ids(await search(world.ctx, { q, kind: "identities" })).identities;
      expect({ q, found: found.includes(u1007) }).toEqual({ q, found: true });
    }
    // Every word must appear: "webb kevin" is nobody.
    const both = ids(await search(world.ctx, { q: "webb kevin", kind: "identities" })).identities;
    expect(both).not.toContain(webb);
    expect(both).not.toContain(kevin);
  });

  test("a rename is searchable at once, and the old name no longer finds the identity", async () => {
    const ext = tag("rn-");
    const old = tag("Oldname");
    const neu = tag("Newname");
    const id = await person(ext, { name: `Jo ${old}` });
    expect(ids(await search(world.ctx, { q: old })).identities).toEqual([id]);
    await person(ext, { name: `Jo ${neu}` });
    expect(ids(await search(world.ctx, { q: old })).identities).toEqual([]);
    expect(ids(await search(world.ctx, { q: neu })).identities).toEqual([id]);
    // An upsert that changes nothing of the names (a report filed about them) keeps it found.
    await world.fileReport({ subject: { type: "user", externalId: ext } });
    expect(ids(await search(world.ctx, { q: neu })).identities).toEqual([id]);
  });
});

describe("reports", () => {
  test("descriptions and reported content, accents and case ignored, hits marked in an excerpt", async () => {
    const word = tag("Fjörd");
    const plain = word.replace("ö", "o").toLowerCase();
    const inDescription = await world.fileReport({ description: `Sends threats about ${word} every night` });
    const inContent = await world.fileReport({ target: { contentType: "post", contentExternalId: tag("p-"), content: `Buy cheap ${word.toUpperCase()}S now` } });
    const r = await search(world.ctx, { q: plain, kind: "reports" });
    expect(ids(r).reports).toEqual([inContent.reportId, inDescription.reportId]);
    const [contentHit, descriptionHit] = r.reports.items;
    expect(contentHit!.match!.field).toBe("content");
    expect(contentHit!.match!.parts.filter((p) => p.hit).map((p) => p.text)).toEqual([`${word.toUpperCase()}`]);
    expect(descriptionHit!.match!.field).toBe("description");
    expect(descriptionHit!.match!.parts.map((p) => p.text).join("")).toBe(`Sends threats about ${word} every night`);
    expect(descriptionHit!.case).toMatchObject({ status: "OPEN", open: true, target: { contentType: "post" } });
    expect(descriptionHit!.caseId).toBe(inDescription.caseId);
  });

  test("every script folds alike on both engines: Cyrillic, Greek, Korean, Japanese and Devanagari words, and their prefixes", async () => {
    const t = tag("");
    const filed = await world.fileReport({ description: `Ёлка${t} ΟΔΟΣ${t} 한국어${t} ガイド${t} किताब${t} Łódź${t}` });
    for (const q of [`елка${t}`, `ЁЛКА${t}`, `οδός${t}`, `οδοσ${t}`, `한국어${t}`, `ガイド${t}`, `किताब${t}`, `lodz${t}`, "ёлк", "한국", "ガイ"]) {
      expect({ q, found: ids(await search(world.ctx, { q, kind: "reports" })).reports.includes(filed.reportId) }).toEqual({ q, found: true });
    }
    // A word is not found inside another: "ка" is in the middle of "Ёлка".
    expect(ids(await search(world.ctx, { q: `ка${t}`, kind: "reports" })).reports).not.toContain(filed.reportId);
  });

  test("the AI's reasoning is searchable once enrichment wrote it", async () => {
    const word = tag("counterfeit");
    const aiProject = await world.addProject({ name: tag("AI "), ai: { threshold: 95 } });
    fake.setDefault(() => ({ json: { reasoning: `Advertises ${word} pharmaceuticals from Kraków`, categories: ["spam"], severity: "LOW", confidence: 60 } }));
    const filed = await world.fileReport({ project: aiProject, description: "weird shop link" });
    expect(ids(await search(world.ctx, { q: word })).reports).toEqual([]);
    const config = loadConfig({ OLLAMA_HOST: fake.url, FLAGSTAFF_AI_TIMEOUT_MS: "3000" });
    expect(await enrichReport({ ...world.ctx, config }, filed.reportId)).toBe("enriched");
    const r = await search(world.ctx, { q: `${word} krakow` });
    expect(ids(r).reports).toEqual([filed.reportId]);
    expect(r.reports.items[0]!.match).toMatchObject({ field: "ai_reasoning" });
    expect(r.reports.items[0]!.match!.parts.filter((p) => p.hit).map((p) => p.text)).toEqual([word, "Kraków"]);
    expect(r.reports.items[0]!.projectName).toBe(aiProject.name);
  });

  test("newest first, a page at a time, never a report twice", async () => {
    const word = tag("zebra");
    const filed = [];
    for (let i = 0; i < 5; i++) filed.push((await world.fileReport({ description: `${word} number ${i}` })).reportId);
    const newestFirst = [...filed].reverse();
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const r = await search(world.ctx, { q: word, kind: "reports", limit: 2, cursor });
      seen.push(...ids(r).reports);
      cursor = r.reports.nextCursor ?? undefined;
      if (!cursor) break;
    }
    expect(seen).toEqual(newestFirst);
    expect(cursor).toBeUndefined();
  });

  test("only open cases, when asked: the search from the queue", async () => {
    const word = tag("walrus");
    const open = await world.fileReport({ description: `${word} open` });
    const dismissed = await world.reportIn("DISMISSED", { description: `${word} dismissed` });
    expect(ids(await search(world.ctx, { q: word })).reports.sort()).toEqual([open.reportId, dismissed.reportId].sort());
    const r = await search(world.ctx, { q: word, openOnly: true });
    expect(ids(r).reports).toEqual([open.reportId]);
    expect((await search(world.ctx, { q: word })).reports.items.find((h) => h.reportId === dismissed.reportId)!.case).toMatchObject({ status: "DISMISSED", open: false });
  });

  test("a project filter, and a deleted project's reports and identities are gone from the index", async () => {
    const word = tag("ocelot");
    const second = await world.addProject({ name: tag("Second ") });
    const here = await world.fileReport({ description: word });
    const there = await world.fileReport({ project: second, description: word, subject: { type: "user", externalId: tag("ext-"), display: { name: `${word} Person` } } });
    expect(ids(await search(world.ctx, { q: word, projectId: second.id })).reports).toEqual([there.reportId]);
    expect(ids(await search(world.ctx, { q: word, projectId: world.project.id })).reports).toEqual([here.reportId]);
    expect(ids(await search(world.ctx, { q: word, projectId: second.id })).identities).toHaveLength(1);
    await deleteProject(world.ctx, { projectId: second.id });
    while ((await deleteProjectSlice(world.platform, { projectId: second.id })) === "continued");
    const after = await search(world.ctx, { q: word });
    expect(ids(after)).toEqual({ reports: [here.reportId], identities: [] });
    if (world.store.engine === "sqlite") {
      // FTS5's own check: the index holds exactly the rows' words (nothing left of the deleted ones).
      world.store.writer.run(sql`INSERT INTO reports_search(reports_search, rank) VALUES ('integrity-check', 1)`);
      world.store.writer.run(sql`INSERT INTO identities_search(identities_search, rank) VALUES ('integrity-check', 1)`);
    } else {
      const pg = world.store.db as unknown as { execute(q: SQL): Promise<{ n: number }[]> };
      const [row] = await pg.execute(sql`SELECT count(*)::int AS n FROM pg_indexes WHERE indexname IN ('reports_search_idx', 'identities_search_idx')`);
      expect(row!.n).toBe(2);
    }
  });
});

describe("tenants and input", () => {
  test("another organization's reports and identities are never found, even by the same words", async () => {
    const word = tag("Müllerstraße");
    const mine = await world.fileReport({ description: `lives on ${word}` });
    const theirs = await other.fileReport({ description: `lives on ${word}` });
    const myPerson = await person(tag("t-"), { name: `Max ${word}` });
    const theirPerson = await person(tag("t-"), { name: `Max ${word}` }, other);
    expect(ids(await search(world.ctx, { q: word }))).toEqual({ reports: [mine.reportId], identities: [myPerson] });
    expect(ids(await search(other.ctx, { q: word }))).toEqual({ reports: [theirs.reportId], identities: [theirPerson] });
    // Naming the other organization's project finds nothing rather than its rows.
    expect(ids(await search(world.ctx, { q: word, projectId: other.project.id }))).toEqual({ reports: [], identities: [] });
  });

  test("bad input is a 400: no words, too many, a cursor without its kind, a cursor of nothing", async () => {
    // One call at a time: a refusal made while another is awaited would be unhandled meanwhile.
    for (const call of [
      () => search(world.ctx, { q: "   " }),
      () => search(world.ctx, { q: "a b c d e f g h i" }),
      () => search(world.ctx, { q: "abc", cursor: "123" }),
      () => search(world.ctx, { q: "abc", kind: "reports", cursor: "not-a-cursor" }),
      () => search(world.ctx, { q: "abc", kind: "identities", cursor: "' OR 1=1" }),
    ]) {
      expect((await refusal(call())).http).toBe(400);
    }
    // Punctuation alone searches nothing (and is no error); quotes and FTS syntax are words.
    expect(ids(await search(world.ctx, { q: "- * ?" }))).toEqual({ reports: [], identities: [] });
    for (const q of ['"', 'NEAR(a b)', "a OR b", "x:*", "(", "'; DROP TABLE reports; --"]) {
      const r = await search(world.ctx, { q });
      expect(Array.isArray(r.reports.items)).toBe(true);
    }
  });

  test("excerpts mark each hit at the start of a word, whatever its accents", () => {
    const parts = excerptParts("Herr Müller met MULLER and Kemuller", ["muller"]);
    expect(parts!.filter((p) => p.hit).map((p) => p.text)).toEqual(["Müller", "MULLER"]);
    expect(parts!.map((p) => p.text).join("")).toBe("Herr Müller met MULLER and Kemuller");
    expect(excerptParts("nothing here", ["muller"])).toBeNull();
    const strokes = excerptParts("Łukasz met ØDEGAARD and Straßer", ["lukasz", "odegaard", "strasser"]);
    expect(strokes!.filter((p) => p.hit).map((p) => p.text)).toEqual(["Łukasz", "ØDEGAARD", "Straßer"]);
  });
});

describe("closed cases", () => {
  test("the most recently decided first, by status, decision, moderator and date, paged, with the total", async () => {
    const project = await world.addProject({ name: tag("Closed ") });
    const bob = await addUser(world.ctx, { email: `${tag("bob")}@example.com`, passwordHash: "x", role: "moderator" });
    const bobCtx = world.as({ type: "user", id: bob.id });
    const day = 86_400_000;
    const start = world.clock.now();

    const resolved = await world.reportIn("RESOLVED", { project });
    world.clock.advance(day);
    const dismissedByBob = await world.fileReport({ project });
    await decideOnReport(bobCtx, { reportId: dismissedByBob.reportId, decision: { action: "dismiss", reason: "duplicate" } });
    world.clock.advance(day);
    const appealed = await world.reportIn("APPEALED", { project });
    world.clock.advance(day);
    await world.fileReport({ project }); // still open: never listed

    const all = await closedCases(world.ctx, { projectId: project.id });
    expect(all.items.map((c) => c.id)).toEqual([appealed.caseId, dismissedByBob.caseId, resolved.caseId]);
    expect(all.total).toBe(3);
    expect(all.items[1]).toMatchObject({
      status: "DISMISSED",
      reasons: ["spam"],
      decision: { action: "dismiss", code: "duplicate", by: { type: "user", id: bob.id, email: bob.email } },
    });
    expect(all.items[2]!.decision).toMatchObject({ action: "resolve", code: "SPAM_CONFIRMED", by: { type: "user", id: world.ctx.actor.id } });

    const only = async (f: Parameters<typeof closedCases>[1]) => (await closedCases(world.ctx, { projectId: project.id, ...f })).items.map((c) => c.id);
    expect(await only({ status: "DISMISSED" })).toEqual([dismissedByBob.caseId]);
    expect(await only({ status: "APPEALED" })).toEqual([appealed.caseId]);
    expect(await only({ decision: "resolve" })).toEqual([appealed.caseId, resolved.caseId]);
    expect(await only({ decidedBy: bob.id })).toEqual([dismissedByBob.caseId]);
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(await only({ decidedFrom: iso(start + day), decidedBefore: iso(start + 2 * day) })).toEqual([dismissedByBob.caseId]);
    expect(await only({ decidedFrom: iso(start + day) })).toEqual([appealed.caseId, dismissedByBob.caseId]);
    expect(await only({ decidedBefore: iso(start + day) })).toEqual([resolved.caseId]);

    const first = await closedCases(world.ctx, { projectId: project.id, limit: 2 });
    expect(first.items.map((c) => c.id)).toEqual([appealed.caseId, dismissedByBob.caseId]);
    expect(first.total).toBe(3);
    const second = await closedCases(world.ctx, { projectId: project.id, limit: 2, cursor: first.nextCursor! });
    expect(second.items.map((c) => c.id)).toEqual([resolved.caseId]);
    expect(second.nextCursor).toBeNull();

    // Only the caller's organization.
    const theirs = await other.reportIn("RESOLVED");
    expect((await closedCases(world.ctx, {})).items.map((c) => c.id)).not.toContain(theirs.caseId);
    expect((await closedCases(other.ctx, {})).items.map((c) => c.id)).toEqual([theirs.caseId]);
  });

  test("bad filters are a 400", async () => {
    const at = new Date(world.clock.now()).toISOString();
    for (const call of [
      closedCases(world.ctx, { decidedFrom: at, decidedBefore: at }),
      closedCases(world.ctx, { decidedFrom: "yesterday" }),
      closedCases(world.ctx, { cursor: "nope" }),
    ]) {
      expect((await refusal(call)).http).toBe(400);
    }
  });
});

describe("the migrations", () => {
  test("indexes the reports and identities that were there before it", async () => {
    const store = await unmigratedStore();
    try {
      const list = store.engine === "postgres" ? embeddedPgMigrations : embeddedMigrations;
      const before = list.findIndex((m) => m.tag.endsWith("_search"));
      expect(before).toBeGreaterThan(0);
      await migrateStore(store, { count: before });
      await insertOldRows(store, { name: "Zoë Ångström", externalId: "U-2048", description: "older than search", content: "Selling Fjörd tickets" });
      const ctx: DomainContext = domainContext(store, fakeClock(), { type: "system", id: null }, "o-old");
      expect(await migrateStore(store)).toBe(list.length - before);
      expect(ids(await search(ctx, { q: "zoe angstrom" })).identities).toHaveLength(1);
      expect(ids(await search(ctx, { q: "2048" })).identities).toHaveLength(1);
      expect(ids(await search(ctx, { q: "fjord tickets" })).reports).toHaveLength(1);
      expect(ids(await search(ctx, { q: "OLDER" })).reports).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  test("the folding's migration re-indexes the rows already there: Łukasz, Ødegaard and Straße are found without their strokes", async () => {
    const store = await unmigratedStore();
    try {
      const list = store.engine === "postgres" ? embeddedPgMigrations : embeddedMigrations;
      const before = list.findIndex((m) => m.tag.endsWith("_search_text"));
      expect(before).toBeGreaterThan(0);
      await migrateStore(store, { count: before });
      await insertOldRows(store, { name: "Łukasz Ødegaard", externalId: "U-4096", description: "plain ASCII words", content: "Lives on Hauptstraße, café Ærø" });
      const ctx: DomainContext = domainContext(store, fakeClock(), { type: "system", id: null }, "o-old");
      expect(await migrateStore(store)).toBe(list.length - before);
      for (const q of ["lukasz", "odegaard", "ŁUKASZ ØDEGAARD", "4096"]) expect({ q, n: ids(await search(ctx, { q })).identities.length }).toEqual({ q, n: 1 });
      for (const q of ["hauptstrasse", "cafe aero", "plain ascii", "Hauptstraße"]) expect({ q, n: ids(await search(ctx, { q })).reports.length }).toEqual({ q, n: 1 });
      if (store.engine === "sqlite") {
        // FTS5's own check: the index holds exactly what its source views give.
        store.writer.run(sql`INSERT INTO reports_search(reports_search, rank) VALUES ('integrity-check', 1)`);
        store.writer.run(sql`INSERT INTO identities_search(identities_search, rank) VALUES ('integrity-check', 1)`);
      }
    } finally {
      await store.close();
    }
  });
});

/**
 * An organization, a project, an identity, a case and a report in plain SQL, as the schema of the
 * search migrations' time has them: the domain's code of today writes today's columns, which
 * later migrations add.
 */
async function insertOldRows(store: Store, t: { name: string; externalId: string; description: string; content: string }): Promise<void> {
  const db = store.db as unknown as { execute(q: SQL): Promise<unknown>; run(q: SQL): unknown };
  const run = (q: SQL) => store.transaction(async () => void (await (store.engine === "postgres" ? db.execute(q) : db.run(q))));
  const now = Date.now();
  await run(sql`INSERT INTO organizations (id, slug, name, plan, created_at) VALUES ('o-old', 'backfill', 'Backfill', 'enterprise', ${now})`);
  await run(sql`INSERT INTO projects (id, org_id, name, ai_enabled, ai_threshold, scan_links, categories_version, created_at, updated_at)
    VALUES ('p-old', 'o-old', 'Old', 0, 70, 0, 0, ${now}, ${now})`);
  await run(sql`INSERT INTO identities (id, project_id, type, external_id, name, username, report_count, created_at, updated_at)
    VALUES ('i-old', 'p-old', 'user', ${t.externalId}, ${t.name}, NULL, 1, ${now}, ${now})`);
  await run(sql`INSERT INTO cases (id, org_id, project_id, status, bucket, is_open, content_type, content_external_id, subject_identity_id, report_count, created_at, updated_at, last_report_at)
    VALUES ('c-old', 'o-old', 'p-old', 'OPEN', 'normal', 1, 'post', 'p-1', 'i-old', 1, ${now}, ${now}, ${now})`);
  await run(sql`INSERT INTO reports (id, org_id, project_id, case_id, status, severity, reasons, description, automated, subject_identity_id, subject_external_id, content_type, content_external_id, content, created_us, updated_at)
    VALUES ('r-old', 'o-old', 'p-old', 'c-old', 'OPEN', 'LOW', '["spam"]', ${t.description}, 0, 'i-old', ${t.externalId}, 'post', 'p-1', ${t.content}, ${now * 1000}, ${now})`);
}

/** A store of the pass's engine with no migration applied yet (closed, and its database dropped, by close()). */
async function unmigratedStore(): Promise<Store> {
  if (!TEST_PG_URL) return openSqliteStore(":memory:");
  const database = await createTestDatabase();
  const store = openPostgresStore({ url: database.url, poolSize: 2 });
  return {
    ...store,
    async close() {
      await store.close();
      await database.drop();
    },
  };
}
