/**
 * Known harmful media matched by hash (issue 43, docs/media.md), through the front door: banks
 * and their entries through the organization routes (files imported and exported), reports
 * carrying media (hashes only, or a URL served by a loopback server and fetched by the media
 * job), matches recorded with their bank, entry, distance and quality, the bank's action on the
 * case, negative banks, quarantine, verdicts and precision, and bad input answered with clear
 * errors. The PDQ hashes are those of ThreatExchange's test images (test/fixtures/pdq/).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { OrgClient, SdkClient } from "../clients/typescript/index.ts";
import { decodeImage } from "../src/domain/media/decode.ts";
import { pdqHash } from "../src/domain/media/pdq.ts";
import { demoAdmin, expectRefused, newUser, type DashboardUser } from "./helpers/dashboard.ts";
import { pngBomb, upload } from "./helpers/attachments.ts";
import { rawDb } from "./helpers/raw-db.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

const FIXTURES = join(import.meta.dir, "fixtures", "pdq");
const file = (name: string) => new Uint8Array(readFileSync(join(FIXTURES, name)));
const pdqOf = (name: string) => pdqHash(decodeImage(file(name)));
const sha256 = (bytes: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
const md5 = (bytes: Uint8Array | string) => new Bun.CryptoHasher("md5").update(bytes).digest("hex");
const unique = () => crypto.randomUUID().slice(0, 8);
/** A random SHA-256-sized hex digest (no bank holds it unless added). */
const randomHex = (digits: number) => Array.from(crypto.getRandomValues(new Uint8Array(digits / 2)), (b) => b.toString(16).padStart(2, "0")).join("");

/** The platform's image host: the bridge photographs, a cut one, a bomb, a missing one. */
const ORIGINAL = file("bridge-aaa-orig.jpg");
const host = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    const path = new URL(req.url).pathname;
    const image = (bytes: Uint8Array, type: string) => new Response(bytes.slice(), { headers: { "content-type": type } });
    if (path === "/sharpened.jpg") return image(file("bridge-sharpen-a-little.jpg"), "image/jpeg");
    if (path === "/truncated.jpg") return image(ORIGINAL.subarray(0, Math.floor(ORIGINAL.length / 2)), "image/jpeg");
    if (path === "/bomb.png") return image(pngBomb(), "image/png");
    return new Response("no such image", { status: 404 });
  },
});
const hosted = (path: string) => `http://127.0.0.1:${host.port}${path}`;

/** A webhook receiver: each event's endpoint (by path), type and data. */
const received: { path: string; type: string; data: Record<string, unknown> }[] = [];
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as { type: string; data: Record<string, unknown> };
    received.push({ path: new URL(req.url).pathname, type: body.type, data: body.data });
    return new Response(null, { status: 204 });
  },
});

let server: TestServer;
let org: OrgClient;
let sdk: SdkClient;
let admin: DashboardUser;
let moderator: DashboardUser;
let orgSlug: string;
let projectId: string;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1", FLAGSTAFF_JOB_POLL_MS: "50", FLAGSTAFF_REPORT_RATE_LIMIT: "1000" });
  org = await server.orgClient();
  sdk = await server.sdkClient();
  admin = await demoAdmin(server);
  moderator = await newUser(server, "moderator", "Mo");
  ({ orgSlug, projectId } = server.demo);
});

afterAll(async () => {
  await server?.dispose();
  host.stop(true);
  receiver.stop(true);
});

type BankInput = { name: string; negative?: boolean; action?: { type: "record" } | { type: "route"; queueId: string } | { type: "tag"; tag: string } | { type: "bucket"; bucket: "normal" | "high" | "emergency" } | { type: "escalate"; team: "safety" | "legal" | "senior_moderator" }; quarantine?: { count: number; windowSeconds: number } | null; pdqDistance?: number; qualityFloor?: number };

async function createBank(input: BankInput) {
  const r = await org.POST("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: { orgSlug, projectId } }, body: input });
  expect(r.response.status).toBe(201);
  return r.data!.bank;
}

async function addEntry(bankId: string, entry: { signalType: "sha256" | "md5" | "pdq"; value: string; origin?: string; metadata?: Record<string, string> }) {
  const r = await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId } }, body: entry });
  expect(r.response.status).toBe(201);
  return r.data!.entry;
}

type Media = { url?: string; sha256?: string; md5?: string; pdq?: string; pdqQuality?: number; keep?: boolean };

