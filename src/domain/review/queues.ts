/**
 * Review queues (issue 15): an organization's open cases are split among its queues, each with
 * an ordering and the people who may work it.
 *
 * Exactly one queue per case: `cases.queue_id` names the case's queue, and null means the
 * organization's default queue. So a case is always in one queue (its named one, or the
 * default), with no row to keep in step. The default queue is created on first need
 * (`defaultQueue`), there is exactly one (`is_default = 1`); making another queue the default
 * first pins the cases that were in the old default (null) to the old default's id, so moving
 * the flag moves no case. The default cannot be deleted; deleting another queue moves its
 * cases to the default queue (the open ones audited one by one, CASE_QUEUE_CHANGED).
 *
 * Access: who may work a queue, and so see its cases, is src/domain/access/queue-access.ts (the one
 * check). Routing (a case changing queue without a moderator) never widens it: see
 * `moveCaseToQueue`; nor does deleting a queue: see `deleteQueue`.
 */
import { and, asc, desc, eq, inArray, isNull, ne, or, sql, type SQL } from "drizzle-orm";
import { countUpTo } from "../../db/count-up-to.ts";
import { param, statements } from "../../db/prepared.ts";
import { cases, queues, users } from "../../db/schema.ts";
import { TransactionConflict } from "../../db/store.ts";
import { recordAudit } from "../core/audit.ts";
import { requireCase, type CaseRow } from "../cases/cases.ts";
import { iso } from "../core/clock.ts";
import { rowLockedTransaction, transaction, type DomainContext } from "../core/context.ts";
import { badRequest, conflict, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { requireProject } from "../accounts/projects.ts";
import { accessNoWider, accessOf, caseAccess, caseInQueues, casesOfLiveProjects, listableCases, mayWorkQueueOf, notReviewedBlind, type AccessContext } from "../access/queue-access.ts";
import {
  QUEUE_ORDERINGS,
  type QueueAccess,
  type QueueCreateInput,
  type QueueOrdering,
  type QueuePatchInput,
  type QueueViewRow,
} from "../views/queue.ts";
import { ROLES, type Role } from "../views/user.ts";

export type QueueRow = typeof queues.$inferSelect;
export type { QueueViewRow } from "../views/queue.ts";

/** A case's place among the queue's segments (QUEUE_SEGMENTS, src/domain/dashboard/dashboard.ts), as SQL (bucket emergency, high, normal; trusted first within each). */
export const segmentSql = sql<number>`(case ${cases.bucket} when 'emergency' then 0 when 'high' then 2 else 4 end + case when ${cases.trustedFlagged} = 1 then 0 else 1 end)`;

/** A queue's order as ORDER BY terms (total: the id breaks ties): what the queue page shows and review mode (review-mode.ts) takes from. */
export function queueOrder(ordering: QueueOrdering): SQL[] {
  if (ordering === "priority") return [desc(cases.priority), asc(segmentSql), asc(cases.createdAt), asc(cases.id)];
  if (ordering === "age") return [asc(cases.createdAt), asc(cases.id)];
  return [asc(segmentSql), asc(cases.createdAt), asc(cases.id)];
}

/**
 * Lookups a rule's route effect makes inside report intake: kept prepared (src/db/prepared.ts),
 * without `limit` (each gives at most one row; SQLite runs a bound `limit ?` several times slower
 * than such a lookup).
 */
const queueStatements = statements((db) => ({
  byId: db
    .select()
    .from(queues)
    .where(and(eq(queues.id, sql.placeholder("id")), eq(queues.orgId, sql.placeholder("orgId"))))
    .prepare(),
  theDefault: db
    .select()
    .from(queues)
    .where(and(eq(queues.orgId, sql.placeholder("orgId")), sql`${queues.isDefault} = 1`))
    .prepare(),
  /** A queue and the organization's default, in one read (the default may be the queue itself). */
  withDefault: db
    .select()
    .from(queues)
    .where(and(eq(queues.orgId, sql.placeholder("orgId")), or(eq(queues.id, sql.placeholder("id")), sql`${queues.isDefault} = 1`)))
    .prepare(),
  setCaseQueue: db.update(cases).set({ queueId: param("queueId") }).where(eq(cases.id, sql.placeholder("caseId"))).prepare(),
}));

const DEFAULT_QUEUE_NAME = "Default";

type Reader = Pick<DomainContext, "db" | "orgId">;
/** What the queue reads that may create the default queue need, and who is asking. */
type QueueReader = Pick<DomainContext, "db" | "orgId" | "clock" | "store"> & AccessContext;

export const orderingOf = (q: Pick<QueueRow, "ordering">): QueueOrdering =>
  (QUEUE_ORDERINGS as readonly string[]).includes(q.ordering) ? (q.ordering as QueueOrdering) : "severity_age";

/** The organization's queues, the default first, then by name. */
export async function listQueueRows(ctx: Reader): Promise<QueueRow[]> {
  return ctx.db.select().from(queues).where(eq(queues.orgId, ctx.orgId)).orderBy(sql`${queues.isDefault} desc`, asc(queues.name));
}

/** The organization's default queue, created when it has none yet (its first need). */
export async function defaultQueue(ctx: Pick<DomainContext, "db" | "orgId" | "clock" | "store">): Promise<QueueRow> {
  const [found] = await queueStatements(ctx.db).theDefault.execute({ orgId: ctx.orgId });
  if (found) return found;
  return transaction(ctx, async () => {
    const [again] = await queueStatements(ctx.db).theDefault.execute({ orgId: ctx.orgId });
    if (again) return again;
    // A queue may already be called "Default" without being the default: take the next free name.
    const taken = new Set((await ctx.db.select({ name: queues.name }).from(queues).where(eq(queues.orgId, ctx.orgId))).map((r) => r.name));
    let name = DEFAULT_QUEUE_NAME;
    for (let i = 2; taken.has(name); i++) name = `${DEFAULT_QUEUE_NAME} ${i}`;
    const now = ctx.clock.now();
    const row: QueueRow = {
      id: newId(),
      orgId: ctx.orgId,
      projectId: null,
      name,
      description: "Where every case no rule routes elsewhere goes",
      ordering: "severity_age",
      isDefault: 1,
      access: JSON.stringify({ users: [], roles: [] }),
      firstReviewTargetMinutes: null,
      decisionTargetMinutes: null,
      samplePercent: 0,
      alwaysSample: "none",
      createdAt: now,
      updatedAt: now,
    };
    // Two first needs at once (instances side by side): one inserts, the other's insert waits
    // for it and does nothing (queues_org_default_idx), then finds it.
    const inserted = await ctx.db.insert(queues).values(row).onConflictDoNothing().returning({ id: queues.id });
    if (inserted.length) return row;
    const [made] = await queueStatements(ctx.db).theDefault.execute({ orgId: ctx.orgId });
    if (made) return made;
    // The name was taken meanwhile by another queue: choose again.
    throw new TransactionConflict("a queue took the default queue's name meanwhile");
  });
}

/**
 * The queues something of `projectId` routes to (a rule's effects, a media bank's action), each
 * named with the path of its field: each must be one of the caller's organization's, and of
 * `projectId` when the queue has a project, else a 400 naming the field. `owner` names what
 * routes there ("rule", "bank") in that message.
 */
export async function checkRouteQueues(ctx: Reader, named: readonly { path: string; queueId: string }[], projectId: string | null, owner: string): Promise<void> {
  if (!named.length) return;
  const found = await ctx.db
    .select({ id: queues.id, projectId: queues.projectId })
    .from(queues)
    .where(and(eq(queues.orgId, ctx.orgId), inArray(queues.id, [...new Set(named.map((n) => n.queueId))])));
  const byId = new Map(found.map((q) => [q.id, q]));
  for (const { path, queueId } of named) {
    const q = byId.get(queueId);
    if (!q) throw badRequest(`${path}: no such queue in this organization`);
    if (q.projectId && q.projectId !== projectId) throw badRequest(`${path}: the queue belongs to another project than the ${owner}'s`);
  }
}

/** A queue of the caller's organization, else 404. */
export async function requireQueue(ctx: Reader, queueId: string): Promise<QueueRow> {
  const [row] = await queueStatements(ctx.db).byId.execute({ id: queueId, orgId: ctx.orgId });
  if (!row) throw notFound("Queue not found");
  return row;
}

/** What a queue's view counts of its open cases: how many, and when the oldest opened. */
export interface OpenCases {
  n: number;
  oldestAt: number | null;
}
const NO_OPEN_CASES: OpenCases = { n: 0, oldestAt: null };

/** Open cases per queue id (the default queue's figures include the cases with no queue; a project being deleted has none). */
async function openCounts(ctx: QueueReader, defaultId: string): Promise<Map<string, OpenCases>> {
  const rows = await ctx.db
    .select({ queueId: cases.queueId, n: sql<number>`count(*)`, oldestAt: sql<number | null>`min(${cases.createdAt})` })
    .from(cases)
    .where(and(eq(cases.orgId, ctx.orgId), eq(cases.isOpen, 1), await casesOfLiveProjects(ctx)))
    .groupBy(cases.queueId);
  const out = new Map<string, OpenCases>();
  for (const r of rows) {
    const id = r.queueId ?? defaultId;
    const was = out.get(id) ?? NO_OPEN_CASES;
    const oldestAt = r.oldestAt === null ? was.oldestAt : Math.min(Number(r.oldestAt), was.oldestAt ?? Infinity);
    out.set(id, { n: was.n + Number(r.n), oldestAt });
  }
  return out;
}

export function toQueueView(q: QueueRow, open: OpenCases = NO_OPEN_CASES): QueueViewRow {
  return {
    id: q.id,
    name: q.name,
    description: q.description,
    projectId: q.projectId,
    ordering: orderingOf(q),
    isDefault: q.isDefault === 1,
    access: accessOf(q),
    openCases: open.n,
    oldestOpenCaseAt: open.oldestAt === null ? null : iso(open.oldestAt),
    firstReviewTargetMinutes: q.firstReviewTargetMinutes,
    decisionTargetMinutes: q.decisionTargetMinutes,
    samplePercent: q.samplePercent,
    alwaysSample: q.alwaysSample,
    createdAt: iso(q.createdAt),
    updatedAt: iso(q.updatedAt),
  };
}

/**
 * The organization's queues the caller may work, with their open counts (the default queue is
 * created if missing): a queue the caller may not work is not listed (queue access).
 */
export async function listQueues(ctx: QueueReader): Promise<QueueViewRow[]> {
  const def = await defaultQueue(ctx);
  const [rows, counts] = await Promise.all([workableQueueRows(ctx), openCounts(ctx, def.id)]);
  return rows.map((q) => toQueueView(q, counts.get(q.id)));
}

/** The queues of the organization the caller may work (the default made on first need by the callers). */
async function workableQueueRows(ctx: QueueReader): Promise<QueueRow[]> {
  const [rows, access] = await Promise.all([listQueueRows(ctx), caseAccess(ctx)]);
  return rows.filter((q) => mayWorkQueueOf(access, q.id));
}

/** A queue in the queue page's picker: what it shows of it. */
export interface QueuePick {
  id: string;
  name: string;
  isDefault: boolean;
  ordering: QueueOrdering;
  /** Open cases, counted up to the caller's `upTo`: `upTo + 1` means more than that. */
  openCases: number;
}

/**
 * The queues the caller may work, each with its open cases counted up to `upTo` (countUpTo): the
 * queue page's picker, asked at every poll of the page. `listQueues` counts them exactly (the
 * queues page, asked once), which is a scan of every open case.
 */
export async function pickableQueues(ctx: QueueReader, upTo: number): Promise<QueuePick[]> {
  await defaultQueue(ctx); // made on first need, as listQueues does
  const picks: QueuePick[] = [];
  const live = await casesOfLiveProjects(ctx);
  for (const q of await workableQueueRows(ctx)) {
    // The default queue's cases include those with no queue (null), as in openCounts.
    const inQueue = q.isDefault === 1 ? or(isNull(cases.queueId), eq(cases.queueId, q.id)) : eq(cases.queueId, q.id);
    const openCases = await countUpTo(ctx.db, cases, and(eq(cases.orgId, ctx.orgId), eq(cases.isOpen, 1), inQueue, live), upTo + 1);
    picks.push({ id: q.id, name: q.name, isDefault: q.isDefault === 1, ordering: orderingOf(q), openCases });
  }
  return picks;
}

/** A queue the caller may work, with its open count (404 for one the caller may not work, as if absent). */
export async function getQueue(ctx: QueueReader, input: { queueId: string }): Promise<QueueViewRow> {
  const def = await defaultQueue(ctx);
  const q = await requireWorkableQueue(ctx, input.queueId);
  const counts = await openCounts(ctx, def.id);
  return toQueueView(q, counts.get(q.id));
}

/** A queue of the caller's organization that the caller may work, else 404. */
async function requireWorkableQueue(ctx: AccessContext, queueId: string): Promise<QueueRow> {
  const q = await requireQueue(ctx, queueId);
  if (!mayWorkQueueOf(await caseAccess(ctx), q.id)) throw notFound("Queue not found");
  return q;
}

async function assertNameFree(ctx: Reader, name: string, exceptId?: string): Promise<void> {
  const [clash] = await ctx.db
    .select({ id: queues.id })
    .from(queues)
    .where(and(eq(queues.orgId, ctx.orgId), eq(queues.name, name), exceptId ? ne(queues.id, exceptId) : undefined))
    .limit(1);
  if (clash) throw conflict(`A queue named "${name}" already exists in this organization`);
}

/** Access lists name users of the organization only (400 otherwise); stored without repeats. */
async function checkedAccess(ctx: Reader, access: QueueAccess): Promise<QueueAccess> {
  const ids = [...new Set(access.users)];
  if (ids.length) {
    const found = await ctx.db.select({ id: users.id }).from(users).where(and(eq(users.orgId, ctx.orgId), inArray(users.id, ids)));
    const known = new Set(found.map((r) => r.id));
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length) throw badRequest(`access.users: no such user in this organization: ${unknown.slice(0, 5).join(", ")}`);
  }
  return { users: ids, roles: [...new Set(access.roles)] };
}

