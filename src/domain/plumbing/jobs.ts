import { and, asc, count, desc, eq, inArray, isNotNull, lt, lte, max, min, sql } from "drizzle-orm";
import { jobs } from "../../db/schema.ts";
import { countUpTo } from "../../db/count-up-to.ts";
import { iso, isoOrNull } from "../core/clock.ts";
import { together, transaction, type DomainContext, type ReadContext } from "../core/context.ts";
import { newId } from "../core/ids.ts";
import type { JobKind, JobStatus, JobView } from "../views/job.ts";
import { admit, type LaneBacklog } from "./backlog-rules.ts";
import { param, statements } from "../../db/prepared.ts";

export type JobRow = typeof jobs.$inferSelect;
export type { JobStatus, JobView } from "../views/job.ts";

export interface EnqueueInput {
  /** The organization the job works for. */
  orgId: string;
  /** A kind of JOB_KIND: one with its lane (JOB_SPECS, src/jobs/job-specs.ts), so that a worker runs it. */
  kind: JobKind;
  payload: unknown;
  /** When the job may first run (default: now). */
  runAt?: number;
  maxAttempts?: number;
  /** Its place in its lane: lower is taken first, and shed last (src/domain/plumbing/backlog-rules.ts); default 0. */
  priority?: number;
  /** The row it works on, when it names one (a report, for enrichment). */
  entityId?: string | null;
}

// ---------------------------------------------------------------------------------------------
// Lanes. Each job kind is a lane: the workers claim each kind on its own (with its own number of
// slots, src/jobs/worker.ts), so webhook deliveries never wait behind AI enrichment. A lane takes
// its due jobs by priority, then oldest first. A lane of optional work (enrichment) may have a
// backlog bound: past it, the job it would take last is recorded as skipped, with the reason,
// instead of waiting (backpressure that sheds the optional work, the least urgent first, never
// the report that asked for it; src/domain/plumbing/backlog-rules.ts). What the store's process
// knows of each lane lives here, per store: the bounds set at start-up, the backlog last
// counted, what was skipped, how fast jobs are asked for.

/** A bounded lane's rules (setBacklogBounds). */
export interface LaneBound {
  /** Pending jobs past which the lane sheds (0: never). */
  bound: number;
  /** Jobs of this priority or a more urgent one are never shed (null: any may be). */
  keptUpTo?: number | null;
}

/** Seconds of the arrival window (arrivalRate). */
const ARRIVAL_WINDOW_S = 60;

interface LaneState {
  /** Bounded lanes' rules (the kinds without one never shed). */
  bounds: Map<string, { bound: number; keptUpTo: number | null }>;
  /** Pending jobs of each bounded kind by priority: counted by refreshBacklogs, plus those enqueued since. */
  backlog: Map<string, Map<number, number>>;
  /** Jobs skipped since start, by kind and reason (metrics). */
  skipped: Map<string, { kind: string; reason: string; count: number }>;
  /** Kinds enqueued since the workers last woke: only their lanes need to look. */
  enqueued: Set<string>;
  /** Jobs asked for (queued or skipped) per second of the last minute, by kind: a ring of counts. */
  arrivals: Map<string, { counts: number[]; seconds: number[]; since: number }>;
}

const laneStates = new WeakMap<object, LaneState>();
const laneState = (store: object): LaneState => {
  let state = laneStates.get(store);
  if (!state) laneStates.set(store, (state = { bounds: new Map(), backlog: new Map(), skipped: new Map(), enqueued: new Set(), arrivals: new Map() }));
  return state;
};

/** Why a job of a lane over its bound is skipped (its lastError, and the metric's reason). */
export const BACKLOG_REASON = "backlog";

/**
 * Sets the backlog rules of each optional lane for the process working on `store`: once `bound`
 * jobs of the kind are pending, the lane sheds the job it would take last (backlog-rules.ts),
 * never one of a priority up to `keptUpTo`. Called at start-up, before the first report.
 */
export function setBacklogBounds(store: object, bounds: Record<string, number | LaneBound>): void {
  const state = laneState(store);
  state.bounds = new Map(
    Object.entries(bounds)
      .map(([kind, b]) => [kind, typeof b === "number" ? { bound: b, keptUpTo: null } : { bound: b.bound, keptUpTo: b.keptUpTo ?? null }] as const)
      .filter(([, b]) => b.bound > 0),
  );
  state.backlog.clear();
}

