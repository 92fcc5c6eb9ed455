import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";
import { ORG_PREFIX, restRoutes, SDK_PREFIX, type RestRoute } from "./rest.ts";
import { appRouter } from "./router.ts";
import { z } from "zod";
import { bankFileEntrySchema, MAX_INLINE_EXPORT_ENTRIES } from "../domain/views/media-bank.ts";

/**
 * The published OpenAPI 3.1.0 documents, one per route family, generated from the same
 * procedure definitions the REST adapter serves (src/api/rest.ts), then finished so that they
 * describe what the server really answers: the success under its real status, every error as
 * `{ "error": string }` (never the generator's `{ message, code, issues }`), every status a
 * route can answer, optional bodies where nothing is required, servers a generated client can
 * use as they are, and the Bearer form of the key. test/contract.test.ts holds the server to
 * them with an independent validator, and clients/typescript is generated from them.
 */
export type RouteFamily = "sdk" | "org";

interface FamilyInfo {
  title: string;
  description: string;
  prefix: string;
  tags: Record<string, string>;
}

const FAMILIES: Record<RouteFamily, FamilyInfo> = {
  sdk: {
    title: "Flagstaff SDK API",
    description:
      "Moderation reports, identities, report reasons, enforcement actions and appeals for client platforms. Errors are `{ \"error\": string }`; a 429 also carries `retryAfter` (seconds) and the `Retry-After` header.",
    prefix: SDK_PREFIX,
    tags: {
      identities: "The platform's users and other actors, mirrored by project + type + external ID.",
      reports: "Reports about content or a person, and the review workflow (escalate, resolve, dismiss).",
      categories: "The project's report categories, offered as report reasons.",
      enforcement: "Enforcement actions taken on identities, and the appeals against them.",
    },
  },
  org: {
    title: "Flagstaff organization API",
    description:
      "Organization-scoped routes (secret keys only): projects, settings, categories, AI analysis, enforcement actions, appeals, webhooks, API keys and the audit trail. Errors are `{ \"error\": string }`; a 429 also carries `retryAfter` (seconds) and the `Retry-After` header.",
    prefix: ORG_PREFIX,
    tags: {
      projects: "The organization's projects.",
      settings: "Per-project settings (AI analysis, link scanning).",
      categories: "A project's report categories.",
      ai: "AI classification of text and its stored analyses.",
      policies: "Versioned policies of the report categories for the AI classifier, and shadow analyses compared with live ones (docs/ai.md).",
      enforcement: "Enforcement actions and appeals.",
      reporters: "Identities as reporters: trusted flaggers, muted reporters, accuracy (DSA Art. 22, 23; docs/dsa.md).",
      queues: "Review queues: which open cases each holds, in which order, and who may work them (docs/rules.md).",
      quality: "Quality review: agreement between moderators on the decisions sampled for a blind second review (docs/quality.md).",
      rules: "Automation rules: conditions over a report's facts and the effects they take, live or in shadow mode, their versions, hits and tests (docs/rules.md).",
      webhooks: "Signed outbound webhooks (Standard Webhooks) and their delivery log.",
      "api-keys": "API keys (shown once, stored hashed).",
      audit: "The audit trail of every change.",
      transparency: "DSA statements of reasons, their settings and export (docs/dsa.md).",
      attachments: "Evidence added to a report or a case: uploaded as raw bytes (streamed), its type read from the bytes, downloaded as an attachment only, images shown through a preview made anew (docs/attachments.md).",
      "media-banks": "Known harmful media matched by hash: a project's banks of SHA-256, MD5 and PDQ signals, imported and exported as files, and each case's media with the matches a moderator confirms or rejects (docs/media.md).",
      evaluation: "Measuring the AI classifier: evaluation sets, runs against a model, their figures, threshold advice and run comparison (docs/ai.md).",
    },
  },
};

/** What each error status means on any route; a route's `errorResponses` meta may say it better. */
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Invalid input (path, query or body)",
  401: "Missing, malformed, unknown or revoked API key",
  403: "The key may not do this (a publishable key outside report creation and report reasons of its own project, or a plan without the feature)",
  404: "The organization, project or resource does not exist, or belongs to another organization",
  409: "Not allowed in the resource's current state",
  413: "Request body too large",
  429: "Rate limited: retry after `retryAfter` seconds",
  503: "The database (or, where the route says so, another backend it needs) cannot answer now: retry after `Retry-After` seconds",
};

