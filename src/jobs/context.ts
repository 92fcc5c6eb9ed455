import type { Config } from "../config.ts";
import type { Store } from "../db/store.ts";
import { systemActor } from "../domain/core/audit.ts";
import type { Clock } from "../domain/core/clock.ts";
import { domainContext, type DomainContext } from "../domain/core/context.ts";

/** What the job handlers need of the process: the store, the clock, the configuration, the AI metrics hook. */
export interface JobDeps {
  store: Store;
  clock: Clock;
  config: Config;
  /** Told the duration of every AI model call and whether it succeeded (metrics). */
  onAiCall?: (ms: number, ok: boolean) => void;
}

/** The context a job runs in: Flagstaff itself, acting for the organization the job works for. */
export const jobContext = (deps: Pick<JobDeps, "store" | "clock">, orgId: string): DomainContext =>
  domainContext(deps.store, deps.clock, systemActor, orgId);
