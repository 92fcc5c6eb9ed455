/**
 * The screen before a case that may be distressing (issue 42): its severity is CRITICAL, or its
 * reports name categories the project marks as graphic (src/domain/categories/graphic.ts). It says why
 * and what stays protected, and leaves the choice to the reviewer: "Show the case", or not open it
 * at all (back to the queue; in review mode, skip it). Nothing of the reports' content is on it.
 */
import { useEffect, useRef } from "react";
import { BLUR_STRENGTH_SPECS, type CaseCaution, type ViewingPreferences } from "../../domain/views/viewing.ts";
import { href } from "../router.ts";

export function CaseWarning({
  caution,
  preferences,
  title,
  reportCount,
  onShow,
  onSkip,
}: {
  caution: NonNullable<CaseCaution>;
  preferences: ViewingPreferences;
  /** The case's title (its target or subject: no reported content). */
  title: string;
  reportCount: number;
  onShow: () => void;
  /** In review mode: skip the case without opening it. */
  onSkip?: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  // A screen reader starts at the warning, not at a control: nothing opens by a stray Enter.
  useEffect(() => heading.current?.focus(), []);
  const graphic = caution.graphicCategories;
  return (
    <section className="case-warning" aria-labelledby="case-title" data-testid="case-warning">
      <h1 id="case-title" ref={heading} tabIndex={-1}>
        This case may be distressing
      </h1>
      <ul>
        {caution.critical && <li>Its severity is CRITICAL (the emergency bucket).</li>}
        {graphic.length > 0 && (
          <li>
            Its reports name {graphic.length === 1 ? "a category" : "categories"} this project marks as graphic:{" "}
            {graphic.map((name, i) => (
              <span key={name}>
                {i > 0 && ", "}
                <code>{name}</code>
              </span>
            ))}
            .
          </li>
        )}
      </ul>
      <p>{coverWords(preferences)}</p>
      <p className="muted">
        {title} · {reportCount} report{reportCount === 1 ? "" : "s"}
      </p>
      <div className="warning-actions">
        <button type="button" className="primary" onClick={onShow}>
          Show the case
        </button>
        {onSkip && (
          <button type="button" className="secondary" onClick={onSkip}>
            Skip this case…
          </button>
        )}
        <a className="button" href={href("queue")}>
          Back to the queue
        </a>
      </div>
      <p className="muted">
        Your <a href={href("viewing")}>viewing preferences</a> say whether you see this screen, unless your organization requires it.
      </p>
    </section>
  );
}

/** What protects the reviewer once the case is open, as their preferences say. */
function coverWords(p: ViewingPreferences): string {
  const blurred = BLUR_STRENGTH_SPECS[p.blur].px > 0;
  const covers = [blurred && "blurred", p.grayscale && "in grayscale"].filter(Boolean).join(" and ");
  if (!covers) return "Your viewing preferences show its media as it is, neither blurred nor in grayscale.";
  return `Once you open it, its media stays ${covers} until you reveal each file${blurred ? ", and is blurred again when you move away" : ""}.`;
}
