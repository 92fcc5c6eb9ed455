/**
 * Where attachments' bytes are kept (docs/attachments.md, "Storage"): a directory beside the
 * SQLite database by default, or an S3-compatible bucket (Bun's own S3 client: AWS S3, MinIO,
 * Garage…) when FLAGSTAFF_S3_BUCKET is set. The domain reaches it as `ctx.store.blobs`.
 *
 * Both keep objects under the same keys: `blobs/<sha256>` for an original (content-addressed:
 * one copy per distinct file) and `previews/<sha256>.jpg` for its preview. An upload is first
 * spooled to a temporary file in the local directory's `tmp/` (streamed, hashed and counted as it
 * comes, synced), then placed: renamed into place in the directory (same file system: atomic),
 * or sent to the bucket from the file. Nothing is ever whole in memory.
 *
 * A fault of the store (a full disk, a read-only one, an unreachable bucket) is a BlobStoreFault:
 * the transports answer it 503 with Retry-After, and readiness says so until a probe goes through.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { link, mkdir, open, readdir, rename, rm, stat, unlink, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { S3Client } from "bun";
import { log } from "../log.ts";

/** What went wrong with the store: a metric label and the 503's reason. */
export type BlobFaultKind = "disk_full" | "read_only" | "unreachable" | "io";

export class BlobStoreFault extends Error {
  constructor(
    readonly fault: BlobFaultKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An upload being written to a temporary file: bytes in, then placed (or discarded). */
export interface Spool {
  readonly path: string;
  write(chunk: Uint8Array): Promise<void>;
  /**
   * Writes a whole body to the file as it streams in (Bun writes it natively: the request
   * thread sees no chunk), and answers its length.
   */
  receive(body: ReadableStream<Uint8Array> | null): Promise<number>;
  /** Flushes and syncs the file, then closes it. */
  finish(): Promise<void>;
  /** Closes and deletes the file (never throws). */
  discard(): Promise<void>;
}

/** An object's bytes, read when asked. */
export interface StoredObject {
  /** A response body that streams it (a local file goes by the kernel's sendfile). */
  body(): BodyInit;
  /** All of it, for work that needs it whole (a preview's decoding, bounded by the pixel limit). */
  bytes(): Promise<Uint8Array>;
}

/** An object as listed (for the sweep). */
export interface ListedObject {
  key: string;
  modifiedAt: number;
}

export interface BlobStore {
  readonly kind: "local" | "s3";
  /** Where, for messages and logs (no secret). */
  readonly location: string;
  /** The store's identity, the same for every instance that shares it (the attachment_stores guard). */
  identity(): string;
  spool(): Promise<Spool>;
  /** Moves a finished spool to `key` (an existing object there is kept: same key, same bytes); the spool is gone after. */
  place(key: string, spool: Spool): Promise<void>;
  /** Writes a small object (a preview) whole. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The object, or null when it does not exist. */
  get(key: string): Promise<StoredObject | null>;
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Every object under `prefix` (`blobs/`, `previews/`). */
  list(prefix: string): AsyncIterable<ListedObject>;
  /** Spools older than `olderThanMs` (a crash's leftovers): deleted; answers how many. */
  sweepSpools(olderThanMs: number, now: number): Promise<number>;
  /** A tiny write and delete: throws a BlobStoreFault when the store cannot take writes. */
  probe(): Promise<void>;
}

export const blobKey = (sha256: string): string => `blobs/${sha256}`;
export const previewKey = (sha256: string): string => `previews/${sha256}.jpg`;

/** A node:fs error as a BlobStoreFault, or the error unchanged when it is no fault of the disk. */
function diskFault(err: unknown, what: string): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === "ENOSPC" || code === "EDQUOT") return new BlobStoreFault("disk_full", `The attachment store is out of disk space (${what})`, { cause: err });
  if (code === "EROFS" || code === "EACCES" || code === "EPERM") return new BlobStoreFault("read_only", `The attachment store cannot be written (${what}: ${String(code)})`, { cause: err });
  if (code === "EIO") return new BlobStoreFault("io", `The attachment store has I/O errors (${what})`, { cause: err });
  return err;
}

