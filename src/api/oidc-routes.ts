/**
 * The browser's two stops of a single sign-on (docs/sso.md), plain GET routes outside tRPC:
 * - `GET /auth/oidc/{orgSlug}/start` sends the browser to the organization's provider, with the
 *   sign-in in progress in a short-lived HttpOnly, SameSite=Lax cookie (Lax: the provider's
 *   redirect back is a cross-site navigation, which a Strict cookie would not ride);
 * - `GET /auth/oidc/{orgSlug}/callback` (the redirect URI to register at the provider) finishes
 *   it and starts the Flagstaff session, the same cookie a password sign-in sets.
 * Each ends in a redirect: to the dashboard when signed in, else to its sign-in page with the
 * reason's code (`#/sign-in?org=…&error=…`, the page shows the text), never in an error page.
 */
import type { Elysia } from "elysia";
import { finishOidcSignIn, OIDC_COOKIE, OIDC_SIGN_IN_TTL_MS, OidcRefused, startOidcSignIn } from "../domain/accounts/oidc-sign-in.ts";
import { readCookie, resolveSession, SESSION_COOKIE, SESSION_MAX_MS, sessionCookie } from "../domain/plumbing/sessions.ts";
import type { OidcFailure } from "../domain/views/sso.ts";
import { errorFields, log } from "../log.ts";
import { clientAddressOf } from "./client-address.ts";
import { requestFacts, type Services } from "./context.ts";

export const OIDC_PREFIX = "/auth/oidc";

const signInCookie = (value: string, maxAgeMs: number, secure: boolean): string =>
  [
    `${OIDC_COOKIE}=${value}`,
    "HttpOnly",
    "SameSite=Lax",
    `Path=${OIDC_PREFIX}/`,
    `Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}`,
    ...(secure ? ["Secure"] : []),
  ].join("; ");

/** Where the provider sends the browser back: this server as the browser reached it (https behind a TLS-terminating proxy that says so). */
function redirectUriOf(request: Request, orgSlug: string): string {
  const url = new URL(request.url);
  const scheme = requestFacts(request).secure ? "https" : "http";
  return `${scheme}://${url.host}${OIDC_PREFIX}/${encodeURIComponent(orgSlug)}/callback`;
}

function redirect(location: string, cookies: string[]): Response {
  const headers = new Headers({ location, "cache-control": "no-store", "referrer-policy": "no-referrer" });
  for (const c of cookies) headers.append("set-cookie", c);
  return new Response(null, { status: 303, headers });
}

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
  const clientAddress = clientAddressOf(services.config.trustedProxies);

  app.get(`${OIDC_PREFIX}/:orgSlug/start`, async ({ request, params, server }) => {
    const orgSlug = params.orgSlug;
    const secure = requestFacts(request).secure;
    try {
      const started = await startOidcSignIn(services, {
        orgSlug,
        redirectUri: redirectUriOf(request, orgSlug),
        clientAddress: clientAddress(server?.requestIP(request)?.address ?? null, request.headers.get("x-forwarded-for")),
        allowPrivate,
      });
      return redirect(started.location, [signInCookie(started.token, OIDC_SIGN_IN_TTL_MS, secure)]);
    } catch (err) {
      return redirect(refusedTo(orgSlug, reasonOf(err, orgSlug, "start")), []);
    }
  });

  app.get(`${OIDC_PREFIX}/:orgSlug/callback`, async ({ request, params }) => {
    const orgSlug = params.orgSlug;
    const secure = requestFacts(request).secure;
    const cookies = request.headers.get("cookie");
    const cleared = signInCookie("", 0, secure);
    try {
      const callbackUrl = new URL(redirectUriOf(request, orgSlug));
      callbackUrl.search = new URL(request.url).search;
      const sessionToken = readCookie(cookies, SESSION_COOKIE);
      const current = sessionToken ? await resolveSession(services, sessionToken) : null;
      const signedIn = await finishOidcSignIn(services, {
        orgSlug,
        token: readCookie(cookies, OIDC_COOKIE),
        callbackUrl,
        replacesSessionId: current?.sessionId ?? null,
        allowPrivate,
      });
      return redirect("/#/queue", [cleared, sessionCookie(signedIn.token, SESSION_MAX_MS, secure)]);
    } catch (err) {
      return redirect(refusedTo(orgSlug, reasonOf(err, orgSlug, "callback")), [cleared]);
    }
  });
}
