/**
 * The plots of an evaluation run (issue 28), drawn by hand in inline SVG (no chart library: the
 * dashboard's bundle stays small): the reliability diagram, precision–recall per category,
 * precision and recall against the threshold, and the confusion matrix as a heat map.
 *
 * Each plot is a <figure>: the SVG is one image with a name that says what it shows
 * (role="img", aria-label, <title> and <desc>), and a <details> under it holds its numbers as
 * a table, for screen readers and for whoever would rather read them. Colour is never the only
 * carrier: series have their own marker shape and dash pattern and are named in the legend, the
 * heat map writes its counts in the cells. The series colours keep 3:1 against the panel in both
 * colour schemes; text in a heat-map cell is black or white, whichever contrasts more with it.
 * What each figure means: src/domain/views/evaluation.ts and docs/ai.md, "Reading the figures".
 */
import { useId, type ReactNode } from "react";
import type { EvalRunMetrics, ThresholdPoint } from "../../domain/views/evaluation.ts";

// ---------------------------------------------------------------------------------------------
// Numbers

/** A share 0–1 as "82.9 %", "—" when there is none. */
export const pct = (x: number | null | undefined, digits = 1): string => (x === null || x === undefined || Number.isNaN(x) ? "—" : `${(x * 100).toFixed(digits)} %`);
/** A figure with three decimals (κ, ECE), "—" when there is none. */
export const dec = (x: number | null | undefined, digits = 3): string => (x === null || x === undefined || Number.isNaN(x) ? "—" : x.toFixed(digits));
/** A signed difference B − A of two shares, in points: "+4.2 pts", "−1.0 pts", "±0" ("—" without both). */
export function diffPts(a: number | null | undefined, b: number | null | undefined): string {
  if (a === null || a === undefined || b === null || b === undefined) return "—";
  const d = (b - a) * 100;
  if (Math.abs(d) < 0.05) return "±0";
  return `${d > 0 ? "+" : "−"}${Math.abs(d).toFixed(1)} pts`;
}

/** Series colours with 3:1 against both the light (#fff) and the dark (#161d27) panel. */
export const SERIES_COLORS = ["#3b6fd8", "#d9480f", "#15803d", "#9333ea", "#0e7490", "#db2777", "#a16207", "#64748b"];
const DASHES = ["", "6 3", "2 3", "8 3 2 3", "4 4", "1 2", "10 4", "3 2 1 2"];
type Shape = "circle" | "square" | "triangle" | "diamond";
const SHAPES: Shape[] = ["circle", "square", "triangle", "diamond"];

/** One series' look: colour, dash pattern and marker shape, by its index. */
export const seriesStyle = (i: number) => ({ color: SERIES_COLORS[i % SERIES_COLORS.length]!, dash: DASHES[i % DASHES.length]!, shape: SHAPES[i % SHAPES.length]! });

function Marker({ shape, x, y, r, color, hollow = false, label }: { shape: Shape; x: number; y: number; r: number; color: string; hollow?: boolean; label?: string }) {
  const paint = hollow ? { fill: "var(--panel)", stroke: color, strokeWidth: 2 } : { fill: color, stroke: "var(--panel)", strokeWidth: 1 };
  const title = label ? <title>{label}</title> : null;
  switch (shape) {
    case "square":
      return (
        <rect x={x - r} y={y - r} width={2 * r} height={2 * r} {...paint}>
          {title}
        </rect>
      );
    case "triangle":
      return (
        <polygon points={`${x},${y - r * 1.2} ${x + r * 1.1},${y + r * 0.8} ${x - r * 1.1},${y + r * 0.8}`} {...paint}>
          {title}
        </polygon>
      );
    case "diamond":
      return (
        <polygon points={`${x},${y - r * 1.3} ${x + r * 1.3},${y} ${x},${y + r * 1.3} ${x - r * 1.3},${y}`} {...paint}>
          {title}
        </polygon>
      );
    default:
      return (
        <circle cx={x} cy={y} r={r} {...paint}>
          {title}
        </circle>
      );
  }
}

