/**
 * Webhook endpoints: where an organization wants its enforcement events delivered. The URL
 * passes the link-scanning SSRF rules when it is saved and its host must resolve (the pinned
 * fetch resolves and judges every address again at each delivery); the `whsec_` secret is
 * shown once, at creation or rotation.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { and, asc, count, eq } from "drizzle-orm";
import { webhookEndpoints } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { iso, isoOrNull } from "../core/clock.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { badRequest, DomainError, notFound } from "../core/errors.ts";
import { requireRoomFor } from "../core/holding-limits.ts";
import { newId } from "../core/ids.ts";
import type { Lookup } from "../plumbing/safe-fetch.ts";
import { bareHostname, checkUrlSyntax, isForbiddenAddress, ScanRefusedError } from "../plumbing/ssrf.ts";
import { parseEventTypes, type EventType } from "./outbox.ts";
import { generateSecret, secretHint } from "./signing.ts";
import type { EndpointView } from "../views/webhook.ts";

export type EndpointRow = typeof webhookEndpoints.$inferSelect;

export const toEndpointView = (e: EndpointRow): EndpointView => ({
  id: e.id,
  url: e.url,
  description: e.description,
  eventTypes: parseEventTypes(e.eventTypes),
  enabled: e.enabled === 1,
  disabledReason: e.disabledReason,
  disabledAt: isoOrNull(e.disabledAt),
  failingSince: isoOrNull(e.failingSince),
  secretHint: secretHint(e.secret),
  createdAt: iso(e.createdAt),
  updatedAt: iso(e.updatedAt),
});

const DNS_CHECK_MS = 3_000;

const systemLookup: Lookup = (host) => lookup(host, { all: true, verbatim: true });

/** DNS answers meaning the name has no address at all (as opposed to DNS failing to answer). */
const NO_SUCH_NAME = new Set(["ENOTFOUND", "ENODATA"]);

/**
 * The addresses a webhook URL's host stands for. A name with no address is a 400: every
 * delivery to it would fail, and its owner would learn so only days later, when the endpoint
 * got disabled. DNS failing to answer (a time-out, a server failure) says nothing about the
 * name: a 503, try again.
 */
async function resolveWebhookHost(host: string, resolveHost: Lookup): Promise<string[]> {
  if (isIP(host) !== 0) return [host];
  let answers: { address: string }[] | "timeout";
  try {
    answers = await Promise.race([
      resolveHost(host),
      Bun.sleep(DNS_CHECK_MS).then(() => "timeout" as const),
    ]);
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code !== "string" || !NO_SUCH_NAME.has(code)) {
      throw new DomainError("unavailable", `url: the host name ${host} could not be resolved now (${typeof code === "string" ? code : "DNS error"}); try again`);
    }
    answers = [];
  }
  if (answers === "timeout") {
    throw new DomainError("unavailable", `url: the host name ${host} could not be resolved: DNS did not answer within ${DNS_CHECK_MS / 1000} s; try again`);
  }
  if (answers.length === 0) throw badRequest(`url: the host name ${host} does not resolve`);
  return answers.map((a) => a.address);
}

/**
 * Refuses (400) a webhook URL that link scanning would refuse: not http(s), credentials, a host
 * name that does not resolve, and — unless FLAGSTAFF_SCAN_ALLOW_PRIVATE — a host that is or
 * resolves to a private, loopback, link-local or otherwise internal address. The delivery
 * resolves and judges the name again, and connects only to the judged address. `resolveHost`
 * is the system resolver except in tests.
 */
export async function checkWebhookUrl(url: string, allowPrivate: boolean, resolveHost: Lookup = systemLookup): Promise<string> {
  let parsed: URL;
  try {
    parsed = checkUrlSyntax(url);
  } catch (err) {
    throw badRequest(`url: ${err instanceof ScanRefusedError ? err.reason : "not a valid URL"}`);
  }
  const host = bareHostname(parsed);
  const addresses = await resolveWebhookHost(host, resolveHost);
  if (allowPrivate) return parsed.href;
  for (const address of addresses) {
    const reason = isForbiddenAddress(address);
    if (reason !== null) {
      const via = address === host ? "" : `${host} resolves to ${address}, `;
      throw badRequest(`url: webhooks are not sent to ${via}${reason}`);
    }
  }
  return parsed.href;
}

/** An endpoint of the context's organization, or a 404. */
export async function requireEndpoint(ctx: Pick<DomainContext, "db" | "orgId">, endpointId: string): Promise<EndpointRow> {
  const [row] = await ctx.db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.orgId, ctx.orgId)))
    .limit(1);
  if (!row) throw notFound("Webhook endpoint not found");
  return row;
}

export async function listEndpoints(ctx: Pick<DomainContext, "db" | "orgId">): Promise<EndpointView[]> {
  const rows = await ctx.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.orgId, ctx.orgId)).orderBy(asc(webhookEndpoints.id));
  return rows.map(toEndpointView);
}

export interface EndpointInput {
  /** Already checked with checkWebhookUrl. */
  url: string;
  description?: string | null;
  eventTypes?: EventType[];
  enabled?: boolean;
}

const uniqueTypes = (types: EventType[] | undefined): EventType[] => [...new Set(types ?? [])];

