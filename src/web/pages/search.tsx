/**
 * Search over reports (description, reported content, AI reasoning) and identities (names,
 * usernames, external IDs), from the top bar's box (src/web/components/search-box.tsx) or the
 * page's own field; and the list of closed cases with its filters. The server decides what
 * matches (src/domain/cases/search.ts).
 */
import { useInfiniteQuery, useQuery, keepPreviousData } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { trpc, type Inputs, type Outputs } from "../api.ts";
import { useSession } from "../session.tsx";
import { href, navigate, useRoute } from "../router.ts";
import { Badge, BucketBadge, ErrorNote, Field, Loading, ProjectOptions, QueryTable, StatusBadge, TimeAgo } from "../ui.tsx";
import { caseTitle } from "../components/case-title.ts";
import { searchHref } from "../components/search-box.tsx";
import { CLOSED_STATUSES, SEARCH_QUERY_MAX, type MatchField } from "../../domain/views/search.ts";
import { CASE_DECISION_ACTIONS } from "../../domain/views/case.ts";

type SearchOutput = Outputs["search"]["find"];
type ReportHit = SearchOutput["reports"]["items"][number];
type ClosedItem = Outputs["search"]["closedCases"]["items"][number];
type ClosedInput = Inputs["search"]["closedCases"];

// ---------------------------------------------------------------------------------------------
// The search page

const FIELD_LABEL: Record<MatchField, string> = {
  description: "Description",
  content: "Reported content",
  ai_reasoning: "AI reasoning",
};

