/**
 * A case whose media matched a bank, on the case page (issue 43, "Must show": the Chromium test
 * of a matched image), in Debian's Chromium against a real server. The platform (the secret key)
 * makes a bank holding a PDQ entry (ThreatExchange's bridge photograph) and a SHA-256 entry, each
 * with its origin and metadata, and files a report carrying hashes only (the PDQ hash of the
 * sharpened bridge, the SHA-256 of another file), then adds to the report an altered bridge
 * photograph as an attachment and a video: three matches, and a video matched by its digest
 * only. A moderator opens the case page:
 * - the Media matches section shows each match's bank (with its precision), the signal, the PDQ
 *   distance against the bank's allowed one and the quality, the entry's origin and metadata,
 *   what the match did, and the media checked (where from, hashes, status; the video's note: the
 *   server has no ffmpeg, so its frames are not hashed);
 * - nothing on the page draws anything but the case's own attachment (its preview, blurred) and
 *   video: no picture in the section, no background image, no request for any other picture;
 * - Confirm (opened from the keyboard) and Reject go through their dialogs; the statuses change,
 *   who decided is shown, and the bank's precision is 50 % on the page and through the API;
 * - axe-core finds nothing on the page with the section, nor in the dialog.
 * The matching itself is test/media-banks.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { decodeImage } from "../src/domain/media/decode.ts";
import { pdqHash } from "../src/domain/media/pdq.ts";
import { upload } from "./helpers/attachments.ts";
import { BROWSER_T, expectNoA11yViolations, openDashboard, signIn, type DashboardSession } from "./helpers/browser.ts";
import { concat, text, u32be } from "./helpers/media-bytes.ts";
import { until } from "./helpers/wait.ts";

const FIXTURES = join(import.meta.dir, "fixtures", "pdq");
const file = (name: string) => new Uint8Array(readFileSync(join(FIXTURES, name)));
const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
/** An MP4's first box (ftyp, brand isom) and an empty mdat: a video by its bytes. */
const mp4 = (): Uint8Array => concat(u32be(24), text("ftyp"), text("isom"), u32be(0x200), text("isom"), text("mp41"), u32be(8), text("mdat"));

const BANK = "Shared list of known media";
const PDQ_ENTRY = { origin: "Shared list, version 7", metadata: { category: "test-category", listCase: "A-101" } };
const SHA_ENTRY = { origin: "Our own decisions", metadata: { decidedIn: "case 4412" } };
const TAG = "known-media";

let b: DashboardSession;
let mod: { email: string; context: BrowserContext; page: Page };
let orgSlug: string;
let projectId: string;
let caseId: string;
let bankId: string;
const ids = { pdqEntry: "", shaEntry: "", photo: "", clip: "" };
/** The matches by what matched: the report's PDQ hash, its SHA-256, the attachment's PDQ hash. */
const matches = { pdq: "", sha: "", photo: "" };
/** Every URL the moderator's page requested. */
const requested: string[] = [];

