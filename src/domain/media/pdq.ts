/**
 * PDQ, Meta's perceptual hash of photographs (ThreatExchange's pdq/README.md and hashing.pdf),
 * written from its specification and its C++ reference (pdq/cpp/hashing/pdqhashing.cpp,
 * pdq/cpp/downscaling/downscaling.cpp), step for step:
 *
 *  1. luminance Y = 0.299 R + 0.587 G + 0.114 B (alpha ignored, as the reference does);
 *  2. the Jarosz filter: two passes of box filters along rows then columns (a tent filter), each
 *     window ceil(dimension / 128) (computeJaroszFilterWindowSize);
 *  3. decimation to 64 x 64, sampling the centre of each block;
 *  4. the quality: the sum of the 64 x 64 image's significant gradients, scaled to 0..100;
 *  5. the 2D DCT of the 64 x 64 image to its 16 x 16 lowest frequencies, but the constant ones;
 *  6. one bit per coefficient: set when above the median of the 256.
 *
 * Every arithmetic step rounds to 32-bit floats (Math.fround, Float32Array stores) where the C++
 * computes in float, so that the same luminance array gives the reference's hash bit for bit
 * (docs/media.md says how that was checked). The eight dihedral hashes (rotations and flips) come
 * from the same DCT by sign changes and a transposition (pdqDihedralHash256esFromFloatLuma).
 *
 * Like the reference's file hasher (pdq/cpp/io/pdqio.cpp), an image larger than 512 pixels on a
 * side is first resampled (nearest neighbour) to 512 x 512: it bounds the work and the buffers
 * whatever the image, and keeps hashes of files close to the reference's (the tests measure it).
 *
 * Hashes are 64 hexadecimal digits: the 256-bit number whose bit k (k = 16 i + j) is
 * coefficient (i, j), as the reference prints them.
 */

/** Two hashes at this Hamming distance or less are the same picture (pdq/README.md, "Matching"). */
export const PDQ_MATCH_DISTANCE = 31;
/** A hash of this quality or less is too weak to match on (pdq/README.md: discard at <= 49). */
export const PDQ_MIN_QUALITY = 50;
/** Images smaller than this on a side have no hash (the reference's MIN_HASHABLE_DIM). */
export const PDQ_MIN_DIMENSION = 5;
/** The side images larger than it are resampled to before hashing (pdqio.cpp's DOWNSAMPLE_DIMS). */
export const PDQ_RESAMPLE_SIDE = 512;

export const PDQ_DIHEDRAL = ["original", "rotate90", "rotate180", "rotate270", "flipX", "flipY", "flipPlus1", "flipMinus1"] as const;
export type PdqDihedral = (typeof PDQ_DIHEDRAL)[number];

export interface PdqResult {
  /** 64 hexadecimal digits (lower case). */
  hash: string;
  /** 0..100; at PDQ_MIN_QUALITY - 1 or less, too weak to match on. */
  quality: number;
}

export interface PdqDihedralResult {
  hashes: Record<PdqDihedral, string>;
  quality: number;
}

/** An image as decode.ts gives it: row-major RGBA, 8 bits a sample. */
export interface RgbaImage {
  width: number;
  height: number;
  rgba: Uint8Array;
}

const f = Math.fround;

// ---------------------------------------------------------------------------------------------
// Constants, computed once as the reference computes them.

const LUMA_R = f(0.299);
const LUMA_G = f(0.587);
const LUMA_B = f(0.114);
/** Each channel's share of the luminance for each 8-bit value: float products, as in C++. */
const LUMA_FROM_R = Float32Array.from({ length: 256 }, (_, v) => LUMA_R * v);
const LUMA_FROM_G = Float32Array.from({ length: 256 }, (_, v) => LUMA_G * v);
const LUMA_FROM_B = Float32Array.from({ length: 256 }, (_, v) => LUMA_B * v);

/**
 * The 16 x 64 DCT matrix (dct_matrix_64): row i is frequency i + 1 (the constant row 0 is left
 * out), scaled by sqrt(2 / 64) and rounded to float as the reference stores it.
 */
const DCT = (() => {
  const scale = f(Math.sqrt(2 / 64));
  const matrix = new Float32Array(16 * 64);
  for (let i = 0; i < 16; i++) {
    for (let j = 0; j < 64; j++) matrix[i * 64 + j] = scale * Math.cos((Math.PI / 2 / 64) * (i + 1) * (2 * j + 1));
  }
  return matrix;
})();

// ---------------------------------------------------------------------------------------------
// Hashing.

/** The PDQ hash and quality of an image. */
export function pdqHash(image: RgbaImage): PdqResult {
  const { luma, width, height } = pdqLuma(image);
  return pdqHashFromLuma(luma, width, height);
}

