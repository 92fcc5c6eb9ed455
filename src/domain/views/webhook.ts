/** How webhook endpoints, their deliveries and delivery attempts look to clients; the event types. */
import { z } from "zod";
import { isoDateTime } from "./common.ts";
import { OUTCOMES } from "./report.ts";

export const EVENT_TYPES = [
  "enforcement_action.created",
  "enforcement_action.updated",
  "enforcement_action.revoked",
  "report.decided",
  "queue.sla_breached",
  "audit.checkpoint",
  "media.matched",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Each event type by the name code writes (`EVENT_TYPE.reportDecided`): no event type is spelt
 * outside this module (test/architecture.test.ts).
 */
export const EVENT_TYPE = {
  actionCreated: "enforcement_action.created",
  actionUpdated: "enforcement_action.updated",
  actionRevoked: "enforcement_action.revoked",
  reportDecided: "report.decided",
  slaBreached: "queue.sla_breached",
  auditCheckpoint: "audit.checkpoint",
  mediaMatched: "media.matched",
} as const satisfies Record<string, EventType>;
type Nothing<T extends never> = T;
/** Every event type has its name in EVENT_TYPE: one added to EVENT_TYPES without it fails to compile here. */
export type UnnamedEventType = Nothing<Exclude<EventType, (typeof EVENT_TYPE)[keyof typeof EVENT_TYPE]>>;

/** What Flagstaff knows about one event type besides its name. */
export interface EventTypeSpec {
  /**
   * Whether an endpoint without a filter (`eventTypes` empty) gets it: the enforcement action
   * events, the ones the interface specification announces. Every other type (`report.decided`)
   * goes only to endpoints that list it by name: the specification says the SDK report
   * operations emit no event, and a receiver written to it refuses a type it does not know (and
   * is retried).
   */
  unfiltered: boolean;
}

/** Every event type with what goes with it, in one record the compiler keeps whole. */
export const EVENT_TYPE_SPECS = {
  "enforcement_action.created": { unfiltered: true },
  "enforcement_action.updated": { unfiltered: true },
  "enforcement_action.revoked": { unfiltered: true },
  "report.decided": { unfiltered: false },
  // A service-level breach (src/domain/service-levels/service-levels.ts): an addition the specification
  // does not announce, so only for endpoints that ask for it.
  "queue.sla_breached": { unfiltered: false },
  // A signed checkpoint of the organization's audit chain (docs/audit.md): for a receiver that
  // keeps them out of Flagstaff's reach (the point of publishing them), so only when listed.
  "audit.checkpoint": { unfiltered: false },
  // A case's media matched a bank of known harmful media (src/domain/banks/matching.ts): an
  // addition the specification does not announce, so only for endpoints that ask for it.
  "media.matched": { unfiltered: false },
} as const satisfies { readonly [E in EventType]: EventTypeSpec };

/** What an endpoint without a filter gets (EventTypeSpec.unfiltered). */
export const UNFILTERED_EVENT_TYPES: readonly EventType[] = EVENT_TYPES.filter((t) => EVENT_TYPE_SPECS[t].unfiltered);
/** The types an endpoint gets only when it lists them. */
const LISTED_ONLY: readonly EventType[] = EVENT_TYPES.filter((t) => !EVENT_TYPE_SPECS[t].unfiltered);

/** Whether an endpoint with this filter gets events of `type` (the filter rule, one place). */
export const wantsEvent = (filter: readonly EventType[], type: EventType): boolean => (filter.length === 0 ? EVENT_TYPE_SPECS[type].unfiltered : filter.includes(type));

/** How an endpoint's filter reads to people (the dashboard and the docs say the same). */
export const UNFILTERED_MEANS = `the enforcement_action events (${LISTED_ONLY.join(", ")} only when listed)`;

/**
 * The `data` of a `report.decided` event (docs/enforcement.md, docs/dsa.md): one per report a
 * decision moved (resolved, dismissed, or closed by the decision on an appeal), so the platform
 * can tell its reporter (DSA Art. 16(5)). `reporter` is null for an anonymous report, `notice`
 * null when the report carried no notifier name or email.
 */
export const reportDecidedEventSchema = z
  .object({
    reportId: z.string(),
    projectId: z.string(),
    caseId: z.string(),
    reporter: z.object({ type: z.string(), externalId: z.string() }).nullable(),
    notice: z.object({ notifierName: z.string().nullable(), notifierEmail: z.string().nullable() }).nullable(),
    outcome: z.enum(OUTCOMES),
    /** The resolution code (resolved; closed: the decision's code) or the dismissal reason (dismissed). */
    code: z.string().nullable(),
    /** Closed after an appeal: whether the decision was upheld or overturned; else null. */
    appeal: z.enum(["upheld", "overturned"]).nullable(),
    /** The public outcome text: the project's decision template of that kind, else a default sentence. */
    text: z.string(),
    decidedAt: isoDateTime,
  })
  .meta({ id: "ReportDecidedEvent" });
export type ReportDecidedEvent = z.infer<typeof reportDecidedEventSchema>;

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const endpointViewSchema = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  eventTypes: z
    .array(z.enum(EVENT_TYPES))
    .meta({ description: `The event types the endpoint gets. Empty: ${UNFILTERED_MEANS}.` }),
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
