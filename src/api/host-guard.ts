/**
 * Refuses a request whose Host header is not a host (`Host: a b`, `Host: [zz`,
 * `Host: exa mple.com:99`, a port past 65535) with 400 `{ "error" }`, before any route runs.
 *
 * Bun builds `request.url` from the Host header; for such a header it is not an absolute URL
 * (sometimes just the path), and everything downstream that parses it, `new URL(request.url)`
 * in the request facts, tRPC's fetch adapter, failed with "Invalid URL", a 500. Checking once
 * here, as an Elysia request hook installed after the request log's and the common headers' (so
 * the refusal gets a request id, a log line and those headers), covers every route: REST,
 * tRPC, health, the dashboard page and its assets, and unknown paths.
 */
import type { Elysia } from "elysia";
import { jsonError } from "./http-errors.ts";

export function installHostGuard(app: Elysia): void {
  app.onRequest(({ request }) => {
    if (!URL.canParse(request.url)) return jsonError(400, "Bad request: the Host header is not a valid host name or address (with an optional port)");
  });
}
