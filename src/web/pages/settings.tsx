import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { SEVERITIES, type Severity } from "../../domain/views/severity.ts";
import { TEMPLATE_BODY_MAX, TEMPLATE_KINDS, TEMPLATE_NAME_MAX, TEMPLATE_PLACEHOLDERS, type TemplateKind } from "../../domain/views/template.ts";
import { trpc, type Outputs } from "../api.ts";
import { useSession } from "../session.tsx";
import { DsaSettingsSection } from "../dsa.tsx";
import { StrikePolicySection } from "../components/strikes.tsx";
import { ThresholdChangeDialog } from "../components/threshold-advice.tsx";
import { Dialog, Empty, ErrorNote, Field, Loading, QueryTable, SeverityBadge, useToast } from "../ui.tsx";

type Settings = Outputs["ai"]["settings"]["settings"];
type Category = Outputs["categories"]["list"]["categories"][number];
type Template = Outputs["templates"]["list"]["templates"][number];

export function SettingsPage() {
  const { orgSlug, projectId, projects, can } = useSession();
  const projectName = projects.find((p) => p.id === projectId)?.name;
  if (!projectId) return <Empty>Create a project first.</Empty>;
  return (
    <section aria-labelledby="settings-title">
      <div className="page-head">
        <h1 id="settings-title">Project settings</h1>
        <p className="muted">
          {projectName} · {can("admin") ? "changes apply at once to new reports." : "read only: only admins change settings."}
        </p>
      </div>
      <AiSettings key={`ai-${projectId}`} orgSlug={orgSlug} projectId={projectId} editable={can("admin")} />
      <Categories key={`cat-${projectId}`} orgSlug={orgSlug} projectId={projectId} editable={can("admin")} />
      <Templates key={`tpl-${projectId}`} projectId={projectId} editable={can("admin")} />
      <DsaSettingsSection key={`dsa-${projectId}`} orgSlug={orgSlug} projectId={projectId} editable={can("admin")} />
      <StrikePolicySection key={`strikes-${projectId}`} orgSlug={orgSlug} projectId={projectId} editable={can("admin")} />
    </section>
  );
}

