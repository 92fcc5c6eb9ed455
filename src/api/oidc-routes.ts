/**
 * Single sign-on's stops in the browser (docs/sso.md), plain GET routes outside tRPC:
 * - `GET /auth/oidc/{orgSlug}/callback` (the redirect URI to register at the provider) finishes
 *   a sign-in and starts the Flagstaff session, the same cookie a password sign-in sets. It ends
 *   in a redirect: to the dashboard when signed in, else to its sign-in page with the reason's
 *   code (`#/sign-in?org=…&error=…`, the page shows the text), never in an error page. The
 *   provider's redirect back is a cross-site navigation, which does not carry the session cookie
 *   (SameSite=Strict); yet the callback must see the session the browser has (the only one it
 *   may end is the one the sign-in started from; a session of the account proves it). So an
 *   answer that arrives cross-site gets a page that asks for the same address again from this
 *   origin (a meta refresh: the page runs no script), and that request carries the cookie.
 * - `GET /auth/oidc/{orgSlug}/start` starts nothing: it only leads to the organization's sign-in
 *   page. A sign-in starts there, from the page itself (`auth.ssoStart`, src/api/routers/auth.ts),
 *   so a link from another site cannot sign the browser in to an account of that site's choosing
 *   (login CSRF), nor end the session it has.
 * The sign-in in progress rides a short-lived HttpOnly, SameSite=Lax cookie (Lax: the provider's
 * redirect back is a cross-site navigation, which a Strict cookie would not ride).
 */
import type { Elysia } from "elysia";
import { finishOidcSignIn, OIDC_COOKIE, OidcRefused } from "../domain/accounts/oidc-sign-in.ts";
import { readCookie, resolveSession, SESSION_COOKIE, SESSION_MAX_MS, sessionCookie } from "../domain/plumbing/sessions.ts";
import type { OidcFailure } from "../domain/views/sso.ts";
import { errorFields, log } from "../log.ts";
import { requestFacts, type Services } from "./context.ts";

export const OIDC_PREFIX = "/auth/oidc";

/** The sign-in cookie: HttpOnly, SameSite=Lax, on the callback's path only; Secure over https. */
export const signInCookie = (value: string, maxAgeMs: number, secure: boolean): string =>
  [
    `${OIDC_COOKIE}=${value}`,
    "HttpOnly",
    "SameSite=Lax",
    `Path=${OIDC_PREFIX}/`,
    `Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}`,
    ...(secure ? ["Secure"] : []),
  ].join("; ");

/**
 * Where the provider sends the browser back: this server as the browser reached it (https behind
 * a TLS-terminating proxy that says so). The host as the URL parser writes it (lower case, no
 * default port), so that the start and the callback name the same URI, which the provider
 * compares character for character. Throws on a host that is none.
 */
export function redirectUriOf(request: { secure: boolean; host: string }, orgSlug: string): string {
  const origin = new URL(`${request.secure ? "https" : "http"}://${request.host}`);
  return `${origin.protocol}//${origin.host}${OIDC_PREFIX}/${encodeURIComponent(orgSlug)}/callback`;
}

const redirectUriOfRequest = (request: Request, orgSlug: string): string =>
  redirectUriOf({ secure: requestFacts(request).secure, host: new URL(request.url).host }, orgSlug);

function redirect(location: string, cookies: string[]): Response {
  const headers = new Headers({ location, "cache-control": "no-store", "referrer-policy": "no-referrer" });
  for (const c of cookies) headers.append("set-cookie", c);
  return new Response(null, { status: 303, headers });
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Marks the callback's second request, made from this origin: finished whatever Sec-Fetch-Site says (a browser that sends none would otherwise come back for ever). */
const SAME_ORIGIN_MARK = "hop";

/**
 * Whether the callback's request carries the browser's SameSite=Strict session cookie: made from
 * this site, typed or bookmarked (`none`), or the second request the hop page made.
 */
function carriesStrictCookies(request: Request, url: URL): boolean {
  const site = request.headers.get("sec-fetch-site");
  return site === "same-origin" || site === "same-site" || site === "none" || url.searchParams.has(SAME_ORIGIN_MARK);
}

/** The page that asks for the callback again from this origin: an immediate meta refresh (no script: the CSP allows none), and a link. */
function hopPage(to: string): Response {
  const href = escapeHtml(to);
  const html = [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="refresh" content="0;url=${href}">`,
    "<title>Signing in to Flagstaff</title></head>",
    `<body><main><h1>Signing in to Flagstaff…</h1><p><a href="${href}">Continue</a></p></main></body></html>`,
  ].join("\n");
  return new Response(html, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "content-security-policy": "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      "x-frame-options": "DENY",
      "x-content-type-options": "nosniff",
    },
  });
}

const signInPage = (orgSlug: string): string => `/#/sign-in?${new URLSearchParams({ org: orgSlug })}`;
const refusedTo = (orgSlug: string, reason: OidcFailure): string => `/#/sign-in?${new URLSearchParams({ org: orgSlug, error: reason })}`;

function reasonOf(err: unknown, orgSlug: string, step: string): OidcFailure {
  if (err instanceof OidcRefused) {
    log.info(`single sign-on refused at ${step}`, { orgSlug, reason: err.reason, detail: err.detail });
    return err.reason;
  }
  log.error(`single sign-on failed at ${step}`, { orgSlug, ...errorFields(err) });
  return "provider_unreachable";
}

export function mountOidcRoutes(app: Elysia, services: Services): void {
  const allowPrivate = services.config.scanAllowPrivate;

  // Old links and bookmarks of the start: the sign-in page, where the person chooses to start.
  app.get(`${OIDC_PREFIX}/:orgSlug/start`, ({ params }) => redirect(signInPage(params.orgSlug), []));

  app.get(`${OIDC_PREFIX}/:orgSlug/callback`, async ({ request, params }) => {
    const orgSlug = params.orgSlug;
    const url = new URL(request.url);
    if (!carriesStrictCookies(request, url)) {
      const again = new URLSearchParams(url.searchParams);
      again.set(SAME_ORIGIN_MARK, "1");
      return hopPage(`${OIDC_PREFIX}/${encodeURIComponent(orgSlug)}/callback?${again}`);
    }
    const secure = requestFacts(request).secure;
    const cookies = request.headers.get("cookie");
    const cleared = signInCookie("", 0, secure);
    try {
      // The provider's answer as it came (openid-client checks its parameters), without the mark.
      const callbackUrl = new URL(redirectUriOfRequest(request, orgSlug));
      const answer = new URLSearchParams(url.searchParams);
      answer.delete(SAME_ORIGIN_MARK);
      callbackUrl.search = answer.toString();
      const sessionToken = readCookie(cookies, SESSION_COOKIE);
      const current = sessionToken ? await resolveSession(services, sessionToken) : null;
      const signedIn = await finishOidcSignIn(services, {
        orgSlug,
        token: readCookie(cookies, OIDC_COOKIE),
        callbackUrl,
        session: current ? { id: current.sessionId, orgId: current.orgId, userId: current.userId, email: current.email } : null,
        allowPrivate,
      });
      return redirect("/#/queue", [cleared, sessionCookie(signedIn.token, SESSION_MAX_MS, secure)]);
    } catch (err) {
      return redirect(refusedTo(orgSlug, reasonOf(err, orgSlug, "callback")), [cleared]);
    }
  });
}
