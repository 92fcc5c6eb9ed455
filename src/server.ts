import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { Elysia } from "elysia";
import { createContext, type Services } from "./api/context.ts";
import { jsonError } from "./api/http-errors.ts";
import { sdkOpenApiDocument } from "./api/openapi.ts";
import { mountRest, SDK_PREFIX } from "./api/rest.ts";
import { appRouter } from "./api/router.ts";
import { errorFields, log } from "./log.ts";
import dashboardPage from "./web/index.html";

/** The HTTP face of Flagstaff: health, OpenAPI, tRPC for the dashboard and the REST routes. */
export function createApp(services: Services) {
  const app = new Elysia({ serve: { maxRequestBodySize: services.config.maxBodyBytes * 4 } });

  app.onError(({ code, error }) => {
    if (code === "NOT_FOUND") return jsonError(404, "Not found");
    if (code === "PARSE" || code === "VALIDATION") return jsonError(400, "Malformed request");
    log.error("unhandled error", errorFields(error));
    return jsonError(500, "Internal server error");
  });

  app.get("/healthz", () => {
    try {
      services.db.$client.query("SELECT 1").get();
      return Response.json({ status: "ok" });
    } catch (err) {
      log.error("health check failed", errorFields(err));
      return Response.json({ status: "error", error: "database unavailable" }, { status: 503 });
    }
  });

  app.get(`${SDK_PREFIX}/openapi.json`, () => Response.json(sdkOpenApiDocument()));

  // A wildcard route with body parsing off hands tRPC the untouched request (mount would strip
  // the /trpc prefix from the URL).
  app.all(
    "/trpc/*",
    ({ request, server }) =>
      fetchRequestHandler({
      endpoint: "/trpc",
      req: request,
      router: appRouter,
      createContext: ({ req, resHeaders }) =>
        createContext(services, req, resHeaders, { sessions: true, ip: server?.requestIP(request)?.address ?? null }),
      onError: ({ error }) => {
          if (error.code === "INTERNAL_SERVER_ERROR") log.error("trpc error", errorFields(error.cause ?? error));
        },
      }),
    { parse: "none" },
  );

  // The moderators' dashboard (src/web): Bun bundles the page, its scripts and CSS, also
  // inside a compiled binary.
  app.get("/", dashboardPage);

  mountRest(app, services);
  return app;
}