/**
 * The statuses every route of a family can answer, whatever it does: 400 (every route
 * validates a path, query or body), 401 (every route needs a key), 403 (a publishable key is
 * refused everywhere but its own project's report creation and report reasons), 404 (every
 * route names an organization, project or resource, or filters by one), 503 (every route reads
 * the database, which may be unreachable, restarting or out of disk space for a moment:
 * src/db/faults.ts), and 413 wherever a body is read. Anything else a route can answer is
 * declared in its `errorResponses` meta.
 */
function errorStatusesOf(route: RestRoute): number[] {
  const statuses = new Set([400, 401, 403, 404, 503]);
  if (route.method !== "GET" && route.method !== "DELETE") statuses.add(413);
  for (const s of Object.keys(route.meta.openapi?.errorResponses ?? {})) statuses.add(Number(s));
  return [...statuses].sort((a, b) => a - b);
}

const RATE_LIMIT_HEADERS = {
  "RateLimit-Limit": { description: "Report creations allowed per window for this key", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Report creations left in this window", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the window resets", schema: { type: "integer" } },
  "RateLimit-Policy": { description: "The policy, such as `10;w=60`", schema: { type: "string" } },
} as const;

type Json = Record<string, unknown>;

const cache = new Map<RouteFamily, OpenAPIObject>();

export function openApiDocument(family: RouteFamily): OpenAPIObject {
  let doc = cache.get(family);
  if (!doc) {
    doc = buildDocument(family);
    cache.set(family, doc);
  }
  return doc;
}

export const sdkOpenApiDocument = (): OpenAPIObject => openApiDocument("sdk");
export const orgOpenApiDocument = (): OpenAPIObject => openApiDocument("org");

function buildDocument(family: RouteFamily): OpenAPIObject {
  const info = FAMILIES[family];
  const generated = generateOpenApiDocument(appRouter, {
    title: info.title,
    description: info.description,
    version: "1.0.0",
    openApiVersion: "3.1.0",
    baseUrl: info.prefix,
    filter: ({ metadata }) => (metadata as { family?: string }).family === family,
  });
  // The generator's objects are shared with its own caches: work on a copy.
  const doc = structuredClone(generated) as OpenAPIObject & Json;

  doc.servers = [
    { url: `http://localhost:3001${info.prefix}`, description: "Local development (`npm start`)" },
    {
      url: `{base_url}${info.prefix}`,
      description: "Your Flagstaff server",
      variables: { base_url: { default: "https://flagstaff.example.com", description: "Scheme, host and port of the server, without a trailing slash" } },
    },
  ];

  const components = (doc.components ??= {}) as Json;
  const schemas = ((components.schemas ??= {}) as Json);
  for (const name of Object.keys(schemas)) if (name.startsWith("error.")) delete schemas[name];
  schemas.Error = {
    type: "object",
    description: "Every error the server answers.",
    properties: { error: { type: "string", description: "What went wrong, safe to show" } },
    required: ["error"],
    additionalProperties: false,
  };
  components.securitySchemes = {
    ApiKey: {
      type: "http",
      scheme: "bearer",
      bearerFormat: "sk_live_… or pk_live_…",
      description:
        "A Flagstaff API key sent as a Bearer token: `Authorization: Bearer sk_live_…` (secret, server-side) or `Bearer pk_live_…` (publishable: report creation and report reasons of its own project only)." +
        (family === "org" ? " Organization routes need a secret key." : ""),
    },
  };

  const routes = new Map(restRoutes().filter((r) => r.family === family).map((r) => [`${r.method} ${r.openapiPath}`, r]));
  const usedTags = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item as Record<string, Json>)) {
      const route = routes.get(`${method.toUpperCase()} ${path}`);
      if (!route) throw new Error(`OpenAPI: no REST route for ${method.toUpperCase()} ${path}`);
      for (const t of (op.tags as string[] | undefined) ?? []) usedTags.add(t);
      op.security = [{ ApiKey: [] }];
      finishRequestBody(op);
      op.responses = responsesOf(route, op.responses as Json);
    }
  }
  if (family === "org") {
    addAttachmentPaths(doc);
    addBankFilePath(doc);
  }
  // Only where some route answers 429 (an unused component is noise to linters).
  if (JSON.stringify(doc.paths).includes("RateLimitError")) {
    schemas.RateLimitError = {
    type: "object",
    description: "A 429: the request was refused for now.",
    properties: {
      error: { type: "string" },
      retryAfter: { type: "number", description: "Seconds to wait; the same as the Retry-After header" },
    },
    required: ["error", "retryAfter"],
    additionalProperties: false,
    };
  }
  const unknownTags = [...usedTags].filter((t) => !(t in info.tags));
  if (unknownTags.length) throw new Error(`OpenAPI: tags without a description: ${unknownTags.join(", ")}`);
  doc.tags = Object.entries(info.tags)
    .filter(([name]) => usedTags.has(name))
    .map(([name, description]) => ({ name, description }));
  return doc;
}

