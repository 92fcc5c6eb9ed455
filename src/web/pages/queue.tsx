import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState } from "react";
import { trpc, type Inputs, type QueueItem } from "../api.ts";
import { useSession } from "../app.tsx";
import { DecisionDialog, useClaim, type DecisionAction, type DecisionTarget } from "../decisions.tsx";
import { href, navigate } from "../router.ts";
import { Badge, BucketBadge, Field, Kbd, ProjectOptions, QueryTable, SeverityBadge, StatusBadge, TimeAgo, useShortcuts } from "../ui.tsx";

type QueueInput = Inputs["dashboard"]["queue"];
type Filters = { projectId: string; status: string; category: string; bucket: string; assigned: string };
const NO_FILTERS: Filters = { projectId: "", status: "", category: "", bucket: "", assigned: "" };
const FILTERS_KEY = "flagstaff.queueFilters";
const BUCKET_SAYS: Record<string, string[]> = { emergency: ["CRITICAL"], high: ["HIGH"] };

export function caseTitle(c: { target: { contentType: string | null; contentExternalId: string } | null; subject: { displayName: string } | null }): string {
  if (c.target) return `${c.target.contentType ?? "content"} ${c.target.contentExternalId}`;
  if (c.subject) return `User ${c.subject.displayName}`;
  return "Case";
}

function loadFilters(): Filters {
  try {
    return { ...NO_FILTERS, ...(JSON.parse(sessionStorage.getItem(FILTERS_KEY) ?? "{}") as Partial<Filters>) };
  } catch {
    return NO_FILTERS;
  }
}

