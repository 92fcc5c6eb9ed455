import { initTRPC, TRPCError } from "@trpc/server";
import type { z } from "zod";
import type { OpenApiMeta } from "trpc-to-openapi";
import { domainContext, type DomainContext } from "../domain/core/context.ts";
import { DomainError } from "../domain/core/errors.ts";
import { databaseUnavailable, ERROR_KINDS, publicMessage } from "./http-errors.ts";
import { requireProject, type Project } from "../domain/accounts/projects.ts";
import { requireOrganizationBySlug, type Organization } from "../domain/accounts/organizations.ts";
import { csrfMatches } from "../domain/plumbing/sessions.ts";
import { containsNul, NUL_REFUSED } from "../domain/views/validation.ts";
import { hasRole, type Role } from "../domain/accounts/users.ts";
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
  /**
   * The REST route also answers `text/csv` when its query says `format=csv`: this turns the
   * procedure's (JSON) result into the CSV text (src/api/rest.ts; documented by src/api/openapi.ts).
   */
  csv?: (result: never) => string;
  /**
   * An input field holding a file the procedure parses and checks for U+0000 line by line, with
   * a 400 naming the line (an evaluation import's `content`): the request-wide NUL check leaves
   * it to the procedure and checks every other field as ever.
   */
  nulCheckedPerLine?: string;
}>;

// isDev off: error responses never carry stack traces. The formatter is the transports' one
// scrub (publicMessage): an unforeseen error's message, which may hold SQL and its parameters,
// never reaches the client (server.ts logs it whole).
const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({ isDev: false, errorFormatter: ({ shape, error }) => ({ ...shape, message: publicMessage(error) }) });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * Domain errors become TRPCErrors with the matching code; the DomainError stays the cause. A
 * `retryAfter` (rate limiting) also becomes the Retry-After header, as on the REST routes.
 */
const translateDomainErrors = t.middleware(async ({ ctx, next }) => {
  const result = await next();
  if (!result.ok && !(result.error.cause instanceof DomainError)) {
    // A database fault is a 503 with Retry-After, not a 500 (src/db/faults.ts).
    const unavailable = databaseUnavailable(result.error.cause);
    if (unavailable) {
      ctx.resHeaders.set("Retry-After", String(unavailable.extra.retryAfter));
      throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: unavailable.message, cause: unavailable });
    }
  }
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

/** A 400 for input holding U+0000 anywhere (the rule: src/domain/views/validation.ts; authedProcedure checks it too). */
const refuseNul = t.middleware(async ({ getRawInput, next }) => {
  if (await inputHoldsNul(getRawInput)) throw new TRPCError({ code: "BAD_REQUEST", message: NUL_REFUSED });
  return next();
});

/**
 * Whether the raw input holds U+0000, but for the field `checkedPerLine` of an object input
 * (Meta.nulCheckedPerLine: the procedure checks it). Input that cannot be read at all is left
 * to the procedure: one that takes input answers its own 400, one that takes none ignores it
 * (as it did before this check existed).
 */
async function inputHoldsNul(getRawInput: () => Promise<unknown>, checkedPerLine?: string): Promise<boolean> {
  let raw: unknown;
  try {
    raw = await getRawInput();
  } catch {
    return false;
  }
  if (checkedPerLine !== undefined && typeof raw === "object" && raw !== null && !Array.isArray(raw)) {
    const { [checkedPerLine]: _checkedByTheProcedure, ...rest } = raw as Record<string, unknown>;
    return containsNul(rest);
  }
  return containsNul(raw);
}

/** Procedures anyone may call (signing in): domain errors are still translated. */
export const publicProcedure = baseProcedure.use(refuseNul);

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
 * Input holding U+0000 anywhere is a 400 here (containsNul), before anything reads it.
 */
export const authedProcedure = baseProcedure.use(async ({ ctx, next, type, meta, getRawInput }) => {
  const { caller, domain } = authorizeCall(ctx, type === "mutation" ? "mutation" : "query", meta);
  if (await inputHoldsNul(getRawInput, meta?.nulCheckedPerLine)) throw new TRPCError({ code: "BAD_REQUEST", message: NUL_REFUSED });
  return next({ ctx: { caller, domain } });
});

/**
 * authedProcedure's checks, for a route that is no procedure (an attachment's bytes, which
 * tRPC and its OpenAPI adapter cannot stream: src/api/attachment-routes.ts): authentication,
 * a session's CSRF and origin on a mutation, the role, and publishable keys refused (they reach
 * no such route). Answers the caller and the domain's context for them.
 */
export function authorizeCall(ctx: Context, type: "query" | "mutation", meta: Meta | undefined, opts: { publishableGate?: boolean } = {}): { caller: Caller; domain: DomainContext } {
  if (!ctx.auth.ok) throw new TRPCError({ code: "UNAUTHORIZED", message: ctx.auth.reason });
  const caller = ctx.auth.caller;
  if (opts.publishableGate && caller.key?.kind === "publishable" && !meta?.publishable) throw new TRPCError({ code: "FORBIDDEN", message: PUBLISHABLE_REFUSED });
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
  return { caller, domain: domainContext(ctx.store, ctx.clock, caller.actor, caller.orgId) };
}

