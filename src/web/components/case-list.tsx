import type { CaseDetail } from "../api.ts";
import { href } from "../router.ts";
import { StatusBadge, TimeAgo } from "../ui.tsx";

/** Links to cases with their status and age, or "None.". */
export function CaseList({ cases }: { cases: CaseDetail["subjectCases"] }) {
  if (cases.length === 0) return <p className="muted">None.</p>;
  return (
    <ul className="plain">
      {cases.map((c) => (
        <li key={c.id}>
          <a href={href("cases", c.id)}>{c.contentExternalId ?? "case"}</a> <StatusBadge status={c.status} /> <TimeAgo iso={c.createdAt} />
        </li>
      ))}
    </ul>
  );
}
