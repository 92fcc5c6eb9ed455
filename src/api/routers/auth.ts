import { z } from "zod";
import type { ReadContext } from "../../domain/context.ts";
import { DomainError } from "../../domain/errors.ts";
import { getOrganization } from "../../domain/organizations.ts";
import {
  checkPassword,
  clearSessionCookie,
  createSession,
  deleteOtherSessions,
  deleteSession,
  SESSION_MAX_MS,
  sessionCookie,
} from "../../domain/sessions.ts";
import { hashPassword, MAX_PASSWORD, MIN_PASSWORD, normalizeEmail, requireUser, setUserPasswordHash, toUserView } from "../../domain/users.ts";
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
      const read: ReadContext = { store: ctx.store, db: ctx.store.db, clock: ctx.clock };
      // Throttled (429 with Retry-After) before the password is checked: src/domain/sessions.ts.
      const user = await checkPassword(read, { email: normalizeEmail(input.email), password: input.password, ip: ctx.request.ip ?? "unknown" });
      // One message whether the email is unknown, the account disabled or the password wrong.
      if (!user) throw new DomainError("unauthorized", "Wrong email or password");
      // A sign-in always starts a new session (no fixation); the browser's old one ends.
      if (ctx.auth.ok && ctx.auth.caller.session) await deleteSession(read, ctx.auth.caller.session.id);
      const session = await createSession(read, user);
      ctx.resHeaders.append("set-cookie", sessionCookie(session.token, SESSION_MAX_MS, ctx.request.secure));
      return { user: toUserView(user), org: orgView(await getOrganization({ db: read.db, orgId: user.orgId })), csrfToken: session.csrfToken };
    }),

  /** Who is signed in, their organization, and the CSRF token for mutations. */
  me: authedProcedure.query(async ({ ctx }) => {
    const c = ctx.caller;
    return {
      user: c.user ? toUserView(await requireUser(ctx.domain, c.user.id)) : null,
      role: c.role,
      org: orgView(await getOrganization(ctx.domain)),
      csrfToken: c.session?.csrfToken ?? null,
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
      const c = ctx.caller;
      if (!c.user || !c.session) throw new DomainError("bad_request", "Only a signed-in dashboard user has a password");
      // Throttled like a sign-in, so a borrowed session cannot guess the password faster.
      // Only the caller's own account (the same email may have accounts in other organizations).
      const user = await checkPassword(ctx.domain, { email: c.user.email, password: input.currentPassword, ip: ctx.request.ip ?? "unknown", orgId: c.orgId });
      if (!user) throw new DomainError("forbidden", "The current password is wrong");
      const passwordHash = await hashPassword(input.newPassword);
      await setUserPasswordHash(ctx.domain, { userId: user.id, passwordHash });
      await deleteOtherSessions(ctx.domain, { userId: user.id, keepSessionId: c.session.id });
      return { ok: true as const };
    }),
});