/** Makes `q` the default: the old default's cases (null queue) are pinned to it first, so nothing moves. */
async function moveDefaultFlag(ctx: DomainContext, to: QueueRow): Promise<void> {
  const old = await defaultQueue(ctx);
  if (old.id === to.id) return;
  await ctx.db.update(cases).set({ queueId: old.id }).where(and(eq(cases.orgId, ctx.orgId), isNull(cases.queueId)));
  await ctx.db.update(queues).set({ isDefault: 0, updatedAt: ctx.clock.now() }).where(eq(queues.id, old.id));
  await ctx.db.update(queues).set({ isDefault: 1, updatedAt: ctx.clock.now() }).where(eq(queues.id, to.id));
  // The new default's cases may now read as null again (both forms mean the default queue).
  await recordAudit(ctx, { action: "QUEUE_UPDATED", entityType: "queue", entityId: old.id, before: { isDefault: true }, after: { isDefault: false } });
}

export async function createQueue(ctx: DomainContext, input: QueueCreateInput): Promise<QueueViewRow> {
  return transaction(ctx, async () => {
    await defaultQueue(ctx);
    await assertNameFree(ctx, input.name);
    if (input.projectId) await requireProject(ctx, input.projectId);
    const access = await checkedAccess(ctx, input.access ?? { users: [], roles: [] });
    const now = ctx.clock.now();
    const row: QueueRow = {
      id: newId(),
      orgId: ctx.orgId,
      projectId: input.projectId ?? null,
      name: input.name,
      description: input.description || null,
      ordering: input.ordering ?? "severity_age",
      isDefault: 0,
      access: JSON.stringify(access),
      firstReviewTargetMinutes: input.firstReviewTargetMinutes ?? null,
      decisionTargetMinutes: input.decisionTargetMinutes ?? null,
      samplePercent: input.samplePercent ?? 0,
      alwaysSample: input.alwaysSample ?? "none",
      createdAt: now,
      updatedAt: now,
    };
    await ctx.db.insert(queues).values(row);
    if (input.isDefault) {
      await moveDefaultFlag(ctx, row);
      row.isDefault = 1;
    }
    const view = toQueueView(row);
    await recordAudit(ctx, { projectId: row.projectId, action: "QUEUE_CREATED", entityType: "queue", entityId: row.id, after: view });
    return view;
  });
}