/** A legend entry's symbol: a short stretch of the series' line with its marker. */
export function SeriesSymbol({ index }: { index: number }) {
  const st = seriesStyle(index);
  return (
    <svg width="28" height="12" viewBox="0 0 28 12" aria-hidden="true" className="series-symbol">
      <line x1="1" x2="27" y1="6" y2="6" stroke={st.color} strokeWidth="2" strokeDasharray={st.dash || undefined} />
      <Marker shape={st.shape} x={14} y={6} r={3.5} color={st.color} />
    </svg>
  );
}

// ---------------------------------------------------------------------------------------------
// Frame: a square plot with both axes from 0 to 1 (or 0 to 100 on x).

const W = 360;
const H = 300;
const PAD = { top: 12, right: 14, bottom: 40, left: 46 };
const IW = W - PAD.left - PAD.right;
const IH = H - PAD.top - PAD.bottom;
const sx = (x: number, max = 1) => PAD.left + (Math.min(Math.max(x, 0), max) / max) * IW;
const sy = (y: number) => PAD.top + IH - Math.min(Math.max(y, 0), 1) * IH;

function Axes({ xLabel, yLabel, xMax = 1, xTicks }: { xLabel: string; yLabel: string; xMax?: number; xTicks?: number[] }) {
  const yTicks = [0, 0.25, 0.5, 0.75, 1];
  const xs = xTicks ?? (xMax === 1 ? yTicks : [0, 25, 50, 75, 100]);
  return (
    <g>
      {yTicks.map((t) => (
        <g key={`y${t}`}>
          <line x1={PAD.left} x2={W - PAD.right} y1={sy(t)} y2={sy(t)} className="grid" />
          <text x={PAD.left - 6} y={sy(t) + 3.5} textAnchor="end" className="axis">
            {`${Math.round(t * 100)}%`}
          </text>
        </g>
      ))}
      {xs.map((t) => (
        <text key={`x${t}`} x={sx(t, xMax)} y={PAD.top + IH + 14} textAnchor="middle" className="axis">
          {xMax === 1 ? `${Math.round(t * 100)}%` : t}
        </text>
      ))}
      <line x1={PAD.left} x2={PAD.left} y1={PAD.top} y2={PAD.top + IH} className="axis-line" />
      <line x1={PAD.left} x2={W - PAD.right} y1={PAD.top + IH} y2={PAD.top + IH} className="axis-line" />
      <text x={PAD.left + IW / 2} y={H - 6} textAnchor="middle" className="axis axis-title">
        {xLabel}
      </text>
      <text x={12} y={PAD.top + IH / 2} textAnchor="middle" className="axis axis-title" transform={`rotate(-90 12 ${PAD.top + IH / 2})`}>
        {yLabel}
      </text>
    </g>
  );
}

/** A plot: the caption, the SVG named by `label` (with `desc` as its longer description), the legend and the numbers. */
function Plot({ caption, label, desc, width = W, height = H, children, legend, numbers, testId }: { caption: ReactNode; label: string; desc: string; width?: number; height?: number; children: ReactNode; legend?: ReactNode; numbers: ReactNode; testId?: string }) {
  const titleId = useId();
  const descId = useId();
  return (
    <figure className="chart eval-chart" data-testid={testId}>
      <figcaption>{caption}</figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label} aria-describedby={descId}>
        <title id={titleId}>{label}</title>
        <desc id={descId}>{desc}</desc>
        {children}
      </svg>
      {legend}
      <details className="chart-numbers">
        <summary>The numbers</summary>
        {numbers}
      </details>
    </figure>
  );
}

