/**
 * The audit checkpoint pass (src/domain/review/audit-chain.ts): every FLAGSTAFF_AUDIT_CHECKPOINT_MS,
 * on one instance (Store.singleton), signs a checkpoint of each organization's chain that grew
 * since its last one, and announces it (webhook `audit.checkpoint`). The first pass runs at start.
 */
import type { Store } from "../db/store.ts";
import type { Clock } from "../domain/core/clock.ts";
import { checkpointChains, type AuditSigningKey } from "../domain/review/audit-chain.ts";
import { errorFields, log } from "../log.ts";
import { startPeriodicPass, type PeriodicPass } from "./periodic.ts";

export function startAuditCheckpoints(deps: { store: Store; clock: Clock; config: { auditCheckpointMs: number } }, key: AuditSigningKey): PeriodicPass {
  const { store, clock, config } = deps;
  return startPeriodicPass(async () => {
    try {
      const made = await checkpointChains({ store, db: store.db, clock }, key);
      if (made.length) log.info("audit checkpoints signed", { count: made.length });
    } catch (err) {
      log.error("signing audit checkpoints failed", errorFields(err));
    }
  }, config.auditCheckpointMs);
}
