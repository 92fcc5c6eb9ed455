/**
 * Service levels as the dashboard shows them (issue 27): a target in words, and a queue's oldest
 * open case against its targets. The overview's tile and the queues page share them; what a
 * target and a breach are: src/domain/views/service-level.ts.
 */
import { formatDuration } from "../ui.tsx";

/** "30 min", "4 h", "2 d"; "none" for no target. */
export const targetText = (minutes: number | null): string => (minutes === null ? "none" : formatDuration(minutes * 60_000));

/** A queue's targets in one line: "first review 30 min · decision 4 h" (empty: no target). */
export function targetsText(q: { firstReviewTargetMinutes: number | null; decisionTargetMinutes: number | null }): string {
  return [
    q.firstReviewTargetMinutes !== null && `first review ${targetText(q.firstReviewTargetMinutes)}`,
    q.decisionTargetMinutes !== null && `decision ${targetText(q.decisionTargetMinutes)}`,
  ]
    .filter(Boolean)
    .join(" · ");
}

/**
 * The oldest open case's age against the queue's smallest target ("2 h 5 min, past the 30 min
 * target"), or its age alone without a target, or "none open".
 */
export function OldestAge({ openedAt, now, targets }: { openedAt: string | null; now: number; targets: { firstReviewTargetMinutes: number | null; decisionTargetMinutes: number | null } }) {
  if (!openedAt) return <span className="muted">none open</span>;
  const age = Math.max(0, now - Date.parse(openedAt));
  const limits = [targets.firstReviewTargetMinutes, targets.decisionTargetMinutes].filter((m): m is number => m !== null);
  const smallest = limits.length ? Math.min(...limits) : null;
  if (smallest === null) return <span>{formatDuration(age)}</span>;
  const past = age > smallest * 60_000;
  return (
    <span className={past ? "sla-past" : undefined}>
      {formatDuration(age)}
      <span className="muted">
        {" "}
        ({past ? "past" : "within"} the {targetText(smallest)} target)
      </span>
    </span>
  );
}
