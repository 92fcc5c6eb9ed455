import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { signInOptions } from "../../domain/accounts/oidc-config.ts";
import { OIDC_SIGN_IN_TTL_MS, startOidcSignIn } from "../../domain/accounts/oidc-sign-in.ts";
import { getOrganization } from "../../domain/accounts/organizations.ts";
import { signInOptionsSchema, ssoStartAnswerSchema } from "../../domain/views/sso.ts";
import type { RequestFacts } from "../context.ts";
import { redirectUriOf, signInCookie } from "../oidc-routes.ts";
import { changeOwnPassword, signIn } from "../../domain/accounts/passwords.ts";
import { clearSessionCookie, deleteSession, SESSION_MAX_MS, sessionCookie } from "../../domain/plumbing/sessions.ts";
import { MAX_PASSWORD, MIN_PASSWORD, requireUser, toUserView } from "../../domain/accounts/users.ts";
import { VERSION } from "../../version.ts";
import { assertSameOrigin, authedProcedure, publicProcedure, router } from "../trpc.ts";

const orgView = (o: { id: string; slug: string; name: string; plan: string }) => ({ id: o.id, slug: o.slug, name: o.name, plan: o.plan });

/**
 * A request of Flagstaff's own page: what assertSameOrigin checks (no other site's Origin, not
 * Sec-Fetch-Site: cross-site), and one of the two present. Browsers send Origin with every
 * POST a page's script makes, so only a request that is no browser's lacks both; it is refused
 * too, since a sign-in's start is a browser's alone.
 */
function assertFromOwnPage(request: RequestFacts): void {
  assertSameOrigin(request);
  if (request.origin == null && request.fetchSite !== "same-origin") {
    throw new TRPCError({ code: "FORBIDDEN", message: "Single sign-on starts from Flagstaff's sign-in page only" });
  }
}

/**
 * Dashboard sign-in (tRPC only). A session lives in an HttpOnly, SameSite=Strict cookie; the
 * CSRF token the dashboard must send on mutations comes back from login and me.
 */
export const authRouter = router({
  login: publicProcedure
    .meta({ unbatched: true })
    .input(z.object({ email: z.string().trim().min(3).max(320), password: z.string().min(1).max(MAX_PASSWORD) }))
    .mutation(async ({ ctx, input }) => {
      assertSameOrigin(ctx.request);
      // Nobody is signed in yet: the domain reads and writes with no organization of its own.
      const signedIn = await signIn(
        { store: ctx.store, db: ctx.store.db, clock: ctx.clock },
        { email: input.email, password: input.password, ip: ctx.request.ip, replacesSessionId: ctx.auth.ok ? ctx.auth.caller.session?.id : null },
      );
      ctx.resHeaders.append("set-cookie", sessionCookie(signedIn.token, SESSION_MAX_MS, ctx.request.secure));
      return { user: signedIn.user, org: orgView(signedIn.org), csrfToken: signedIn.csrfToken };
    }),

  /**
   * What the sign-in page offers for an organization (`#/sign-in?org=<slug>`): its provider's
   * button, and whether password sign-in is on. An unknown slug answers like an organization
   * without single sign-on.
   */
  signInOptions: publicProcedure
    .input(z.object({ orgSlug: z.string().trim().min(1).max(64) }))
    .output(signInOptionsSchema)
    .query(({ ctx, input }) => signInOptions(ctx.store, input.orgSlug)),

  /**
   * Starts a sign-in through the organization's provider (docs/sso.md), from the sign-in page
   * only: a request of Flagstaff's own page (assertFromOwnPage), which no link or form of
   * another site can make, so none can sign the browser in to an account of its choosing (login
   * CSRF) or end its session. Answers the provider's address to go to, with the sign-in cookie;
   * or, when the browser is signed in to another organization and `replaceSession` is not set,
   * who it is signed in as, for the page to ask the person first (nothing started). `link`: the
   * person, signed in with the account's password, links it: the provider asks them to sign in
   * again.
   */
  ssoStart: publicProcedure
    .meta({ unbatched: true })
    .input(z.object({ orgSlug: z.string().trim().min(1).max(64), replaceSession: z.boolean().default(false), link: z.boolean().default(false) }))
    .output(ssoStartAnswerSchema)
    .mutation(async ({ ctx, input }) => {
      assertFromOwnPage(ctx.request);
      let redirectUri: string;
      try {
        redirectUri = redirectUriOf({ secure: ctx.request.secure, host: ctx.request.host ?? "" }, input.orgSlug);
      } catch {
        throw new TRPCError({ code: "BAD_REQUEST", message: "The Host header names no host" });
      }
      const caller = ctx.auth.ok ? ctx.auth.caller : null;
      const started = await startOidcSignIn(
        { store: ctx.store, db: ctx.store.db, clock: ctx.clock },
        {
          orgSlug: input.orgSlug,
          redirectUri,
          clientAddress: ctx.request.ip,
          session: caller?.session && caller.user ? { id: caller.session.id, orgId: caller.orgId, userId: caller.user.id, email: caller.user.email } : null,
          replaceSession: input.replaceSession,
          reauthenticate: input.link,
          allowPrivate: ctx.config.scanAllowPrivate,
        },
      );
      if (started.next === "confirm") return started;
      ctx.resHeaders.append("set-cookie", signInCookie(started.token, OIDC_SIGN_IN_TTL_MS, ctx.request.secure));
      return { next: "provider" as const, location: started.location };
    }),

  /** Who is signed in, their organization, the CSRF token for mutations, and the server's release (the dashboard's footer). */
  me: authedProcedure.query(async ({ ctx }) => {
    const c = ctx.caller;
    return {
      user: c.user ? toUserView(await requireUser(ctx.domain, c.user.id)) : null,
      role: c.role,
      org: orgView(await getOrganization(ctx.domain)),
      csrfToken: c.session?.csrfToken ?? null,
      version: VERSION,
    };
  }),

  logout: authedProcedure.meta({ role: "viewer" }).mutation(async ({ ctx }) => {
    if (ctx.caller.session) await deleteSession(ctx.domain, ctx.caller.session.id);
    ctx.resHeaders.append("set-cookie", clearSessionCookie(ctx.request.secure));
    return { ok: true as const };
  }),

  /** Any signed-in user changes their own password; their other sessions end. */
  changePassword: authedProcedure
    .meta({ role: "viewer", unbatched: true })
    .input(z.object({ currentPassword: z.string().min(1).max(MAX_PASSWORD), newPassword: z.string().min(MIN_PASSWORD).max(MAX_PASSWORD) }))
    .mutation(async ({ ctx, input }) => {
      const { user, session } = ctx.caller;
      await changeOwnPassword(ctx.domain, {
        account: user && session ? { email: user.email, sessionId: session.id } : null,
        currentPassword: input.currentPassword,
        newPassword: input.newPassword,
        ip: ctx.request.ip,
      });
      return { ok: true as const };
    }),
});