export async function updateQueue(ctx: DomainContext, input: { queueId: string } & QueuePatchInput): Promise<QueueViewRow> {
  return transaction(ctx, async () => {
    const q = await requireQueue(ctx, input.queueId);
    const before = toQueueView(q);
    const set: Partial<QueueRow> = {};
    if (input.name !== undefined && input.name !== q.name) {
      await assertNameFree(ctx, input.name, q.id);
      set.name = input.name;
    }
    if (input.description !== undefined) set.description = input.description || null;
    if (input.projectId !== undefined) {
      if (input.projectId) await requireProject(ctx, input.projectId);
      set.projectId = input.projectId;
    }
    if (input.ordering !== undefined) set.ordering = input.ordering;
    if (input.access !== undefined) set.access = JSON.stringify(await checkedAccess(ctx, input.access));
    if (input.firstReviewTargetMinutes !== undefined) set.firstReviewTargetMinutes = input.firstReviewTargetMinutes;
    if (input.decisionTargetMinutes !== undefined) set.decisionTargetMinutes = input.decisionTargetMinutes;
    if (input.samplePercent !== undefined) set.samplePercent = input.samplePercent;
    if (input.alwaysSample !== undefined) set.alwaysSample = input.alwaysSample;
    if (input.isDefault && q.isDefault !== 1) {
      await moveDefaultFlag(ctx, q);
      set.isDefault = 1;
    }
    const next: QueueRow = { ...q, ...set };
    if (Object.keys(set).length) {
      next.updatedAt = ctx.clock.now();
      await ctx.db.update(queues).set({ ...set, updatedAt: next.updatedAt }).where(eq(queues.id, q.id));
      const after = toQueueView(next);
      const changed = (Object.keys(after) as (keyof QueueViewRow)[]).filter((k) => k !== "updatedAt" && JSON.stringify(after[k]) !== JSON.stringify(before[k]));
      if (changed.length) {
        await recordAudit(ctx, {
          projectId: next.projectId,
          action: "QUEUE_UPDATED",
          entityType: "queue",
          entityId: q.id,
          before: Object.fromEntries(changed.map((k) => [k, before[k]])),
          after: Object.fromEntries(changed.map((k) => [k, after[k]])),
        });
      }
    }
    const def = await defaultQueue(ctx);
    const counts = await openCounts(ctx, def.id);
    return toQueueView(next, counts.get(q.id));
  });
}

