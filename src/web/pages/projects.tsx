import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { trpc } from "../api.ts";
import { useSession } from "../session.tsx";
import { CopyButton, dateTime, Dialog, ErrorNote, Field, useToast } from "../ui.tsx";

export function sdkSnippet(projectId: string): string {
  return `// Report content from your platform (browser or server), with the project's publishable key.
const res = await fetch("${location.origin}/sdk/flagstaff/v1/projects/${projectId}/reports", {
  method: "POST",
  headers: { Authorization: "Bearer pk_live_…", "Content-Type": "application/json" },
  body: JSON.stringify({
    target: { contentType: "post", contentExternalId: "post-123", content: "the reported text" },
    subject: { type: "user", externalId: "author-42" },
    reporter: { type: "user", externalId: "user-7" },
    reason: "spam",
  }),
});
const { report } = await res.json(); // 201: { report: { id, status: "OPEN", … } }`;
}

export function ProjectsPage() {
  const { orgSlug, projects, can } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const isAdmin = can("admin");
  const [name, setName] = useState("");
  const [renaming, setRenaming] = useState<{ id: string; name: string } | null>(null);
  const [deleting, setDeleting] = useState<{ id: string; name: string } | null>(null);
  const [confirmText, setConfirmText] = useState("");
  const refresh = () => qc.invalidateQueries({ queryKey: ["projects"] });

  const create = useMutation({
    mutationFn: () => trpc.projects.create.mutate({ orgSlug, name }),
    onSuccess: (r) => (setName(""), toast(`Project ${r.project.name} created`), refresh()),
  });
  const rename = useMutation({
    mutationFn: (p: { id: string; name: string }) => trpc.projects.rename.mutate({ orgSlug, projectId: p.id, name: p.name }),
    onSuccess: () => (setRenaming(null), toast("Renamed"), refresh()),
  });
  const remove = useMutation({
    mutationFn: (id: string) => trpc.projects.delete.mutate({ orgSlug, projectId: id }),
    onSuccess: () => (setDeleting(null), setConfirmText(""), toast("Project deleted"), refresh()),
  });

  return (
    <section aria-labelledby="projects-title">
      <div className="page-head">
        <h1 id="projects-title">Projects</h1>
        <p className="muted">
          Each project has its own reports, identities, categories and keys. Also available to scripts as{" "}
          <code>GET/POST /api/v1/organizations/{orgSlug}/projects</code> with a secret key.
        </p>
      </div>
      {isAdmin && (
        <form
          className="card inline-form"
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            if (name.trim()) create.mutate();
          }}
        >
          <Field label="New project name">
            <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} required />
          </Field>
          <button type="submit" className="primary" disabled={create.isPending}>
            Create project
          </button>
          <ErrorNote error={create.error} />
        </form>
      )}
      {projects.map((p) => (
        <article key={p.id} className="card project" aria-labelledby={`project-${p.id}`}>
          <header className="project-head">
            {renaming?.id === p.id ? (
              <form
                className="inline-form"
                onSubmit={(e) => {
                  e.preventDefault();
                  rename.mutate(renaming);
                }}
              >
                <Field label="Name">
                  <input value={renaming.name} onChange={(e) => setRenaming({ ...renaming, name: e.target.value })} maxLength={100} required autoFocus />
                </Field>
                <button type="submit" className="primary" disabled={rename.isPending}>
                  Save
                </button>
                <button type="button" className="ghost" onClick={() => setRenaming(null)}>
                  Cancel
                </button>
                <ErrorNote error={rename.error} />
              </form>
            ) : (
              <h2 id={`project-${p.id}`}>{p.name}</h2>
            )}
            {isAdmin && renaming?.id !== p.id && (
              <div className="actions">
                <button type="button" className="secondary small" onClick={() => setRenaming({ id: p.id, name: p.name })}>
                  Rename
                </button>
                <button type="button" className="danger small" onClick={() => setDeleting({ id: p.id, name: p.name })}>
                  Delete
                </button>
              </div>
            )}
          </header>
          <p className="id-line">
            Project ID <code data-testid="project-id">{p.id}</code> <CopyButton text={p.id} label="Copy ID" />
            <span className="muted"> · created {dateTime(p.createdAt)}</span>
          </p>
          <details>
            <summary>SDK snippet</summary>
            <div className="snippet">
              {/* Focusable: a long line scrolls sideways, and keyboard users can scroll it too. */}
              <pre tabIndex={0}>
                <code>{sdkSnippet(p.id)}</code>
              </pre>
              <CopyButton text={sdkSnippet(p.id)} label="Copy snippet" />
            </div>
          </details>
        </article>
      ))}
      <Dialog open={!!deleting} title={`Delete ${deleting?.name ?? ""}?`} onClose={() => (setDeleting(null), setConfirmText(""))}>
        <form
          className="stack"
          onSubmit={(e) => {
            e.preventDefault();
            if (deleting && confirmText === deleting.name) remove.mutate(deleting.id);
          }}
        >
          <p>
            This deletes the project and <strong>everything in it</strong>: reports, cases, identities, media, categories and API keys. It is gone at once (its keys stop working) and its data is deleted in the background. It cannot be undone.
          </p>
          <Field label={`Type the project name (${deleting?.name ?? ""}) to confirm`}>
            <input value={confirmText} onChange={(e) => setConfirmText(e.target.value)} autoFocus />
          </Field>
          <ErrorNote error={remove.error} />
          <div className="actions">
            <button type="button" className="secondary" onClick={() => (setDeleting(null), setConfirmText(""))}>
              Cancel
            </button>
            <button type="submit" className="danger" disabled={confirmText !== deleting?.name || remove.isPending}>
              Delete project
            </button>
          </div>
        </form>
      </Dialog>
    </section>
  );
}