/** Files a report with media and answers its case. */
async function report(media: Media[]): Promise<{ reportId: string; caseId: string }> {
  const r = await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { reason: "spam", target: { contentType: "post", contentExternalId: `post-${unique()}` }, media } });
  expect(r.response.status).toBe(201);
  const reportId = r.data!.report.id;
  const got = await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } });
  return { reportId, caseId: got.data!.report.caseId };
}

const caseMatches = async (caseId: string) => {
  const r = await org.GET("/organizations/{orgSlug}/cases/{caseId}/media-matches", { params: { path: { orgSlug, caseId } } });
  expect(r.response.status).toBe(200);
  return r.data!;
};

/** Waits until every media item of the case was processed, and the media job's transaction with its matches committed. */
async function processed(caseId: string, matches: number) {
  return until(`the case's media processed with ${matches} matches`, async () => {
    const m = await caseMatches(caseId);
    return m.media.every((x) => x.matchedAt !== null || x.status === "failed") && m.matches.length >= matches ? m : null;
  });
}

const tagsOf = async (caseId: string) => {
  const events = (await admin.caseDetail(caseId)).audit.filter((e) => e.action === "CASE_TAGS_CHANGED");
  return events.length ? ((events[0]!.after as { tags: string[] }).tags ?? []) : [];
};

