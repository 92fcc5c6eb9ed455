/**
 * Policies (issue 28, docs/ai.md "Policies and shadow runs"): each report category of the project
 * with its live and shadow policy versions; a category's versions (`#/policies/<categoryId>`) with
 * their full text, a form for the next version and, for admins, the buttons that set a version's
 * status; and the shadow comparison: how often the shadow analyses agree with the live ones, the
 * pairs that differ, and the button that makes a shadow version live (promotes it).
 * Moderators read all of it; only admins write (the server refuses the rest either way).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent, type ReactNode } from "react";
import { MAX_POLICY_CHARS, POLICY_STATUSES, type CategoryPolicyView, type PairAnswer, type PolicyStatus, type PolicyVersionView } from "../../domain/views/policy.ts";
import { trpc } from "../api.ts";
import { usePeople } from "../components/people.ts";
import { href } from "../router.ts";
import { useSession } from "../session.tsx";
import { Badge, dateTime, Empty, ErrorNote, Field, Loading, QueryTable, SeverityBadge, TimeAgo, useToast } from "../ui.tsx";

const STATUS_TONE = { draft: "gray", shadow: "purple", live: "green", retired: "neutral" } as const;
/** The words of a button that sets a version's status. */
const STATUS_ACTION: Record<PolicyStatus, string> = { live: "Make live", shadow: "Make shadow", draft: "Make draft", retired: "Retire" };

export function PoliciesPage({ categoryId }: { categoryId: string | undefined }) {
  const { projectId, projects } = useSession();
  if (!projectId) return <Empty>Create a project first.</Empty>;
  const projectName = projects.find((p) => p.id === projectId)?.name ?? "";
  return <PoliciesHome key={projectId} projectId={projectId} projectName={projectName} categoryId={categoryId} />;
}

export const PolicyStatusBadge = ({ status }: { status: PolicyStatus }) => (
  <Badge tone={STATUS_TONE[status]}>
    <span data-policy-status={status}>{status}</span>
  </Badge>
);

/** The first line of a policy, cut to a table cell's worth. */
const firstLine = (text: string): string => {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > 90 ? `${line.slice(0, 89)}…` : line;
};

function usePolicies(projectId: string) {
  const { orgSlug } = useSession();
  return useQuery({ queryKey: ["policies", "list", projectId], queryFn: () => trpc.policies.list.query({ orgSlug, projectId }) });
}

/** Sets a version's status; everything about policies is asked again after. */
function useSetStatus(projectId: string) {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  return useMutation({
    mutationFn: (v: { categoryId: string; version: number; status: PolicyStatus }) => trpc.policies.setStatus.mutate({ orgSlug, projectId, ...v }),
    onSuccess: (r) => {
      toast(`${r.version.category}: version ${r.version.version} is ${r.version.status}`);
      void qc.invalidateQueries({ queryKey: ["policies"] });
    },
    onError: (e) => toast(e.message, "error"),
  });
}

function PoliciesHome({ projectId, projectName, categoryId }: { projectId: string; projectName: string; categoryId: string | undefined }) {
  const policies = usePolicies(projectId);
  const list = policies.data?.policies ?? [];
  const chosen = categoryId ? list.find((p) => p.categoryId === categoryId) : undefined;
  return (
    <section aria-labelledby="policies-title">
      <div className="page-head">
        <h1 id="policies-title">Policies</h1>
        <p className="muted">
          {projectName} · the text the AI classifier reads for each category, in versions. A live version replaces the category&apos;s description; a shadow version is tried on live
          reports without acting. How to write one: docs/ai.md.
        </p>
      </div>
      <section className="card" aria-labelledby="categories-title">
        <div className="section-head">
          <h2 id="categories-title">Categories</h2>
        </div>
        <QueryTable
          error={policies.error}
          pending={policies.isPending}
          isEmpty={list.length === 0}
          empty="No report category in this project."
          className="policies"
          caption="Each category's live and shadow policy versions"
          columns={[{ label: "Category" }, { label: "Live" }, { label: "Shadow" }, { label: "Versions", className: "col-num" }, { label: "Actions", srOnly: true }]}
        >
          {list.map((p) => (
            <tr key={p.categoryId} data-category={p.category} aria-current={p.categoryId === categoryId ? "true" : undefined}>
              <th scope="row">{p.category}</th>
              <td data-cell="live">{p.live ? <VersionGist version={p.live} /> : <span className="muted">{p.description ? `Description: ${firstLine(p.description)}` : "Description only"}</span>}</td>
              <td data-cell="shadow">{p.shadow ? <VersionGist version={p.shadow} /> : <span className="muted">—</span>}</td>
              <td className="col-num" data-cell="versions">
                {p.versions}
              </td>
              <td className="row-actions">
                <a className="button small secondary" href={href("policies", p.categoryId)} aria-label={`Versions of ${p.category}`}>
                  Versions
                </a>
              </td>
            </tr>
          ))}
        </QueryTable>
      </section>
      {categoryId && policies.data && (chosen ? <CategoryVersions key={chosen.categoryId} projectId={projectId} policy={chosen} /> : <ErrorNote error={new Error("There is no such category in this project.")} />)}
      <ShadowComparisonSection projectId={projectId} policies={list} />
    </section>
  );
}

