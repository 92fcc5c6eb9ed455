/**
 * Images decoded to RGBA by pure-JavaScript decoders, so that the compiled binary stays one file
 * (docs/media.md): JPEG by jpeg-js, PNG by fast-png, GIF (its first frame) by gifuct-js. WebP is
 * recognised but refused (no decoder here: docs/media.md says why).
 *
 * Hostile files meet three walls before a decoder runs: the header's dimensions against a pixel
 * bound (sniff.ts reads them without decoding), the structure walked and checked for truncation
 * (a JPEG's EOI, a PNG's IEND, a GIF's first image complete), and for PNG the compressed data
 * inflated under a byte bound its dimensions give and the chunks the pixels do not need left out
 * (fast-png would inflate image data, an ICC profile or text without a bound). jpeg-js's
 * own maxResolutionInMP and maxMemoryUsageInMB are set as a second wall. Whatever a decoder
 * throws becomes a MediaRefusal: nothing else leaves this module.
 *
 * Decoding is synchronous CPU work (about 80 ms of CPU a megapixel for JPEG, 190 for PNG on the
 * benchmark machine, docs/media.md): callers serving requests run it off the request path, in a job.
 */
import { decode as decodeJpegJs } from "jpeg-js";
import { decode as decodePngFast } from "fast-png";
import { decompressFrame, parseGIF } from "gifuct-js";
import { inflateSync } from "node:zlib";
import { MediaRefusal } from "./refusals.ts";
import { readImageHeader, type ImageHeader } from "./sniff.ts";

/** The default pixel bound: 50 megapixels (a phone's largest photographs), about 200 MB of RGBA. */
export const DEFAULT_MAX_PIXELS = 50_000_000;

/**
 * What jpeg-js may allocate per pixel of the bound (its coefficient blocks, 4 bytes a sample
 * of each component, its component output and our RGBA): a second wall that a JPEG within the
 * pixel bound never reaches.
 */
const JPEG_BYTES_PER_PIXEL = 32;

export interface DecodeOptions {
  /** Refuse (too_many_pixels) when the header's width x height exceeds this. */
  maxPixels?: number;
}

export interface DecodedImage {
  type: "jpeg" | "png" | "gif";
  width: number;
  height: number;
  /** Row-major RGBA, 8 bits a sample: width x height x 4 bytes. */
  rgba: Uint8Array;
}

/**
 * Decodes a JPEG, PNG or GIF (its first frame) to RGBA. Throws a MediaRefusal only: not_an_image,
 * unsupported (WebP, arithmetic-coded or 12-bit JPEG, a JPEG's CMYK without its Adobe marker…),
 * too_many_pixels (before any decoding), truncated or corrupt.
 */
export function decodeImage(bytes: Uint8Array, options: DecodeOptions = {}): DecodedImage {
  const maxPixels = options.maxPixels ?? DEFAULT_MAX_PIXELS;
  if (!(maxPixels >= 1)) throw new RangeError(`maxPixels must be a positive number: ${maxPixels}`); // NaN would bound nothing
  const header = readImageHeader(bytes);
  checkPixels(header.width, header.height, maxPixels, header.type.toUpperCase());
  switch (header.type) {
    case "jpeg":
      return decodeJpeg(bytes, header, maxPixels);
    case "png":
      return decodePng(bytes, header);
    case "gif":
      return decodeGif(bytes, header, maxPixels);
    case "webp":
      throw new MediaRefusal(
        "unsupported",
        "WebP images are stored but not decoded: no decoder that keeps the binary single is bundled yet, so they get no preview and no PDQ hash",
      );
  }
}

function checkPixels(width: number, height: number, maxPixels: number, what: string): void {
  if (width * height > maxPixels) {
    throw new MediaRefusal(
      "too_many_pixels",
      `${what} image of ${width} x ${height} pixels is above the bound of ${(maxPixels / 1e6).toLocaleString("en")} megapixels: refused before decoding`,
    );
  }
}

