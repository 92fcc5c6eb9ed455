/**
 * The review workflow: every status and every move between them, in one table. Reports and
 * cases share it. docs/workflow.md reproduces the table for people. A pure vocabulary (the
 * dashboard and the storage layer import it): the engine that applies a move, with its writes
 * and effects, is workflow-engine.ts.
 *
 * | Action   | From                                   | To          | Notes                                         |
 * |----------|----------------------------------------|-------------|-----------------------------------------------|
 * | create   | (none)                                 | OPEN        |                                               |
 * | triage   | OPEN                                   | TRIAGED     | a moderator confirmed it needs review         |
 * | enrich   | OPEN                                   | IN_REVIEW   | AI: confidence ≥ threshold and HIGH/CRITICAL  |
 * | escalate | any but RESOLVED                       | IN_REVIEW   | on RESOLVED: unchanged, recorded (the spec)   |
 * | resolve  | OPEN, TRIAGED, IN_REVIEW               | RESOLVED    | 409 from anything else                        |
 * | dismiss  | OPEN, TRIAGED, IN_REVIEW               | DISMISSED   | 409 from anything else                        |
 * | appeal   | RESOLVED                               | APPEALED    | the platform forwards its user's appeal       |
 * | uphold   | APPEALED, IN_REVIEW                    | CLOSED      | the decision stands                           |
 * | overturn | APPEALED, IN_REVIEW                    | CLOSED      | the decision is reversed (actions revoked)    |
 * | close    | RESOLVED, DISMISSED                    | CLOSED      | archived: no further appeal                   |
 * | undo     | RESOLVED, DISMISSED, IN_REVIEW         | (before)    | a bulk decision undone in its window: back to |
 * |          |                                        |             | the open status it had (OPEN, TRIAGED, ...)   |
 *
 * The interface specification's rows are create, enrich, escalate, resolve and dismiss; the
 * others are ours (docs/workflow.md). uphold and overturn from IN_REVIEW: an appealed report
 * escalated back into review, whose appeal (still pending) decides it when no new decision did.
 */
export const STATUSES = ["OPEN", "TRIAGED", "IN_REVIEW", "RESOLVED", "DISMISSED", "APPEALED", "CLOSED"] as const;
export type Status = (typeof STATUSES)[number];

export type WorkflowAction = "triage" | "enrich" | "escalate" | "resolve" | "dismiss" | "appeal" | "uphold" | "overturn" | "close" | "undo";

interface Move {
  from: readonly Status[] | "any";
  /** "restore": back to the open status the thing had before (given with the move). */
  to: Status | "restore";
  /** Statuses in which the action is accepted but changes nothing (it is still recorded). */
  noop?: readonly Status[];
}

const DECIDABLE = ["OPEN", "TRIAGED", "IN_REVIEW"] as const;

export const MOVES: Record<WorkflowAction, Move> = {
  triage: { from: ["OPEN"], to: "TRIAGED" },
  enrich: { from: ["OPEN"], to: "IN_REVIEW" },
  // The specification: any status but RESOLVED goes to IN_REVIEW, RESOLVED stays (recorded).
  // An APPEALED report too: its pending appeal still decides it from IN_REVIEW (uphold, overturn).
  escalate: { from: "any", to: "IN_REVIEW", noop: ["RESOLVED"] },
  resolve: { from: DECIDABLE, to: "RESOLVED" },
  dismiss: { from: DECIDABLE, to: "DISMISSED" },
  appeal: { from: ["RESOLVED"], to: "APPEALED" },
  uphold: { from: ["APPEALED", "IN_REVIEW"], to: "CLOSED" },
  overturn: { from: ["APPEALED", "IN_REVIEW"], to: "CLOSED" },
  close: { from: ["RESOLVED", "DISMISSED"], to: "CLOSED" },
  // Undoing a bulk decision (src/domain/review/bulk.ts) within its window: IN_REVIEW is an undone escalation.
  undo: { from: ["RESOLVED", "DISMISSED", "IN_REVIEW"], to: "restore" },
};

/** Statuses a report or case can still be worked in; new reports join cases in these. */
export const OPEN_STATUSES: readonly Status[] = DECIDABLE;
export const isOpenStatus = (s: string): boolean => (OPEN_STATUSES as readonly string[]).includes(s);

/**
 * `noop`: the action is accepted in this status but changes nothing there (an escalation of a
 * RESOLVED report): recorded, not applied.
 */
export type MoveResult = { allowed: true; to: Status; changed: boolean; noop: boolean } | { allowed: false };

/**
 * Where `action` takes something in status `from`, or that it may not. `restore` is the status
 * an `undo` goes back to: one of the open statuses, else the move is refused.
 */
export function nextStatus(from: Status, action: WorkflowAction, restore?: Status): MoveResult {
  const move = MOVES[action];
  if (move.noop?.includes(from)) return { allowed: true, to: from, changed: false, noop: true };
  if (move.from !== "any" && !move.from.includes(from)) return { allowed: false };
  const to = move.to === "restore" ? restore : move.to;
  if (to === undefined || (move.to === "restore" && !isOpenStatus(to))) return { allowed: false };
  return { allowed: true, to, changed: to !== from, noop: false };
}

export const asStatus = (s: string): Status => {
  if (!(STATUSES as readonly string[]).includes(s)) throw new Error(`unknown status ${s}`);
  return s as Status;
};
