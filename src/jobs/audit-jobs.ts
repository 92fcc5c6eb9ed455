/**
 * The audit checkpoint pass (src/domain/review/audit-chain.ts): every FLAGSTAFF_AUDIT_CHECKPOINT_MS,
 * on one instance (Store.singleton), signs a checkpoint of each organization's chain that grew
 * since its last one, and announces it (webhook `audit.checkpoint`). The first pass runs at start.
 * Each pass first chains the events an instance of the previous release wrote unchained during a
 * rolling upgrade; without a key, that is all it does.
 */
import type { Store } from "../db/store.ts";
import type { Clock } from "../domain/core/clock.ts";
import { chainStragglers } from "../domain/core/audit.ts";
import { checkpointChains, type AuditSigningKey } from "../domain/review/audit-chain.ts";
import { errorFields, log } from "../log.ts";
import { startPeriodicPass, type PeriodicPass } from "./periodic.ts";

export function startAuditCheckpoints(deps: { store: Store; clock: Clock; config: { auditCheckpointMs: number } }, key: AuditSigningKey | null): PeriodicPass {
  const { store, clock, config } = deps;
  return startPeriodicPass(async () => {
    try {
      // Without a key, the pass still chains what an older instance left unchained.
      if (!key) {
        const chained = await chainStragglers(store);
        if (chained) log.info("audit events chained after a rolling upgrade", { count: chained });
        return;
      }
      const made = await checkpointChains({ store, db: store.db, clock }, key);
      if (made.length) log.info("audit checkpoints signed", { count: made.length });
    } catch (err) {
      log.error("signing audit checkpoints failed", errorFields(err));
    }
  }, config.auditCheckpointMs);
}
