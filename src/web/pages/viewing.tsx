/**
 * #/viewing (the user menu's "Viewing"): how the signed-in reviewer sees reported media, their
 * own choices over the organization's defaults, previewed on a sample picture before saving;
 * and, for admins, the organization's defaults (issue 42; docs/dashboard.md, "Protecting the
 * reviewer").
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import {
  BLUR_STRENGTH_SPECS,
  BLUR_STRENGTHS,
  resolveViewing,
  REVEAL_MODE_SPECS,
  REVEAL_MODES,
  type BlurStrength,
  type RevealMode,
  type ViewingAnswer,
  type ViewingChoices,
  type ViewingDefaults,
} from "../../domain/views/viewing.ts";
import { trpc } from "../api.ts";
import { MediaViewer } from "../components/media-viewer.tsx";
import { SAMPLE_ITEM, useViewing, VIEWING_KEY } from "../components/viewing.tsx";
import { useSession } from "../session.tsx";
import { ErrorNote, Field, Loading, useToast } from "../ui.tsx";

const onOff = (on: boolean) => (on ? "on" : "off");

export function ViewingPage() {
  const { can } = useSession();
  const { answer } = useViewing();
  return (
    <section aria-labelledby="viewing-title">
      <div className="page-head">
        <h1 id="viewing-title">Viewing</h1>
        <p className="muted">How reported media looks to you: blurred and in grayscale until you reveal it, and a warning before distressing cases.</p>
      </div>
      {answer.error ? (
        <ErrorNote error={answer.error} />
      ) : !answer.data ? (
        <Loading />
      ) : (
        <>
          <OwnPreferences answer={answer.data} />
          {can("admin") && <OrganizationDefaults key={JSON.stringify(answer.data.organization)} defaults={answer.data.organization} />}
        </>
      )}
    </section>
  );
}

function OwnPreferences({ answer }: { answer: ViewingAnswer }) {
  const qc = useQueryClient();
  const toast = useToast();
  const org = answer.organization;
  const [draft, setDraft] = useState<ViewingChoices>(answer.own ?? {});
  // Saved elsewhere (another tab) or the organization's defaults changed: start from what is stored.
  const stored = JSON.stringify(answer.own ?? {});
  useEffect(() => setDraft(JSON.parse(stored) as ViewingChoices), [stored]);
  const save = useMutation({
    mutationFn: (d: ViewingChoices) =>
      trpc.viewing.setMine.mutate({ blur: d.blur ?? null, grayscale: d.grayscale ?? null, reveal: d.reveal ?? null, warnBeforeGraphic: d.warnBeforeGraphic ?? null }),
    onSuccess: (r) => {
      qc.setQueryData(VIEWING_KEY, r);
      toast("Viewing preferences saved");
    },
  });
  const preview = resolveViewing(org, draft);
  const choose = <K extends keyof ViewingChoices>(key: K, value: ViewingChoices[K] | undefined) => {
    const next = { ...draft };
    if (value === undefined) delete next[key];
    else next[key] = value;
    setDraft(next);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate(draft);
  };
  const dirty = JSON.stringify(draft) !== stored;
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="own-viewing-title">
      <h2 id="own-viewing-title">Your preferences</h2>
      <p className="muted">A choice left to the organization follows its defaults, also when an admin changes them.</p>
      <div className="viewing-grid">
        <div className="stack">
          <Field label="Blur">
            <select value={draft.blur ?? ""} onChange={(e) => choose("blur", (e.target.value || undefined) as BlurStrength | undefined)}>
              <option value="">Organization default ({BLUR_STRENGTH_SPECS[org.blur].short})</option>
              {BLUR_STRENGTHS.map((b) => (
                <option key={b} value={b}>
                  {BLUR_STRENGTH_SPECS[b].label}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Grayscale">
            <select value={draft.grayscale === undefined ? "" : onOff(draft.grayscale)} onChange={(e) => choose("grayscale", e.target.value ? e.target.value === "on" : undefined)}>
              <option value="">Organization default ({onOff(org.grayscale)})</option>
              <option value="on">On</option>
              <option value="off">Off</option>
            </select>
          </Field>
          <Field label="Reveal a blurred preview" hint="The Reveal button works either way, from the keyboard too; Escape blurs again.">
            <select value={draft.reveal ?? ""} onChange={(e) => choose("reveal", (e.target.value || undefined) as RevealMode | undefined)}>
              <option value="">Organization default ({REVEAL_MODE_SPECS[org.reveal].short})</option>
              {REVEAL_MODES.map((m) => (
                <option key={m} value={m}>
                  {REVEAL_MODE_SPECS[m].label}
                </option>
              ))}
            </select>
          </Field>
          <Field
            label="Warning before CRITICAL or graphic cases"
            hint={org.requireWarning ? "Your organization requires it for everyone." : "A screen saying why, before the case opens: show it, skip it or go back."}
          >
            <select
              value={org.requireWarning ? "on" : draft.warnBeforeGraphic === undefined ? "" : onOff(draft.warnBeforeGraphic)}
              disabled={org.requireWarning}
              onChange={(e) => choose("warnBeforeGraphic", e.target.value ? e.target.value === "on" : undefined)}
            >
              <option value="">Organization default ({onOff(org.warnBeforeGraphic)})</option>
              <option value="on">On</option>
              <option value="off">Off</option>
            </select>
          </Field>
        </div>
        <div className="viewing-preview">
          <h3 id="viewing-preview-title">Preview</h3>
          <p className="muted">A sample picture, as these choices show media (before you save).</p>
          <MediaViewer items={[SAMPLE_ITEM]} preferences={preview} scope="sample" label="Preview of these choices" />
        </div>
      </div>
      <ErrorNote error={save.error} />
      <div className="actions">
        <button type="button" className="secondary" onClick={() => setDraft({})} disabled={!Object.keys(draft).length}>
          Follow the organization in everything
        </button>
        <button type="submit" className="primary" disabled={save.isPending || !dirty}>
          Save my preferences
        </button>
      </div>
    </form>
  );
}

function OrganizationDefaults({ defaults }: { defaults: ViewingDefaults }) {
  const qc = useQueryClient();
  const toast = useToast();
  const { orgSlug } = useSession();
  const [form, setForm] = useState<ViewingDefaults>(defaults);
  const save = useMutation({
    mutationFn: (d: ViewingDefaults) => trpc.viewing.setOrganization.mutate({ orgSlug, ...d }),
    onSuccess: (r) => {
      qc.setQueryData(VIEWING_KEY, r);
      toast("Organization defaults saved");
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate(form);
  };
  const dirty = JSON.stringify(form) !== JSON.stringify(defaults);
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="org-viewing-title">
      <h2 id="org-viewing-title">Organization defaults</h2>
      <p className="muted">What everyone sees unless they chose otherwise. Which categories are graphic is set per project, under Project settings.</p>
      <Field label="Default blur">
        <select value={form.blur} onChange={(e) => setForm({ ...form, blur: e.target.value as BlurStrength })}>
          {BLUR_STRENGTHS.map((b) => (
            <option key={b} value={b}>
              {BLUR_STRENGTH_SPECS[b].label}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Default reveal">
        <select value={form.reveal} onChange={(e) => setForm({ ...form, reveal: e.target.value as RevealMode })}>
          {REVEAL_MODES.map((m) => (
            <option key={m} value={m}>
              {REVEAL_MODE_SPECS[m].label}
            </option>
          ))}
        </select>
      </Field>
      <label className="check">
        <input type="checkbox" checked={form.grayscale} onChange={(e) => setForm({ ...form, grayscale: e.target.checked })} /> Grayscale by default
      </label>
      <label className="check">
        <input type="checkbox" checked={form.warnBeforeGraphic} onChange={(e) => setForm({ ...form, warnBeforeGraphic: e.target.checked })} /> Warning before CRITICAL or graphic
        cases by default
      </label>
      <label className="check">
        <input type="checkbox" checked={form.requireWarning} onChange={(e) => setForm({ ...form, requireWarning: e.target.checked })} /> Require the warning: nobody can turn
        it off
      </label>
      <ErrorNote error={save.error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={save.isPending || !dirty}>
          Save the defaults
        </button>
      </div>
    </form>
  );
}
