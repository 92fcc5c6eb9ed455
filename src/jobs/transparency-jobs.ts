/**
 * The scheduler of the Transparency Database submission (src/domain/dsa/transparency-submission.ts):
 * every FLAGSTAFF_TRANSPARENCY_TICK_MS, it asks for a run of every organization whose submission
 * is on and that has statements not submitted yet (what came in while a run was under way, runs
 * whose attempts ran out, a restart). Runs are also asked for when submission is turned on, when
 * a statement is made (src/domain/enforcement/enforcement.ts) and by "submit now"; a run already due or under
 * way is never doubled (one job row per organization). A run is a job: its handler is the
 * entry of JOB_SPECS (src/jobs/job-specs.ts).
 */
import type { Store } from "../db/store.ts";
import type { Clock } from "../domain/core/clock.ts";
import { organizationsWithPendingStatements, scheduleSubmission } from "../domain/dsa/transparency-submission.ts";
import { transaction } from "../domain/core/context.ts";
import { errorFields, log } from "../log.ts";
import { startPeriodicPass, type PeriodicPass } from "./periodic.ts";

export type SubmissionScheduler = PeriodicPass;

/** Asks for the runs that are owed, at start and then every `transparencyTickMs`. */
export function startSubmissionScheduler(deps: { store: Store; clock: Clock; config: { transparencyTickMs: number } }): SubmissionScheduler {
  const { store, clock, config } = deps;
  return startPeriodicPass(async () => {
    try {
      const orgIds = await organizationsWithPendingStatements({ db: store.db });
      for (const orgId of orgIds) {
        const ctx = { store, db: store.db, clock, orgId };
        await transaction(ctx, () => scheduleSubmission(ctx));
      }
      if (orgIds.length) log.debug("transparency submission runs asked for", { organizations: orgIds.length });
    } catch (err) {
      log.error("scheduling transparency submissions failed", errorFields(err));
    }
  }, config.transparencyTickMs);
}