/** A bounded lane's bound (null: the lane has none). */
export function backlogBoundOf(store: object, kind: string): number | null {
  return laneState(store).bounds.get(kind)?.bound ?? null;
}

/**
 * Counts the pending jobs of each bounded lane by priority (a range of the order index; the
 * lane holds about its bound, plus the kept jobs waiting past it). The workers call it every
 * second or so: between two counts, each job this process enqueues adds one.
 */
export async function refreshBacklogs(ctx: Pick<ReadContext, "store" | "db">): Promise<void> {
  const state = laneState(ctx.store);
  for (const kind of state.bounds.keys()) {
    const rows = await ctx.db
      .select({ priority: jobs.priority, n: count() })
      .from(jobs)
      .where(and(eq(jobs.kind, kind), eq(jobs.status, "pending")))
      .groupBy(jobs.priority);
    state.backlog.set(kind, new Map(rows.map((r) => [r.priority, r.n])));
  }
}

/** Jobs of `kind` asked for per second over the last minute (since start, when that is shorter), in this process. */
export function arrivalRate(store: object, kind: string, now: number): number {
  const ring = laneState(store).arrivals.get(kind);
  if (!ring) return 0;
  const second = Math.floor(now / 1000);
  let n = 0;
  for (let i = 0; i < ARRIVAL_WINDOW_S; i++) if (ring.seconds[i]! > second - ARRIVAL_WINDOW_S) n += ring.counts[i]!;
  const span = Math.min(ARRIVAL_WINDOW_S, Math.max(1, (now - ring.since) / 1000));
  return n / span;
}

function noteArrival(state: LaneState, kind: string, now: number): void {
  let ring = state.arrivals.get(kind);
  if (!ring) state.arrivals.set(kind, (ring = { counts: new Array<number>(ARRIVAL_WINDOW_S).fill(0), seconds: new Array<number>(ARRIVAL_WINDOW_S).fill(0), since: now }));
  const second = Math.floor(now / 1000);
  const i = second % ARRIVAL_WINDOW_S;
  if (ring.seconds[i] !== second) {
    ring.seconds[i] = second;
    ring.counts[i] = 0;
  }
  ring.counts[i]!++;
}

/** The jobs skipped since start, by kind and reason (metrics). */
export function skippedJobs(store: object): { kind: string; reason: string; count: number }[] {
  return [...laneState(store).skipped.values()].map((s) => ({ ...s }));
}

/**
 * The kinds of the jobs enqueued since the last call (the workers' wake-up after a commit: only
 * those lanes look at the queue). Empty when none is known: then every lane looks.
 */
export function takeEnqueuedKinds(store: object): string[] {
  const state = laneState(store);
  const kinds = [...state.enqueued];
  state.enqueued.clear();
  return kinds;
}

const skippedNew = (bound: number, kind: string) =>
  `skipped: ${bound} ${kind} jobs were already waiting (the lane's backlog bound), none less urgent than this one; it is taken again once the lane has room`;
const skippedWaiting = (bound: number, kind: string) =>
  `skipped: ${bound} ${kind} jobs were waiting (the lane's backlog bound) when a more urgent one came, and this one was the least urgent; it is taken again once the lane has room`;

function countSkipped(state: LaneState, kind: string): void {
  const key = `${kind}\u0000${BACKLOG_REASON}`;
  const entry = state.skipped.get(key) ?? { kind, reason: BACKLOG_REASON, count: 0 };
  entry.count++;
  state.skipped.set(key, entry);
}

const bump = (counts: Map<number, number>, priority: number, by: number) => counts.set(priority, Math.max(0, (counts.get(priority) ?? 0) + by));

type JobInsert = Required<Omit<typeof jobs.$inferInsert, "leasedBy" | "leaseUntil">>;

/**
 * A job's INSERT, kept prepared (src/db/prepared.ts): a report enqueues its enrichment, a
 * decision its webhook deliveries, and building it with Drizzle each time cost about 15 µs on SQLite.
 */