/** The eight dihedral hashes (the image rotated and flipped) and the quality, from one DCT. */
export function pdqDihedralHashes(image: RgbaImage): PdqDihedralResult {
  const { luma, width, height } = pdqLuma(image);
  return pdqDihedralFromLuma(luma, width, height);
}

/**
 * The hash of a luminance array as the reference computes it from one (pdqHash256FromFloatLuma),
 * with no resampling: the entry point for checking against the reference bit for bit. `luma` is
 * overwritten (it is the filter's first buffer, as in C++).
 */
export function pdqHashFromLuma(luma: Float32Array, width: number, height: number): PdqResult {
  const { coefficients, quality } = coefficientsFromLuma(luma, width, height);
  return { hash: coefficients ? bitsOf(coefficients) : ZERO_HASH, quality };
}

/** The eight dihedral hashes of a luminance array (pdqDihedralHash256esFromFloatLuma); `luma` is overwritten. */
export function pdqDihedralFromLuma(luma: Float32Array, width: number, height: number): PdqDihedralResult {
  const { coefficients, quality } = coefficientsFromLuma(luma, width, height);
  const hashes = {} as Record<PdqDihedral, string>;
  const transformed = new Float32Array(256);
  for (const name of PDQ_DIHEDRAL) {
    if (!coefficients) {
      hashes[name] = ZERO_HASH;
      continue;
    }
    DIHEDRAL_TRANSFORMS[name](coefficients, transformed);
    hashes[name] = bitsOf(transformed);
  }
  return { hashes, quality };
}

const ZERO_HASH = "0".repeat(64);

/**
 * Step 1, the luminance array to hash: the whole image, or, beyond PDQ_RESAMPLE_SIDE on a side,
 * a 512 x 512 nearest-neighbour resampling of it (CImg's resize: pixel floor(x * width / 512)).
 */
export function pdqLuma(image: RgbaImage): { luma: Float32Array; width: number; height: number } {
  const { width, height, rgba } = image;
  if (rgba.length < width * height * 4) throw new RangeError(`rgba holds ${rgba.length} bytes, not ${width} x ${height} x 4`);
  const resample = width > PDQ_RESAMPLE_SIDE || height > PDQ_RESAMPLE_SIDE;
  const lumaWidth = resample ? PDQ_RESAMPLE_SIDE : width;
  const lumaHeight = resample ? PDQ_RESAMPLE_SIDE : height;
  const luma = new Float32Array(lumaWidth * lumaHeight);
  const columns = new Int32Array(lumaWidth);
  for (let x = 0; x < lumaWidth; x++) columns[x] = resample ? Math.floor((x * width) / lumaWidth) : x;
  for (let y = 0; y < lumaHeight; y++) {
    const sourceRow = (resample ? Math.floor((y * height) / lumaHeight) : y) * width;
    const out = y * lumaWidth;
    for (let x = 0; x < lumaWidth; x++) {
      const p = (sourceRow + columns[x]!) * 4;
      luma[out + x] = f(LUMA_FROM_R[rgba[p]!]! + LUMA_FROM_G[rgba[p + 1]!]!) + LUMA_FROM_B[rgba[p + 2]!]!;
    }
  }
  return { luma, width: lumaWidth, height: lumaHeight };
}

/** Steps 2 to 5: the 16 x 16 DCT coefficients (row-major) and the quality, or null when too small. */
function coefficientsFromLuma(luma: Float32Array, width: number, height: number): { coefficients: Float32Array | null; quality: number } {
  if (luma.length !== width * height) throw new RangeError(`luma holds ${luma.length} values, not ${width} x ${height}`);
  if (width < PDQ_MIN_DIMENSION || height < PDQ_MIN_DIMENSION) return { coefficients: null, quality: 0 };
  const small = new Float32Array(64 * 64);
  if (width === 64 && height === 64) {
    small.set(luma);
  } else {
    const scratch = new Float32Array(width * height);
    const windowAlongRows = jaroszWindow(width);
    const windowAlongColumns = jaroszWindow(height);
    for (let pass = 0; pass < 2; pass++) {
      boxAlongRows(luma, scratch, width, height, windowAlongRows);
      boxAlongColumns(scratch, luma, width, height, windowAlongColumns);
    }
    decimate(luma, width, height, small);
  }
  const quality = qualityOf(small);
  return { coefficients: dct64To16(small), quality };
}

/** computeJaroszFilterWindowSize(old, 64): half a 64th of the side, rounded up. */
function jaroszWindow(side: number): number {
  return Math.floor((side + 2 * 64 - 1) / (2 * 64));
}

/**
 * One box filter along each row (box1DFloat with stride 1): a running float sum over a window
 * centred on each pixel, shrunk at the edges, divided by the pixels it covers.
 */