/** What deleting a queue answers: how many of its cases moved, open and closed, and where to. */
export interface QueueDeleted {
  movedCases: number;
  movedClosedCases: number;
  /** The queue that now holds them (the default queue unless the request named another). */
  to: string;
}

/**
 * Deletes a queue (never the default: 409). Every case of the queue, open or closed, moves to
 * `targetQueueId`, else to the default queue, and each move is audited (CASE_QUEUE_CHANGED,
 * reason queue_deleted): no case names a queue that is gone, and none moves unrecorded.
 *
 * Deleting never widens who may see a case (as routing never does, moveCaseToQueue): a queue
 * with an access list that holds cases is refused (409) unless the request names the queue its
 * cases go to, and a target whose access is wider than the deleted queue's (`accessNoWider`) is
 * refused (409) whenever there is a case to move. Without an access list, any target will do.
 */
export async function deleteQueue(ctx: DomainContext, input: { queueId: string; targetQueueId?: string }): Promise<QueueDeleted> {
  return transaction(ctx, async () => {
    const q = await requireQueue(ctx, input.queueId);
    if (q.isDefault === 1) throw conflict("The default queue cannot be deleted; make another queue the default first");
    const held = await ctx.db
      .select({ id: cases.id, projectId: cases.projectId, isOpen: cases.isOpen })
      .from(cases)
      .where(and(eq(cases.orgId, ctx.orgId), eq(cases.queueId, q.id)));
    const target = await deletionTarget(ctx, q, held, input.targetQueueId);
    await ctx.db
      .update(cases)
      .set({ queueId: target.isDefault === 1 ? null : target.id })
      .where(and(eq(cases.orgId, ctx.orgId), eq(cases.queueId, q.id)));
    for (const c of held) {
      await recordAudit(ctx, {
        projectId: c.projectId,
        action: "CASE_QUEUE_CHANGED",
        entityType: "case",
        entityId: c.id,
        before: { queueId: q.id },
        after: { queueId: target.id },
        data: { reason: "queue_deleted" },
      });
    }
    await ctx.db.delete(queues).where(eq(queues.id, q.id));
    const open = held.filter((c) => c.isOpen === 1).length;
    const done: QueueDeleted = { movedCases: open, movedClosedCases: held.length - open, to: target.id };
    await recordAudit(ctx, { projectId: q.projectId, action: "QUEUE_DELETED", entityType: "queue", entityId: q.id, before: toQueueView(q, { n: open, oldestAt: null }), data: { ...done } });
    return done;
  });
}

