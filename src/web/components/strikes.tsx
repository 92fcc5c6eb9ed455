/**
 * Strikes in the dashboard (src/domain/strikes/strikes.ts): the project's strike policy on
 * the settings page (admins change it; the server checks the ladder and names the field), and an
 * identity's strikes on its page and on the case page (its total, the ladder's next step, each
 * strike with its case, status and the step it took).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { ACTION_KIND, kindSpec, type ActionKind } from "../../domain/views/enforcement.ts";
import { RESOLUTION_CODES } from "../../domain/views/report.ts";
import { SEVERITIES } from "../../domain/views/severity.ts";
import { LADDER_KINDS, type LadderStep, type StrikePolicy } from "../../domain/views/strikes.ts";
import { trpc, type Outputs } from "../api.ts";
import { href } from "../router.ts";
import { Badge, dateTime, Empty, ErrorNote, Loading, Table, useToast } from "../ui.tsx";

type IdentityStrikes = Outputs["strikes"]["ofIdentity"];
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const words = (code: string) => code.toLowerCase().replace(/_/g, " ");
/** A ladder step's action in words: "suspension for 1 day". */
export const stepText = (s: Pick<LadderStep, "kind" | "durationSeconds">) =>
  `${kindSpec(s.kind).label}${s.durationSeconds ? ` for ${formatHours(s.durationSeconds / 3600)}` : ""}`;
const formatHours = (h: number) => (h % 24 === 0 ? plural(h / 24, "day") : plural(Math.round(h * 100) / 100, "hour"));

/** The project's strike policy: a section of the settings page. */
export function StrikePolicySection({ orgSlug, projectId, editable }: { orgSlug: string; projectId: string; editable: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const key = ["strike-policy", projectId];
  const saved = useQuery({ queryKey: key, queryFn: () => trpc.strikes.policy.query({ orgSlug, projectId }) });
  const categories = useQuery({ queryKey: ["categories", projectId], queryFn: () => trpc.categories.list.query({ orgSlug, projectId }) });
  const [form, setForm] = useState<StrikePolicy | null>(null);
  useEffect(() => {
    if (saved.data) setForm(saved.data.policy);
  }, [saved.data]);
  const save = useMutation({
    mutationFn: (p: StrikePolicy) => trpc.strikes.setPolicy.mutate({ orgSlug, projectId, ...p }),
    onSuccess: (r) => {
      qc.setQueryData(key, r);
      toast("Strike policy saved");
    },
  });
  if (saved.isPending || !form) return <Loading />;
  const dirty = JSON.stringify(form) !== JSON.stringify(saved.data?.policy);
  const set = (patch: Partial<StrikePolicy>) => setForm({ ...form, ...patch });
  const setStep = (i: number, patch: Partial<LadderStep>) => set({ ladder: form.ladder.map((s, j) => (j === i ? { ...s, ...patch } : s)) });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate(form);
  };
  const number = (v: string) => (v === "" ? undefined : Number(v));
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="strikes-title">
      <h2 id="strikes-title">Strikes</h2>
      <ErrorNote error={saved.error} />
      <div className="switch">
        <input id="strikes-enabled" type="checkbox" aria-describedby="strikes-enabled-hint" checked={form.enabled} disabled={!editable} onChange={(e) => set({ enabled: e.target.checked })} />
        <span>
          <label htmlFor="strikes-enabled">
            <strong>Count strikes</strong>
          </label>
          <span id="strikes-enabled-hint" className="field-hint">
            A resolution with one of the codes below adds strikes to the case's subject; at each threshold of the ladder Flagstaff takes its action, as an automated decision.
          </span>
        </span>
      </div>
      <div className="field">
        <label htmlFor="strikes-window" className="field-label">
          Strikes count for (days)
        </label>
        <input id="strikes-window" type="number" min={1} max={3650} required value={form.windowDays} disabled={!editable} onChange={(e) => set({ windowDays: Number(e.target.value) })} />
      </div>
      <fieldset className="field">
        <legend className="field-label">Resolutions that add strikes</legend>
        <div className="check-grid">
          {RESOLUTION_CODES.map((code) => (
            <label key={code} className="check">
              <input
                type="checkbox"
                checked={form.codes.includes(code)}
                disabled={!editable}
                onChange={(e) => set({ codes: e.target.checked ? [...form.codes, code] : form.codes.filter((c) => c !== code) })}
              />{" "}
              {words(code)}
            </label>
          ))}
        </div>
      </fieldset>
      <fieldset className="field">
        <legend className="field-label">Strikes per decision</legend>
        <p className="field-hint" id="strikes-weights-hint">
          The largest weight of the decided reports' reasons and of their highest severity applies; a blank one does not count; without any, the default.
        </p>
        <div className="check-grid">
          <label className="check">
            Default{" "}
            <input type="number" min={0} max={100} required value={form.strikes.default} disabled={!editable} aria-describedby="strikes-weights-hint" onChange={(e) => set({ strikes: { ...form.strikes, default: Number(e.target.value) } })} />
          </label>
          {SEVERITIES.map((s) => (
            <label key={s} className="check">
              {s}{" "}
              <input
                type="number"
                min={0}
                max={100}
                value={form.strikes.bySeverity[s] ?? ""}
                disabled={!editable}
                onChange={(e) => set({ strikes: { ...form.strikes, bySeverity: { ...form.strikes.bySeverity, [s]: number(e.target.value) } } })}
              />
            </label>
          ))}
          {(categories.data?.categories ?? []).map((c) => (
            <label key={c.id} className="check">
              {c.name}{" "}
              <input
                type="number"
                min={0}
                max={100}
                value={form.strikes.byReason[c.name] ?? ""}
                disabled={!editable}
                onChange={(e) => {
                  const byReason = { ...form.strikes.byReason };
                  const v = number(e.target.value);
                  if (v === undefined) delete byReason[c.name];
                  else byReason[c.name] = v;
                  set({ strikes: { ...form.strikes, byReason } });
                }}
              />
            </label>
          ))}
        </div>
      </fieldset>
      <h3 id="ladder-title">Ladder</h3>
      {form.ladder.length === 0 ? (
        <Empty>No step: strikes are counted, nothing is taken automatically.</Empty>
      ) : (
        <Table columns={[{ label: "At strikes" }, { label: "Action" }, { label: "Duration (hours)" }, editable && { label: "Remove", srOnly: true }]} describedBy="ladder-title">
          {form.ladder.map((step, i) => {
            const end = kindSpec(step.kind).end;
            return (
              <tr key={i}>
                <td>
                  <input type="number" min={1} max={1000} required aria-label={`Step ${i + 1}: at strikes`} value={step.threshold} disabled={!editable} onChange={(e) => setStep(i, { threshold: Number(e.target.value) })} />
                </td>
                <td>
                  <select
                    aria-label={`Step ${i + 1}: action`}
                    value={step.kind}
                    disabled={!editable}
                    onChange={(e) => {
                      const kind = e.target.value as ActionKind;
                      setStep(i, { kind, durationSeconds: kindSpec(kind).end === "forbidden" ? undefined : (step.durationSeconds ?? (kindSpec(kind).end === "required" ? 86_400 : undefined)) });
                    }}
                  >
                    {LADDER_KINDS.map((k) => (
                      <option key={k} value={k}>
                        {kindSpec(k).label}
                      </option>
                    ))}
                  </select>
                </td>
                <td>
                  {end === "forbidden" ? (
                    <span className="muted">none</span>
                  ) : (
                    <input
                      type="number"
                      min={1}
                      step="any"
                      required={end === "required"}
                      aria-label={`Step ${i + 1}: duration in hours`}
                      value={step.durationSeconds === undefined ? "" : step.durationSeconds / 3600}
                      disabled={!editable}
                      onChange={(e) => setStep(i, { durationSeconds: e.target.value === "" ? undefined : Math.round(Number(e.target.value) * 3600) })}
                    />
                  )}
                </td>
                {editable && (
                  <td>
                    <button type="button" className="ghost" aria-label={`Remove step ${i + 1}`} onClick={() => set({ ladder: form.ladder.filter((_, j) => j !== i) })}>
                      Remove
                    </button>
                  </td>
                )}
              </tr>
            );
          })}
        </Table>
      )}
      <ErrorNote error={save.error} />
      {editable && (
        <div className="actions">
          <button
            type="button"
            className="ghost"
            onClick={() => set({ ladder: [...form.ladder, { threshold: (form.ladder.at(-1)?.threshold ?? 0) + 1, kind: ACTION_KIND.warning }] })}
          >
            Add a step
          </button>
          <button type="button" className="ghost" disabled={!dirty} onClick={() => setForm(saved.data!.policy)}>
            Undo changes
          </button>
          <button type="submit" className="primary" disabled={!dirty || save.isPending}>
            Save strike policy
          </button>
        </div>
      )}
    </form>
  );
}