function boxAlongRows(input: Float32Array, output: Float32Array, width: number, height: number, window: number): void {
  const half = Math.floor((window + 2) / 2);
  const phase1 = half - 1;
  const phase2 = window - half + 1;
  const phase3 = width - window;
  const phase4 = half - 1;
  for (let y = 0; y < height; y++) {
    const row = y * width;
    let left = row;
    let right = row;
    let out = row;
    let sum = 0;
    let covered = 0;
    for (let i = 0; i < phase1; i++) {
      sum = f(sum + input[right++]!);
      covered++;
    }
    for (let i = 0; i < phase2; i++) {
      sum = f(sum + input[right++]!);
      covered++;
      output[out++] = sum / covered;
    }
    for (let i = 0; i < phase3; i++) {
      sum = f(sum + input[right++]!);
      sum = f(sum - input[left++]!);
      output[out++] = sum / covered;
    }
    for (let i = 0; i < phase4; i++) {
      sum = f(sum - input[left++]!);
      covered--;
      output[out++] = sum / covered;
    }
  }
}

/**
 * The same along each column. The reference walks one column at a time (stride = width); this
 * walks the rows in order with one float sum per column, which does the same operations on each
 * column's sum in the same order (so the same bits) and reads memory in order.
 */
function boxAlongColumns(input: Float32Array, output: Float32Array, width: number, height: number, window: number): void {
  const half = Math.floor((window + 2) / 2);
  const phase1 = half - 1;
  const phase2 = window - half + 1;
  const phase3 = height - window;
  const phase4 = half - 1;
  const sums = new Float32Array(width); // each store rounds to float, as C++'s float sum
  let left = 0;
  let right = 0;
  let out = 0;
  let covered = 0;
  for (let i = 0; i < phase1; i++, right++) {
    covered++;
    for (let x = 0, r = right * width; x < width; x++) sums[x] = sums[x]! + input[r + x]!;
  }
  for (let i = 0; i < phase2; i++, right++, out++) {
    covered++;
    for (let x = 0, r = right * width, o = out * width; x < width; x++) {
      const sum = (sums[x] = sums[x]! + input[r + x]!);
      output[o + x] = sum / covered;
    }
  }
  for (let i = 0; i < phase3; i++, right++, left++, out++) {
    for (let x = 0, r = right * width, l = left * width, o = out * width; x < width; x++) {
      sums[x] = sums[x]! + input[r + x]!;
      const sum = (sums[x] = sums[x]! - input[l + x]!);
      output[o + x] = sum / covered;
    }
  }
  for (let i = 0; i < phase4; i++, left++, out++) {
    covered--;
    for (let x = 0, l = left * width, o = out * width; x < width; x++) {
      const sum = (sums[x] = sums[x]! - input[l + x]!);
      output[o + x] = sum / covered;
    }
  }
}

/** decimateFloat to 64 x 64: the pixel at the centre of each block ("target centers not corners"). */
function decimate(input: Float32Array, width: number, height: number, out: Float32Array): void {
  for (let i = 0; i < 64; i++) {
    const row = Math.floor(((i + 0.5) * height) / 64) * width;
    for (let j = 0; j < 64; j++) out[i * 64 + j] = input[row + Math.floor(((j + 0.5) * width) / 64)]!;
  }
}

/**
 * pdqImageDomainQualityMetric: each vertical and horizontal difference of neighbours in the
 * 64 x 64 image, as a percentage of 255 truncated to an integer (only significant gradients
 * count), summed, divided by 90 and capped at 100.
 */
function qualityOf(small: Float32Array): number {
  let gradientSum = 0;
  for (let i = 0; i < 63; i++) {
    for (let j = 0; j < 64; j++) {
      gradientSum += Math.abs(Math.trunc(f(f(f(small[i * 64 + j]! - small[(i + 1) * 64 + j]!) * 100) / 255)));
    }
  }
  for (let i = 0; i < 64; i++) {
    for (let j = 0; j < 63; j++) {
      gradientSum += Math.abs(Math.trunc(f(f(f(small[i * 64 + j]! - small[i * 64 + j + 1]!) * 100) / 255)));
    }
  }
  return Math.min(100, Math.floor(gradientSum / 90));
}

/** dct64To16: B = D A Dᵀ through T = D A, float sums in the reference's order. */
function dct64To16(a: Float32Array): Float32Array {
  const t = new Float32Array(16 * 64);
  for (let i = 0; i < 16; i++) {
    const d = i * 64;
    for (let j = 0; j < 64; j++) {
      let sum = 0;
      for (let k = 0; k < 64; k++) sum = f(sum + f(DCT[d + k]! * a[k * 64 + j]!));
      t[i * 64 + j] = sum;
    }
  }
  const b = new Float32Array(256);
  for (let i = 0; i < 16; i++) {
    const row = i * 64;
    for (let j = 0; j < 16; j++) {
      const d = j * 64;
      let sum = 0;
      for (let k = 0; k < 64; k++) sum = f(sum + f(t[row + k]! * DCT[d + k]!));
      b[i * 16 + j] = sum;
    }
  }
  return b;
}

