import { z } from "zod";
import { deliveryDetail, listDeliveries, replayDelivery } from "../../domain/webhooks/delivery.ts";
import { addEndpoint, changeEndpoint, deleteEndpoint, endpointView, listEndpoints, rotateSecret } from "../../domain/webhooks/endpoints.ts";
import { attemptViewSchema, DELIVERY_STATUSES, deliveryViewSchema, endpointViewSchema, EVENT_TYPES, UNFILTERED_MEANS } from "../../domain/views/webhook.ts";
import { limitSchema, okSchema } from "../schemas.ts";
import { orgProcedure, router } from "../trpc.ts";

const tags = ["webhooks"];
const id = z.string().min(1).max(64);
const orgSlug = z.string().min(1).max(64);

const urlText = z.string().trim().min(1).max(2048);
const descriptionText = z.string().max(500).nullable();
/** Empty or omitted: the enforcement action events only (UNFILTERED_EVENT_TYPES); report.decided when listed. */
const eventTypes = z
  .array(z.enum(EVENT_TYPES))
  .max(EVENT_TYPES.length * 2)
  .meta({ description: `The event types to deliver. Empty or omitted: ${UNFILTERED_MEANS}.` });
const endpointPath = "/organizations/{orgSlug}/webhook-endpoints";

/**
 * Webhook endpoints and their delivery log. Changing where data leaves the installation is an
 * administrator's business: every mutation needs the admin role (secret keys act as admins).
 */
export const webhooksRouter = router({
  list: orgProcedure(z.object({ orgSlug }))
    .meta({ family: "org", openapi: { method: "GET", path: endpointPath, summary: "List webhook endpoints", tags } })
    .output(z.object({ endpoints: z.array(endpointViewSchema), eventTypes: z.array(z.enum(EVENT_TYPES)) }))
    .query(async ({ ctx }) => ({ endpoints: await listEndpoints(ctx.domain), eventTypes: [...EVENT_TYPES] })),

  create: orgProcedure(z.object({ orgSlug, url: urlText, description: descriptionText.optional(), eventTypes: eventTypes.optional(), enabled: z.boolean().optional() }))
    .meta({
      role: "admin",
      family: "org",
      successStatus: 201,
      openapi: {
        method: "POST",
        path: endpointPath,
        summary: "Add a webhook endpoint",
        description: "Answers the endpoint and its signing secret (`whsec_…`), which is shown this once.",
        tags,
        errorResponses: {
          409: "The organization holds as many webhook endpoints as it may (FLAGSTAFF_MAX_WEBHOOK_ENDPOINTS, default 20; the message names it): delete one first",
          503: "The URL's host name could not be resolved now (DNS did not answer): try again",
        },
      },
    })
    .output(z.object({ endpoint: endpointViewSchema, secret: z.string() }))
    .mutation(({ ctx, input }) => addEndpoint(ctx.domain, { ...input, allowPrivate: ctx.config.scanAllowPrivate })),

  get: orgProcedure(z.object({ orgSlug, endpointId: id }))
    .meta({ family: "org", openapi: { method: "GET", path: `${endpointPath}/{endpointId}`, summary: "Get a webhook endpoint", tags } })
    .output(z.object({ endpoint: endpointViewSchema }))
    .query(async ({ ctx, input }) => ({ endpoint: await endpointView(ctx.domain, input.endpointId) })),

  update: orgProcedure(z.object({ orgSlug, endpointId: id, url: urlText.optional(), description: descriptionText.optional(), eventTypes: eventTypes.optional(), enabled: z.boolean().optional() }))
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "PATCH",
        path: `${endpointPath}/{endpointId}`,
        summary: "Change a webhook endpoint",
        description: "`enabled: true` turns a disabled endpoint on again and clears why it was off.",
        tags,
        errorResponses: { 503: "The URL's host name could not be resolved now (DNS did not answer): try again" },
      },
    })
    .output(z.object({ endpoint: endpointViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const { url, description, eventTypes: types, enabled } = input;
      const patch = { url, description, eventTypes: types, enabled };
      return { endpoint: await changeEndpoint(ctx.domain, { endpointId: input.endpointId, patch, allowPrivate: ctx.config.scanAllowPrivate }) };
    }),

  delete: orgProcedure(z.object({ orgSlug, endpointId: id }))
    .meta({ role: "admin", family: "org", openapi: { method: "DELETE", path: `${endpointPath}/{endpointId}`, summary: "Delete a webhook endpoint and its delivery log", tags } })
    .output(okSchema)
    .mutation(async ({ ctx, input }) => {
      await deleteEndpoint(ctx.domain, { endpointId: input.endpointId });
      return { ok: true as const };
    }),

  rotateSecret: orgProcedure(z.object({ orgSlug, endpointId: id }))
    .meta({
      role: "admin",
      family: "org",
      openapi: { method: "POST", path: `${endpointPath}/{endpointId}/rotate-secret`, summary: "Replace an endpoint's signing secret (shown once)", tags },
    })
    .output(z.object({ endpoint: endpointViewSchema, secret: z.string() }))
    .mutation(({ ctx, input }) => rotateSecret(ctx.domain, { endpointId: input.endpointId })),

  deliveries: orgProcedure(z.object({ orgSlug, endpointId: id, status: z.enum(DELIVERY_STATUSES).optional(), cursor: z.string().max(64).optional(), limit: limitSchema(50) }))
    .meta({
      family: "org",
      openapi: { method: "GET", path: `${endpointPath}/{endpointId}/deliveries`, summary: "An endpoint's delivery log, newest first", tags },
    })
    .output(z.object({ deliveries: z.array(deliveryViewSchema), nextCursor: z.string().nullable() }))
    .query(({ ctx, input }) => listDeliveries(ctx.domain, input)),

  delivery: orgProcedure(z.object({ orgSlug, deliveryId: id }))
    .meta({
      family: "org",
      openapi: { method: "GET", path: "/organizations/{orgSlug}/webhook-deliveries/{deliveryId}", summary: "A delivery, its payload and every attempt", tags },
    })
    .output(z.object({ delivery: deliveryViewSchema, payload: z.unknown(), attempts: z.array(attemptViewSchema) }))
    .query(({ ctx, input }) => deliveryDetail(ctx.domain, input.deliveryId)),

  replay: orgProcedure(z.object({ orgSlug, deliveryId: id }))
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "POST",
        path: "/organizations/{orgSlug}/webhook-deliveries/{deliveryId}/replay",
        summary: "Send a delivered or failed message again (same webhook-id)",
        description: "409 while the delivery is still being attempted, or when its endpoint is disabled.",
        tags,
        errorResponses: { 409: "Still being attempted, or the endpoint is disabled" },
      },
    })
    .output(z.object({ delivery: deliveryViewSchema }))
    .mutation(async ({ ctx, input }) => ({ delivery: await replayDelivery(ctx.domain, { deliveryId: input.deliveryId }) })),
});
