/**
 * A team's workload (issue 45): the arithmetic, pure of storage, as evaluation/metrics.ts is for
 * the classifier. src/domain/team/team-workload.ts reads the rows (the audit trail, the held
 * cases, the second reviews) and hands them here; test/domain/workload.test.ts checks each rule
 * on figures worked out by hand.
 *
 * - A **decision** is a moderator's resolution or dismissal that took a case out of review: the
 *   case's status change (`CASE_STATUS_CHANGED` with `data.action` resolve or dismiss, by a
 *   user), one per case however many reports moved with it. An undo of a bulk decision takes its
 *   decision back: the case's next change being the undo, its decision does not count.
 * - **Time to decision** is moderator time, not queue time: from when the case became the
 *   decider's (the last claim, assignment or review-mode take of it to them before the decision:
 *   `CASE_ASSIGNED`) to the decision. A decision on a case they did not hold (a bulk decision from
 *   the queue, a decision that took the case over from someone else in the same step) has no such
 *   start and is left out of the median, which says how many decisions it rests on.
 * - **Agreement** is the quality review's (docs/quality.md): of their sampled decisions whose
 *   second review was committed, the share both decided alike, and Cohen's κ between their
 *   labels and the second reviewers' (agreement.ts), null when undefined.
 */
import { cohensKappa, percentAgreement } from "../quality/agreement.ts";

/** A case's status change as the trail records it: who, when, and the workflow action. */
export interface StatusChange {
  caseId: string;
  /** The event's id: events of one millisecond keep their order by it (UUIDv7). */
  id: string;
  at: number;
  /** The user who moved it (null: the platform, Flagstaff itself, a rule). */
  userId: string | null;
  action: string;
}

/** A change of a case's holder: `CASE_ASSIGNED` (to `holderId`) or `CASE_UNASSIGNED` (null). */
export interface HolderChange {
  caseId: string;
  id: string;
  at: number;
  holderId: string | null;
  /** A decision that took the case over from its holder in the same step (`data.takenOverFrom`): no hold of the decider's. */
  byDecision: boolean;
}

export interface Decision {
  caseId: string;
  at: number;
  userId: string;
}

/** The actions that decide a case (the decisions the workload counts). */
const DECIDING = new Set(["resolve", "dismiss"]);

const inOrder = <T extends { at: number; id: string }>(a: T, b: T): number => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The decisions among a period's status changes: users' resolutions and dismissals, less those an undo took back. */
export function decisionsOf(changes: readonly StatusChange[]): Decision[] {
  const decisions: (Decision & { undone: boolean })[] = [];
  const lastOfCase = new Map<string, Decision & { undone: boolean }>();
  for (const c of [...changes].sort(inOrder)) {
    if (c.action === "undo") {
      const last = lastOfCase.get(c.caseId);
      if (last) last.undone = true;
      lastOfCase.delete(c.caseId);
      continue;
    }
    if (!DECIDING.has(c.action) || c.userId === null) {
      lastOfCase.delete(c.caseId);
      continue;
    }
    const d = { caseId: c.caseId, at: c.at, userId: c.userId, undone: false };
    decisions.push(d);
    lastOfCase.set(c.caseId, d);
  }
  return decisions.filter((d) => !d.undone).map(({ undone: _, ...d }) => d);
}

/**
 * When the case became the decider's, for one decision: the last change of holder before it (at
 * or before its time) naming the decider, unless a later change gave the case to someone else or
 * the decision itself took it over; null when they did not hold it.
 */
export function heldSince(decision: Decision, changesOfCase: readonly HolderChange[]): number | null {
  let since: number | null = null;
  for (const h of [...changesOfCase].sort(inOrder)) {
    if (h.caseId !== decision.caseId || h.at > decision.at) continue;
    since = h.holderId === decision.userId && !h.byDecision ? h.at : null;
  }
  return since;
}

/** The median of some values (the mean of the middle two for an even count); null for none. */
export function median(values: readonly number[]): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A second review of a moderator's decision: the two labels the agreement compares (decisionLabel). */
export interface ReviewedDecision {
  firstById: string;
  first: string;
  second: string;
}

/** One moderator's figures, before they are dressed for the answer. */
export interface WorkloadFigures {
  userId: string;
  held: number;
  heldSince: number | null;
  decisions: number;
  timeToDecision: { medianMs: number | null; n: number };
  agreement: { n: number; agreed: number; share: number | null; kappa: number | null };
}

/**
 * Each moderator's figures from what the period holds: the cases held now (with since when),
 * the decisions (with the decider's hold start of each, from heldSince) and the second reviews of
 * their decisions. `listed` are the users shown even with nothing to show (the enabled
 * moderators and admins); anyone else appears when some figure is theirs.
 */
export function workloadFigures(input: {
  listed: readonly string[];
  held: readonly { holderId: string; since: number }[];
  decisions: readonly (Decision & { heldSince: number | null })[];
  reviews: readonly ReviewedDecision[];
}): WorkloadFigures[] {
  const ids = new Set([...input.listed, ...input.held.map((h) => h.holderId), ...input.decisions.map((d) => d.userId), ...input.reviews.map((r) => r.firstById)]);
  return [...ids].map((userId) => {
    const held = input.held.filter((h) => h.holderId === userId);
    const decided = input.decisions.filter((d) => d.userId === userId);
    const timed = decided.flatMap((d) => (d.heldSince === null ? [] : [Math.max(0, d.at - d.heldSince)]));
    const items = input.reviews.filter((r) => r.firstById === userId).map((r) => [r.first, r.second] as const);
    return {
      userId,
      held: held.length,
      heldSince: held.length ? Math.min(...held.map((h) => h.since)) : null,
      decisions: decided.length,
      timeToDecision: { medianMs: median(timed), n: timed.length },
      agreement: { n: items.length, agreed: items.filter(([a, b]) => a === b).length, share: percentAgreement(items), kappa: items.length ? cohensKappa(items) : null },
    };
  });
}
