/**
 * The rules of a job lane that ranks its jobs and bounds its backlog, as arithmetic (a pure
 * module: src/domain/plumbing/jobs.ts applies them to the queue, test/domain/backlog-rules.test.ts
 * checks them in process).
 *
 * - **Order.** A lane takes its due jobs by `priority` (lowest first), then by `run_at` (oldest
 *   first). A kind that does not rank its jobs gives them all priority 0: oldest first, as ever.
 * - **Shedding.** Past its backlog bound, a lane sheds the job it would take last: the newest of
 *   its least urgent (highest) priority, whether that is a waiting job or the one being asked for.
 *   Jobs of a priority up to the lane's `keptUpTo` are never shed: past the bound they wait.
 * - **Catch-up.** Shed jobs of a lane that catches up (enrichment) are queued again once the lane
 *   has room, most urgent first: while fewer than its room's worth wait, up to that many.
 */

/** What a lane knows of its backlog when a job is asked for. */
export interface LaneBacklog {
  /** Pending jobs past which the lane sheds (0: never). */
  bound: number;
  /** Pending jobs by priority (counted now and then, plus those enqueued since). */
  pending: ReadonlyMap<number, number>;
  /** The jobs of this priority or a more urgent one are never shed (null: any may be). */
  keptUpTo: number | null;
}

/** What asking for a job does: queue it, shedding a waiting job of `shed` priority or none; or shed the job asked for. */
export type Admission = { queued: true; shed: number | null } | { queued: false };

/** Pending jobs of the lane, every priority together. */
export const pendingTotal = (pending: ReadonlyMap<number, number>): number => {
  let n = 0;
  for (const count of pending.values()) n += count;
  return n;
};

/** The least urgent priority with a job waiting (null when none waits). */
export function leastUrgentWaiting(pending: ReadonlyMap<number, number>): number | null {
  let least: number | null = null;
  for (const [priority, count] of pending) if (count > 0 && (least === null || priority > least)) least = priority;
  return least;
}

/**
 * Whether a job of `priority` is queued, and what is shed for it. Below the bound: queued.
 * At the bound: the job the lane would take last goes, that is a waiting job of a less urgent
 * priority than the new one when there is one (the new one is queued in its place), else the
 * new job itself (the newest of the least urgent priority), unless its priority is kept: then it
 * is queued past the bound and waits.
 */
export function admit(lane: LaneBacklog, priority: number): Admission {
  if (lane.bound <= 0 || pendingTotal(lane.pending) < lane.bound) return { queued: true, shed: null };
  const least = leastUrgentWaiting(lane.pending);
  if (least !== null && least > priority && (lane.keptUpTo === null || least > lane.keptUpTo)) return { queued: true, shed: least };
  if (lane.keptUpTo !== null && priority <= lane.keptUpTo) return { queued: true, shed: null };
  return { queued: false };
}

/** A lane without a bound that holds skipped jobs (of a time it had one) takes them again while fewer than this many wait. */
export const UNBOUNDED_ROOM = 1_000;

/** A catching-up lane's room: it takes shed jobs again while fewer than this many wait (a tenth of its bound, at least 1). */
export const catchUpRoom = (bound: number): number => (bound > 0 ? Math.max(1, Math.ceil(bound / 10)) : UNBOUNDED_ROOM);

/** How many shed jobs to queue again now: what the room has left (none while the lane is fuller). */
export const catchUpCount = (input: { bound: number; pending: number }): number => Math.max(0, catchUpRoom(input.bound) - input.pending);

/** Whether a shed job, shed at `skippedAt`, has waited past `maxAgeMs` for the lane to have room: then it expires. */
export const hasExpired = (input: { skippedAt: number; now: number; maxAgeMs: number }): boolean => input.now - input.skippedAt > input.maxAgeMs;
