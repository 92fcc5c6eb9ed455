import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import type { SsoLinkState } from "../../domain/views/sso.ts";
import { ROLES } from "../../domain/views/user.ts";
import { errorMessage, trpc, type Role } from "../api.ts";
import { SsoSettings } from "../components/sso-settings.tsx";
import { useSession } from "../session.tsx";
import { dateTime, ErrorNote, Field, QueryTable, SecretDialog, useToast } from "../ui.tsx";

/** How an account stands with the organization's provider, in the Users table (docs/sso.md, "Linking accounts"). */
const LINK_LABEL: Record<SsoLinkState, string> = {
  linked: "linked",
  allowed: "links at next sign-in",
  none: "not linked",
};

const ROLE_HELP: Record<Role, string> = {
  viewer: "reads everything, changes nothing",
  moderator: "works the queue: takes cases, decides, writes notes",
  admin: "also manages projects, settings, keys, webhooks and users",
};

export function UsersPage() {
  const { me, orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const users = useQuery({ queryKey: ["users"], queryFn: () => trpc.users.list.query() });
  const [form, setForm] = useState({ email: "", role: "moderator" as Role, password: "" });
  const [secret, setSecret] = useState<{ email: string; password: string } | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: ["users"] });
  // Empty while single sign-on is not set up: the table then has no column for it.
  const links = useQuery({ queryKey: ["sso", orgSlug, "links"], queryFn: () => trpc.sso.links.query({ orgSlug }) });
  const linkOf = new Map((links.data?.links ?? []).map((l) => [l.userId, l.state] as const));
  const allowLink = useMutation({
    mutationFn: (u: { id: string; email: string }) => trpc.sso.allowLink.mutate({ orgSlug, userId: u.id }),
    onSuccess: (_r, u) => {
      toast(`${u.email} links at the next sign-in through single sign-on`);
      void qc.invalidateQueries({ queryKey: ["sso", orgSlug, "links"] });
    },
    onError: (e) => toast(errorMessage(e), "error"),
  });
  const create = useMutation({
    mutationFn: () => trpc.users.create.mutate({ email: form.email, role: form.role, password: form.password || undefined }),
    onSuccess: (r) => {
      if (r.generatedPassword) setSecret({ email: r.user.email, password: r.generatedPassword });
      else toast(`${r.user.email} can sign in now`);
      setForm({ email: "", role: form.role, password: "" });
      void refresh();
    },
  });
  const act = useMutation({
    mutationFn: async (a: { kind: "role"; userId: string; role: Role } | { kind: "disable" | "enable" | "reset"; userId: string }) => {
      if (a.kind === "role") return { r: await trpc.users.setRole.mutate({ userId: a.userId, role: a.role }), password: null };
      if (a.kind === "disable") return { r: await trpc.users.disable.mutate({ userId: a.userId }), password: null };
      if (a.kind === "enable") return { r: await trpc.users.enable.mutate({ userId: a.userId }), password: null };
      const r = await trpc.users.resetPassword.mutate({ userId: a.userId });
      return { r, password: r.generatedPassword };
    },
    onSuccess: ({ r, password }) => {
      if (password) setSecret({ email: r.user.email, password });
      else toast(`${r.user.email} updated`);
      void refresh();
    },
    onError: (e) => toast(errorMessage(e), "error"),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <section aria-labelledby="users-title">
      <div className="page-head">
        <h1 id="users-title">Users</h1>
        <p className="muted">
          Roles: <strong>viewer</strong> {ROLE_HELP.viewer}; <strong>moderator</strong> {ROLE_HELP.moderator}; <strong>admin</strong> {ROLE_HELP.admin}.
        </p>
      </div>
      <form className="card inline-form" onSubmit={submit} aria-label="Add a user">
        <Field label="Email">
          <input type="email" name="new-user-email" value={form.email} onChange={(e) => setForm({ ...form, email: e.target.value })} required autoComplete="off" />
        </Field>
        <Field label="Role">
          <select name="new-user-role" value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as Role })}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Password (optional)" hint="Empty: Flagstaff generates one and shows it once.">
          <input type="password" value={form.password} minLength={12} onChange={(e) => setForm({ ...form, password: e.target.value })} autoComplete="new-password" />
        </Field>
        <button type="submit" className="primary" disabled={create.isPending}>
          Add user
        </button>
        <ErrorNote error={create.error} />
      </form>
      <QueryTable
        error={users.error}
        pending={users.isPending}
        columns={[
          { label: "Email" },
          { label: "Role" },
          { label: "Added" },
          { label: "State" },
          ...(linkOf.size > 0 ? [{ label: "Single sign-on" }] : []),
          { label: "Actions", srOnly: true },
        ]}
      >
        {(users.data?.users ?? []).map((u) => {
          const self = u.id === me.user.id;
          return (
            <tr key={u.id} className={u.disabledAt ? "dim" : ""}>
              <td>
                {u.email} {self && <span className="muted">(you)</span>}
              </td>
              <td>
                <select
                  aria-label={`Role of ${u.email}`}
                  value={u.role}
                  disabled={act.isPending}
                  onChange={(e) => act.mutate({ kind: "role", userId: u.id, role: e.target.value as Role })}
                >
                  {ROLES.map((r) => (
                    <option key={r} value={r}>
                      {r}
                    </option>
                  ))}
                </select>
              </td>
              <td>{dateTime(u.createdAt)}</td>
              <td>{u.disabledAt ? `disabled ${dateTime(u.disabledAt)}` : "active"}</td>
              {linkOf.size > 0 && <td>{LINK_LABEL[linkOf.get(u.id) ?? "none"]}</td>}
              <td className="row-actions">
                {!self &&
                  (u.disabledAt ? (
                    <button type="button" className="small secondary" onClick={() => act.mutate({ kind: "enable", userId: u.id })}>
                      Enable
                    </button>
                  ) : (
                    <button
                      type="button"
                      className="small danger"
                      onClick={() => confirm(`Disable ${u.email}? Their sessions end at once.`) && act.mutate({ kind: "disable", userId: u.id })}
                    >
                      Disable
                    </button>
                  ))}
                {!self && (
                  <button
                    type="button"
                    className="small secondary"
                    onClick={() => confirm(`Give ${u.email} a new password? Their sessions end.`) && act.mutate({ kind: "reset", userId: u.id })}
                  >
                    Reset password
                  </button>
                )}
                {linkOf.size > 0 && linkOf.get(u.id) !== "allowed" && (
                  <button
                    type="button"
                    className="small secondary"
                    disabled={allowLink.isPending}
                    onClick={() =>
                      confirm(
                        `Link ${u.email} to whoever next signs in through single sign-on with this verified email?` +
                          (linkOf.get(u.id) === "linked" ? " Its current link ends." : " Do this only when you know that person is its owner."),
                      ) && allowLink.mutate(u)
                    }
                  >
                    Link at next sign-in
                  </button>
                )}
              </td>
            </tr>
          );
        })}
      </QueryTable>
      <SecretDialog
        title={`Password for ${secret?.email ?? ""}`}
        secret={secret?.password}
        note="Give this password to the user now; it is not shown again."
        copyLabel="Copy password"
        testId="generated-password"
        onClose={() => setSecret(null)}
      />
      <SsoSettings orgSlug={orgSlug} />
    </section>
  );
}