const VersionGist = ({ version }: { version: PolicyVersionView }) => (
  <span className="policy-gist">
    <strong>v{version.version}</strong> <span className="muted">{firstLine(version.text)}</span>
  </span>
);

// ---------------------------------------------------------------------------------------------
// A category's versions

function CategoryVersions({ projectId, policy }: { projectId: string; policy: CategoryPolicyView }) {
  const { orgSlug, can } = useSession();
  const who = usePeople();
  const versions = useQuery({
    queryKey: ["policies", "versions", projectId, policy.categoryId],
    queryFn: () => trpc.policies.versions.query({ orgSlug, projectId, categoryId: policy.categoryId }),
  });
  const setStatus = useSetStatus(projectId);
  const list = versions.data?.versions ?? [];
  const admin = can("admin");
  return (
    <section className="card" aria-labelledby="versions-title" data-testid="policy-versions">
      <div className="section-head">
        <h2 id="versions-title">Versions of {policy.category}</h2>
      </div>
      {policy.description && <p className="muted">Description (read when no version is live): {policy.description}</p>}
      <QueryTable
        error={versions.error}
        pending={versions.isPending}
        isEmpty={list.length === 0}
        empty="No version yet: the classifier reads the category's description."
        className="policy-versions"
        caption={`The policy versions of ${policy.category}, newest first`}
        columns={[{ label: "Version", className: "col-num" }, { label: "Status" }, { label: "Created by" }, { label: "Created" }, { label: "Text" }, admin && { label: "Actions", srOnly: true }]}
      >
        {list.map((v) => (
          <tr key={v.version} data-version={v.version}>
            <th scope="row" className="col-num">
              {v.version}
            </th>
            <td>
              <PolicyStatusBadge status={v.status} />
            </td>
            <td>{who(v.createdBy)}</td>
            <td>
              <TimeAgo iso={v.createdAt} />
            </td>
            <td>
              <details className="policy-text">
                <summary>
                  {firstLine(v.text)} <span className="sr-only">(the full text of version {v.version})</span>
                </summary>
                <pre>{v.text}</pre>
              </details>
            </td>
            {admin && (
              <td className="row-actions">
                {POLICY_STATUSES.filter((s) => s !== v.status).map((s) => (
                  <button
                    key={s}
                    type="button"
                    className={s === "live" ? "small" : "small secondary"}
                    disabled={setStatus.isPending}
                    onClick={() => setStatus.mutate({ categoryId: v.categoryId, version: v.version, status: s })}
                    aria-label={`${STATUS_ACTION[s]}: ${policy.category} version ${v.version}`}
                  >
                    {STATUS_ACTION[s]}
                  </button>
                ))}
              </td>
            )}
          </tr>
        ))}
      </QueryTable>
      {admin && <NewVersionForm projectId={projectId} policy={policy} />}
    </section>
  );
}

function NewVersionForm({ projectId, policy }: { projectId: string; policy: CategoryPolicyView }) {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const [text, setText] = useState("");
  const [status, setStatus] = useState<"draft" | "shadow" | "live">("draft");
  const create = useMutation({
    mutationFn: () => trpc.policies.createVersion.mutate({ orgSlug, projectId, categoryId: policy.categoryId, text, status }),
    onSuccess: (r) => {
      toast(`${r.version.category}: version ${r.version.version} written (${r.version.status})`);
      setText("");
      setStatus("draft");
      void qc.invalidateQueries({ queryKey: ["policies"] });
    },
  });
  const over = text.length > MAX_POLICY_CHARS;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!over) create.mutate();
  };
  return (
    <form className="stack policy-form" onSubmit={submit} aria-labelledby="new-version-title" data-testid="new-version-form">
      <h3 id="new-version-title">New version of {policy.category}</h3>
      <Field label="Policy text" hint="A definition, what violates and what does not, examples, edge cases. The text of a version never changes once written.">
        <textarea rows={10} value={text} onChange={(e) => setText(e.target.value)} aria-invalid={over || undefined} />
      </Field>
      <p className={over ? "error policy-count" : "muted policy-count"} data-testid="policy-count" aria-live="polite">
        {text.length.toLocaleString("en-US")} / {MAX_POLICY_CHARS.toLocaleString("en-US")} characters{over && ": too long"}
      </p>
      <Field label="Status of the new version" hint="Draft: used by nothing. Shadow: tried beside the live one without acting. Live: the classifier reads it.">
        <select value={status} onChange={(e) => setStatus(e.target.value as typeof status)}>
          <option value="draft">draft</option>
          <option value="shadow">shadow</option>
          <option value="live">live</option>
        </select>
      </Field>
      <ErrorNote error={create.error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={over || create.isPending}>
          Write version {policy.versions + 1}
        </button>
      </div>
    </form>
  );
}