/** Search over reports, content, AI reasoning and identities. */
export function SearchPage() {
  const route = useRoute();
  const { projects } = useSession();
  const routeQ = (route.query.get("q") ?? "").trim();
  const routeOpen = route.query.get("open") === "1";
  const routeProject = route.query.get("project") ?? "";
  // The address holds the search (a reload or a shared link gives the same page); the state
  // follows it, and changes at once when a control changes it (the hash changes a moment later).
  const [{ q, openOnly, project }, setSearch] = useState({ q: routeQ, openOnly: routeOpen, project: routeProject });
  useEffect(() => setSearch({ q: routeQ, openOnly: routeOpen, project: routeProject }), [routeQ, routeOpen, routeProject]);
  const [draft, setDraft] = useState(q);
  useEffect(() => setDraft(routeQ), [routeQ]);
  const go = (next: { q?: string; open?: boolean; project?: string }) => {
    const to = { q: next.q ?? q, openOnly: next.open ?? openOnly, project: next.project ?? project };
    setSearch(to);
    navigate(searchHref(to.q, { open: to.openOnly, project: to.project }));
  };

  const base = { q, projectId: project || undefined };
  const reports = useInfiniteQuery({
    queryKey: ["search", "reports", base, openOnly],
    queryFn: ({ pageParam }) => trpc.search.find.query({ ...base, kind: "reports", openOnly: openOnly || undefined, cursor: pageParam }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.reports.nextCursor ?? undefined,
    enabled: q.length > 0,
    placeholderData: keepPreviousData,
  });
  const people = useInfiniteQuery({
    queryKey: ["search", "identities", base],
    queryFn: ({ pageParam }) => trpc.search.find.query({ ...base, kind: "identities", cursor: pageParam }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.identities.nextCursor ?? undefined,
    enabled: q.length > 0,
    placeholderData: keepPreviousData,
  });
  const hits = reports.data?.pages.flatMap((p) => p.reports.items) ?? [];
  const identities = people.data?.pages.flatMap((p) => p.identities.items) ?? [];
  const groups = groupByCase(hits);
  const multiProject = projects.length > 1;
  const words = reports.data?.pages[0]?.words;
  const noWords = !!words && words.length === 0;

  return (
    <section aria-labelledby="search-title">
      <div className="page-head">
        <h1 id="search-title">Search</h1>
        <p className="muted">Descriptions, reported content, AI reasoning, and people's names, usernames and external IDs. Any case, any accents.</p>
      </div>
      <form
        role="search"
        aria-labelledby="search-title"
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          if (draft.trim()) go({ q: draft.trim() });
        }}
      >
        <Field label="Words to find" className="grow" hint="Each word must appear, as the start of a word: “mull” finds “Müller”.">
          <input type="search" value={draft} maxLength={SEARCH_QUERY_MAX} onChange={(e) => setDraft(e.target.value)} />
        </Field>
        {multiProject && (
          <Field label="Project">
            <select value={project} onChange={(e) => go({ project: e.target.value })}>
              <option value="">All projects</option>
              <ProjectOptions projects={projects} />
            </select>
          </Field>
        )}
        <label className="switch search-open">
          <input type="checkbox" checked={openOnly} onChange={(e) => go({ open: e.target.checked })} />
          <span>Only open cases</span>
        </label>
        <button type="submit" className="primary">
          Search
        </button>
      </form>

      {!q ? (
        <p className="empty">Type words to find in the box above, or in the top bar (press / to get there from any page).</p>
      ) : (
        <>
          <p className="counts" role="status" data-testid="search-summary">
            {reports.isPending || people.isPending
              ? "Searching…"
              : noWords
                ? "Nothing to search for: type letters or digits."
                : `${hits.length}${reports.hasNextPage ? "+" : ""} report${hits.length === 1 ? "" : "s"} in ${groups.length} case${groups.length === 1 ? "" : "s"}${openOnly ? " still open" : ""}, ${identities.length}${people.hasNextPage ? "+" : ""} ${identities.length === 1 ? "identity" : "identities"} match “${q}”`}
          </p>

          <section aria-labelledby="search-reports-title" className="search-section">
            <h2 id="search-reports-title">Reports</h2>
            <ErrorNote error={reports.error} />
            {reports.isPending ? (
              <Loading />
            ) : groups.length === 0 ? (
              <p className="empty">No report{openOnly ? " of an open case" : ""} holds these words.</p>
            ) : (
              <ol className="search-hits">
                {groups.map((g) => (
                  <CaseHits key={g.caseId} hits={g.hits} multiProject={multiProject} />
                ))}
              </ol>
            )}
            {reports.hasNextPage && (
              <button type="button" className="secondary" onClick={() => reports.fetchNextPage()} disabled={reports.isFetchingNextPage}>
                More reports
              </button>
            )}
          </section>

          <section aria-labelledby="search-people-title" className="search-section">
            <h2 id="search-people-title">Identities</h2>
            <QueryTable
              error={people.error}
              pending={people.isPending}
              isEmpty={identities.length === 0}
              empty="No identity has these words in its name, username or external ID."
              columns={[{ label: "Name" }, { label: "Handle" }, { label: "Type" }, { label: "External ID" }, multiProject && { label: "Project" }, { label: "Reported", className: "col-num" }, { label: "Last reported" }]}
            >
              {identities.map((i) => (
                <tr key={i.id}>
                  <td>
                    <a href={href("identity", i.id)}>{i.displayName}</a>
                  </td>
                  <td className="muted">{i.handleLabel}</td>
                  <td>{i.type}</td>
                  <td>
                    <code>{i.externalId}</code>
                  </td>
                  {multiProject && <td>{i.projectName}</td>}
                  <td className="col-num">{i.reportCount}</td>
                  <td>
                    <TimeAgo iso={i.lastReportedAt} />
                  </td>
                </tr>
              ))}
            </QueryTable>
            {people.hasNextPage && (
              <button type="button" className="secondary" onClick={() => people.fetchNextPage()} disabled={people.isFetchingNextPage}>
                More identities
              </button>
            )}
          </section>
        </>
      )}
    </section>
  );
}

/** Hits of the same case together, cases in the order of their newest hit. */
function groupByCase(hits: ReportHit[]): { caseId: string; hits: ReportHit[] }[] {
  const byCase = new Map<string, ReportHit[]>();
  for (const h of hits) byCase.set(h.caseId, [...(byCase.get(h.caseId) ?? []), h]);
  return [...byCase].map(([caseId, list]) => ({ caseId, hits: list }));
}

