import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState } from "react";
import { QUEUE_PAGE_SIZE, QUEUE_VIEWS, teamOfView, type QueueView } from "../../domain/views/queue.ts";
import { teamLabel } from "../../domain/views/report.ts";
import { trpc, type Inputs, type QueueItem } from "../api.ts";
import { useSession } from "../session.tsx";
import { DecisionDialog, useClaim, type DecisionAction, type DecisionTarget } from "../decisions.tsx";
import { href, navigate } from "../router.ts";
import { Badge, BucketBadge, dateTime, Dialog, Field, Kbd, ProjectOptions, QueryTable, SeverityBadge, StatusBadge, TimeAgo, useShortcuts } from "../ui.tsx";
import { caseTitle } from "../components/case-title.ts";
import { OldestAge, targetsText } from "../components/service-levels.tsx";

type QueueInput = Inputs["dashboard"]["queue"];
type Filters = { view: string; projectId: string; status: string; category: string; bucket: string; assigned: string; tag: string; queueId: string };
const NO_FILTERS: Filters = { view: "", projectId: "", status: "", category: "", bucket: "", assigned: "", tag: "", queueId: "" };
const FILTERS_KEY = "flagstaff.queueFilters";
/** Where the moderator was in the queue (page cursors, highlighted row), so that coming back from a case lands there. */
const POSITION_KEY = "flagstaff.queuePosition";
const BUCKET_SAYS: Record<string, string[]> = { emergency: ["CRITICAL"], high: ["HIGH"] };


const VIEW_LABELS: Partial<Record<QueueView, string>> = { open: "All open", unassigned: "Unassigned", mine: "Assigned to me", appealed: "Appealed" };

/** The tab label of a view. */
export function viewLabel(view: QueueView): string {
  const team = teamOfView(view);
  return team ? `Escalated: ${teamLabel(team)}` : (VIEW_LABELS[view] ?? view);
}

function loadFilters(): Filters {
  try {
    return { ...NO_FILTERS, ...(JSON.parse(sessionStorage.getItem(FILTERS_KEY) ?? "{}") as Partial<Filters>) };
  } catch {
    return NO_FILTERS;
  }
}

interface Position {
  /** The filters the position belongs to (JSON of Filters). */
  filters: string;
  /** The cursor of each page before the current one (the first page has none). */
  cursors: string[];
  index: number;
  caseId: string | null;
}

function loadPosition(filters: Filters): Position {
  const fresh: Position = { filters: JSON.stringify(filters), cursors: [], index: 0, caseId: null };
  try {
    const saved = JSON.parse(sessionStorage.getItem(POSITION_KEY) ?? "null") as Position | null;
    return saved && saved.filters === fresh.filters && Array.isArray(saved.cursors) ? saved : fresh;
  } catch {
    return fresh;
  }
}

