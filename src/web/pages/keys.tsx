import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import type { KeyKind } from "../../domain/views/api-key.ts";
import { trpc } from "../api.ts";
import { useSession } from "../session.tsx";
import { Badge, dateTime, Dialog, ErrorNote, Field, ProjectOptions, QueryTable, SecretDialog, TimeAgo, useToast } from "../ui.tsx";

export function KeysPage() {
  const { orgSlug, projects, projectId } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const keys = useQuery({ queryKey: ["keys"], queryFn: () => trpc.keys.list.query({ orgSlug }) });
  const [form, setForm] = useState({ projectId: projectId ?? "", kind: "publishable" as KeyKind, name: "", rateLimit: "" });
  const [shown, setShown] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<{ id: string; name: string } | null>(null);
  const create = useMutation({
    mutationFn: () =>
      trpc.keys.create.mutate({
        orgSlug,
        projectId: form.projectId || projectId!,
        kind: form.kind,
        name: form.name.trim() || undefined,
        reportRateLimit: form.rateLimit ? Number(form.rateLimit) : undefined,
      }),
    onSuccess: (r) => {
      setShown(r.key);
      setForm({ ...form, name: "", rateLimit: "" });
      void qc.invalidateQueries({ queryKey: ["keys"] });
    },
  });
  const revoke = useMutation({
    mutationFn: (keyId: string) => trpc.keys.revoke.mutate({ orgSlug, keyId }),
    onSuccess: () => (setRevoking(null), toast("Key revoked"), void qc.invalidateQueries({ queryKey: ["keys"] })),
  });
  const projectName = (id: string) => projects.find((p) => p.id === id)?.name ?? id;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <section aria-labelledby="keys-title">
      <div className="page-head">
        <h1 id="keys-title">API keys</h1>
        <p className="muted">
          Publishable keys (<code>pk_live_</code>) only file reports and read report reasons of their project: safe in an app. Secret keys (
          <code>sk_live_</code>) reach every project of the organization: keep them on servers. A key is shown once.
        </p>
      </div>
      <form className="card inline-form" onSubmit={submit} aria-label="Create an API key">
        <Field label="Project">
          <select value={form.projectId || projectId || ""} onChange={(e) => setForm({ ...form, projectId: e.target.value })}>
            <ProjectOptions projects={projects} />
          </select>
        </Field>
        <Field label="Kind">
          <select value={form.kind} onChange={(e) => setForm({ ...form, kind: e.target.value as typeof form.kind })}>
            <option value="publishable">Publishable</option>
            <option value="secret">Secret</option>
          </select>
        </Field>
        <Field label="Name">
          <input value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} maxLength={100} placeholder="e.g. iOS app" />
        </Field>
        <Field label="Reports per minute">
          <input type="number" min={1} value={form.rateLimit} onChange={(e) => setForm({ ...form, rateLimit: e.target.value })} placeholder="default" />
        </Field>
        <button type="submit" className="primary" disabled={create.isPending}>
          Create key
        </button>
        <ErrorNote error={create.error} />
      </form>
      <QueryTable
        error={keys.error}
        pending={keys.isPending}
        columns={[{ label: "Name" }, { label: "Key" }, { label: "Project" }, { label: "Created" }, { label: "Last used" }, { label: "State" }]}
      >
        {(keys.data?.apiKeys ?? []).map((k) => (
          <tr key={k.id} className={k.revokedAt ? "dim" : ""}>
            <td>{k.name}</td>
            <td>
              <code>{k.prefix}…</code> <Badge tone={k.kind === "secret" ? "red" : "blue"}>{k.kind}</Badge>
            </td>
            <td>{projectName(k.projectId)}</td>
            <td>{dateTime(k.createdAt)}</td>
            <td>{k.lastUsedAt ? <TimeAgo iso={k.lastUsedAt} /> : <span className="muted">never</span>}</td>
            <td>
              {k.revokedAt ? (
                <span className="muted">revoked {dateTime(k.revokedAt)}</span>
              ) : (
                <button type="button" className="small danger" onClick={() => setRevoking({ id: k.id, name: k.name })}>
                  Revoke
                </button>
              )}
            </td>
          </tr>
        ))}
      </QueryTable>
      <SecretDialog
        title="Your new key"
        secret={shown}
        note="Copy it now: Flagstaff keeps only a hash and cannot show it again."
        copyLabel="Copy key"
        testId="new-key"
        onClose={() => setShown(null)}
      />
      <Dialog open={!!revoking} title={`Revoke ${revoking?.name ?? ""}?`} onClose={() => setRevoking(null)}>
        <div className="stack">
          <p>Requests with this key fail with 401 from now on. This cannot be undone.</p>
          <ErrorNote error={revoke.error} />
          <div className="actions">
            <button type="button" className="secondary" onClick={() => setRevoking(null)}>
              Cancel
            </button>
            <button type="button" className="danger" onClick={() => revoking && revoke.mutate(revoking.id)} disabled={revoke.isPending}>
              Revoke key
            </button>
          </div>
        </div>
      </Dialog>
    </section>
  );
}
