import { initTRPC, TRPCError } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { domainContext, type DomainContext } from "../domain/context.ts";
import { DomainError } from "../domain/errors.ts";
import { ERROR_KINDS } from "./http-errors.ts";
import { requireProject, type Project } from "../domain/projects.ts";
import { requireOrganizationBySlug, type Organization } from "../domain/organizations.ts";
import { csrfMatches } from "../domain/sessions.ts";
import { hasRole, type Role } from "../domain/users.ts";
import type { Caller, Context, RequestFacts } from "./context.ts";

/**
 * Procedure metadata. `openapi` places a procedure on a REST path (SDK routes are relative to
 * /sdk/flagstaff/v1, organization routes start with /organizations and live under /api/v1);
 * `successStatus` is the HTTP status of a REST success (200 unless said).
 */
export type Meta = OpenApiMeta<{
  family?: "sdk" | "org";
  successStatus?: number;
  /**
   * The least role a dashboard user needs for this procedure. Without it, queries need
   * "viewer" and mutations "moderator" (secret keys act as admins).
   */
  role?: Role;
  /**
   * A publishable key may call this procedure. Only report creation and report reasons say so:
   * every other procedure refuses publishable keys (keyKindGate below).
   */
  publishable?: boolean;
  /**
   * Costly (an argon2id verification): refused inside a tRPC batch of more than one call, so
   * one request cannot multiply the work (src/api/trpc-batch.ts).
   */
  unbatched?: boolean;
}>;

// isDev off: error responses never carry stack traces.
const t = initTRPC.context<Context>().meta<Meta>().create({ isDev: false });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * Domain errors become TRPCErrors with the matching code; the DomainError stays the cause. A
 * `retryAfter` (rate limiting) also becomes the Retry-After header, as on the REST routes.
 */
const translateDomainErrors = t.middleware(async ({ ctx, next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof DomainError) {
    const cause = result.error.cause;
    if (typeof cause.extra.retryAfter === "number") ctx.resHeaders.set("Retry-After", String(cause.extra.retryAfter));
    throw new TRPCError({ code: ERROR_KINDS[cause.kind].trpc, message: cause.message, cause });
  }
  return result;
});

const PUBLISHABLE_REFUSED = "A publishable key cannot call this route; use a secret key";

/**
 * Publishable keys ship inside client apps, so anyone may hold one: they reach the procedures
 * whose meta says `publishable: true` and get 403 from every other one, public ones included.
 * This is the one place that decides it, ahead of every procedure (an allow-list by meta, so a
 * procedure added later is closed to them until it says otherwise).
 */
const keyKindGate = t.middleware(({ ctx, meta, next }) => {
  if (ctx.auth.ok && ctx.auth.caller.key?.kind === "publishable" && !meta?.publishable) {
    throw new TRPCError({ code: "FORBIDDEN", message: PUBLISHABLE_REFUSED });
  }
  return next();
});

const baseProcedure = t.procedure.use(translateDomainErrors).use(keyKindGate);

/** Procedures anyone may call (signing in): domain errors are still translated. */
export const publicProcedure = baseProcedure;

/**
 * A session's mutations must come from the dashboard itself: not from another site (an Origin
 * that is not this host, or Sec-Fetch-Site: cross-site) and with the session's CSRF token in
 * the x-flagstaff-csrf header. The SameSite=Strict cookie already keeps other sites out; this
 * is the second lock.
 */
export function assertSameOrigin(request: RequestFacts): void {
  if (request.fetchSite === "cross-site") throw new TRPCError({ code: "FORBIDDEN", message: "Cross-site request refused" });
  if (request.origin != null) {
    let originHost: string | null = null;
    try {
      originHost = new URL(request.origin).host;
    } catch {
      // "null" or garbage: refused below
    }
    if (!originHost || originHost !== request.host) throw new TRPCError({ code: "FORBIDDEN", message: "Cross-site request refused" });
  }
}

const ROLE_REFUSED = (needed: Role) => `This needs the ${needed} role`;

/**
 * Any authenticated caller: a secret or publishable key, or a dashboard session. Roles are
 * enforced here, once, for every procedure: a dashboard user needs "viewer" for queries,
 * "moderator" for mutations, or the role the procedure's meta names; a session's mutations
 * must also pass the CSRF and origin checks. Keys are limited by kind instead: secret keys act
 * as admins; publishable keys reach only procedures with `meta.publishable` (keyKindGate).
 */
export const authedProcedure = baseProcedure.use(({ ctx, next, type, meta }) => {
  if (!ctx.auth.ok) throw new TRPCError({ code: "UNAUTHORIZED", message: ctx.auth.reason });
  const caller = ctx.auth.caller;
  if (caller.session) {
    if (type === "mutation") {
      assertSameOrigin(ctx.request);
      if (!csrfMatches(caller.session.csrfToken, ctx.request.csrfHeader)) {
        throw new TRPCError({ code: "FORBIDDEN", message: "Missing or wrong CSRF token (x-flagstaff-csrf header)" });
      }
    }
    const needed: Role = meta?.role ?? (type === "mutation" ? "moderator" : "viewer");
    if (!hasRole(caller.role, needed)) throw new TRPCError({ code: "FORBIDDEN", message: ROLE_REFUSED(needed) });
  } else if (meta?.role && !hasRole(caller.role, meta.role)) {
    throw new TRPCError({ code: "FORBIDDEN", message: ROLE_REFUSED(meta.role) });
  }
  // The domain's context for this caller: every procedure hands it to the domain as is.
  const domain: DomainContext = domainContext(ctx.store, ctx.clock, caller.actor, caller.orgId);
  return next({ ctx: { caller, domain } });
});

/**
 * The same as authedProcedure (which refuses publishable keys everywhere but where the meta
 * allows them): the name most routers use, kept so they read as before.
 */
export const secretProcedure = authedProcedure;

/**
 * The project a procedure acts on, checked for the caller: a publishable key only reaches its
 * own project (403 otherwise); a project outside the caller's organization is a 404.
 */
export async function projectFor(ctx: Context & { caller: Caller; domain: DomainContext }, projectId: string): Promise<Project> {
  const key = ctx.caller.key;
  if (key?.kind === "publishable" && key.projectId !== projectId) {
    throw new DomainError("forbidden", "This publishable key belongs to another project");
  }
  return requireProject(ctx.domain, projectId);
}

/** The organization named by an organization route's `orgSlug`; another one's slug is a 404. */
export function organizationFor(ctx: Context & { caller: Caller; domain: DomainContext }, orgSlug: string): Promise<Organization> {
  return requireOrganizationBySlug(ctx.domain, orgSlug);
}
