/**
 * What the attachment tests share: an S3-speaking server on loopback (the `s3rver` package, a
 * real implementation of S3's wire protocol, not a mock of ours), files to upload (a JPEG with
 * EXIF GPS tags, a PNG that claims 100,000 x 100,000 pixels), and uploads through the typed
 * organization client or by hand.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encode as encodePng } from "fast-png";
import { encode as encodeJpeg } from "jpeg-js";
import S3rver from "s3rver";
import { concat, ihdr, PNG_SIGNATURE, pngChunk, text } from "./media-bytes.ts";
import type { TestServer } from "./server.ts";

export interface S3Server {
  endpoint: string;
  bucket: string;
  dir: string;
  /** The environment that points a Flagstaff process at it. */
  env: Record<string, string>;
  /** Stops answering (its objects stay on its disk). */
  close(): Promise<void>;
  /** Answers again, on the same port, with the same objects. */
  reopen(): Promise<void>;
  /** Stops, and deletes its objects. */
  stop(): Promise<void>;
}

/** An S3 server on a random loopback port with one empty bucket, its objects in a temporary folder. */
export async function startS3(bucket = "flagstaff"): Promise<S3Server> {
  const dir = mkdtempSync(join(tmpdir(), "flagstaff-s3-"));
  const open = (port: number) => new S3rver({ port, address: "127.0.0.1", silent: true, directory: dir, configureBuckets: [{ name: bucket, configs: [] }] });
  let server: S3rver | null = open(0);
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const close = async () => {
    await server?.close();
    server = null;
  };
  return {
    endpoint,
    bucket,
    dir,
    env: { FLAGSTAFF_S3_BUCKET: bucket, FLAGSTAFF_S3_ENDPOINT: endpoint, FLAGSTAFF_S3_REGION: "us-east-1", FLAGSTAFF_S3_ACCESS_KEY_ID: "S3RVER", FLAGSTAFF_S3_SECRET_ACCESS_KEY: "S3RVER" },
    close,
    async reopen() {
      server = open(port);
      await server.run();
    },
    async stop() {
      await close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A client of the S3 server, to see what the bucket holds. */
export function s3Client(s3: S3Server): Bun.S3Client {
  return new Bun.S3Client({ bucket: s3.bucket, endpoint: s3.endpoint, region: "us-east-1", accessKeyId: "S3RVER", secretAccessKey: "S3RVER" });
}

/** A marker in the GPS tags: found in the original, never in the preview. */
export const GPS_MARK = "GPSMARK-51.5007N-0.1246W";

/** An EXIF APP1 segment with a GPS IFD whose GPSAreaInformation holds GPS_MARK (big-endian TIFF). */
function exifWithGps(): Uint8Array {
  const u16 = (n: number) => [(n >> 8) & 0xff, n & 0xff];
  const u32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
  const mark = [...text(GPS_MARK)];
  // TIFF: header (8), IFD0 with one entry (GPS IFD pointer) at 8 (2 + 12 + 4 = 18), GPS IFD at 26 with one entry (AreaInformation, UNDEFINED) at 26 (18), data at 44.
  const tiff = [
    ...text("MM"), ...u16(42), ...u32(8),
    ...u16(1), ...u16(0x8825), ...u16(4), ...u32(1), ...u32(26), ...u32(0),
    ...u16(1), ...u16(0x001c), ...u16(7), ...u32(mark.length), ...u32(44), ...u32(0),
    ...mark,
  ];
  const payload = concat(text("Exif\0\0"), tiff);
  return concat([0xff, 0xe1], u16(payload.length + 2), payload);
}

/** A JPEG photograph-like gradient of `width` x `height` with EXIF GPS tags right after SOI. */
export function jpegWithGps(width: number, height: number): Uint8Array {
  const rgba = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      rgba[o] = (x * 255) / width;
      rgba[o + 1] = (y * 255) / height;
      rgba[o + 2] = ((x + y) * 128) / (width + height);
      rgba[o + 3] = 255;
    }
  }
  const jpeg = new Uint8Array(encodeJpeg({ data: rgba, width, height }, 90).data);
  return concat(jpeg.subarray(0, 2), exifWithGps(), jpeg.subarray(2));
}

/** A PNG of `width` x `height` in one colour: large in pixels (slow to decode), small in bytes. */
export function flatPng(width: number, height: number): Uint8Array {
  return encodePng({ width, height, data: new Uint8Array(width * height * 3).fill(0x80), channels: 3, depth: 8 });
}

/** A PNG of a few dozen bytes whose header claims 100,000 x 100,000 pixels (a decompression bomb), with no image data. */
export const pngBomb = (): Uint8Array => concat(PNG_SIGNATURE, ihdr(100_000, 100_000), pngChunk("IEND", []));

/** A page of HTML, to be named x.png and declared image/png. */
export const htmlPage = (): Uint8Array => text("<!doctype html><html><body><script>alert(document.cookie)</script></body></html>");

export interface UploadAnswer {
  status: number;
  body: any;
  headers: Headers;
}

/** An upload by hand (the raw body, with a key or a session's headers). */
export async function upload(server: TestServer, path: string, bytes: Uint8Array | ReadableStream<Uint8Array>, opts: { fileName?: string; contentType?: string; headers?: Record<string, string>; key?: string | null } = {}): Promise<UploadAnswer> {
  const key = opts.key === undefined ? server.demo.secretKey : opts.key;
  const query = opts.fileName !== undefined ? `?fileName=${encodeURIComponent(opts.fileName)}` : "";
  const res = await fetch(`${server.url}/api/v1${path}${query}`, {
    method: "POST",
    body: bytes,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), "content-type": opts.contentType ?? "application/octet-stream", ...opts.headers },
    // A stream body needs it (fetch's duplex rule).
    ...(bytes instanceof ReadableStream ? { duplex: "half" } : {}),
  } as RequestInit);
  const t = await res.text();
  let body: unknown = t;
  try {
    body = JSON.parse(t);
  } catch {
    // not JSON
  }
  return { status: res.status, body, headers: res.headers };
}

/** The bytes of `chunks` chunks of `size` bytes each (a byte that varies), as a stream sent as it is read. */
export function chunkedStream(chunks: number, size: number, fill = 0x61): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= chunks) return controller.close();
      controller.enqueue(new Uint8Array(size).fill(fill));
      sent++;
    },
  });
}
