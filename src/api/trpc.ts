import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import type { OpenApiMeta } from "trpc-to-openapi";
import { DomainError, type DomainErrorKind } from "../domain/errors.ts";
import { requireProject, type Project } from "../domain/projects.ts";
import { requireOrganizationBySlug, type Organization } from "../domain/organizations.ts";
import type { Caller, Context } from "./context.ts";

/**
 * Procedure metadata. `openapi` places a procedure on a REST path (SDK routes are relative to
 * /sdk/flagstaff/v1, organization routes start with /organizations and live under /api/v1);
 * `successStatus` is the HTTP status of a REST success (200 unless said).
 */
export type Meta = OpenApiMeta<{ family?: "sdk" | "org"; successStatus?: number }>;

// isDev off: error responses never carry stack traces.
const t = initTRPC.context<Context>().meta<Meta>().create({ isDev: false });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

export const TRPC_CODE: Record<DomainErrorKind, TRPC_ERROR_CODE_KEY> = {
  bad_request: "BAD_REQUEST",
  unauthorized: "UNAUTHORIZED",
  forbidden: "FORBIDDEN",
  not_found: "NOT_FOUND",
  conflict: "CONFLICT",
  too_large: "PAYLOAD_TOO_LARGE",
  rate_limited: "TOO_MANY_REQUESTS",
  unavailable: "SERVICE_UNAVAILABLE",
};

/** Domain errors become TRPCErrors with the matching code; the DomainError stays the cause. */
const translateDomainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof DomainError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: TRPC_CODE[cause.kind], message: cause.message, cause });
  }
  return result;
});

/** Any authenticated caller: a secret or publishable key (and later a dashboard session). */
export const authedProcedure = t.procedure.use(translateDomainErrors).use(({ ctx, next }) => {
  if (!ctx.auth.ok) throw new TRPCError({ code: "UNAUTHORIZED", message: ctx.auth.reason });
  return next({ ctx: { caller: ctx.auth.caller } });
});

/** Everything but report creation and report reasons: publishable keys are refused. */
export const secretProcedure = authedProcedure.use(({ ctx, next }) => {
  if (ctx.caller.key?.kind === "publishable") {
    throw new TRPCError({ code: "FORBIDDEN", message: "A publishable key cannot call this route; use a secret key" });
  }
  return next();
});

/**
 * The project a procedure acts on, checked for the caller: a publishable key only reaches its
 * own project (403 otherwise); a project outside the caller's organization is a 404.
 */
export function projectFor(ctx: Context & { caller: Caller }, projectId: string): Project {
  const key = ctx.caller.key;
  if (key?.kind === "publishable" && key.projectId !== projectId) {
    throw new DomainError("forbidden", "This publishable key belongs to another project");
  }
  return requireProject(ctx.db, ctx.caller.orgId, projectId);
}

/** The organization named by an organization route's `orgSlug`; another one's slug is a 404. */
export function organizationFor(ctx: Context & { caller: Caller }, orgSlug: string): Organization {
  return requireOrganizationBySlug(ctx.db, orgSlug, ctx.caller.orgId);
}
