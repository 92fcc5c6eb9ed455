import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { SEVERITIES, type Severity } from "../../domain/views/severity.ts";
import { trpc } from "../api.ts";
import { useSession } from "../session.tsx";
import { ErrorNote, Field, formatDuration, Loading, ProjectOptions, StackedBars, type Series } from "../ui.tsx";

const SEVERITY_COLORS: Record<Severity, string> = { LOW: "#94a3b8", MEDIUM: "#eab308", HIGH: "#f97316", CRITICAL: "#dc2626" };
/** The chart stacks the most severe first. */
const SEVERITIES_DOWN = [...SEVERITIES].reverse();
const CATEGORY_COLORS = ["#2563eb", "#16a34a", "#9333ea", "#0891b2", "#db2777", "#ca8a04", "#64748b"];

export function OverviewPage() {
  const { projects } = useSession();
  const [days, setDays] = useState(14);
  const [projectId, setProjectId] = useState("");
  const data = useQuery({
    queryKey: ["overview", projectId, days],
    queryFn: () => trpc.dashboard.overview.query({ projectId: projectId || undefined, days }),
    placeholderData: keepPreviousData,
  });
  const o = data.data;
  const severitySeries: Series[] = o ? SEVERITIES_DOWN.map((s) => ({ name: s, values: o.bySeverity[s], color: SEVERITY_COLORS[s] })) : [];
  let categorySeries: Series[] = [];
  if (o) {
    const top = o.byCategory.slice(0, 6);
    const rest = o.byCategory.slice(6);
    categorySeries = top.map((c, i) => ({ name: c.name, values: c.counts, color: CATEGORY_COLORS[i]! }));
    if (rest.length) categorySeries.push({ name: "others", values: o.days.map((_, i) => rest.reduce((sum, c) => sum + (c.counts[i] ?? 0), 0)), color: CATEGORY_COLORS[6]! });
  }
  const f = o?.figures;
  return (
    <section aria-labelledby="overview-title">
      <div className="page-head">
        <h1 id="overview-title">Overview</h1>
        <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Period and project">
          {projects.length > 1 && (
            <Field label="Project">
              <select value={projectId} onChange={(e) => setProjectId(e.target.value)}>
                <option value="">All projects</option>
                <ProjectOptions projects={projects} />
              </select>
            </Field>
          )}
          <Field label="Period">
            <select value={days} onChange={(e) => setDays(Number(e.target.value))}>
              <option value={7}>Last 7 days</option>
              <option value={14}>Last 14 days</option>
              <option value={30}>Last 30 days</option>
              <option value={90}>Last 90 days</option>
            </select>
          </Field>
        </form>
      </div>
      <ErrorNote error={data.error} />
      {o?.backlog.warning && (
        <div className="claim-warning backlog-warning" role="status" aria-label="Background work is behind">
          <p>{o.backlog.warning}</p>
        </div>
      )}
      {!o || !f ? (
        <Loading />
      ) : (
        <>
          <dl className="figures">
            <div className="figure">
              <dt>Pending</dt>
              <dd>{f.pending}</dd>
              <dd className="figure-note muted">reports waiting for a decision</dd>
            </div>
            <div className="figure">
              <dt>Actioned</dt>
              <dd>{f.actioned}</dd>
              <dd className="figure-note muted">resolved in the period</dd>
            </div>
            <div className="figure">
              <dt>Escalated</dt>
              <dd>{f.escalated}</dd>
              <dd className="figure-note muted">in the period</dd>
            </div>
            <div className="figure">
              <dt>Action rate</dt>
              <dd>{f.actionRate == null ? "—" : `${Math.round(f.actionRate * 100)} %`}</dd>
              <dd className="figure-note muted">
                resolved of {f.actioned + f.dismissed} decided ({f.dismissed} dismissed)
              </dd>
            </div>
            <div className="figure">
              <dt>Median time to decision</dt>
              <dd>{f.medianDecisionMs == null ? "—" : formatDuration(f.medianDecisionMs)}</dd>
              <dd className="figure-note muted">from report to resolve or dismiss</dd>
            </div>
            <div className="figure">
              <dt>Open cases</dt>
              <dd>{f.openCases.emergency + f.openCases.high + f.openCases.normal}</dd>
              <dd className="figure-note muted">
                {f.openCases.emergency} emergency · {f.openCases.high} high · {f.openCases.normal} normal
              </dd>
            </div>
          </dl>
          <div className="charts">
            <div className="card">
              <StackedBars title={`Reports per day by severity (${f.received} in the period)`} labels={o.days} series={severitySeries} />
            </div>
            <div className="card">
              <StackedBars title="Reports per day by category" labels={o.days} series={categorySeries} />
            </div>
          </div>
        </>
      )}
    </section>
  );
}
