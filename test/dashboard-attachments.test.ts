/**
 * A case's attachments on the review screen (issue 42, "Must show": the Chromium test of the
 * review screen) in a real browser (Debian's Chromium, playwright-core) against a real server,
 * the files uploaded through the API as a platform does (the secret key, the raw body), with
 * axe-core at 0 violations in each state:
 * - review mode: the warning screen before a CRITICAL case with an attachment, nothing of its
 *   media fetched behind it; then the picture through its preview (never the original), blurred
 *   and in grayscale by default (the filter Chromium applies), revealed by Reveal and by a click,
 *   blurred again by Escape, by the pointer leaving and by the focus leaving;
 * - the case page: a video muted, not autoplayed, fetching nothing (no audited read) before
 *   play; a PDF as a download that says it opens outside Flagstaff;
 * - a moderator's preferences (light blur, no grayscale) applied to the case's preview and kept
 *   across a reload;
 * - a moderator adding evidence from the case page (listed, its preview made), an HTML page named
 *   x.png refused with the server's own message, so is a file over the size limit (413), and a
 *   file deleted through its confirm dialog; a viewer sees the media without those controls.
 * The viewer's rules are test/media-reveal.test.ts's; the routes' test/attachments.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BrowserContext, Locator, Page } from "playwright-core";
import { flatPng, htmlPage, jpegWithGps, upload } from "./helpers/attachments.ts";
import { BROWSER_T, expectNoA11yViolations, openDashboard, signIn, type DashboardSession } from "./helpers/browser.ts";
import { concat, text, u32be } from "./helpers/media-bytes.ts";
import { until } from "./helpers/wait.ts";

let b: DashboardSession;
let mod: { email: string; context: BrowserContext; page: Page };
let orgSlug: string;
/** The case of a CRITICAL report carrying a screenshot, and an ordinary one with a photo, a video and a PDF. */
const cases = { critical: "", plain: "" };
/** The attachments' ids. */
const files = { screenshot: "", photo: "", clip: "", pdf: "" };
/** Every attachment URL the moderator's page fetched, in order. */
const fetched: string[] = [];
const TEXT = { critical: "Tonight is the last night, goodbye." };
const MAX_BYTES = 256 * 1024;

/** An MP4's first box (ftyp, brand isom) and an empty mdat: the type the server reads from the bytes. */
const mp4 = (): Uint8Array => concat(u32be(24), text("ftyp"), text("isom"), u32be(0x200), text("isom"), text("mp41"), u32be(8), text("mdat"));

/** Uploads `bytes` as a platform does (the demo's secret key) to a report or a case; answers the attachment's id. */
async function platformUpload(target: string, bytes: Uint8Array, fileName: string, contentType: string): Promise<string> {
  const answer = await upload(b.server, `/organizations/${orgSlug}/${target}/attachments`, bytes, { fileName, contentType });
  if (answer.status !== 201) throw new Error(`upload of ${fileName}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.attachment.id as string;
}

/** Waits until every attachment of the case has its preview made (or none to make). */
async function previewsMade(caseId: string): Promise<void> {
  await until(`the previews of case ${caseId}`, async () => {
    const { attachments } = await b.platform.trpc.attachments.list.query({ orgSlug, caseId });
    return attachments.every((a) => a.preview.status !== "pending");
  });
}

beforeAll(async () => {
  // A file limit a test can pass with a small file (the page's 413).
  b = await openDashboard({ FLAGSTAFF_ATTACHMENT_MAX_BYTES: String(MAX_BYTES) });
  orgSlug = b.server.demo.orgSlug;
  const email = `mod-${crypto.randomUUID().slice(0, 6)}@example.com`;
  const made = await b.platform.trpc.users.create.mutate({ email, role: "moderator" });
  const context = await b.browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  page.on("request", (r) => {
    if (r.url().includes("/attachments/")) fetched.push(new URL(r.url()).pathname);
  });
  await signIn(page, b.server.url, email, made.generatedPassword!);
  mod = { email, context, page };

  const criticalReport = await b.sdkReport({ target: { contentType: "post", contentExternalId: "note-9", content: TEXT.critical }, reason: "self_harm" });
  cases.critical = (await b.platform.report(criticalReport)).caseId!;
  files.screenshot = await platformUpload(`reports/${criticalReport}`, jpegWithGps(96, 64), "screenshot.jpg", "image/jpeg");
  const plainReport = await b.sdkReport({ target: { contentType: "post", contentExternalId: "watch-7", content: "Cheap watches, DM me." }, reason: "spam" });
  cases.plain = (await b.platform.report(plainReport)).caseId!;
  files.photo = await platformUpload(`cases/${cases.plain}`, jpegWithGps(80, 60), "photo.jpg", "image/jpeg");
  files.clip = await platformUpload(`cases/${cases.plain}`, mp4(), "clip.mp4", "video/mp4");
  files.pdf = await platformUpload(`cases/${cases.plain}`, text(`%PDF-1.4\n% the seller's price list\n%%EOF\n`), "prices.pdf", "application/pdf");
  await previewsMade(cases.critical);
  await previewsMade(cases.plain);
}, BROWSER_T);

