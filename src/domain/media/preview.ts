/**
 * An image's preview (docs/attachments.md, "Previews"): decoded behind the pixel bound
 * (decode.ts), scaled down so that its longer side is at most `maxSide` pixels (an area average:
 * every source pixel counts once), laid on white where it is transparent, and encoded anew as a
 * baseline JPEG by jpeg-js. Nothing of the original but its pixels goes through: no EXIF (GPS
 * position, camera, time), no ICC profile, no comment, no second image appended after the end.
 *
 * Synchronous CPU work: run on the preview thread (preview-thread.ts), never on a request.
 */
import { encode as encodeJpeg } from "jpeg-js";
import { decodeImage } from "./decode.ts";
import { pdqHash, type PdqResult } from "./pdq.ts";

export interface Preview {
  jpeg: Uint8Array;
  width: number;
  height: number;
  /** The image's PDQ hash and quality, from the same decoding (docs/media.md): what banks match. */
  pdq: PdqResult;
}

/** JPEG quality of a preview: enough to judge a picture, a few hundred kilobytes at 1024 px. */
const PREVIEW_QUALITY = 82;

/** The size of an image of `width` x `height` with its longer side at most `maxSide` (never enlarged). */
export function previewSize(width: number, height: number, maxSide: number): { width: number; height: number } {
  const scale = Math.min(1, maxSide / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/**
 * RGBA scaled to `tw` x `th` by area averaging, composited on white (alpha dropped): each target
 * pixel is the mean of the source pixels its area covers, weighted by the fraction covered.
 */
export function scaleOnWhite(rgba: Uint8Array, width: number, height: number, tw: number, th: number): Uint8Array {
  const out = new Uint8Array(tw * th * 4);
  const sx = width / tw;
  const sy = height / th;
  // Per target column: the source columns it covers and their weights (the same for every row).
  const colStart = new Int32Array(tw);
  const colEnd = new Int32Array(tw);
  const colWeights: Float64Array[] = [];
  for (let x = 0; x < tw; x++) {
    const x0 = x * sx;
    const x1 = Math.min(width, (x + 1) * sx);
    const first = Math.floor(x0);
    const last = Math.min(width - 1, Math.ceil(x1) - 1);
    colStart[x] = first;
    colEnd[x] = last;
    const w = new Float64Array(last - first + 1);
    for (let i = first; i <= last; i++) w[i - first] = Math.min(i + 1, x1) - Math.max(i, x0);
    colWeights.push(w);
  }
  const acc = new Float64Array(tw * 3);
  const accW = new Float64Array(tw);
  for (let y = 0; y < th; y++) {
    acc.fill(0);
    accW.fill(0);
    const y0 = y * sy;
    const y1 = Math.min(height, (y + 1) * sy);
    for (let j = Math.floor(y0); j <= Math.min(height - 1, Math.ceil(y1) - 1); j++) {
      const wy = Math.min(j + 1, y1) - Math.max(j, y0);
      const row = j * width * 4;
      for (let x = 0; x < tw; x++) {
        const weights = colWeights[x]!;
        const first = colStart[x]!;
        let r = 0;
        let g = 0;
        let b = 0;
        let wsum = 0;
        for (let i = first; i <= colEnd[x]!; i++) {
          const p = row + i * 4;
          const a = rgba[p + 3]! / 255;
          const w = weights[i - first]!;
          // On white: c·a + 255·(1 − a).
          r += (rgba[p]! * a + 255 * (1 - a)) * w;
          g += (rgba[p + 1]! * a + 255 * (1 - a)) * w;
          b += (rgba[p + 2]! * a + 255 * (1 - a)) * w;
          wsum += w;
        }
        acc[x * 3] = acc[x * 3]! + r * wy;
        acc[x * 3 + 1] = acc[x * 3 + 1]! + g * wy;
        acc[x * 3 + 2] = acc[x * 3 + 2]! + b * wy;
        accW[x] = accW[x]! + wsum * wy;
      }
    }
    for (let x = 0; x < tw; x++) {
      const o = (y * tw + x) * 4;
      const w = accW[x]! || 1;
      out[o] = Math.round(acc[x * 3]! / w);
      out[o + 1] = Math.round(acc[x * 3 + 1]! / w);
      out[o + 2] = Math.round(acc[x * 3 + 2]! / w);
      out[o + 3] = 255;
    }
  }
  return out;
}

/** The preview of a JPEG, PNG or GIF, with its PDQ hash; throws a MediaRefusal for anything decodeImage refuses. */
export function makePreview(bytes: Uint8Array, options: { maxPixels: number; maxSide: number }): Preview {
  const image = decodeImage(bytes, { maxPixels: options.maxPixels });
  const { width, height } = previewSize(image.width, image.height, options.maxSide);
  const pixels = scaleOnWhite(image.rgba, image.width, image.height, width, height);
  const encoded = encodeJpeg({ data: pixels, width, height }, PREVIEW_QUALITY);
  return { jpeg: new Uint8Array(encoded.data.buffer, encoded.data.byteOffset, encoded.data.byteLength), width, height, pdq: pdqHash(image) };
}
