/**
 * Threshold advice as the dashboard shows it (issue 28): per category, the threshold that
 * reaches the precision target and the recall it keeps, beside the project's current threshold
 * and, when one is being chosen, the new one. The run detail of the evaluation page shows it with
 * the plot of each category's curve; the project settings show it before a new threshold is
 * saved. What the advice is: src/domain/views/evaluation.ts (ThresholdAdvice).
 */
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { ThresholdAdvice, ThresholdPoint } from "../../domain/views/evaluation.ts";
import { trpc } from "../api.ts";
import { href } from "../router.ts";
import { Dialog, ErrorNote, Loading, Table } from "../ui.tsx";
import { advisedWords, pct, ThresholdChart } from "./eval-charts.tsx";

type CategoryAdvice = ThresholdAdvice["categories"][number];

/**
 * The curve's point at any whole threshold t: the point at the smallest threshold of the curve
 * at or above t. The curve holds every distinct (rounded up) confidence of the run, so nothing
 * changes between two of its thresholds; null above the last one.
 */
export function pointAtThreshold(curve: readonly ThresholdPoint[], t: number): ThresholdPoint | null {
  let best: ThresholdPoint | null = null;
  for (const p of curve) if (p.threshold >= t && (best === null || p.threshold < best.threshold)) best = p;
  return best;
}

/**
 * Whether a category has anything to advise on: expected by an item of the set or answered by
 * the model (at threshold 0, everything the model named counts). The others (the project's
 * categories the set does not touch) are left out of the tables and plots.
 */
export const touched = (c: CategoryAdvice): boolean => c.curve.some((p) => p.flagged > 0 || p.falseNegatives > 0);

/** "82.5 % precision · 60.0 % recall · 8 flagged", or what is missing. */
export function pointText(p: ThresholdPoint | null | undefined): string {
  if (!p) return "—";
  return `${pct(p.precision)} precision · ${pct(p.recall)} recall · ${p.flagged} flagged`;
}

/**
 * The advice as a table: per category the advised threshold with its precision and the recall it
 * keeps, and what the current threshold (and a proposed one, when given) would have done.
 */
export function ThresholdAdviceTable({ advice, proposed }: { advice: ThresholdAdvice; proposed?: number }) {
  const showProposed = proposed !== undefined && proposed !== advice.currentThreshold;
  const shown = advice.categories.filter(touched);
  if (shown.length === 0) return <p className="muted">No item of the set expects a category and the model named none: nothing to advise on.</p>;
  return (
    <Table
      className="threshold-advice"
      columns={[
        { label: "Category" },
        { label: `Advised threshold (precision ≥ ${pct(advice.precisionTarget, 0)})`, className: "col-num" },
        { label: "Recall kept", className: "col-num" },
        { label: `At the current threshold (${advice.currentThreshold})` },
        showProposed && { label: `At the new threshold (${proposed})` },
      ]}
    >
      {shown.map((c) => (
        <tr key={c.category} data-category={c.category}>
          <th scope="row">{c.category}</th>
          <td className="col-num" data-testid="advised-threshold">
            {c.advisedThreshold === null ? <span className="muted">none reaches the target</span> : advisedWords(c.advisedThreshold, c.curve)}
            {c.advisedThreshold !== null && <span className="muted"> ({pct(c.precisionAtAdvised)} precision)</span>}
          </td>
          <td className="col-num">{pct(c.recallAtAdvised)}</td>
          <td>{pointText(c.atCurrent)}</td>
          {showProposed && <td data-testid="at-proposed">{pointText(pointAtThreshold(c.curve, proposed))}</td>}
        </tr>
      ))}
    </Table>
  );
}

/** The table and, for a category picked from it, the plot of what would have happened at each threshold. */
export function ThresholdAdviceDetail({ advice }: { advice: ThresholdAdvice }) {
  const shown = advice.categories.filter(touched);
  const [category, setCategory] = useState(shown[0]?.category ?? "");
  const chosen: CategoryAdvice | undefined = shown.find((c) => c.category === category) ?? shown[0];
  return (
    <div className="stack">
      <ThresholdAdviceTable advice={advice} />
      {chosen && (
        <>
          <div className="field">
            <label htmlFor="advice-category" className="field-label">
              Curve of category
            </label>
            <select id="advice-category" value={chosen.category} onChange={(e) => setCategory(e.target.value)}>
              {shown.map((c) => (
                <option key={c.category} value={c.category}>
                  {c.category}
                </option>
              ))}
            </select>
          </div>
          <ThresholdChart
            key={chosen.category}
            category={chosen.category}
            curve={chosen.curve}
            currentThreshold={advice.currentThreshold}
            advisedThreshold={chosen.advisedThreshold}
            precisionTarget={advice.precisionTarget}
          />
        </>
      )}
    </div>
  );
}

/**
 * Before a new threshold is saved: what it would have done on the set of the project's latest
 * completed evaluation run, per category beside the current threshold and the advised one (or
 * that there is no run to tell), then "Save" or "Keep editing". The advice aims at
 * `precisionTarget`: the project's, or the one being saved with the threshold.
 */
export function ThresholdChangeDialog({
  orgSlug,
  projectId,
  current,
  proposed,
  precisionTarget,
  open,
  saving,
  saveError,
  onSave,
  onClose,
}: {
  orgSlug: string;
  projectId: string;
  current: number;
  proposed: number;
  precisionTarget: number;
  open: boolean;
  saving: boolean;
  saveError: unknown;
  onSave: () => void;
  onClose: () => void;
}) {
  const runs = useQuery({ queryKey: ["evaluation", "runs", projectId], queryFn: () => trpc.evaluation.runs.query({ orgSlug, projectId }), enabled: open });
  const latest = (runs.data?.runs ?? [])
    .filter((r) => r.status === "completed")
    .sort((a, b) => (b.finishedAt ?? "").localeCompare(a.finishedAt ?? ""))[0];
  const advice = useQuery({
    queryKey: ["evaluation", "advice", latest?.id, precisionTarget],
    queryFn: () => trpc.evaluation.thresholdAdvice.query({ orgSlug, projectId, runId: latest!.id, precisionTarget }),
    enabled: open && !!latest,
  });
  const a = advice.data?.advice ?? null;
  return (
    <Dialog open={open} title={`Change the threshold from ${current} to ${proposed}?`} onClose={onClose}>
      <div className="stack threshold-change" data-testid="threshold-change-advice">
        <ErrorNote error={runs.error ?? advice.error} />
        {runs.isPending || (latest && advice.isPending) ? (
          <Loading label="Looking for the latest evaluation run…" />
        ) : !latest ? (
          <p data-testid="no-advice">
            No evaluation run of this project has completed yet, so there is no advice on this threshold. An evaluation run on the{" "}
            <a href={href("evaluation")}>Evaluation page</a> shows what a threshold would do on labelled items.
          </p>
        ) : (
          a && (
            <>
              <p>
                On the {latest.itemsTotal} items of the latest completed run (<code>{latest.model}</code>, <a href={href("evaluation", "runs", latest.id)}>its figures</a>), per category: the
                threshold that reaches {pct(a.precisionTarget, 0)} precision, and what the current and the new threshold would have done.
              </p>
              <ThresholdAdviceTable advice={a} proposed={proposed} />
            </>
          )
        )}
        <ErrorNote error={saveError} />
        <div className="actions">
          <button type="button" className="secondary" onClick={onClose}>
            Keep editing
          </button>
          <button type="button" className="primary" onClick={onSave} disabled={saving} data-autofocus>
            Save with threshold {proposed}
          </button>
        </div>
      </div>
    </Dialog>
  );
}