describe("banks and their entries (organization routes)", () => {
  test("create (201), list, get, change, a taken name (409), delete; moderators read, only admins change", async () => {
    const name = `Bank ${unique()}`;
    const bank = await createBank({ name });
    expect(bank).toMatchObject({ name, enabled: true, negative: false, action: { type: "record" }, pdqDistance: 31, qualityFloor: 50, quarantine: null, entries: 0, precision: null });
    const again = await org.POST("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: { orgSlug, projectId } }, body: { name } });
    expect(again.response.status).toBe(409);
    expect(again.error?.error).toContain("name");
    const changed = await org.PATCH("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId: bank.id } }, body: { pdqDistance: 20, quarantine: { count: 5, windowSeconds: 3600 } } });
    expect(changed.data!.bank).toMatchObject({ pdqDistance: 20, quarantine: { count: 5, windowSeconds: 3600 }, name });
    const listed = await org.GET("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: { orgSlug, projectId } } });
    expect(listed.data!.banks.map((b) => b.id)).toContain(bank.id);

    // A moderator reads banks and may not change them.
    expect((await moderator.trpc.mediaBanks.get.query({ orgSlug, bankId: bank.id })).bank.name).toBe(name);
    await expectRefused(moderator.trpc.mediaBanks.create.mutate({ orgSlug, projectId, name: `x${unique()}` }), "FORBIDDEN");
    await expectRefused(moderator.trpc.mediaBanks.addEntry.mutate({ orgSlug, bankId: bank.id, signalType: "md5", value: md5("x") }), "FORBIDDEN");

    const banked = md5(`banked ${unique()}`);
    await addEntry(bank.id, { signalType: "md5", value: banked });
    const deleted = await org.DELETE("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId: bank.id } } });
    expect(deleted.data).toEqual({ deleted: true });
    // At once: a 404, no longer listed, its name free, and nothing matches it.
    expect((await org.GET("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId: bank.id } } })).response.status).toBe(404);
    expect((await org.GET("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: { orgSlug, projectId } } })).data!.banks.map((b) => b.id)).not.toContain(bank.id);
    const { caseId } = await report([{ md5: banked }]);
    expect((await processed(caseId, 0)).matches).toEqual([]);
    const remade = await createBank({ name });
    expect(remade.id).not.toBe(bank.id);
    // Its entries and its row are deleted in the background.
    const db = await rawDb(server.dbPath);
    try {
      await until("the deleted bank's entries and row gone", async () => {
        const entries = await db.get<{ n: number }>("SELECT count(*) AS n FROM media_bank_entries WHERE bank_id = ?", bank.id);
        const rows = await db.get<{ n: number }>("SELECT count(*) AS n FROM media_banks WHERE id = ?", bank.id);
        return Number(entries!.n) === 0 && Number(rows!.n) === 0;
      });
    } finally {
      await db.close();
    }
  });

  test("entries one by one (201; the same signal twice 409; a malformed hash 400), files imported with each bad line's number, exported with their origin", async () => {
    const bank = await createBank({ name: `Files ${unique()}` });
    const bankId = bank.id;
    const one = await addEntry(bankId, { signalType: "md5", value: md5("one").toUpperCase(), origin: "hand", metadata: { case: "A-1" } });
    expect(one).toMatchObject({ signalType: "md5", value: md5("one"), origin: "hand", metadata: { case: "A-1" }, quarantinedAt: null });
    const twice = await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId } }, body: { signalType: "md5", value: md5("one") } });
    expect(twice.response.status).toBe(409);
    const malformed = await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId } }, body: { signalType: "pdq", value: "not-a-hash" } });
    expect(malformed.response.status).toBe(400);
    expect(malformed.error?.error).toContain("pdq");

    // HMA's file exchange: signal_type,signal_value and metadata columns; bad lines named by their number.
    const csv = [
      "signal_type,signal_value,source_case",
      `pdq,${pdqOf("bridge-aaa-orig.jpg").hash},NCMEC-1`,
      `video_md5,${md5("video")},NCMEC-2`,
      "pdq,zz-not-hex,NCMEC-3",
      `sha256,${sha256("three")}`,
      `teapot,${md5("x")},NCMEC-5`,
      `md5,${md5("one")},dup`,
    ].join("\n");
    const imported = await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/import", { params: { path: { orgSlug, bankId } }, body: { format: "csv", content: csv, origin: "test list v1" } });
    expect(imported.response.status).toBe(200);
    expect(imported.data!.added).toBe(2);
    expect(imported.data!.unchanged).toBe(1);
    expect(imported.data!.errors.map((e) => e.line)).toEqual([4, 5, 6]);
    expect(imported.data!.errors[0]!.error).toContain("pdq");
    expect(imported.data!.errors[2]!.error).toContain("unknown signal type");
    const noHeader = await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/import", { params: { path: { orgSlug, bankId } }, body: { format: "csv", content: "a,b\n1,2" } });
    expect(noHeader.response.status).toBe(400);
    expect(noHeader.error?.error).toContain("signal_type");

    const exported = await org.GET("/organizations/{orgSlug}/media-banks/{bankId}/export", { params: { path: { orgSlug, bankId }, query: { format: "csv" } } });
    expect(exported.data!.entries).toBe(3);
    const lines = exported.data!.content.trim().split(/\r?\n/);
    expect(lines[0]).toBe("signal_type,signal_value,origin,case,source_case");
    expect(lines).toContain(`pdq,${pdqOf("bridge-aaa-orig.jpg").hash},test list v1,,NCMEC-1`);
    expect(lines).toContain(`md5,${md5("video")},test list v1,,NCMEC-2`);

    // JSON: exported and imported into another bank, origin and metadata kept.
    const json = await org.GET("/organizations/{orgSlug}/media-banks/{bankId}/export", { params: { path: { orgSlug, bankId }, query: { format: "json" } } });
    const copy = await createBank({ name: `Copy ${unique()}` });
    const back = await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/import", { params: { path: { orgSlug, bankId: copy.id } }, body: { format: "json", content: json.data!.content } });
    expect(back.data).toEqual({ added: 3, unchanged: 0, errors: [] });
    const badJson = await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/import", {
      params: { path: { orgSlug, bankId: copy.id } },
      body: { format: "json", content: JSON.stringify([{ signalType: "md5", value: md5("fresh") }, { signalType: "md5", value: "short" }, { signal_type: "sha256", signal_value: sha256("hma names") }]) },
    });
    expect(badJson.data).toEqual({ added: 2, unchanged: 0, errors: [{ line: 2, error: "not a md5 hash (32 hexadecimal digits)" }] });
    const notJson = await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/import", { params: { path: { orgSlug, bankId: copy.id } }, body: { format: "json", content: "{ nope" } });
    expect(notJson.response.status).toBe(400);
    const entries = await org.GET("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId: copy.id }, query: { limit: 100 } } });
    expect(entries.data!.entries.find((e) => e.signalType === "md5" && e.value === md5("one"))).toMatchObject({ origin: "hand", metadata: { case: "A-1" } });

    // Downloaded as it is written (…/export/download): the same text as the JSON answer's content,
    // as a file; an admin's session may, a moderator's may not.
    const download = (format: string, headers: Record<string, string> = { authorization: `Bearer ${server.demo.secretKey}` }) =>
      fetch(`${server.url}/api/v1/organizations/${orgSlug}/media-banks/${bankId}/export/download?format=${format}`, { headers });
    for (const [format, type, whole] of [["csv", "text/csv; charset=utf-8", exported.data!.content], ["json", "application/json; charset=utf-8", json.data!.content]] as const) {
      const res = await download(format);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(type);
      expect(res.headers.get("content-disposition")).toStartWith("attachment;");
      expect(res.headers.get("content-disposition")).toContain(`.${format}`);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(await res.text()).toBe(whole);
    }
    expect((await download("csv", { cookie: admin.cookie })).status).toBe(200);
    const refused = await download("csv", { cookie: moderator.cookie });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: string }).error).toContain("admin");
    const badFormat = await download("xml");
    expect(badFormat.status).toBe(400);
    expect(((await badFormat.json()) as { error: string }).error).toContain("format");
    const otherBank = await fetch(`${server.url}/api/v1/organizations/${orgSlug}/media-banks/00000000-0000-4000-8000-000000000000/export/download`, { headers: { authorization: `Bearer ${server.demo.secretKey}` } });
    expect(otherBank.status).toBe(404);

    const removed = await org.DELETE("/organizations/{orgSlug}/media-banks/{bankId}/entries/{entryId}", { params: { path: { orgSlug, bankId, entryId: one.id } } });
    expect(removed.data).toEqual({ deleted: true });
    expect((await org.GET("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId } } })).data!.bank.entries).toBe(2);
    // Deleted with their entries: the bridge's PDQ hash is the other tests' to bank.
    for (const id of [bankId, copy.id]) expect((await org.DELETE("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId: id } } })).response.status).toBe(200);
  });
});

describe("matching reports' media", () => {
  test("hash-only media match an exact entry and a PDQ entry (distance and quality recorded); the bank's action routes the case; too weak a hash and another picture do not match", async () => {
    const queue = (await org.POST("/organizations/{orgSlug}/queues", { params: { path: { orgSlug } }, body: { name: `Known media ${unique()}` } })).data!.queue;
    const exact = await createBank({ name: `Exact ${unique()}`, action: { type: "route", queueId: queue.id } });
    const perceptual = await createBank({ name: `PDQ ${unique()}`, action: { type: "tag", tag: "known-bridge" } });
    const digest = sha256(`harmful ${unique()}`);
    const exactEntry = await addEntry(exact.id, { signalType: "sha256", value: digest, origin: "list A" });
    const original = pdqOf("bridge-aaa-orig.jpg");
    const pdqEntry = await addEntry(perceptual.id, { signalType: "pdq", value: original.hash, origin: "list B", metadata: { label: "bridge" } });

    const blurred = pdqOf("bridge-square-256x256.jpg");
    const { caseId } = await report([{ sha256: digest }, { pdq: blurred.hash, pdqQuality: blurred.quality }]);
    const seen = await processed(caseId, 2);
    const byBank = (bankId: string) => seen.matches.find((m) => m.bank.id === bankId)!;
    expect(byBank(exact.id)).toMatchObject({ entry: { id: exactEntry.id, signalType: "sha256", origin: "list A" }, distance: null, quality: null, suppressed: false, quarantined: false, status: "pending" });
    expect(byBank(perceptual.id)).toMatchObject({ entry: { id: pdqEntry.id, signalType: "pdq", origin: "list B", metadata: { label: "bridge" } }, quality: 100 });
    expect(byBank(perceptual.id).distance).toBeLessThanOrEqual(31);
    console.log(`PDQ match: bridge-square-256x256.jpg at distance ${byBank(perceptual.id).distance} from the banked original`);
    // The actions: routed to the bank's queue, tagged; both audited on the case.
    await until("the case routed", async () => (await admin.caseDetail(caseId)).case.queueId === queue.id);
    expect(await tagsOf(caseId)).toContain("known-bridge");
    const audit = (await admin.caseDetail(caseId)).audit.map((e) => e.action);
    expect(audit.filter((a) => a === "MEDIA_MATCHED")).toHaveLength(2);

    // Quality under the bank's floor, and another picture (c.png): no match.
    const other = pdqOf("c.png");
    const weak = await report([{ pdq: original.hash, pdqQuality: 40 }, { pdq: other.hash, pdqQuality: other.quality }]);
    const none = await processed(weak.caseId, 0);
    expect(none.media.map((m) => m.status)).toEqual(["hashed", "hashed"]);
    expect(none.matches).toEqual([]);

    // A disabled bank matches nothing (and leaves the bridge to the next test).
    await org.PATCH("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId: perceptual.id } }, body: { enabled: false } });
    const disabled = await report([{ pdq: blurred.hash, pdqQuality: blurred.quality }]);
    expect((await processed(disabled.caseId, 0)).matches).toEqual([]);
  });

  test("intake matches against the index it holds, and an entry added since is matched by the very next report (the banks' version remembered on SQLite is forgotten by the change)", async () => {
    const bank = await createBank({ name: `Fresh ${unique()}` });
    await addEntry(bank.id, { signalType: "sha256", value: sha256(`known ${unique()}`) });
    // The first report after the change goes to the media job, which builds the index again.
    await processed((await report([{ sha256: sha256(unique()) }])).caseId, 0);
    // Held now: a report whose media match nothing is done within its own request (no job).
    const atOnce = await report([{ sha256: sha256(unique()) }]);
    const done = await caseMatches(atOnce.caseId);
    expect(done.media[0]!.matchedAt).not.toBeNull();
    expect(done.matches).toEqual([]);
    // An entry added now: the next report carrying it is matched, not passed by a stale index.
    const digest = sha256(`added ${unique()}`);
    const entry = await addEntry(bank.id, { signalType: "sha256", value: digest });
    const next = await report([{ sha256: digest }]);
    expect((await processed(next.caseId, 1)).matches.map((m) => m.entry.id)).toEqual([entry.id]);
  });

  test("a URL is fetched through the safe fetch, hashed (SHA-256, MD5, PDQ) and matched; not kept unless asked; kept as an attachment when asked", async () => {
    const bank = await createBank({ name: `URL ${unique()}` });
    await addEntry(bank.id, { signalType: "pdq", value: pdqOf("bridge-aaa-orig.jpg").hash });
    const sharpened = file("bridge-sharpen-a-little.jpg");
    const { caseId } = await report([{ url: hosted("/sharpened.jpg") }, { url: hosted("/sharpened.jpg"), keep: true }]);
    const seen = await processed(caseId, 2);
    for (const m of seen.media) expect(m).toMatchObject({ status: "hashed", sha256: sha256(sharpened), md5: md5(sharpened), pdq: pdqOf("bridge-sharpen-a-little.jpg").hash, pdqQuality: 100, error: null });
    expect(seen.matches.every((m) => m.bank.id === bank.id && m.distance! <= 31)).toBe(true);
    // Only the one with keep: true became an attachment.
    const attachments = await org.GET("/organizations/{orgSlug}/cases/{caseId}/attachments", { params: { path: { orgSlug, caseId } } });
    expect(attachments.data!.attachments).toHaveLength(1);
    expect(attachments.data!.attachments[0]!.sha256).toBe(sha256(sharpened));
    expect(seen.media.filter((m) => m.attachmentId !== null).map((m) => m.attachmentId)).toEqual([attachments.data!.attachments[0]!.id]);
  });

  test("bad input: a malformed hash is a 400 naming the field; a truncated image, a bomb and a missing URL are recorded with why, never a 500", async () => {
    const bad = await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { reason: "spam", subject: { type: "user", externalId: "u" }, media: [{ sha256: "abc" }] } });
    expect(bad.response.status).toBe(400);
    expect(bad.error?.error).toContain("media[0].sha256");
    const noQuality = await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { reason: "spam", subject: { type: "user", externalId: "u" }, media: [{ pdq: pdqOf("c.png").hash }] } });
    expect(noQuality.response.status).toBe(400);
    expect(noQuality.error?.error).toContain("pdqQuality");
    const notHttp = await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { reason: "spam", subject: { type: "user", externalId: "u" }, media: [{ url: "file:///etc/passwd" }] } });
    expect(notHttp.response.status).toBe(400);

    const bank = await createBank({ name: `Cut ${unique()}` });
    const cut = ORIGINAL.subarray(0, Math.floor(ORIGINAL.length / 2));
    await addEntry(bank.id, { signalType: "sha256", value: sha256(cut) });
    const { caseId } = await report([{ url: hosted("/truncated.jpg") }, { url: hosted("/bomb.png") }, { url: hosted("/missing.jpg") }]);
    const seen = await processed(caseId, 1);
    const [truncated, bomb, missing] = seen.media;
    expect(truncated).toMatchObject({ status: "refused", sha256: sha256(cut), pdq: null });
    expect(truncated!.error).toContain("truncated");
    expect(bomb).toMatchObject({ status: "refused", pdq: null });
    expect(bomb!.error).toContain("too_many_pixels");
    expect(missing).toMatchObject({ status: "failed", sha256: null });
    expect(missing!.error).toContain("404");
    // The truncated file still matched by its SHA-256.
    expect(seen.matches.map((m) => m.bank.id)).toEqual([bank.id]);
  });
});

