/**
 * Banking from a decision and the past media check (issue 43, item 5; docs/media.md, "Banking
 * from a decision", "The past media check"), through the front door: reports with media hashes
 * filed before any entry exists; a moderator banks another case's media with a reason; the past
 * reports' cases get their matches from the check in the background (the match row, the bank's
 * action, the report.media_matched rule, the media.matched webhook event), the audit trail shows
 * the banking and its reason; the undo removes exactly the entries the banking added; entries
 * added one by one and imported are checked against past media too; a check killed mid-way
 * (SIGKILL) continues from its cursor on the restarted server; bad input answered with clear errors.
 *
 * The check reads 2 media items a job with 300 ms between jobs (FLAGSTAFF_MEDIA_CHECK_BATCH,
 * FLAGSTAFF_MEDIA_CHECK_PAUSE_MS), so a check of this file's media takes several jobs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { OrgClient, SdkClient } from "../clients/typescript/index.ts";
import { decodeImage } from "../src/domain/media/decode.ts";
import { pdqHash } from "../src/domain/media/pdq.ts";
import { demoAdmin, expectRefused, newUser, type DashboardUser } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { TEST_ENGINE } from "./helpers/pg.ts";
import { until } from "./helpers/wait.ts";

const FIXTURES = join(import.meta.dir, "fixtures", "pdq");
const pdqOf = (name: string) => pdqHash(decodeImage(new Uint8Array(readFileSync(join(FIXTURES, name)))));
const sha256 = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");
const md5 = (s: string) => new Bun.CryptoHasher("md5").update(s).digest("hex");
const unique = () => crypto.randomUUID().slice(0, 8);

/** A webhook receiver: each event's type and data. */
const received: { type: string; data: Record<string, unknown> }[] = [];
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as { type: string; data: Record<string, unknown> };
    received.push({ type: body.type, data: body.data });
    return new Response(null, { status: 204 });
  },
});

let server: TestServer;
let admin: DashboardUser;
let moderator: DashboardUser;
let orgSlug: string;
let projectId: string;
/** Media items filed in the project by this file (every report's): the check reads them all. */
let mediaFiled = 0;

const org = (): Promise<OrgClient> => server.orgClient();
const sdk = (): Promise<SdkClient> => server.sdkClient();

beforeAll(async () => {
  server = await startServer({
    // The webhook receiver is on loopback.
    FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
    FLAGSTAFF_JOB_POLL_MS: "50",
    FLAGSTAFF_REPORT_RATE_LIMIT: "1000",
    FLAGSTAFF_MEDIA_CHECK_BATCH: "2",
    FLAGSTAFF_MEDIA_CHECK_PAUSE_MS: "300",
    // A job running at the kill is taken again soon after the restart.
    FLAGSTAFF_JOB_LEASE_MS: "1500",
    FLAGSTAFF_WEBHOOK_TIMEOUT_MS: "1000",
  });
  admin = await demoAdmin(server);
  moderator = await newUser(server, "moderator", "Banker");
  ({ orgSlug, projectId } = server.demo);
}, 30_000);

afterAll(async () => {
  await server?.dispose();
  receiver.stop(true);
});

type Media = { sha256?: string; md5?: string; pdq?: string; pdqQuality?: number };

/** Files a report with media and answers its case, once its media were matched live. */
async function report(media: Media[]): Promise<{ reportId: string; caseId: string }> {
  const client = await sdk();
  const r = await client.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { reason: "spam", target: { contentType: "post", contentExternalId: `post-${unique()}` }, media } });
  expect(r.response.status).toBe(201);
  mediaFiled += media.length;
  const reportId = r.data!.report.id;
  const caseId = (await client.GET("/reports/{reportId}", { params: { path: { reportId } } })).data!.report.caseId;
  await until("the report's media matched live", async () => (await caseMatches(caseId)).media.every((m) => m.matchedAt !== null));
  return { reportId, caseId };
}