/** A body with no required field may be left out entirely (the REST adapter reads none as `{}`). */
function finishRequestBody(op: Json): void {
  const body = op.requestBody as Json | undefined;
  if (!body) return;
  const schema = ((body.content as Json)["application/json"] as Json).schema as Json;
  const required = schema.required as string[] | undefined;
  body.required = Boolean(required?.length);
}

function responsesOf(route: RestRoute, generated: Json): Json {
  const success = generated["200"] as Json;
  const status = route.successStatus;
  if (route.meta.csv) {
    // format=csv: the same data as CSV (src/api/rest.ts).
    (success.content as Json)["text/csv"] = { schema: { type: "string", description: "With `format=csv`: a header row of field names, then one row per item" } };
  }
  const responses: Json = {
    [status]: {
      ...success,
      description: status === 201 ? "Created" : "OK",
      ...(route.procedurePath === "reports.create" ? { headers: RATE_LIMIT_HEADERS } : {}),
      ...(route.meta.csv ? { headers: { "Next-Cursor": { description: "With `format=csv`, when there are more: the `cursor` of the next page", schema: { type: "string" } } } } : {}),
    },
  };
  const described = route.meta.openapi?.errorResponses ?? {};
  for (const s of errorStatusesOf(route)) {
    const description = (described as Record<number, string>)[s] ?? ERROR_DESCRIPTIONS[s] ?? "Error";
    responses[s] =
      s === 429
        ? {
            description,
            headers: {
              "Retry-After": { description: "Seconds to wait before trying again", required: true, schema: { type: "integer" } },
              ...RATE_LIMIT_HEADERS,
            },
            content: { "application/json": { schema: { $ref: "#/components/schemas/RateLimitError" } } },
          }
        : { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
  }
  return responses;
}

// ---------------------------------------------------------------------------------------------
// Attachments' bytes: routes of their own (src/api/attachment-routes.ts), described here by hand
// since the generator describes JSON bodies only. test/contract.test.ts holds them to it.

const errorAnswer = (description: string): Json => ({ description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } });
const RETRY_AFTER = { "Retry-After": { description: "Seconds to wait before trying again", required: true, schema: { type: "integer" } } };
const unavailable = (what: string): Json => ({ ...errorAnswer(what), headers: RETRY_AFTER });
const pathParam = (name: string): Json => ({ in: "path", name, required: true, schema: { type: "string", minLength: 1, maxLength: 64 } });
const attachmentAnswer = (description: string): Json => ({
  description,
  content: { "application/json": { schema: { type: "object", properties: { attachment: { $ref: "#/components/schemas/Attachment" } }, required: ["attachment"], additionalProperties: false } } },
});
const DOWNLOAD_HEADER_DOCS: Json = {
  "Content-Disposition": { description: "`attachment` with the file's name (`filename*` in UTF-8): a download, never shown inline", required: true, schema: { type: "string" } },
  "X-Content-Type-Options": { description: "`nosniff`", required: true, schema: { type: "string" } },
  "Content-Security-Policy": { description: "`default-src 'none'; sandbox`: a browser that opens it anyway runs nothing of it", required: true, schema: { type: "string" } },
};