function NumbersTable({ caption, head, rows }: { caption: string; head: string[]; rows: (string | number)[][] }) {
  // A region that can take focus: on a narrow screen the table scrolls sideways, by keyboard too.
  return (
    <div className="table-wrap" role="region" aria-label={caption} tabIndex={0}>
      <table className="compact">
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            {head.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              {r.map((c, j) =>
                j === 0 ? (
                  <th key={j} scope="row">
                    {c}
                  </th>
                ) : (
                  <td key={j} className="col-num">
                    {c}
                  </td>
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// Reliability diagram

type Calibration = EvalRunMetrics["calibration"];

/**
 * Confidence against accuracy: one bar per bin of confidence, as high as the share of its items
 * whose verdict was right, with a dot at its items' mean confidence sized by how many items it
 * holds (and the count written above it); the diagonal is a perfectly calibrated model. A bar
 * under the diagonal: the model was surer than it was right.
 */
export function ReliabilityDiagram({ calibration }: { calibration: Calibration }) {
  // Bins are 0–1; a server giving them in points (0–100) is read the same way.
  const scale = calibration.bins.some((b) => b.to > 1.0001) ? 100 : 1;
  const bins = calibration.bins.map((b) => ({ ...b, from: b.from / scale, to: b.to / scale }));
  const maxItems = Math.max(1, ...bins.map((b) => b.items));
  const filled = bins.filter((b) => b.items > 0 && b.accuracy !== null);
  const label = `Reliability diagram: expected calibration error ${dec(calibration.ece)}, ${filled.length} of ${bins.length} confidence bins with items`;
  const desc =
    filled.map((b) => `confidence ${Math.round(b.from * 100)}–${Math.round(b.to * 100)}%: ${b.items} items, mean confidence ${pct(b.meanConfidence)}, accuracy ${pct(b.accuracy)}`).join("; ") ||
    "No items with a confidence.";
  return (
    <Plot
      testId="reliability-diagram"
      caption={<>Reliability diagram · ECE {dec(calibration.ece)}</>}
      label={label}
      desc={desc}
      legend={
        <p className="legend-note muted">
          Bars: accuracy per confidence bin · dots: mean confidence, larger for more items (count above) · dashed diagonal: perfect calibration.
        </p>
      }
      numbers={
        <NumbersTable
          caption="Reliability table"
          head={["Confidence", "Items", "Mean confidence", "Accuracy", "Gap"]}
          rows={bins.map((b) => [
            `${Math.round(b.from * 100)}–${Math.round(b.to * 100)}%`,
            b.items,
            pct(b.meanConfidence),
            pct(b.accuracy),
            b.accuracy === null || b.meanConfidence === null ? "—" : diffPts(b.meanConfidence, b.accuracy),
          ])}
        />
      }
    >
      <Axes xLabel="Confidence" yLabel="Accuracy" />
      {filled.map((b) => {
        const x0 = sx(b.from) + 1;
        const x1 = sx(b.to) - 1;
        const y = sy(b.accuracy!);
        const mx = sx(b.meanConfidence ?? (b.from + b.to) / 2);
        const r = 3 + 7 * Math.sqrt(b.items / maxItems);
        return (
          <g key={b.from}>
            <rect x={x0} y={y} width={Math.max(1, x1 - x0)} height={sy(0) - y} className="rel-bar">
              <title>{`confidence ${Math.round(b.from * 100)}–${Math.round(b.to * 100)}%: ${b.items} items, accuracy ${pct(b.accuracy)}`}</title>
            </rect>
            <circle cx={mx} cy={y} r={r} className="rel-dot" />
            <text x={(x0 + x1) / 2} y={Math.max(PAD.top + 8, y - r - 3)} textAnchor="middle" className="axis rel-count">
              {b.items}
            </text>
          </g>
        );
      })}
      <line x1={sx(0)} y1={sy(0)} x2={sx(1)} y2={sy(1)} className="diagonal" />
    </Plot>
  );
}

// ---------------------------------------------------------------------------------------------
// Precision–recall per category

export interface CategoryCurve {
  category: string;
  curve: ThresholdPoint[];
  /** Marked with a filled marker: the advised threshold (null: none). */
  advisedThreshold?: number | null;
  /** Marked with a hollow marker: the project's current threshold. */
  currentThreshold?: number | null;
}

/** The points of a curve with both precision and recall, by threshold. */
const definedPoints = (curve: ThresholdPoint[]) => [...curve].filter((p) => p.precision !== null && p.recall !== null).sort((a, b) => a.threshold - b.threshold);
const pointAt = (curve: ThresholdPoint[], t: number | null | undefined) => (t === null || t === undefined ? undefined : curve.find((p) => p.threshold === t));

/**
 * The highest threshold of the curve that flags what `t` flags: from `t` up to it nothing
 * changes (it is the confidence of the least confident item still flagged). The curve holds
 * every distinct confidence, so the points with the same outcome are one run of it.
 */
export function sameOutcomeUpTo(curve: readonly ThresholdPoint[], t: number): number {
  const sorted = [...curve].sort((a, b) => a.threshold - b.threshold);
  const start = sorted.find((p) => p.threshold >= t);
  if (!start) return t;
  let upTo = start.threshold;
  for (const p of sorted) if (p.threshold > start.threshold && p.flagged === start.flagged && p.truePositives === start.truePositives) upTo = p.threshold;
  return upTo;
}

/**
 * An advised threshold in words. An advice of 0 says the model's answers reach the target with
 * no threshold at all, which "advised threshold 0" does not say: it reads "any up to N", N the
 * highest threshold that still flags the same items. Null: none reaches the target.
 */
export function advisedWords(advisedThreshold: number | null, curve: readonly ThresholdPoint[]): string | null {
  if (advisedThreshold === null) return null;
  return advisedThreshold === 0 ? `any up to ${sameOutcomeUpTo(curve, 0)}` : String(advisedThreshold);
}

/**
 * Recall (x) against precision (y) for each category, one point per threshold: raising the
 * threshold moves a curve left (less recall) and, for a useful model, up (more precision). A
 * filled marker is the advised threshold, a hollow one the current threshold.
 */
export function PrecisionRecallChart({ curves }: { curves: CategoryCurve[] }) {
  const label = `Precision–recall per category: ${curves.length} ${curves.length === 1 ? "category" : "categories"} (${curves.map((c) => c.category).join(", ")})`;
  const desc = curves
    .map((c) => {
      const pts = definedPoints(c.curve);
      const lo = pts[0];
      const hi = pts[pts.length - 1];
      return lo && hi
        ? `${c.category}: from precision ${pct(lo.precision)} and recall ${pct(lo.recall)} at threshold ${lo.threshold} to precision ${pct(hi.precision)} and recall ${pct(hi.recall)} at threshold ${hi.threshold}`
        : `${c.category}: nothing flagged at any threshold`;
    })
    .join("; ");
  return (
    <Plot
      testId="pr-chart"
      caption="Precision–recall per category"
      label={label}
      desc={desc || "No categories."}
      legend={
        <ul className="legend">
          {curves.map((c, i) => (
            <li key={c.category}>
              <SeriesSymbol index={i} /> {c.category}
            </li>
          ))}
          <li className="muted">filled: advised threshold · hollow: current threshold</li>
        </ul>
      }
      numbers={curves.map((c) => (
        <NumbersTable
          key={c.category}
          caption={`Precision and recall of ${c.category} by threshold`}
          head={[`${c.category}: threshold`, "Precision", "Recall"]}
          rows={[...c.curve].sort((a, b) => a.threshold - b.threshold).map((p) => [p.threshold, pct(p.precision), pct(p.recall)])}
        />
      ))}
    >
      <Axes xLabel="Recall" yLabel="Precision" />
      {curves.map((c, i) => {
        const st = seriesStyle(i);
        const pts = definedPoints(c.curve);
        const path = pts.map((p) => `${sx(p.recall!).toFixed(1)},${sy(p.precision!).toFixed(1)}`).join(" ");
        const advised = pointAt(pts, c.advisedThreshold);
        const current = pointAt(pts, c.currentThreshold);
        return (
          <g key={c.category}>
            {pts.length > 1 && <polyline points={path} fill="none" stroke={st.color} strokeWidth={2} strokeDasharray={st.dash || undefined} />}
            {pts.length === 1 && <Marker shape={st.shape} x={sx(pts[0]!.recall!)} y={sy(pts[0]!.precision!)} r={3} color={st.color} />}
            {current && <Marker shape={st.shape} x={sx(current.recall!)} y={sy(current.precision!)} r={5.5} color={st.color} hollow label={`${c.category}, current threshold ${current.threshold}`} />}
            {advised && <Marker shape={st.shape} x={sx(advised.recall!)} y={sy(advised.precision!)} r={5} color={st.color} label={`${c.category}, advised threshold ${advisedWords(advised.threshold, c.curve)}`} />}
          </g>
        );
      })}
    </Plot>
  );
}

// ---------------------------------------------------------------------------------------------
// Precision and recall against the threshold (what would have happened at each threshold)

/**
 * One category: precision (solid) and recall (dashed) at each threshold 0–100, a vertical line
 * at the current threshold and another at the advised one, and the precision target as a
 * horizontal line.
 */
export function ThresholdChart({ category, curve, currentThreshold, advisedThreshold, precisionTarget }: { category: string; curve: ThresholdPoint[]; currentThreshold: number; advisedThreshold: number | null; precisionTarget: number }) {
  const sorted = [...curve].sort((a, b) => a.threshold - b.threshold);
  const line = (pick: (p: ThresholdPoint) => number | null) =>
    sorted
      .filter((p) => pick(p) !== null)
      .map((p) => `${sx(p.threshold, 100).toFixed(1)},${sy(pick(p)!).toFixed(1)}`)
      .join(" ");
  const cur = pointAt(sorted, currentThreshold);
  const adv = pointAt(sorted, advisedThreshold);
  const label = `Precision and recall of ${category} by threshold: at the current threshold ${currentThreshold}, precision ${pct(cur?.precision)} and recall ${pct(cur?.recall)}; ${
    advisedThreshold === null
      ? `no threshold reaches the precision target of ${pct(precisionTarget, 0)}`
      : `at the advised threshold ${advisedWords(advisedThreshold, sorted)}, precision ${pct(adv?.precision)} and recall ${pct(adv?.recall)}`
  }`;
  // Each line's label on its own row, on the side away from the other line (or from the edge).
  const marks: { t: number; text: string; cls: string; left: boolean }[] = [
    { t: currentThreshold, text: `current ${currentThreshold}`, cls: "mark-current", left: advisedThreshold !== null ? advisedThreshold > currentThreshold : currentThreshold > 70 },
  ];
  if (advisedThreshold !== null) marks.push({ t: advisedThreshold, text: `advised ${advisedWords(advisedThreshold, sorted)}`, cls: "mark-advised", left: advisedThreshold < currentThreshold || (advisedThreshold === currentThreshold && advisedThreshold > 70) });
  for (const m of marks) if (m.t < 25) m.left = false;
  for (const m of marks) if (m.t > 80) m.left = true;
  return (
    <Plot
      testId={`threshold-chart-${category}`}
      caption={<>What would have happened at each threshold: {category}</>}
      label={label}
      desc="Solid line: precision. Dashed line: recall. Vertical lines: the current and the advised threshold. Dotted horizontal line: the precision target."
      legend={
        <ul className="legend">
          <li>
            <SeriesSymbol index={0} /> precision
          </li>
          <li>
            <SeriesSymbol index={1} /> recall
          </li>
          <li className="muted">dotted line: precision target {pct(precisionTarget, 0)}</li>
        </ul>
      }
      numbers={
        <NumbersTable
          caption={`What would have happened at each threshold for ${category}`}
          head={["Threshold", "Flagged", "True positives", "False positives", "Missed", "Precision", "Recall"]}
          rows={sorted.map((p) => [p.threshold, p.flagged, p.truePositives, p.falsePositives, p.falseNegatives, pct(p.precision), pct(p.recall)])}
        />
      }
    >
      <Axes xLabel="Threshold" yLabel="Share" xMax={100} />
      <line x1={sx(0, 100)} x2={sx(100, 100)} y1={sy(precisionTarget)} y2={sy(precisionTarget)} className="target-line" />
      {marks.map((m, i) => (
        <g key={m.cls}>
          <line x1={sx(m.t, 100)} x2={sx(m.t, 100)} y1={PAD.top} y2={PAD.top + IH} className={m.cls} />
          <text x={sx(m.t, 100) + (m.left ? -4 : 4)} y={PAD.top + 10 + i * 12} textAnchor={m.left ? "end" : "start"} className="axis mark-label">
            {m.text}
          </text>
        </g>
      ))}
      {[0, 1].map((i) => {
        const st = seriesStyle(i);
        return <polyline key={i} points={line(i === 0 ? (p) => p.precision : (p) => p.recall)} fill="none" stroke={st.color} strokeWidth={2} strokeDasharray={st.dash || undefined} />;
      })}
    </Plot>
  );
}

// ---------------------------------------------------------------------------------------------
// Confusion matrix as a heat map

const LIGHT = [241, 245, 251];
const DARK = [30, 58, 138];
const luminance = (rgb: number[]) => {
  const [r, g, b] = rgb.map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
/** A cell's fill by its share of the largest count, and the text colour (black or white) that contrasts more with it (never under 4.5:1). */
export function heatColors(share: number): { fill: string; text: string } {
  const t = Math.min(1, Math.max(0, share));
  const rgb = LIGHT.map((l, i) => Math.round(l + (DARK[i]! - l) * t));
  return { fill: `rgb(${rgb.join(",")})`, text: luminance(rgb) < 0.179 ? "#ffffff" : "#000000" };
}

/**
 * Rows: the expected category; columns: the predicted one; each cell shaded by its count and
 * with the count written in it. The diagonal holds what the model got right.
 */
export function ConfusionHeatmap({ confusion }: { confusion: EvalRunMetrics["confusion"] }) {
  // Labels no item touches (neither expected nor predicted: a row and a column of zeros) are left out.
  const keep = confusion.labels.map((_, i) => confusion.counts[i]!.some((v) => v > 0) || confusion.counts.some((row) => (row[i] ?? 0) > 0));
  const labels = confusion.labels.filter((_, i) => keep[i]);
  const counts = confusion.counts.filter((_, i) => keep[i]).map((row) => row.filter((_, j) => keep[j]));
  const hidden = confusion.labels.length - labels.length;
  const n = labels.length;
  const max = Math.max(1, ...counts.flat());
  const cell = n <= 4 ? 56 : n <= 8 ? 44 : 32;
  const left = Math.min(140, 14 + 7 * Math.max(4, ...labels.map((l) => l.length)));
  const top = left;
  const width = left + n * cell + 30;
  const height = top + n * cell + 10;
  const correct = labels.reduce((s, _, i) => s + (counts[i]?.[i] ?? 0), 0);
  const total = counts.flat().reduce((a, b) => a + b, 0);
  const label = `Confusion matrix as a heat map: ${n} labels, ${correct} of ${total} counts on the diagonal (expected and predicted agree)`;
  const desc = labels.map((l, i) => `expected ${l}: ${labels.map((p, j) => `${counts[i]?.[j] ?? 0} predicted ${p}`).join(", ")}`).join("; ");
  const short = (s: string) => (s.length > 18 ? `${s.slice(0, 17)}…` : s);
  return (
    <Plot
      testId="confusion-heatmap"
      caption="Confusion matrix"
      label={label}
      desc={desc}
      width={width}
      height={height}
      legend={
        <p className="legend-note muted">
          Rows: expected · columns: predicted · darker: more items · the count is in each cell{hidden > 0 && ` · ${hidden} labels with no item left out`}.
        </p>
      }
      numbers={
        <NumbersTable caption="Confusion matrix: rows expected, columns predicted" head={["Expected \\ predicted", ...labels]} rows={labels.map((l, i) => [l, ...labels.map((_, j) => counts[i]?.[j] ?? 0)])} />
      }
    >
      <text x={left + (n * cell) / 2} y={12} textAnchor="middle" className="axis axis-title">
        predicted
      </text>
      <text x={12} y={top + (n * cell) / 2} textAnchor="middle" className="axis axis-title" transform={`rotate(-90 12 ${top + (n * cell) / 2})`}>
        expected
      </text>
      {labels.map((l, j) => (
        <text key={`c${l}`} x={left + j * cell + cell / 2} y={top - 6} className="axis" transform={`rotate(-45 ${left + j * cell + cell / 2} ${top - 6})`}>
          {short(l)}
        </text>
      ))}
      {labels.map((l, i) => (
        <g key={`r${l}`}>
          <text x={left - 6} y={top + i * cell + cell / 2 + 4} textAnchor="end" className="axis">
            {short(l)}
          </text>
          {labels.map((p, j) => {
            const v = counts[i]?.[j] ?? 0;
            const c = heatColors(v / max);
            return (
              <g key={p}>
                <rect x={left + j * cell} y={top + i * cell} width={cell} height={cell} fill={c.fill} className={i === j ? "heat-cell heat-diagonal" : "heat-cell"}>
                  <title>{`expected ${l}, predicted ${p}: ${v}`}</title>
                </rect>
                <text x={left + j * cell + cell / 2} y={top + i * cell + cell / 2 + 4} textAnchor="middle" fill={c.text} className="heat-count" fontWeight={i === j ? 700 : 400}>
                  {v}
                </text>
              </g>
            );
          })}
        </g>
      ))}
    </Plot>
  );
}