/** A spool file in `dir`: written chunk by chunk with backpressure, synced when finished. */
async function openSpool(dir: string, kind: "upload" | "preview" | "probe"): Promise<Spool> {
  const path = join(dir, `${kind}-${randomUUID()}.part`);
  let handle: FileHandle | null;
  try {
    handle = await open(path, "wx", 0o600);
  } catch (err) {
    throw diskFault(err, "opening a temporary file");
  }
  const close = async () => {
    const h = handle;
    handle = null;
    await h?.close().catch(() => {});
  };
  return {
    path,
    async write(chunk) {
      try {
        let at = 0;
        while (at < chunk.byteLength) {
          const { bytesWritten } = await handle!.write(chunk, at, chunk.byteLength - at);
          at += bytesWritten;
        }
      } catch (err) {
        throw diskFault(err, "writing an upload");
      }
    },
    async receive(body) {
      // Bun.write opens the path itself.
      await close();
      try {
        return await Bun.write(path, new Response(body));
      } catch (err) {
        throw diskFault(err, "writing an upload");
      }
    },
    async finish() {
      try {
        handle ??= await open(path, "r+");
        await handle.sync();
      } catch (err) {
        throw diskFault(err, "syncing an upload");
      } finally {
        await close();
      }
    },
    async discard() {
      await close();
      await unlink(path).catch(() => {});
    },
  };
}

async function syncDir(dir: string): Promise<void> {
  const h = await open(dir, "r");
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

async function deleteOldSpools(dir: string, olderThanMs: number, now: number): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let deleted = 0;
  for (const name of names) {
    const path = join(dir, name);
    const s = await stat(path).catch(() => null);
    if (s && now - s.mtimeMs > olderThanMs) {
      await unlink(path).catch(() => {});
      deleted++;
    }
  }
  return deleted;
}

/** The local directory's identity: a random id written once into it (copied with it by a backup). */
function directoryIdentity(dir: string): string {
  const file = join(dir, "store-id");
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    const id = randomUUID();
    try {
      writeFileSync(file, `${id}\n`, { flag: "wx" });
      return id;
    } catch {
      // Another instance sharing the directory wrote it first.
      return readFileSync(file, "utf8").trim();
    }
  }
}

/**
 * The local directory: `<dir>/blobs/<first two hex digits>/<sha256>`, `<dir>/previews/…`,
 * `<dir>/tmp/` for spools. A placed file was synced, renamed into place, and its directory
 * synced: after a crash it is either whole or absent.
 */
export function localBlobStore(dir: string): BlobStore {
  const tmp = join(dir, "tmp");
  mkdirSync(tmp, { recursive: true });
  const id = directoryIdentity(dir);
  const pathOf = (key: string) => {
    const [area, name] = key.split("/") as [string, string];
    return join(dir, area, name.slice(0, 2), name);
  };
  return {
    kind: "local",
    location: dir,
    identity: () => `local:${id}`,
    spool: () => openSpool(tmp, "upload"),
    async place(key, spool) {
      const target = pathOf(key);
      try {
        await mkdir(dirname(target), { recursive: true });
        // A link keeps an object already there (the same bytes: same key) and never leaves half a file.
        await link(spool.path, target).catch((err: { code?: string }) => {
          if (err.code !== "EEXIST") throw err;
        });
        await syncDir(dirname(target));
      } catch (err) {
        throw diskFault(err, "storing an upload");
      } finally {
        await unlink(spool.path).catch(() => {});
      }
    },
    async put(key, bytes) {
      const spool = await openSpool(tmp, "preview");
      try {
        await spool.write(bytes);
        await spool.finish();
        const target = pathOf(key);
        await mkdir(dirname(target), { recursive: true }).catch((err) => {
          throw diskFault(err, "storing a preview");
        });
        await rename(spool.path, target).catch((err) => {
          throw diskFault(err, "storing a preview");
        });
      } catch (err) {
        await spool.discard();
        throw err;
      }
    },
    async get(key) {
      const file = Bun.file(pathOf(key));
      return (await file.exists()) ? { body: () => file, bytes: () => file.bytes() } : null;
    },
    exists: (key) => Bun.file(pathOf(key)).exists(),
    async delete(key) {
      await rm(pathOf(key), { force: true }).catch((err) => {
        throw diskFault(err, "deleting an object");
      });
    },
    async *list(prefix) {
      const area = join(dir, prefix.replace(/\/$/, ""));
      const shards = await readdir(area).catch(() => [] as string[]);
      for (const shard of shards) {
        const names = await readdir(join(area, shard)).catch(() => [] as string[]);
        for (const name of names) {
          const s = await stat(join(area, shard, name)).catch(() => null);
          if (s?.isFile()) yield { key: `${prefix.replace(/\/$/, "")}/${name}`, modifiedAt: s.mtimeMs };
        }
      }
    },
    sweepSpools: (olderThanMs, now) => deleteOldSpools(tmp, olderThanMs, now),
    async probe() {
      const spool = await openSpool(tmp, "probe");
      try {
        await spool.write(new Uint8Array(1));
        await spool.finish();
      } finally {
        await spool.discard();
      }
    },
  };
}

export interface S3Settings {
  bucket: string;
  endpoint: string | null;
  region: string | null;
  accessKeyId: string | null;
  secretAccessKey: string | null;
}

