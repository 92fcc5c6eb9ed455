import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { isOidcFailure, OIDC_FAILURES } from "../../domain/views/sso.ts";
import { setCsrfToken, trpc } from "../api.ts";
import { navigate, useRoute } from "../router.ts";
import { ErrorNote, Field } from "../ui.tsx";

/** The organization the sign-in page was last opened for (`#/sign-in?org=<slug>`), so single sign-on is offered again next time. */
const ORG_KEY = "flagstaff.signInOrg";

/**
 * The sign-in page. An organization with single sign-on is named in the address
 * (`#/sign-in?org=<slug>`, the link its settings page shows) or typed under "Single sign-on";
 * the page then offers "Sign in with <provider>" and, when the organization switched password
 * sign-in off, keeps the password form folded away for its admins (break-glass). A refused
 * sign-in through the provider comes back here with a reason's code, shown as its text.
 */
export function LoginPage() {
  const qc = useQueryClient();
  const route = useRoute();
  const orgInAddress = route.page === "sign-in" ? route.query.get("org") : null;
  const failure = route.page === "sign-in" ? route.query.get("error") : null;
  const [orgSlug, setOrgSlug] = useState<string | null>(() => orgInAddress ?? localStorage.getItem(ORG_KEY));
  const [orgDraft, setOrgDraft] = useState("");
  useEffect(() => {
    if (orgInAddress) {
      setOrgSlug(orgInAddress);
      localStorage.setItem(ORG_KEY, orgInAddress);
    }
  }, [orgInAddress]);
  const options = useQuery({
    queryKey: ["signInOptions", orgSlug],
    queryFn: () => trpc.auth.signInOptions.query({ orgSlug: orgSlug! }),
    enabled: Boolean(orgSlug),
  });
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const login = useMutation({
    mutationKey: ["login"],
    mutationFn: () => trpc.auth.login.mutate({ email, password }),
    onSuccess: (r) => {
      setCsrfToken(r.csrfToken);
      setPassword("");
      void qc.invalidateQueries({ queryKey: ["me"] });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    login.mutate();
  };
  const chooseOrg = (e: FormEvent) => {
    e.preventDefault();
    const slug = orgDraft.trim().toLowerCase();
    if (slug) navigate(`/sign-in?${new URLSearchParams({ org: slug })}`);
  };
  const sso = options.data?.sso ?? null;
  const passwordOff = options.data?.passwordSignIn === false;
  const passwordForm = (
    <form className="login-password" onSubmit={submit}>
      <Field label="Email">
        <input type="email" name="email" autoComplete="username" required autoFocus={!sso} value={email} onChange={(e) => setEmail(e.target.value)} />
      </Field>
      <Field label="Password">
        <input type="password" name="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
      </Field>
      <ErrorNote error={login.error} />
      <button type="submit" className={sso ? undefined : "primary"} disabled={login.isPending}>
        {login.isPending ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
  return (
    <main className="login">
      <section className="card login-card" aria-labelledby="login-title">
        <h1 id="login-title">
          <svg viewBox="0 0 16 16" width="22" height="22" aria-hidden="true">
            <path d="M3 1v14" stroke="currentColor" strokeWidth="2" />
            <path d="M4 2h9l-2 3 2 3H4z" fill="#d9480f" />
          </svg>
          Sign in to Flagstaff
        </h1>
        {failure && (
          <p className="error" role="alert">
            {isOidcFailure(failure) ? OIDC_FAILURES[failure] : "Single sign-on did not complete: start again."}
          </p>
        )}
        {sso && (
          <p>
            <a className="button primary" href={sso.startPath}>
              Sign in with {sso.providerName}
            </a>
          </p>
        )}
        {passwordOff ? (
          <details>
            <summary>Password sign-in is off for this organization: admins only</summary>
            {passwordForm}
          </details>
        ) : (
          passwordForm
        )}
        {!sso && (
          <details className="login-sso">
            <summary>Single sign-on</summary>
            <form onSubmit={chooseOrg} aria-label="Single sign-on">
              <Field label="Organization" hint="Its short name, as in your organization's Flagstaff sign-in link">
                <input name="org" autoComplete="organization" value={orgDraft} onChange={(e) => setOrgDraft(e.target.value)} />
              </Field>
              {orgSlug && options.data && !options.data.sso && <p className="muted">This organization has no single sign-on.</p>}
              <button type="submit">Continue</button>
            </form>
          </details>
        )}
        <p className="muted small-print">The first admin login is printed once by <code>flagstaff init</code> or the first <code>flagstaff serve</code>.</p>
      </section>
    </main>
  );
}