async function caseMatches(caseId: string) {
  const r = await (await org()).GET("/organizations/{orgSlug}/cases/{caseId}/media-matches", { params: { path: { orgSlug, caseId } } });
  expect(r.response.status).toBe(200);
  return r.data!;
}

async function createBank(body: { name: string; action?: { type: "tag"; tag: string } | { type: "record" } }) {
  const r = await (await org()).POST("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: { orgSlug, projectId } }, body });
  expect(r.response.status).toBe(201);
  return r.data!.bank;
}

async function entriesOf(bankId: string) {
  const r = await (await org()).GET("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId }, query: { limit: 100 } } });
  expect(r.response.status).toBe(200);
  return r.data!.entries;
}

const bankingOf = async (caseId: string, bankingId: string) => (await moderator.trpc.mediaBanks.caseBankings.query({ orgSlug, caseId })).bankings.find((b) => b.id === bankingId)!;

const tagsOf = async (caseId: string) => {
  const events = (await admin.caseDetail(caseId)).audit.filter((e) => e.action === "CASE_TAGS_CHANGED");
  return events.length ? ((events[0]!.after as { tags: string[] }).tags ?? []) : [];
};

describe("banking from a decision", () => {
  test("a moderator banks a case's media with a reason; the past reports are found by the background check, recorded like any match; the undo removes what the banking added", async () => {
    const client = await org();
    const endpoint = await client.POST("/organizations/{orgSlug}/webhook-endpoints", { params: { path: { orgSlug } }, body: { url: `http://127.0.0.1:${receiver.port}/hook`, eventTypes: ["media.matched"] } });
    expect(endpoint.response.status).toBe(201);
    const bank = await createBank({ name: `Decided ${unique()}`, action: { type: "tag", tag: "banked-media" } });
    const queue = (await client.POST("/organizations/{orgSlug}/queues", { params: { path: { orgSlug } }, body: { name: `Found later ${unique()}` } })).data!.queue;
    const rule = await client.POST("/organizations/{orgSlug}/rules", {
      params: { path: { orgSlug } },
      body: { name: `Matched ${bank.name}`, trigger: "report.media_matched", mode: "live", when: { field: "media.banks", op: "includes", value: bank.name }, then: [{ type: "route", queueId: queue.id }] },
    });
    expect(rule.response.status).toBe(201);

    // Filed before any entry exists: an exact copy, a sharpened copy of the photograph, and unrelated media.
    const digest = sha256(`harmful ${unique()}`);
    const original = pdqOf("bridge-aaa-orig.jpg");
    const sharpened = pdqOf("bridge-sharpen-a-little.jpg");
    const exactPast = await report([{ sha256: digest }]);
    const nearPast = await report([{ pdq: sharpened.hash, pdqQuality: sharpened.quality }]);
    const unrelated = await report([{ sha256: sha256(`harmless ${unique()}`) }, { md5: md5(`harmless ${unique()}`) }]);
    // The case decided: the same file, its MD5, the photograph's PDQ hash, and a PDQ hash too weak for the bank's floor.
    const decidedMd5 = md5(`decided ${unique()}`);
    const decided = await report([{ sha256: digest, md5: decidedMd5, pdq: original.hash, pdqQuality: original.quality }, { pdq: pdqOf("c.png").hash, pdqQuality: 30 }]);
    for (const c of [exactPast, nearPast, unrelated, decided]) expect((await caseMatches(c.caseId)).matches).toEqual([]);
    // An entry the bank held before the banking (added by an admin): an undo leaves it.
    const before = await client.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId: bank.id } }, body: { signalType: "md5", value: decidedMd5, origin: "an earlier list" } });
    expect(before.response.status).toBe(201);

    await moderator.resolve(decided.reportId, { resolutionCode: "NO_VIOLATION" });
    const reason = `Known abuse image, confirmed by two moderators ${unique()}`;
    const { banking } = await moderator.trpc.mediaBanks.bankCaseMedia.mutate({ orgSlug, caseId: decided.caseId, bankId: bank.id, reason });
    expect(banking).toMatchObject({ caseId: decided.caseId, bank: { id: bank.id, name: bank.name }, reason, by: { type: "user", id: moderator.id }, added: 2, unchanged: 1, belowFloor: 1, undone: null });
    expect(banking.entries.map((e) => `${e.signalType}:${e.value}`).sort()).toEqual([`pdq:${original.hash}`, `sha256:${digest}`]);

    // The entries: origin naming a decision and the moderator, metadata the banking; never the
    // case nor the reason (everyone reads a bank's entries, and a match shows its entry on other
    // cases' pages: the banked case's queue wall). The banking holds them, behind that wall.
    const held = await entriesOf(bank.id);
    for (const e of held.filter((e) => banking.entries.some((b) => b.id === e.id))) {
      expect(e.origin).toContain(moderator.id);
      expect(e.origin).not.toContain(decided.caseId);
      expect(e.metadata).toEqual({ bankingId: banking.id });
      expect(JSON.stringify(e)).not.toContain(reason);
    }

    // The background check finds both past reports: the exact copy and the sharpened one.
    const found = await until(
      "the past reports matched by the background check",
      async () => {
        const [exact, near] = await Promise.all([caseMatches(exactPast.caseId), caseMatches(nearPast.caseId)]);
        return exact.matches.length > 0 && near.matches.length > 0 ? { exact: exact.matches, near: near.matches } : null;
      },
      20_000,
    );
    const sha = banking.entries.find((e) => e.signalType === "sha256")!;
    const pdq = banking.entries.find((e) => e.signalType === "pdq")!;
    expect(found.exact).toMatchObject([{ bank: { id: bank.id }, entry: { id: sha.id, signalType: "sha256", metadata: { bankingId: banking.id } }, distance: null, status: "pending" }]);
    expect(found.near).toMatchObject([{ bank: { id: bank.id }, entry: { id: pdq.id, signalType: "pdq" }, quality: sharpened.quality }]);
    expect(found.near[0]!.distance).toBeLessThanOrEqual(31);
    expect(found.exact[0]!.entry.origin).not.toContain(decided.caseId);
    const done = await until("the check done", async () => {
      const b = await bankingOf(decided.caseId, banking.id);
      return b.check.status === "done" ? b : null;
    });
    // Every media item of the project was read once; two matched; the banked case itself was not matched, nor the unrelated one.
    expect(done.check).toMatchObject({ checked: mediaFiled, matches: 2 });
    expect((await caseMatches(decided.caseId)).matches.map((m) => m.entry.id)).not.toContain(sha.id);
    expect((await caseMatches(unrelated.caseId)).matches).toEqual([]);

    // Recorded like any other match: audited, the bank's action, the rule, the webhook event.
    const pastAudit = (await admin.caseDetail(exactPast.caseId)).audit;
    expect(pastAudit.find((e) => e.action === "MEDIA_MATCHED")!.data).toMatchObject({ bankId: bank.id, entryId: sha.id, action: "tag" });
    expect(await tagsOf(exactPast.caseId)).toContain("banked-media");
    await until("the past case routed by the rule", async () => (await admin.caseDetail(exactPast.caseId)).case.queueId === queue.id);
    const event = await until("the media.matched event", async () => received.find((r) => r.type === "media.matched" && r.data.caseId === exactPast.caseId));
    expect(event.data).toMatchObject({ bank: { id: bank.id }, entry: { id: sha.id, signalType: "sha256" }, action: "tag" });

    // The audit trail of the decided case: the banking, with its reason and who.
    const bankedEvent = (await moderator.caseDetail(decided.caseId)).audit.find((e) => e.action === "CASE_MEDIA_BANKED")!;
    expect(bankedEvent).toMatchObject({ actor: { type: "user", id: moderator.id }, data: { bankingId: banking.id, bankId: bank.id, reason, added: 2, unchanged: 1, belowFloor: 1 } });

    // The undo: the two entries the banking added go (with their matches), the admin's MD5 stays.
    const { banking: undone } = await moderator.trpc.mediaBanks.unbankCaseMedia.mutate({ orgSlug, bankingId: banking.id });
    expect(undone.undone).toMatchObject({ by: { type: "user", id: moderator.id }, removed: 2 });
    expect(undone.entries).toEqual([]);
    const left = await entriesOf(bank.id);
    expect(left.map((e) => `${e.signalType}:${e.value}`)).toEqual([`md5:${decidedMd5}`]);
    expect(left[0]!.id).toBe(before.data!.entry.id);
    expect((await caseMatches(exactPast.caseId)).matches).toEqual([]);
    const unbanked = (await admin.caseDetail(decided.caseId)).audit.find((e) => e.action === "CASE_MEDIA_UNBANKED")!;
    expect(unbanked).toMatchObject({ actor: { type: "user", id: moderator.id }, data: { bankingId: banking.id, reason, removed: 2 } });
    // Undone once only; and a report filed now no longer matches the removed entry.
    await expectRefused(moderator.trpc.mediaBanks.unbankCaseMedia.mutate({ orgSlug, bankingId: banking.id }), "CONFLICT", /undone already/);
    const later = await report([{ sha256: digest }]);
    expect((await caseMatches(later.caseId)).matches).toEqual([]);
    await client.PATCH("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId: bank.id } }, body: { enabled: false } });
    await client.DELETE("/organizations/{orgSlug}/webhook-endpoints/{endpointId}", { params: { path: { orgSlug, endpointId: endpoint.data!.endpoint.id } } });
  }, 60_000);

  test("bad input: a missing reason (400), an unknown bank or another organization's (404), another project's (400), a case with nothing to bank (409), a viewer (403), an unknown banking (404)", async () => {
    const client = await org();
    const bank = await createBank({ name: `Checked ${unique()}` });
    const withMedia = await report([{ sha256: sha256(`bad input ${unique()}`) }]);
    const bankVia = (caseId: string, body: { bankId: string; reason?: string }) =>
      client.POST("/organizations/{orgSlug}/cases/{caseId}/media-bankings", { params: { path: { orgSlug, caseId } }, body: body as { bankId: string; reason: string } });

    const noReason = await bankVia(withMedia.caseId, { bankId: bank.id });
    expect(noReason.response.status).toBe(400);
    expect(noReason.error!.error).toContain("reason");
    const blank = await bankVia(withMedia.caseId, { bankId: bank.id, reason: "   " });
    expect(blank.response.status).toBe(400);
    expect(blank.error!.error).toContain("say why");

    const unknownBank = await bankVia(withMedia.caseId, { bankId: "no-such-bank", reason: "r" });
    expect(unknownBank.response.status).toBe(404);
    expect(unknownBank.error!.error).toBe("Media bank not found");
    const other = await server.initOrg(`other-${unique()}`);
    const otherOrg = await server.orgClient(other.secretKey);
    const theirs = await otherOrg.POST("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: { orgSlug: other.orgSlug, projectId: other.projectId } }, body: { name: "Theirs" } });
    expect(theirs.response.status).toBe(201);
    const otherOrgsBank = await bankVia(withMedia.caseId, { bankId: theirs.data!.bank.id, reason: "r" });
    expect(otherOrgsBank.response.status).toBe(404);
    expect(otherOrgsBank.error!.error).toBe("Media bank not found");
    // Their key cannot bank our case into their bank either: our case is not theirs.
    const ourCase = await otherOrg.POST("/organizations/{orgSlug}/cases/{caseId}/media-bankings", { params: { path: { orgSlug: other.orgSlug, caseId: withMedia.caseId } }, body: { bankId: theirs.data!.bank.id, reason: "r" } });
    expect(ourCase.response.status).toBe(404);

    const project = await client.POST("/organizations/{orgSlug}/projects", { params: { path: { orgSlug } }, body: { name: `Second ${unique()}` } });
    expect(project.response.status).toBe(201);
    const elsewhere = await client.POST("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: { orgSlug, projectId: project.data!.project.id } }, body: { name: "Elsewhere" } });
    const otherProject = await bankVia(withMedia.caseId, { bankId: elsewhere.data!.bank.id, reason: "r" });
    expect(otherProject.response.status).toBe(400);
    expect(otherProject.error!.error).toContain("the case's project");

    // A case with no media, and one whose only hash is a PDQ hash under the bank's floor: 409s saying why.
    const bare = await (await sdk()).POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { reason: "spam", target: { contentType: "post", contentExternalId: `post-${unique()}` } } });
    const bareCase = (await (await sdk()).GET("/reports/{reportId}", { params: { path: { reportId: bare.data!.report.id } } })).data!.report.caseId;
    const nothing = await bankVia(bareCase, { bankId: bank.id, reason: "r" });
    expect(nothing.response.status).toBe(409);
    expect(nothing.error!.error).toBe("The case has no hashed media to bank");
    const weak = await report([{ pdq: pdqOf("bridge-aaa-orig.jpg").hash, pdqQuality: 20 }]);
    const underFloor = await bankVia(weak.caseId, { bankId: bank.id, reason: "r" });
    expect(underFloor.response.status).toBe(409);
    expect(underFloor.error!.error).toContain("quality floor (50)");

    // Banked once: a second banking adds nothing (409); an unknown case and an unknown banking are 404s.
    const first = await bankVia(withMedia.caseId, { bankId: bank.id, reason: "Seen before" });
    expect(first.response.status).toBe(201);
    const again = await bankVia(withMedia.caseId, { bankId: bank.id, reason: "Seen before" });
    expect(again.response.status).toBe(409);
    expect(again.error!.error).toContain("holds every hash");
    expect((await bankVia("no-such-case", { bankId: bank.id, reason: "r" })).response.status).toBe(404);
    const noBanking = await client.POST("/organizations/{orgSlug}/media-bankings/{bankingId}/undo", { params: { path: { orgSlug, bankingId: "no-such-banking" } } });
    expect(noBanking.response.status).toBe(404);
    expect(noBanking.error!.error).toBe("Banking not found");
    // Another organization's key cannot see or undo our banking.
    const theirUndo = await otherOrg.POST("/organizations/{orgSlug}/media-bankings/{bankingId}/undo", { params: { path: { orgSlug: other.orgSlug, bankingId: first.data!.banking.id } } });
    expect(theirUndo.response.status).toBe(404);

    // A viewer may read the case's bankings, not bank.
    const viewer = await newUser(server, "viewer");
    await expectRefused(viewer.trpc.mediaBanks.bankCaseMedia.mutate({ orgSlug, caseId: withMedia.caseId, bankId: bank.id, reason: "r" }), "FORBIDDEN");
    expect((await viewer.trpc.mediaBanks.caseBankings.query({ orgSlug, caseId: withMedia.caseId })).bankings.map((b) => b.id)).toEqual([first.data!.banking.id]);
    await client.PATCH("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId: bank.id } }, body: { enabled: false } });
  }, 60_000);
});

