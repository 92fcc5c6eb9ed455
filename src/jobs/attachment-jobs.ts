/**
 * The attachment sweep on a timer (docs/attachments.md, "What a crash leaves"): at start and
 * every FLAGSTAFF_ATTACHMENT_SWEEP_MS, on one instance (Store.singleton). It deletes the
 * objects whose row never committed (a crash between the store and the database), the files
 * whose last attachment went while an upload of them was under way, deletions left half done,
 * and the spools of uploads a crash cut.
 */
import type { Config } from "../config.ts";
import type { Store } from "../db/store.ts";
import { systemActor } from "../domain/core/audit.ts";
import type { Clock } from "../domain/core/clock.ts";
import { domainContext } from "../domain/core/context.ts";
import { sweepAttachments } from "../domain/attachments/attachments.ts";
import { errorFields, log } from "../log.ts";
import { startPeriodicPass, type PeriodicPass } from "./periodic.ts";

export function startAttachmentSweep(deps: { store: Store; clock: Clock; config: Config }): PeriodicPass {
  const { orphanMs, sweepMs } = deps.config.attachments;
  return startPeriodicPass(async () => {
    if (!deps.store.blobs) return;
    try {
      // The sweep reads no organization's data but the blobs' own rows: no tenant to bound it by.
      const swept = await sweepAttachments(domainContext(deps.store, deps.clock, systemActor, ""), { orphanMs });
      if (swept.blobs + swept.strays + swept.spools > 0) log.info("attachment sweep deleted leftovers", { ...swept });
    } catch (err) {
      log.error("attachment sweep failed", errorFields(err));
    }
  }, sweepMs);
}
