/**
 * Transparency (DSA Art. 15 and 24(5)): the transparency report of a period, with charts and
 * the tables behind them, and — for admins — the submission of statements of reasons to the EU
 * Transparency Database and its attempts log.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { errorMessage, trpc, type Outputs } from "../api.ts";
import { useSession } from "../session.tsx";
import { Badge, dateTime, Empty, ErrorNote, Field, formatDuration, Loading, ProjectOptions, Table, useToast } from "../ui.tsx";

type Report = Outputs["transparency"]["report"];
type Counted = { key: string; count: number }[];

const DAY = 86_400_000;
const ymd = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The period presets: the last N days up to today, and the previous calendar year. */
function preset(kind: string): { from: string; to: string } {
  const now = Date.now();
  if (kind === "last-year") {
    const y = new Date(now).getUTCFullYear() - 1;
    return { from: `${y}-01-01`, to: `${y}-12-31` };
  }
  const days = Number(kind);
  return { from: ymd(now - (days - 1) * DAY), to: ymd(now) };
}

const SOURCE_LABELS: Record<string, string> = {
  SOURCE_ARTICLE_16: "Art. 16 notice",
  SOURCE_TRUSTED_FLAGGER: "Trusted flagger",
  SOURCE_VOLUNTARY: "Own initiative",
  SOURCE_TYPE_OTHER_NOTIFICATION: "Other notification",
};
const COLORS = ["#2563eb", "#16a34a", "#9333ea", "#0891b2", "#db2777", "#ca8a04", "#64748b"];
/** Readable names of the database's values: DECISION_GROUND_ILLEGAL_CONTENT → "illegal content". */
const label = (key: string, prefix = "") => SOURCE_LABELS[key] ?? key.replace(prefix, "").replaceAll("_", " ").toLowerCase();