describe("a case's media a page at a time", () => {
  test("pages of `limit` by `nextCursor`, each item once in order, with the totals; the matches whatever the page; a bad page a 400", async () => {
    const bank = await createBank({ name: `Paged ${unique()}` });
    const matched = randomHex(64);
    await addEntry(bank.id, { signalType: "sha256", value: matched });
    const media = Array.from({ length: 7 }, (_, i) => ({ sha256: i === 5 ? matched : randomHex(64) }));
    const { caseId } = await report(media);
    await processed(caseId, 1);
    const page = async (query: { limit?: number; cursor?: string }) => {
      const r = await org.GET("/organizations/{orgSlug}/cases/{caseId}/media-matches", { params: { path: { orgSlug, caseId }, query } });
      expect(r.response.status).toBe(200);
      return r.data!;
    };
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const p = await page({ limit: 3, ...(cursor ? { cursor } : {}) });
      expect({ mediaTotal: p.mediaTotal, matchesTotal: p.matchesTotal, matches: p.matches.length }).toEqual({ mediaTotal: 7, matchesTotal: 1, matches: 1 });
      seen.push(...p.media.map((m) => m.id));
      sizes.push(p.media.length);
      cursor = p.nextCursor ?? undefined;
    } while (cursor);
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(7);
    // The match is listed on every page, its media item on one of them.
    expect(seen).toContain((await page({ limit: 1 })).matches[0]!.mediaId);
    // The default page holds them all here; no cursor on the last page.
    const whole = await page({});
    expect(whole.media.map((m) => m.id)).toEqual(seen);
    expect(whole.nextCursor).toBeNull();
    for (const limit of [0, 501]) {
      const bad = await org.GET("/organizations/{orgSlug}/cases/{caseId}/media-matches", { params: { path: { orgSlug, caseId }, query: { limit } } });
      expect(bad.response.status).toBe(400);
      expect(bad.error?.error).toContain("limit");
    }
  });
});

