/**
 * The media viewer's rules (src/web/components/media-reveal.ts), in process: what an item is
 * drawn as, what covers it, and how reveals come and go: only by a deliberate act (the button or
 * a click; the pointer resting on it in hover mode, never a touch), and gone when the pointer or
 * the focus leaves, on Escape, or when the case changes. The viewer's behaviour in Chromium is
 * test/dashboard-viewing.test.ts.
 */
import { describe, expect, test } from "bun:test";
import type { AttachmentView } from "../src/domain/views/attachment.ts";
import { anythingShown, blurRadius, coverOf, displayOf, formatBytes, HIDDEN, mediaItemOf, revealReducer, type RevealEvent, type RevealState } from "../src/web/components/media-reveal.ts";

const run = (events: RevealEvent[], from: RevealState = {}): RevealState => events.reduce(revealReducer, from);

describe("what an item is drawn as", () => {
  test("images and videos with a preview in place; everything else, and anything without a preview, a file to download", () => {
    expect(displayOf({ kind: "image", previewUrl: "/p/1" })).toBe("image");
    expect(displayOf({ kind: "video", previewUrl: "/p/2" })).toBe("video");
    expect(displayOf({ kind: "image", previewUrl: null })).toBe("file");
    expect(displayOf({ kind: "video", previewUrl: null })).toBe("file");
    for (const kind of ["pdf", "text", "other"] as const) expect(displayOf({ kind, previewUrl: "/p/3" })).toBe("file");
  });

  test("an attachment: an image only through its preview, once made; a video from its original; anything else a download", () => {
    const base = `/api/v1/organizations/acme/attachments/a1`;
    const attachment = (over: Partial<AttachmentView>): AttachmentView => ({
      id: "a1",
      caseId: "c1",
      reportId: null,
      fileName: "shot.png",
      declaredType: "image/png",
      mediaType: "png",
      contentType: "image/png",
      sizeBytes: 5000,
      sha256: "0".repeat(64),
      width: 4000,
      height: 3000,
      addedBy: { type: "user", id: "u1" },
      createdAt: "2026-12-06T10:00:00.000Z",
      preview: { status: "ready", width: 1024, height: 768, error: null },
      contentUrl: `${base}/content`,
      previewUrl: `${base}/preview`,
      ...over,
    });
    const ready = mediaItemOf(attachment({}));
    expect(ready).toMatchObject({ kind: "image", previewUrl: `${base}/preview`, downloadUrl: `${base}/content`, width: 1024, height: 768, detectedType: "image/png", note: null });
    expect(displayOf(ready)).toBe("image");
    // Until its preview is made (or when none can be), an image is a file: never its original in place.
    const pending = mediaItemOf(attachment({ preview: { status: "pending", width: null, height: null, error: null }, previewUrl: null }));
    expect(pending).toMatchObject({ previewUrl: null, note: "Preview being made…", width: 4000, height: 3000 });
    expect(displayOf(pending)).toBe("file");
    const failed = mediaItemOf(attachment({ preview: { status: "failed", width: null, height: null, error: "corrupt image data" }, previewUrl: null }));
    expect(failed).toMatchObject({ previewUrl: null, note: "No preview: corrupt image data." });
    const webp = mediaItemOf(attachment({ mediaType: "webp", contentType: "image/webp", preview: { status: "none", width: null, height: null, error: null }, previewUrl: null }));
    expect(displayOf(webp)).toBe("file");
    const video = mediaItemOf(attachment({ mediaType: "mp4", contentType: "video/mp4", width: null, height: null, preview: { status: "none", width: null, height: null, error: null }, previewUrl: null }));
    expect(video).toMatchObject({ kind: "video", previewUrl: `${base}/content`, note: null });
    for (const mediaType of ["pdf", "text"] as const) {
      const file = mediaItemOf(attachment({ mediaType, preview: { status: "none", width: null, height: null, error: null }, previewUrl: null }));
      expect([file.kind, file.previewUrl, displayOf(file)]).toEqual([mediaType, null, "file"]);
    }
  });

  test("sizes for people", () => {
    expect([0, 912, 1024, 14_540, 3_250_000, 5 * 1024 ** 3].map(formatBytes)).toEqual(["0 B", "912 B", "1.0 KB", "14 KB", "3.1 MB", "5.0 GB"]);
  });
});

describe("what covers an item", () => {
  test("blurred at the preference's strength and in grayscale until revealed and coloured", () => {
    const p = { blur: "strong", grayscale: true } as const;
    expect(coverOf(p, HIDDEN)).toEqual({ blurred: true, gray: true });
    expect(coverOf(p, { revealed: true, coloured: false })).toEqual({ blurred: false, gray: true });
    expect(coverOf(p, { revealed: true, coloured: true })).toEqual({ blurred: false, gray: false });
    expect(blurRadius(p)).toBe("24px");
    expect(blurRadius({ blur: "maximum" })).toBe("40px");
  });

  test("no blur and no grayscale when the preferences say so", () => {
    expect(coverOf({ blur: "none", grayscale: false }, HIDDEN)).toEqual({ blurred: false, gray: false });
    expect(coverOf({ blur: "light", grayscale: false }, HIDDEN)).toEqual({ blurred: true, gray: false });
  });
});

describe("reveals come only by a deliberate act and go on leaving", () => {
  test("the button reveals and blurs again; blurring again takes the colours back too", () => {
    const revealed = run([{ type: "toggleReveal", id: "a" }]);
    expect(revealed).toEqual({ a: { revealed: true, coloured: false } });
    const coloured = run([{ type: "toggleColour", id: "a" }], revealed);
    expect(coloured).toEqual({ a: { revealed: true, coloured: true } });
    expect(run([{ type: "toggleReveal", id: "a" }], coloured)).toEqual({});
    expect(anythingShown(coloured)).toBe(true);
    expect(anythingShown({})).toBe(false);
  });

  test("hover mode reveals while a mouse or pen rests on the item; click mode and touches never do", () => {
    expect(run([{ type: "pointerEnter", id: "a", mode: "hover", pointer: "mouse" }])).toEqual({ a: { revealed: true, coloured: false } });
    expect(run([{ type: "pointerEnter", id: "a", mode: "hover", pointer: "pen" }])).toEqual({ a: { revealed: true, coloured: false } });
    expect(run([{ type: "pointerEnter", id: "a", mode: "hover", pointer: "touch" }])).toEqual({});
    expect(run([{ type: "pointerEnter", id: "a", mode: "click", pointer: "mouse" }])).toEqual({});
  });

  test("leaving an item blurs it (and greys it) again; the others stay as they are", () => {
    const two = run([
      { type: "toggleReveal", id: "a" },
      { type: "toggleColour", id: "a" },
      { type: "toggleReveal", id: "b" },
    ]);
    expect(run([{ type: "leave", id: "a" }], two)).toEqual({ b: { revealed: true, coloured: false } });
    // Leaving an item that shows nothing changes nothing (the same state: no re-render).
    const same = run([{ type: "leave", id: "c" }], two);
    expect(same).toBe(two);
  });

  test("Escape, a hidden page or another case blur everything", () => {
    const two = run([
      { type: "toggleReveal", id: "a" },
      { type: "toggleColour", id: "b" },
    ]);
    expect(run([{ type: "hideAll" }], two)).toEqual({});
    const none: RevealState = {};
    expect(run([{ type: "hideAll" }], none)).toBe(none);
  });
});