/** Runs a third-party decoder: what it throws becomes a refusal of this reason. */
function guarded<T>(what: string, decode: () => T): T {
  try {
    return decode();
  } catch (err) {
    if (err instanceof MediaRefusal) throw err;
    const message = err instanceof Error ? err.message : String(err);
    throw new MediaRefusal("corrupt", `${what} could not be decoded: ${message.slice(0, 200)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// JPEG (jpeg-js)

function decodeJpeg(bytes: Uint8Array, header: Extract<ImageHeader, { type: "jpeg" }>, maxPixels: number): DecodedImage {
  if (header.process !== "baseline" && header.process !== "extended" && header.process !== "progressive") {
    throw new MediaRefusal("unsupported", `JPEG in ${header.process} coding is not supported (baseline and progressive Huffman coding are)`);
  }
  if (header.precision !== 8) throw new MediaRefusal("unsupported", `JPEG of ${header.precision}-bit samples is not supported (8-bit is)`);
  if (header.components !== 1 && header.components !== 3 && header.components !== 4) {
    throw new MediaRefusal("unsupported", `JPEG of ${header.components} colour components is not supported (1, 3 or 4 are)`);
  }
  if (!hasEndOfImage(bytes, header.frameOffset)) throw new MediaRefusal("truncated", "JPEG ends before its end-of-image marker: the file is cut short");
  const image = (() => {
    try {
      return decodeJpegJs(bytes, {
        useTArray: true,
        formatAsRGBA: true,
        maxResolutionInMP: maxPixels / 1e6,
        maxMemoryUsageInMB: Math.ceil((maxPixels * JPEG_BYTES_PER_PIXEL) / 2 ** 20),
      });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (/maxResolutionInMP|maxMemoryUsageInMB|allocate enough memory/.test(message)) {
        throw new MediaRefusal("too_many_pixels", `JPEG needs more memory to decode than its pixel bound allows (${message.slice(0, 120)})`);
      }
      if (/Unsupported color mode/.test(message)) {
        throw new MediaRefusal("unsupported", "JPEG of 4 components without an Adobe marker (CMYK or YCCK of unknown meaning) is not supported");
      }
      throw new MediaRefusal("corrupt", `JPEG could not be decoded: ${message.slice(0, 200)}`);
    }
  })();
  if (image.width !== header.width || image.height !== header.height) throw new MediaRefusal("corrupt", "JPEG decodes to other dimensions than its header gives");
  return { type: "jpeg", width: image.width, height: image.height, rgba: image.data };
}

/**
 * Whether an EOI marker (FF D9) follows the frame header. Entropy-coded data never holds one (an
 * FF there is followed by 00 or a restart marker), so its absence means the file was cut short;
 * bytes after it (an appended file) are left alone.
 */
function hasEndOfImage(bytes: Uint8Array, after: number): boolean {
  for (let i = bytes.length - 2; i > after; i--) if (bytes[i] === 0xff && bytes[i + 1] === 0xd9) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// PNG (fast-png)

const PNG_CHANNELS: Readonly<Record<number, number>> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
/** Adam7's passes: x start, y start, x step, y step. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

/** The exact size of a PNG's inflated image data: each row's filter byte and its packed samples. */
export function pngInflatedSize(header: Extract<ImageHeader, { type: "png" }>): number {
  const bitsPerPixel = header.bitDepth * PNG_CHANNELS[header.colorType]!;
  const rows = (width: number, height: number) => (width > 0 && height > 0 ? height * (1 + Math.ceil((width * bitsPerPixel) / 8)) : 0);
  if (!header.interlaced) return rows(header.width, header.height);
  let total = 0;
  for (const [x0, y0, dx, dy] of ADAM7) total += rows(Math.ceil((header.width - x0) / dx), Math.ceil((header.height - y0) / dy));
  return total;
}

/**
 * The chunks the pixels need: the rest (an ICC profile, text, animation, metadata) is left out
 * before fast-png sees the file, which would inflate a compressed profile (iCCP) or text without
 * a bound.
 */
const PNG_PIXEL_CHUNKS = new Set(["IHDR", "PLTE", "tRNS", "IDAT", "IEND"]);

/**
 * Walks the chunks (each within the file, IEND reached), inflates the IDAT stream under the size
 * the header gives (a stream that inflates to more is a bomb, to less a truncated image) and
 * gives the file back with only the chunks of PNG_PIXEL_CHUNKS.
 */
function checkPngData(bytes: Uint8Array, header: Extract<ImageHeader, { type: "png" }>): Uint8Array {
  const parts: Uint8Array[] = [];
  const kept: Uint8Array[] = [bytes.subarray(0, 8)];
  let keptLength = 8;
  let total = 0;
  let at = 8;
  let ended = false;
  while (at + 12 <= bytes.length) {
    const length = ((bytes[at]! << 24) >>> 0) + ((bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!);
    const type = String.fromCharCode(bytes[at + 4]!, bytes[at + 5]!, bytes[at + 6]!, bytes[at + 7]!);
    if (at + 12 + length > bytes.length) throw new MediaRefusal("truncated", `PNG ends inside its ${JSON.stringify(type)} chunk`);
    if (type === "IDAT") {
      parts.push(bytes.subarray(at + 8, at + 8 + length));
      total += length;
    }
    if (PNG_PIXEL_CHUNKS.has(type)) {
      kept.push(bytes.subarray(at, at + 12 + length));
      keptLength += 12 + length;
    }
    at += 12 + length;
    if (type === "IEND") {
      ended = true;
      break;
    }
  }
  if (!ended) throw new MediaRefusal("truncated", "PNG ends before its IEND chunk: the file is cut short");
  if (total === 0) throw new MediaRefusal("corrupt", "PNG has no image data (IDAT)");
  const stream = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    stream.set(part, offset);
    offset += part.length;
  }
  const expected = pngInflatedSize(header);
  let inflated: number;
  try {
    inflated = inflateSync(stream, { maxOutputLength: expected }).length;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === "ERR_BUFFER_TOO_LARGE") throw new MediaRefusal("corrupt", `PNG's image data inflates to more than the ${expected} bytes its ${header.width} x ${header.height} pixels take (a decompression bomb?)`);
    if (code === "Z_BUF_ERROR") throw new MediaRefusal("truncated", "PNG's image data ends before its compressed stream does");
    throw new MediaRefusal("corrupt", `PNG's image data is not a valid zlib stream (${err instanceof Error ? err.message : String(err)})`);
  }
  if (inflated < expected) throw new MediaRefusal("truncated", `PNG's image data inflates to ${inflated} bytes where its dimensions take ${expected}`);
  if (keptLength === bytes.length) return bytes;
  const essential = new Uint8Array(keptLength);
  let written = 0;
  for (const chunk of kept) {
    essential.set(chunk, written);
    written += chunk.length;
  }
  return essential;
}

function decodePng(bytes: Uint8Array, header: Extract<ImageHeader, { type: "png" }>): DecodedImage {
  const essential = checkPngData(bytes, header);
  const png = guarded("PNG", () => decodePngFast(essential));
  const { width, height, depth, channels } = png;
  if (width !== header.width || height !== header.height) throw new MediaRefusal("corrupt", "PNG decodes to other dimensions than its header gives");
  const rgba = new Uint8Array(width * height * 4);
  const data = png.data;
  const palette = png.palette;
  if (depth === 16) {
    // 16-bit samples (a Uint16Array): their high byte.
    for (let p = 0, s = 0; p < width * height; p++, s += channels) {
      const o = p * 4;
      if (channels <= 2) {
        const g = data[s]! >>> 8;
        rgba[o] = rgba[o + 1] = rgba[o + 2] = g;
        rgba[o + 3] = channels === 2 ? data[s + 1]! >>> 8 : 255;
      } else {
        rgba[o] = data[s]! >>> 8;
        rgba[o + 1] = data[s + 1]! >>> 8;
        rgba[o + 2] = data[s + 2]! >>> 8;
        rgba[o + 3] = channels === 4 ? data[s + 3]! >>> 8 : 255;
      }
    }
  } else if (depth === 8 && !palette) {
    for (let p = 0, s = 0; p < width * height; p++, s += channels) {
      const o = p * 4;
      if (channels <= 2) {
        const g = data[s]!;
        rgba[o] = rgba[o + 1] = rgba[o + 2] = g;
        rgba[o + 3] = channels === 2 ? data[s + 1]! : 255;
      } else {
        rgba[o] = data[s]!;
        rgba[o + 1] = data[s + 1]!;
        rgba[o + 2] = data[s + 2]!;
        rgba[o + 3] = channels === 4 ? data[s + 3]! : 255;
      }
    }
  } else {
    // One sample a pixel, packed 1, 2, 4 or 8 bits (rows start on a byte): grey or palette.
    if (channels !== 1) throw new MediaRefusal("corrupt", `PNG of ${channels} channels at ${depth} bits`);
    const rowBytes = Math.ceil((width * depth) / 8);
    const max = (1 << depth) - 1;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const bit = x * depth;
        const v = (data[y * rowBytes + (bit >>> 3)]! >>> (8 - depth - (bit & 7))) & max;
        const o = (y * width + x) * 4;
        if (palette) {
          const colour = palette[v];
          rgba[o] = colour?.[0] ?? 0;
          rgba[o + 1] = colour?.[1] ?? 0;
          rgba[o + 2] = colour?.[2] ?? 0;
          rgba[o + 3] = colour?.[3] ?? 255;
        } else {
          const g = Math.round((v * 255) / max);
          rgba[o] = rgba[o + 1] = rgba[o + 2] = g;
          rgba[o + 3] = 255;
        }
      }
    }
  }
  return { type: "png", width, height, rgba };
}

