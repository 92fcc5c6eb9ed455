/** The case page (#/cases/<id>) and a report's (#/reports/<id>), which opens its case. */
import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { trpc } from "../api.ts";
import { CaseView } from "../components/case-view.tsx";
import { href, navigate } from "../router.ts";
import { ErrorNote, Loading } from "../ui.tsx";

/** #/cases/<id>: the case, scrolled to `focusReport` when given. */
export function CasePage({ caseId, focusReport }: { caseId: string; focusReport: string | null }) {
  return <CaseView caseId={caseId} focusReport={focusReport} />;
}

/** #/reports/<id>: the case page of the report's case, scrolled to the report. */
export function ReportRedirect({ reportId }: { reportId: string }) {
  const report = useQuery({ queryKey: ["report", reportId], queryFn: () => trpc.reports.get.query({ reportId }) });
  useEffect(() => {
    if (report.data) navigate(`${href("cases", report.data.report.caseId)}?report=${encodeURIComponent(reportId)}`);
  }, [report.data, reportId]);
  return report.error ? <ErrorNote error={report.error} /> : <Loading />;
}
