/**
 * PDQ (src/domain/media/pdq.ts) against Meta's reference:
 * - test vectors: luminance arrays whose hash, quality and eight dihedral hashes the C++
 *   reference (pdq/cpp, built with g++ -O3 as its Makefile does) computed; ours must be the same
 *   bit for bit, symmetric arrays included, where only float rounding breaks ties;
 * - ThreatExchange's test images (test/fixtures/pdq/, BSD: LICENSE-ThreatExchange beside them)
 *   and the hashes Meta's implementations give (the table in test/fixtures/pdq/README.md): each
 *   file within 10 bits, every altered bridge photograph matching the original (31 bits or less),
 *   the other pictures not;
 * - the dihedral hashes against the picture actually rotated and flipped.
 * Pure functions: the same on either engine, no server or database.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeImage, type DecodedImage } from "../../src/domain/media/decode.ts";
import {
  hammingDistance,
  PDQ_DIHEDRAL,
  PDQ_MATCH_DISTANCE,
  PDQ_MIN_QUALITY,
  pdqDihedralFromLuma,
  pdqDihedralHashes,
  pdqHash,
  pdqHashFromLuma,
  pdqWords,
  popcount32,
  type PdqDihedral,
} from "../../src/domain/media/pdq.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "pdq");

/** The reference table of test/fixtures/pdq/README.md: file → hash. */
const REFERENCE: Record<string, string> = Object.fromEntries(
  [...readFileSync(join(FIXTURES, "README.md"), "utf8").matchAll(/^\| (\S+\.(?:jpg|png)) \| ([0-9a-f]{64}) \|$/gm)].map((m) => [m[1]!, m[2]!]),
);

const decoded = new Map<string, DecodedImage>();
function image(file: string): DecodedImage {
  let img = decoded.get(file);
  if (!img) decoded.set(file, (img = decodeImage(readFileSync(join(FIXTURES, file)))));
  return img;
}

/**
 * A deterministic luminance array: a smooth pattern and noise from a linear congruential
 * generator. /tmp's C++ harness hashed exactly these arrays (see TEST_VECTORS).
 */
function syntheticLuma(width: number, height: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const luma = new Float32Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) luma[y * width + x] = 128 + 90 * Math.sin((x * 7) / width + seed) * Math.cos((y * 5) / height) + 30 * next();
  return luma;
}

/**
 * What ThreatExchange's C++ reference (pdqhashing.cpp, downscaling.cpp, torben.cpp at
 * facebook/ThreatExchange, compiled with g++ -std=c++11 -O3) printed for syntheticLuma(width,
 * height, seed): quality and the eight dihedral hashes. Sizes cover the full filter (333 x 777),
 * odd sides, the 64 x 64 shortcut, windows of 1 (7 x 300) and a wide strip.
 */