async function platformUpload(reportId: string, bytes: Uint8Array, fileName: string, contentType: string): Promise<string> {
  const answer = await upload(b.server, `/organizations/${orgSlug}/reports/${reportId}/attachments`, bytes, { fileName, contentType });
  if (answer.status !== 201) throw new Error(`upload of ${fileName}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.attachment.id as string;
}

const caseMatches = () => b.platform.trpc.mediaBanks.caseMatches.query({ orgSlug, caseId });

beforeAll(async () => {
  // A server without ffmpeg (docs/media.md, "Video"): the video is matched by its digest only, and the page says why.
  b = await openDashboard({ FLAGSTAFF_JOB_POLL_MS: "50", FLAGSTAFF_FFMPEG_PATH: "/nonexistent/ffmpeg" });
  ({ orgSlug, projectId } = b.server.demo);
  const email = `mod-${crypto.randomUUID().slice(0, 6)}@example.com`;
  const made = await b.platform.trpc.users.create.mutate({ email, role: "moderator" });
  const context = await b.browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  page.on("request", (r) => void requested.push(r.url()));
  await signIn(page, b.server.url, email, made.generatedPassword!);
  mod = { email, context, page };

  // The bank: the original bridge photograph's PDQ hash, and the SHA-256 of another picture.
  const original = pdqHash(decodeImage(file("bridge-aaa-orig.jpg")));
  const other = file("c.png");
  const { bank } = await b.platform.trpc.mediaBanks.create.mutate({ orgSlug, projectId, name: BANK, action: { type: "tag", tag: TAG } });
  bankId = bank.id;
  ids.pdqEntry = (await b.platform.trpc.mediaBanks.addEntry.mutate({ orgSlug, bankId, signalType: "pdq", value: original.hash, ...PDQ_ENTRY })).entry.id;
  ids.shaEntry = (await b.platform.trpc.mediaBanks.addEntry.mutate({ orgSlug, bankId, signalType: "sha256", value: sha256(other), ...SHA_ENTRY })).entry.id;

  // The report: hashes only (no byte of either picture reaches Flagstaff this way).
  const sharpened = pdqHash(decodeImage(file("bridge-sharpen-a-little.jpg")));
  const reportId = await b.sdkReport({
    reason: "spam",
    target: { contentType: "post", contentExternalId: "bridge-42", content: "Look at this bridge." },
    media: [{ pdq: sharpened.hash, pdqQuality: sharpened.quality }, { sha256: sha256(other) }],
  });
  caseId = (await b.platform.report(reportId)).caseId!;
  // And the case's own picture (an altered bridge photograph, hashed on upload) and a video.
  ids.photo = await platformUpload(reportId, file("bridge-blur-a-little.jpg"), "bridge.jpg", "image/jpeg");
  ids.clip = await platformUpload(reportId, mp4(), "clip.mp4", "video/mp4");

  const done = await until(
    "the case's media matched",
    async () => {
      const m = await caseMatches();
      return m.media.length === 4 && m.media.every((x) => x.matchedAt !== null) && m.matches.length === 3 ? m : null;
    },
    30_000,
  );
  const photoMedia = done.media.find((x) => x.attachmentId === ids.photo)!;
  for (const m of done.matches) {
    if (m.mediaId === photoMedia.id) matches.photo = m.id;
    else if (m.entry.signalType === "pdq") matches.pdq = m.id;
    else matches.sha = m.id;
  }
  expect(Object.values(matches).every(Boolean)).toBe(true);
}, BROWSER_T);

afterAll(async () => {
  await b?.close();
});

const go = (p: Page, hash: string) => p.evaluate((h) => void (location.hash = h), hash);
const section = (p: Page) => p.getByTestId("media-matches");
const card = (p: Page, matchId: string) => p.getByTestId(`match-${matchId}`);

/** Every picture-like thing the page draws or points at: img, video, source, picture, object, embed, iframe, svg image, and CSS background images. */
function drawnSources(p: Page, within: string | null): Promise<{ tag: string; src: string }[]> {
  return p.evaluate((sel) => {
    const root: ParentNode = sel ? document.querySelector(sel)! : document;
    const out: { tag: string; src: string }[] = [];
    for (const el of root.querySelectorAll("img, video, source, picture, object, embed, iframe, image, canvas")) {
      const src = el.getAttribute("src") ?? el.getAttribute("data") ?? el.getAttribute("href") ?? el.getAttribute("xlink:href") ?? el.getAttribute("srcset") ?? "";
      out.push({ tag: el.tagName.toLowerCase(), src });
    }
    for (const el of root.querySelectorAll("*")) {
      const bg = getComputedStyle(el).backgroundImage;
      if (bg && bg !== "none") out.push({ tag: `background of ${el.tagName.toLowerCase()}`, src: bg });
    }
    return out;
  }, within);
}

describe("a case with matched media on the case page", () => {
  test(
    "the matches with their bank, distance, origin and metadata, the media checked, nothing drawn but the case's own media; confirm and reject with the bank's precision; axe-core 0",
    async () => {
      const p = mod.page;
      await go(p, `#/cases/${caseId}`);
      await p.getByRole("heading", { level: 1, name: "post bridge-42" }).waitFor();
      await p.getByRole("heading", { level: 2, name: "Media matches (3)" }).waitFor();
      const { matches: answered } = await caseMatches();
      const byId = new Map(answered.map((m) => [m.id, m] as const));

      // The PDQ match of the report's hash: the bank, its precision, the distance of the allowed 31 and the quality, the entry's origin and metadata, what it did.
      const pdq = card(p, matches.pdq);
      await pdq.getByRole("heading", { level: 3, name: new RegExp(BANK) }).waitFor();
      await pdq.getByText("Bank precision: no verdict yet (3 matches recorded)").waitFor();
      const distance = byId.get(matches.pdq)!.distance!;
      expect(distance).toBeLessThanOrEqual(31);
      expect((await pdq.getByTestId("match-signal").textContent())!.trim()).toBe(`PDQ distance ${distance} of 31 allowed, quality 100`);
      expect(await pdq.getByTestId("match-origin").textContent()).toBe(PDQ_ENTRY.origin);
      expect(await pdq.getByTestId("match-metadata").textContent()).toBe("category: test-categorylistCase: A-101");
      expect(await pdq.getByTestId("match-action").textContent()).toBe(`Tagged the case ${TAG}`);
      expect(await pdq.getByTestId("match-verdict").textContent()).toBe("Not decided yet");
      await pdq.getByText("Hashes sent with a report").waitFor();
      // The exact match, and the case's own picture matched by its PDQ hash.
      const sha = card(p, matches.sha);
      expect((await sha.getByTestId("match-signal").textContent())!.trim()).toBe("SHA-256, the same digest");
      expect(await sha.getByTestId("match-origin").textContent()).toBe(SHA_ENTRY.origin);
      expect(await sha.getByTestId("match-metadata").textContent()).toBe("decidedIn: case 4412");
      const photo = card(p, matches.photo);
      expect((await photo.getByTestId("match-signal").textContent())!.trim()).toBe(`PDQ distance ${byId.get(matches.photo)!.distance} of 31 allowed, quality ${byId.get(matches.photo)!.quality}`);
      await photo.getByText("Attachment bridge.jpg").waitFor();

      // The media checked: where each came from, its hashes and status; the video matched by its digest only.
      const checked = section(p).locator(".media-checked");
      await checked.getByRole("heading", { level: 3, name: "Media checked (4)" }).waitFor();
      await checked.getByText("Hashes: PDQ (quality 100)").waitFor();
      await checked.getByText("Hashes: SHA-256", { exact: false }).first().waitFor();
      await checked.getByText("Video: matched by SHA-256 and MD5 only (ffmpeg is not installed on this server: its frames are not hashed)").waitFor();
      expect(await checked.getByText(/^Video: /).count()).toBe(1);

      // Nothing of the bank is drawn: the section draws no picture, and the page only the case's own preview and video.
      expect(await drawnSources(p, '[data-testid="media-matches"]')).toEqual([]);
      const own = new Set([`/api/v1/organizations/${orgSlug}/attachments/${ids.photo}/preview`, `/api/v1/organizations/${orgSlug}/attachments/${ids.clip}/content`]);
      await p.getByTestId(`media-${ids.photo}`).locator("img").waitFor();
      const drawn = await drawnSources(p, null);
      expect(drawn.length).toBeGreaterThan(0);
      for (const d of drawn) {
        expect(d.tag === "img" || d.tag === "video").toBe(true);
        expect(own.has(new URL(d.src, b.server.url).pathname)).toBe(true);
      }
      const pictures = requested.filter((u) => /\.(jpe?g|png|gif|webp)(\?|$)|\/attachments\//.test(u));
      expect(pictures.every((u) => new URL(u).pathname === `/api/v1/organizations/${orgSlug}/attachments/${ids.photo}/preview`)).toBe(true);
      expect(requested.every((u) => new URL(u).origin === b.server.url)).toBe(true);
      // The case's own picture stays behind the viewer's blur.
      expect(await p.getByTestId(`media-${ids.photo}`).getAttribute("data-blurred")).toBe("");
      await expectNoA11yViolations(p, "the case page with its media matches");
      await b.shot(p, "case-media-matches.png");

      // Confirm the report's PDQ match, from the keyboard: the button, then its dialog.
      await pdq.getByRole("button", { name: `Confirm the match of ${BANK}` }).focus();
      await p.keyboard.press("Enter");
      const dialog = p.getByRole("dialog", { name: `Confirm the match of ${BANK}?` });
      await dialog.waitFor();
      await expectNoA11yViolations(p, "the dialog confirming a media match", "dialog[open]");
      await dialog.getByRole("button", { name: "Confirm the match" }).focus();
      await p.keyboard.press("Enter");
      await dialog.waitFor({ state: "hidden" });
      await until("the PDQ match confirmed on the page", async () => (await pdq.getByTestId("match-verdict").textContent())?.startsWith(`Confirmed by ${mod.email} · `));
      await pdq.getByRole("heading", { level: 3, name: new RegExp(`${BANK}.*confirmed`) }).waitFor();
      expect(await pdq.getByRole("button", { name: /^Confirm/ }).count()).toBe(0);
      await pdq.getByRole("button", { name: `Reject the match of ${BANK}` }).waitFor();

      // Reject the SHA-256 match; Cancel first changes nothing.
      await sha.getByRole("button", { name: `Reject the match of ${BANK}` }).click();
      const reject = p.getByRole("dialog", { name: `Reject the match of ${BANK}?` });
      await reject.getByRole("button", { name: "Cancel" }).click();
      await reject.waitFor({ state: "hidden" });
      expect((await caseMatches()).matches.find((m) => m.id === matches.sha)!.status).toBe("pending");
      await sha.getByRole("button", { name: `Reject the match of ${BANK}` }).click();
      await reject.getByRole("button", { name: "Reject the match" }).click();
      await until("the SHA-256 match rejected on the page", async () => (await sha.getByTestId("match-verdict").textContent())?.startsWith(`Rejected by ${mod.email} · `));

      // The bank's precision, on the page and through the API: one confirmed, one rejected.
      await pdq.getByText("Bank precision 50 % (1 confirmed, 1 rejected)").waitFor();
      const { banks } = await b.platform.trpc.mediaBanks.list.query({ orgSlug, projectId });
      const bank = banks.find((x) => x.id === bankId)!;
      expect({ confirmed: bank.confirmed, rejected: bank.rejected, precision: bank.precision }).toEqual({ confirmed: 1, rejected: 1, precision: 0.5 });
      const after = new Map((await caseMatches()).matches.map((m) => [m.id, m] as const));
      expect([after.get(matches.pdq)!.status, after.get(matches.sha)!.status, after.get(matches.photo)!.status]).toEqual(["confirmed", "rejected", "pending"]);
      expect(after.get(matches.pdq)!.decidedByEmail).toBe(mod.email);
      await expectNoA11yViolations(p, "the case page after the verdicts");
    },
    BROWSER_T,
  );

  test(
    "a negative bank's match: said on both matches, the suppressed one did nothing",
    async () => {
      const known = sha256(file("wee.jpg"));
      const { bank: negative } = await b.platform.trpc.mediaBanks.create.mutate({ orgSlug, projectId, name: "Known false positives", negative: true });
      await b.platform.trpc.mediaBanks.addEntry.mutate({ orgSlug, bankId: negative.id, signalType: "sha256", value: known, origin: "Our moderators" });
      await b.platform.trpc.mediaBanks.addEntry.mutate({ orgSlug, bankId, signalType: "sha256", value: known, origin: "Shared list, version 8" });
      const reportId = await b.sdkReport({ reason: "spam", target: { contentType: "post", contentExternalId: "logo-7" }, media: [{ sha256: known }] });
      const other = (await b.platform.report(reportId)).caseId!;
      const { matches: found } = await until("the negative bank's matches", async () => {
        const m = await b.platform.trpc.mediaBanks.caseMatches.query({ orgSlug, caseId: other });
        return m.matches.length === 2 ? m : null;
      });
      const suppressed = found.find((m) => !m.bank.negative)!;
      const own = found.find((m) => m.bank.negative)!;
      expect([suppressed.suppressed, suppressed.actionTaken, own.actionTaken]).toEqual([true, false, false]);

      const p = mod.page;
      await go(p, `#/cases/${other}`);
      await p.getByRole("heading", { level: 2, name: "Media matches (2)" }).waitFor();
      await card(p, suppressed.id).getByRole("heading", { level: 3, name: `${BANK} suppressed pending` }).waitFor();
      expect(await card(p, suppressed.id).getByTestId("match-action").textContent()).toBe("Nothing: suppressed, a negative bank matched the same media");
      await card(p, own.id).getByRole("heading", { level: 3, name: "Known false positives negative bank pending" }).waitFor();
      expect(await card(p, own.id).getByTestId("match-action").textContent()).toBe("Nothing: a negative bank's match suppresses the other banks' matches of the same media");
      expect(await card(p, own.id).getByTestId("match-origin").textContent()).toBe("Our moderators");
      // The case was not tagged: the suppressed match took no action.
      expect((await b.platform.casePage(other)).tags).toEqual([]);
      await expectNoA11yViolations(p, "a case matched by a negative bank");
    },
    BROWSER_T,
  );

  test(
    "a case with more media than a page lists the first page, then the rest with More media",
    async () => {
      const hex = () => Array.from(crypto.getRandomValues(new Uint8Array(32)), (x) => x.toString(16).padStart(2, "0")).join("");
      let flooded = "";
      // Six reports of one post, twenty media items each (a report's most): 120 in one case.
      for (let i = 0; i < 6; i++) {
        const reportId = await b.sdkReport({ reason: "spam", target: { contentType: "post", contentExternalId: "flooded-post" }, media: Array.from({ length: 20 }, () => ({ sha256: hex() })) });
        flooded = (await b.platform.report(reportId)).caseId!;
      }
      const first = await until("the flooded case's media matched", async () => {
        const m = await b.platform.trpc.mediaBanks.caseMatches.query({ orgSlug, caseId: flooded });
        return m.mediaTotal === 120 && m.media.every((x) => x.matchedAt !== null) ? m : null;
      });
      expect({ listed: first.media.length, next: first.nextCursor !== null }).toEqual({ listed: 100, next: true });

      const p = mod.page;
      await go(p, `#/cases/${flooded}`);
      const checked = section(p).locator(".media-checked");
      await checked.getByRole("heading", { level: 3, name: "Media checked (120)" }).waitFor();
      expect(await checked.locator("li").count()).toBe(100);
      const more = section(p).getByRole("button", { name: "More media (20 not shown)" });
      await expectNoA11yViolations(p, "a case with more media than a page");
      await more.click();
      await until("the second page listed", async () => ((await checked.locator("li").count()) === 120 ? true : null));
      expect(await section(p).getByRole("button", { name: /More media/ }).count()).toBe(0);
    },
    BROWSER_T,
  );

  test(
    "a viewer sees the matches without Confirm or Reject",
    async () => {
      const email = `viewer-${crypto.randomUUID().slice(0, 6)}@example.com`;
      const made = await b.platform.trpc.users.create.mutate({ email, role: "viewer" });
      const { context, page } = await b.signedIn(email, made.generatedPassword!);
      try {
        await go(page, `#/cases/${caseId}`);
        await page.getByRole("heading", { level: 2, name: "Media matches (3)" }).waitFor();
        await card(page, matches.pdq).getByTestId("match-origin").waitFor();
        expect(await section(page).getByRole("button").count()).toBe(0);
      } finally {
        await context.close();
      }
    },
    BROWSER_T,
  );
});