function CaseHits({ hits, multiProject }: { hits: ReportHit[]; multiProject: boolean }) {
  const first = hits[0]!;
  const c = first.case;
  const title = caseTitle(c);
  return (
    <li className="card search-hit" data-case-id={first.caseId}>
      <div className="search-hit-head">
        <a className="case-link" href={`${href("cases", first.caseId)}?report=${encodeURIComponent(first.reportId)}`}>
          {title}
        </a>
        {c.subject && c.target && <span className="muted">about {c.subject.displayName}</span>}
        <StatusBadge status={c.status} />
        <BucketBadge bucket={c.bucket} />
        {!c.open && <Badge tone="gray">not open</Badge>}
        {multiProject && <span className="muted">{first.projectName}</span>}
        <span className="muted">
          {c.reportCount} report{c.reportCount === 1 ? "" : "s"}
        </span>
      </div>
      <ul className="search-matches">
        {hits.map((h) => (
          <li key={h.reportId}>
            {h.match && (
              <p className="excerpt search-excerpt">
                <span className="match-where">{FIELD_LABEL[h.match.field]}: </span>
                {h.match.parts.map((p, i) => (p.hit ? <mark key={i}>{p.text}</mark> : <span key={i}>{p.text}</span>))}
              </p>
            )}
            <div className="chips">
              {h.reasons.map((r) => (
                <span key={r} className="chip">
                  {r}
                </span>
              ))}
              <span className="chip">
                Filed <TimeAgo iso={h.createdAt} />
              </span>
              {h.automated && <span className="chip">automated</span>}
            </div>
          </li>
        ))}
      </ul>
    </li>
  );
}

// ---------------------------------------------------------------------------------------------
// Closed cases

const DECISION_LABEL: Record<(typeof CASE_DECISION_ACTIONS)[number], string> = {
  resolve: "Resolved",
  dismiss: "Dismissed",
  uphold: "Appeal upheld",
  overturn: "Appeal overturned",
  close: "Closed",
};

const STATUS_LABEL: Record<(typeof CLOSED_STATUSES)[number], string> = {
  RESOLVED: "Resolved",
  DISMISSED: "Dismissed",
  APPEALED: "Appealed",
  CLOSED: "Closed",
};

type ClosedFilters = { projectId: string; status: string; decision: string; decidedBy: string; from: string; to: string };
const NO_CLOSED_FILTERS: ClosedFilters = { projectId: "", status: "", decision: "", decidedBy: "", from: "", to: "" };

/** The start of a local calendar day (`YYYY-MM-DD`), `days` later, as an ISO time; undefined when empty or invalid. */
function localDayStart(day: string, days = 0): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const d = new Date(`${day}T00:00:00`);
  if (Number.isNaN(d.getTime())) return undefined;
  d.setDate(d.getDate() + days);
  return d.toISOString();
}

function decidedByLabel(by: ClosedItem["decision"]["by"]): string {
  if (by.type === "user") return by.email ?? "a former user";
  if (by.type === "api_key") return "API key";
  return "Flagstaff";
}

