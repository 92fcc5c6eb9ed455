/**
 * The AI model's capacity on the overview (issue 44; docs/ai.md, "Sizing"): how fast the model
 * answers against how many reports ask for it, the share of the last hour's distinct contents
 * it analysed, the skipped enrichments waiting to be caught up, and for admins a form that puts
 * expired ones back into the catch-up (a project's, of a reason, filed in a time range).
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { AiCapacity } from "../../domain/views/analysis.ts";
import { trpc } from "../api.ts";
import { useSession } from "../session.tsx";
import { ErrorNote, Field, ProjectOptions } from "../ui.tsx";

const count = (n: number) => (n >= 100_000 ? "more than 100,000" : n.toLocaleString("en"));

export function AiCapacityCard({ ai, projectId }: { ai: AiCapacity; projectId: string }) {
  const { can } = useSession();
  if (!ai.summary && ai.skipped === 0 && ai.expired === 0) return null;
  return (
    <div className="card ai-capacity" role="region" aria-labelledby="ai-capacity-title">
      <h2 id="ai-capacity-title">AI model capacity</h2>
      {ai.summary && <p data-figure="ai-capacity">{ai.summary}</p>}
      {ai.skipped > 0 && (
        <p className="muted" data-figure="ai-skipped">
          {count(ai.skipped)} skipped enrichment{ai.skipped === 1 ? "" : "s"} waiting: taken again, most urgent first, as the model has room.
        </p>
      )}
      {ai.expired > 0 && (
        <p className="muted" data-figure="ai-expired">
          {count(ai.expired)} enrichment{ai.expired === 1 ? "" : "s"} expired before the model had room.
        </p>
      )}
      {ai.expired > 0 && can("admin") && <RetryExpired projectId={projectId} />}
    </div>
  );
}

/** An admin's bulk retry of expired enrichments. */
function RetryExpired({ projectId }: { projectId: string }) {
  const { projects, orgSlug } = useSession();
  const queryClient = useQueryClient();
  const [project, setProject] = useState(projectId || projects[0]?.id || "");
  const [reason, setReason] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const retry = useMutation({
    mutationFn: () =>
      trpc.ai.retryExpiredEnrichments.mutate({
        orgSlug,
        projectId: project,
        reason: reason.trim() || undefined,
        from: from ? new Date(from).toISOString() : undefined,
        to: to ? new Date(to).toISOString() : undefined,
      }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["overview"] }),
  });
  return (
    <form
      className="filters"
      aria-label="Retry expired enrichments"
      onSubmit={(e) => {
        e.preventDefault();
        retry.mutate();
      }}
    >
      {projects.length > 1 && (
        <Field label="Project">
          <select value={project} onChange={(e) => setProject(e.target.value)}>
            <ProjectOptions projects={projects} />
          </select>
        </Field>
      )}
      <Field label="Reason" hint="A category name; empty: every reason">
        <input value={reason} onChange={(e) => setReason(e.target.value)} maxLength={100} />
      </Field>
      <Field label="Filed from">
        <input type="datetime-local" value={from} onChange={(e) => setFrom(e.target.value)} />
      </Field>
      <Field label="Filed before">
        <input type="datetime-local" value={to} onChange={(e) => setTo(e.target.value)} />
      </Field>
      <button type="submit" disabled={retry.isPending || !project}>
        Retry expired enrichments
      </button>
      {retry.data && (
        <p role="status">
          {retry.data.retried} enrichment{retry.data.retried === 1 ? "" : "s"} back in the catch-up.
        </p>
      )}
      <ErrorNote error={retry.error} />
    </form>
  );
}
