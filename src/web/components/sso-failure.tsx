import { isOidcFailure, OIDC_FAILURES } from "../../domain/views/sso.ts";

/**
 * Why a sign-in through the provider did not happen: the callback sends the dashboard a reason's
 * code (`#/sign-in?…&error=<code>`), shown as its text, never a text of the address's own. On the
 * sign-in page, and on the queue of a browser signed in meanwhile to another organization.
 */
export function SsoFailureNote({ code }: { code: string | null }) {
  if (!code) return null;
  return (
    <p className="error" role="alert">
      {isOidcFailure(code) ? OIDC_FAILURES[code] : "Single sign-on did not complete: start again."}
    </p>
  );
}
