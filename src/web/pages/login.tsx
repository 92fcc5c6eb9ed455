import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import type { SsoStartAnswer } from "../../domain/views/sso.ts";
import { setCsrfToken, trpc } from "../api.ts";
import { SsoFailureNote } from "../components/sso-failure.tsx";
import { navigate, useRoute } from "../router.ts";
import { Dialog, ErrorNote, Field } from "../ui.tsx";

/** The organization the sign-in page was last opened for (`#/sign-in?org=<slug>`), so single sign-on is offered again next time. */
const ORG_KEY = "flagstaff.signInOrg";

/**
 * The sign-in page. An organization with single sign-on is named in the address
 * (`#/sign-in?org=<slug>`, the link its settings page shows) or typed under "Single sign-on";
 * the page then offers "Sign in with <provider>" and, when the organization switched password
 * sign-in off, keeps the password form folded away for its admins (break-glass). A refused
 * sign-in through the provider comes back here with a reason's code, shown as its text.
 *
 * The button starts the sign-in from this page (`auth.ssoStart`, a request of this page only:
 * no other site can start one, src/api/routers/auth.ts), then goes to the address it answers.
 * When this browser is signed in to another organization (in another tab), the person is asked
 * first whether that session may end. Refused with `link_required` (an account with their email
 * exists, not linked yet), the password form proves the account: once signed in with it, the
 * page starts the sign-in again, the provider asking them to sign in there once more, and the
 * callback links the two.
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
  /** The session of another organization this browser has, which the person must agree to end (the start answered `confirm`). */
  const [confirming, setConfirming] = useState<{ signedInAs: Extract<SsoStartAnswer, { next: "confirm" }>["signedInAs"]; link: boolean } | null>(null);
  const startSso = useMutation({
    mutationKey: ["ssoStart"],
    mutationFn: (opts: { replaceSession: boolean; link: boolean }) => trpc.auth.ssoStart.mutate({ orgSlug: orgSlug!, ...opts }),
    onSuccess: (answer, opts) => {
      if (answer.next === "confirm") setConfirming({ signedInAs: answer.signedInAs, link: opts.link });
      else location.assign(answer.location);
    },
    // Started after a password sign-in (to link the account) and refused: the person is signed in all the same.
    onError: (_err, opts) => {
      if (opts.link) void qc.invalidateQueries({ queryKey: ["me"] });
    },
  });
  // Back from the provider's page to this one as the browser kept it (back/forward cache): the button works again.
  useEffect(() => {
    const shown = (e: PageTransitionEvent) => {
      if (e.persisted) startSso.reset();
    };
    addEventListener("pageshow", shown);
    return () => removeEventListener("pageshow", shown);
  }, [startSso.reset]);
  /** Back from the provider with `link_required`: the password sign-in proves the account, then links it. */
  const linking = failure === "link_required" && Boolean(orgSlug);
  const login = useMutation({
    mutationKey: ["login"],
    mutationFn: () => trpc.auth.login.mutate({ email, password }),
    onSuccess: (r) => {
      setCsrfToken(r.csrfToken);
      setPassword("");
      if (linking) startSso.mutate({ replaceSession: false, link: true });
      else void qc.invalidateQueries({ queryKey: ["me"] });
    },
  });
  const going = startSso.isPending || (startSso.isSuccess && startSso.data.next === "provider");
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
      <button type="submit" className={sso && !linking ? undefined : "primary"} disabled={login.isPending || going}>
        {login.isPending ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
  const endOther = confirming?.signedInAs;
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
        <SsoFailureNote code={failure} />
        {sso && (
          <p>
            <button type="button" className={linking ? undefined : "primary"} disabled={going} onClick={() => startSso.mutate({ replaceSession: false, link: false })}>
              Sign in with {sso.providerName}
            </button>
          </p>
        )}
        <ErrorNote error={startSso.error} />
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
      <Dialog open={confirming !== null} title="You are signed in to another organization" onClose={() => setConfirming(null)}>
        {endOther && (
          <div className="stack">
            <p>
              This browser is signed in to <strong>{endOther.organization}</strong> as <strong>{endOther.email}</strong>. Signing in with {sso?.providerName ?? "single sign-on"}{" "}
              ends that session.
            </p>
            <div className="actions">
              <button type="button" className="secondary" onClick={() => setConfirming(null)}>
                Stay signed in
              </button>
              <button
                type="button"
                className="primary"
                disabled={going}
                onClick={() => {
                  const link = confirming!.link;
                  setConfirming(null);
                  startSso.mutate({ replaceSession: true, link });
                }}
              >
                Sign out of {endOther.organization} and continue
              </button>
            </div>
          </div>
        )}
      </Dialog>
    </main>
  );
}