function AiSettings({ orgSlug, projectId, editable }: { orgSlug: string; projectId: string; editable: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const key = ["settings", projectId];
  const settings = useQuery({ queryKey: key, queryFn: () => trpc.ai.settings.query({ orgSlug, projectId }) });
  const [form, setForm] = useState<Settings | null>(null);
  /** A new threshold shows its advice (from the latest evaluation run) before it is saved. */
  const [advising, setAdvising] = useState(false);
  useEffect(() => {
    if (settings.data) setForm(settings.data.settings);
  }, [settings.data]);
  const save = useMutation({
    mutationFn: (s: Settings) => trpc.ai.updateSettings.mutate({ orgSlug, projectId, ...s }),
    onSuccess: (r) => {
      qc.setQueryData(key, r);
      // Advice rests on the threshold and, without a target of its own, the project's target.
      void qc.resetQueries({ queryKey: ["evaluation", "advice"] });
      setAdvising(false);
      toast("Settings saved");
    },
  });
  if (settings.isPending || !form) return <Loading />;
  const dirty = JSON.stringify(form) !== JSON.stringify(settings.data?.settings);
  const saved = settings.data?.settings;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (saved && form.aiThreshold !== saved.aiThreshold) setAdvising(true);
    else save.mutate(form);
  };
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="ai-title">
      <h2 id="ai-title">AI classification</h2>
      <ErrorNote error={settings.error} />
      <div className="switch">
        <input id="ai-enabled" type="checkbox" aria-describedby="ai-enabled-hint" checked={form.aiEnabled} disabled={!editable} onChange={(e) => setForm({ ...form, aiEnabled: e.target.checked })} />
        <span>
          <label htmlFor="ai-enabled">
            <strong>Classify reports with AI</strong>
          </label>
          <span id="ai-enabled-hint" className="field-hint">
            New reports are analysed in the background; a likely violation moves its case to review.
          </span>
        </span>
      </div>
      <div className="field">
        <label htmlFor="ai-threshold" className="field-label">
          Confidence threshold (1–100)
        </label>
        <div className="threshold">
          <input
            type="range"
            min={1}
            max={100}
            value={form.aiThreshold}
            disabled={!editable}
            aria-hidden="true"
            tabIndex={-1}
            onChange={(e) => setForm({ ...form, aiThreshold: Number(e.target.value) })}
          />
          <input
            id="ai-threshold"
            type="number"
            name="aiThreshold"
            min={1}
            max={100}
            required
            aria-describedby="ai-threshold-hint"
            value={form.aiThreshold}
            disabled={!editable}
            onChange={(e) => setForm({ ...form, aiThreshold: Number(e.target.value) })}
          />
        </div>
        <span id="ai-threshold-hint" className="field-hint">
          An analysis at or above this confidence files a report or moves a case to review. A new threshold shows first what it would have done on the latest evaluation run.
        </span>
      </div>
      <div className="field">
        <label htmlFor="ai-precision-target" className="field-label">
          Precision target for threshold advice (50–99.9 %)
        </label>
        <input
          id="ai-precision-target"
          type="number"
          name="aiPrecisionTarget"
          min={50}
          max={99.9}
          step={0.1}
          required
          aria-describedby="ai-precision-target-hint"
          value={percentOf(form.aiPrecisionTarget)}
          disabled={!editable}
          onChange={(e) => setForm({ ...form, aiPrecisionTarget: fractionOf(Number(e.target.value)) })}
        />
        <span id="ai-precision-target-hint" className="field-hint">
          Threshold advice (here and on the Evaluation page) shows per category the lowest threshold whose reports are right at least this often.
        </span>
      </div>
      <div className="switch">
        <input id="scan-links" type="checkbox" aria-describedby="scan-links-hint" checked={form.scanLinks} disabled={!editable} onChange={(e) => setForm({ ...form, scanLinks: e.target.checked })} />
        <span>
          <label htmlFor="scan-links">
            <strong>Scan links</strong>
          </label>
          <span id="scan-links-hint" className="field-hint">
            URLs in reported content are fetched safely and their pages classified.
          </span>
        </span>
      </div>
      <ErrorNote error={save.error} />
      {editable && (
        <div className="actions">
          <button type="button" className="ghost" disabled={!dirty} onClick={() => setForm(settings.data!.settings)}>
            Undo changes
          </button>
          <button type="submit" className="primary" disabled={!dirty || save.isPending}>
            Save settings
          </button>
        </div>
      )}
      {saved && (
        <ThresholdChangeDialog
          orgSlug={orgSlug}
          projectId={projectId}
          current={saved.aiThreshold}
          proposed={form.aiThreshold}
          precisionTarget={form.aiPrecisionTarget}
          open={advising}
          saving={save.isPending}
          saveError={save.error}
          onSave={() => save.mutate(form)}
          onClose={() => setAdvising(false)}
        />
      )}
    </form>
  );
}

/** The API keeps the precision target as a fraction (like the precision figures); the field shows a percentage, to a tenth. */
const percentOf = (fraction: number) => Math.round(fraction * 1000) / 10;
const fractionOf = (percent: number) => Math.round(percent * 10) / 1000;