const TEST_VECTORS: { width: number; height: number; seed: number; quality: number; hashes: Record<PdqDihedral, string> }[] = [
  {"width":333,"height":777,"seed":1,"quality":87,"hashes":{"original":"7383e1a49e079ffce93352ec2d03cd7cb303bfecf003fdfc5003fffc00030003","rotate90":"71f432cbcad45b033b54ccabb4c4242bd454eaab5d54e6eb15548aabaaab5554","rotate180":"26d64b0ecb523556bc66f846785667d6e656154685565756455655565556aaa9","rotate270":"6cf1f86d9fe5f9ed6ec166a1f191cfe1816140012c01dc4144012001fffefffe","flipX":"7393df5bde277213f933ad3b2d033383bf03f993f5838203500370030003fffc","flipY":"26d6b4f1cb52daa93c6607b978569829e656eab98556a8a94556aaa955565556","flipPlus1":"79f4cd3ccaf4b4fc3b543354b4c4dbd4d45415545d54191415547554aaabaaab","flipMinus1":"2ca1679e9f811e566e0199fee191717e8101bffe0801b3be4001dffefffe0001"}},
  {"width":129,"height":257,"seed":2,"quality":100,"hashes":{"original":"3d0635f90bce03e12d5e70492056adb9f5d64a897d76e2a935568aa955565556","rotate90":"0795fb0ccff87b54a9643674b2d4167471d483545534b6546d545554aaabaaab","rotate180":"6a53bfdf5e9fe94b780bdeebf7530713a283f0236d234803680360030003fffc","rotate270":"50c141a69aad91fefc319cfe6501acfe248129fe00611cfe3801fffefffe0001","flipX":"3d06ca060bcebc1e2d5e0f9620065246f5d695767d761d56355675565556aaa9","flipY":"6a5370ac5e9b57b4780ba53cf753f8eca2833fdc2d23b7fc6003dffc00038003","flipPlus1":"019404f3cfb8c4aba964c9ab3054f9ab71d47eab51344bab6d54aaabaaab5554","flipMinus1":"56c1be7ddaed6e41fc396721e78153216481d6010461e3017c016001fffefffe"}},
  {"width":64,"height":64,"seed":3,"quality":100,"hashes":{"original":"96d241e3915ee808ca874513e81cb6a11e36adeb075c520b7f7c6203577cd7fc","rotate90":"bb41a1e0934c5e641ac87a1489bf9b94cb511f9449db5954377bd554ecd432ab","rotate180":"e387fb49c40b42a29ff2eff9bdc91c0b4b6317615209f8a1aaa9c8a902a97d56","rotate270":"ea140b4a4619b48e4f9dd0bedcea313e9c04b13e148ef3fe622e7ffeb9811801","flipX":"96d2ae1c915e17f7ca873aa4e81c49561e364214075cad547f7c9dfc577c2803","flipY":"e38614b6c40bbd5d9ff2104ebdc9e3fc4b63f8be520907fe2a293756022982a9","flipPlus1":"bb415e1f134ca19b1ac885eb89bf646bc941e06b41cba6ab327b2aabecd44d54","flipMinus1":"ee1cf4b5c6194b714f9d2f41dceacec19e1e4ec11cde0c01672e8001b981e7fe"}},
  {"width":7,"height":300,"seed":4,"quality":100,"hashes":{"original":"187ce6d36d2dc12f3f60c763392cc52b38dcc763389cc5cb3834c7c3383c383c","rotate90":"55548aab6aab7554aaab92ab4c44c0ab40b43b6bbf4b3f54b3b34d5455548aab","rotate180":"4d294c7930786b856a356d896c796f816d896d896dc96f616c616d696d699296","rotate270":"4001a001fffedffefffe380119116e0915e1bdc1ea1e9dfee6e6e7fe00012001","flipX":"787cb92c6d6d3ed03f7039dc392c3ad438dc38dc389c3a343934383c383cc7c3","flipY":"4d29b3863878947a6a7592366c79907e6d8992766dc9909e6d6192966d696d69","flipPlus1":"555475546aab8aabaaab6d544c443f5440b4ccd4bf4bc0abb3b3b2ab55547554","flipMinus1":"0001dffe3ffe2001dffec7fe191195f615e1623eea1e6a01e6e618010001dffe"}},
  {"width":1000,"height":40,"seed":5,"quality":100,"hashes":{"original":"7ab1bbde100986964f89eff61cb9085638e90ad6594937769a891d56aaa9aaa9","rotate90":"500b73df84831c43cdebe0ebd41bb3cbdecbba0b069328ab0aabaaab55545554","rotate180":"2fc4107445542c3c18dc455c49eca2fc6dbca07c0c1c9ddccfdcb7fcfffc0003","rotate270":"05fedd75d1d6b7f99abe4b41894e59618b9e50a1d3c682017ffe00010001fffe","flipX":"7ab16569100979694f89d0091cb9f7a9b8e9f729d949f8899a89eaa9aaa95556","flipY":"2fc4ce834554d3c318dc3aa341ec49036dbc5d830c1c4223cfdc4003fffcfffc","flipPlus1":"540b8c20c493e2bccfef1e14dc5b4c34decb45f48693d7546aab55545554aaab","flipMinus1":"015e268a91c648169abab4be810ea69e8b9eef5e53c67dfe1ffefffe00010001"}},
];

/**
 * A luminance array symmetric about its diagonal (the picture equals its transpose), so that the
 * DCT coefficients come in pairs equal in exact arithmetic, and only the rounding of each step
 * (float in the reference) decides which of a pair lies above the median: arithmetic in double
 * where the reference uses float changes these hashes (the filter's row sums, the DCT's first
 * product), where the arrays above may not notice.
 */
function symmetricLuma(side: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const luma = new Float32Array(side * side);
  for (let y = 0; y < side; y++) for (let x = 0; x <= y; x++) luma[y * side + x] = luma[x * side + y] = 128 + 90 * Math.sin((x * 7) / side + seed) * Math.sin((y * 7) / side + seed) + 40 * next();
  return luma;
}

