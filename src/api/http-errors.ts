import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { ZodError } from "zod";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import { databaseFault, noteDatabaseFault } from "../db/faults.ts";
import { DomainError, type DomainErrorKind } from "../domain/core/errors.ts";
import { observeDatabaseFault } from "./metrics.ts";
import { formatIssuePath } from "../domain/views/common.ts";

export interface HttpError {
  status: number;
  body: { error: string } & Record<string, unknown>;
  headers: Record<string, string>;
}

/** One readable line per zod issue, such as `subject.externalId: must be at most 256 characters` or `when.all[2].op: …`. */
export function describeZodError(error: ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => (issue.path.length ? `${formatIssuePath(issue.path)}: ${issue.message}` : issue.message))
    .join("; ");
}

/** What the answer to an error nobody foresaw says, over REST and tRPC alike. */
export const INTERNAL_ERROR = "Internal server error";

/**
 * The message an error's answer may carry, the one scrub of both transports (toHttpError for
 * REST, the tRPC error formatter in src/api/trpc.ts): an expected error keeps its own; anything
 * unforeseen (a query the database refused, a bug) says INTERNAL_ERROR only, since its message
 * may hold a statement's SQL and its parameters (Drizzle's "Failed query: … params: …", the
 * driver's own text). Those go to the operator's log, never to the client.
 */
export function publicMessage(err: TRPCError): string {
  return err.code === "INTERNAL_SERVER_ERROR" ? INTERNAL_ERROR : err.message;
}

/**
 * Maps anything a procedure threw onto an HTTP status and `{ error }` body. Client mistakes
 * keep their message; anything unexpected is a 500 whose details go to the log only.
 */
export function toHttpError(err: unknown, log: (e: unknown) => void = console.error): HttpError {
  const cause = err instanceof TRPCError ? err.cause : err;
  if (cause instanceof DomainError) {
    const status = ERROR_KINDS[cause.kind].http;
    const headers: Record<string, string> = {};
    if (typeof cause.extra.retryAfter === "number") headers["retry-after"] = String(cause.extra.retryAfter);
    return { status, body: { error: cause.message, ...cause.extra }, headers };
  }
  if (cause instanceof ZodError) return { status: 400, body: { error: describeZodError(cause) }, headers: {} };
  if (err instanceof TRPCError && err.code !== "INTERNAL_SERVER_ERROR") {
    return { status: getHTTPStatusCodeFromError(err), body: { error: publicMessage(err) }, headers: {} };
  }
  const unavailable = databaseUnavailable(cause);
  if (unavailable) return { status: 503, body: { error: unavailable.message }, headers: { "retry-after": String(RETRY_AFTER_S) } };
  log(err);
  return { status: 500, body: { error: INTERNAL_ERROR }, headers: {} };
}

/** How long a client waits before trying again after a database fault. */
const RETRY_AFTER_S = 1;

/**
 * A database fault (src/db/faults.ts: a lost connection, a restart, a full disk…) as the 503
 * the transports answer, counted in `flagstaff_db_errors_total`; null for any other error.
 */
export function databaseUnavailable(err: unknown): DomainError | null {
  const fault = databaseFault(err);
  if (!fault) return null;
  observeDatabaseFault(fault);
  noteDatabaseFault(fault);
  const what = fault === "disk_full" ? "The database is out of disk space" : fault === "read_only" ? "The database is read-only" : "The database is unavailable";
  return new DomainError("unavailable", `${what}: retry in a moment`, { retryAfter: RETRY_AFTER_S });
}

/**
 * The one table from the domain's error kinds to the transports' vocabularies: the tRPC code
 * (whose HTTP status tRPC's own table gives, the same as `http`) and the REST status.
 */
export const ERROR_KINDS: Record<DomainErrorKind, { trpc: TRPC_ERROR_CODE_KEY; http: number }> = {
  bad_request: { trpc: "BAD_REQUEST", http: 400 },
  unauthorized: { trpc: "UNAUTHORIZED", http: 401 },
  forbidden: { trpc: "FORBIDDEN", http: 403 },
  not_found: { trpc: "NOT_FOUND", http: 404 },
  conflict: { trpc: "CONFLICT", http: 409 },
  too_large: { trpc: "PAYLOAD_TOO_LARGE", http: 413 },
  rate_limited: { trpc: "TOO_MANY_REQUESTS", http: 429 },
  unavailable: { trpc: "SERVICE_UNAVAILABLE", http: 503 },
};

export function jsonError(status: number, error: string, headers: Record<string, string> = {}): Response {
  return Response.json({ error }, { status, headers });
}
