/**
 * The dashboard's statements of reasons (docs/dsa.md): the "Statement of reasons" disclosure
 * under each enforcement action of the case page, and the project settings' section that maps
 * report categories to the Transparency Database's categories and sets the territorial scope.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { hasStatement, type ActionKind } from "../domain/views/enforcement.ts";
import { DECISION_GROUNDS, EEA_COUNTRIES, STATEMENT_CATEGORIES, STATEMENT_FIELDS, SUGGESTED_CATEGORIES, type DsaSettingsInput } from "../domain/views/dsa.ts";
import { trpc, type Outputs } from "./api.ts";
import { useSession } from "./session.tsx";
import { ErrorNote, Field, Loading, useToast } from "./ui.tsx";

type Settings = Outputs["transparency"]["getDsaSettings"]["settings"];
type CategorySetting = Settings["categories"][string];

const words = (code: string, prefix: string): string => code.replace(prefix, "").toLowerCase().replace(/_/g, " ");
const cell = (v: unknown): string => (Array.isArray(v) ? v.join(", ") : String(v));

/** Under an action: its statement, loaded when opened (a kind that restricts nothing, a warning, has none and shows no disclosure). */
export function StatementDisclosure({ actionId, kind }: { actionId: string; kind: ActionKind }) {
  const { orgSlug } = useSession();
  const [open, setOpen] = useState(false);
  const q = useQuery({
    queryKey: ["statement", actionId],
    queryFn: () => trpc.transparency.actionStatements.query({ orgSlug, actionIds: [actionId] }),
    enabled: open,
    staleTime: Infinity,
  });
  if (!hasStatement(kind)) return null;
  const record = q.data?.statements[actionId];
  return (
    <details className="statement" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Statement of reasons</summary>
      <ErrorNote error={q.error} />
      {open && q.isPending ? (
        <Loading />
      ) : record ? (
        <dl className="small-print">
          {STATEMENT_FIELDS.filter((f) => (record.statement as Record<string, unknown>)[f] != null).map((f) => (
            <div key={f}>
              <dt>
                <code>{f}</code>
              </dt>
              <dd style={{ whiteSpace: "pre-wrap" }}>{cell((record.statement as Record<string, unknown>)[f])}</dd>
            </div>
          ))}
          <div>
            <dt>Submitted to the Transparency Database</dt>
            <dd>{record.submittedAt ? new Date(record.submittedAt).toLocaleString() : "not yet"}</dd>
          </div>
        </dl>
      ) : (
        q.isSuccess && <p className="muted">No statement.</p>
      )}
    </details>
  );
}