/** What the C++ reference printed for symmetricLuma(side, seed), side x side. */
const SYMMETRIC_VECTORS: { side: number; seed: number; quality: number; hashes: Record<PdqDihedral, string> }[] = [
  {"side":64,"seed":11,"quality":100,"hashes":{"original":"b8370b168eb492fa69d82433702948f63915192eb759fdb61a69e1d6d55686a9","rotate90":"b037f4e98eb46d0569d8dbcc7029bf093915e6f1b71902491a491e29d5567b56","rotate180":"ed62a9bcdbe13c50bdad9e99257dea5c6c40b3a4ea4c571c4f3c4b7c80032e03","rotate270":"e5625e43dbe1c7af3d8d7166257d1da36c404c5be24ca8e34f1cb4838003d3fc","flipX":"b037f4e98eb46d0569d8dbcc7029bf093915e6f1b71102491a691e29d5567b56","flipY":"e5625e43dbe1c7af3d8d7166257d1da36c404c5be244a8e34f3cb4838003d3fc","flipPlus1":"b0370b168eb492fae9d82433702948f63915192eb759fdb61a69e1d6d55686a9","flipMinus1":"ed62a1bcdbe13c50fdad9e99257dea5c6c40b3a4ea4c571c4f3c4b7c80032e03"}},
  {"side":64,"seed":13,"quality":100,"hashes":{"original":"b2a8473cb435aa841ebd6cfcd95c43ec9db8072cede46e9ccedc7f7c00032803","rotate90":"b288b8c3b435557b1a3d9b03d95cbc1b95b8f8d3ede49163cedc80830003d7fc","rotate180":"e7fded96e160002e4fe8ce568c09e94ec0edad86b8b1c4369b89d5d6555682a9","rotate270":"e7dd1269e160ffd14f6831a98c0916b1c0ed5279b8b13bc99b892a2955567d56","flipX":"b2a8b8c3b435557b1a3d9b03d95cbc1b95b8f8d36de49163cedc80830003d7fc","flipY":"e7fd1269e160ffd14f6831a98c0916b1c0ed527938b13bc99b892a2955567d56","flipPlus1":"b2a8473cb435aa841ebd6cfcd95c43e49db8072cede46e9ccfdc7f7c00032803","flipMinus1":"e7fded96e160002e4f68ce568c09e94ec8edad86b8b1c4369b89d5d6555682a9"}},
  {"side":200,"seed":14,"quality":100,"hashes":{"original":"b33518bf8936c29267650e169f28ab6e50c90b96eb29f45643a9ed567556c8a9","rotate90":"b331e74089363d6d6765f1e99d2854915089f6e9eb290ba943a992a975563756","rotate180":"e76cb215dc6368383230a4bcca7d81c405dca3bcbe7c7efc96fcc7fc20036203","rotate270":"e6644deadc6397c732305b43c87dfe3b05dc5c43be7ca10316fc380320039dfc","flipX":"b331e74089363d6d6765f1e99d2854915089f6e9eb290ba943a992a975563756","flipY":"e6644deadc6397c732305b43c87dfe3b05dc5c43be7ca10316fc380320039dfc","flipPlus1":"b33518bf8936c29267650e169f68ab6e50c90996eb29f45643a9ed567556c8a9","flipMinus1":"e76cb215dc7368383230a4bcca7d81c405dca3bcbe7c5efc96fcc7fc20036203"}},
  {"side":333,"seed":15,"quality":100,"hashes":{"original":"2f330976989934d6eaa195768989c6f63bc155d6cd21f57622095556d556aaa9","rotate90":"2f33f6899899cf29eab17a89c98939093be9aaa9cdb10aa96289aaa9d5565556","rotate180":"7244a1d4cdcc9a7c3fe42fdc9c5c6c5c6c947f7c186457dc375cfffc00030003","rotate270":"7a665e2bcdcc6583bff4d023dcdc93a36efc008398f4a82377dc00038003fffc","flipX":"2f33f6899899cf29eab17a89c98939093be9aaa9cdb10aa96289aaa9d5565556","flipY":"7a665e2bcdcc6583bff4d023dcdc93a36efc008398f4a82377dc00038003fffc","flipPlus1":"2f330976989934d6eaa195768989c6f63bc155d6cd31f55622095556d556aaa9","flipMinus1":"7204a1d4cdcc9a7c3fe42fdc9c5c6c5c6c94ff7c186457dc375cfffc00030003"}},
];