function Categories({ orgSlug, projectId, editable }: { orgSlug: string; projectId: string; editable: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const key = ["categories", "list", projectId];
  const list = useQuery({ queryKey: key, queryFn: () => trpc.categories.list.query({ orgSlug, projectId }) });
  const [editing, setEditing] = useState<(Partial<Category> & { severityHint: Severity }) | null>(null);
  const [deleting, setDeleting] = useState<Category | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: ["categories"] });
  const save = useMutation({
    mutationFn: (c: NonNullable<typeof editing>) =>
      c.id
        ? trpc.categories.update.mutate({ orgSlug, projectId, categoryId: c.id, name: c.name, description: c.description || null, severityHint: c.severityHint, graphic: c.graphic ?? false })
        : trpc.categories.create.mutate({ orgSlug, projectId, name: c.name ?? "", description: c.description || null, severityHint: c.severityHint, graphic: c.graphic ?? false }),
    onSuccess: (r) => (setEditing(null), toast(`Category ${r.category.name} saved`), refresh()),
  });
  const remove = useMutation({
    mutationFn: (c: Category) => trpc.categories.delete.mutate({ orgSlug, projectId, categoryId: c.id }),
    onSuccess: () => (setDeleting(null), toast("Category deleted"), refresh()),
  });
  return (
    <section className="card" aria-labelledby="categories-title">
      <div className="section-head">
        <h2 id="categories-title">Report categories</h2>
        {editable && (
          <button type="button" className="secondary small" onClick={() => setEditing({ name: "", description: "", severityHint: "MEDIUM" })}>
            Add category
          </button>
        )}
      </div>
      <p className="muted">
        The reasons SDK clients send. The description steers the AI; the severity hint sets the case's bucket; a graphic category's cases open
        behind a warning screen, as CRITICAL ones do.
      </p>
      <QueryTable
        error={list.error}
        pending={list.isPending}
        columns={[{ label: "Name" }, { label: "Description (for the AI)" }, { label: "Severity hint" }, { label: "Graphic" }, editable && { label: "Actions", srOnly: true }]}
      >
        {(list.data?.categories ?? []).map((c) => (
          <tr key={c.id}>
            <td>
              <code>{c.name}</code>
            </td>
            <td>{c.description ?? <span className="muted">none</span>}</td>
            <td>
              <SeverityBadge severity={c.severityHint} />
            </td>
            <td>{c.graphic ? "Graphic: warning first" : <span className="muted">no</span>}</td>
            {editable && (
              <td className="row-actions">
                <button type="button" className="small secondary" onClick={() => setEditing({ ...c })} aria-label={`Edit ${c.name}`}>
                  Edit
                </button>
                <button type="button" className="small danger" onClick={() => setDeleting(c)} aria-label={`Delete ${c.name}`}>
                  Delete
                </button>
              </td>
            )}
          </tr>
        ))}
      </QueryTable>
      <Dialog open={!!editing} title={editing?.id ? `Edit ${editing.name}` : "New category"} onClose={() => setEditing(null)}>
        {editing && (
          <form
            className="stack"
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate(editing);
            }}
          >
            <Field label="Name" hint="Letters, digits, spaces, '_', '-' and '.'">
              <input value={editing.name ?? ""} onChange={(e) => setEditing({ ...editing, name: e.target.value })} maxLength={100} required autoFocus />
            </Field>
            <Field label="Description for the AI">
              <textarea rows={3} maxLength={1000} value={editing.description ?? ""} onChange={(e) => setEditing({ ...editing, description: e.target.value })} />
            </Field>
            <Field label="Severity hint">
              <select value={editing.severityHint} onChange={(e) => setEditing({ ...editing, severityHint: e.target.value as Severity })}>
                {SEVERITIES.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            </Field>
            <div className="switch">
              <input
                id="category-graphic"
                type="checkbox"
                aria-describedby="category-graphic-hint"
                checked={editing.graphic ?? false}
                onChange={(e) => setEditing({ ...editing, graphic: e.target.checked })}
              />
              <span>
                <label htmlFor="category-graphic">
                  <strong>Graphic</strong>
                </label>
                <span id="category-graphic-hint" className="field-hint">
                  A case whose reports name it opens behind a warning screen in the dashboard.
                </span>
              </span>
            </div>
            <ErrorNote error={save.error} />
            <div className="actions">
              <button type="button" className="secondary" onClick={() => setEditing(null)}>
                Cancel
              </button>
              <button type="submit" className="primary" disabled={save.isPending}>
                Save category
              </button>
            </div>
          </form>
        )}
      </Dialog>
      <Dialog open={!!deleting} title={`Delete category ${deleting?.name ?? ""}?`} onClose={() => setDeleting(null)}>
        <div className="stack">
          <p>Existing reports keep the name; SDK clients can no longer send it as a reason.</p>
          <ErrorNote error={remove.error} />
          <div className="actions">
            <button type="button" className="secondary" onClick={() => setDeleting(null)}>
              Cancel
            </button>
            <button type="button" className="danger" onClick={() => deleting && remove.mutate(deleting)} disabled={remove.isPending}>
              Delete category
            </button>
          </div>
        </div>
      </Dialog>
    </section>
  );
}

const KIND_LABEL: Record<TemplateKind, string> = { resolve: "Resolve", dismiss: "Dismiss", enforce: "Enforce" };
const PLACEHOLDER_LIST = TEMPLATE_PLACEHOLDERS.map((p) => `{${p}}`).join(", ");