describe("a report moved into another case", () => {
  test("takes its attachments, media items and their matches along: the case it joined shows them, the one it left none", async () => {
    const bank = await createBank({ name: `Moved ${unique()}` });
    const digest = sha256(`moved ${unique()}`);
    await addEntry(bank.id, { signalType: "sha256", value: digest });
    await addEntry(bank.id, { signalType: "sha256", value: sha256(ORIGINAL) });
    const target = { contentType: "post", contentExternalId: `moved-${unique()}` };
    const filed = await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { reason: "spam", target, media: [{ sha256: digest }] } });
    expect(filed.response.status).toBe(201);
    const reportId = filed.data!.report.id;
    const first = (await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } })).data!.report.caseId;
    const up = await upload(server, `/organizations/${orgSlug}/reports/${reportId}/attachments`, ORIGINAL, { fileName: "bridge.jpg" });
    expect(up.status).toBe(201);
    const before = await processed(first, 2);
    expect(before.media).toHaveLength(2);
    // Dismissed, its case closes; the next report about the target opens another; escalating the
    // first report then moves it into that open case.
    expect((await sdk.POST("/reports/{reportId}/dismiss", { params: { path: { reportId } }, body: { reason: "other" } })).response.status).toBe(200);
    const next = await sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { reason: "spam", target } });
    const newer = (await sdk.GET("/reports/{reportId}", { params: { path: { reportId: next.data!.report.id } } })).data!.report.caseId;
    expect(newer).not.toBe(first);
    expect((await sdk.POST("/reports/{reportId}/escalate", { params: { path: { reportId } } })).response.status).toBe(200);
    expect((await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } })).data!.report.caseId).toBe(newer);

    const attachmentsOf = async (caseId: string) => (await org.GET("/organizations/{orgSlug}/cases/{caseId}/attachments", { params: { path: { orgSlug, caseId } } })).data!.attachments.map((a) => a.id);
    expect(await attachmentsOf(newer)).toEqual([up.body.attachment.id]);
    expect(await attachmentsOf(first)).toEqual([]);
    const there = await caseMatches(newer);
    expect(there.media.map((m) => m.id).sort()).toEqual(before.media.map((m) => m.id).sort());
    expect(there.matches.map((m) => [m.id, m.caseId]).sort()).toEqual(before.matches.map((m) => [m.id, newer]).sort());
    expect(await caseMatches(first)).toEqual({ media: [], mediaTotal: 0, nextCursor: null, matches: [], matchesTotal: 0 });
  });
});

