/**
 * The audit chain's passes, on one instance (Store.singleton "audit-checkpoints"; docs/audit.md):
 * - the checkpoint pass: at start and every FLAGSTAFF_AUDIT_CHECKPOINT_MS, signs a checkpoint of
 *   each organization's chain that grew since its last one, and announces it (webhook
 *   `audit.checkpoint`); only with a signing key;
 * - the straggler pass (PostgreSQL): every STRAGGLER_PASS_MS (or FLAGSTAFF_AUDIT_CHECKPOINT_MS when
 *   shorter), while events without a chain position exist, watches for instances of a release
 *   before the chain and chains what they wrote once none is connected (chainStragglers), then
 *   signs a checkpoint at once (with a key), so that the chain verifies within seconds of a
 *   rolling upgrade's end. A pass that finds nothing unchained costs one read of a partial index.
 */
import type { Store } from "../db/store.ts";
import type { Clock } from "../domain/core/clock.ts";
import { chainStragglers, type UpgradeWindow } from "../domain/audit/stragglers.ts";
import { checkpointChains, type AuditSigningKey } from "../domain/audit/audit-chain.ts";
import { errorFields, log } from "../log.ts";
import { startPeriodicPass, type PeriodicPass } from "./periodic.ts";

/** How often, at most, the straggler pass runs (docs/audit.md, "Upgrading"). */
export const STRAGGLER_PASS_MS = 2_000;

export function startAuditCheckpoints(deps: { store: Store; clock: Clock; config: { auditCheckpointMs: number } }, key: AuditSigningKey | null): PeriodicPass {
  const { store, clock, config } = deps;
  const ctx = { store, db: store.db, clock };
  const sign = async () => {
    if (!key) return;
    const made = await checkpointChains(ctx, key);
    if (made.length) log.info("audit checkpoints signed", { count: made.length });
  };
  const checkpoints = startPeriodicPass(async () => {
    try {
      await sign();
    } catch (err) {
      log.error("signing audit checkpoints failed", errorFields(err));
    }
  }, config.auditCheckpointMs);
  // The database's only writer (SQLite) runs beside no instance of an older release: no stragglers.
  if (store.soleWriter) return checkpoints;

  const window: UpgradeWindow = { olderSeenAt: null };
  let told = "";
  const stragglers = startPeriodicPass(async () => {
    try {
      const pass = await chainStragglers(store, clock, window);
      // Said once per state, not every pass: an operator follows the upgrade's end by these lines.
      const state = pass.waiting ? "waiting" : pass.refused ? `refused ${pass.refused}` : "";
      if (state && state !== told) {
        if (pass.waiting) log.info("audit events written by an instance of a release before the chain wait to be chained: they are chained once no such instance is connected", { count: pass.waiting });
        else log.warn("audit events without a place in the chain will not be chained: no instance of a release before the chain wrote them during an upgrade, or they are dated before lane 0's head; flagstaff audit verify names them", { count: pass.refused });
      }
      told = state;
      if (pass.chained) {
        log.info("audit events chained after a rolling upgrade", { count: pass.chained, notChained: pass.refused });
        await sign();
      }
    } catch (err) {
      log.error("chaining audit events after a rolling upgrade failed", errorFields(err));
    }
  }, Math.min(STRAGGLER_PASS_MS, config.auditCheckpointMs));
  return {
    stop() {
      checkpoints.stop();
      stragglers.stop();
    },
  };
}
