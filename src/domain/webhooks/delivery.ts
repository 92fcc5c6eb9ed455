/**
 * Delivering one webhook message: a POST of the stored body with fresh Standard Webhooks
 * headers, through the SSRF-safe pinned fetch, within FLAGSTAFF_WEBHOOK_TIMEOUT_MS. Every
 * attempt is logged (status code, latency, error). Only a 2xx answer delivers; a 410 turns the
 * endpoint off; a failure is retried on the schedule of schedule.ts (a Retry-After on 429/503
 * wins) until the attempts run out; an endpoint that has failed without a break for longer than
 * FLAGSTAFF_WEBHOOK_DISABLE_AFTER_MS is turned off with the reason shown to its owner.
 */
import { and, asc, desc, eq, lt, type SQL } from "drizzle-orm";
import { forUpdate } from "../../db/prepared.ts";
import type { Config } from "../../config.ts";
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from "../../db/schema.ts";
import { RetryLater } from "../core/errors.ts";
import type { JobRow } from "../plumbing/jobs.ts";
import { log } from "../../log.ts";
import { recordAudit, systemActor } from "../core/audit.ts";
import { iso, isoOrNull } from "../core/clock.ts";
import { rowLockedTransaction, type DomainContext } from "../core/context.ts";
import { conflict, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { safeFetch, ScanFailedError, ScanRefusedError } from "../plumbing/safe-fetch.ts";
import type { AttemptView, DeliveryView } from "../views/webhook.ts";
import { requireEndpoint, type EndpointRow } from "./endpoints.ts";
import { enqueueDelivery } from "./outbox.ts";
import { parseRetryAfter, retryDelayMs } from "./schedule.ts";
import { signatureHeaders } from "./signing.ts";
import { requireEveryCase, type AccessContext } from "../access/queue-access.ts";

export const WEBHOOK_USER_AGENT = "Flagstaff-Webhooks/1.0";
/** Bytes of a receiver's answer read at most (a snippet of an error page goes into the log). */
const MAX_ANSWER_BYTES = 4 * 1024;
const SNIPPET_CHARS = 200;

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** A delivery job's context: Flagstaff acting for the delivery's organization, and the configuration. */
export interface DeliveryContext extends DomainContext {
  config: Config;
}

interface AttemptOutcome {
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  retryAfterMs: number | null;
}

/** The organization of a delivery (null when it is gone), for delivery jobs that do not name theirs. */
export async function deliveryOrgId(ctx: Pick<DomainContext, "db">, deliveryId: string): Promise<string | null> {
  const [row] = await ctx.db.select({ orgId: webhookDeliveries.orgId }).from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).limit(1);
  return row?.orgId ?? null;
}

/**
 * The job handler of one delivery of the context's organization. Returns when the message is
 * delivered or has finally failed; throws RetryLater (with the delay of the schedule) when
 * another attempt should follow. The HTTP request runs outside any transaction: the delivery
 * and its endpoint are read first, and the outcome is recorded in a transaction afterwards.
 */
