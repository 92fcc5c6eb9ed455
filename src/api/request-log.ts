/**
 * Per-request bookkeeping, installed as Elysia hooks before any route: a request id, one JSON
 * access-log line per request (src/log.ts, on stderr) and the HTTP metrics (src/api/metrics.ts).
 *
 * - The request id is the caller's `x-request-id` when it looks like one (1–128 characters of
 *   letters, digits and `-_.:`), else a new UUIDv7; it is sent back in `x-request-id` and written
 *   in the log line, so a client's report of a failure can be found in the logs.
 * - The log line: `{"time","level":"info","msg":"request","requestId","method","path","route",
 *   "status","durationMs"}` (+ `error` for a 5xx). The path is logged without its query string.
 *   Health, readiness and metrics scrapes are logged at debug level only.
 */
import type { Elysia } from "elysia";
import { log } from "../log.ts";
import { observeRequest, requestFinished, requestStarted } from "./metrics.ts";
import { noteRequestStarted } from "../domain/plumbing/serving-load.ts";

export const REQUEST_ID_HEADER = "x-request-id";
const ACCEPTED_ID = /^[\w.:-]{1,128}$/;
// The dashboard asks for changes every 2 s per open tab: logged at debug level too.
const QUIET_PATHS = new Set(["/healthz", "/readyz", "/metrics", "/trpc/dashboard.changes"]);

interface RequestInfo {
  id: string;
  start: number;
  /** Set by the error hook: the code Elysia gave the error, and its message for 5xx lines. */
  errorCode?: string;
  error?: string;
}

const requests = new WeakMap<Request, RequestInfo>();

/** The id given to a request (for code that wants to log with it). */
export const requestIdOf = (request: Request): string | undefined => requests.get(request)?.id;

/**
 * Status of a response that came out of the error hook: the same mapping as the app's onError
 * in server.ts (NOT_FOUND → 404, PARSE/VALIDATION → 400, anything else → 500).
 */
function statusOfErrorCode(code: string): number {
  if (code === "NOT_FOUND") return 404;
  if (code === "PARSE" || code === "VALIDATION") return 400;
  return 500;
}

export function installRequestLog(app: Elysia): void {
  app.onRequest(({ request, set }) => {
    const offered = request.headers.get(REQUEST_ID_HEADER);
    const id = offered && ACCEPTED_ID.test(offered) ? offered : Bun.randomUUIDv7();
    requests.set(request, { id, start: performance.now() });
    set.headers[REQUEST_ID_HEADER] = id;
    requestStarted();
    noteRequestStarted();
  });

  // Runs before the app's own error hook and returns nothing, so that one still answers.
  app.onError(({ request, code, error }) => {
    const info = requests.get(request);
    if (!info) return;
    info.errorCode = String(code);
    if (statusOfErrorCode(info.errorCode) >= 500) info.error = error instanceof Error ? error.message : String(error);
  });

  // The context is destructured in the parameter list on purpose: Elysia reads the hook's
  // source to decide which context fields to fill in (`route` among them), and a destructured
  // parameter is what it recognises, minified or not.
  app.onAfterResponse(({ request, set, route, responseValue }) => {
    const info = requests.get(request);
    if (!info) return;
    requestFinished();
    const status =
      info.errorCode !== undefined
        ? statusOfErrorCode(info.errorCode)
        : responseValue instanceof Response
          ? responseValue.status
          : typeof set.status === "number"
            ? set.status
            : 200;
    const durationMs = performance.now() - info.start;
    const routeLabel = info.errorCode === "NOT_FOUND" || !route ? "unmatched" : route;
    observeRequest(request.method, routeLabel, status, durationMs);

    const url = request.url;
    const pathStart = url.indexOf("/", url.indexOf("//") + 2);
    const queryStart = url.indexOf("?", pathStart);
    const path = pathStart < 0 ? "/" : url.slice(pathStart, queryStart < 0 ? undefined : queryStart);
    const fields: Record<string, unknown> = {
      requestId: info.id,
      method: request.method,
      path,
      route: routeLabel,
      status,
      durationMs: Math.round(durationMs * 100) / 100,
    };
    if (info.error !== undefined) fields.error = info.error;
    (QUIET_PATHS.has(path) ? log.debug : status >= 500 ? log.error : log.info)("request", fields);
  });
}