describe("the past media check of entries added one by one and imported", () => {
  test("an entry added by an admin, and a file imported, find the media filed before them", async () => {
    const client = await org();
    const bank = await createBank({ name: `Listed later ${unique()}` });
    const one = sha256(`one ${unique()}`);
    const two = md5(`two ${unique()}`);
    const pastOne = await report([{ sha256: one }]);
    const pastTwo = await report([{ md5: two }]);
    const added = await client.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug, bankId: bank.id } }, body: { signalType: "sha256", value: one, origin: "list D" } });
    expect(added.response.status).toBe(201);
    const imported = await client.POST("/organizations/{orgSlug}/media-banks/{bankId}/import", { params: { path: { orgSlug, bankId: bank.id } }, body: { format: "csv", content: `signal_type,signal_value\nmd5,${two}\n`, origin: "list E" } });
    expect(imported.data).toMatchObject({ added: 1, unchanged: 0 });
    const matched = await until(
      "both past reports matched",
      async () => {
        const [a, b] = await Promise.all([caseMatches(pastOne.caseId), caseMatches(pastTwo.caseId)]);
        return a.matches.length && b.matches.length ? [a.matches[0]!, b.matches[0]!] : null;
      },
      20_000,
    );
    expect(matched[0]).toMatchObject({ bank: { id: bank.id }, entry: { id: added.data!.entry.id, origin: "list D" } });
    expect(matched[1]).toMatchObject({ bank: { id: bank.id }, entry: { signalType: "md5", origin: "list E" } });
    await client.PATCH("/organizations/{orgSlug}/media-banks/{bankId}", { params: { path: { orgSlug, bankId: bank.id } }, body: { enabled: false } });
  }, 60_000);
});

