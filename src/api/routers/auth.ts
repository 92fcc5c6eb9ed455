import { z } from "zod";
import { signInOptions } from "../../domain/accounts/oidc-config.ts";
import { getOrganization } from "../../domain/accounts/organizations.ts";
import { signInOptionsSchema } from "../../domain/views/sso.ts";
import { changeOwnPassword, clearSessionCookie, deleteSession, SESSION_MAX_MS, sessionCookie, signIn } from "../../domain/plumbing/sessions.ts";
import { MAX_PASSWORD, MIN_PASSWORD, requireUser, toUserView } from "../../domain/accounts/users.ts";
import { VERSION } from "../../version.ts";
import { assertSameOrigin, authedProcedure, publicProcedure, router } from "../trpc.ts";

const orgView = (o: { id: string; slug: string; name: string; plan: string }) => ({ id: o.id, slug: o.slug, name: o.name, plan: o.plan });

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
