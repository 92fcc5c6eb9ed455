import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { ZodError } from "zod";
import { DomainError } from "../domain/errors.ts";

export interface HttpError {
  status: number;
  body: { error: string } & Record<string, unknown>;
  headers: Record<string, string>;
}

/** One readable line per zod issue, such as `subject.externalId: must be at most 256 characters`. */
export function describeZodError(error: ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => (issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
    .join("; ");
}

/**
 * Maps anything a procedure threw onto an HTTP status and `{ error }` body. Client mistakes
 * keep their message; anything unexpected is a 500 whose details go to the log only.
 */
export function toHttpError(err: unknown, log: (e: unknown) => void = console.error): HttpError {
  const cause = err instanceof TRPCError ? err.cause : err;
  if (cause instanceof DomainError) {
    const status = err instanceof TRPCError ? getHTTPStatusCodeFromError(err) : statusOfKind(cause);
    const headers: Record<string, string> = {};
    if (typeof cause.extra.retryAfter === "number") headers["retry-after"] = String(cause.extra.retryAfter);
    return { status, body: { error: cause.message, ...cause.extra }, headers };
  }
  if (cause instanceof ZodError) return { status: 400, body: { error: describeZodError(cause) }, headers: {} };
  if (err instanceof TRPCError && err.code !== "INTERNAL_SERVER_ERROR") {
    return { status: getHTTPStatusCodeFromError(err), body: { error: err.message }, headers: {} };
  }
  log(err);
  return { status: 500, body: { error: "Internal server error" }, headers: {} };
}

const STATUS: Record<DomainError["kind"], number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  rate_limited: 429,
  unavailable: 503,
};

function statusOfKind(e: DomainError): number {
  return STATUS[e.kind];
}

export function jsonError(status: number, error: string, headers: Record<string, string> = {}): Response {
  return Response.json({ error }, { status, headers });
}
