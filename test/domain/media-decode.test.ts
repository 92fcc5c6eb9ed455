/**
 * Decoding images to RGBA (src/domain/media/decode.ts): every variant of one picture the
 * decoders read (test/fixtures/media/, made from ThreatExchange's bridge photograph) gives the
 * same pixels or the same PDQ hash within a few bits; what they cannot read (WebP, arithmetic or
 * 12-bit JPEG, CMYK without its Adobe marker) is refused with a reason; truncated, corrupt and
 * oversized files are refused before or instead of decoding, and nothing but a MediaRefusal ever
 * comes out (mutated files included). Pure functions: the same on either engine.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { deflateSync } from "node:zlib";
import { join } from "node:path";
import { ERROR_KINDS } from "../../src/api/http-errors.ts";
import { decodeImage, type DecodedImage } from "../../src/domain/media/decode.ts";
import { hammingDistance, pdqDihedralHashes, pdqHash } from "../../src/domain/media/pdq.ts";
import { MEDIA_REFUSAL_SPECS } from "../../src/domain/media/refusals.ts";
import { concat, ihdr, PNG_SIGNATURE, pngChunk, refusalOf, text } from "../helpers/media-bytes.ts";

const MEDIA = join(import.meta.dir, "..", "fixtures", "media");
const PDQ = join(import.meta.dir, "..", "fixtures", "pdq");
const bytesOf = (dir: string, file: string) => new Uint8Array(readFileSync(join(dir, file)));
const media = (file: string) => bytesOf(MEDIA, file);
const decoded = (file: string) => decodeImage(media(file));

/** Mean of each channel (R, G, B, A). */
function means(img: DecodedImage): number[] {
  const sums = [0, 0, 0, 0];
  for (let i = 0; i < img.rgba.length; i++) sums[i & 3]! += img.rgba[i]!;
  return sums.map((s) => s / (img.width * img.height));
}

/** Where each JPEG marker segment starts, up to the first scan (SOS). */
function jpegSegments(bytes: Uint8Array): { marker: number; at: number; length: number }[] {
  const found: { marker: number; at: number; length: number }[] = [];
  let at = 2;
  while (at + 4 <= bytes.length) {
    const marker = bytes[at + 1]!;
    const length = (bytes[at + 2]! << 8) | bytes[at + 3]!;
    found.push({ marker, at, length });
    if (marker === 0xda) break;
    at += 2 + length;
  }
  return found;
}

/** Where a well-formed GIF's first image ends: its blocks walked (extensions, descriptor, tables, sub-blocks). */
function gifFirstImageEnd(b: Uint8Array): number {
  const table = (flags: number) => (flags & 0x80 ? 3 << ((flags & 7) + 1) : 0);
  const skipSubBlocks = (from: number) => {
    let at = from;
    while (b[at] !== 0) at += b[at]! + 1;
    return at + 1;
  };
  let at = 13 + table(b[10]!);
  while (b[at] === 0x21) at = skipSubBlocks(at + 2);
  if (b[at] !== 0x2c) throw new Error("no image descriptor where expected");
  return skipSubBlocks(at + 10 + table(b[at + 9]!) + 1);
}