/** An identity's strikes: on its page and on the case page (`caseId` marks that case's). */
export function StrikesPanel({ orgSlug, projectId, identity, caseId, headingLevel = 2 }: { orgSlug: string; projectId: string; identity: { type: string; externalId: string }; caseId?: string; headingLevel?: 2 | 3 }) {
  const strikes = useQuery({
    queryKey: ["strikes", projectId, identity.type, identity.externalId],
    queryFn: () => trpc.strikes.ofIdentity.query({ orgSlug, projectId, typeName: identity.type, externalId: identity.externalId }),
  });
  const Heading = headingLevel === 2 ? "h2" : "h3";
  const titleId = `strikes-of-${caseId ?? "identity"}`;
  return (
    <section aria-labelledby={titleId} data-testid="strikes-panel">
      <Heading id={titleId}>Strikes</Heading>
      <ErrorNote error={strikes.error} />
      {strikes.isPending ? <Loading /> : strikes.data && <StrikeList data={strikes.data} caseId={caseId} />}
    </section>
  );
}

function StrikeList({ data, caseId }: { data: IdentityStrikes; caseId?: string }) {
  return (
    <>
      <p>
        <strong data-testid="strike-total">{plural(data.total, "strike")}</strong> in force
        {data.nextStep && <span className="muted"> · next at {data.nextStep.threshold}: {stepText(data.nextStep)}</span>}
      </p>
      {data.strikes.length === 0 ? (
        <Empty>No strike.</Empty>
      ) : (
        <ul className="plain">
          {data.strikes.map((s) => (
            <li key={s.id}>
              <Badge tone={s.status === "active" ? "red" : "gray"}>{s.status}</Badge> {plural(s.count, "strike")} · {s.code ? words(s.code) : "decision"} ·{" "}
              {s.caseId === caseId ? <span>this case</span> : <a href={href("cases", s.caseId)}>case</a>} · <span className="muted">{s.status === "removed" ? `removed (${s.removedReason})` : `until ${dateTime(s.expiresAt)}`}</span>
              {s.step && <span> · took the step: {kindSpec(s.step.kind).label}{s.actionId ? "" : " (pending)"}</span>}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
