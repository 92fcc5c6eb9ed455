import { useQuery } from "@tanstack/react-query";
import { ACCURACY_MIN_DECIDED, type AccuracyBand } from "../../domain/views/case.ts";
import { trpc } from "../api.ts";
import { ErrorNote, Loading } from "../ui.tsx";

/** A case with at least this many reports is a pile-on to the page: its reporter summary comes first and its cards are grouped and folded. */
export const MANY_REPORTS = 10;

const BAND_LABELS: Record<AccuracyBand, string> = {
  noDecided: "No decided report yet",
  fewDecided: `Fewer than ${ACCURACY_MIN_DECIDED} decided (too few to tell)`,
  mostlyUpheld: "Mostly upheld (two thirds or more)",
  mixed: "Mixed",
  mostlyNotUpheld: "Mostly not upheld (a third or less)",
};
const BANDS = Object.keys(BAND_LABELS) as AccuracyBand[];

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * One reporter's accuracy in words, by the summary's bands: nothing decided yet says so (the
 * server's figure, (upheld + 1) / (decided + 2), is 50 % then: the prior, not a finding), fewer
 * than ACCURACY_MIN_DECIDED decided are too few to tell, and only then a percentage.
 */
export function accuracyWords(r: { accuracy: number; reportsDecided: number }, style: "sentence" | "figure" = "sentence"): string {
  if (r.reportsDecided === 0) return BAND_LABELS.noDecided;
  if (r.reportsDecided < ACCURACY_MIN_DECIDED) return `${r.reportsDecided} decided: too few to tell`;
  const percent = Math.round(r.accuracy * 100);
  return style === "sentence" ? `Accuracy ${percent} % of ${r.reportsDecided} decided` : `${percent} % (${r.reportsDecided} decided)`;
}

/**
 * Who reported the case, in figures the server counts over all its reports
 * (cases.reporterSummary): what a moderator reads before the cards of a pile-on.
 */
export function ReporterSummary({ caseId }: { caseId: string }) {
  // Under the case's key: whatever refreshes the case page refreshes its summary.
  const summary = useQuery({ queryKey: ["case", caseId, "reporter-summary"], queryFn: () => trpc.cases.reporterSummary.query({ caseId }) });
  const s = summary.data;
  const figures: [string, string, number | undefined][] = [
    ["reports", "Reports", s?.reports],
    ["distinctReporters", "Distinct reporters", s?.distinctReporters],
    ["newReporters", "New reporters (no report before this case)", s?.newReporters],
    ["trustedReporters", "Trusted flaggers", s?.trustedReporters],
    ["mutedReporters", "Muted reporters", s?.mutedReporters],
    ["anonymousReports", "Anonymous reports", s?.anonymousReports],
    ["reportsLastHour", "Reports in the last hour", s?.reportsLastHour],
  ];
  return (
    <section className="card reporter-summary" aria-labelledby="reporter-summary-title">
      <h2 id="reporter-summary-title">Reporter summary</h2>
      {summary.error ? (
        <ErrorNote error={summary.error} />
      ) : !s ? (
        <Loading />
      ) : (
        <>
          <div className="summary-columns">
            <dl className="summary-figures" aria-label="Reports and reporters">
              {figures.map(([key, label, value]) => (
                <div key={key}>
                  <dt>{label}</dt>
                  <dd data-testid={`summary-${key}`}>{value}</dd>
                </div>
              ))}
            </dl>
            <div>
              <h3>Reporters' accuracy</h3>
              <dl className="summary-figures">
                {BANDS.map((band) => (
                  <div key={band}>
                    <dt>{BAND_LABELS[band]}</dt>
                    <dd data-testid={`summary-accuracy-${band}`}>{s.accuracy[band]}</dd>
                  </div>
                ))}
              </dl>
            </div>
            <div>
              <h3>Reasons</h3>
              <ul className="plain summary-reasons">
                {s.reasons.map((r) => (
                  <li key={r.reason}>
                    <span className="chip">{r.reason}</span> <span data-testid={`summary-reason-${r.reason}`}>{r.reports}</span>
                  </li>
                ))}
                {s.moreReasons > 0 && <li className="muted">and {plural(s.moreReasons, "other reason")}</li>}
              </ul>
            </div>
          </div>
        </>
      )}
    </section>
  );
}