function uploadOperation(target: "case" | "report"): Json {
  return {
    operationId: `attachments-upload-to-${target}`,
    summary: `Upload an attachment to a ${target}`,
    description:
      `The request body is the file's bytes, sent as they are (any Content-Type, recorded as declared but never trusted; not multipart), streamed to the store. ` +
      "Its type is read from the bytes against an allowlist (JPEG, PNG, GIF, WebP, MP4, WebM, PDF, plain text): anything else, SVG and HTML included, is refused (400). " +
      "An image's dimensions are read from its header and bounded before anything decodes it (413). JPEG, PNG and GIF images get a preview, made in the background. " +
      "Limits: FLAGSTAFF_ATTACHMENT_MAX_BYTES per file (413), FLAGSTAFF_ATTACHMENTS_PER_CASE per case (409), FLAGSTAFF_ATTACHMENT_ORG_BYTES per organization (409). " +
      "Audited (`ATTACHMENT_ADDED`). The dashboard's session may upload too, with its CSRF token in `x-flagstaff-csrf`.",
    tags: ["attachments"],
    security: [{ ApiKey: [] }],
    parameters: [
      pathParam("orgSlug"),
      pathParam(`${target}Id`),
      { in: "query", name: "fileName", required: false, schema: { type: "string", maxLength: 1024 }, description: "The file's name (or send it in `X-File-Name`); shown and offered as the download's name, never trusted" },
      { in: "header", name: "X-File-Name", required: false, schema: { type: "string" }, description: "The file's name, percent-encoded UTF-8, when `fileName` is not in the query" },
    ],
    requestBody: {
      required: true,
      description: "The file's bytes",
      content: { "application/octet-stream": { schema: { type: "string", format: "binary" } }, "*/*": { schema: { type: "string", format: "binary" } } },
    },
    responses: {
      201: attachmentAnswer("Created"),
      400: errorAnswer("The file is empty, or its type (read from its bytes) is not on the allowlist, or an image's header is corrupt"),
      401: errorAnswer(ERROR_DESCRIPTIONS[401]!),
      403: errorAnswer("A publishable key, a role that may not add evidence, a session without its CSRF token, or a case reviewed blind"),
      404: errorAnswer(`The organization or ${target} does not exist, belongs to another organization, or is in a queue the caller may not work`),
      409: errorAnswer("A limit would be passed: the files of one case (FLAGSTAFF_ATTACHMENTS_PER_CASE) or the bytes of the organization (FLAGSTAFF_ATTACHMENT_ORG_BYTES); the message names it"),
      413: errorAnswer("The file is larger than FLAGSTAFF_ATTACHMENT_MAX_BYTES, or an image has more pixels than FLAGSTAFF_ATTACHMENT_MAX_PIXELS (from its header, before any decoding)"),
      503: unavailable("The attachment store (a full disk, an unreachable object store) or the database cannot take the file now: nothing was kept; retry after `Retry-After` seconds"),
    },
  };
}

function bytesOperation(which: "content" | "preview"): Json {
  const original = which === "content";
  return {
    operationId: original ? "attachments-download" : "attachments-preview",
    summary: original ? "Download an attachment's original" : "Read an attachment's preview",
    description: original
      ? "The bytes as uploaded, always as a download (`Content-Disposition: attachment`, `nosniff`, a sandboxing Content-Security-Policy), with the type read from them. Audited (`ATTACHMENT_OPENED`: who opened which evidence when)."
      : "A JPEG of at most FLAGSTAFF_ATTACHMENT_PREVIEW_PX pixels on its longer side, encoded anew from the image's pixels: none of the original's metadata (EXIF, GPS position, comments) is in it. JPEG, PNG and GIF images only.",
    tags: ["attachments"],
    security: [{ ApiKey: [] }],
    parameters: [
      pathParam("orgSlug"),
      pathParam("attachmentId"),
      {
        in: "header",
        name: "Range",
        required: false,
        schema: { type: "string" },
        description: "One byte range (`bytes=0-1023`, `bytes=1024-`, `bytes=-500`): 206 with that part where the attachment store serves ranges (a local directory), else the whole file (200). Several ranges, or another unit, get the whole file.",
      },
    ],
    responses: {
      200: {
        description: "OK",
        headers: original ? DOWNLOAD_HEADER_DOCS : { "X-Content-Type-Options": DOWNLOAD_HEADER_DOCS["X-Content-Type-Options"] },
        content: original ? { "application/octet-stream": { schema: { type: "string", format: "binary" } }, "*/*": { schema: { type: "string", format: "binary" } } } : { "image/jpeg": { schema: { type: "string", format: "binary" } } },
      },
      206: {
        description: "The byte range asked for (`Range`), from a local attachment store",
        headers: { "Content-Range": { description: "`bytes first-last/size`", required: true, schema: { type: "string" } } },
        content: original ? { "application/octet-stream": { schema: { type: "string", format: "binary" } }, "*/*": { schema: { type: "string", format: "binary" } } } : { "image/jpeg": { schema: { type: "string", format: "binary" } } },
      },
      400: errorAnswer(ERROR_DESCRIPTIONS[400]!),
      401: errorAnswer(ERROR_DESCRIPTIONS[401]!),
      403: errorAnswer("A publishable key, or a case reviewed blind"),
      404: errorAnswer(original ? ERROR_DESCRIPTIONS[404]! : "No such attachment, or it has no preview (not a JPEG, PNG or GIF, or it could not be decoded: the message says why)"),
      ...(original ? {} : { 409: errorAnswer("The preview is still being made: retry in a moment") }),
      416: {
        ...errorAnswer("The `Range` starts at or past the file's end (or is a suffix of no bytes)"),
        headers: { "Content-Range": { description: "`bytes */size`: the file's size", required: true, schema: { type: "string" } } },
      },
      503: unavailable("The attachment store or the database cannot answer now: retry after `Retry-After` seconds"),
    },
  };
}