/**
 * pdqBuffer16x16ToBits: bit 16 i + j set when coefficient (i, j) is above the median. The
 * reference's median (Torben's algorithm over 256 values) is the 128th smallest value.
 */
function bitsOf(coefficients: Float32Array): string {
  const sorted = Float32Array.from(coefficients).sort();
  const median = sorted[127]!;
  const words = new Uint32Array(8);
  for (let k = 0; k < 256; k++) if (coefficients[k]! > median) words[k >>> 5]! |= 1 << (k & 31);
  return hexOfWords(words);
}

/** The 64 hexadecimal digits of eight 32-bit words, bit k of the hash in word k >> 5. */
export function hexOfWords(words: Uint32Array): string {
  let hex = "";
  for (let w = 7; w >= 0; w--) hex += words[w]!.toString(16).padStart(8, "0");
  return hex;
}

/**
 * The dihedral transforms of the 16 x 16 coefficients (dct16OriginalTo…): a rotation or flip of
 * the image changes the signs of odd frequencies along the axes it mirrors, and a rotation by 90
 * degrees (or a flip about a diagonal) transposes them.
 */
const DIHEDRAL_TRANSFORMS: Record<PdqDihedral, (a: Float32Array, b: Float32Array) => void> = {
  original: (a, b) => b.set(a),
  rotate90: (a, b) => transform(a, b, true, (_i, j) => (j & 1 ? 1 : -1)),
  rotate180: (a, b) => transform(a, b, false, (i, j) => ((i + j) & 1 ? -1 : 1)),
  rotate270: (a, b) => transform(a, b, true, (i) => (i & 1 ? 1 : -1)),
  flipX: (a, b) => transform(a, b, false, (i) => (i & 1 ? 1 : -1)),
  flipY: (a, b) => transform(a, b, false, (_i, j) => (j & 1 ? 1 : -1)),
  flipPlus1: (a, b) => transform(a, b, true, () => 1),
  flipMinus1: (a, b) => transform(a, b, true, (i, j) => ((i + j) & 1 ? -1 : 1)),
};

function transform(a: Float32Array, b: Float32Array, transpose: boolean, sign: (i: number, j: number) => number): void {
  for (let i = 0; i < 16; i++) {
    for (let j = 0; j < 16; j++) b[transpose ? j * 16 + i : i * 16 + j] = sign(i, j) * a[i * 16 + j]!;
  }
}

// ---------------------------------------------------------------------------------------------
// Hashes as words, and their distance.

const HEX64 = /^[0-9a-f]{64}$/i;

/** Whether `hex` is a PDQ hash as written: 64 hexadecimal digits. */
export function isPdqHex(hex: string): boolean {
  return HEX64.test(hex);
}

/** Each ASCII code's value as a hexadecimal digit, -1 for the others. */
const HEX_DIGIT = Int8Array.from({ length: 128 }, (_, c) => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1));

/**
 * The eight 32-bit words of a hash (bit k in word k >> 5), written into `into` at `offset`.
 * Reads the digits by code (no regular expression, no substrings): banks of a million hashes
 * are loaded through it.
 */
export function pdqWords(hex: string, into: Uint32Array = new Uint32Array(8), offset = 0): Uint32Array {
  if (hex.length !== 64) throw new RangeError(`not a PDQ hash (64 hexadecimal digits): ${JSON.stringify(hex.slice(0, 80))}`);
  for (let w = 0; w < 8; w++) {
    let word = 0;
    for (let i = 56 - w * 8, end = i + 8; i < end; i++) {
      const digit = HEX_DIGIT[hex.charCodeAt(i)] ?? -1;
      if (digit < 0) throw new RangeError(`not a PDQ hash (64 hexadecimal digits): ${JSON.stringify(hex.slice(0, 80))}`);
      word = (word << 4) | digit;
    }
    into[offset + w] = word >>> 0;
  }
  return into;
}

/** The number of bits set in a 32-bit word (the classic SWAR count, no table). */
export function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** The Hamming distance of two hashes (0..256). */
export function hammingDistance(a: string, b: string): number {
  const x = pdqWords(a);
  const y = pdqWords(b);
  let distance = 0;
  for (let w = 0; w < 8; w++) distance += popcount32(x[w]! ^ y[w]!);
  return distance;
}
