import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";
import { SDK_PREFIX } from "./rest.ts";
import { appRouter } from "./router.ts";

let cached: OpenAPIObject | null = null;

/**
 * The OpenAPI 3.1.0 description of the SDK routes, generated from the same procedure
 * definitions the REST adapter serves (organization routes are left out: they are not SDK).
 */
export function sdkOpenApiDocument(): OpenAPIObject {
  cached ??= generateOpenApiDocument(appRouter, {
    title: "Flagstaff SDK API",
    description: "Moderation reports, identities and report reasons for client platforms.",
    version: "1.0.0",
    openApiVersion: "3.1.0",
    baseUrl: SDK_PREFIX,
    securitySchemes: {
      ApiKey: {
        type: "apiKey",
        in: "header",
        name: "Authorization",
        description:
          "A Flagstaff API key sent as a Bearer token: `Authorization: Bearer sk_live_…` (secret, server-side) or `Bearer pk_live_…` (publishable: report creation and report reasons only).",
      },
    },
    filter: ({ metadata }) => (metadata as { family?: string }).family === "sdk",
  });
  return cached;
}
