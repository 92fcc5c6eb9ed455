import { useQuery } from "@tanstack/react-query";
import { trpc } from "../api.ts";
import { useSession } from "../session.tsx";
import { href } from "../router.ts";
import { Badge, QueryTable, SeverityBadge, TimeAgo } from "../ui.tsx";

export function AnalysesPage() {
  const { orgSlug, projectId, projects } = useSession();
  const analyses = useQuery({
    queryKey: ["analyses", projectId],
    queryFn: () => trpc.ai.analyses.query({ orgSlug, projectId: projectId! }),
    enabled: !!projectId,
  });
  const projectName = projects.find((p) => p.id === projectId)?.name;
  const rows = analyses.data?.analyses ?? [];
  return (
    <section aria-labelledby="analyses-page-title">
      <div className="page-head">
        <h1 id="analyses-page-title">AI analyses</h1>
        <p className="muted">The 50 latest content analyses of {projectName ?? "the project"}: analyzed content, report enrichment and link scans.</p>
      </div>
      <QueryTable
        error={analyses.error}
        pending={analyses.isPending && !!projectId}
        isEmpty={rows.length === 0}
        empty="No analysis yet. Turn AI on in the project settings to classify reports and content."
        columns={[
          { label: "When" },
          { label: "Source" },
          { label: "Severity" },
          { label: "Confidence", className: "col-num" },
          { label: "Categories" },
          { label: "Text and reasoning" },
          { label: "Report" },
        ]}
      >
        {rows.map((a) => (
          <tr key={a.id}>
            <td>
              <TimeAgo iso={a.createdAt} />
            </td>
            <td>
              <Badge tone={a.source === "link_scan" ? "blue" : "purple"}>{a.source.replace("_", " ")}</Badge>
            </td>
            <td>
              <SeverityBadge severity={a.severity} />
            </td>
            <td className="col-num">{a.confidence}%</td>
            <td>{a.categories.join(", ") || <span className="muted">none</span>}</td>
            <td className="col-text">
              {a.url && <p className="url small-print">{a.url}</p>}
              <details>
                <summary>{a.sourceText.slice(0, 90) || "(empty)"}{a.sourceText.length > 90 ? "…" : ""}</summary>
                <blockquote className="content">{a.sourceText}</blockquote>
              </details>
              <p className="small-print muted">
                {a.reasoning} · {a.model}
              </p>
            </td>
            <td>{a.reportId ? <a href={href("reports", a.reportId)}>Open</a> : <span className="muted">none filed</span>}</td>
          </tr>
        ))}
      </QueryTable>
    </section>
  );
}