/** An S3 call that failed as a BlobStoreFault (unreachable, refused, or the service's error). */
function s3Fault(err: unknown, what: string): BlobStoreFault {
  if (err instanceof BlobStoreFault) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new BlobStoreFault("unreachable", `The attachment object store did not answer (${what}): ${message.slice(0, 200)}`, { cause: err });
}

/**
 * An S3-compatible bucket, through Bun's S3 client. Uploads are still spooled locally first (to
 * hash them and check them before anything is stored), in `spoolDir`; a spool goes to the bucket
 * as a multipart upload read from the file.
 */
export function s3BlobStore(settings: S3Settings, spoolDir: string): BlobStore {
  const tmp = join(spoolDir, "tmp");
  mkdirSync(tmp, { recursive: true });
  const client: S3Client = new Bun.S3Client({
    bucket: settings.bucket,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    ...(settings.region ? { region: settings.region } : {}),
    ...(settings.accessKeyId ? { accessKeyId: settings.accessKeyId } : {}),
    ...(settings.secretAccessKey ? { secretAccessKey: settings.secretAccessKey } : {}),
  });
  const where = `${settings.endpoint ?? "s3"}/${settings.bucket}`;
  const call = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw s3Fault(err, what);
    }
  };
  return {
    kind: "s3",
    location: where,
    identity: () => `s3:${where}`,
    spool: () => openSpool(tmp, "upload"),
    async place(key, spool) {
      try {
        if (await call("checking an object", () => client.exists(key))) return;
        await call("storing an upload", () => client.write(key, Bun.file(spool.path), { type: "application/octet-stream" }));
      } finally {
        await unlink(spool.path).catch(() => {});
      }
    },
    async put(key, bytes) {
      await call("storing a preview", () => client.write(key, bytes, { type: "image/jpeg" }));
    },
    async get(key) {
      const file = client.file(key);
      if (!(await call("reading an object", () => file.exists()))) return null;
      // Bun's Response does not read an S3File given as a body: its stream does.
      return { body: () => file.stream(), bytes: () => call("reading an object", () => file.bytes()) };
    },
    exists: (key) => call("checking an object", () => client.exists(key)),
    async delete(key) {
      await call("deleting an object", () => client.delete(key));
    },
    async *list(prefix) {
      let continuationToken: string | undefined;
      for (;;) {
        const page = await call("listing objects", () => client.list({ prefix, ...(continuationToken ? { continuationToken } : {}) }));
        for (const o of page.contents ?? []) yield { key: o.key, modifiedAt: o.lastModified ? Date.parse(o.lastModified) : 0 };
        if (!page.isTruncated || !page.nextContinuationToken) break;
        continuationToken = page.nextContinuationToken;
      }
    },
    sweepSpools: (olderThanMs, now) => deleteOldSpools(tmp, olderThanMs, now),
    async probe() {
      const key = `probe/${randomUUID()}`;
      await call("probing", () => client.write(key, "ok"));
      await call("probing", () => client.delete(key));
    },
  };
}

/** The store the configuration names: the bucket when one is set, else the directory. */
export function openBlobStore(config: { dir: string; s3: S3Settings | null }): BlobStore {
  const store = config.s3 ? s3BlobStore(config.s3, config.dir) : localBlobStore(config.dir);
  log.debug("attachment store", { kind: store.kind, location: store.location });
  return store;
}

// ---------------------------------------------------------------------------------------------
// Whether the store takes writes: what readiness reports (GET /readyz) besides the database's.

let failing: { fault: BlobFaultKind; since: number } | null = null;
let lastProbeAt = 0;
const PROBE_EVERY_MS = 1_000;

/** An upload or a read met a fault of the store (the transports, as they answer 503). */
export function noteBlobFault(fault: BlobFaultKind, now = Date.now()): void {
  if (!failing) log.error("attachment store failing: not ready until a write goes through", { fault });
  failing = { fault, since: failing?.since ?? now };
}

/** Why the store fails now (probing it at most once a second while it does), or null. */
export async function blobStoreFailing(store: BlobStore | null, now = Date.now()): Promise<string | null> {
  if (!failing || !store) return null;
  if (now - lastProbeAt >= PROBE_EVERY_MS) {
    lastProbeAt = now;
    try {
      await store.probe();
      log.warn("attachment store takes writes again", { fault: failing.fault, failedForMs: now - failing.since });
      failing = null;
    } catch (err) {
      if (err instanceof BlobStoreFault) failing = { fault: err.fault, since: failing?.since ?? now };
    }
  }
  if (!failing) return null;
  return failing.fault === "disk_full" ? "attachment store out of disk space" : failing.fault === "unreachable" ? "attachment object store unreachable" : "attachment store cannot be written";
}
