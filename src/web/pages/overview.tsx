import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { SEVERITIES, type Severity } from "../../domain/views/severity.ts";
import { trpc } from "../api.ts";
import { useSession } from "../session.tsx";
import { ErrorNote, Field, formatDuration, Loading, ProjectOptions, StackedBars, Table, type Series } from "../ui.tsx";
import { OldestAge, targetsText } from "../components/service-levels.tsx";
import { AiCapacityCard } from "../components/ai-capacity.tsx";

const SEVERITY_COLORS: Record<Severity, string> = { LOW: "#94a3b8", MEDIUM: "#eab308", HIGH: "#f97316", CRITICAL: "#dc2626" };
/** The chart stacks the most severe first. */
const SEVERITIES_DOWN = [...SEVERITIES].reverse();
const CATEGORY_COLORS = ["#2563eb", "#16a34a", "#9333ea", "#0891b2", "#db2777", "#ca8a04", "#64748b"];

export function OverviewPage() {
  const { projects, orgSlug } = useSession();
  const [days, setDays] = useState(14);
  const [projectId, setProjectId] = useState("");
  const data = useQuery({
    queryKey: ["overview", projectId, days],
    queryFn: () => trpc.dashboard.overview.query({ projectId: projectId || undefined, days }),
    placeholderData: keepPreviousData,
  });
  const levels = useQuery({
    queryKey: ["service-levels", days],
    queryFn: () => trpc.queues.serviceLevels.query({ orgSlug, days }),
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
      {o && <AiCapacityCard ai={o.ai} projectId={projectId} />}
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
            {levels.data && <BreachFigure levels={levels.data} />}
            <div className="figure">
              <dt>Open cases</dt>
              <dd>{f.openCases.emergency + f.openCases.high + f.openCases.normal}</dd>
              <dd className="figure-note muted">
                {f.openCases.emergency} emergency · {f.openCases.high} high · {f.openCases.normal} normal
              </dd>
            </div>
          </dl>
          {levels.data && <ServiceLevelTable levels={levels.data} />}
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

type Levels = Awaited<ReturnType<typeof trpc.queues.serviceLevels.query>>;

/** The breach tile: breaches recorded in the period, and what is past its target now (queues the caller may work only). */
function BreachFigure({ levels }: { levels: Levels }) {
  const breaches = levels.queues.reduce((n, q) => n + q.breaches.firstReview + q.breaches.decision, 0) + levels.appeals.breaches;
  const firstReview = levels.queues.reduce((n, q) => n + q.overdue.firstReview, 0);
  const decision = levels.queues.reduce((n, q) => n + q.overdue.decision, 0);
  const overdueNow = firstReview + decision + levels.appeals.overdue;
  const targeted = levels.queues.some((q) => q.firstReviewTargetMinutes !== null || q.decisionTargetMinutes !== null);
  return (
    <div className={breaches || overdueNow ? "figure figure-alert" : "figure"} data-tile="sla-breaches">
      <dt>Service-level breaches</dt>
      <dd>{breaches}</dd>
      <dd className="figure-note muted">
        {targeted || levels.appeals.overdue || levels.appeals.breaches
          ? `in the last ${levels.days} days · past target now: ${firstReview} first review, ${decision} decision, ${levels.appeals.overdue} appeal${levels.appeals.overdue === 1 ? "" : "s"}`
          : "no queue has a target yet (set one on the Queues page)"}
      </dd>
    </div>
  );
}

/** Each queue with a target: its oldest open case against it, what is past it now, its breaches. */
function ServiceLevelTable({ levels }: { levels: Levels }) {
  const targeted = levels.queues.filter((q) => q.firstReviewTargetMinutes !== null || q.decisionTargetMinutes !== null);
  if (!targeted.length) return null;
  const now = Date.parse(levels.at);
  return (
    <div className="card" aria-labelledby="service-levels-title">
      <h2 id="service-levels-title">Service levels</h2>
      <Table
        columns={[
          { label: "Queue" },
          { label: "Targets" },
          { label: "Oldest open case" },
          { label: "Past target now", className: "col-num" },
          { label: `Breaches (${levels.days} days)`, className: "col-num" },
        ]}
      >
        {targeted.map((q) => (
          <tr key={q.queueId} data-queue={q.name}>
            <th scope="row">{q.name}</th>
            <td>{targetsText(q)}</td>
            <td>
              {q.oldestCase ? (
                <a href={`#/cases/${q.oldestCase.id}`}>
                  <OldestAge openedAt={q.oldestCase.openedAt} now={now} targets={q} />
                </a>
              ) : (
                <OldestAge openedAt={null} now={now} targets={q} />
              )}
            </td>
            <td className="col-num">
              {q.overdue.firstReview} first review · {q.overdue.decision} decision
            </td>
            <td className="col-num">{q.breaches.firstReview + q.breaches.decision}</td>
          </tr>
        ))}
      </Table>
    </div>
  );
}