describe("decoding each variant of one picture (pure: the same on either engine)", () => {
  const reference = () => decoded("bridge.png");

  test("bridge.png: 128 x 128 RGBA, opaque", () => {
    const img = reference();
    expect([img.type, img.width, img.height, img.rgba.length]).toEqual(["png", 128, 128, 128 * 128 * 4]);
    expect(means(img)[3]).toBe(255);
  });

  test("lossless PNG variants give the same pixels: Adam7-interlaced, 16-bit RGB, RGBA; 16-bit grey, grey and alpha as grey", () => {
    expect(decoded("bridge-interlaced.png").rgba).toEqual(reference().rgba);
    expect(decoded("bridge-rgb16.png").rgba).toEqual(reference().rgba);
    expect(decoded("bridge-rgba.png").rgba).toEqual(reference().rgba);
    const grey = decoded("bridge-grey.png");
    for (let p = 0; p < 128 * 128; p++) {
      if (grey.rgba[p * 4] !== grey.rgba[p * 4 + 1] || grey.rgba[p * 4] !== grey.rgba[p * 4 + 2]) throw new Error(`grey pixel ${p} is not grey`);
    }
    expect(decoded("bridge-grey16.png").rgba).toEqual(grey.rgba);
    expect(decoded("bridge-grey-alpha.png").rgba).toEqual(grey.rgba);
  });

  test("a 1-bit PNG unpacks to black and white pixels of the picture's mean brightness", () => {
    const img = decoded("bridge-1bit.png");
    const values = new Set(img.rgba.filter((_, i) => i % 4 === 0));
    expect([...values].sort((a, b) => a - b)).toEqual([0, 255]);
    expect(Math.abs(means(img)[0]! - means(decoded("bridge-grey.png"))[0]!)).toBeLessThan(12);
  });

  test("an interlaced GIF gives the same pixels as the same GIF not interlaced", () => {
    expect(decoded("bridge-interlaced.gif").rgba).toEqual(decoded("bridge.gif").rgba);
  });

  const variants = ["bridge-grey.png", "bridge-palette.png", "bridge.gif", "bridge-interlaced.gif", "bridge-animated.gif", "bridge-grey.jpg", "bridge-progressive.jpg", "bridge-cmyk.jpg"];
  for (const file of variants) {
    test(`${file}: 128 x 128 and its PDQ hash within 8 bits of bridge.png's`, () => {
      const img = decoded(file);
      expect([img.width, img.height]).toEqual([128, 128]);
      const distance = hammingDistance(pdqHash(img).hash, pdqHash(reference()).hash);
      console.log(`${file}: ${distance} bits from bridge.png`);
      expect(distance).toBeLessThanOrEqual(8);
    });
  }

  test("a CMYK JPEG (Adobe marker) decodes to the picture's colours, not their negative", () => {
    const [r, g, b] = means(decoded("bridge-cmyk.jpg"));
    const [r0, g0, b0] = means(reference());
    expect([Math.abs(r! - r0!), Math.abs(g! - g0!), Math.abs(b! - b0!)].every((d) => d < 6)).toBe(true);
  });

  test("an animated GIF gives its first frame (the picture), not its second (the picture mirrored)", () => {
    const hash = pdqHash(decoded("bridge-animated.gif")).hash;
    const mirrored = pdqDihedralHashes(reference()).hashes.flipY;
    expect(hammingDistance(hash, mirrored)).toBeGreaterThan(31);
    // Cut right after its first image (the second and the trailer gone): the first is all it reads.
    const bytes = media("bridge-animated.gif");
    const end = gifFirstImageEnd(bytes);
    expect(end).toBeLessThan(bytes.length - 1000);
    expect(decodeImage(bytes.subarray(0, end)).rgba).toEqual(decoded("bridge-animated.gif").rgba);
    expect(refusalOf(() => decodeImage(bytes.subarray(0, end - 1)))).toBe("truncated");
    // Only the first image is read: the second cut halfway, or garbage in its place, changes nothing.
    const halfway = Math.floor((end + bytes.length) / 2);
    expect(decodeImage(bytes.subarray(0, halfway)).rgba).toEqual(decoded("bridge-animated.gif").rgba);
    const junk = concat(bytes.subarray(0, end), new Uint8Array(5000).fill(0x99));
    expect(decodeImage(junk).rgba).toEqual(decoded("bridge-animated.gif").rgba);
  });

  test("bytes after a JPEG's end-of-image marker (an appended file) are left alone", () => {
    const bytes = media("bridge-progressive.jpg");
    expect(decodeImage(concat(bytes, text("PK\u0003\u0004 a zip glued on"))).rgba).toEqual(decodeImage(bytes).rgba);
  });
});

