import type { Services } from "./api/context.ts";
import { observeAiCall } from "./api/metrics.ts";
import { ConfigError, type Config } from "./config.ts";
import { openBlobStore, type BlobStore } from "./db/blobs.ts";
import type { Store } from "./db/store.ts";
import { registerAttachmentStore } from "./domain/attachments/attachments.ts";
import type { Clock } from "./domain/core/clock.ts";
import { DomainError } from "./domain/core/errors.ts";
import { openStore } from "./db/open.ts";
import { offsetClock } from "./domain/core/clock.ts";
import { createRateLimiter, createSharedRateLimiter } from "./domain/plumbing/rate-limit.ts";

/**
 * Opens and migrates the database (SQLite, or PostgreSQL when FLAGSTAFF_DATABASE_URL is set)
 * and builds the long-lived services of one process.
 */
export async function createServices(config: Config): Promise<Services> {
  const { store } = await openStore(config, { auditChainLanes: config.auditChainLanes });
  const clock = offsetClock(config.clockOffsetMs);
  store.blobs = await openAttachmentStore(store, clock, config);
  return {
    store,
    db: store.db,
    config,
    clock,
    // The database's only writer counts report creations in memory; instances sharing one (PostgreSQL) count together.
    reportRateLimiter: store.soleWriter ? createRateLimiter(() => clock.now()) : createSharedRateLimiter({ store, clock }),
    onAiCall: observeAiCall,
  };
}

/**
 * The attachment store (src/db/blobs.ts): the bucket when FLAGSTAFF_S3_BUCKET is set, else the
 * directory. Where instances write side by side (PostgreSQL), the database remembers the store
 * its first instance used, and an instance with another one stops here with what to set
 * (docs/attachments.md, "Several instances").
 */
async function openAttachmentStore(store: Store, clock: Clock, config: Config): Promise<BlobStore> {
  let blobs: BlobStore;
  try {
    blobs = openBlobStore(config.attachments);
  } catch (err) {
    throw new ConfigError(`cannot open the attachment store (${config.attachments.s3 ? "FLAGSTAFF_S3_BUCKET" : config.attachments.dir}): ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!store.soleWriter) {
    try {
      await registerAttachmentStore({ store, db: store.db, clock }, { identity: blobs.identity(), location: blobs.location });
    } catch (err) {
      if (err instanceof DomainError) throw new ConfigError(err.message);
      throw err;
    }
  }
  return blobs;
}
