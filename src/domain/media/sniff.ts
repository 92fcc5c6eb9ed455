/**
 * What a file is, from its bytes alone: never from the declared type or the name (a page of
 * HTML named x.png is "unknown"). The allowlist is MEDIA_TYPE_SPECS; everything else, SVG and
 * HTML included, is "unknown". And an image's dimensions read from its header without decoding
 * anything, so that a decompression bomb (a few kilobytes claiming 100,000 x 100,000 pixels) is
 * refused before a byte of it is inflated.
 *
 * The readers face hostile bytes: every read is bounds-checked, every loop is bounded by the
 * length of the input (and a count), and the only thing thrown is a MediaRefusal.
 */
import { MediaRefusal } from "./refusals.ts";

interface MediaTypeSpec {
  mime: string;
  /** An image whose header readImageHeader reads. */
  image: boolean;
  /** How it is recognised, for docs/media.md. */
  signature: string;
}

/** The allowlist (docs/media.md). */
export const MEDIA_TYPE_SPECS = {
  jpeg: { mime: "image/jpeg", image: true, signature: "FF D8 FF" },
  png: { mime: "image/png", image: true, signature: "89 50 4E 47 0D 0A 1A 0A" },
  gif: { mime: "image/gif", image: true, signature: "GIF87a or GIF89a" },
  webp: { mime: "image/webp", image: true, signature: "RIFF, a size, WEBP" },
  mp4: { mime: "video/mp4", image: false, signature: "an ftyp box whose major brand is an MP4 one (isom, iso2…iso9, mp41, mp42, avc1, dash, M4V, MSNV, mmp4)" },
  webm: { mime: "video/webm", image: false, signature: "an EBML header (1A 45 DF A3) whose DocType is webm" },
  pdf: { mime: "application/pdf", image: false, signature: "%PDF- at the first byte" },
  text: { mime: "text/plain; charset=utf-8", image: false, signature: "valid UTF-8 throughout, no control characters but tab, line feed, form feed and carriage return, not starting with markup (<tag, <!, <?, </)" },
} as const satisfies Record<string, MediaTypeSpec>;

export type MediaType = keyof typeof MEDIA_TYPE_SPECS;
export type SniffedType = MediaType | "unknown";
export type ImageType = { [K in MediaType]: (typeof MEDIA_TYPE_SPECS)[K]["image"] extends true ? K : never }[MediaType];

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const MP4_BRANDS = new Set(["isom", "iso2", "iso3", "iso4", "iso5", "iso6", "iso7", "iso8", "iso9", "mp41", "mp42", "avc1", "dash", "M4V ", "MSNV", "mmp4"]);