/**
 * The same as authedProcedure (which refuses publishable keys everywhere but where the meta
 * allows them): the name most routers use, kept so they read as before.
 */
export const secretProcedure = authedProcedure;

// ---------------------------------------------------------------------------------------------
// Scoped procedures: the organization or project a procedure acts in, resolved for the caller
// once, here, and handed to the procedure in its context (`ctx.org`, `ctx.project`).
//
// Each is a function of the procedure's input schema rather than a builder with its own
// `.input()`: tRPC runs middlewares and input parsers in the order they were added, so a base
// that looked the organization up before the procedure's own `.input()` would answer 404 (or
// 403) for a request whose input is invalid. Here the whole input is parsed first, as one
// schema (so the OpenAPI documents are generated from exactly the schema the router wrote), and
// only then is the organization or project looked up. The order of checks is therefore:
// authentication (401), the key kind and role (403), input validation (400), then the
// organization and the project (404, or 403 for a publishable key of another project), then
// what the procedure adds after the scope: report creation's rate limit (429) comes last, so
// only a request that passed every other check spends one of the key's slots
// (src/api/routers/reports.ts).

/** What a scoped procedure's lookup sees: authedProcedure's context. */
type AuthedContext = Context & { caller: Caller; domain: DomainContext };

/**
 * An organization route (`orgSlug` in its input, which is the whole input `input` parses):
 * `ctx.org` is the caller's organization; another organization's slug is a 404.
 */
export function orgProcedure<I extends z.ZodType<{ orgSlug: string }>>(input: I) {
  return authedProcedure.input(input).use(async ({ ctx, input: parsed, next }) => {
    return next({ ctx: { org: await requireOrganizationBySlug(ctx.domain, parsed.orgSlug) } });
  });
}

/** What projectProcedure reads from a parsed input. */
interface ProjectScopeInput {
  projectId?: string;
  orgSlug?: string;
}
/** `ctx.project`: the project when the input requires `projectId`, else (a filter) the project or null. */
type ProjectOf<I extends z.ZodType<ProjectScopeInput>> = z.output<I> extends { projectId: string } ? Project : Project | null;
/** `ctx.org`: the organization on organization routes (`orgSlug` in the input), else null. */
type OrgOf<I extends z.ZodType<ProjectScopeInput>> = z.output<I> extends { orgSlug: string } ? Organization : null;

/**
 * The project a caller names, checked for the caller: a publishable key only reaches its own
 * project (403 otherwise); a project outside the caller's organization is a 404, like a
 * missing one.
 */
async function projectOfCaller(ctx: AuthedContext, projectId: string): Promise<Project> {
  const key = ctx.caller.key;
  if (key?.kind === "publishable" && key.projectId !== projectId) {
    throw new DomainError("forbidden", "This publishable key belongs to another project");
  }
  return requireProject(ctx.domain, projectId);
}

/**
 * The organization (when the input names one) then the project (when it names one) of a
 * parsed input. The overload types the answer from the schema `I` the input was parsed with,
 * which TypeScript cannot follow through tRPC's generic input: a schema whose output requires
 * `projectId` always yields a project, one with `orgSlug` always an organization.
 */
function projectScope<I extends z.ZodType<ProjectScopeInput>>(ctx: AuthedContext, input: ProjectScopeInput): Promise<{ org: OrgOf<I>; project: ProjectOf<I> }>;
async function projectScope(ctx: AuthedContext, input: ProjectScopeInput): Promise<{ org: Organization | null; project: Project | null }> {
  const org = input.orgSlug === undefined ? null : await requireOrganizationBySlug(ctx.domain, input.orgSlug);
  // An empty filter names no project (the dashboard's "all projects"), as it always has; a
  // required projectId is never empty (projectIdSchema), so a project route always gets one.
  const project = input.projectId ? await projectOfCaller(ctx, input.projectId) : null;
  return { org, project };
}

/**
 * A project route: `projectId` in its input (the SDK's routes), with `orgSlug` as well on
 * organization routes. `ctx.project` is the project, checked for the caller (projectOfCaller);
 * `ctx.org` the organization on organization routes (checked first), null on SDK routes. An
 * optional `projectId` is a filter: `ctx.project` is null when it is not given (or empty), and
 * a project the caller cannot see is still a 404. A required `projectId` must not accept the
 * empty string (projectIdSchema does not). Middlewares a procedure adds (`.use`) run after the
 * scope: the report rate limit is one.
 */
export function projectProcedure<I extends z.ZodType<ProjectScopeInput>>(input: I) {
  return authedProcedure.input(input).use(async ({ ctx, input: parsed, next }) => next({ ctx: await projectScope<I>(ctx, parsed) }));
}