/** The project's decision templates, offered in the resolve, dismiss and enforce dialogs. */
function Templates({ projectId, editable }: { projectId: string; editable: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const list = useQuery({ queryKey: ["templates", projectId, "all"], queryFn: () => trpc.templates.list.query({ projectId }) });
  const [editing, setEditing] = useState<(Partial<Template> & { kind: TemplateKind }) | null>(null);
  const [deleting, setDeleting] = useState<Template | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: ["templates"] });
  const save = useMutation({
    mutationFn: (t: NonNullable<typeof editing>) =>
      t.id
        ? trpc.templates.update.mutate({ projectId, templateId: t.id, name: t.name, kind: t.kind, body: t.body })
        : trpc.templates.create.mutate({ projectId, name: t.name ?? "", kind: t.kind, body: t.body ?? "" }),
    onSuccess: (r) => (setEditing(null), toast(`Template ${r.template.name} saved`), refresh()),
  });
  const remove = useMutation({
    mutationFn: (t: Template) => trpc.templates.delete.mutate({ projectId, templateId: t.id }),
    onSuccess: () => (setDeleting(null), toast("Template deleted"), refresh()),
  });
  const templates = list.data?.templates ?? [];
  return (
    <section className="card" aria-labelledby="templates-title">
      <div className="section-head">
        <h2 id="templates-title">Decision templates</h2>
        {editable && (
          <button type="button" className="secondary small" onClick={() => (save.reset(), setEditing({ name: "", kind: "resolve", body: "" }))}>
            Add template
          </button>
        )}
      </div>
      <p className="muted">
        Ready-made notes offered in the resolve, dismiss and enforce dialogs. {PLACEHOLDER_LIST} are filled in with the action, the reason and the
        case&apos;s categories.
      </p>
      <QueryTable
        error={list.error}
        pending={list.isPending}
        isEmpty={templates.length === 0}
        empty={<>No templates yet{editable ? "" : " (admins add them)"}.</>}
        className="templates"
        columns={[{ label: "Name" }, { label: "Dialog" }, { label: "Text" }, editable && { label: "Actions", srOnly: true }]}
      >
        {templates.map((t) => (
          <tr key={t.id}>
            <td>{t.name}</td>
            <td>{KIND_LABEL[t.kind]}</td>
            <td className="template-body">{t.body}</td>
            {editable && (
              <td className="row-actions">
                <button type="button" className="small secondary" onClick={() => (save.reset(), setEditing({ ...t }))} aria-label={`Edit template ${t.name}`}>
                  Edit
                </button>
                <button type="button" className="small danger" onClick={() => (remove.reset(), setDeleting(t))} aria-label={`Delete template ${t.name}`}>
                  Delete
                </button>
              </td>
            )}
          </tr>
        ))}
      </QueryTable>
      <Dialog open={!!editing} title={editing?.id ? `Edit template ${editing.name}` : "New template"} onClose={() => setEditing(null)}>
        {editing && (
          <form
            className="stack"
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate(editing);
            }}
          >
            <Field label="Template name">
              <input value={editing.name ?? ""} onChange={(e) => setEditing({ ...editing, name: e.target.value })} maxLength={TEMPLATE_NAME_MAX} required />
            </Field>
            <Field label="Offered in">
              <select value={editing.kind} onChange={(e) => setEditing({ ...editing, kind: e.target.value as TemplateKind })}>
                {TEMPLATE_KINDS.map((k) => (
                  <option key={k} value={k}>
                    {KIND_LABEL[k]} dialog
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Text" hint={`Placeholders: ${PLACEHOLDER_LIST}.`}>
              <textarea rows={4} maxLength={TEMPLATE_BODY_MAX} value={editing.body ?? ""} onChange={(e) => setEditing({ ...editing, body: e.target.value })} required />
            </Field>
            <ErrorNote error={save.error} />
            <div className="actions">
              <button type="button" className="secondary" onClick={() => setEditing(null)}>
                Cancel
              </button>
              <button type="submit" className="primary" disabled={save.isPending}>
                Save template
              </button>
            </div>
          </form>
        )}
      </Dialog>
      <Dialog open={!!deleting} title={`Delete template ${deleting?.name ?? ""}?`} onClose={() => setDeleting(null)}>
        <div className="stack">
          <p>Decisions already made keep their notes; the template is no longer offered.</p>
          <ErrorNote error={remove.error} />
          <div className="actions">
            <button type="button" className="secondary" onClick={() => setDeleting(null)}>
              Cancel
            </button>
            <button type="button" className="danger" onClick={() => deleting && remove.mutate(deleting)} disabled={remove.isPending}>
              Delete template
            </button>
          </div>
        </div>
      </Dialog>
    </section>
  );
}