/** Where a deleted queue's cases go (see deleteQueue): the queue named, else the default; refusals first. */
async function deletionTarget(ctx: DomainContext, q: QueueRow, held: readonly { projectId: string }[], targetQueueId: string | undefined): Promise<QueueRow> {
  if (targetQueueId === q.id) throw badRequest("targetQueueId: the queue being deleted cannot take its own cases");
  const access = accessOf(q);
  const restricted = access.users.length > 0 || access.roles.length > 0;
  if (targetQueueId === undefined && restricted && held.length > 0) {
    throw conflict(
      `The queue "${q.name}" has an access list and holds ${held.length} case${held.length === 1 ? "" : "s"} (open and closed): name the queue they go to (targetQueueId), one whose access is no wider`,
    );
  }
  let target: QueueRow;
  if (targetQueueId === undefined) {
    target = await defaultQueue(ctx);
  } else {
    const [found] = await queueStatements(ctx.db).byId.execute({ id: targetQueueId, orgId: ctx.orgId });
    if (!found) throw notFound("Target queue not found");
    target = found;
  }
  if (held.length === 0) return target;
  if (target.projectId && held.some((c) => c.projectId !== target.projectId)) {
    throw badRequest(`targetQueueId: "${target.name}" is for another project than some of the cases of "${q.name}"`);
  }
  if (!(await routeKeepsAccess(ctx, target, q))) {
    throw conflict(`targetQueueId: "${target.name}" may be worked by people who may not work "${q.name}": its cases would be shown to them. Name a queue whose access is no wider`);
  }
  return target;
}