function startsWith(bytes: Uint8Array, prefix: readonly number[], at = 0): boolean {
  if (bytes.length < at + prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

function ascii(bytes: Uint8Array, at: number, length: number): string {
  if (at < 0 || bytes.length < at + length) return "";
  let s = "";
  for (let i = at; i < at + length; i++) s += String.fromCharCode(bytes[i]!);
  return s;
}

const u16be = (b: Uint8Array, at: number) => (b[at]! << 8) | b[at + 1]!;
const u16le = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u24le = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
const u32be = (b: Uint8Array, at: number) => ((b[at]! << 24) >>> 0) + ((b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!);
const u32le = (b: Uint8Array, at: number) => ((b[at + 3]! << 24) >>> 0) + ((b[at + 2]! << 16) | (b[at + 1]! << 8) | b[at]!);

/** The type of a file from its bytes. Pass the whole file: plain text is checked throughout. */
export function sniffType(bytes: Uint8Array): SniffedType {
  const image = imageTypeOf(bytes);
  if (image) return image;
  if (isMp4(bytes)) return "mp4";
  if (isWebm(bytes)) return "webm";
  if (ascii(bytes, 0, 5) === "%PDF-") return "pdf";
  if (isPlainText(bytes)) return "text";
  return "unknown";
}

/** Which image type the signature says, or null: a cheap test of the first bytes only. */
export function imageTypeOf(bytes: Uint8Array): ImageType | null {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "jpeg";
  if (startsWith(bytes, PNG_SIGNATURE)) return "png";
  const six = ascii(bytes, 0, 6);
  if (six === "GIF87a" || six === "GIF89a") return "gif";
  if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP") return "webp";
  return null;
}

/** ISO base media: a first box `ftyp` of a sane size whose major brand is one of MP4's. */
function isMp4(bytes: Uint8Array): boolean {
  if (bytes.length < 16 || ascii(bytes, 4, 4) !== "ftyp") return false;
  const size = u32be(bytes, 0);
  if (size < 16 || size > 4096) return false;
  return MP4_BRANDS.has(ascii(bytes, 8, 4));
}

/**
 * An EBML variable-length integer at `at`: its value (marker bit cleared unless keepMarker, as
 * element IDs keep it) and its length, or null when it runs past the end or is not valid.
 */
function readVint(bytes: Uint8Array, at: number, keepMarker: boolean): { value: number; length: number } | null {
  if (at >= bytes.length) return null;
  const first = bytes[at]!;
  if (first === 0) return null;
  const length = Math.clz32(first) - 23; // 1 for 1xxxxxxx … 8 for 00000001
  if (at + length > bytes.length) return null;
  let value = keepMarker ? first : first & (0xff >> length);
  for (let i = 1; i < length; i++) value = value * 256 + bytes[at + i]!;
  return { value, length };
}

/** Matroska's EBML header (1A 45 DF A3) whose DocType element (42 82) says "webm". */
function isWebm(bytes: Uint8Array): boolean {
  if (!startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])) return false;
  const headerSize = readVint(bytes, 4, false);
  if (!headerSize) return false;
  let at = 4 + headerSize.length;
  const end = Math.min(bytes.length, at + headerSize.value);
  for (let children = 0; at < end && children < 32; children++) {
    const id = readVint(bytes, at, true);
    if (!id) return false;
    const size = readVint(bytes, at + id.length, false);
    if (!size) return false;
    const body = at + id.length + size.length;
    if (id.value === 0x4282) return size.value === 4 && ascii(bytes, body, 4) === "webm";
    at = body + size.value;
  }
  return false;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Valid UTF-8 from end to end, no control character but tab, line feed, form feed and carriage
 * return (a NUL says binary), and not markup: after a byte-order mark and white space, no `<`
 * followed by a letter, `!`, `?` or `/` (HTML, SVG, XML are "unknown", whatever their name).
 */
function isPlainText(bytes: Uint8Array): boolean {
  if (bytes.length === 0) return false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d) return false;
  }
  try {
    utf8.decode(bytes);
  } catch {
    return false;
  }
  let at = startsWith(bytes, [0xef, 0xbb, 0xbf]) ? 3 : 0;
  while (at < bytes.length && (bytes[at] === 0x20 || bytes[at] === 0x09 || bytes[at] === 0x0a || bytes[at] === 0x0c || bytes[at] === 0x0d)) at++;
  if (bytes[at] === 0x3c /* < */) {
    const next = bytes[at + 1];
    if (next === undefined) return true;
    const letter = (next | 0x20) >= 0x61 && (next | 0x20) <= 0x7a;
    if (letter || next === 0x21 || next === 0x3f || next === 0x2f) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Image headers.

export type JpegProcess = "baseline" | "extended" | "progressive" | "lossless" | "hierarchical" | "arithmetic";

export type ImageHeader =
  | {
      type: "jpeg";
      width: number;
      height: number;
      /** 1 grey, 3 YCbCr (or RGB), 4 CMYK or YCCK. */
      components: number;
      precision: number;
      process: JpegProcess;
      /** Where the frame header (SOFn) starts: the scans follow it. */
      frameOffset: number;
    }
  | { type: "png"; width: number; height: number; bitDepth: number; colorType: number; interlaced: boolean }
  | { type: "gif"; width: number; height: number }
  | { type: "webp"; width: number; height: number; encoding: "VP8" | "VP8L" | "VP8X" };

/** At most this many segments are walked before a JPEG's frame header: real files have a dozen. */
const MAX_JPEG_SEGMENTS = 10_000;
/** The largest dimension a header may claim: 2^31 - 1, as PNG allows. */
const MAX_DIMENSION = 0x7fffffff;

/**
 * An image's type and dimensions from its header, without decoding. Throws a MediaRefusal:
 * not_an_image (no image signature), truncated (the header is cut short), corrupt (the header
 * breaks its format's rules).
 */
export function readImageHeader(bytes: Uint8Array): ImageHeader {
  const type = imageTypeOf(bytes);
  switch (type) {
    case "jpeg":
      return readJpegHeader(bytes);
    case "png":
      return readPngHeader(bytes);
    case "gif":
      return readGifHeader(bytes);
    case "webp":
      return readWebpHeader(bytes);
    case null:
      throw new MediaRefusal("not_an_image", "Not an image of the allowlist (JPEG, PNG, GIF, WebP): its first bytes match none of them");
  }
}

function dimensions<T extends { width: number; height: number }>(header: T, format: string): T {
  if (header.width < 1 || header.height < 1) throw new MediaRefusal("corrupt", `${format} header gives an image of ${header.width} x ${header.height} pixels`);
  if (header.width > MAX_DIMENSION || header.height > MAX_DIMENSION) throw new MediaRefusal("corrupt", `${format} header gives a dimension above 2^31 - 1`);
  return header;
}

/** SOFn markers and the process each starts (C4 DHT, C8 JPG and CC DAC are not frames). */
const JPEG_FRAMES: Readonly<Record<number, JpegProcess>> = {
  0xc0: "baseline",
  0xc1: "extended",
  0xc2: "progressive",
  0xc3: "lossless",
  0xc5: "hierarchical",
  0xc6: "hierarchical",
  0xc7: "hierarchical",
  0xc9: "arithmetic",
  0xca: "arithmetic",
  0xcb: "arithmetic",
  0xcd: "arithmetic",
  0xce: "arithmetic",
  0xcf: "arithmetic",
};

/** Walks the marker segments after SOI up to the frame header (SOFn) and reads it. */
function readJpegHeader(bytes: Uint8Array): Extract<ImageHeader, { type: "jpeg" }> {
  const n = bytes.length;
  let at = 2;
  for (let segments = 0; segments < MAX_JPEG_SEGMENTS; segments++) {
    if (at >= n) throw new MediaRefusal("truncated", "JPEG ends before its frame header");
    if (bytes[at] !== 0xff) throw new MediaRefusal("corrupt", `JPEG has no marker where one was expected (offset ${at})`);
    while (at < n && bytes[at] === 0xff) at++; // fill bytes
    if (at >= n) throw new MediaRefusal("truncated", "JPEG ends before its frame header");
    const marker = bytes[at++]!;
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // TEM, RSTn: no length
    if (marker === 0x00 || marker === 0xd8) throw new MediaRefusal("corrupt", `JPEG has a misplaced marker FF${marker.toString(16).padStart(2, "0").toUpperCase()}`);
    if (marker === 0xd9) throw new MediaRefusal("corrupt", "JPEG ends (EOI) before any frame header");
    if (marker === 0xda) throw new MediaRefusal("corrupt", "JPEG starts a scan before any frame header");
    if (at + 2 > n) throw new MediaRefusal("truncated", "JPEG ends inside a segment's length");
    const length = u16be(bytes, at);
    if (length < 2) throw new MediaRefusal("corrupt", "JPEG has a segment shorter than its own length field");
    const process = JPEG_FRAMES[marker];
    if (process !== undefined) {
      if (length < 8) throw new MediaRefusal("corrupt", "JPEG frame header is too short");
      if (at + 8 > n) throw new MediaRefusal("truncated", "JPEG ends inside its frame header");
      const header = {
        type: "jpeg" as const,
        precision: bytes[at + 2]!,
        height: u16be(bytes, at + 3),
        width: u16be(bytes, at + 5),
        components: bytes[at + 7]!,
        process,
        frameOffset: at - 2,
      };
      if (header.height === 0) throw new MediaRefusal("unsupported", "JPEG leaves its height to a DNL marker after the first scan, which is not supported");
      return dimensions(header, "JPEG");
    }
    at += length;
  }
  throw new MediaRefusal("corrupt", `JPEG has more than ${MAX_JPEG_SEGMENTS} segments before its frame header`);
}

/** PNG's valid bit depths per colour type (ISO 15948, 11.2.2). */
const PNG_DEPTHS: Readonly<Record<number, readonly number[]>> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

function readPngHeader(bytes: Uint8Array): Extract<ImageHeader, { type: "png" }> {
  // Signature (8), IHDR's length (4) and type (4), then its 13 bytes.
  if (bytes.length < 29) throw new MediaRefusal("truncated", "PNG ends inside its header (IHDR)");
  if (u32be(bytes, 8) !== 13 || ascii(bytes, 12, 4) !== "IHDR") throw new MediaRefusal("corrupt", "PNG does not start with a 13-byte IHDR chunk");
  const header = {
    type: "png" as const,
    width: u32be(bytes, 16),
    height: u32be(bytes, 20),
    bitDepth: bytes[24]!,
    colorType: bytes[25]!,
    interlaced: bytes[28] === 1,
  };
  if (!PNG_DEPTHS[header.colorType]?.includes(header.bitDepth)) throw new MediaRefusal("corrupt", `PNG has colour type ${header.colorType} with bit depth ${header.bitDepth}`);
  if (bytes[26] !== 0 || bytes[27] !== 0 || bytes[28]! > 1) throw new MediaRefusal("corrupt", "PNG has an unknown compression, filter or interlace method");
  return dimensions(header, "PNG");
}

function readGifHeader(bytes: Uint8Array): Extract<ImageHeader, { type: "gif" }> {
  if (bytes.length < 13) throw new MediaRefusal("truncated", "GIF ends inside its logical screen descriptor");
  return dimensions({ type: "gif" as const, width: u16le(bytes, 6), height: u16le(bytes, 8) }, "GIF");
}

function readWebpHeader(bytes: Uint8Array): Extract<ImageHeader, { type: "webp" }> {
  // RIFF (4) size (4) WEBP (4), then the first chunk's FourCC (4) and size (4) at 12.
  if (bytes.length < 30) throw new MediaRefusal("truncated", "WebP ends inside its first chunk's header");
  const chunk = ascii(bytes, 12, 4);
  if (chunk === "VP8 ") {
    if (bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) throw new MediaRefusal("corrupt", "WebP (VP8) lacks its frame start code");
    return dimensions({ type: "webp" as const, encoding: "VP8" as const, width: u16le(bytes, 26) & 0x3fff, height: u16le(bytes, 28) & 0x3fff }, "WebP");
  }
  if (chunk === "VP8L") {
    if (bytes[20] !== 0x2f) throw new MediaRefusal("corrupt", "WebP (VP8L) lacks its signature byte");
    const bits = u32le(bytes, 21);
    return dimensions({ type: "webp" as const, encoding: "VP8L" as const, width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }, "WebP");
  }
  if (chunk === "VP8X") {
    return dimensions({ type: "webp" as const, encoding: "VP8X" as const, width: u24le(bytes, 24) + 1, height: u24le(bytes, 27) + 1 }, "WebP");
  }
  throw new MediaRefusal("corrupt", `WebP's first chunk is ${JSON.stringify(chunk)}, not VP8, VP8L or VP8X`);
}