// ---------------------------------------------------------------------------------------------
// GIF (gifuct-js, the first frame)

/** At most this many blocks (extensions) are walked before a GIF's first image. */
const MAX_GIF_BLOCKS = 10_000;

/**
 * Walks a GIF's blocks to the end of its first image (descriptor, colour table, LZW data): the
 * offset just past it. Only that prefix is handed to gifuct-js, so that a thousand-frame file
 * costs no more than its first frame, and gifuct's parser never meets a truncated stream.
 */
function firstGifImage(bytes: Uint8Array): { end: number; left: number; top: number; width: number; height: number; hasColourTable: boolean } {
  const n = bytes.length;
  const cut = () => new MediaRefusal("truncated", "GIF ends before the end of its first image");
  const subBlocks = (from: number): number => {
    let at = from;
    for (;;) {
      if (at >= n) throw cut();
      const size = bytes[at]!;
      at += 1 + size;
      if (size === 0) return at;
    }
  };
  const packed = bytes[10]!;
  const globalTable = (packed & 0x80) !== 0;
  let at = 13 + (globalTable ? 3 << ((packed & 7) + 1) : 0);
  for (let blocks = 0; blocks < MAX_GIF_BLOCKS; blocks++) {
    if (at >= n) throw cut();
    const introducer = bytes[at]!;
    if (introducer === 0x21) {
      if (at + 2 > n) throw cut();
      at = subBlocks(at + 2);
    } else if (introducer === 0x2c) {
      if (at + 10 > n) throw cut();
      const u16 = (o: number) => bytes[at + o]! | (bytes[at + o + 1]! << 8);
      const image = { left: u16(1), top: u16(3), width: u16(5), height: u16(7) };
      const flags = bytes[at + 9]!;
      const localTable = (flags & 0x80) !== 0;
      const codeSizeAt = at + 10 + (localTable ? 3 << ((flags & 7) + 1) : 0);
      if (codeSizeAt >= n) throw cut();
      const minCodeSize = bytes[codeSizeAt]!;
      if (minCodeSize < 1 || minCodeSize > 8) throw new MediaRefusal("corrupt", `GIF's first image has an LZW code size of ${minCodeSize}`);
      if (image.width === 0 || image.height === 0) throw new MediaRefusal("corrupt", "GIF's first image has no pixels");
      return { ...image, end: subBlocks(codeSizeAt + 1), hasColourTable: globalTable || localTable };
    } else if (introducer === 0x3b) {
      throw new MediaRefusal("corrupt", "GIF ends (trailer) before any image");
    } else {
      throw new MediaRefusal("corrupt", `GIF has an unknown block 0x${introducer.toString(16)} at offset ${at}`);
    }
  }
  throw new MediaRefusal("corrupt", `GIF has more than ${MAX_GIF_BLOCKS} blocks before its first image`);
}