/** The id of the queue a case is in (its own, else the default's). */
export const queueIdOfCase = (c: Pick<CaseRow, "queueId">, defaultId: string): string => c.queueId ?? defaultId;

export interface MoveCaseInput {
  caseId: string;
  queueId: string;
  /** The case as a caller of the same organization holds it (intake has just written it): not read again. */
  caseRow?: CaseRow;
}

/**
 * Moves a case to a queue (audited CASE_QUEUE_CHANGED with from/to, naming the rule when a
 * rule did it: DomainContext.automation). A queue of another project than the case's is a 400;
 * a case already there is left as is (no event). Runs in the caller's transaction when there is
 * one. Every refusal comes before the first write, so a rule's move (inside report intake, the
 * hot path) takes no savepoint of its own: a refused move leaves nothing to roll back.
 *
 * Moving never widens who may see a case (docs/rules.md, "Routing and access"):
 * - a moderator moves a case they may work, and only into a queue they may work (404 otherwise,
 *   as for a queue that does not exist);
 * - a rule routes a case freely while the case holds only the report that opened it (at that
 *   report's intake and enrichment); once a second report joined it, a rule routes it only
 *   into a queue whose access is no wider than its current queue's (`accessNoWider`), and a
 *   wider route is not taken, audited CASE_ROUTE_REFUSED. So a report anyone can send (a
 *   publishable key ships in client apps) cannot move a case out of a restricted queue.
 */