const jobStatements = statements((db) => {
  const row: Record<keyof JobInsert, true> = { id: true, orgId: true, kind: true, payload: true, status: true, attempts: true, maxAttempts: true, runAt: true, lastError: true, priority: true, entityId: true, createdAt: true, updatedAt: true };
  return { insert: db.insert(jobs).values(Object.fromEntries(Object.keys(row).map((c) => [c, param(c)])) as unknown as JobInsert).prepare() };
});

/**
 * Adds a job. Call it inside the transaction whose change it follows (the job then exists
 * exactly when the change does: an outbox); the workers are woken once that transaction commits.
 * Past its lane's backlog bound, the lane sheds the job it would take last (admit,
 * backlog-rules.ts): this one, written as skipped with the reason and not run, or a waiting one
 * of a less urgent priority, marked skipped in this transaction (a write whose answer nobody
 * waits for: it travels with the COMMIT).
 */
export async function enqueueJob(ctx: ReadContext, input: EnqueueInput): Promise<string> {
  const id = newId();
  const now = ctx.clock.now();
  const priority = input.priority ?? 0;
  const state = laneState(ctx.store);
  const rules = state.bounds.get(input.kind);
  noteArrival(state, input.kind, now);
  let counts: Map<number, number> | undefined;
  let admission: ReturnType<typeof admit> = { queued: true, shed: null };
  if (rules) {
    counts = state.backlog.get(input.kind);
    if (!counts) state.backlog.set(input.kind, (counts = new Map()));
    const lane: LaneBacklog = { bound: rules.bound, keptUpTo: rules.keptUpTo, pending: counts };
    admission = admit(lane, priority);
  }
  const skipped = admission.queued ? null : skippedNew(rules!.bound, input.kind);
  const inserted = jobStatements(ctx.db).insert.execute({
    id,
    orgId: input.orgId,
    kind: input.kind,
    payload: JSON.stringify(input.payload),
    status: skipped ? "skipped" : "pending",
    attempts: 0,
    maxAttempts: input.maxAttempts ?? 10,
    // A skipped job's run_at is when it was skipped: the lane's latest skip is an index search.
    runAt: skipped ? now : (input.runAt ?? now),
    lastError: skipped,
    priority,
    entityId: input.entityId ?? null,
    createdAt: now,
    updatedAt: now,
  });
  // Both statements sent before either answer is awaited: a caller may leave this whole call to
  // its COMMIT (Store.atCommit), and a statement sent only once an answer came back would come
  // after the COMMIT.
  const shed = admission.queued && admission.shed !== null && counts && rules ? admission.shed : null;
  await together(inserted, shed === null ? null : shedWaiting(ctx, { kind: input.kind, priority: shed, reason: skippedWaiting(rules!.bound, input.kind), now }));
  if (skipped) {
    countSkipped(state, input.kind);
    return id;
  }
  if (shed !== null && counts) {
    bump(counts, shed, -1);
    countSkipped(state, input.kind);
  }
  if (counts) bump(counts, priority, 1);
  state.enqueued.add(input.kind);
  ctx.store.jobEnqueued();
  return id;
}

/**
 * Adds jobs of one lane without a backlog bound by a prepared INSERT, sent together (a decision's
 * thousands of webhook deliveries: a statement built with Drizzle for each cost about 15 µs a job
 * on SQLite, in the decision's transaction; one round trip on PostgreSQL). A lane with a bound takes them one by one through enqueueJob, which
 * admits or sheds each. Same contract as enqueueJob otherwise; returns the ids in order.
 */
export async function enqueueJobs(ctx: ReadContext, kind: JobKind, inputs: readonly Omit<EnqueueInput, "kind">[]): Promise<string[]> {
  const state = laneState(ctx.store);
  if (state.bounds.has(kind)) {
    const ids: string[] = [];
    for (const input of inputs) ids.push(await enqueueJob(ctx, { ...input, kind }));
    return ids;
  }
  if (inputs.length === 0) return [];
  const now = ctx.clock.now();
  const insert = jobStatements(ctx.db).insert;
  const rows = inputs.map((input): JobInsert => ({
    id: newId(),
    orgId: input.orgId,
    kind,
    payload: JSON.stringify(input.payload),
    status: "pending",
    attempts: 0,
    maxAttempts: input.maxAttempts ?? 10,
    runAt: input.runAt ?? now,
    lastError: null,
    priority: input.priority ?? 0,
    entityId: input.entityId ?? null,
    createdAt: now,
    updatedAt: now,
  }));
  await together(...rows.map((row) => insert.execute(row)));
  for (let i = 0; i < rows.length; i++) noteArrival(state, kind, now);
  state.enqueued.add(kind);
  ctx.store.jobEnqueued();
  return rows.map((r) => r.id);
}

