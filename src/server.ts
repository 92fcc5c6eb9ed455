import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { Elysia } from "elysia";
import { clientAddressOf } from "./api/client-address.ts";
import { createContext, type Services } from "./api/context.ts";
import { mountDashboard } from "./api/dashboard-page.ts";
import { installHostGuard } from "./api/host-guard.ts";
import { jsonError } from "./api/http-errors.ts";
import { writesFailing } from "./api/readiness.ts";
import { mountAttachmentRoutes } from "./api/attachment-routes.ts";
import { mountBankFileRoute } from "./api/bank-file-route.ts";
import type { ClientAddress } from "./api/raw-routes.ts";
import { blobStoreFailing } from "./db/blobs.ts";
import { METRICS_CONTENT_TYPE, metricsAuthorized, registerDatabaseGauges, renderMetrics } from "./api/metrics.ts";
import { orgOpenApiDocument, sdkOpenApiDocument } from "./api/openapi.ts";
import { mountRest, ORG_PREFIX, SDK_PREFIX } from "./api/rest.ts";
import { mountOidcRoutes } from "./api/oidc-routes.ts";
import { installRequestLog } from "./api/request-log.ts";
import { appRouter } from "./api/router.ts";
import { refuseBatch } from "./api/trpc-batch.ts";
import { errorFields, log } from "./log.ts";

/**
 * Where the process is in its life (src/commands/serve.ts): `starting` until its workers run,
 * `serving`, then `draining` from SIGTERM on. Only `serving` is ready.
 */
export type Lifecycle = "starting" | "serving" | "draining";

export interface AppOptions {
  /** The process's phase; without it, always serving (an app built for a test). */
  lifecycle?: () => Lifecycle;
}

