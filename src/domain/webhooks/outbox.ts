/**
 * The webhook outbox. An event is written as one `webhook_deliveries` row per enabled endpoint
 * of the organization that wants it, plus one job per row, inside the transaction of the change
 * it announces: the message exists exactly when the change does, and the durable job queue
 * delivers it even when the process dies right after the commit.
 */
import { and, eq } from "drizzle-orm";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema.ts";
import { slicer } from "../plumbing/event-loop.ts";
import { enqueueJob, enqueueJobs } from "../plumbing/jobs.ts";
import { JOB_KIND } from "../views/job.ts";
import { iso } from "../core/clock.ts";
import { together, type DomainContext } from "../core/context.ts";
import { param, statements } from "../../db/prepared.ts";
import { EVENT_TYPES, wantsEvent, type EventType } from "../views/webhook.ts";
import { MAX_DELIVERY_ATTEMPTS } from "./schedule.ts";

// The event types are a vocabulary clients and the dashboard see (src/domain/views/webhook.ts),
// with the rule of which an endpoint gets (wantsEvent: without a filter, not report.decided).
export { EVENT_TYPES, type EventType } from "../views/webhook.ts";

/** `msg_` + a UUIDv7 without dashes: the `webhook-id`, with no `.` (the signed content is dot-delimited). */
export const newMessageId = (): string => `msg_${Bun.randomUUIDv7().replaceAll("-", "")}`;

/** The stored event types of an endpoint: an empty list means UNFILTERED_EVENT_TYPES (wantsEvent). */
export function parseEventTypes(text: string): EventType[] {
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? (value.filter((v) => (EVENT_TYPES as readonly unknown[]).includes(v)) as EventType[]) : [];
}

/** The body sent for an event: `{ type, timestamp, data }` (Standard Webhooks payload structure). */
export function eventBody(type: EventType, occurredAt: number, data: unknown): string {
  return JSON.stringify({ type, timestamp: iso(occurredAt), data });
}

/** What the outbox writes with: the organization's data, in the change's transaction. */
type OutboxContext = Pick<DomainContext, "store" | "db" | "clock" | "orgId">;

/** The enabled endpoints of the context's organization that want an event of `type`. */
async function endpointsWanting(ctx: Pick<DomainContext, "db" | "orgId">, type: EventType): Promise<{ id: string }[]> {
  return (
    await ctx.db
      .select({ id: webhookEndpoints.id, eventTypes: webhookEndpoints.eventTypes })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.orgId, ctx.orgId), eq(webhookEndpoints.enabled, 1)))
  ).filter((e) => wantsEvent(parseEventTypes(e.eventTypes), type));
}

/** Whether any enabled endpoint of the organization wants events of `type` (to skip building a payload no one gets). */
export async function isWanted(ctx: Pick<DomainContext, "db" | "orgId">, type: EventType): Promise<boolean> {
  return (await endpointsWanting(ctx, type)).length > 0;
}

/**
 * Writes the deliveries of one event of the context's organization and their jobs. Call inside
 * the transaction of the change; `now` is the change's time (the event's timestamp, default now).
 * Returns the delivery ids (one per endpoint that wants the event).
 */
export function enqueueWebhookEvent(ctx: OutboxContext, input: { type: EventType; data: unknown; now?: number }): Promise<string[]> {
  return enqueueWebhookEvents(ctx, { type: input.type, events: [{ data: input.data, now: input.now ?? ctx.clock.now() }] });
}

/** Deliveries (and their jobs) written together (one round trip on PostgreSQL) before the slice is looked at. */
const DELIVERIES_PER_BATCH = 500;

type DeliveryInsert = Pick<typeof webhookDeliveries.$inferInsert, "id" | "orgId" | "endpointId" | "eventType" | "payload" | "status" | "attempts" | "createdAt">;

/**
 * A delivery's INSERT, kept prepared (src/db/prepared.ts): a decision on a pile-on writes tens of
 * thousands, and building each (or one of many rows) with Drizzle cost about 15 µs a row on
 * SQLite, running the prepared one about 3.
 */
const outboxStatements = statements((db) => {
  const columns: (keyof DeliveryInsert)[] = ["id", "orgId", "endpointId", "eventType", "payload", "status", "attempts", "createdAt"];
  return { delivery: db.insert(webhookDeliveries).values(Object.fromEntries(columns.map((c) => [c, param(c)])) as unknown as DeliveryInsert).prepare() };
});

/**
 * Writes the deliveries of events of one type (each `{ data, now }`, in order) as
 * enqueueWebhookEvent does, the wanting endpoints read once and the rows written
 * DELIVERIES_PER_BATCH to a statement, the event loop given back between two once a slice has
 * run (plumbing/event-loop.ts): a decision on a case of 40,000 reports announces 40,000
 * `report.decided` events to each endpoint that wants them, in its transaction. Returns the
 * delivery ids, event by event.
 */
export async function enqueueWebhookEvents(ctx: OutboxContext, input: { type: EventType; events: readonly { data: unknown; now: number }[] }): Promise<string[]> {
  const { type } = input;
  const endpoints = input.events.length ? await endpointsWanting(ctx, type) : [];
  if (endpoints.length === 0) return [];
  const slices = slicer();
  const insert = outboxStatements(ctx.db).delivery;
  const ids: string[] = [];
  let rows: DeliveryInsert[] = [];
  const flush = async () => {
    await together(...rows.map((row) => insert.execute(row)));
    await enqueueJobs(ctx, JOB_KIND.webhookDelivery, rows.map((r) => deliveryJob(ctx, r.id)));
    rows = [];
    if (slices.due()) await slices.breathe();
  };
  for (const event of input.events) {
    const body = eventBody(type, event.now, event.data);
    for (const endpoint of endpoints) {
      const id = newMessageId();
      rows.push({ id, orgId: ctx.orgId, endpointId: endpoint.id, eventType: type, payload: body, status: "pending", attempts: 0, createdAt: event.now });
      ids.push(id);
      if (rows.length === DELIVERIES_PER_BATCH) await flush();
    }
  }
  if (rows.length) await flush();
  return ids;
}

/** The job of one delivery: it delivers (or re-delivers) through the retry schedule. */
const deliveryJob = (ctx: Pick<OutboxContext, "orgId">, deliveryId: string) => ({ orgId: ctx.orgId, payload: { deliveryId }, maxAttempts: MAX_DELIVERY_ATTEMPTS });

/** One job that delivers (or re-delivers) a delivery through the retry schedule. Call inside a transaction. */
export async function enqueueDelivery(ctx: OutboxContext, input: { deliveryId: string }): Promise<void> {
  await enqueueJob(ctx, { ...deliveryJob(ctx, input.deliveryId), kind: JOB_KIND.webhookDelivery });
}