/** Cases out of review, the most recently decided first, with filters (status, decision, who, when). */
export function ClosedCasesPage() {
  const { projects } = useSession();
  const [f, setF] = useState<ClosedFilters>(NO_CLOSED_FILTERS);
  const set = (k: keyof ClosedFilters, v: string) => setF((old) => ({ ...old, [k]: v }));
  const people = useQuery({ queryKey: ["people"], queryFn: () => trpc.dashboard.people.query(), staleTime: 60_000 });
  const badRange = !!f.from && !!f.to && f.from > f.to;
  const input: ClosedInput = {
    projectId: f.projectId || undefined,
    status: (f.status || undefined) as ClosedInput["status"],
    decision: (f.decision || undefined) as ClosedInput["decision"],
    decidedBy: f.decidedBy || undefined,
    decidedFrom: localDayStart(f.from),
    // "To" is inclusive: before the start of the next day.
    decidedBefore: localDayStart(f.to, 1),
  };
  const list = useInfiniteQuery({
    queryKey: ["closed-cases", input],
    queryFn: ({ pageParam }) => trpc.search.closedCases.query({ ...input, cursor: pageParam }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    enabled: !badRange,
    placeholderData: keepPreviousData,
  });
  const rows = list.data?.pages.flatMap((p) => p.items) ?? [];
  const total = list.data?.pages[0]?.total;
  const multiProject = projects.length > 1;
  const filtered = Object.values(f).some(Boolean);

  return (
    <section aria-labelledby="closed-title">
      <div className="page-head">
        <h1 id="closed-title">Closed cases</h1>
        <p className="counts" role="status" data-testid="closed-count">
          {total === undefined ? " " : `${rows.length < total ? `${rows.length} of ` : ""}${total} case${total === 1 ? "" : "s"}${filtered ? " with these filters" : " out of review"}`}
        </p>
      </div>
      <form className="filters" aria-label="Filter the closed cases" onSubmit={(e) => e.preventDefault()}>
        {multiProject && (
          <Field label="Project">
            <select value={f.projectId} onChange={(e) => set("projectId", e.target.value)}>
              <option value="">All projects</option>
              <ProjectOptions projects={projects} />
            </select>
          </Field>
        )}
        <Field label="Status">
          <select value={f.status} onChange={(e) => set("status", e.target.value)}>
            <option value="">Any closed status</option>
            {CLOSED_STATUSES.map((s) => (
              <option key={s} value={s}>
                {STATUS_LABEL[s]}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Decision">
          <select value={f.decision} onChange={(e) => set("decision", e.target.value)}>
            <option value="">Any decision</option>
            {CASE_DECISION_ACTIONS.map((d) => (
              <option key={d} value={d}>
                {DECISION_LABEL[d]}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Decided by">
          <select value={f.decidedBy} onChange={(e) => set("decidedBy", e.target.value)}>
            <option value="">Anyone</option>
            {(people.data?.people ?? []).map((p) => (
              <option key={p.id} value={p.id}>
                {p.email}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Decided from">
          <input type="date" value={f.from} max={f.to || undefined} onChange={(e) => set("from", e.target.value)} />
        </Field>
        <Field label="Decided to">
          <input type="date" value={f.to} min={f.from || undefined} onChange={(e) => set("to", e.target.value)} />
        </Field>
        {filtered && (
          <button type="button" className="ghost small" onClick={() => setF(NO_CLOSED_FILTERS)}>
            Clear filters
          </button>
        )}
      </form>
      {badRange ? (
        <p className="error" role="alert">
          “Decided from” must not be after “Decided to”.
        </p>
      ) : (
        <QueryTable
          error={list.error}
          pending={list.isPending}
          isEmpty={rows.length === 0}
          empty={filtered ? "No closed case matches these filters." : "No case has been decided yet."}
          className="closed-cases"
          columns={[
            { label: "Case" },
            multiProject && { label: "Project" },
            { label: "Status" },
            { label: "Decision" },
            { label: "Decided by" },
            { label: "Decided" },
            { label: "Reports", className: "col-num" },
          ]}
        >
          {rows.map((c) => (
            <tr key={c.id} data-case-id={c.id}>
              <td className="col-case">
                <a className="case-link" href={href("cases", c.id)}>
                  {caseTitle(c)}
                </a>
                {c.subject && c.target && <span className="muted"> · about {c.subject.displayName}</span>}
                <div className="chips">
                  {c.reasons.map((r) => (
                    <span key={r} className="chip">
                      {r}
                    </span>
                  ))}
                </div>
              </td>
              {multiProject && <td>{c.projectName}</td>}
              <td>
                <StatusBadge status={c.status} />
              </td>
              <td>
                {c.decision.action ? DECISION_LABEL[c.decision.action] : "—"}
                {c.decision.code && <span className="muted"> · {c.decision.code}</span>}
              </td>
              <td>{decidedByLabel(c.decision.by)}</td>
              <td>
                <TimeAgo iso={c.decision.at} />
              </td>
              <td className="col-num">{c.reportCount}</td>
            </tr>
          ))}
        </QueryTable>
      )}
      {list.hasNextPage && !badRange && (
        <button type="button" className="secondary" onClick={() => list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          More cases
        </button>
      )}
    </section>
  );
}
