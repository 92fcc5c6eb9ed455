import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { PROVISIONING, type OidcSettingsInput } from "../../domain/views/sso.ts";
import { ROLES, type Role } from "../../domain/views/user.ts";
import { trpc } from "../api.ts";
import { ErrorNote, Field, Loading, useToast } from "../ui.tsx";

type Draft = Omit<OidcSettingsInput, "clientSecret" | "allowedDomains" | "groupRoles"> & { clientSecret: string; allowedDomains: string; groupRoles: string };

const EMPTY: Draft = {
  enabled: false,
  providerName: "",
  issuerUrl: "",
  clientId: "",
  clientSecret: "",
  allowedDomains: "",
  groupsClaim: "groups",
  groupRoles: "",
  defaultRole: null,
  provisioning: "existing_only",
  passwordSignIn: true,
  providerOmitsEmailVerified: false,
  linkByVerifiedEmail: false,
};

const PROVISIONING_LABEL: Record<(typeof PROVISIONING)[number], string> = {
  just_in_time: "Create the account at the first sign-in",
  existing_only: "Only users already added here",
};

/** "group = role" lines to mappings; a line that is not one is kept for the server to refuse. */
function parseGroupRoles(text: string): OidcSettingsInput["groupRoles"] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const at = l.lastIndexOf("=");
      return { group: l.slice(0, at < 0 ? l.length : at).trim(), role: l.slice(at + 1).trim() as Role };
    });
}

/** A switch of the settings, with the hint that says what it trusts. */
function Switch({ id, label, hint, checked, onChange }: { id: string; label: string; hint: string; checked: boolean; onChange: (on: boolean) => void }) {
  return (
    <div className="switch">
      <input id={id} type="checkbox" aria-describedby={`${id}-hint`} checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <span>
        <label htmlFor={id}>
          <strong>{label}</strong>
        </label>
        <span id={`${id}-hint`} className="field-hint">
          {hint}
        </span>
      </span>
    </div>
  );
}

/**
 * The organization's single sign-on (admins, on the Users page): the provider, who may sign in
 * and as what, what its email claims are trusted for, and whether passwords stay on. The client
 * secret is write-only. The redirect URI to register at the provider and the sign-in link to
 * share are shown.
 */