/**
 * Marks skipped the newest waiting job of `priority` in its lane: the one the lane would take
 * last (a range of the order index, read backwards). On PostgreSQL a job another transaction
 * holds (being claimed, or shed by another report) is passed over for the next.
 *
 * Like the claim, these statements name their rows by `id IN (a limited, locking subquery)`
 * with no other condition on the updated rows: one more (`status = …`) lets PostgreSQL's planner
 * scan the table by it and run the subquery again for each row, each run locking and returning
 * the next row, so that more rows than the limit change (test/domain/enrichment-queue.test.ts saw
 * a catch-up of 1 take 3). The subquery's FOR UPDATE re-reads each row it locks: its conditions
 * hold for the rows it answers.
 */
function shedWaiting(ctx: ReadContext, input: { kind: string; priority: number; reason: string; now: number }): Promise<unknown> {
  const last = ctx.db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.kind, input.kind), eq(jobs.status, "pending"), eq(jobs.priority, input.priority)))
    .orderBy(desc(jobs.runAt))
    .limit(1);
  return ctx.db
    .update(jobs)
    .set({ status: "skipped", runAt: input.now, lastError: input.reason, updatedAt: input.now })
    .where(inArray(jobs.id, ctx.store.skipLocked(last)))
    .execute();
}

/**
 * The queue's own transactions touch only job rows they lock (a claim) or lease: on PostgreSQL
 * they run beside other writes, so instances claim jobs together (Store.transaction).
 */
const LEASED_ROWS_ONLY = { exclusive: false } as const;

/**
 * A claim and a completion are one statement each, atomic alone: on PostgreSQL each is its own
 * transaction, sent without BEGIN and COMMIT (one round trip instead of three) and committed
 * without waiting for the disk (Store.transaction's `durable: false`). What a crash of
 * PostgreSQL may lose of them is a claim or a completion of its last moments: the job then runs
 * again, which every job tolerates (the queue runs each at least once).
 */
const ONE_STATEMENT = { exclusive: false, durable: false } as const;

/**
 * When the next pending job of a lane is due (null: none pending): its oldest run_at, the first
 * entry of the lane's range of the claim index. The workers look before they claim, so an idle
 * lane costs a read, not a write transaction.
 */
export async function nextDueAt(ctx: Pick<ReadContext, "db">, kind: string): Promise<number | null> {
  const [row] = await ctx.db
    .select({ t: jobs.runAt })
    .from(jobs)
    .where(and(eq(jobs.kind, kind), eq(jobs.status, "pending")))
    .orderBy(asc(jobs.runAt))
    .limit(1);
  return row?.t ?? null;
}

/**
 * The claim's statement: lease up to `limit` due jobs of `kind`, most urgent first (lowest
 * priority), then oldest first. Its row selection is the order index (kind, status, priority,
 * run_at) read in order: no sort, whatever the backlog (test/job-claim-plan.test.ts checks the
 * plan on both engines). Within a priority the due jobs come first (run_at order), so the rows
 * passed over are only the jobs of more urgent priorities waiting for a retry.
 */
export function claimStatement(ctx: Pick<ReadContext, "store" | "db">, input: { kind: string; workerId: string; leaseMs: number; limit: number; now: number }) {
  const { now } = input;
  const due = ctx.db
    .select({ id: jobs.id })
    .from(jobs)
    // `run_at + 0`: a condition no index can take as a range, so that the planner drives the claim
    // by the order index, whose order is the claim's, rather than by a range of the claim index
    // and a sort of every due job (SQLite's choice on a young database without statistics).
    .where(and(eq(jobs.kind, input.kind), eq(jobs.status, "pending"), lte(sql`${jobs.runAt} + 0`, now)))
    .orderBy(asc(jobs.priority), asc(jobs.runAt))
    .limit(input.limit);
  return ctx.db
    .update(jobs)
    .set({ status: "running", attempts: sql`${jobs.attempts} + 1`, leaseUntil: now + input.leaseMs, leasedBy: input.workerId, updatedAt: now })
    // Another instance's claim in progress holds its rows: take the next ones instead of waiting.
    .where(inArray(jobs.id, ctx.store.skipLocked(due)))
    .returning();
}