/** A bank's JSON file, from the schema of its entries (bankFileEntrySchema), without the document-level `$schema`. */
const { $schema: _bankFileDialect, ...BANK_FILE_JSON_SCHEMA } = z.toJSONSchema(z.array(bankFileEntrySchema)) as Json;

/** A bank's file, streamed (src/api/bank-file-route.ts), beside the bank's JSON export. */
function addBankFilePath(doc: Json): void {
  const paths = doc.paths as Record<string, Json>;
  paths["/organizations/{orgSlug}/media-banks/{bankId}/export/download"] = {
    get: {
      operationId: "media-banks-download",
      summary: "Download a media bank's entries as a file",
      description:
        "The same file as `GET …/export`'s `content` (CSV: `signal_type,signal_value,origin` and a column per metadata key; or JSON, an array), sent as it is written, a page of entries at a time, as a download (`Content-Disposition: attachment`): the server's memory does not grow with the bank, where `GET …/export` holds the whole file, and so answers banks of up to " +
        MAX_INLINE_EXPORT_ENTRIES.toLocaleString("en") +
        " entries only. " +
        "A failure once the file has begun cuts the connection before its end: check that the JSON is whole, or count the CSV's rows.",
      tags: ["media-banks"],
      security: [{ ApiKey: [] }],
      parameters: [pathParam("orgSlug"), pathParam("bankId"), { in: "query", name: "format", required: false, schema: { type: "string", enum: ["csv", "json"], default: "csv" }, description: "The file's format" }],
      responses: {
        200: {
          description: "OK",
          headers: DOWNLOAD_HEADER_DOCS,
          content: {
            "text/csv": { schema: { type: "string", description: "With `format=csv` (the default): a header row, then one row per entry" } },
            "application/json": { schema: { ...BANK_FILE_JSON_SCHEMA, description: "With `format=json`: the entries, each as `GET …/export`'s JSON file has it" } },
          },
        },
        400: errorAnswer("An unknown `format`, or a path parameter too long"),
        401: errorAnswer(ERROR_DESCRIPTIONS[401]!),
        403: errorAnswer("A publishable key, or a dashboard user who is not an admin"),
        404: errorAnswer("The organization or bank does not exist, or belongs to another organization"),
        503: unavailable("The database cannot answer now: retry after `Retry-After` seconds"),
      },
    },
  };
}

/** The upload and download routes, added to the organization document (their paths beside the metadata's). */
function addAttachmentPaths(doc: Json): void {
  const paths = doc.paths as Record<string, Json>;
  const at = (path: string): Json => (paths[path] ??= {});
  at("/organizations/{orgSlug}/cases/{caseId}/attachments").post = uploadOperation("case");
  at("/organizations/{orgSlug}/reports/{reportId}/attachments").post = uploadOperation("report");
  at("/organizations/{orgSlug}/attachments/{attachmentId}/content").get = bytesOperation("content");
  at("/organizations/{orgSlug}/attachments/{attachmentId}/preview").get = bytesOperation("preview");
}
