import { z } from "zod";
import { deliveryDetail, listDeliveries, replayDelivery } from "../../domain/webhooks/delivery.ts";
import { checkWebhookUrl, createEndpoint, deleteEndpoint, listEndpoints, requireEndpoint, rotateSecret, toEndpointView, updateEndpoint } from "../../domain/webhooks/endpoints.ts";
import { EVENT_TYPES } from "../../domain/webhooks/outbox.ts";
import { isoDateTime, limitSchema, okSchema } from "../schemas.ts";
import { organizationFor, router, secretProcedure } from "../trpc.ts";

const tags = ["webhooks"];
const id = z.string().min(1).max(64);
const orgSlug = z.string().min(1).max(64);

const endpointSchema = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  eventTypes: z.array(z.enum(EVENT_TYPES)),
  enabled: z.boolean(),
  disabledReason: z.string().nullable(),
  disabledAt: isoDateTime.nullable(),
  failingSince: isoDateTime.nullable(),
  secretHint: z.string(),
  createdAt: isoDateTime,
  updatedAt: isoDateTime,
});

const deliverySchema = z.object({
  id: z.string(),
  endpointId: z.string(),
  eventType: z.string(),
  status: z.enum(["pending", "delivered", "failed"]),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastLatencyMs: z.number().int().nullable(),
  lastError: z.string().nullable(),
  createdAt: isoDateTime,
  deliveredAt: isoDateTime.nullable(),
});

const attemptSchema = z.object({
  id: z.string(),
  attemptedAt: isoDateTime,
  statusCode: z.number().int().nullable(),
  latencyMs: z.number().int(),
  error: z.string().nullable(),
});

const urlText = z.string().trim().min(1).max(2048);
const descriptionText = z.string().max(500).nullable();
/** Empty or omitted: every event. */
const eventTypes = z.array(z.enum(EVENT_TYPES)).max(EVENT_TYPES.length * 2);
const endpointPath = "/organizations/{orgSlug}/webhook-endpoints";

/**
 * Webhook endpoints and their delivery log. Changing where data leaves the installation is an
 * administrator's business: every mutation needs the admin role (secret keys act as admins).
 */
export const webhooksRouter = router({
  list: secretProcedure
    .meta({ family: "org", openapi: { method: "GET", path: endpointPath, summary: "List webhook endpoints", tags } })
    .input(z.object({ orgSlug }))
    .output(z.object({ endpoints: z.array(endpointSchema), eventTypes: z.array(z.enum(EVENT_TYPES)) }))
    .query(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      return { endpoints: await listEndpoints(ctx.domain), eventTypes: [...EVENT_TYPES] };
    }),

  create: secretProcedure
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
        errorResponses: { 503: "The URL's host name could not be resolved now (DNS did not answer): try again" },
      },
    })
    .input(z.object({ orgSlug, url: urlText, description: descriptionText.optional(), eventTypes: eventTypes.optional(), enabled: z.boolean().optional() }))
    .output(z.object({ endpoint: endpointSchema, secret: z.string() }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      // DNS is asked before any transaction opens.
      const url = await checkWebhookUrl(input.url, ctx.config.scanAllowPrivate);
      return createEndpoint(ctx.domain, { ...input, url });
    }),

  get: secretProcedure
    .meta({ family: "org", openapi: { method: "GET", path: `${endpointPath}/{endpointId}`, summary: "Get a webhook endpoint", tags } })
    .input(z.object({ orgSlug, endpointId: id }))
    .output(z.object({ endpoint: endpointSchema }))
    .query(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      return { endpoint: toEndpointView(await requireEndpoint(ctx.domain, input.endpointId)) };
    }),

  update: secretProcedure
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
    .input(z.object({ orgSlug, endpointId: id, url: urlText.optional(), description: descriptionText.optional(), eventTypes: eventTypes.optional(), enabled: z.boolean().optional() }))
    .output(z.object({ endpoint: endpointSchema }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      await requireEndpoint(ctx.domain, input.endpointId);
      const url = input.url === undefined ? undefined : await checkWebhookUrl(input.url, ctx.config.scanAllowPrivate);
      const { description, eventTypes: types, enabled } = input;
      return { endpoint: await updateEndpoint(ctx.domain, { endpointId: input.endpointId, patch: { url, description, eventTypes: types, enabled } }) };
    }),

  delete: secretProcedure
    .meta({ role: "admin", family: "org", openapi: { method: "DELETE", path: `${endpointPath}/{endpointId}`, summary: "Delete a webhook endpoint and its delivery log", tags } })
    .input(z.object({ orgSlug, endpointId: id }))
    .output(okSchema)
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      await deleteEndpoint(ctx.domain, { endpointId: input.endpointId });
      return { ok: true as const };
    }),

  rotateSecret: secretProcedure
    .meta({
      role: "admin",
      family: "org",
      openapi: { method: "POST", path: `${endpointPath}/{endpointId}/rotate-secret`, summary: "Replace an endpoint's signing secret (shown once)", tags },
    })
    .input(z.object({ orgSlug, endpointId: id }))
    .output(z.object({ endpoint: endpointSchema, secret: z.string() }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      return rotateSecret(ctx.domain, { endpointId: input.endpointId });
    }),

  deliveries: secretProcedure
    .meta({
      family: "org",
      openapi: { method: "GET", path: `${endpointPath}/{endpointId}/deliveries`, summary: "An endpoint's delivery log, newest first", tags },
    })
    .input(z.object({ orgSlug, endpointId: id, status: z.enum(["pending", "delivered", "failed"]).optional(), cursor: z.string().max(64).optional(), limit: limitSchema(50) }))
    .output(z.object({ deliveries: z.array(deliverySchema), nextCursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      return listDeliveries(ctx.domain, input);
    }),

  delivery: secretProcedure
    .meta({
      family: "org",
      openapi: { method: "GET", path: "/organizations/{orgSlug}/webhook-deliveries/{deliveryId}", summary: "A delivery, its payload and every attempt", tags },
    })
    .input(z.object({ orgSlug, deliveryId: id }))
    .output(z.object({ delivery: deliverySchema, payload: z.unknown(), attempts: z.array(attemptSchema) }))
    .query(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      return deliveryDetail(ctx.domain, input.deliveryId);
    }),

  replay: secretProcedure
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
    .input(z.object({ orgSlug, deliveryId: id }))
    .output(z.object({ delivery: deliverySchema }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      return { delivery: await replayDelivery(ctx.domain, { deliveryId: input.deliveryId }) };
    }),
});
