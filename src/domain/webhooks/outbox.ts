/**
 * The webhook outbox. An event is written as one `webhook_deliveries` row per enabled endpoint
 * of the organization that wants it, plus one job per row, inside the transaction of the change
 * it announces: the message exists exactly when the change does, and the durable job queue
 * delivers it even when the process dies right after the commit.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema.ts";
import { enqueueJob } from "../../jobs/queue.ts";
import { iso } from "../clock.ts";
import { MAX_DELIVERY_ATTEMPTS } from "./schedule.ts";

export const EVENT_TYPES = ["enforcement_action.created", "enforcement_action.updated", "enforcement_action.revoked"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Job kind of one delivery (payload `{ deliveryId }`). */
export const DELIVER_JOB = "webhook.deliver";

/** `msg_` + a UUIDv7 without dashes: the `webhook-id`, with no `.` (the signed content is dot-delimited). */
export const newMessageId = (): string => `msg_${Bun.randomUUIDv7().replaceAll("-", "")}`;

/** The stored event types of an endpoint: an empty list means every event. */
export function parseEventTypes(text: string): EventType[] {
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? (value.filter((v) => (EVENT_TYPES as readonly unknown[]).includes(v)) as EventType[]) : [];
}

export const wantsEvent = (filter: EventType[], type: EventType): boolean => filter.length === 0 || filter.includes(type);

/** The body sent for an event: `{ type, timestamp, data }` (Standard Webhooks payload structure). */
export function eventBody(type: EventType, occurredAt: number, data: unknown): string {
  return JSON.stringify({ type, timestamp: iso(occurredAt), data });
}

/**
 * Writes the deliveries of one event and their jobs. Call inside the transaction of the change.
 * Returns the delivery ids (one per endpoint that wants the event).
 */
export function enqueueWebhookEvent(db: Db, now: number, orgId: string, type: EventType, data: unknown): string[] {
  const endpoints = db
    .select({ id: webhookEndpoints.id, eventTypes: webhookEndpoints.eventTypes })
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.orgId, orgId), eq(webhookEndpoints.enabled, 1)))
    .all()
    .filter((e) => wantsEvent(parseEventTypes(e.eventTypes), type));
  if (endpoints.length === 0) return [];
  const body = eventBody(type, now, data);
  const ids: string[] = [];
  for (const endpoint of endpoints) {
    const id = newMessageId();
    db.insert(webhookDeliveries)
      .values({ id, orgId, endpointId: endpoint.id, eventType: type, payload: body, status: "pending", attempts: 0, createdAt: now })
      .run();
    enqueueDelivery(db, now, orgId, id);
    ids.push(id);
  }
  return ids;
}

/** One job that delivers (or re-delivers) a delivery through the retry schedule. */
export function enqueueDelivery(db: Db, now: number, orgId: string, deliveryId: string): void {
  enqueueJob(db, now, { orgId, kind: DELIVER_JOB, payload: { deliveryId }, maxAttempts: MAX_DELIVERY_ATTEMPTS });
}