/** The HTTP face of Flagstaff: health, OpenAPI, tRPC for the dashboard and the REST routes. */
export function createApp(services: Services, opts: AppOptions = {}) {
  // No bound of the server's own: Bun's answers a body past it with a bare 413 (no `{ error }`),
  // and an attachment may be large. Every route that reads a body bounds it itself, answering
  // `{ error }`: the REST adapter (FLAGSTAFF_MAX_BODY_BYTES), tRPC (four times that, below), the
  // attachment uploads (FLAGSTAFF_ATTACHMENT_MAX_BYTES, src/api/attachment-routes.ts); every
  // other route is a GET whose body nothing reads.
  const trpcMaxBytes = services.config.maxBodyBytes * 4;
  const app = new Elysia({ serve: { maxRequestBodySize: Number.MAX_SAFE_INTEGER } });
  // Request id, JSON access log and HTTP metrics for every route (src/api/request-log.ts).
  installRequestLog(app);
  // No answer is to be content-sniffed (JSON read as HTML, for one).
  app.onRequest(({ set }) => {
    set.headers["x-content-type-options"] = "nosniff";
    // Draining: every answer ends its connection, so that a balancer's kept-alive connections
    // are gone by the time the listener closes, rather than cut under a request.
    if (opts.lifecycle?.() === "draining") set.headers.connection = "close";
  });
  // A Host header that is no host answers 400 here, before any route parses request.url.
  installHostGuard(app);

  app.onError(({ code, error }) => {
    if (code === "NOT_FOUND") return jsonError(404, "Not found");
    if (code === "PARSE" || code === "VALIDATION") return jsonError(400, "Malformed request");
    log.error("unhandled error", errorFields(error));
    return jsonError(500, "Internal server error");
  });

  app.get("/healthz", async () => {
    try {
      await withinProbeTime(services.store.ping());
      return Response.json({ status: "ok" });
    } catch (err) {
      log.error("health check failed", errorFields(err));
      return Response.json({ status: "error", error: "database unavailable" }, { status: 503 });
    }
  });

  // Readiness: the process has started and is not shutting down, the database answers and
  // writes go through. Draining lasts FLAGSTAFF_SHUTDOWN_DRAIN_MS while requests are still served.
  app.get("/readyz", async () => {
    const phase = opts.lifecycle?.() ?? "serving";
    if (phase !== "serving") return Response.json({ status: phase }, { status: 503 });
    const failing = (await writesFailing(services.store)) ?? (await blobStoreFailing(services.store.blobs));
    if (failing) return Response.json({ status: "error", error: failing }, { status: 503 });
    try {
      await withinProbeTime(services.store.ping());
      return Response.json({ status: "ready" });
    } catch (err) {
      log.error("readiness check failed", errorFields(err));
      return Response.json({ status: "error", error: "database unavailable" }, { status: 503 });
    }
  });

  registerDatabaseGauges(services, services.store.file);
  app.get("/metrics", async ({ request }) => {
    if (!metricsAuthorized(services.config.metricsToken, request.headers.get("authorization"))) {
      return jsonError(401, "Metrics need `Authorization: Bearer <token>` with the token of FLAGSTAFF_METRICS_TOKEN", { "www-authenticate": 'Bearer realm="metrics"' });
    }
    return new Response(await renderMetrics(), { headers: { "content-type": METRICS_CONTENT_TYPE } });
  });

  app.get(`${SDK_PREFIX}/openapi.json`, () => Response.json(sdkOpenApiDocument()));
  app.get(`${ORG_PREFIX}/openapi.json`, () => Response.json(orgOpenApiDocument()));

  // Who a request comes from: the socket, or behind a trusted proxy its X-Forwarded-For (src/api/client-address.ts).
  const clientAddress = clientAddressOf(services.config.trustedProxies);
  // A wildcard route with body parsing off hands tRPC the untouched request (mount would strip
  // the /trpc prefix from the URL).
  app.all(
    "/trpc/*",
    async ({ request: received, server }) => {
      // Batch limits first: a refused batch runs none of its calls (src/api/trpc-batch.ts).
      const refused = refuseBatch(received, appRouter);
      if (refused) return refused;
      const request = await boundedBody(received, trpcMaxBytes);
      if (request instanceof Response) return request;
      return fetchRequestHandler({
      endpoint: "/trpc",
      req: request,
      router: appRouter,
      createContext: ({ req, resHeaders }) =>
        createContext(services, req, resHeaders, { sessions: true, ip: clientAddress(server?.requestIP(received)?.address ?? null, request.headers.get("x-forwarded-for")) }),
      onError: ({ error }) => {
          if (error.code === "INTERNAL_SERVER_ERROR") log.error("trpc error", errorFields(error.cause ?? error));
        },
      });
    },
    { parse: "none" },
  );

  mountRest(app, services);
  // Attachments' bytes: uploads streamed to the store, downloads out of it (docs/attachments.md).
  const addressOf: ClientAddress = (request, server) => clientAddress(server?.requestIP(request)?.address ?? null, request.headers.get("x-forwarded-for"));
  mountAttachmentRoutes(app, services, addressOf);
  // A bank's file, streamed as it is written (src/api/bank-file-route.ts).
  mountBankFileRoute(app, services, addressOf);
  // Single sign-on's browser routes: to the provider and back (src/api/oidc-routes.ts).
  mountOidcRoutes(app, services);
  // The moderators' dashboard (src/web, split by page and compressed) at `/` and `/assets/…`, with its
  // Content-Security-Policy and other security headers (src/api/dashboard-page.ts).
  mountDashboard(app, { dev: services.config.dev });
  return app;
}

/**
 * A health probe answers within this long: a database cut off by the network (no answer, no
 * error) makes it a 503 rather than a probe the balancer gives up on.
 */
const PROBE_TIMEOUT_MS = 2_000;

function withinProbeTime<T>(work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the database did not answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
  });
  work.catch(() => {});
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * The request with its body read, at most `maxBytes` of it (a 413 in tRPC's shape past that):
 * the server takes bodies as large as an attachment, tRPC reads its own whole.
 */
async function boundedBody(request: Request, maxBytes: number): Promise<Request | Response> {
  if (!request.body) return request;
  const tooLarge = () =>
    Response.json({ error: { message: `Request body is larger than ${maxBytes} bytes`, code: -32600, data: { code: "PAYLOAD_TOO_LARGE", httpStatus: 413 } } }, { status: 413 });
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) return tooLarge();
  if (declared !== null) return request;
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return tooLarge();
    }
    chunks.push(value);
  }
  return new Request(request.url, { method: request.method, headers: request.headers, body: Buffer.concat(chunks) });
}