export async function runDeliveryJob(ctx: DeliveryContext, input: { deliveryId: string; job: Pick<JobRow, "attempts" | "maxAttempts"> }): Promise<void> {
  const { config } = ctx;
  const { deliveryId, job } = input;
  const [delivery] = await ctx.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.orgId, ctx.orgId)))
    .limit(1);
  // Gone with its endpoint, or already settled (a stale job after a replay): nothing to send.
  if (!delivery || delivery.status !== "pending") return;
  const [endpoint] = await ctx.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, delivery.endpointId)).limit(1);
  if (!endpoint) return;
  if (endpoint.enabled !== 1) {
    await settle(ctx, delivery.id, "failed", `not sent: the endpoint is disabled (${endpoint.disabledReason ?? "by its owner"})`);
    return;
  }

  const attemptAt = ctx.clock.now();
  const outcome = await attempt(endpoint, delivery, attemptAt, config);
  const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode <= 299;
  const last = job.attempts >= job.maxAttempts;

  const retry = await rowLockedTransaction(ctx, async (): Promise<boolean> => {
    await ctx.db
      .insert(webhookAttempts)
      .values({ id: newId(), deliveryId: delivery.id, attemptedAt: attemptAt, statusCode: outcome.statusCode, latencyMs: outcome.latencyMs, error: outcome.error });
    const counts = { attempts: delivery.attempts + 1, lastStatusCode: outcome.statusCode, lastLatencyMs: outcome.latencyMs, lastError: outcome.error };
    if (ok) {
      await ctx.db.update(webhookDeliveries).set({ ...counts, status: "delivered", deliveredAt: ctx.clock.now() }).where(eq(webhookDeliveries.id, delivery.id));
      if (endpoint.failingSince !== null) await ctx.db.update(webhookEndpoints).set({ failingSince: null }).where(eq(webhookEndpoints.id, endpoint.id));
      return false;
    }
    await ctx.db.update(webhookDeliveries).set(counts).where(eq(webhookDeliveries.id, delivery.id));
    // The endpoint's state may have changed while the request was out: read it again, its row
    // held (two deliveries failing at once on two instances disable it once).
    const [current] = await forUpdate(ctx.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id)));
    if (!current) return false;
    const failingSince = current.failingSince ?? attemptAt;
    if (current.failingSince === null) await ctx.db.update(webhookEndpoints).set({ failingSince }).where(eq(webhookEndpoints.id, endpoint.id));

    let disableReason: string | null = null;
    if (outcome.statusCode === 410) {
      disableReason = `The endpoint answered 410 Gone on ${iso(attemptAt)}: it asked for no more webhooks`;
    } else if (attemptAt - failingSince >= config.webhooks.disableAfterMs) {
      disableReason = `Deliveries have failed without a break since ${iso(failingSince)} (longer than ${describeDuration(config.webhooks.disableAfterMs)}); last error: ${outcome.error ?? "unknown"}`;
    }
    if (disableReason !== null && current.enabled === 1) await disableEndpoint(ctx, current, disableReason);
    if (disableReason !== null || last) {
      await ctx.db.update(webhookDeliveries).set({ status: "failed" }).where(eq(webhookDeliveries.id, delivery.id));
      return false;
    }
    return true;
  });
  if (!retry) {
    if (!ok) log.warn("webhook delivery failed for good", { deliveryId, endpointId: endpoint.id, error: outcome.error });
    return;
  }
  const delay = outcome.retryAfterMs ?? retryDelayMs(job.attempts, config.webhooks.retryScale) ?? 0;
  throw new RetryLater(outcome.error ?? "delivery failed", delay);
}

async function attempt(endpoint: EndpointRow, delivery: DeliveryRow, attemptAt: number, config: Config): Promise<AttemptOutcome> {
  const headers = {
    "Content-Type": "application/json",
    Accept: "*/*",
    ...signatureHeaders(endpoint.secret, delivery.id, attemptAt, delivery.payload),
  };
  const started = performance.now();
  const latency = () => Math.max(0, Math.round(performance.now() - started));
  try {
    const answer = await safeFetch(endpoint.url, {
      request: { method: "POST", headers, body: delivery.payload },
      anyStatus: true,
      timeoutMs: config.webhooks.timeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
      allowPrivate: config.scanAllowPrivate,
      userAgent: WEBHOOK_USER_AGENT,
    });
    const latencyMs = latency();
    const status = answer.status;
    if (status >= 200 && status <= 299) return { statusCode: status, latencyMs, error: null, retryAfterMs: null };
    // Control characters (NUL among them, which PostgreSQL cannot store) become spaces too.
    // eslint-disable-next-line no-control-regex
    const snippet = new TextDecoder().decode(answer.body).replace(/[\s\u0000-\u001f\u007f]+/g, " ").trim().slice(0, SNIPPET_CHARS);
    const kind = status >= 300 && status <= 399 ? " (redirects are not followed: update the URL)" : "";
    const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(answer.headers.get("retry-after"), Date.now()) : null;
    return { statusCode: status, latencyMs, error: `HTTP ${status}${kind}${snippet ? `: ${snippet}` : ""}`, retryAfterMs };
  } catch (err) {
    const latencyMs = latency();
    if (err instanceof ScanRefusedError) return { statusCode: null, latencyMs, error: `refused: ${err.reason}`, retryAfterMs: null };
    if (err instanceof ScanFailedError) return { statusCode: null, latencyMs, error: `${err.kind}: ${err.reason}`, retryAfterMs: null };
    return { statusCode: null, latencyMs, error: err instanceof Error ? err.message : String(err), retryAfterMs: null };
  }
}

function settle(ctx: DomainContext, deliveryId: string, status: "failed", error: string): Promise<void> {
  return rowLockedTransaction(ctx, async () => {
    await ctx.db.update(webhookDeliveries).set({ status, lastError: error }).where(eq(webhookDeliveries.id, deliveryId));
  });
}

/** Turns an endpoint off, as Flagstaff itself; inside the transaction that recorded the attempt. */
async function disableEndpoint(ctx: DomainContext, endpoint: EndpointRow, reason: string): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.update(webhookEndpoints).set({ enabled: 0, disabledReason: reason, disabledAt: now, updatedAt: now }).where(eq(webhookEndpoints.id, endpoint.id));
  await recordAudit({ ...ctx, actor: systemActor, orgId: endpoint.orgId }, {
    action: "WEBHOOK_ENDPOINT_DISABLED", entityType: "webhook_endpoint", entityId: endpoint.id,
    before: { enabled: true }, after: { enabled: false }, data: { reason },
  });
  log.warn("webhook endpoint disabled", { endpointId: endpoint.id, reason });
}