/** `view`: the view to open on (the navigation's "Assigned to me" opens "mine"). */
export function QueuePage({ view: openOn }: { view?: QueueView } = {}) {
  const { me, can, projects, orgSlug } = useSession();
  const isModerator = can("moderator");
  const [filters, setFiltersState] = useState<Filters>(() => (openOn ? { ...loadFilters(), view: openOn } : loadFilters()));
  const initial = useRef<Position | null>(null);
  initial.current ??= loadPosition(filters);
  /** Cursors of the pages before this one: the page is cursors.length + 1. */
  const [cursors, setCursors] = useState<string[]>(initial.current.cursors);
  const applyFilters = (next: Filters) => {
    sessionStorage.setItem(FILTERS_KEY, JSON.stringify(next));
    setFiltersState(next);
    setCursors([]);
    setActive(0);
  };
  const setFilter = (k: keyof Filters, v: string) => applyFilters({ ...filters, [k]: v, ...(k === "projectId" ? { category: "" } : {}) });
  const input: QueueInput = {
    projectId: filters.projectId || undefined,
    view: (filters.view || undefined) as QueueInput["view"],
    status: (filters.status || undefined) as QueueInput["status"],
    category: filters.category || undefined,
    bucket: (filters.bucket || undefined) as QueueInput["bucket"],
    assigned: (filters.assigned || undefined) as QueueInput["assigned"],
    tag: filters.tag || undefined,
    queueId: filters.queueId || undefined,
    cursor: cursors.at(-1),
    limit: QUEUE_PAGE_SIZE,
  };
  const queue = useQuery({ queryKey: ["queue", input], queryFn: () => trpc.dashboard.queue.query(input), placeholderData: keepPreviousData });
  // The chosen queue's service levels (targets, oldest open case, cases past a target now).
  const serviceLevels = useQuery({ queryKey: ["service-levels", orgSlug], queryFn: () => trpc.queues.serviceLevels.query({ orgSlug }), enabled: !!filters.queueId, refetchInterval: 60_000 });
  const level = filters.queueId ? serviceLevels.data?.queues.find((q) => q.queueId === filters.queueId) : undefined;
  const hasTargets = !!level && (level.firstReviewTargetMinutes !== null || level.decisionTargetMinutes !== null);
  const now = serviceLevels.data ? Date.parse(serviceLevels.data.at) : Date.now();
  const categoryProjects = filters.projectId ? [filters.projectId] : projects.map((p) => p.id);
  const categories = useQuery({
    queryKey: ["categories", "names", categoryProjects],
    queryFn: async () => {
      const lists = await Promise.all(categoryProjects.map((projectId) => trpc.categories.reportReasons.query({ projectId })));
      return [...new Set(lists.flatMap((l) => l.reasons.map((r) => r.name)))].sort();
    },
    enabled: categoryProjects.length > 0,
  });
  const tags = useQuery({ queryKey: ["tags"], queryFn: () => trpc.dashboard.tags.query(), staleTime: 30_000 });

  const items = queue.data?.items ?? [];
  const counts = queue.data?.counts;
  const cap = queue.data?.countCap ?? Infinity;
  const [active, setActive] = useState(initial.current.index);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [dialog, setDialog] = useState<{ action: DecisionAction; targets: DecisionTarget[] } | null>(null);
  const [help, setHelp] = useState(false);
  const claim = useClaim();
  const rows = useRef<(HTMLTableRowElement | null)[]>([]);
  /**
   * After a dialog closes, focus goes back to the highlighted row; after a decision, again once
   * the queue fetched after it (`after`) has arrived and the decided row is gone.
   */
  const refocus = useRef<{ after: number } | null>(null);
  const restored = useRef(false);
  /** The highlighted case's id as of the last render. */
  const activeId = useRef<string | null>(null);
  /** Where the highlight went when the rows last changed (read before the state has it). */
  const settled = useRef<number | null>(null);

  // Rows that arrived since the page was opened are marked "new".
  const seen = useRef<Set<string> | null>(null);
  const openedAt = useRef(Date.now());
  const fresh = useMemo(() => {
    const out = new Set<string>();
    if (!queue.data || !seen.current) return out;
    // Not seen yet and with a report since the page opened (not merely let in by a filter).
    for (const c of items) if (!seen.current.has(c.id) && Date.parse(c.lastReportAt) >= openedAt.current - 5000) out.add(c.id);
    return out;
  }, [queue.data]);
  useEffect(() => {
    if (!queue.data) return;
    seen.current ??= new Set();
    for (const c of items) seen.current.add(c.id);
  }, [queue.data]);

  const focusLink = (i: number) => rows.current[i]?.querySelector<HTMLElement>("a.case-link")?.focus();

  // Selection only keeps cases that are still in the queue; the highlight stays on its case, or
  // keeps its position when the case has gone (the row below a decided case takes its place);
  // on coming back from a case it is where it was (the same case, or the same position).
  useEffect(() => {
    setSelected((s) => {
      const ids = new Set(items.map((c) => c.id));
      const next = new Set([...s].filter((id) => ids.has(id)));
      return next.size === s.size ? s : next;
    });
    if (!queue.data || queue.isPlaceholderData) return;
    if (!restored.current) {
      restored.current = true;
      const saved = initial.current;
      const at = saved?.caseId ? items.findIndex((c) => c.id === saved.caseId) : -1;
      const index = at >= 0 ? at : Math.min(saved?.index ?? 0, Math.max(0, items.length - 1));
      setActive(index);
      // Back from a case (a position was saved): the keyboard carries on from that row.
      if (saved?.caseId) requestAnimationFrame(() => focusLink(index));
      return;
    }
    // The highlighted case where it is now (cases above it may have come or gone), else its position.
    const at = activeId.current ? items.findIndex((c) => c.id === activeId.current) : -1;
    const next = at >= 0 ? at : Math.min(active, Math.max(0, items.length - 1));
    settled.current = next;
    setActive(next);
  }, [items]);

  useEffect(() => {
    activeId.current = items[active]?.id ?? null;
    if (!restored.current) return;
    const position: Position = { filters: JSON.stringify(filters), cursors, index: active, caseId: activeId.current };
    sessionStorage.setItem(POSITION_KEY, JSON.stringify(position));
  }, [active, items, cursors, filters]);

  useEffect(() => {
    // The rows' effect above set `settled` in this same commit when the rows changed.
    const index = settled.current ?? Math.min(active, Math.max(0, items.length - 1));
    settled.current = null;
    const r = refocus.current;
    if (!r || dialog || help) return;
    focusLink(index);
    if (queue.dataUpdatedAt >= r.after && !queue.isFetching) refocus.current = null;
  }, [dialog, help, items, queue.dataUpdatedAt, queue.isFetching]);

  const current: QueueItem | undefined = items[active];
  const focusRow = (i: number) => {
    const n = Math.max(0, Math.min(items.length - 1, i));
    setActive(n);
    focusLink(n);
  };
  const targetsFor = (list: QueueItem[]): DecisionTarget[] =>
    list.map((c) => ({
      caseId: c.id,
      reportId: c.openReportId,
      label: caseTitle(c),
      projectId: c.projectId,
      bucket: c.bucket,
      reasons: c.reasons,
      assignee: c.assignee,
      hasSubject: c.subject != null,
      hasContent: c.target != null,
    }));
  const chosen = (): QueueItem[] => (selected.size ? items.filter((c) => selected.has(c.id)) : current ? [current] : []);
  const decide = (action: DecisionAction) => {
    const list = chosen();
    if (list.length) setDialog({ action, targets: targetsFor(list) });
  };
  const toggleClaim = (c: QueueItem) => {
    if (c.assignee?.id === me.user.id) return claim.mutate({ caseIds: [c.id], assigneeId: null });
    if (c.assignee && !confirm(`${c.assignee.email} is working on this case. Take it over?`)) return;
    claim.mutate({ caseIds: [c.id], assigneeId: me.user.id });
  };
  const toggleSelect = (id: string) =>
    setSelected((s) => {
      const next = new Set(s);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const nextPage = () => {
    const next = queue.data?.nextCursor;
    if (!next) return;
    setCursors((c) => [...c, next]);
    setActive(0);
    document.getElementById("queue-title")?.scrollIntoView({ block: "start" });
  };
  const previousPage = () => {
    if (!cursors.length) return;
    setCursors((c) => c.slice(0, -1));
    setActive(0);
    document.getElementById("queue-title")?.scrollIntoView({ block: "start" });
  };

  useShortcuts({
    j: () => focusRow(active + 1),
    ArrowDown: () => focusRow(active + 1),
    k: () => focusRow(active - 1),
    ArrowUp: () => focusRow(active - 1),
    o: () => current && navigate(href("cases", current.id)),
    // Enter on a focused link or button is that element's own (useShortcuts leaves it alone).
    Enter: () => current && navigate(href("cases", current.id)),
    "]": nextPage,
    "[": previousPage,
    "?": () => setHelp(true),
    ...(isModerator
      ? {
          x: () => current && toggleSelect(current.id),
          c: () => current && toggleClaim(current),
          r: () => decide("resolve"),
          d: () => decide("dismiss"),
          e: () => decide("escalate"),
        }
      : {}),
  });

  const multiProject = projects.length > 1;
  const selectedItems = items.filter((c) => selected.has(c.id));
  const othersClaimed = selectedItems.filter((c) => c.assignee && c.assignee.id !== me.user.id).length;
  const view = (filters.view || "open") as QueueView;
  const first = cursors.length * QUEUE_PAGE_SIZE + 1;
  // While another page loads, the rows shown are the previous page's: no range for them.
  const range = !counts || queue.isPlaceholderData ? "…" : items.length ? `${first}–${first + items.length - 1} of ${countText(counts.total, cap)}` : `0 of ${countText(counts.total, cap)}`;
  const filtered = Object.entries(filters).some(([k, v]) => k !== "view" && k !== "queueId" && v);

  return (
    <section aria-labelledby="queue-title">
      <div className="page-head">
        <h1 id="queue-title">Review queue</h1>
        <p className="counts" aria-live="polite" data-testid="queue-count">
          {counts ? (
            <>
              <strong>{countText(counts.total, cap)}</strong> {view === "appealed" ? "appealed" : "open"} case{counts.total === 1 ? "" : "s"}
              <span className="count-chip count-emergency">{countText(counts.emergency, cap)} emergency</span>
              <span className="count-chip count-high">{countText(counts.high, cap)} high</span>
              <span className="count-chip count-normal">{countText(counts.normal, cap)} normal</span>
            </>
          ) : (
            " "
          )}
        </p>
      </div>

      <QueuePicker
        queues={queue.data?.queues ?? []}
        cap={cap}
        value={filters.queueId}
        ordering={queue.data?.ordering ?? null}
        onChange={(id) => setFilter("queueId", id)}
      />
      {level && hasTargets && (
        <p className="queue-sla" data-testid="queue-sla">
          Targets: {targetsText(level)} · oldest open case{" "}
          {level.oldestCase ? (
            <a href={href("cases", level.oldestCase.id)}>
              <OldestAge openedAt={level.oldestCase.openedAt} now={now} targets={level} />
            </a>
          ) : (
            <OldestAge openedAt={null} now={now} targets={level} />
          )}
          {level.firstReviewTargetMinutes !== null && <> · {level.overdue.firstReview} past the first-review target</>}
          {level.decisionTargetMinutes !== null && <> · {level.overdue.decision} past the decision target</>}
        </p>
      )}
      {isModerator && (
        <p className="review-start">
          <a className="button primary" href={`${href("review")}${filters.queueId ? `?queue=${encodeURIComponent(filters.queueId)}` : ""}`}>
            Start reviewing
          </a>{" "}
          <span className="muted small">one case at a time in this queue's order, each held for you while you decide</span>
        </p>
      )}

      <ul className="views" aria-label="Queue views">
        {QUEUE_VIEWS.map((v) => (
          <li key={v}>
            <button type="button" className="small secondary" aria-pressed={view === v} onClick={() => setFilter("view", v === "open" ? "" : v)} data-view={v}>
              {viewLabel(v)}
              <span className="view-count">{queue.data ? countText(queue.data.views[v], cap) : "…"}</span>
            </button>
          </li>
        ))}
      </ul>

      <form className="filters" aria-label="Filter the queue" onSubmit={(e) => e.preventDefault()}>
        {multiProject && (
          <Field label="Project">
            <select value={filters.projectId} onChange={(e) => setFilter("projectId", e.target.value)}>
              <option value="">All projects</option>
              <ProjectOptions projects={projects} />
            </select>
          </Field>
        )}
        <Field label="Status">
          <select value={filters.status} onChange={(e) => setFilter("status", e.target.value)}>
            <option value="">Any open status</option>
            <option value="OPEN">Open</option>
            <option value="TRIAGED">Triaged</option>
            <option value="IN_REVIEW">In review</option>
          </select>
        </Field>
        <Field label="Category">
          <select value={filters.category} onChange={(e) => setFilter("category", e.target.value)}>
            <option value="">All categories</option>
            {(categories.data ?? []).map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Severity">
          <select value={filters.bucket} onChange={(e) => setFilter("bucket", e.target.value)}>
            <option value="">All severities</option>
            <option value="emergency">Emergency (critical)</option>
            <option value="high">High</option>
            <option value="normal">Normal (medium, low)</option>
          </select>
        </Field>
        <Field label="Assigned">
          <select value={filters.assigned} onChange={(e) => setFilter("assigned", e.target.value)}>
            <option value="">To anyone or nobody</option>
            <option value="me">To me</option>
            <option value="unclaimed">To nobody</option>
          </select>
        </Field>
        <Field label="Tag">
          <select value={filters.tag} onChange={(e) => setFilter("tag", e.target.value)}>
            <option value="">Any tag or none</option>
            {filters.tag && !(tags.data?.tags ?? []).some((t) => t.tag === filters.tag) && <option value={filters.tag}>{filters.tag}</option>}
            {(tags.data?.tags ?? []).map((t) => (
              <option key={t.tag} value={t.tag}>
                {t.tag} ({t.cases})
              </option>
            ))}
          </select>
        </Field>
        {filtered && (
          <button type="button" className="ghost small" onClick={() => applyFilters({ ...NO_FILTERS, view: filters.view, queueId: filters.queueId })}>
            Clear filters
          </button>
        )}
      </form>

      {isModerator && selected.size > 0 && (
        <div className="bulkbar" role="region" aria-label="Bulk actions">
          <span>
            <strong>{selected.size}</strong> selected
            {othersClaimed > 0 && <span className="muted"> · {othersClaimed} assigned to someone else</span>}
          </span>
          <button type="button" onClick={() => claim.mutate({ caseIds: [...selected], assigneeId: me.user.id })}>
            Assign to me
          </button>
          <button type="button" className="primary" onClick={() => decide("resolve")}>
            Resolve
          </button>
          <button type="button" onClick={() => decide("dismiss")}>
            Dismiss
          </button>
          <button type="button" className="warn" onClick={() => decide("escalate")}>
            Escalate
          </button>
          <button type="button" className="ghost" onClick={() => setSelected(new Set())}>
            Clear selection
          </button>
        </div>
      )}

      <QueryTable
        error={queue.error}
        pending={queue.isPending}
        isEmpty={items.length === 0}
        empty={
          cursors.length ? (
            <>Nothing more on this page: the cases here were decided meanwhile.</>
          ) : (
            <>Nothing to review{filtered || view !== "open" ? " in this view with these filters" : ""}. New reports appear here by themselves.</>
          )
        }
        className="queue"
        describedBy="queue-help"
        columns={[
          isModerator && {
            className: "col-check",
            label: (
              <input
                type="checkbox"
                aria-label="Select all cases shown"
                checked={selected.size > 0 && selected.size === items.length}
                onChange={(e) => setSelected(e.target.checked ? new Set(items.map((c) => c.id)) : new Set())}
              />
            ),
          },
          { label: "Severity" },
          { label: "Case" },
          multiProject && { label: "Project", className: "col-project" },
          { label: "Reports", className: "col-num" },
          { label: "Status" },
          { label: "Waiting", className: "col-age" },
          { label: "Assigned" },
        ]}
      >
        {items.map((c, i) => {
          const mine = c.assignee?.id === me.user.id;
          const taken = c.assignee && !mine;
          return (
            <tr
              key={c.id}
              ref={(el) => {
                rows.current[i] = el;
              }}
              className={[i === active ? "active" : "", taken ? "taken" : "", fresh.has(c.id) ? "fresh" : ""].join(" ")}
              data-case-id={c.id}
              onFocus={() => setActive(i)}
            >
              {isModerator && (
                <td className="col-check">
                  <input type="checkbox" aria-label={`Select ${caseTitle(c)}`} checked={selected.has(c.id)} onChange={() => toggleSelect(c.id)} />
                </td>
              )}
              <td>
                <div className="stack-xs">
                  <BucketBadge bucket={c.bucket} />
                  {/* The bucket says CRITICAL or HIGH already; below it, tell MEDIUM from LOW. */}
                  {!BUCKET_SAYS[c.bucket]?.includes(c.severity) && <SeverityBadge severity={c.severity} />}
                </div>
              </td>
              <td className="col-case">
                <a className="case-link" href={href("cases", c.id)}>
                  {caseTitle(c)}
                </a>
                {fresh.has(c.id) && <Badge tone="blue">new</Badge>}
                {c.trustedFlagged && (
                  <span className="badge badge-green" data-testid="trusted-flagger" title="A trusted flagger (DSA Art. 22) reported this: it goes first in its bucket">
                    Trusted flagger
                  </span>
                )}
                {c.escalation && (
                  <span className="badge badge-purple badge-escalated" data-testid="escalation" title={`Escalated ${new Date(c.escalation.at).toLocaleString()}`}>
                    Escalated to {teamLabel(c.escalation.team)}
                  </span>
                )}
                {c.subject && c.target && <span className="muted"> · about {c.subject.displayName}</span>}
                {c.excerpt && <p className="excerpt">{c.excerpt}</p>}
                <div className="chips">
                  {c.reasons.map((r) => (
                    <span key={r} className="chip">
                      {r}
                    </span>
                  ))}
                  {c.tags.map((t) => (
                    <span key={`tag-${t}`} className="chip chip-tag" data-tag={t}>
                      <span className="sr-only">tag </span>#{t}
                    </span>
                  ))}
                  {c.ai && (
                    <span className="chip chip-ai" title="AI analysis">
                      AI {c.ai.severity} · {c.ai.confidence}%
                    </span>
                  )}
                </div>
              </td>
              {multiProject && <td className="col-project">{c.projectName}</td>}
              <td className="col-num">{c.reportCount}</td>
              <td>
                <StatusBadge status={c.status} />
              </td>
              <td className="col-age">
                <TimeAgo iso={c.createdAt} />
                {level && pastTarget(level, c.createdAt, !!c.assignee, now) && (
                  <>
                    {" "}
                    <Badge tone="red">
                      <span data-testid="past-target">past target</span>
                    </Badge>
                  </>
                )}
              </td>
              <td className="col-claim">
                {mine ? (
                  <span className="claim claim-mine">{c.claimUntil ? "You (reviewing)" : "You"}</span>
                ) : taken ? (
                  <span className="claim claim-taken" title={c.claimUntil ? `In review mode until ${dateTime(c.claimUntil)}` : `Assigned to ${c.assignee!.email}`}>
                    {c.claimUntil ? "Reviewing:" : "Assigned to"} {c.assignee!.email}
                  </span>
                ) : (
                  <span className="muted">—</span>
                )}
                {isModerator && (
                  <button
                    type="button"
                    className="small secondary"
                    onClick={() => toggleClaim(c)}
                    aria-label={`${mine ? "Unassign" : taken ? "Take over" : "Assign to me"}: ${caseTitle(c)}`}
                  >
                    {mine ? "Unassign" : taken ? "Take over" : "Assign to me"}
                  </button>
                )}
              </td>
            </tr>
          );
        })}
      </QueryTable>

      {counts && (counts.total > 0 || cursors.length > 0) && (
        <nav className="pager" aria-label="Queue pages">
          <button type="button" className="small secondary" onClick={previousPage} disabled={!cursors.length}>
            Previous page
          </button>
          <span className="range" data-testid="queue-range" aria-live="polite">
            {range}
          </span>
          <button type="button" className="small secondary" onClick={nextPage} disabled={!queue.data?.nextCursor}>
            Next page
          </button>
        </nav>
      )}

      <p id="queue-help" className="shortcuts muted">
        Keys: <Kbd>j</Kbd>/<Kbd>k</Kbd> move, <Kbd>Enter</Kbd> open
        {isModerator && (
          <>
            , <Kbd>c</Kbd> assign to me, <Kbd>x</Kbd> select, <Kbd>r</Kbd> resolve, <Kbd>d</Kbd> dismiss, <Kbd>e</Kbd> escalate
          </>
        )}
        , <Kbd>[</Kbd>/<Kbd>]</Kbd> pages, <Kbd>?</Kbd> help
      </p>
      <Dialog
        open={help}
        title="Keyboard shortcuts"
        onClose={() => {
          refocus.current ??= { after: 0 };
          setHelp(false);
        }}
      >
        <div className="stack">
          <table className="keys">
            <caption className="sr-only">Queue shortcuts</caption>
            <tbody>
              {[
                ["j / ↓", "next case"],
                ["k / ↑", "previous case"],
                ["Enter / o", "open the highlighted case (Enter on a focused link or button presses that instead)"],
                ["] / [", "next / previous page"],
                ...(isModerator
                  ? [
                      ["c", "assign the highlighted case to me, or unassign it"],
                      ["x", "select the highlighted case"],
                      ["r", "resolve"],
                      ["d", "dismiss"],
                      ["e", "escalate"],
                    ]
                  : []),
                ["?", "this help"],
                ["Esc", "close a dialog"],
              ].map(([key, what]) => (
                <tr key={key}>
                  <th scope="row">
                    <Kbd>{key}</Kbd>
                  </th>
                  <td>{what}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p>
            Resolve, dismiss and escalate act on the selected cases, or on the highlighted one when nothing is selected. A decision applies to every
            open report of a case. Claiming a case shows it as taken to everyone else; deciding on a case someone else claimed asks to take it over.
          </p>
          <div className="actions">
            <button
              type="button"
              className="primary"
              onClick={() => {
                refocus.current ??= { after: 0 };
                setHelp(false);
              }}
            >
              Done
            </button>
          </div>
        </div>
      </Dialog>
      <DecisionDialog
        action={dialog?.action ?? null}
        targets={dialog?.targets ?? []}
        onClose={() => {
          refocus.current ??= { after: 0 };
          setDialog(null);
        }}
        onDone={() => {
          setSelected(new Set());
          refocus.current = { after: Date.now() };
        }}
      />
    </section>
  );
}

/**
 * Whether an open case of a queue is past one of its targets now: undecided past the decision
 * target, or nobody's past the first-review target (docs/workflow.md, "Service levels").
 */
function pastTarget(level: { firstReviewTargetMinutes: number | null; decisionTargetMinutes: number | null }, openedAt: string, held: boolean, now: number): boolean {
  const age = now - Date.parse(openedAt);
  const past = (minutes: number | null) => minutes !== null && age > minutes * 60_000;
  return past(level.decisionTargetMinutes) || (!held && past(level.firstReviewTargetMinutes));
}

/** A count of the queue page: the figure, or past the page's cap "1,000+" (the server counts no further: QUEUE_COUNT_CAP). */
const countText = (n: number, cap: number): string => (n > cap ? `${cap.toLocaleString("en")}+` : String(n));

const ORDERING_SAYS: Record<string, string> = { severity_age: "by severity, then age", priority: "by priority, then severity, then age", age: "oldest first" };

/**
 * The review queues the user may work (issue 15), each with its open cases: "All my queues"
 * or one of them. A queue the user may not work is not offered (nor answered by the server).
 */
function QueuePicker(props: {
  queues: { id: string; name: string; isDefault: boolean; openCases: number }[];
  /** Counts above it mean "more than" (QueuePage.countCap). */
  cap: number;
  value: string;
  ordering: string | null;
  onChange: (queueId: string) => void;
}) {
  const total = Math.min(props.queues.reduce((n, q) => n + q.openCases, 0), props.cap + 1);
  // A remembered queue that is gone (deleted, or no longer the user's) falls back to all of them.
  const known = !props.value || props.queues.some((q) => q.id === props.value) || !props.queues.length;
  useEffect(() => {
    if (!known) props.onChange("");
  });
  return (
    <div className="queue-picker">
      <label htmlFor="queue-picker-select">Queue</label>{" "}
      <select id="queue-picker-select" data-testid="queue-picker" value={known ? props.value : ""} onChange={(e) => props.onChange(e.target.value)}>
        <option value="">All my queues ({countText(total, props.cap)})</option>
        {props.queues.map((q) => (
          <option key={q.id} value={q.id}>
            {q.name}
            {q.isDefault ? " (default)" : ""} ({countText(q.openCases, props.cap)})
          </option>
        ))}
      </select>
      {props.ordering && <span className="muted small"> Ordered {ORDERING_SAYS[props.ordering] ?? props.ordering}</span>}
    </div>
  );
}