describe("PDQ: the C++ reference's test vectors (pure: the same on either engine)", () => {
  for (const v of TEST_VECTORS) {
    test(`${v.width} x ${v.height}: quality and the eight dihedral hashes, bit for bit`, () => {
      const ours = pdqDihedralFromLuma(syntheticLuma(v.width, v.height, v.seed), v.width, v.height);
      expect(ours.quality).toBe(v.quality);
      expect(ours.hashes).toEqual(v.hashes);
      expect(pdqHashFromLuma(syntheticLuma(v.width, v.height, v.seed), v.width, v.height)).toEqual({ hash: v.hashes.original, quality: v.quality });
    });
  }

  for (const v of SYMMETRIC_VECTORS) {
    test(`${v.side} x ${v.side} (seed ${v.seed}), symmetric: ties broken by float rounding as the reference breaks them`, () => {
      const ours = pdqDihedralFromLuma(symmetricLuma(v.side, v.seed), v.side, v.side);
      expect(ours.quality).toBe(v.quality);
      expect(ours.hashes).toEqual(v.hashes);
      // The transposed hash differs from the original only by such ties: a few bits.
      expect(hammingDistance(ours.hashes.original, ours.hashes.flipPlus1)).toBeLessThanOrEqual(4);
    });
  }

  test("an image under 5 pixels on a side has no hash and quality 0, as in the reference", () => {
    expect(pdqHashFromLuma(new Float32Array(4 * 40).fill(100), 4, 40)).toEqual({ hash: "0".repeat(64), quality: 0 });
    expect(pdqHash({ width: 40, height: 4, rgba: new Uint8Array(40 * 4 * 4).fill(200) })).toEqual({ hash: "0".repeat(64), quality: 0 });
  });
});

describe("PDQ: ThreatExchange's test images (pure: the same on either engine)", () => {
  test("the reference table is read: 11 files", () => {
    expect(Object.keys(REFERENCE).sort()).toEqual([
      "bridge-aaa-orig.jpg", "bridge-blur-a-little.jpg", "bridge-blur-a-lot.jpg", "bridge-high-contrast.jpg", "bridge-sharpen-a-little.jpg",
      "bridge-shrink-a-little.jpg", "bridge-square-256x256.jpg", "bridge-square-512x512.jpg", "c.png", "small.jpg", "wee.jpg",
    ]);
  });

  for (const [file, reference] of Object.entries(REFERENCE)) {
    test(`${file}: within 10 bits of the reference hash`, () => {
      const { hash, quality } = pdqHash(image(file));
      const distance = hammingDistance(hash, reference);
      console.log(`${file}: ${hash} quality ${quality}, ${distance} bits from the reference`);
      expect(distance).toBeLessThanOrEqual(10);
    });
  }

  test("on the whole, the reference's hashes: at most 11 bits over the 11 files", () => {
    // Each file may differ by up to 10 bits (decoders differ), but the hashes follow the
    // reference's file hasher, which resamples images over 512 pixels to 512 x 512 first: hashing
    // them at full size instead gives 36 bits over the 11 (10 on c.png alone).
    const total = Object.entries(REFERENCE).reduce((sum, [file, reference]) => sum + hammingDistance(pdqHash(image(file)).hash, reference), 0);
    console.log(`${total} bits from the reference over the ${Object.keys(REFERENCE).length} files`);
    expect(total).toBeLessThanOrEqual(11);
  });

  const original = () => pdqHash(image("bridge-aaa-orig.jpg")).hash;
  for (const file of Object.keys(REFERENCE).filter((f) => f.startsWith("bridge-") && f !== "bridge-aaa-orig.jpg")) {
    test(`${file} matches bridge-aaa-orig.jpg (distance ${PDQ_MATCH_DISTANCE} or less)`, () => {
      const distance = hammingDistance(pdqHash(image(file)).hash, original());
      console.log(`${file}: ${distance} bits from bridge-aaa-orig.jpg`);
      expect(distance).toBeLessThanOrEqual(PDQ_MATCH_DISTANCE);
    });
  }
  for (const file of ["c.png", "small.jpg", "wee.jpg"]) {
    test(`${file} does not match bridge-aaa-orig.jpg`, () => {
      const distance = hammingDistance(pdqHash(image(file)).hash, original());
      console.log(`${file}: ${distance} bits from bridge-aaa-orig.jpg`);
      expect(distance).toBeGreaterThan(PDQ_MATCH_DISTANCE);
    });
  }

  test(`the photographs have a quality of ${PDQ_MIN_QUALITY} or more; small.jpg, nearly black (its values 0 to 2), is too weak to match on`, () => {
    for (const file of Object.keys(REFERENCE).filter((f) => f !== "small.jpg")) expect({ file, quality: pdqHash(image(file)).quality }).toEqual({ file, quality: 100 });
    expect(pdqHash(image("small.jpg")).quality).toBeLessThan(PDQ_MIN_QUALITY);
  });
});

