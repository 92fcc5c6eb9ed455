/**
 * The review queue's views: every open case, the unclaimed ones, the caller's, those escalated
 * to each team, and the appealed cases (decided, waiting for their appeal). Pure: the dashboard
 * shows them as tabs with their counts.
 */
import { TEAMS, type Team } from "./report.ts";

export const QUEUE_VIEWS = ["open", "unassigned", "mine", ...TEAMS.map((t) => `escalated_${t}` as const), "appealed"] as const;
export type QueueView = (typeof QUEUE_VIEWS)[number];

/** The team an `escalated_…` view is about, else null. */
export const teamOfView = (view: QueueView): Team | null => {
  const team = view.startsWith("escalated_") ? view.slice("escalated_".length) : null;
  return team !== null && (TEAMS as readonly string[]).includes(team) ? (team as Team) : null;
};

/** Rows per page of the queue. */
export const QUEUE_PAGE_SIZE = 50;
