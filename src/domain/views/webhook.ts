/** How webhook endpoints, their deliveries and delivery attempts look to clients; the event types. */
import { z } from "zod";
import { isoDateTime } from "./common.ts";

export const EVENT_TYPES = ["enforcement_action.created", "enforcement_action.updated", "enforcement_action.revoked"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const endpointViewSchema = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  /** Empty: every event. */
  eventTypes: z.array(z.enum(EVENT_TYPES)),
  enabled: z.boolean(),
  /** Why Flagstaff (or its owner) turned the endpoint off: a 410 answer, days of failures. */
  disabledReason: z.string().nullable(),
  disabledAt: isoDateTime.nullable(),
  /** Start of the current run of failed attempts; null while deliveries succeed. */
  failingSince: isoDateTime.nullable(),
  secretHint: z.string(),
  createdAt: isoDateTime,
  updatedAt: isoDateTime,
});
export type EndpointView = z.infer<typeof endpointViewSchema>;

export const deliveryViewSchema = z.object({
  /** Also the `webhook-id` header of every attempt. */
  id: z.string(),
  endpointId: z.string(),
  eventType: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastLatencyMs: z.number().int().nullable(),
  lastError: z.string().nullable(),
  createdAt: isoDateTime,
  deliveredAt: isoDateTime.nullable(),
});
export type DeliveryView = z.infer<typeof deliveryViewSchema>;

export const attemptViewSchema = z.object({
  id: z.string(),
  attemptedAt: isoDateTime,
  statusCode: z.number().int().nullable(),
  latencyMs: z.number().int(),
  error: z.string().nullable(),
});
export type AttemptView = z.infer<typeof attemptViewSchema>;