/**
 * Leases up to `limit` due jobs of one lane, most urgent then oldest first: one UPDATE …
 * RETURNING, a transaction of its own (ONE_STATEMENT: one round trip on PostgreSQL), the same
 * cost at 100 pending jobs or a million. Only pending jobs: a job whose worker died is made
 * pending again by reclaimExpiredLeases, a separate pass. On PostgreSQL the rows are locked FOR
 * UPDATE SKIP LOCKED, so two workers (of any instance) never take the same job and never wait
 * for each other.
 */
export function claimJobs(ctx: ReadContext, input: { kind: string; workerId: string; leaseMs: number; limit: number }): Promise<JobRow[]> {
  return ctx.store.transaction(async () => claimStatement(ctx, { ...input, now: ctx.clock.now() }), ONE_STATEMENT);
}

/** Marks leased jobs done (one UPDATE for all of them, ONE_STATEMENT), except those whose lease passed to another worker meanwhile. */
export function completeJobs(ctx: ReadContext, input: { ids: string[]; workerId: string }): Promise<void> {
  if (input.ids.length === 0) return Promise.resolve();
  return ctx.store.transaction(async () => {
    await ctx.db
      .update(jobs)
      .set({ status: "done", leaseUntil: null, leasedBy: null, lastError: null, updatedAt: ctx.clock.now() })
      .where(and(inArray(jobs.id, input.ids), eq(jobs.leasedBy, input.workerId)));
  }, ONE_STATEMENT);
}

/** A failed attempt: retry at `retryAt`, or dead when that was the last attempt. */
export function failJob(ctx: ReadContext, input: { job: JobRow; workerId: string; error: string; retryAt: number }): Promise<JobStatus> {
  const { job } = input;
  const status: JobStatus = job.attempts >= job.maxAttempts ? "dead" : "pending";
  return ctx.store.transaction(async () => {
    await ctx.db
      .update(jobs)
      .set({ status, runAt: status === "pending" ? input.retryAt : job.runAt, leaseUntil: null, leasedBy: null, lastError: input.error.slice(0, 2000), updatedAt: ctx.clock.now() })
      .where(and(eq(jobs.id, job.id), eq(jobs.leasedBy, input.workerId)));
    return status;
  }, LEASED_ROWS_ONLY);
}

/** When the first lease of a running job ends (null: none running): the first entry of the lease index. */
export async function nextLeaseEnd(ctx: Pick<ReadContext, "db">): Promise<number | null> {
  const [row] = await ctx.db
    .select({ t: jobs.leaseUntil })
    .from(jobs)
    .where(and(eq(jobs.status, "running"), isNotNull(jobs.leaseUntil)))
    .orderBy(asc(jobs.leaseUntil))
    .limit(1);
  return row?.t ?? null;
}

/**
 * Makes up to `limit` jobs whose lease ended (their worker died, or hangs) pending again, at
 * their place in their lane (run_at unchanged); the claim that takes them counts the attempt.
 * A range of the lease index; on PostgreSQL rows another instance holds are skipped.
 */
export function reclaimExpiredLeases(ctx: ReadContext, input: { limit: number }): Promise<number> {
  return ctx.store.transaction(async () => {
    const now = ctx.clock.now();
    const expired = ctx.db
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.status, "running"), lt(jobs.leaseUntil, now)))
      .orderBy(asc(jobs.leaseUntil))
      .limit(input.limit);
    const rows = await ctx.db
      .update(jobs)
      .set({ status: "pending", leaseUntil: null, leasedBy: null, updatedAt: now })
      .where(inArray(jobs.id, ctx.store.skipLocked(expired)))
      .returning({ id: jobs.id });
    return rows.length;
  }, LEASED_ROWS_ONLY);
}

/**
 * Gives leased jobs back on shutdown so they run again at once after restart rather than
 * after their lease; the attempt they were in does not count.
 */