function decodeGif(bytes: Uint8Array, header: Extract<ImageHeader, { type: "gif" }>, maxPixels: number): DecodedImage {
  const first = firstGifImage(bytes);
  checkPixels(first.width, first.height, maxPixels, "GIF frame:");
  if (!first.hasColourTable) throw new MediaRefusal("corrupt", "GIF's first image has no colour table");
  // The walked prefix and a trailer: a well-formed GIF of one image.
  const prefix = new Uint8Array(first.end + 1);
  prefix.set(bytes.subarray(0, first.end));
  prefix[first.end] = 0x3b;
  const frame = guarded("GIF", () => {
    const gif = parseGIF(prefix.buffer);
    const image = gif.frames.find((f) => "image" in f);
    if (!image) throw new MediaRefusal("corrupt", "GIF has no image");
    return decompressFrame(image, gif.gct, true);
  });
  // The first frame drawn on the logical screen, transparent where it does not reach.
  const { width, height } = header;
  const rgba = new Uint8Array(width * height * 4);
  const { left, top, width: fw, height: fh } = frame.dims;
  const patch = frame.patch;
  const columns = Math.min(fw, width - left);
  for (let y = 0; y < fh && columns > 0; y++) {
    const cy = top + y;
    if (cy >= height) break;
    const from = y * fw * 4;
    rgba.set(patch.subarray(from, from + columns * 4), (cy * width + left) * 4);
  }
  return { type: "gif", width, height, rgba };
}