// ---------------------------------------------------------------------------------------------
// The shadow comparison

const rate = (agree: number, r: number | null): string => (r === null ? "—" : `${(r * 100).toFixed(1)} % (${agree})`);

function ShadowComparisonSection({ projectId, policies }: { projectId: string; policies: CategoryPolicyView[] }) {
  const { orgSlug, can } = useSession();
  const comparison = useQuery({ queryKey: ["policies", "shadow", projectId], queryFn: () => trpc.policies.shadowComparison.query({ orgSlug, projectId }) });
  const promote = useSetStatus(projectId);
  const shadows = policies.filter((p) => p.shadow);
  const c = comparison.data;
  return (
    <section className="card" aria-labelledby="shadow-title" data-testid="shadow-comparison">
      <div className="section-head">
        <h2 id="shadow-title">Shadow comparison</h2>
      </div>
      <p className="muted">
        Reports enriched in the last 7 days that also have a shadow analysis: how often the shadow configuration agrees with the live one. A shadow analysis never acts.
      </p>
      <h3>Shadow versions</h3>
      {shadows.length === 0 ? (
        <Empty>No category has a shadow version.</Empty>
      ) : (
        <ul className="shadow-versions">
          {shadows.map((p) => (
            <li key={p.categoryId} data-category={p.category}>
              <span>
                <strong>{p.category}</strong>: shadow version {p.shadow!.version}
                {p.live ? ` (live: version ${p.live.version})` : " (live: the description)"}
              </span>{" "}
              {can("admin") && (
                <button type="button" className="small" disabled={promote.isPending} onClick={() => promote.mutate({ categoryId: p.categoryId, version: p.shadow!.version, status: "live" })}>
                  Make version {p.shadow!.version} live
                  <span className="sr-only"> for {p.category}</span>
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <ErrorNote error={comparison.error} />
      {comparison.isPending && <Loading />}
      {c && (
        <>
          <dl className="figures" aria-label="Agreement of the shadow analyses with the live ones">
            <Figure label="Pairs" testId="pairs" value={c.pairs} note={c.truncated ? "the newest of the period" : `${dateTime(c.from)} – ${dateTime(c.to)}`} />
            <Figure label="Verdict agreement" testId="verdict" value={rate(c.verdict.agree, c.verdict.rate)} note={`violation for live only: ${c.verdict.liveOnly} · shadow only: ${c.verdict.shadowOnly}`} />
            <Figure label="Categories agreement" testId="categories" value={rate(c.categories.agree, c.categories.rate)} />
            <Figure label="Severity agreement" testId="severity" value={rate(c.severity.agree, c.severity.rate)} />
          </dl>
          <QueryTable
            error={null}
            pending={false}
            isEmpty={c.differences.length === 0}
            empty={c.pairs === 0 ? "No pair yet: shadow analyses come with the next enriched reports." : "The shadow and live analyses agree on every pair."}
            className="shadow-differences"
            caption="Pairs that differ, newest first"
            columns={[{ label: "Report" }, { label: "When" }, { label: "Live answer" }, { label: "Shadow answer" }]}
          >
            {c.differences.map((d) => (
              <tr key={d.reportId} data-report={d.reportId}>
                <td>
                  <a href={href("reports", d.reportId)}>
                    <span className="sr-only">Report </span>
                    <code>{d.reportId.slice(0, 12)}</code>
                  </a>
                </td>
                <td>
                  <TimeAgo iso={d.at} />
                </td>
                <td data-answer="live">
                  <Answer answer={d.live} />
                </td>
                <td data-answer="shadow">
                  <Answer answer={d.shadow} />
                </td>
              </tr>
            ))}
          </QueryTable>
        </>
      )}
    </section>
  );
}

function Figure({ label, value, note, testId }: { label: string; value: ReactNode; note?: ReactNode; testId: string }) {
  return (
    <div className="figure" data-figure={testId}>
      <dt>{label}</dt>
      <dd>{value}</dd>
      {note && <dd className="figure-note muted">{note}</dd>}
    </div>
  );
}

const versionsOf = (v: Record<string, number>): string =>
  Object.entries(v)
    .map(([category, n]) => `${category} v${n}`)
    .join(", ");

function Answer({ answer: a }: { answer: PairAnswer }) {
  return (
    <div className="pair-answer">
      <span data-testid="answer-summary">
        <SeverityBadge severity={a.severity} /> {a.categories.length ? a.categories.join(", ") : "no category"} · {a.confidence}
      </span>
      <span className="field-hint">
        <code>{a.model}</code>
        {Object.keys(a.policyVersions).length > 0 && ` · policies: ${versionsOf(a.policyVersions)}`}
      </span>
      {a.reasoning && <span className="pair-reasoning">{a.reasoning}</span>}
    </div>
  );
}