/** A new endpoint and its secret, which is returned this once. */
export async function createEndpoint(ctx: DomainContext, input: EndpointInput): Promise<{ endpoint: EndpointView; secret: string }> {
  const now = ctx.clock.now();
  const row: EndpointRow = {
    id: newId(),
    orgId: ctx.orgId,
    url: input.url,
    secret: generateSecret(),
    description: input.description ?? null,
    eventTypes: JSON.stringify(uniqueTypes(input.eventTypes)),
    enabled: input.enabled === false ? 0 : 1,
    disabledReason: null,
    disabledAt: input.enabled === false ? now : null,
    failingSince: null,
    createdAt: now,
    updatedAt: now,
  };
  await transaction(ctx, async () => {
    const [held] = await ctx.db.select({ n: count() }).from(webhookEndpoints).where(eq(webhookEndpoints.orgId, ctx.orgId));
    requireRoomFor(ctx, "webhookEndpoints", Number(held?.n ?? 0));
    await ctx.db.insert(webhookEndpoints).values(row);
    await recordAudit(ctx, {
      action: "WEBHOOK_ENDPOINT_CREATED", entityType: "webhook_endpoint", entityId: row.id,
      after: { url: row.url, eventTypes: uniqueTypes(input.eventTypes), enabled: row.enabled === 1 },
    });
  });
  return { endpoint: toEndpointView(row), secret: row.secret };
}

/**
 * Changes an endpoint. Turning it on again clears why it was off and its failure run, so the
 * days-of-failures rule starts afresh.
 */
export function updateEndpoint(ctx: DomainContext, input: { endpointId: string; patch: Partial<EndpointInput> }): Promise<EndpointView> {
  const { endpointId, patch } = input;
  return transaction(ctx, async () => {
    const before = await requireEndpoint(ctx, endpointId);
    const now = ctx.clock.now();
    const set: Partial<EndpointRow> = { updatedAt: now };
    if (patch.url !== undefined) set.url = patch.url;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.eventTypes !== undefined) set.eventTypes = JSON.stringify(uniqueTypes(patch.eventTypes));
    if (patch.enabled === true && before.enabled === 0) Object.assign(set, { enabled: 1, disabledReason: null, disabledAt: null, failingSince: null });
    if (patch.enabled === false && before.enabled === 1) Object.assign(set, { enabled: 0, disabledReason: "Disabled by its owner", disabledAt: now });
    await ctx.db.update(webhookEndpoints).set(set).where(eq(webhookEndpoints.id, endpointId));
    const after = { ...before, ...set };
    await recordAudit(ctx, {
      action: "WEBHOOK_ENDPOINT_UPDATED", entityType: "webhook_endpoint", entityId: endpointId,
      before: auditFields(before), after: auditFields(after),
    });
    return toEndpointView(after);
  });
}

const auditFields = (e: EndpointRow) => ({ url: e.url, description: e.description, eventTypes: parseEventTypes(e.eventTypes), enabled: e.enabled === 1 });

/** Deletes an endpoint with its delivery log (pending deliveries are dropped). */
export function deleteEndpoint(ctx: DomainContext, input: { endpointId: string }): Promise<void> {
  const { endpointId } = input;
  return transaction(ctx, async () => {
    const before = await requireEndpoint(ctx, endpointId);
    await ctx.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, endpointId));
    await recordAudit(ctx, {
      action: "WEBHOOK_ENDPOINT_DELETED", entityType: "webhook_endpoint", entityId: endpointId, before: auditFields(before),
    });
  });
}

/** A new secret, shown once; attempts from now on are signed with it. */
export function rotateSecret(ctx: DomainContext, input: { endpointId: string }): Promise<{ endpoint: EndpointView; secret: string }> {
  const { endpointId } = input;
  return transaction(ctx, async () => {
    const before = await requireEndpoint(ctx, endpointId);
    const secret = generateSecret();
    const now = ctx.clock.now();
    await ctx.db.update(webhookEndpoints).set({ secret, updatedAt: now }).where(eq(webhookEndpoints.id, endpointId));
    await recordAudit(ctx, { action: "WEBHOOK_SECRET_ROTATED", entityType: "webhook_endpoint", entityId: endpointId });
    return { endpoint: toEndpointView({ ...before, secret, updatedAt: now }), secret };
  });
}

// ---------------------------------------------------------------------------------------------
// What the organization routes call: the URL is checked before anything is written.

/** An endpoint of the context's organization as clients see it, or a 404. */
export async function endpointView(ctx: Pick<DomainContext, "db" | "orgId">, endpointId: string): Promise<EndpointView> {
  return toEndpointView(await requireEndpoint(ctx, endpointId));
}

/**
 * A new endpoint at a URL checked first (checkWebhookUrl: `allowPrivate` is the installation's
 * FLAGSTAFF_SCAN_ALLOW_PRIVATE); DNS is asked before any transaction opens.
 */
export async function addEndpoint(ctx: DomainContext, input: EndpointInput & { allowPrivate: boolean }): Promise<{ endpoint: EndpointView; secret: string }> {
  const url = await checkWebhookUrl(input.url, input.allowPrivate);
  return createEndpoint(ctx, { url, description: input.description, eventTypes: input.eventTypes, enabled: input.enabled });
}

/**
 * Changes an endpoint (updateEndpoint): a missing one is a 404 before a new URL is checked
 * (checkWebhookUrl, outside any transaction).
 */
export async function changeEndpoint(
  ctx: DomainContext,
  input: { endpointId: string; patch: Partial<EndpointInput>; allowPrivate: boolean },
): Promise<EndpointView> {
  await requireEndpoint(ctx, input.endpointId);
  const { url, ...patch } = input.patch;
  const checked = url === undefined ? undefined : await checkWebhookUrl(url, input.allowPrivate);
  return updateEndpoint(ctx, { endpointId: input.endpointId, patch: { ...patch, url: checked } });
}
