/**
 * Crafting media bytes for the tests of src/domain/media/: PNG chunks with their CRC, headers,
 * and what a reader refused.
 */
import { MediaRefusal } from "../../src/domain/media/refusals.ts";

export const text = (s: string): Uint8Array => new TextEncoder().encode(s);

export function concat(...parts: (Uint8Array | readonly number[])[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export const u32be = (n: number): number[] => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];

export const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const;

/** A PNG chunk: length, type, data, CRC-32 of type and data. */
export function pngChunk(type: string, data: Uint8Array | readonly number[]): Uint8Array {
  const body = concat(text(type), data);
  return concat(u32be(data.length), body, u32be(Bun.hash.crc32(body)));
}

/** An IHDR chunk (colour type 2: RGB). */
export function ihdr(width: number, height: number, bitDepth = 8, colorType = 2, interlace = 0): Uint8Array {
  return pngChunk("IHDR", [...u32be(width), ...u32be(height), bitDepth, colorType, 0, 0, interlace]);
}

/** The reason of the MediaRefusal `fn` throws, "none" when it returns; any other error is rethrown (the test then says what leaked). */
export function refusalOf(fn: () => unknown): string {
  try {
    fn();
    return "none";
  } catch (err) {
    if (err instanceof MediaRefusal) return err.reason;
    throw err;
  }
}
