/**
 * The scheduler of enforcement: it starts scheduled actions when their start comes and ends
 * suspensions and mutes when their end comes. (Enforcement's jobs, webhook deliveries and the
 * strike policy's ladder steps, are entries of JOB_SPECS, src/jobs/job-specs.ts.)
 */
import type { Store } from "../db/store.ts";
import type { Clock } from "../domain/core/clock.ts";
import type { ReadContext } from "../domain/core/context.ts";
import { expireDueActions, nextActionEnd, nextActionStart, startDueActions, type SchedulerPass } from "../domain/enforcement/enforcement.ts";
import { errorFields, log } from "../log.ts";

/** How long an action the domain refused to start or expire is left out at first, and at most. */
const HELD_BACK_FIRST_MS = 60_000;
const HELD_BACK_MAX_MS = 3_600_000;

export interface ExpiryScheduler {
  stop(): void;
}

/**
 * Every FLAGSTAFF_ENFORCEMENT_TICK_MS at the latest — and exactly at the next known start or
 * end — records the scheduled actions whose start has come (their statements of reasons and
 * announcements), then marks the actions whose end has come as expired and announces them (the outbox rows are
 * written in the same transaction, whose commit wakes the job workers). Nothing is lost across
 * restarts: the first run after start catches up on every end that passed while the server was
 * down.
 */
export function startExpiryScheduler(deps: { store: Store; clock: Clock; config: { enforcementTickMs: number } }): ExpiryScheduler {
  const { store, clock, config } = deps;
  const ctx: ReadContext = { store, db: store.db, clock };
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  /**
   * Actions whose last start or expiry the domain refused (SchedulerPass.failed): left out of
   * the passes until `until`, then tried again, each failure doubling the wait
   * (HELD_BACK_FIRST_MS up to HELD_BACK_MAX_MS; the entry stays to remember it, a few bytes an
   * action that ever failed). Without it the scheduler ran again every 10 ms, the action's time
   * being past.
   */
  const heldBack = new Map<string, { until: number; waitMs: number }>();
  const holding = (): ReadonlySet<string> => {
    const now = clock.now();
    return new Set([...heldBack].filter(([, h]) => h.until > now).map(([id]) => id));
  };
  const holdBack = (what: string, pass: SchedulerPass) => {
    for (const f of pass.failed) {
      const waitMs = Math.min(HELD_BACK_MAX_MS, 2 * (heldBack.get(f.id)?.waitMs ?? HELD_BACK_FIRST_MS / 2));
      heldBack.set(f.id, { until: clock.now() + waitMs, waitMs });
      log.error(`${what} an enforcement action failed; the others went on`, { actionId: f.id, orgId: f.orgId, retryInSeconds: waitMs / 1000, ...errorFields(f.error) });
    }
  };

  async function tick(): Promise<void> {
    timer = null;
    if (stopped) return;
    try {
      // Starts first: an action whose start and end both passed (downtime) starts, then expires.
      let started = 0;
      for (let pass = await startDueActions(ctx, { heldBack: holding() }); pass.found > 0; pass = await startDueActions(ctx, { heldBack: holding() })) {
        holdBack("starting", pass);
        started += pass.found - pass.failed.length;
        if (pass.found < 100) break;
      }
      if (started > 0) log.info("scheduled enforcement actions took effect", { count: started });
    } catch (err) {
      log.error("starting scheduled enforcement actions failed", errorFields(err));
    }
    try {
      let marked = 0;
      for (let pass = await expireDueActions(ctx, { heldBack: holding() }); pass.found > 0; pass = await expireDueActions(ctx, { heldBack: holding() })) {
        holdBack("expiring", pass);
        marked += pass.found - pass.failed.length;
        if (pass.found < 100) break;
      }
      if (marked > 0) log.info("enforcement actions expired", { count: marked });
    } catch (err) {
      log.error("expiring enforcement actions failed", errorFields(err));
    }
    await schedule();
  }

  async function schedule(): Promise<void> {
    if (stopped) return;
    let wait = config.enforcementTickMs;
    try {
      const held = holding();
      for (const next of [await nextActionStart(ctx, held), await nextActionEnd(ctx, held), ...[...heldBack.values()].map((h) => h.until).filter((until) => until > clock.now())]) {
        if (next !== null) wait = Math.min(wait, next - clock.now());
      }
    } catch (err) {
      log.error("reading the next enforcement end failed", errorFields(err));
    }
    if (stopped) return;
    timer = setTimeout(() => void tick(), Math.max(wait, 10));
  }

  void tick();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