afterAll(async () => {
  await b?.close();
});

const go = (p: Page, hash: string) => p.evaluate((h) => void (location.hash = h), hash);
const media = (p: Page) => p.getByRole("group", { name: "The case's media" });
const item = (p: Page, id: string) => p.getByTestId(`media-${id}`);
const pointerAway = (p: Page) => p.mouse.move(2, 2);
const filterOf = (l: Locator) => l.evaluate((el) => getComputedStyle(el).filter);
async function expectFilter(l: Locator, want: string): Promise<void> {
  let last = "";
  await until(`the filter ${want}`, async () => (last = await filterOf(l)) === want, 5000).catch(() => {
    throw new Error(`the preview's filter stayed ${last}, expected ${want}`);
  });
}
/** The preview's picture, loaded: its src is the preview route, and Chromium decoded it. */
async function loadedPreview(p: Page, id: string): Promise<Locator> {
  const img = item(p, id).locator("img");
  await img.waitFor();
  expect(new URL((await img.getAttribute("src"))!, b.server.url).pathname).toBe(`/api/v1/organizations/${orgSlug}/attachments/${id}/preview`);
  await until(`the preview of ${id} decoded`, () => img.evaluate((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0), 5000);
  return img;
}
const openedEvents = async (caseId: string) => (await b.platform.casePage(caseId)).audit.filter((e) => e.action === "ATTACHMENT_OPENED").length;

describe("the review screen with a case's attachments", () => {
  test(
    "review mode: the warning before a CRITICAL case with an attachment, nothing fetched behind it; then the preview blurred and in grayscale, revealed by a deliberate act, blurred again on leaving",
    async () => {
      const p = mod.page;
      await go(p, "#/review");
      const warning = p.getByTestId("case-warning");
      await warning.getByText("Its severity is CRITICAL (the emergency bucket).").waitFor();
      // Nothing of the case's media behind the warning: no picture, no request for one.
      expect(await p.locator("img, video").count()).toBe(0);
      expect(await p.getByText(TEXT.critical).count()).toBe(0);
      expect(fetched).toEqual([]);
      await expectNoA11yViolations(p, "the warning screen before a case with an attachment");

      await warning.getByRole("button", { name: "Show the case" }).click();
      await p.getByRole("heading", { level: 1, name: "post note-9" }).waitFor();
      await p.getByRole("heading", { level: 2, name: "Media (1)" }).waitFor();
      const img = await loadedPreview(p, files.screenshot);
      // Shown through the preview only: the original is only ever the download link's.
      expect(fetched.every((path) => path.endsWith("/preview"))).toBe(true);
      expect(await media(p).getByRole("link", { name: "Download screenshot.jpg" }).getAttribute("href")).toBe(`/api/v1/organizations/${orgSlug}/attachments/${files.screenshot}/content`);
      // Flagstaff's defaults: a strong blur (24 px) and grayscale.
      const figure = item(p, files.screenshot);
      await figure.getByText("Sent with a report by API key").waitFor();
      expect(await figure.getAttribute("data-blurred")).toBe("");
      expect(await figure.getAttribute("data-gray")).toBe("");
      await expectFilter(img, "blur(24px) grayscale(1)");
      await expectNoA11yViolations(p, "a CRITICAL case's media, blurred, in review mode");
      await b.shot(p, "case-media-review.png");

      // The Reveal button reveals it (still in grayscale); Escape blurs it again and stays on the case.
      const reveal = media(p).getByRole("button", { name: "Reveal screenshot.jpg" });
      await reveal.click();
      expect(await reveal.getAttribute("aria-pressed")).toBe("true");
      await expectFilter(img, "grayscale(1)");
      expect(await figure.getAttribute("data-blurred")).toBeNull();
      await expectNoA11yViolations(p, "a CRITICAL case's media, revealed");
      await p.keyboard.press("Escape");
      await expectFilter(img, "blur(24px) grayscale(1)");
      await p.getByRole("heading", { level: 1, name: "post note-9" }).waitFor();

      // A click on the picture reveals it; the pointer leaving blurs it again.
      await img.click();
      await expectFilter(img, "grayscale(1)");
      await pointerAway(p);
      await expectFilter(img, "blur(24px) grayscale(1)");

      // "Show colours" and the focus leaving the item: blurred and gray again.
      await reveal.focus();
      await p.keyboard.press("Space");
      await media(p).getByRole("button", { name: "Show colours of screenshot.jpg" }).click();
      await expectFilter(img, "none");
      await p.getByRole("heading", { level: 2, name: "Notes" }).scrollIntoViewIfNeeded();
      await p.getByLabel(/Add a note/).focus();
      await expectFilter(img, "blur(24px) grayscale(1)");

      await p.getByRole("button", { name: "Stop reviewing" }).click();
      await p.getByRole("heading", { level: 1, name: "Review queue" }).waitFor();
    },
    BROWSER_T,
  );

  test(
    "the case page: a video muted, not autoplayed and not fetched before play; a PDF offered as a download that opens outside Flagstaff; nothing opened",
    async () => {
      const p = mod.page;
      const before = fetched.length;
      await go(p, `#/cases/${cases.plain}`);
      await p.getByRole("heading", { level: 1, name: "post watch-7" }).waitFor();
      await p.getByRole("heading", { level: 2, name: "Media (3)" }).waitFor();
      const img = await loadedPreview(p, files.photo);
      await expectFilter(img, "blur(24px) grayscale(1)");
      await item(p, files.photo).getByText("Added to the case by API key").waitFor();

      const video = item(p, files.clip).locator("video");
      await video.waitFor();
      const state = await video.evaluate((v: HTMLVideoElement) => ({ muted: v.muted, autoplay: v.autoplay, paused: v.paused, preload: v.preload, controls: v.controls }));
      expect(state).toEqual({ muted: true, autoplay: false, paused: true, preload: "none", controls: true });
      await expectFilter(video, "blur(24px) grayscale(1)");

      const pdf = item(p, files.pdf);
      expect(await pdf.locator("img, video").count()).toBe(0);
      const download = pdf.getByRole("link", { name: "Download prices.pdf" });
      expect(await download.getAttribute("href")).toBe(`/api/v1/organizations/${orgSlug}/attachments/${files.pdf}/content`);
      expect(await download.getAttribute("download")).toBe("prices.pdf");
      await pdf.getByText("No preview: the file opens outside Flagstaff, unblurred").waitFor();
      await expectNoA11yViolations(p, "a case's picture, video and PDF");
      await b.shot(p, "case-media.png");

      // Nothing of an original was read: only previews were fetched, and no read was audited.
      expect(fetched.slice(before).filter((path) => !path.endsWith("/preview"))).toEqual([]);
      expect(await openedEvents(cases.plain)).toBe(0);
    },
    BROWSER_T,
  );

  test(
    "a moderator's preferences (light blur, no grayscale) apply to the case's preview and are kept across a reload",
    async () => {
      const p = mod.page;
      await p.getByRole("link", { name: "Viewing", exact: true }).click();
      await p.getByRole("heading", { level: 1, name: "Viewing" }).waitFor();
      await p.getByLabel("Blur", { exact: true }).selectOption("light");
      await p.getByLabel("Grayscale", { exact: true }).selectOption("off");
      await p.getByRole("button", { name: "Save my preferences" }).click();
      await p.getByText("Viewing preferences saved").waitFor();

      await go(p, `#/cases/${cases.plain}`);
      let img = await loadedPreview(p, files.photo);
      await expectFilter(img, "blur(6px)");
      expect(await media(p).getByRole("button", { name: /^Show colours/ }).count()).toBe(0);
      await p.reload();
      await p.getByRole("heading", { level: 1, name: "post watch-7" }).waitFor();
      img = await loadedPreview(p, files.photo);
      await expectFilter(img, "blur(6px)");
      expect(await item(p, files.photo).getAttribute("data-gray")).toBeNull();
      await media(p).getByRole("button", { name: "Reveal photo.jpg" }).click();
      await expectFilter(img, "none");
      await p.keyboard.press("Escape");
      await expectFilter(img, "blur(6px)");
      await expectNoA11yViolations(p, "a case's media with light blur and no grayscale");
    },
    BROWSER_T,
  );

  test(
    "a moderator adds evidence from the case page and sees it listed; an HTML page named x.png (400) and a file over the size limit (413) are refused with the server's messages; a file deleted through its confirm dialog",
    async () => {
      const p = mod.page;
      await go(p, `#/cases/${cases.plain}`);
      await p.getByRole("heading", { level: 2, name: "Media (3)" }).waitFor();
      const form = p.getByRole("form", { name: "Add evidence" });
      const file = form.getByLabel("File", { exact: true });
      const send = form.getByRole("button", { name: "Upload" });
      expect(await send.isDisabled()).toBe(true);

      await file.setInputFiles({ name: "evidence.png", mimeType: "image/png", buffer: Buffer.from(flatPng(48, 32)) });
      await send.click();
      await p.getByText("Added evidence.png").waitFor();
      await p.getByRole("heading", { level: 2, name: "Media (4)" }).waitFor();
      const { attachments } = await b.platform.trpc.attachments.list.query({ orgSlug, caseId: cases.plain });
      const added = attachments.find((a) => a.fileName === "evidence.png")!;
      expect(added).toMatchObject({ mediaType: "png", caseId: cases.plain, reportId: null, addedBy: { type: "user" } });
      // Listed, and shown through its preview once made (the list is read again meanwhile).
      const img = await loadedPreview(p, added.id);
      await expectFilter(img, "blur(6px)");
      expect(await file.inputValue()).toBe("");
      await item(p, added.id).getByText(`Added to the case by ${mod.email}`).waitFor();
      await expectNoA11yViolations(p, "the case's media after adding evidence");

      // A page of HTML named x.png and declared image/png: refused, with what the server says.
      const refusal = await upload(b.server, `/organizations/${orgSlug}/cases/${cases.plain}/attachments`, htmlPage(), { fileName: "x.png", contentType: "image/png" });
      expect(refusal.status).toBe(400);
      await file.setInputFiles({ name: "x.png", mimeType: "image/png", buffer: Buffer.from(htmlPage()) });
      await send.click();
      const alert = form.getByRole("alert");
      await alert.waitFor();
      expect(await alert.innerText()).toBe(refusal.body.error);
      expect(await p.getByRole("heading", { level: 2, name: "Media (4)" }).count()).toBe(1);
      await expectNoA11yViolations(p, "the refusal of an HTML page named x.png");

      // Larger than FLAGSTAFF_ATTACHMENT_MAX_BYTES: the 413's own words.
      const big = new Uint8Array(MAX_BYTES + 1000).fill(0x61);
      const tooLarge = await upload(b.server, `/organizations/${orgSlug}/cases/${cases.plain}/attachments`, big, { fileName: "big.txt", contentType: "text/plain" });
      expect(tooLarge.status).toBe(413);
      await file.setInputFiles({ name: "big.txt", mimeType: "text/plain", buffer: Buffer.from(big) });
      await send.click();
      await until("the 413's message", async () => (await alert.innerText().catch(() => "")) === tooLarge.body.error, 10_000);
      expect(await p.getByRole("heading", { level: 2, name: "Media (4)" }).count()).toBe(1);

      // Delete, confirmed in a dialog: Cancel keeps it, "Delete the file" deletes it.
      await item(p, files.pdf).getByRole("button", { name: "Delete prices.pdf" }).click();
      const dialog = p.getByRole("dialog", { name: "Delete prices.pdf?" });
      await dialog.waitFor();
      await expectNoA11yViolations(p, "the dialog deleting an attachment", "dialog[open]");
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await dialog.waitFor({ state: "detached" });
      expect(await item(p, files.pdf).count()).toBe(1);
      await item(p, files.pdf).getByRole("button", { name: "Delete prices.pdf" }).click();
      await dialog.getByRole("button", { name: "Delete the file" }).click();
      await dialog.waitFor({ state: "detached" });
      await p.getByRole("heading", { level: 2, name: "Media (3)" }).waitFor();
      expect(await item(p, files.pdf).count()).toBe(0);
      const left = await b.platform.trpc.attachments.list.query({ orgSlug, caseId: cases.plain });
      expect(left.attachments.map((a) => a.fileName).sort()).toEqual(["clip.mp4", "evidence.png", "photo.jpg"]);
      // The audit trail on the page says so.
      await p.getByText("ATTACHMENT_DELETED").first().waitFor();
    },
    BROWSER_T,
  );

  test(
    "a viewer sees the media, with neither Add evidence nor Delete",
    async () => {
      const email = `viewer-${crypto.randomUUID().slice(0, 6)}@example.com`;
      const made = await b.platform.trpc.users.create.mutate({ email, role: "viewer" });
      const { context, page: p } = await b.signedIn(email, made.generatedPassword!);
      try {
        await go(p, `#/cases/${cases.plain}`);
        await p.getByRole("heading", { level: 2, name: "Media (3)" }).waitFor();
        await loadedPreview(p, files.photo);
        expect(await p.getByRole("form", { name: "Add evidence" }).count()).toBe(0);
        expect(await media(p).getByRole("button", { name: /^Delete/ }).count()).toBe(0);
        await expectNoA11yViolations(p, "a case's media as a viewer sees it");
      } finally {
        await context.close();
      }
    },
    BROWSER_T,
  );
});