export function QueuePage() {
  const { me, can, projects } = useSession();
  const isModerator = can("moderator");
  const [filters, setFiltersState] = useState<Filters>(loadFilters);
  const setFilter = (k: keyof Filters, v: string) => {
    const next = { ...filters, [k]: v, ...(k === "projectId" ? { category: "" } : {}) };
    sessionStorage.setItem(FILTERS_KEY, JSON.stringify(next));
    setFiltersState(next);
  };
  const input: QueueInput = {
    projectId: filters.projectId || undefined,
    status: (filters.status || undefined) as QueueInput["status"],
    category: filters.category || undefined,
    bucket: (filters.bucket || undefined) as QueueInput["bucket"],
    assigned: (filters.assigned || undefined) as QueueInput["assigned"],
    limit: 100,
  };
  const queue = useQuery({ queryKey: ["queue", input], queryFn: () => trpc.dashboard.queue.query(input), placeholderData: keepPreviousData });
  const categoryProjects = filters.projectId ? [filters.projectId] : projects.map((p) => p.id);
  const categories = useQuery({
    queryKey: ["categories", "names", categoryProjects],
    queryFn: async () => {
      const lists = await Promise.all(categoryProjects.map((projectId) => trpc.categories.reportReasons.query({ projectId })));
      return [...new Set(lists.flatMap((l) => l.reasons.map((r) => r.name)))].sort();
    },
    enabled: categoryProjects.length > 0,
  });

  const items = queue.data?.items ?? [];
  const counts = queue.data?.counts;
  const [active, setActive] = useState(0);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [dialog, setDialog] = useState<{ action: DecisionAction; targets: DecisionTarget[] } | null>(null);
  const [help, setHelp] = useState(false);
  const claim = useClaim();
  const rows = useRef<(HTMLTableRowElement | null)[]>([]);

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

  // Selection only keeps cases that are still in the queue.
  useEffect(() => {
    setSelected((s) => {
      const ids = new Set(items.map((c) => c.id));
      const next = new Set([...s].filter((id) => ids.has(id)));
      return next.size === s.size ? s : next;
    });
    setActive((a) => Math.min(a, Math.max(0, items.length - 1)));
  }, [items]);

  const current: QueueItem | undefined = items[active];
  const focusRow = (i: number) => {
    const n = Math.max(0, Math.min(items.length - 1, i));
    setActive(n);
    rows.current[n]?.querySelector<HTMLElement>("a.case-link")?.focus();
  };
  const targetsFor = (list: QueueItem[]): DecisionTarget[] => list.map((c) => ({ caseId: c.id, reportId: c.openReportId, label: caseTitle(c) }));
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

  useShortcuts({
    j: () => focusRow(active + 1),
    ArrowDown: () => focusRow(active + 1),
    k: () => focusRow(active - 1),
    ArrowUp: () => focusRow(active - 1),
    o: () => current && navigate(href("cases", current.id)),
    Enter: () => current && navigate(href("cases", current.id)),
    "?": () => setHelp((h) => !h),
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

  return (
    <section aria-labelledby="queue-title">
      <div className="page-head">
        <h1 id="queue-title">Review queue</h1>
        <p className="counts" aria-live="polite" data-testid="queue-count">
          {counts ? (
            <>
              <strong>{counts.total}</strong> open case{counts.total === 1 ? "" : "s"}
              <span className="count-chip count-emergency">{counts.emergency} emergency</span>
              <span className="count-chip count-high">{counts.high} high</span>
              <span className="count-chip count-normal">{counts.normal} normal</span>
            </>
          ) : (
            " "
          )}
        </p>
      </div>

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
        <Field label="Claimed">
          <select value={filters.assigned} onChange={(e) => setFilter("assigned", e.target.value)}>
            <option value="">Anyone or nobody</option>
            <option value="me">By me</option>
            <option value="unclaimed">Unclaimed</option>
          </select>
        </Field>
        {Object.values(filters).some(Boolean) && (
          <button type="button" className="ghost small" onClick={() => (sessionStorage.removeItem(FILTERS_KEY), setFiltersState(NO_FILTERS))}>
            Clear filters
          </button>
        )}
      </form>

      {isModerator && selected.size > 0 && (
        <div className="bulkbar" role="region" aria-label="Bulk actions">
          <span>
            <strong>{selected.size}</strong> selected
            {othersClaimed > 0 && <span className="muted"> · {othersClaimed} claimed by someone else</span>}
          </span>
          <button type="button" onClick={() => claim.mutate({ caseIds: [...selected], assigneeId: me.user.id })}>
            Claim
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
        empty={<>Nothing to review{Object.values(filters).some(Boolean) ? " with these filters" : ""}. New reports appear here by themselves.</>}
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
          { label: "Claimed" },
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
                {c.subject && c.target && <span className="muted"> · about {c.subject.displayName}</span>}
                {c.excerpt && <p className="excerpt">{c.excerpt}</p>}
                <div className="chips">
                  {c.reasons.map((r) => (
                    <span key={r} className="chip">
                      {r}
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
              </td>
              <td className="col-claim">
                {mine ? (
                  <span className="claim claim-mine">You</span>
                ) : taken ? (
                  <span className="claim claim-taken" title={`Claimed by ${c.assignee!.email}`}>
                    Taken by {c.assignee!.email}
                  </span>
                ) : (
                  <span className="muted">—</span>
                )}
                {isModerator && (
                  <button type="button" className="small secondary" onClick={() => toggleClaim(c)} aria-label={`${mine ? "Release" : taken ? "Take over" : "Claim"} ${caseTitle(c)}`}>
                    {mine ? "Release" : taken ? "Take over" : "Claim"}
                  </button>
                )}
              </td>
            </tr>
          );
        })}
      </QueryTable>

      <p id="queue-help" className="shortcuts muted">
        Keys: <Kbd>j</Kbd>/<Kbd>k</Kbd> move, <Kbd>Enter</Kbd> open
        {isModerator && (
          <>
            , <Kbd>c</Kbd> claim, <Kbd>x</Kbd> select, <Kbd>r</Kbd> resolve, <Kbd>d</Kbd> dismiss, <Kbd>e</Kbd> escalate
          </>
        )}
        , <Kbd>?</Kbd> help
      </p>
      {help && (
        <div className="card help" role="note">
          <h2>Keyboard shortcuts</h2>
          <p>
            Resolve, dismiss and escalate act on the selected cases, or on the highlighted one when nothing is selected. A decision applies to
            every open report of a case. Claiming a case shows it as taken to everyone else.
          </p>
        </div>
      )}
      <DecisionDialog action={dialog?.action ?? null} targets={dialog?.targets ?? []} onClose={() => setDialog(null)} onDone={() => setSelected(new Set())} />
    </section>
  );
}