describe("a check killed mid-way continues from its cursor", () => {
  test("SIGKILL during the check: the restarted server goes on from the last batch checked, not from the start, and finds the newest past report", async () => {
    const bank = await createBank({ name: `Resumed ${unique()}` });
    const digest = sha256(`resumed ${unique()}`);
    const decided = await report([{ sha256: digest }]);
    // Media enough for many batches (2 a job, 300 ms apart), then the copy: filed last, checked last.
    for (let i = 0; i < 8; i++) await report([{ sha256: sha256(`filler ${i} ${unique()}`) }, { md5: md5(`filler ${i} ${unique()}`) }]);
    const copy = await report([{ sha256: digest }]);
    const total = mediaFiled;

    const { banking } = await moderator.trpc.mediaBanks.bankCaseMedia.mutate({ orgSlug, caseId: decided.caseId, bankId: bank.id, reason: "Resumable" });
    const atKill = await until("a few batches checked", async () => {
      const b = await bankingOf(decided.caseId, banking.id);
      return b.check.checked >= 4 ? b.check : null;
    });
    await server.kill();
    expect(atKill.status).toBe("running");
    expect(atKill.checked).toBeLessThan(total - 4);

    await server.start();
    // Checked where it stopped: the cursor persisted.
    const resumed = await bankingOf(decided.caseId, banking.id);
    expect(resumed.check.status).toBe("running");
    expect(resumed.check.checked).toBeGreaterThanOrEqual(atKill.checked);
    expect((await caseMatches(copy.caseId)).matches).toEqual([]);

    const done = await until(
      "the check done after the restart",
      async () => {
        const b = await bankingOf(decided.caseId, banking.id);
        return b.check.status === "done" ? b.check : null;
      },
      30_000,
    );
    // Each media item read once over the whole check (started again from the start, it would count more).
    expect(done).toMatchObject({ checked: total, matches: 1 });
    expect((await caseMatches(copy.caseId)).matches.map((m) => m.entry.signalType)).toEqual(["sha256"]);
    // The jobs of the check: one started from no cursor, each other from a distinct cursor after it.
    // On PostgreSQL a job from no cursor first only waited for the reports in flight; the next
    // one (`settled`) took the first batch (src/domain/banks/past-check.ts).
    type Payload = { additionId: string; after: string | null; settled?: boolean };
    const jobs = (await admin.trpc.jobs.list.query({ kind: "media.past_check", limit: 100 })).jobs.filter((j) => (j.payload as Payload).additionId === banking.id);
    const waited = jobs.filter((j) => (j.payload as Payload).after === null && (j.payload as Payload).settled === undefined);
    const batches = TEST_ENGINE === "postgres" ? jobs.filter((j) => !waited.includes(j)) : jobs;
    expect(waited).toHaveLength(1);
    const cursors = batches.map((j) => (j.payload as Payload).after);
    expect(cursors.filter((c) => c === null)).toHaveLength(1);
    expect(new Set(cursors).size).toBe(cursors.length);
    expect(batches.length).toBe(Math.ceil(total / 2));
    console.log(`past media check: ${total} media items in ${jobs.length} jobs; killed at ${atKill.checked} checked, ${resumed.check.checked} when the new server started`);
  }, 90_000);
});
