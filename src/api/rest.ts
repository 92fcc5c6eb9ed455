import type { AnyTRPCProcedure } from "@trpc/server";
import type { Elysia } from "elysia";
import { createCommitGroup } from "../db/group-commit.ts";
import type { Services } from "./context.ts";
import { createContext } from "./context.ts";
import { jsonDepthExceeds } from "../domain/plumbing/json-depth.ts";
import { jsonError, toHttpError } from "./http-errors.ts";
import { errorFields, log } from "../log.ts";
import { requestIdOf } from "./request-log.ts";
import { appRouter } from "./router.ts";
import { createCallerFactory, type Meta } from "./trpc.ts";

export const SDK_PREFIX = "/sdk/flagstaff/v1";
export const ORG_PREFIX = "/api/v1";

export interface RestRoute {
  family: "sdk" | "org";
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Elysia path, `{param}` turned into `:param`. */
  path: string;
  /** The path as the OpenAPI document has it: relative to the family's prefix, with `{param}`. */
  openapiPath: string;
  procedurePath: string;
  successStatus: number;
  meta: Meta;
}

/** Every procedure that carries `meta.openapi`, as a REST route. */
export function restRoutes(): RestRoute[] {
  // `_def.procedures` is the flat map "identities.upsert" → procedure.
  const procedures = appRouter._def.procedures as unknown as Record<string, AnyTRPCProcedure>;
  const routes: RestRoute[] = [];
  for (const [procedurePath, procedure] of Object.entries(procedures)) {
    const meta = procedure._def.meta as Meta | undefined;
    if (!meta?.openapi || meta.openapi.enabled === false) continue;
    const family = meta.family === "org" ? "org" : "sdk";
    const prefix = family === "org" ? ORG_PREFIX : SDK_PREFIX;
    routes.push({
      family,
      method: meta.openapi.method,
      path: prefix + meta.openapi.path.replace(/\{(\w+)\}/g, ":$1"),
      openapiPath: meta.openapi.path,
      procedurePath,
      successStatus: meta.successStatus ?? 200,
      meta,
    });
  }
  return routes;
}

const createCaller = createCallerFactory(appRouter);
type CallerFn = (input: unknown) => Promise<unknown>;

/**
 * The busiest writes, committed in groups (src/db/group-commit.ts): requests that arrive
 * together share one SQLite commit, and each is answered only after that commit.
 */
const GROUP_COMMITTED = new Set(["reports.create", "identities.upsert"]);

/**
 * The thin REST adapter: path parameters, query and JSON body become the procedure's input;
 * its result becomes the JSON response, and any error `{ error }` with the mapped status.
 */
export function mountRest(app: Elysia, services: Services): void {
  const group = createCommitGroup(services.store);
  for (const route of restRoutes()) {
    const segments = route.procedurePath.split(".");
    const grouped = GROUP_COMMITTED.has(route.procedurePath);
    app.route(
      route.method,
      route.path,
      async ({ request, params, query }) => {
        // Reads take their input from the query string, writes from the JSON body; the path wins.
        const fromQuery = route.method === "GET" || route.method === "DELETE";
        const body = fromQuery ? query : await readJsonObject(request, services.config.maxBodyBytes);
        if (body instanceof Response) return body;
        const resHeaders = new Headers();
        try {
          // Inside: authenticating reads the database, which may be unavailable (a 503, not a 500).
          const ctx = await createContext(services, request, resHeaders);
          const caller = createCaller(ctx) as unknown as Record<string, unknown>;
          const fn = segments.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], caller) as CallerFn;
          const input = { ...body, ...params };
          const result = await (grouped ? group.run(() => fn(input)) : fn(input));
          if (route.meta.csv && fromQuery && (body as Record<string, unknown>).format === "csv") {
            resHeaders.set("content-type", "text/csv; charset=utf-8");
            // A paged result's cursor has no place in the CSV text: it goes in a header.
            const next = (result as { nextCursor?: unknown }).nextCursor;
            if (typeof next === "string") resHeaders.set("next-cursor", next);
            return new Response((route.meta.csv as (r: unknown) => string)(result), { status: route.successStatus, headers: resHeaders });
          }
          resHeaders.set("content-type", "application/json");
          return new Response(JSON.stringify(result), { status: route.successStatus, headers: resHeaders });
        } catch (err) {
          const e = toHttpError(err, (cause) => log.error("unhandled error", { requestId: requestIdOf(request), ...errorFields(cause) }));
          for (const [k, v] of Object.entries(e.headers)) resHeaders.set(k, v);
          resHeaders.set("content-type", "application/json");
          return new Response(JSON.stringify(e.body), { status: e.status, headers: resHeaders });
        }
      },
      { parse: "none" },
    );
  }
}

/** No body of ours needs more; a deeper one is refused before any code walks it. */
const MAX_BODY_DEPTH = 64;

/** Reads a JSON object body, bounded in size and depth; an empty body is `{}`. Errors are ready responses. */
async function readJsonObject(request: Request, maxBytes: number): Promise<Record<string, unknown> | Response> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) return jsonError(413, `Request body is larger than ${maxBytes} bytes`);
  let text: string;
  try {
    text = await readBounded(request, maxBytes);
  } catch {
    return jsonError(413, `Request body is larger than ${maxBytes} bytes`);
  }
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return jsonError(400, "Request body is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return jsonError(400, "Request body must be a JSON object");
  }
  if (jsonDepthExceeds(value, MAX_BODY_DEPTH)) return jsonError(400, `Request body nests deeper than ${MAX_BODY_DEPTH} levels`);
  return value as Record<string, unknown>;
}

/** Reads at most maxBytes of the body, throwing past that, so a chunked upload cannot grow without bound. */
async function readBounded(request: Request, maxBytes: number): Promise<string> {
  if (!request.body) return "";
  // A declared length (already checked against maxBytes) frames the body: read it at once.
  if (request.headers.has("content-length")) return request.text();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new Error("too large");
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}
