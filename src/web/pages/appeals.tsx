/**
 * Appeals: the inbox (pending appeals oldest first, each with the user's text, the action it is
 * against and its case; decided ones with their outcome and note). The card and the dialog that
 * upholds or overturns an appeal are src/web/components/appeals.tsx (the case and identity pages
 * show them too).
 */
import { keepPreviousData, useInfiniteQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { AppealFilter } from "../../domain/views/appeal.ts";
import { trpc } from "../api.ts";
import { AppealCard, AppealDecisionDialog, type Deciding, type InboxInput } from "../components/appeals.tsx";
import { useSession } from "../session.tsx";
import { Empty, ErrorNote, Field, Loading, ProjectOptions } from "../ui.tsx";

const FILTERS: { value: Extract<AppealFilter, "pending" | "decided">; label: string }[] = [
  { value: "pending", label: "Pending" },
  { value: "decided", label: "Decided" },
];

export function AppealsPage() {
  const { projects } = useSession();
  const [status, setStatus] = useState<"pending" | "decided">("pending");
  const [projectId, setProjectId] = useState("");
  const [deciding, setDeciding] = useState<Deciding | null>(null);
  const input: InboxInput = { status, projectId: projectId || undefined, limit: 25 };
  const list = useInfiniteQuery({
    queryKey: ["appeals", "inbox", input],
    queryFn: ({ pageParam }) => trpc.enforcement.appealsInbox.query({ ...input, cursor: pageParam }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    placeholderData: keepPreviousData,
  });
  const items = list.data?.pages.flatMap((p) => p.items) ?? [];
  const counts = list.data?.pages[0]?.counts;

  return (
    <section aria-labelledby="appeals-title">
      <div className="page-head">
        <h1 id="appeals-title">Appeals</h1>
        <p className="muted">
          Users' appeals against enforcement actions, forwarded by the platform. Upholding keeps the action; overturning revokes it. Either closes the case.
        </p>
      </div>
      <ul className="views" aria-label="Appeals by status">
        {FILTERS.map((f) => (
          <li key={f.value}>
            <button type="button" className="small secondary" aria-pressed={status === f.value} onClick={() => setStatus(f.value)} data-appeals={f.value}>
              {f.label}
              <span className="view-count">{counts ? counts[f.value] : "…"}</span>
            </button>
          </li>
        ))}
      </ul>
      {projects.length > 1 && (
        <form className="filters" aria-label="Filter the appeals" onSubmit={(e) => e.preventDefault()}>
          <Field label="Project">
            <select value={projectId} onChange={(e) => setProjectId(e.target.value)}>
              <option value="">All projects</option>
              <ProjectOptions projects={projects} />
            </select>
          </Field>
        </form>
      )}
      <ErrorNote error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : items.length === 0 ? (
        <Empty>{status === "pending" ? "No appeal is waiting for a decision." : "No appeal was decided yet."}</Empty>
      ) : (
        <ol className="appeal-list" aria-label={status === "pending" ? "Pending appeals, oldest first" : "Decided appeals, newest decision first"}>
          {items.map((item) => (
            <li key={item.appeal.id}>
              <AppealCard item={item} level={2} onDecide={setDeciding} />
            </li>
          ))}
        </ol>
      )}
      {list.hasNextPage && (
        <button type="button" className="secondary" onClick={() => list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          Load more
        </button>
      )}
      <AppealDecisionDialog deciding={deciding} onClose={() => setDeciding(null)} />
    </section>
  );
}