export function releaseLeases(ctx: ReadContext, input: { workerId: string }): Promise<number> {
  return ctx.store.transaction(async () => {
    const now = ctx.clock.now();
    const released = await ctx.db
      .update(jobs)
      .set({
        status: "pending",
        attempts: sql`case when ${jobs.attempts} > 0 then ${jobs.attempts} - 1 else 0 end`,
        leaseUntil: null,
        leasedBy: null,
        runAt: now,
        updatedAt: now,
      })
      .where(and(eq(jobs.status, "running"), eq(jobs.leasedBy, input.workerId)))
      .returning({ id: jobs.id });
    return released.length;
  }, LEASED_ROWS_ONLY);
}

/** One lane as the queue holds it now: how deep, how old its oldest due job, when it last skipped. */
export interface LaneDepth {
  lane: string;
  /** Pending jobs: due, or waiting for a retry. */
  pending: number;
  running: number;
  /** Seconds the oldest due job has waited (0 when none is due). */
  oldestAgeSeconds: number;
  /** When a job of the lane was last skipped (its backlog bound), or null. */
  lastSkippedAt: number | null;
}

/**
 * The depth of each lane, each figure a range of the claim index. `countUpTo` caps the counts
 * (the dashboard needs to know "more than", metrics the exact figure).
 */
export async function laneDepths(ctx: Pick<ReadContext, "db">, input: { kinds: readonly string[]; now: number; countUpTo?: number }): Promise<LaneDepth[]> {
  const counted = async (kind: string, status: JobStatus): Promise<number> => {
    const where = and(eq(jobs.kind, kind), eq(jobs.status, status));
    if (input.countUpTo === undefined) return (await ctx.db.select({ n: count() }).from(jobs).where(where))[0]?.n ?? 0;
    return countUpTo(ctx.db, jobs, where, input.countUpTo);
  };
  const out: LaneDepth[] = [];
  for (const kind of input.kinds) {
    const [pending, running, oldest, skipped] = await Promise.all([
      counted(kind, "pending"),
      counted(kind, "running"),
      ctx.db.select({ t: min(jobs.runAt) }).from(jobs).where(and(eq(jobs.kind, kind), eq(jobs.status, "pending"), lte(jobs.runAt, input.now))),
      ctx.db.select({ t: max(jobs.runAt) }).from(jobs).where(and(eq(jobs.kind, kind), eq(jobs.status, "skipped"))),
    ]);
    const oldestRunAt = oldest[0]?.t ?? null;
    out.push({
      lane: kind,
      pending,
      running,
      oldestAgeSeconds: oldestRunAt === null ? 0 : Math.max(0, (input.now - oldestRunAt) / 1000),
      lastSkippedAt: skipped[0]?.t ?? null,
    });
  }
  return out;
}

/** How many jobs are in each of `statuses` (metrics). */
export async function countJobsByStatus(ctx: Pick<ReadContext, "db">, statuses: JobStatus[]): Promise<Record<string, number>> {
  const rows = await ctx.db.select({ status: jobs.status, n: count() }).from(jobs).where(inArray(jobs.status, statuses)).groupBy(jobs.status);
  const counts: Record<string, number> = Object.fromEntries(statuses.map((s) => [s, 0]));
  for (const r of rows) counts[r.status] = r.n;
  return counts;
}

export const toJobView = (j: JobRow): JobView => ({
  id: j.id,
  kind: j.kind,
  status: j.status,
  attempts: j.attempts,
  maxAttempts: j.maxAttempts,
  runAt: iso(j.runAt),
  lastError: j.lastError,
  payload: JSON.parse(j.payload),
  createdAt: iso(j.createdAt),
  updatedAt: iso(j.updatedAt),
  leaseUntil: isoOrNull(j.leaseUntil),
});

/** The jobs of the context's organization, most recently changed first. */
export async function listJobs(ctx: Pick<DomainContext, "db" | "orgId">, filter: { status?: JobStatus; kind?: string; limit: number }): Promise<JobView[]> {
  const rows = await ctx.db
    .select()
    .from(jobs)
    .where(
      and(
        eq(jobs.orgId, ctx.orgId),
        filter.status ? eq(jobs.status, filter.status) : undefined,
        filter.kind ? eq(jobs.kind, filter.kind) : undefined,
      ),
    )
    .orderBy(desc(jobs.updatedAt))
    .limit(filter.limit);
  return rows.map(toJobView);
}

