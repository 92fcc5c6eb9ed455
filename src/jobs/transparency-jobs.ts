/**
 * Background work of the Transparency Database submission (src/domain/dsa/transparency-submission.ts):
 * the job handler of an organization's run, and the scheduler that, every
 * FLAGSTAFF_TRANSPARENCY_TICK_MS, asks for a run of every organization whose submission is on
 * and that has statements not submitted yet (what came in while a run was under way, runs
 * whose attempts ran out, a restart). Runs are also asked for when submission is turned on, when
 * a statement is made (src/domain/enforcement/enforcement.ts) and by "submit now"; a run already due or under
 * way is never doubled (one job row per organization).
 */
import { z } from "zod";
import type { Store } from "../db/store.ts";
import type { Clock } from "../domain/core/clock.ts";
import { organizationsWithPendingStatements, runSubmissionJob, scheduleSubmission, SUBMIT_JOB } from "../domain/dsa/transparency-submission.ts";
import { transaction } from "../domain/core/context.ts";
import { errorFields, log } from "../log.ts";
import { jobContext, type JobDeps } from "./context.ts";
import type { JobHandler } from "./worker.ts";
import { startPeriodicPass, type PeriodicPass } from "./periodic.ts";

const submitPayload = z.object({ orgId: z.string() });

export function transparencyJobHandlers(deps: JobDeps): Record<string, JobHandler> {
  return {
    [SUBMIT_JOB]: async (payload, job) => {
      const { orgId } = submitPayload.parse(payload);
      await runSubmissionJob({ ...jobContext(deps, job.orgId ?? orgId), config: deps.config });
    },
  };
}

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
