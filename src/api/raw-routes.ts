/**
 * What the routes outside tRPC share (src/api/attachment-routes.ts: attachments' bytes;
 * src/api/bank-file-route.ts: a bank's file, streamed). tRPC and its OpenAPI adapter read a JSON
 * body whole and answer JSON, so a body streamed in or out is a route of its own; these keep the
 * procedures' rules (authorizeCall, src/api/trpc.ts) and their error answers, and are described by
 * hand in the organization OpenAPI document (src/api/openapi.ts), which test/contract.test.ts
 * holds them to.
 */
import { z } from "zod";
import { requireOrganizationBySlug } from "../domain/accounts/organizations.ts";
import type { DomainContext } from "../domain/core/context.ts";
import { errorFields, log } from "../log.ts";
import { createContext, type Services } from "./context.ts";
import { toHttpError } from "./http-errors.ts";
import { requestIdOf } from "./request-log.ts";
import { authorizeCall, type Meta } from "./trpc.ts";
import { DomainError } from "../domain/core/errors.ts";
import { containsNul, NUL_REFUSED } from "../domain/views/validation.ts";

/** Every download is answered with these: a file, never a page of the dashboard's origin. */
export const DOWNLOAD_HEADERS = {
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; sandbox",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "private, no-store",
} as const;

export const slugParam = z.string().min(1).max(64);
export const idParam = z.string().min(1).max(64);

/** `filename*` (RFC 6266 / 5987) with an ASCII fallback. */
export function contentDisposition(kind: "attachment" | "inline", fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, "_").replace(/["\\;]/g, "_");
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/**
 * A byte range of a file of `size` bytes that cannot be served: the error answer, 416 with the
 * size in `Content-Range`. A local store's bytes are a file, of which Bun serves one byte range
 * itself (206, `Content-Range`), and refuses one that starts at or past its end (or a suffix of
 * none) with a bare 416, no body; the same ranges are refused here first, with the body every
 * error has. Null for no Range, one Bun leaves aside (several ranges, another unit, a malformed
 * one: the whole file, 200), a servable one, or an unknown size.
 */
export function refusedRange(request: Request, size: number | null, resHeaders: Headers): Response | null {
  const m = /^bytes=(\d*)-(\d*)$/.exec(request.headers.get("range")?.trim() ?? "");
  if (!m || size === null || (m[1] === "" && m[2] === "")) return null;
  const [first, last] = [m[1] === "" ? null : Number(m[1]), m[2] === "" ? null : Number(m[2])];
  const refused = first === null ? last === 0 : first >= size && (last === null || last >= first);
  if (!refused) return null;
  resHeaders.set("content-range", `bytes */${size}`);
  resHeaders.set("content-type", "application/json");
  return new Response(JSON.stringify({ error: `Range not satisfiable: the file is ${size} bytes` }), { status: 416, headers: resHeaders });
}

/** The error answer: `{ error }` only (the documented Error), Retry-After as a header. */
export function errorResponse(err: unknown, request: Request, resHeaders: Headers): Response {
  const e = toHttpError(err, (cause) => log.error("unhandled error", { requestId: requestIdOf(request), ...errorFields(cause) }));
  for (const [k, v] of Object.entries(e.headers)) resHeaders.set(k, v);
  resHeaders.set("content-type", "application/json");
  return new Response(JSON.stringify({ error: e.body.error }), { status: e.status, headers: resHeaders });
}

/** A 400 when any of these texts holds U+0000 (the rule: src/domain/views/validation.ts). */
export function refuseNul(...texts: unknown[]): void {
  if (containsNul(texts)) throw new DomainError("bad_request", NUL_REFUSED);
}

/** Percent-decoded text (a path segment, a name sent in a header), or as it came when it is not valid percent-encoding. */
export const decodedOrAsIs = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

export type ClientAddress = (request: Request, server: { requestIP(r: Request): { address: string } | null } | null) => string | null;

/**
 * A raw route's call begun as a procedure's is: authenticated (a key, or the dashboard's session
 * when its cookie came: a mutation then needs its CSRF token), its role checked against `meta`,
 * publishable keys refused; then its path and query refused with a 400 when they hold U+0000, as
 * every procedure's input is (docs/api.md; a name sent in a header is the route's to check:
 * refuseNul); the organization found (404). Answers the domain's context.
 */
export async function beginRawCall(
  services: Services,
  clientAddress: ClientAddress,
  call: { request: Request; server: Parameters<ClientAddress>[1]; resHeaders: Headers; type: "query" | "mutation"; meta: Meta; orgSlug: string },
): Promise<DomainContext> {
  // The dashboard's session when its cookie came (and no key): else a key, whose absence is a 401 saying so.
  const ctx = await createContext(services, call.request, call.resHeaders, { sessions: call.request.headers.has("cookie"), ip: clientAddress(call.request, call.server) });
  const { domain } = authorizeCall(ctx, call.type, call.meta, { publishableGate: true });
  const url = new URL(call.request.url);
  refuseNul([...url.searchParams.entries()], url.pathname.split("/").map(decodedOrAsIs));
  await requireOrganizationBySlug(domain, slugParam.parse(call.orgSlug));
  return domain;
}