export async function moveCaseToQueue(ctx: DomainContext, input: MoveCaseInput): Promise<{ changed: boolean; queueId: string }> {
  return ctx.automation ? moveCase(ctx, input) : rowLockedTransaction(ctx, () => moveCase(ctx, input));
}

async function moveCase(ctx: DomainContext, input: MoveCaseInput): Promise<{ changed: boolean; queueId: string }> {
  const c = await requireCase(ctx, input.caseId, input.caseRow, { lock: true });
  const found = await queueStatements(ctx.db).withDefault.execute({ orgId: ctx.orgId, id: input.queueId });
  const target = found.find((q) => q.id === input.queueId);
  if (!target || !mayWorkQueueOf(await caseAccess(ctx), target.id)) throw notFound("Queue not found");
  if (target.projectId && target.projectId !== c.projectId) throw badRequest("queueId: this queue is for another project than the case's");
  const def = found.find((q) => q.isDefault === 1) ?? (await defaultQueue(ctx));
  const from = queueIdOfCase(c, def.id);
  if (from === target.id) return { changed: false, queueId: from };
  if (ctx.automation && c.reportCount > 1) {
    const current = from === def.id ? def : await requireQueue(ctx, from);
    if (!(await routeKeepsAccess(ctx, target, current))) {
      await recordAudit(ctx, {
        projectId: c.projectId,
        action: "CASE_ROUTE_REFUSED",
        entityType: "case",
        entityId: c.id,
        data: { queueId: from, refusedQueueId: target.id, reason: "wider_access" },
      });
      return { changed: false, queueId: from };
    }
  }
  await queueStatements(ctx.db).setCaseQueue.execute({ caseId: c.id, queueId: target.isDefault === 1 ? null : target.id });
  await recordAudit(ctx, {
    projectId: c.projectId,
    action: "CASE_QUEUE_CHANGED",
    entityType: "case",
    entityId: c.id,
    before: { queueId: from },
    after: { queueId: target.id },
  });
  return { changed: true, queueId: target.id };
}

/** Whether routing a case from `current` into `target` keeps who may work it the same or narrower. */
async function routeKeepsAccess(ctx: Reader, target: QueueRow, current: QueueRow): Promise<boolean> {
  const wanted = accessOf(target);
  const named = wanted.users.length
    ? await ctx.db.select({ id: users.id, role: users.role }).from(users).where(and(eq(users.orgId, ctx.orgId), inArray(users.id, wanted.users)))
    : [];
  const roles = new Map(named.map((u) => [u.id, (ROLES as readonly string[]).includes(u.role) ? (u.role as Role) : "viewer"] as const));
  return accessNoWider(wanted, accessOf(current), (userId) => roles.get(userId));
}

/**
 * The cases of the queue `queueId` the caller may work (404 for a queue of another
 * organization or one the caller may not work), or of every queue the caller may work when
 * no queue is named (undefined: no bound). Answers the queue's ordering too.
 */
export async function queueScope(ctx: QueueReader, queueId: string | undefined): Promise<{ where: SQL | undefined; ordering: QueueOrdering }> {
  if (!queueId) return { where: await listableCases(ctx), ordering: "severity_age" };
  const q = await requireWorkableQueue(ctx, queueId);
  const def = await defaultQueue(ctx);
  return { where: and(caseInQueues([q.id], def.id), await casesOfLiveProjects(ctx), await notReviewedBlind(ctx)), ordering: orderingOf(q) };
}