describe("rules on the media facts", () => {
  test("a report.media_matched rule reads media.matches, media.banks and media.distance, and routes the case", async () => {
    const queue = (await org.POST("/organizations/{orgSlug}/queues", { params: { path: { orgSlug } }, body: { name: `Near matches ${unique()}` } })).data!.queue;
    const bank = await createBank({ name: `Ruled ${unique()}` });
    const other = pdqOf("bridge-sharpen-a-little.jpg");
    await addEntry(bank.id, { signalType: "pdq", value: pdqOf("bridge-aaa-orig.jpg").hash });
    const rule = await org.POST("/organizations/{orgSlug}/rules", {
      params: { path: { orgSlug } },
      body: {
        name: `Near PDQ matches of ${bank.name}`,
        trigger: "report.media_matched",
        mode: "live",
        when: { all: [{ field: "media.matches", op: "gte", value: 1 }, { field: "media.banks", op: "includes", value: bank.name }, { field: "media.distance", op: "lte", value: 31 }] },
        then: [{ type: "route", queueId: queue.id }],
      },
    });
    expect(rule.response.status).toBe(201);
    const { caseId } = await report([{ pdq: other.hash, pdqQuality: other.quality }]);
    await processed(caseId, 1);
    await until("the case routed by the rule", async () => (await admin.caseDetail(caseId)).case.queueId === queue.id);
    const routed = (await admin.caseDetail(caseId)).audit.find((e) => e.action === "CASE_QUEUE_CHANGED")!;
    expect(routed.data).toMatchObject({ ruleId: rule.data!.rule.id, automated: true });
    // A report whose media match nothing is not routed (its rule never runs).
    const plain = await report([{ sha256: sha256(`nothing ${unique()}`) }]);
    await processed(plain.caseId, 0);
    expect((await admin.caseDetail(plain.caseId)).case.queueId).not.toBe(queue.id);
    await org.PATCH("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId: bank.id } }, body: { enabled: false } });
  });
});

describe("the media.matched webhook event", () => {
  test("goes to an endpoint that lists it, with the bank, the entry's origin and the distance; never to an endpoint without a filter", async () => {
    const listed = await org.POST("/organizations/{orgSlug}/webhook-endpoints", { params: { path: { orgSlug } }, body: { url: `http://127.0.0.1:${receiver.port}/listed`, eventTypes: ["media.matched"] } });
    expect(listed.response.status).toBe(201);
    const unfiltered = await org.POST("/organizations/{orgSlug}/webhook-endpoints", { params: { path: { orgSlug } }, body: { url: `http://127.0.0.1:${receiver.port}/all` } });
    expect(unfiltered.response.status).toBe(201);
    const bank = await createBank({ name: `Announced ${unique()}`, action: { type: "tag", tag: "announced" } });
    const digest = sha256(`announced ${unique()}`);
    const entry = await addEntry(bank.id, { signalType: "sha256", value: digest, origin: "list C" });
    const { caseId, reportId } = await report([{ sha256: digest }]);
    const match = (await processed(caseId, 1)).matches[0]!;
    const event = await until("the media.matched event", async () => received.find((r) => r.type === "media.matched" && r.data.matchId === match.id));
    expect(event.path).toBe("/listed");
    expect(event.data).toMatchObject({ caseId, reportId, bank: { id: bank.id, negative: false }, entry: { id: entry.id, signalType: "sha256", origin: "list C" }, distance: null, suppressed: false, quarantined: false, action: "tag" });
    // Both endpoints are told of something else: an action (the unfiltered one's events), so its silence about the match is the filter's.
    const action = await org.POST("/organizations/{orgSlug}/projects/{projectId}/enforcement-actions", { params: { path: { orgSlug, projectId } }, body: { kind: "warning", reason: "Witness", identity: { type: "user", externalId: `w-${unique()}` } } });
    expect(action.response.status).toBe(201);
    await until("the unfiltered endpoint's event", async () => received.some((r) => r.path === "/all"));
    expect(received.filter((r) => r.path === "/all").map((r) => r.type)).not.toContain("media.matched");
    for (const id of [listed.data!.endpoint.id, unfiltered.data!.endpoint.id]) await org.DELETE("/organizations/{orgSlug}/webhook-endpoints/{endpointId}", { params: { path: { orgSlug, endpointId: id } } });
  });
});

describe("the controls shared lists need", () => {
  test("a negative bank's match suppresses the other banks' matches of the same media: recorded, no action", async () => {
    const digest = sha256(`false positive ${unique()}`);
    const positive = await createBank({ name: `Shared list ${unique()}`, action: { type: "tag", tag: "should-not-be-tagged" } });
    const negative = await createBank({ name: `Known false positives ${unique()}`, negative: true });
    await addEntry(positive.id, { signalType: "sha256", value: digest });
    await addEntry(negative.id, { signalType: "sha256", value: digest, origin: "our review" });
    const { caseId } = await report([{ sha256: digest }]);
    const seen = await processed(caseId, 2);
    expect(seen.matches.find((m) => m.bank.id === positive.id)).toMatchObject({ suppressed: true });
    expect(seen.matches.find((m) => m.bank.id === negative.id)).toMatchObject({ suppressed: false, bank: { negative: true } });
    expect(await tagsOf(caseId)).not.toContain("should-not-be-tagged");
  });

  test("quarantine: an entry matching more than the set count within its window stops acting until released", async () => {
    const digest = sha256(`flooding ${unique()}`);
    const bank = await createBank({ name: `Flooded ${unique()}`, action: { type: "tag", tag: "flood" }, quarantine: { count: 2, windowSeconds: 3600 } });
    const entry = await addEntry(bank.id, { signalType: "sha256", value: digest });
    const cases: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { caseId } = await report([{ sha256: digest }]);
      await processed(caseId, 1);
      cases.push(caseId);
    }
    const third = (await caseMatches(cases[2]!)).matches[0]!;
    expect(third.quarantined).toBe(true);
    expect(await tagsOf(cases[1]!)).toContain("flood");
    expect(await tagsOf(cases[2]!)).not.toContain("flood");
    const quarantined = await org.GET("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId: bank.id }, query: { quarantined: "true" } } });
    expect(quarantined.data!.entries.map((e) => e.id)).toEqual([entry.id]);
    expect(quarantined.data!.entries[0]!.quarantineReason).toContain("more than 2");

    // Quarantined: the next report's media matches nothing.
    const fourth = await report([{ sha256: digest }]);
    expect((await processed(fourth.caseId, 0)).matches).toEqual([]);

    // Released by a person: it matches again.
    const released = await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries/{entryId}/release", { params: { path: { orgSlug, bankId: bank.id, entryId: entry.id } } });
    expect(released.data!.entry.quarantinedAt).toBeNull();
    const notQuarantined = await org.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries/{entryId}/release", { params: { path: { orgSlug, bankId: bank.id, entryId: entry.id } } });
    expect(notQuarantined.response.status).toBe(409);
    const fifth = await report([{ sha256: digest }]);
    expect((await processed(fifth.caseId, 1)).matches[0]!.bank.id).toBe(bank.id);
  });

  test("confirm and reject each match (a moderator; audited); rejections counted per bank and entry; the bank's precision", async () => {
    const bank = await createBank({ name: `Precision ${unique()}` });
    const a = sha256(`a ${unique()}`);
    const b = sha256(`b ${unique()}`);
    const entryA = await addEntry(bank.id, { signalType: "sha256", value: a });
    await addEntry(bank.id, { signalType: "sha256", value: b });
    const first = await report([{ sha256: a }, { sha256: b }]);
    const second = await report([{ sha256: a }]);
    const [m1, m2] = (await processed(first.caseId, 2)).matches;
    const [m3] = (await processed(second.caseId, 1)).matches;

    const confirmed = await moderator.trpc.mediaBanks.decideMatch.mutate({ orgSlug, matchId: m1!.id, verdict: "confirmed" });
    expect(confirmed.match).toMatchObject({ status: "confirmed", decidedBy: moderator.id });
    await moderator.trpc.mediaBanks.decideMatch.mutate({ orgSlug, matchId: m2!.id, verdict: "confirmed" });
    const rejected = await org.POST("/organizations/{orgSlug}/media-matches/{matchId}/verdict", { params: { path: { orgSlug, matchId: m3!.id } }, body: { verdict: "rejected" } });
    expect(rejected.data!.match.status).toBe("rejected");
    const again = await org.POST("/organizations/{orgSlug}/media-matches/{matchId}/verdict", { params: { path: { orgSlug, matchId: m3!.id } }, body: { verdict: "rejected" } });
    expect(again.response.status).toBe(409);
    const viewer = await newUser(server, "viewer", "Vi");
    await expectRefused(viewer.trpc.mediaBanks.decideMatch.mutate({ orgSlug, matchId: m3!.id, verdict: "confirmed" }), "FORBIDDEN");

    const view = (await org.GET("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId: bank.id } } })).data!.bank;
    expect(view).toMatchObject({ matches: 3, confirmed: 2, rejected: 1 });
    expect(view.precision).toBeCloseTo(2 / 3, 5);
    const entries = (await org.GET("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId: bank.id } } })).data!.entries;
    const ofA = entries.find((e) => e.id === entryA.id)!;
    expect(ofA).toMatchObject({ matches: 2, rejected: 1 });
    const audit = (await admin.caseDetail(second.caseId)).audit.map((e) => e.action);
    expect(audit).toContain("MEDIA_MATCH_REJECTED");
  });
});