/** The picture moved: `from(x, y)` is the source pixel [column, row] of the output pixel (x, y). */
function moved(src: DecodedImage, width: number, height: number, from: (x: number, y: number) => readonly [number, number]): DecodedImage {
  const pixels = new Uint32Array(width * height);
  const source = new Uint32Array(src.rgba.buffer, src.rgba.byteOffset, src.width * src.height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [sx, sy] = from(x, y);
      pixels[y * width + x] = source[sy * src.width + sx]!;
    }
  }
  return { type: src.type, width, height, rgba: new Uint8Array(pixels.buffer) };
}

describe("PDQ: the dihedral hashes are the picture's rotations and flips (pure: the same on either engine)", () => {
  /** What each dihedral hash stands for, as an image transform (the reference's names). */
  const MOVES: Record<PdqDihedral, (img: DecodedImage) => DecodedImage> = {
    original: (img) => img,
    rotate90: (img) => moved(img, img.height, img.width, (x, y) => [img.width - 1 - y, x]), // a quarter turn anticlockwise
    rotate180: (img) => moved(img, img.width, img.height, (x, y) => [img.width - 1 - x, img.height - 1 - y]),
    rotate270: (img) => moved(img, img.height, img.width, (x, y) => [y, img.height - 1 - x]), // a quarter turn clockwise
    flipX: (img) => moved(img, img.width, img.height, (x, y) => [x, img.height - 1 - y]), // upside down
    flipY: (img) => moved(img, img.width, img.height, (x, y) => [img.width - 1 - x, y]), // mirrored left to right
    flipPlus1: (img) => moved(img, img.height, img.width, (x, y) => [y, x]), // transposed
    flipMinus1: (img) => moved(img, img.height, img.width, (x, y) => [img.width - 1 - y, img.height - 1 - x]), // anti-transposed
  };

  for (const file of ["wee.jpg", "bridge-aaa-orig.jpg"]) {
    test(`${file}: each transformed picture's hash is nearest its dihedral hash, and matches it`, () => {
      const { hashes, quality } = pdqDihedralHashes(image(file));
      expect(hashes.original).toBe(pdqHash(image(file)).hash);
      expect(quality).toBe(pdqHash(image(file)).quality);
      for (const name of PDQ_DIHEDRAL) {
        const hash = pdqHash(MOVES[name](image(file))).hash;
        const distances = Object.fromEntries(PDQ_DIHEDRAL.map((other) => [other, hammingDistance(hash, hashes[other])]));
        const nearest = PDQ_DIHEDRAL.reduce((a, b) => (distances[b]! < distances[a]! ? b : a));
        expect({ name, nearest }).toEqual({ name, nearest: name });
        expect(distances[name]).toBeLessThanOrEqual(PDQ_MATCH_DISTANCE);
      }
    });
  }
});

describe("PDQ: hashes as words and their distance (pure: the same on either engine)", () => {
  test("bit k of the hash is bit k & 31 of word k >> 5, the last hex digit holding bits 0 to 3", () => {
    const one = "0".repeat(63) + "1";
    expect([...pdqWords(one)]).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    const top = "8" + "0".repeat(63);
    expect([...pdqWords(top)]).toEqual([0, 0, 0, 0, 0, 0, 0, 0x80000000]);
    expect(hammingDistance(one, top)).toBe(2);
    expect(hammingDistance("f".repeat(64), "0".repeat(64))).toBe(256);
    expect(hammingDistance(REFERENCE["c.png"]!, REFERENCE["c.png"]!.toUpperCase())).toBe(0);
  });

  test("popcount32 counts the bits of every kind of word", () => {
    for (const x of [0, 1, 0x80000000, 0xffffffff, 0x55555555, 0x12345678, 0xdeadbeef]) {
      expect(popcount32(x)).toBe([...x.toString(2)].filter((c) => c === "1").length);
    }
  });

  test("a malformed hash is refused", () => {
    expect(() => pdqWords("abc")).toThrow(RangeError);
    expect(() => hammingDistance("g".repeat(64), "0".repeat(64))).toThrow(RangeError);
  });
});