/** Jobs by status: of one organization, or of the whole installation (metrics) without one. */
export async function queueDepth(ctx: Pick<DomainContext, "db">, input: { orgId?: string } = {}): Promise<Record<JobStatus, number>> {
  const rows = await ctx.db
    .select({ status: jobs.status, n: count() })
    .from(jobs)
    .where(input.orgId === undefined ? undefined : eq(jobs.orgId, input.orgId))
    .groupBy(jobs.status);
  const out: Record<JobStatus, number> = { pending: 0, running: 0, done: 0, dead: 0, skipped: 0, expired: 0 };
  for (const r of rows) out[r.status] = r.n;
  return out;
}

/** Puts a dead, skipped or expired job of the context's organization back in line (an operator's "retry"). */
export function retryDeadJob(ctx: Pick<DomainContext, "store" | "db" | "clock" | "orgId">, jobId: string): Promise<boolean> {
  return transaction(ctx, async () => {
    const now = ctx.clock.now();
    const retried = await ctx.db
      .update(jobs)
      .set({ status: "pending", attempts: 0, runAt: now, lastError: null, updatedAt: now })
      .where(and(eq(jobs.id, jobId), eq(jobs.orgId, ctx.orgId), inArray(jobs.status, ["dead", "skipped", "expired"])))
      .returning({ id: jobs.id, kind: jobs.kind });
    if (retried.length > 0) {
      laneState(ctx.store).enqueued.add(retried[0]!.kind);
      ctx.store.jobEnqueued();
    }
    return retried.length > 0;
  });
}

/** Pending jobs of a lane, counted up to `upTo` (a range of the claim index no longer than that). */
export function pendingUpTo(ctx: Pick<ReadContext, "db">, input: { kind: string; upTo: number }): Promise<number> {
  return countUpTo(ctx.db, jobs, and(eq(jobs.kind, input.kind), eq(jobs.status, "pending")), input.upTo);
}

/**
 * A lane catching up: up to `limit` of its skipped jobs queued again, most urgent first, then the
 * longest skipped first (a range of the order index), due at once. One statement; on PostgreSQL
 * rows another transaction holds are passed over. Answers how many.
 */
export function requeueSkipped(ctx: ReadContext, input: { kind: string; limit: number }): Promise<number> {
  if (input.limit <= 0) return Promise.resolve(0);
  return ctx.store.transaction(async () => {
    const now = ctx.clock.now();
    const next = ctx.db
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.kind, input.kind), eq(jobs.status, "skipped")))
      .orderBy(asc(jobs.priority), asc(jobs.runAt))
      .limit(input.limit);
    const rows = await ctx.db
      .update(jobs)
      .set({ status: "pending", runAt: now, lastError: null, updatedAt: now })
      .where(inArray(jobs.id, ctx.store.skipLocked(next)))
      .returning({ id: jobs.id });
    if (rows.length > 0) {
      laneState(ctx.store).enqueued.add(input.kind);
      ctx.store.jobEnqueued();
    }
    return rows.length;
  }, LEASED_ROWS_ONLY);
}

/**
 * Up to `limit` skipped jobs of a lane, skipped before `skippedBefore` (their run_at: a range of
 * the claim index), marked expired with `reason`. Answers how many.
 */
export function expireSkipped(ctx: ReadContext, input: { kind: string; skippedBefore: number; reason: string; limit: number }): Promise<number> {
  return ctx.store.transaction(async () => {
    const now = ctx.clock.now();
    const old = ctx.db
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.kind, input.kind), eq(jobs.status, "skipped"), lt(jobs.runAt, input.skippedBefore)))
      .orderBy(asc(jobs.runAt))
      .limit(input.limit);
    const rows = await ctx.db
      .update(jobs)
      .set({ status: "expired", lastError: input.reason, updatedAt: now })
      .where(inArray(jobs.id, ctx.store.skipLocked(old)))
      .returning({ id: jobs.id });
    return rows.length;
  }, LEASED_ROWS_ONLY);
}
