/**
 * Background work of enforcement: webhook deliveries (a job per delivery on the durable queue)
 * and the scheduler that ends suspensions and mutes when their end comes.
 */
import { z } from "zod";
import type { Services } from "../api/context.ts";
import { expireDueActions, nextActionEnd } from "../domain/enforcement.ts";
import { runDeliveryJob } from "../domain/webhooks/delivery.ts";
import { DELIVER_JOB } from "../domain/webhooks/outbox.ts";
import { errorFields, log } from "../log.ts";
import type { JobHandler } from "./worker.ts";

const deliveryPayload = z.object({ deliveryId: z.string() });

export function enforcementJobHandlers(services: Services): Record<string, JobHandler> {
  return {
    [DELIVER_JOB]: async (payload, job) => {
      await runDeliveryJob(services, deliveryPayload.parse(payload).deliveryId, job);
    },
  };
}

export interface ExpiryScheduler {
  stop(): void;
}

/**
 * Every FLAGSTAFF_ENFORCEMENT_TICK_MS at the latest — and exactly at the next known end —
 * marks the actions whose end has come as expired and announces them (the outbox rows are
 * written in the same transaction). Nothing is lost across restarts: the first run after start
 * catches up on every end that passed while the server was down.
 */
export function startExpiryScheduler(services: Services): ExpiryScheduler {
  const { db, clock, config } = services;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;

  function tick(): void {
    timer = null;
    if (stopped) return;
    try {
      let marked = 0;
      for (let n = expireDueActions(db, clock); n > 0; n = expireDueActions(db, clock)) {
        marked += n;
        if (n < 100) break;
      }
      if (marked > 0) {
        log.info("enforcement actions expired", { count: marked });
        services.jobs.wake();
      }
    } catch (err) {
      log.error("expiring enforcement actions failed", errorFields(err));
    }
    schedule();
  }

  function schedule(): void {
    if (stopped) return;
    let wait = config.enforcementTickMs;
    try {
      const next = nextActionEnd(db);
      if (next !== null) wait = Math.min(wait, next - clock.now());
    } catch (err) {
      log.error("reading the next enforcement end failed", errorFields(err));
    }
    timer = setTimeout(tick, Math.max(wait, 10));
  }

  tick();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