/** Project settings: the DSA mapping of each report category, and the territorial scope. */
export function DsaSettingsSection({ orgSlug, projectId, editable }: { orgSlug: string; projectId: string; editable: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const key = ["dsa-settings", projectId];
  const settings = useQuery({ queryKey: key, queryFn: () => trpc.transparency.getDsaSettings.query({ orgSlug, projectId }) });
  const categories = useQuery({ queryKey: ["categories", "list", projectId], queryFn: () => trpc.categories.list.query({ orgSlug, projectId }) });
  const [form, setForm] = useState<Settings | null>(null);
  useEffect(() => {
    if (settings.data) setForm(settings.data.settings);
  }, [settings.data]);
  const save = useMutation({
    mutationFn: (s: DsaSettingsInput) => trpc.transparency.setDsaSettings.mutate({ orgSlug, projectId, ...s }),
    onSuccess: (r) => {
      qc.setQueryData(key, r);
      toast("Statement-of-reasons settings saved");
    },
  });
  if (settings.isPending || categories.isPending || !form) return <Loading />;
  const names = categories.data?.categories.map((c) => c.name) ?? [];
  const setCategory = (name: string, patch: Partial<CategorySetting> | null) => {
    const next = { ...form.categories };
    if (patch === null) delete next[name];
    else next[name] = { ground: "DECISION_GROUND_INCOMPATIBLE_CONTENT", category: SUGGESTED_CATEGORIES[name] ?? "STATEMENT_CATEGORY_OTHER_VIOLATION_TC", ...next[name], ...patch } as CategorySetting;
    setForm({ ...form, categories: next });
  };
  const toggleCountry = (c: (typeof EEA_COUNTRIES)[number], on: boolean) =>
    setForm({ ...form, territorialScope: on ? [...form.territorialScope, c] : form.territorialScope.filter((x) => x !== c) });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    // Blank optional texts are left out rather than sent empty.
    const cats = Object.fromEntries(
      Object.entries(form.categories).map(([name, s]) => [name, Object.fromEntries(Object.entries(s).filter(([, v]) => v !== "" && v != null))]),
    ) as DsaSettingsInput["categories"];
    save.mutate({ ...form, categories: cats });
  };
  const dirty = JSON.stringify(form) !== JSON.stringify(settings.data?.settings);
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="dsa-title">
      <h2 id="dsa-title">Statements of reasons (DSA)</h2>
      <p className="muted">
        Every suspension, ban, mute and content removal gets a statement of reasons in the EU Transparency Database's terms. Map each report category to its
        DSA category and ground; an unmapped category uses the suggestion shown.
      </p>
      <ErrorNote error={settings.error ?? categories.error ?? save.error} />
      <div style={{ overflowX: "auto" }}>
      <table>
        <thead>
          <tr>
            <th scope="col">Category</th>
            <th scope="col">DSA category</th>
            <th scope="col">Ground</th>
            <th scope="col">Law or terms clause</th>
            <th scope="col">Reference URL</th>
          </tr>
        </thead>
        <tbody>
          {names.map((name) => {
            const s = form.categories[name];
            const illegal = s?.ground === "DECISION_GROUND_ILLEGAL_CONTENT";
            return (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td>
                  <select
                    aria-label={`DSA category of ${name}`}
                    style={{ maxWidth: "15rem" }}
                    disabled={!editable}
                    value={s?.category ?? ""}
                    onChange={(e) => setCategory(name, e.target.value ? { category: e.target.value as CategorySetting["category"] } : null)}
                  >
                    <option value="">suggested: {words(SUGGESTED_CATEGORIES[name] ?? "STATEMENT_CATEGORY_OTHER_VIOLATION_TC", "STATEMENT_CATEGORY_")}</option>
                    {STATEMENT_CATEGORIES.map((c) => (
                      <option key={c} value={c}>
                        {words(c, "STATEMENT_CATEGORY_")}
                      </option>
                    ))}
                  </select>
                </td>
                <td>
                  <select
                    aria-label={`Decision ground of ${name}`}
                    disabled={!editable}
                    value={s?.ground ?? "DECISION_GROUND_INCOMPATIBLE_CONTENT"}
                    onChange={(e) => setCategory(name, { ground: e.target.value as CategorySetting["ground"] })}
                  >
                    {DECISION_GROUNDS.map((g) => (
                      <option key={g} value={g}>
                        {g === "DECISION_GROUND_ILLEGAL_CONTENT" ? "illegal content" : "incompatible with terms"}
                      </option>
                    ))}
                  </select>
                </td>
                <td>
                  <input
                    aria-label={illegal ? `Law relied on for ${name}` : `Terms clause for ${name}`}
                    disabled={!editable}
                    maxLength={500}
                    style={{ width: "10rem" }}
                    required={illegal}
                    placeholder={illegal ? "e.g. § 185 StGB" : form.defaultTermsReference}
                    value={(illegal ? s?.legalGround : s?.termsReference) ?? ""}
                    onChange={(e) => setCategory(name, illegal ? { legalGround: e.target.value } : { termsReference: e.target.value })}
                  />
                </td>
                <td>
                  <input
                    type="url"
                    aria-label={`Reference URL for ${name}`}
                    style={{ width: "10rem" }}
                    disabled={!editable}
                    maxLength={500}
                    value={s?.referenceUrl ?? ""}
                    onChange={(e) => setCategory(name, { referenceUrl: e.target.value })}
                  />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      </div>
      <fieldset className="checks">
        <legend>Territorial scope (EU and EEA states where the decisions apply)</legend>
        {EEA_COUNTRIES.map((c) => (
          <label key={c}>
            <input type="checkbox" disabled={!editable} checked={form.territorialScope.includes(c)} onChange={(e) => toggleCountry(c, e.target.checked)} /> {c}
          </label>
        ))}
      </fieldset>
      {editable && (
        <div>
          <button type="button" className="small ghost" onClick={() => setForm({ ...form, territorialScope: [...EEA_COUNTRIES] })}>
            All EU and EEA states
          </button>
        </div>
      )}
      <Field label="Decide appeals within (minutes)" hint="DSA Art. 20 asks for timely handling: an appeal pending longer is a service-level breach. Empty: no target.">
        <input
          type="number"
          inputMode="numeric"
          min={1}
          step={1}
          disabled={!editable}
          value={form.appealTargetMinutes ?? ""}
          onChange={(e) => {
            const { appealTargetMinutes: _, ...rest } = form;
            setForm(e.target.value === "" ? rest : { ...rest, appealTargetMinutes: Number(e.target.value) });
          }}
        />
      </Field>
      {editable && (
        <div className="actions">
          <button type="submit" disabled={!dirty || save.isPending || form.territorialScope.length === 0}>
            Save
          </button>
        </div>
      )}
    </form>
  );
}