/** Horizontal bars in inline SVG (SVG attributes only: the dashboard's CSP allows no inline styles), with a table beside for everyone. */
function Bars({ title, counts, prefix = "" }: { title: string; counts: Counted; prefix?: string }) {
  const total = counts.reduce((a, c) => a + c.count, 0);
  const max = Math.max(1, ...counts.map((c) => c.count));
  const row = 26;
  const W = 480;
  const labelW = 190;
  const H = Math.max(1, counts.length) * row + 4;
  return (
    <figure className="chart card">
      <figcaption>
        {title} <span className="muted">({total})</span>
      </figcaption>
      {counts.length === 0 ? (
        <Empty>None in the period.</Empty>
      ) : (
        <>
          <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${counts.map((c) => `${label(c.key, prefix)} ${c.count}`).join(", ")}`}>
            {counts.map((c, i) => {
              const w = ((W - labelW - 40) * c.count) / max;
              const y = i * row + 4;
              return (
                <g key={c.key}>
                  <text x={labelW - 8} y={y + 15} textAnchor="end" className="axis">
                    {label(c.key, prefix).slice(0, 30)}
                  </text>
                  <rect x={labelW} y={y} width={Math.max(w, c.count ? 2 : 0)} height={row - 8} fill={COLORS[i % COLORS.length]}>
                    <title>{`${label(c.key, prefix)}: ${c.count}`}</title>
                  </rect>
                  <text x={labelW + w + 6} y={y + 15} className="axis">
                    {c.count}
                  </text>
                </g>
              );
            })}
          </svg>
          <details>
            <summary>Table</summary>
            <Table columns={[{ label: "Value" }, { label: "Count", className: "num" }]}>
              {counts.map((c) => (
                <tr key={c.key}>
                  <td>
                    <code>{c.key}</code>
                  </td>
                  <td className="num">{c.count}</td>
                </tr>
              ))}
            </Table>
          </details>
        </>
      )}
    </figure>
  );
}

function Figure({ title, value, note }: { title: string; value: string | number; note?: string }) {
  return (
    <div className="figure">
      <dt>{title}</dt>
      <dd>{value}</dd>
      {note && <dd className="figure-note muted">{note}</dd>}
    </div>
  );
}

/** A share as a percentage; "—" when nothing had a target. */
const shareText = (share: number | null): string => (share === null ? "—" : `${Math.round(share * 100)} %`);

function ReportView({ r }: { r: Report }) {
  const categories: Counted = r.reports.byCategory.map((c) => ({ key: c.category, count: c.count }));
  return (
    <>
      <dl className="figures">
        <Figure title="Reports" value={r.reports.total} note={`${r.reports.automated} filed by automated means`} />
        <Figure title="Notices" value={r.notices.total} note={`${r.notices.article16} Art. 16 · ${r.notices.trustedFlagger} trusted flaggers`} />
        <Figure title="Decisions" value={r.decisions.total} note={`${r.decisions.automated} automated · ${r.decisions.mutedReporterDismissals} muted reporters`} />
        <Figure
          title="Median time to decision"
          value={r.decisions.medianMsToDecision == null ? "—" : formatDuration(r.decisions.medianMsToDecision)}
          note="from report to resolve or dismiss"
        />
        <Figure title="Enforcement actions" value={r.actions.total} note={`${r.statements.total} statements of reasons`} />
        <Figure
          title="Appeals"
          value={r.appeals.received}
          note={`${r.appeals.upheld} upheld · ${r.appeals.overturned} overturned · ${r.appeals.pending} pending${r.appeals.medianMsToDecision == null ? "" : ` · median ${formatDuration(r.appeals.medianMsToDecision)}`}`}
        />
        <Figure
          title="Decided within target"
          value={shareText(r.serviceLevels.casesShareWithinTarget)}
          note={`${r.serviceLevels.casesWithinTarget} of ${r.serviceLevels.casesDecided} cases with a target · appeals: ${r.serviceLevels.appealsWithinTarget} of ${r.serviceLevels.appealsDecided}${r.serviceLevels.appealsShareWithinTarget == null ? "" : ` (${shareText(r.serviceLevels.appealsShareWithinTarget)})`}`}
        />
      </dl>
      <h2>Notices and reports</h2>
      <div className="charts">
        <Bars title="Reports by source" counts={r.reports.bySource} />
        <Bars title="Reports by category" counts={categories} />
      </div>
      <h2>Decisions</h2>
      <div className="charts">
        <Bars title="Resolved, by resolution code" counts={r.decisions.resolved} />
        <Bars title="Dismissed, by reason" counts={r.decisions.dismissed} />
        <Bars title="Enforcement actions by kind" counts={r.actions.byKind} />
        <Bars title="Statements by decision ground" counts={r.statements.byGround} prefix="DECISION_GROUND_" />
        <Bars title="Statements by category" counts={r.statements.byCategory} prefix="STATEMENT_CATEGORY_" />
        <Bars title="Statements by automated decision" counts={r.statements.automatedDecision} prefix="AUTOMATED_DECISION_" />
      </div>
    </>
  );
}

/** Whether the URL typed is on another origin than the stored one (the server then asks for the token again). */
function movesOrigin(stored: string | null, typed: string): boolean {
  if (!stored) return false;
  try {
    return new URL(stored).origin !== new URL(typed).origin;
  } catch {
    return false;
  }
}

function Submission() {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const settings = useQuery({ queryKey: ["transparency-submission"], queryFn: () => trpc.transparency.getSubmission.query({ orgSlug }) });
  const attempts = useQuery({ queryKey: ["transparency-submissions"], queryFn: () => trpc.transparency.submissions.query({ orgSlug, limit: 20 }) });
  const [form, setForm] = useState<{ endpointUrl: string; token: string; enabled: boolean } | null>(null);
  const s = settings.data?.submission;
  const current = form ?? { endpointUrl: s?.endpointUrl ?? "", token: "", enabled: s?.enabled ?? false };
  const refresh = () => Promise.all([qc.invalidateQueries({ queryKey: ["transparency-submission"] }), qc.invalidateQueries({ queryKey: ["transparency-submissions"] })]);
  const save = useMutation({
    mutationFn: () => trpc.transparency.setSubmission.mutate({ orgSlug, endpointUrl: current.endpointUrl, token: current.token || undefined, enabled: current.enabled }),
    onSuccess: () => (setForm(null), toast("Submission settings saved"), void refresh()),
  });
  const run = useMutation({
    mutationFn: () => trpc.transparency.runSubmission.mutate({ orgSlug }),
    onSuccess: (r) => (toast(`Submission queued (${r.pendingStatements} pending)`), void refresh()),
    onError: (e) => toast(errorMessage(e), "error"),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <section aria-labelledby="submission-title">
      <h2 id="submission-title">Submission to the EU Transparency Database</h2>
      <ErrorNote error={settings.error} />
      <form className="card stack" onSubmit={submit} aria-label="Transparency Database submission">
        <div className="inline-form">
          <Field label="API base URL" hint="Statements go to {URL}/statements, 100 at a time.">
            <input type="url" value={current.endpointUrl} onChange={(e) => setForm({ ...current, endpointUrl: e.target.value })} placeholder="https://transparency.dsa.ec.europa.eu/api/v2" required />
          </Field>
          <Field
            label="API token"
            hint={
              !s?.tokenSet
                ? "Required; never shown again."
                : movesOrigin(s.endpointUrl, current.endpointUrl)
                  ? "Required again: the URL is on another server than the one the stored token was given for."
                  : "A token is stored; leave empty to keep it."
            }
          >
            <input type="password" value={current.token} onChange={(e) => setForm({ ...current, token: e.target.value })} autoComplete="off" />
          </Field>
        </div>
        <label>
          <input type="checkbox" checked={current.enabled} onChange={(e) => setForm({ ...current, enabled: e.target.checked })} /> Submit statements of reasons
        </label>
        <ErrorNote error={save.error} />
        <div className="actions">
          <span className="muted">{s ? `${s.pendingStatements} statement(s) not submitted yet` : ""}</span>
          <button type="button" onClick={() => run.mutate()} disabled={!s?.enabled || run.isPending}>
            Submit now
          </button>
          <button type="submit" className="primary" disabled={save.isPending}>
            Save
          </button>
        </div>
      </form>
      <ErrorNote error={attempts.error} />
      {attempts.isPending ? (
        <Loading />
      ) : !attempts.data?.submissions.length ? (
        <Empty>No submission attempts yet.</Empty>
      ) : (
        <Table columns={[{ label: "When" }, { label: "Outcome" }, { label: "HTTP", className: "num" }, { label: "Statements", className: "num" }, { label: "Reason" }]}>
          {attempts.data.submissions.map((a) => (
            <tr key={a.id}>
              <td>{dateTime(a.createdAt)}</td>
              <td>
                <Badge tone={a.status === "submitted" ? "green" : "red"}>{a.status}</Badge>
              </td>
              <td className="num">{a.httpStatus ?? "—"}</td>
              <td className="num">{a.puidsCount}</td>
              <td className="wrap">{a.error ?? ""}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}

export function TransparencyPage() {
  const { orgSlug, projects, can } = useSession();
  const [period, setPeriod] = useState(() => preset("30"));
  const [projectId, setProjectId] = useState("");
  const valid = /^\d{4}-\d\d-\d\d$/.test(period.from) && /^\d{4}-\d\d-\d\d$/.test(period.to);
  const report = useQuery({
    queryKey: ["transparency-report", period.from, period.to, projectId],
    queryFn: () => trpc.transparency.report.query({ orgSlug, from: period.from, to: period.to, projectId: projectId || undefined }),
    enabled: valid,
    placeholderData: keepPreviousData,
  });
  return (
    <section aria-labelledby="transparency-title">
      <div className="page-head">
        <h1 id="transparency-title">Transparency</h1>
        <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Period and project">
          <Field label="Period">
            <select value="" onChange={(e) => e.target.value && setPeriod(preset(e.target.value))}>
              <option value="">Choose…</option>
              <option value="30">Last 30 days</option>
              <option value="90">Last 90 days</option>
              <option value="365">Last 365 days</option>
              <option value="last-year">Last calendar year</option>
            </select>
          </Field>
          <Field label="From">
            <input type="date" value={period.from} max={period.to} onChange={(e) => setPeriod({ ...period, from: e.target.value })} required />
          </Field>
          <Field label="To">
            <input type="date" value={period.to} min={period.from} onChange={(e) => setPeriod({ ...period, to: e.target.value })} required />
          </Field>
          {projects.length > 1 && (
            <Field label="Project">
              <select value={projectId} onChange={(e) => setProjectId(e.target.value)}>
                <option value="">All projects</option>
                <ProjectOptions projects={projects} />
              </select>
            </Field>
          )}
        </form>
      </div>
      <p className="muted">
        The numbers of a transparency report (DSA Art. 15) for {period.from} to {period.to} (UTC). The same report as CSV:{" "}
        <code>GET /api/v1/organizations/{orgSlug}/transparency/report?from=…&amp;to=…&amp;format=csv</code>.
      </p>
      <ErrorNote error={report.error} />
      {report.data ? <ReportView r={report.data} /> : report.isPending && valid ? <Loading /> : null}
      {can("admin") && <Submission />}
    </section>
  );
}