function describeDuration(ms: number): string {
  const units: [number, string][] = [[86_400_000, "day"], [3_600_000, "hour"], [60_000, "minute"], [1_000, "second"]];
  for (const [size, name] of units) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${name}${ms / size === 1 ? "" : "s"}`;
  }
  return `${ms} ms`;
}

// ---------------------------------------------------------------------------------------------
// The delivery log and manual replay.

export const toDeliveryView = (d: DeliveryRow): DeliveryView => ({
  id: d.id,
  endpointId: d.endpointId,
  eventType: d.eventType,
  status: d.status,
  attempts: d.attempts,
  lastStatusCode: d.lastStatusCode,
  lastLatencyMs: d.lastLatencyMs,
  lastError: d.lastError,
  createdAt: iso(d.createdAt),
  deliveredAt: isoOrNull(d.deliveredAt),
});

/**
 * An endpoint's deliveries, newest first; `cursor` is the last id of the previous page. Their
 * events are about cases of every queue: only for a caller who may work every queue.
 */
export async function listDeliveries(
  ctx: AccessContext,
  q: { endpointId: string; status?: DeliveryRow["status"]; cursor?: string; limit: number },
): Promise<{ deliveries: DeliveryView[]; nextCursor: string | null }> {
  await requireEndpoint(ctx, q.endpointId);
  await requireEveryCase(ctx);
  const where: SQL[] = [eq(webhookDeliveries.endpointId, q.endpointId)];
  if (q.status) where.push(eq(webhookDeliveries.status, q.status));
  if (q.cursor) where.push(lt(webhookDeliveries.id, q.cursor));
  const rows = await ctx.db.select().from(webhookDeliveries).where(and(...where)).orderBy(desc(webhookDeliveries.id)).limit(q.limit + 1);
  const page = rows.slice(0, q.limit);
  return { deliveries: page.map(toDeliveryView), nextCursor: rows.length > q.limit ? (page.at(-1)?.id ?? null) : null };
}

/** A delivery of the context's organization, or a 404; its payload is about a case of any queue (requireEveryCase). */
export async function requireDelivery(ctx: AccessContext, deliveryId: string): Promise<DeliveryRow> {
  const [row] = await ctx.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.orgId, ctx.orgId)))
    .limit(1);
  if (!row) throw notFound("Webhook delivery not found");
  await requireEveryCase(ctx);
  return row;
}

/** One delivery with the exact body sent and every attempt, oldest first. */
export async function deliveryDetail(
  ctx: AccessContext,
  deliveryId: string,
): Promise<{ delivery: DeliveryView; payload: unknown; attempts: AttemptView[] }> {
  const d = await requireDelivery(ctx, deliveryId);
  const rows = await ctx.db
    .select()
    .from(webhookAttempts)
    .where(eq(webhookAttempts.deliveryId, d.id))
    .orderBy(asc(webhookAttempts.attemptedAt), asc(webhookAttempts.id));
  const attempts = rows.map((a) => ({ id: a.id, attemptedAt: iso(a.attemptedAt), statusCode: a.statusCode, latencyMs: a.latencyMs, error: a.error }));
  return { delivery: toDeliveryView(d), payload: JSON.parse(d.payload), attempts };
}

/**
 * Sends a delivered or failed message again, with the same `webhook-id` (receivers that keep
 * ids drop it as a duplicate unless they want it), through the whole retry schedule.
 */
export function replayDelivery(ctx: DomainContext, input: { deliveryId: string }): Promise<DeliveryView> {
  return rowLockedTransaction(ctx, async () => {
    const d = await requireDelivery(ctx, input.deliveryId);
    if (d.status === "pending") throw conflict("This delivery is still being attempted; replay it once it is delivered or has failed");
    const endpoint = await requireEndpoint(ctx, d.endpointId);
    if (endpoint.enabled !== 1) throw conflict(`The endpoint is disabled (${endpoint.disabledReason ?? "by its owner"}); enable it before replaying`);
    await ctx.db.update(webhookDeliveries).set({ status: "pending" }).where(eq(webhookDeliveries.id, d.id));
    await enqueueDelivery(ctx, { deliveryId: d.id });
    await recordAudit(ctx, {
      action: "WEBHOOK_DELIVERY_REPLAYED", entityType: "webhook_delivery", entityId: d.id,
      before: { status: d.status }, after: { status: "pending" }, data: { endpointId: d.endpointId },
    });
    return toDeliveryView({ ...d, status: "pending" });
  });
}