export function SsoSettings({ orgSlug }: { orgSlug: string }) {
  const qc = useQueryClient();
  const toast = useToast();
  const key = ["sso", orgSlug];
  const current = useQuery({ queryKey: key, queryFn: () => trpc.sso.get.query({ orgSlug }) });
  const [draft, setDraft] = useState<Draft>(EMPTY);
  useEffect(() => {
    const s = current.data?.settings;
    if (s) setDraft({ ...s, clientSecret: "", allowedDomains: s.allowedDomains.join(", "), groupRoles: s.groupRoles.map((m) => `${m.group} = ${m.role}`).join("\n") });
  }, [current.data]);
  const save = useMutation({
    mutationFn: () =>
      trpc.sso.set.mutate({
        orgSlug,
        ...draft,
        clientSecret: draft.clientSecret || undefined,
        allowedDomains: draft.allowedDomains.split(/[\s,]+/).filter(Boolean),
        groupRoles: parseGroupRoles(draft.groupRoles),
      }),
    onSuccess: (r) => {
      qc.setQueryData(key, r);
      toast("Single sign-on saved");
    },
  });
  // The form's issuer, saved or not: it is tested before the provider is offered to anyone.
  const discover = useMutation({ mutationFn: () => trpc.sso.testDiscovery.mutate({ orgSlug, issuerUrl: draft.issuerUrl.trim() }) });
  if (current.isPending) return <Loading />;
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => setDraft({ ...draft, [k]: v });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const redirectUri = `${location.origin}/auth/oidc/${encodeURIComponent(orgSlug)}/callback`;
  const signInLink = `${location.origin}/#/sign-in?org=${encodeURIComponent(orgSlug)}`;
  const secretSet = current.data?.settings?.clientSecretSet ?? false;
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="sso-title">
      <h2 id="sso-title">Single sign-on (OIDC)</h2>
      <p className="muted">
        Register <code>{redirectUri}</code> as the redirect URI at your provider. Your people sign in at <code>{signInLink}</code>.
      </p>
      <ErrorNote error={current.error} />
      <div className="switch">
        <input id="sso-enabled" type="checkbox" checked={draft.enabled} onChange={(e) => set("enabled", e.target.checked)} />
        <label htmlFor="sso-enabled">
          <strong>Offer single sign-on</strong>
        </label>
      </div>
      <Field label="Provider name" hint='On the sign-in button: "Sign in with …"'>
        <input required maxLength={60} value={draft.providerName} onChange={(e) => set("providerName", e.target.value)} />
      </Field>
      <Field label="Issuer URL" hint="https; its /.well-known/openid-configuration is read">
        <input
          required
          type="url"
          value={draft.issuerUrl}
          onChange={(e) => {
            set("issuerUrl", e.target.value);
            // A discovery shown is the issuer's it was read from: another issuer is tested afresh.
            discover.reset();
          }}
        />
      </Field>
      <Field label="Client ID">
        <input required value={draft.clientId} onChange={(e) => set("clientId", e.target.value)} />
      </Field>
      <Field label="Client secret" hint={secretSet ? "Stored, never shown: leave empty to keep it" : "Required: stored, never shown again"}>
        <input type="password" autoComplete="off" required={!secretSet} value={draft.clientSecret} onChange={(e) => set("clientSecret", e.target.value)} />
      </Field>
      <Field label="Allowed domains" hint="Of the addresses that may sign in, comma-separated; empty: any domain">
        <input value={draft.allowedDomains} onChange={(e) => set("allowedDomains", e.target.value)} />
      </Field>
      <Field label="Groups claim" hint="The ID token's claim with the groups or roles">
        <input required value={draft.groupsClaim} onChange={(e) => set("groupsClaim", e.target.value)} />
      </Field>
      <Field label="Groups and roles" hint={`One "group = role" a line (${ROLES.join(", ")}); the highest applies, at every sign-in`}>
        <textarea rows={4} value={draft.groupRoles} onChange={(e) => set("groupRoles", e.target.value)} />
      </Field>
      <Field label="In no mapped group">
        <select value={draft.defaultRole ?? ""} onChange={(e) => set("defaultRole", e.target.value === "" ? null : (e.target.value as Role))}>
          <option value="">Refused</option>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              Signs in as {r}
            </option>
          ))}
        </select>
      </Field>
      <Field label="New people">
        <select value={draft.provisioning} onChange={(e) => set("provisioning", e.target.value as Draft["provisioning"])}>
          {PROVISIONING.map((p) => (
            <option key={p} value={p}>
              {PROVISIONING_LABEL[p]}
            </option>
          ))}
        </select>
      </Field>
      <Switch
        id="sso-passwords"
        label="Password sign-in"
        hint="Off: only single sign-on, but admins keep their passwords (break-glass)."
        checked={draft.passwordSignIn}
        onChange={(on) => set("passwordSignIn", on)}
      />
      <Switch
        id="sso-omits-verified"
        label="The provider never sends email_verified"
        hint="On: an address without the claim counts as verified (Entra ID). Only for a provider whose addresses are all its own, set by its admins. Off: only email_verified true signs in."
        checked={draft.providerOmitsEmailVerified}
        onChange={(on) => set("providerOmitsEmailVerified", on)}
      />
      <Switch
        id="sso-link-by-email"
        label="Link existing accounts by verified email"
        hint="On: an account added here links at its first sign-in with the same verified email. Off: its owner signs in with its password first, or an admin links it."
        checked={draft.linkByVerifiedEmail}
        onChange={(on) => set("linkByVerifiedEmail", on)}
      />
      <ErrorNote error={save.error} />
      <ErrorNote error={discover.error} />
      {discover.data && (
        <p role="status">
          The provider answered: issuer <code>{discover.data.discovery.issuer}</code>, sign-in at <code>{discover.data.discovery.authorizationEndpoint}</code>
          {discover.data.discovery.tokenEndpoint && (
            <>
              , tokens at <code>{discover.data.discovery.tokenEndpoint}</code>
            </>
          )}
          .
        </p>
      )}
      <div className="actions">
        <button type="button" className="ghost" disabled={!draft.issuerUrl.trim() || discover.isPending} onClick={() => discover.mutate()}>
          Test discovery
        </button>
        <button type="submit" className="primary" disabled={save.isPending}>
          Save single sign-on
        </button>
      </div>
    </form>
  );
}