describe("what the decoders cannot read is refused with a reason (pure: the same on either engine)", () => {
  test("WebP, lossy and lossless: unsupported, saying they are stored but not decoded", () => {
    for (const file of ["bridge-lossy.webp", "bridge-lossless.webp"]) {
      expect(refusalOf(() => decoded(file))).toBe("unsupported");
      expect(() => decoded(file)).toThrow(/WebP images are stored but not decoded/);
    }
  });

  test("JPEG in arithmetic coding, lossless or 12-bit: unsupported, before decoding", () => {
    const bytes = media("bridge-grey.jpg");
    const sof = jpegSegments(bytes).find((s) => s.marker === 0xc0)!;
    const variant = (marker: number, precision = 8) => {
      const copy = bytes.slice();
      copy[sof.at + 1] = marker;
      copy[sof.at + 4] = precision;
      return copy;
    };
    expect(refusalOf(() => decodeImage(variant(0xc9)))).toBe("unsupported");
    expect(() => decodeImage(variant(0xc9))).toThrow(/arithmetic coding/);
    expect(refusalOf(() => decodeImage(variant(0xc3)))).toBe("unsupported");
    expect(refusalOf(() => decodeImage(variant(0xc0, 12)))).toBe("unsupported");
    expect(refusalOf(() => decodeImage(variant(0xc0, 8)))).toBe("none");
  });

  test("a JPEG of 4 components without its Adobe marker (CMYK or YCCK, unknown which): unsupported", () => {
    const bytes = media("bridge-cmyk.jpg");
    const adobe = jpegSegments(bytes).find((s) => s.marker === 0xee)!;
    expect(adobe).toBeDefined();
    const without = concat(bytes.subarray(0, adobe.at), bytes.subarray(adobe.at + 2 + adobe.length));
    expect(refusalOf(() => decodeImage(without))).toBe("unsupported");
    expect(() => decodeImage(without)).toThrow(/without an Adobe marker/);
  });

  test("text, PDF, HTML: not an image", () => {
    for (const s of ["hello", "%PDF-1.7\n", "<html></html>"]) expect(refusalOf(() => decodeImage(text(s)))).toBe("not_an_image");
  });

  test("every refusal is a DomainError answered 400 or 413", () => {
    expect(Object.fromEntries(Object.entries(MEDIA_REFUSAL_SPECS).map(([reason, spec]) => [reason, ERROR_KINDS[spec.kind].http]))).toEqual({
      truncated: 400,
      corrupt: 400,
      unsupported: 400,
      not_an_image: 400,
      too_many_pixels: 413,
      too_long: 413,
      timed_out: 413,
    });
  });
});

