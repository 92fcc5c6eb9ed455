/**
 * What a file is from its bytes (src/domain/media/sniff.ts): the allowlist, markup refused
 * whatever its name, and image dimensions read from headers without decoding, against truncated
 * and hostile headers (only a MediaRefusal may come out) and a decompression bomb (a PNG header
 * claiming 100,000 x 100,000 pixels, refused before any decoding). Pure functions: the same on
 * either engine, no server or database.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DomainError } from "../../src/domain/core/errors.ts";
import { decodeImage } from "../../src/domain/media/decode.ts";
import { MediaRefusal } from "../../src/domain/media/refusals.ts";
import { MEDIA_TYPE_SPECS, readImageHeader, sniffType, type SniffedType } from "../../src/domain/media/sniff.ts";
import { concat, ihdr, PNG_SIGNATURE, pngChunk, refusalOf, text, u32be } from "../helpers/media-bytes.ts";

const MEDIA = join(import.meta.dir, "..", "fixtures", "media");
const PDQ = join(import.meta.dir, "..", "fixtures", "pdq");
const fixture = (dir: string, file: string) => new Uint8Array(readFileSync(join(dir, file)));

describe("sniffing the type from the bytes (pure: the same on either engine)", () => {
  const cases: [string, Uint8Array, SniffedType][] = [
    ["JPEG", fixture(PDQ, "bridge-aaa-orig.jpg"), "jpeg"],
    ["progressive JPEG", fixture(MEDIA, "bridge-progressive.jpg"), "jpeg"],
    ["PNG", fixture(PDQ, "c.png"), "png"],
    ["GIF89a", fixture(MEDIA, "bridge-animated.gif"), "gif"],
    ["GIF87a", fixture(MEDIA, "bridge.gif"), "gif"],
    ["WebP (VP8)", fixture(MEDIA, "bridge-lossy.webp"), "webp"],
    ["WebP (VP8L)", fixture(MEDIA, "bridge-lossless.webp"), "webp"],
    ["MP4 (isom)", concat(u32be(24), text("ftypisom"), u32be(0x200), text("isomiso2"), u32be(8), text("free")), "mp4"],
    ["MP4 (mp42)", concat(u32be(20), text("ftypmp42"), u32be(0), text("mp41"), u32be(8), text("mdat")), "mp4"],
    // EBML header: DocTypeVersion (42 87) then DocType (42 82) "webm".
    ["WebM", concat([0x1a, 0x45, 0xdf, 0xa3, 0x8b, 0x42, 0x87, 0x81, 0x04, 0x42, 0x82, 0x84], text("webm"), [0x18, 0x53, 0x80, 0x67]), "webm"],
    ["PDF", text("%PDF-1.7\n%\u00e2\u00e3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"), "pdf"],
    ["plain text", text("A report about a scam.\r\nSecond line\twith a tab, and <3 for the moderators.\n"), "text"],
    ["UTF-8 text with a byte-order mark", text("\ufeffMüller schickt jede Nacht Drohungen 😀"), "text"],
    ["text mentioning a tag later on", text("the message said <script>alert(1)</script>"), "text"],
  ];
  for (const [what, bytes, type] of cases) test(`${what} is ${type}`, () => expect(sniffType(bytes)).toBe(type));

  test("an HTML page named x.png is unknown: the name is never read", () => {
    const dir = mkdtempSync(join(tmpdir(), "sniff-"));
    try {
      writeFileSync(join(dir, "x.png"), "<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>");
      expect(sniffType(new Uint8Array(readFileSync(join(dir, "x.png"))))).toBe("unknown");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const unknown: [string, Uint8Array][] = [
    ["SVG", text('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="10" height="10"/></svg>')],
    ["SVG with an XML declaration", text('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>')],
    ["HTML after a byte-order mark and white space", text("\ufeff \n\t<HTML><body>hi</body></HTML>")],
    ["an HTML comment", text("<!-- x --><p>hi</p>")],
    ["a closing tag", text("</div>")],
    ["text with a NUL", text("abc\u0000def")],
    ["text with an escape sequence", text("\u001b[31mred\u001b[0m")],
    ["invalid UTF-8", new Uint8Array([0x61, 0x62, 0xc3, 0x28, 0x63])],
    ["UTF-8 cut inside a character", new Uint8Array([0x61, 0xe2, 0x82])],
    ["an empty file", new Uint8Array(0)],
    ["ZIP", concat(text("PK"), [3, 4, 20, 0, 0, 0, 8, 0])],
    ["a Windows executable", concat(text("MZ"), [0x90, 0, 3, 0, 0, 0, 4, 0])],
    ["HEIC (ftyp heic)", concat(u32be(24), text("ftypheic"), u32be(0), text("mif1heic"), u32be(8), text("free"))],
    ["QuickTime (ftyp qt)", concat(u32be(20), text("ftypqt  "), u32be(0x200), text("qt  "), u32be(8), text("wide"))],
    ["an ftyp box of absurd size", concat(u32be(0x7fffffff), text("ftypisom"), u32be(0), text("isom"))],
    ["Matroska (not WebM)", concat([0x1a, 0x45, 0xdf, 0xa3, 0x8f, 0x42, 0x82, 0x88], text("matroska"), [0x42, 0x87, 0x81, 0x04])],
    ["an EBML header cut short", new Uint8Array([0x1a, 0x45, 0xdf, 0xa3, 0x8b, 0x42])],
    ["TIFF", new Uint8Array([0x49, 0x49, 0x2a, 0x00, 8, 0, 0, 0])],
    ["BMP", concat(text("BM"), [0, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0])],
  ];
  for (const [what, bytes] of unknown) test(`${what} is unknown`, () => expect(sniffType(bytes)).toBe("unknown"));

  test("the allowlist is the eight types docs/media.md lists", () => {
    expect(Object.keys(MEDIA_TYPE_SPECS)).toEqual(["jpeg", "png", "gif", "webp", "mp4", "webm", "pdf", "text"]);
    const doc = readFileSync(join(import.meta.dir, "..", "..", "docs", "media.md"), "utf8");
    for (const spec of Object.values(MEDIA_TYPE_SPECS)) expect(doc).toContain(`\`${spec.mime}\``);
  });
});

describe("image dimensions from the header, without decoding (pure: the same on either engine)", () => {
  test("each image fixture: its type and size", () => {
    const images = readdirSync(MEDIA)
      .filter((file) => /\.(jpg|png|gif|webp)$/.test(file))
      .sort();
    expect(images.length).toBe(17);
    const found = images.map((file) => {
        const h = readImageHeader(fixture(MEDIA, file));
        return `${file} ${h.type} ${h.width}x${h.height}`;
      });
    expect(found).toEqual(images.map((file) => `${file} ${/\.jpg$/.test(file) ? "jpeg" : file.split(".").pop()} 128x128`));
    expect(readImageHeader(fixture(PDQ, "bridge-aaa-orig.jpg"))).toMatchObject({ type: "jpeg", width: 1600, height: 1004, components: 3, process: "baseline", precision: 8 });
    expect(readImageHeader(fixture(PDQ, "small.jpg"))).toMatchObject({ type: "jpeg", width: 224, height: 399, process: "progressive" });
    expect(readImageHeader(fixture(MEDIA, "bridge-cmyk.jpg"))).toMatchObject({ components: 4 });
    expect(readImageHeader(fixture(PDQ, "c.png"))).toEqual({ type: "png", width: 1432, height: 812, bitDepth: 8, colorType: 6, interlaced: false });
    expect(readImageHeader(fixture(MEDIA, "bridge-interlaced.png"))).toMatchObject({ interlaced: true });
    expect(readImageHeader(fixture(MEDIA, "bridge-lossless.webp"))).toMatchObject({ encoding: "VP8L" });
    // VP8X: canvas width and height minus one, 24 bits each, little-endian.
    const vp8x = concat(text("RIFF"), [30, 0, 0, 0], text("WEBPVP8X"), [10, 0, 0, 0, 0x10, 0, 0, 0, 0x7f, 0x0c, 0x00, 0x37, 0x0a, 0x00]);
    expect(readImageHeader(vp8x)).toEqual({ type: "webp", encoding: "VP8X", width: 3200, height: 2616 });
  });

  test("every cut of each header is refused as truncated (or not an image), never misread, never another error", () => {
    const files: [string, string][] = [
      [PDQ, "bridge-aaa-orig.jpg"], // its frame header lies after APP0, APP1 (Exif) and the tables
      [PDQ, "c.png"],
      [MEDIA, "bridge.gif"],
      [MEDIA, "bridge-lossy.webp"],
      [MEDIA, "bridge-lossless.webp"],
    ];
    for (const [dir, file] of files) {
      const bytes = fixture(dir, file);
      const whole = readImageHeader(bytes);
      let firstWhole = -1;
      for (let n = 0; n <= Math.min(bytes.length, 2048); n++) {
        const cut = bytes.subarray(0, n);
        let outcome: string;
        try {
          const h = readImageHeader(cut);
          expect({ file, n, width: h.width, height: h.height }).toEqual({ file, n, width: whole.width, height: whole.height });
          outcome = "read";
        } catch (err) {
          if (!(err instanceof MediaRefusal)) throw err;
          outcome = err.reason;
        }
        if (outcome === "read" && firstWhole < 0) firstWhole = n;
        // Once the header is whole every longer cut reads; before it, a cut is truncated (or,
        // shorter than the signature, not an image).
        if (firstWhole >= 0) expect({ file, n, outcome }).toEqual({ file, n, outcome: "read" });
        else expect({ file, n, ok: ["truncated", "not_an_image"].includes(outcome) }).toEqual({ file, n, ok: true });
      }
      expect({ file, readsFrom: firstWhole > 0 }).toEqual({ file, readsFrom: true });
    }
  });

  test("hostile headers: only MediaRefusals, and the loops end", () => {
    const soi = [0xff, 0xd8];
    const cases: [string, Uint8Array, string][] = [
      ["a JPEG segment whose length runs past the end", concat(soi, [0xff, 0xe1, 0xff, 0xf0, 1, 2, 3]), "truncated"],
      ["a JPEG segment of length 0", concat(soi, [0xff, 0xe0, 0x00, 0x00, 0xff, 0xc0]), "corrupt"],
      ["a JPEG of a megabyte of fill bytes", concat(soi, new Uint8Array(1 << 20).fill(0xff)), "truncated"],
      ["a JPEG scan before any frame", concat(soi, [0xff, 0xda, 0x00, 0x08, 1, 1, 0, 0, 0x3f, 0]), "corrupt"],
      ["a JPEG's EOI before any frame", concat(soi, [0xff, 0xd9]), "corrupt"],
      ["a JPEG with garbage where a marker goes", concat(soi, [0xff, 0xe0, 0x00, 0x04, 0, 0, 0x12, 0x34]), "corrupt"],
      ["a JPEG frame of height 0 (DNL)", concat(soi, [0xff, 0xc0, 0x00, 0x0b, 8, 0, 0, 0, 16, 1, 1, 0x11, 0]), "unsupported"],
      ["a JPEG frame of width 0", concat(soi, [0xff, 0xc0, 0x00, 0x0b, 8, 0, 16, 0, 0, 1, 1, 0x11, 0]), "corrupt"],
      ["a JPEG frame header too short", concat(soi, [0xff, 0xc0, 0x00, 0x04, 8, 0]), "corrupt"],
      ["a PNG whose first chunk is not IHDR", concat(PNG_SIGNATURE, pngChunk("gAMA", [0, 0, 0xb1, 0x8f]), new Uint8Array(20)), "corrupt"],
      ["a PNG of bit depth 3", concat(PNG_SIGNATURE, ihdr(10, 10, 3, 2)), "corrupt"],
      ["a PNG of 16-bit palette", concat(PNG_SIGNATURE, ihdr(10, 10, 16, 3)), "corrupt"],
      ["a PNG of width 0", concat(PNG_SIGNATURE, ihdr(0, 10)), "corrupt"],
      ["a PNG wider than 2^31 - 1", concat(PNG_SIGNATURE, ihdr(0x80000000, 10)), "corrupt"],
      ["a PNG of interlace method 2", concat(PNG_SIGNATURE, ihdr(10, 10, 8, 2, 2)), "corrupt"],
      ["a GIF of 0 x 0", concat(text("GIF89a"), [0, 0, 0, 0, 0, 0, 0]), "corrupt"],
      ["a WebP of an unknown first chunk", concat(text("RIFF"), [30, 0, 0, 0], text("WEBPJUNK"), new Uint8Array(18)), "corrupt"],
      ["a VP8 WebP without its start code", concat(text("RIFF"), [30, 0, 0, 0], text("WEBPVP8 "), new Uint8Array(18)), "corrupt"],
      ["a VP8L WebP without its signature", concat(text("RIFF"), [30, 0, 0, 0], text("WEBPVP8L"), new Uint8Array(18)), "corrupt"],
      ["HTML", text("<html><body>hi</body></html>"), "not_an_image"],
      ["nothing", new Uint8Array(0), "not_an_image"],
    ];
    for (const [what, bytes, reason] of cases) expect({ what, reason: refusalOf(() => readImageHeader(bytes)) }).toEqual({ what, reason });

    // Random bytes after each signature: a header or a refusal, nothing else.
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) & 0xff;
    const signatures = [[0xff, 0xd8, 0xff], PNG_SIGNATURE, [...text("GIF89a")], [...text("RIFF"), 0, 0, 0, 0, ...text("WEBP")]];
    for (let i = 0; i < 4000; i++) {
      const bytes = concat(signatures[i % 4]!, Array.from({ length: i % 200 }, random));
      refusalOf(() => readImageHeader(bytes));
    }
  });
});

describe("a decompression bomb is refused before decoding (pure: the same on either engine)", () => {
  test("a PNG header claiming 100,000 x 100,000 pixels: too_many_pixels, a 413-kind DomainError, from the header alone", () => {
    // Only the signature and IHDR: had anything tried to read further, it would have found the
    // file cut short (truncated) instead.
    const bomb = concat(PNG_SIGNATURE, ihdr(100_000, 100_000));
    expect(readImageHeader(bomb)).toMatchObject({ type: "png", width: 100_000, height: 100_000 });
    let caught: unknown;
    try {
      decodeImage(bomb);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(MediaRefusal);
    expect(caught).toBeInstanceOf(DomainError);
    expect((caught as MediaRefusal).reason).toBe("too_many_pixels");
    expect((caught as MediaRefusal).kind).toBe("too_large");
    expect((caught as MediaRefusal).message).toContain("100000 x 100000");
  });

  test("the same header with a bound above it gets as far as the missing data (the bound is what stopped it)", () => {
    const header = concat(PNG_SIGNATURE, ihdr(1000, 1000));
    expect(refusalOf(() => decodeImage(header, { maxPixels: 1_000_000 }))).toBe("truncated");
    expect(refusalOf(() => decodeImage(header, { maxPixels: 999_999 }))).toBe("too_many_pixels");
  });
});