describe("the pixel bound, truncation and corruption (pure: the same on either engine)", () => {
  test("a JPEG frame of 60,000 x 60,000 and a GIF whose first frame is 60,000 x 60,000 (screen 10 x 10): too_many_pixels", () => {
    const jpeg = concat([0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 8, 0xea, 0x60, 0xea, 0x60, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    expect(refusalOf(() => decodeImage(jpeg))).toBe("too_many_pixels");
    const gif = concat(text("GIF89a"), [10, 0, 10, 0, 0x80, 0, 0], [0, 0, 0, 255, 255, 255], [0x2c, 0, 0, 0, 0, 0x60, 0xea, 0x60, 0xea, 0, 2, 2, 0x4c, 0x01, 0, 0x3b]);
    expect(refusalOf(() => decodeImage(gif))).toBe("too_many_pixels");
    expect(() => decodeImage(gif)).toThrow(/GIF frame/);
  });

  test("the bound is a parameter (a number of at least 1)", () => {
    expect(() => decodeImage(media("bridge.png"), { maxPixels: Number.NaN })).toThrow(RangeError);
    expect(() => decodeImage(media("bridge.png"), { maxPixels: 0 })).toThrow(RangeError);
    expect(refusalOf(() => decodeImage(media("bridge.png"), { maxPixels: 128 * 128 }))).toBe("none");
    expect(refusalOf(() => decodeImage(media("bridge.png"), { maxPixels: 128 * 128 - 1 }))).toBe("too_many_pixels");
    expect(refusalOf(() => decodeImage(media("bridge-progressive.jpg"), { maxPixels: 100 }))).toBe("too_many_pixels");
  });

  test("a PNG whose image data inflates past what its dimensions take (a zlib bomb behind a small header): refused, without inflating it all", () => {
    const bomb = concat(PNG_SIGNATURE, ihdr(1000, 1000, 8, 0), pngChunk("IDAT", deflateSync(new Uint8Array(64 << 20))), pngChunk("IEND", []));
    expect(refusalOf(() => decodeImage(bomb))).toBe("corrupt");
    expect(() => decodeImage(bomb)).toThrow(/decompression bomb/);
  });

  test("a PNG's ICC profile is not read: a corrupt one, or a zlib bomb of 64 MB, leaves the pixels as they are", () => {
    const bytes = media("bridge.png");
    const withProfile = (profile: Uint8Array) => concat(bytes.subarray(0, 33), pngChunk("iCCP", concat(text("bomb"), [0, 0], profile)), bytes.subarray(33));
    expect(decodeImage(withProfile(text("not a zlib stream"))).rgba).toEqual(decoded("bridge.png").rgba);
    expect(decodeImage(withProfile(deflateSync(new Uint8Array(64 << 20)))).rgba).toEqual(decoded("bridge.png").rgba);
  });

  test("a PNG whose image data inflates to less than its dimensions take, or is not zlib: truncated, corrupt", () => {
    const short = concat(PNG_SIGNATURE, ihdr(100, 100, 8, 0), pngChunk("IDAT", deflateSync(new Uint8Array(100 * 101 - 1))), pngChunk("IEND", []));
    expect(refusalOf(() => decodeImage(short))).toBe("truncated");
    const garbage = concat(PNG_SIGNATURE, ihdr(100, 100, 8, 0), pngChunk("IDAT", text("not a zlib stream at all")), pngChunk("IEND", []));
    expect(refusalOf(() => decodeImage(garbage))).toBe("corrupt");
    const exact = concat(PNG_SIGNATURE, ihdr(100, 100, 8, 0), pngChunk("IDAT", deflateSync(new Uint8Array(100 * 101))), pngChunk("IEND", []));
    expect(refusalOf(() => decodeImage(exact))).toBe("none");
  });

  test("every file cut short is refused as truncated (a JPEG, a progressive JPEG, a PNG, an interlaced PNG, a GIF)", () => {
    for (const file of ["bridge-grey.jpg", "bridge-progressive.jpg", "bridge.png", "bridge-interlaced.png", "bridge.gif", "bridge-interlaced.gif"]) {
      const bytes = media(file);
      for (const fraction of [0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99]) {
        const n = Math.floor(bytes.length * fraction);
        expect({ file, n, reason: refusalOf(() => decodeImage(bytes.subarray(0, n))) }).toEqual({ file, n, reason: "truncated" });
      }
      // A JPEG's last two bytes are its end-of-image marker; a PNG's last 12 its IEND; a GIF's last its trailer.
      const last = file.endsWith(".jpg") ? 2 : file.endsWith(".png") ? 12 : 1;
      expect({ file, reason: refusalOf(() => decodeImage(bytes.subarray(0, bytes.length - last - 1))) }).toEqual({ file, reason: "truncated" });
    }
  });

  test("GIF: a bad LZW code size or no colour table is corrupt", () => {
    const image = (codeSize: number, table: boolean) =>
      concat(text("GIF89a"), [2, 0, 2, 0, table ? 0x80 : 0, 0, 0], table ? [0, 0, 0, 255, 255, 255] : [], [0x2c, 0, 0, 0, 0, 2, 0, 2, 0, 0, codeSize, 0x02, 0x44, 0x01, 0, 0x3b]);
    expect(refusalOf(() => decodeImage(image(2, true)))).toBe("none");
    expect(refusalOf(() => decodeImage(image(12, true)))).toBe("corrupt");
    expect(refusalOf(() => decodeImage(image(2, false)))).toBe("corrupt");
  });

  test("mutated files (random bytes changed): decoded or refused, nothing else, and never hanging", () => {
    let seed = 43;
    const random = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % n;
    const outcomes: Record<string, number> = {};
    const files: [string, string][] = [
      [PDQ, "wee.jpg"],
      [MEDIA, "bridge-progressive.jpg"],
      [MEDIA, "bridge-1bit.png"],
      [MEDIA, "bridge-palette.png"],
      [MEDIA, "bridge.gif"],
    ];
    for (const [dir, file] of files) {
      const original = bytesOf(dir, file);
      for (let i = 0; i < 120; i++) {
        const bytes = original.slice();
        // Mutations cluster in the first kilobyte (headers, tables) and spread over the rest.
        for (let k = 1 + random(4); k > 0; k--) bytes[random(2) ? random(Math.min(1024, bytes.length)) : random(bytes.length)] = random(256);
        const reason = refusalOf(() => decodeImage(bytes, { maxPixels: 4_000_000 }));
        outcomes[reason] = (outcomes[reason] ?? 0) + 1;
      }
    }
    console.log("mutated files:", JSON.stringify(outcomes));
    expect(Object.values(outcomes).reduce((a, b) => a + b, 0)).toBe(600);
  });
});
