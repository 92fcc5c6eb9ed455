/**
 * Queue access: which cases a dashboard user may see and work. The one check (issue 24).
 *
 * A queue's access list is `{ users, roles }`, both empty = everyone in the organization; admins
 * may always work every queue, and so may the platform (API keys), the system (jobs, the
 * scheduler) and rules while they act (`DomainContext.automation`). A case is in one queue (its
 * `queue_id`, null for the organization's default queue).
 *
 * Everything of a case (its reports, notes, tags, analyses, rule hits, enforcement actions and
 * their statements, appeals and audit events) is the case's: a user who may not work its queue
 * gets none of it, from any procedure, "as if it did not exist": lookups by id answer 404
 * (`assertMayWorkCase`, called by requireCase, requireReport, requireAction and requireAppeal,
 * so no caller can forget it), lists and counts leave it out (`workableCases`,
 * `caseIdIsWorkable`), and organization-wide figures and logs that cannot be split by queue
 * (webhook deliveries, the transparency report) need access to every queue
 * (`requireEveryQueue`). test/queue-access.test.ts calls every procedure of the router as such a
 * user and fails on any leak.
 *
 * The answer is read once per actor (a request's caller: one query for the user's role, one for
 * the organization's queues) and kept for that actor object, which lives as long as its request.
 */
import { and, eq, inArray, isNull, notInArray, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { appeals, auditEvents, cases, contentAnalyses, enforcementActions, qualityReviews, queues, reports, users } from "../../db/schema.ts";
import type { DomainContext } from "../core/context.ts";
import { forbidden, notFound } from "../core/errors.ts";
import { queueAccessSchema, type QueueAccess } from "../views/queue.ts";
import { hasRole, ROLES, type Role } from "../views/user.ts";
import type { EntityType } from "../views/audit.ts";
import type { Actor } from "../views/common.ts";

/** What the access checks read: without an actor (an internal read) every queue is workable. */
export type AccessContext = Pick<DomainContext, "db" | "orgId"> & { actor?: Actor; automation?: DomainContext["automation"] };

/** The queues a caller may work: every one, or these (and whether the default queue is among them). */
export type CaseAccess = { all: true } | { all: false; queueIds: ReadonlySet<string>; defaultQueueId: string | null };

const EVERY_QUEUE: CaseAccess = { all: true };

/** A stored access list read back (a malformed one reads as everyone, which the writers never store). */
export function accessOf(q: { access: string }): QueueAccess {
  try {
    const parsed = queueAccessSchema.safeParse(JSON.parse(q.access));
    if (parsed.success) return parsed.data;
  } catch {
    // fall through
  }
  return { users: [], roles: [] };
}

/** Whether a user of `role` may work a queue with this access list. */
export function mayWork(q: { access: string }, userId: string, role: Role): boolean {
  if (hasRole(role, "admin")) return true;
  const a = accessOf(q);
  if (!a.users.length && !a.roles.length) return true;
  return a.users.includes(userId) || a.roles.includes(role);
}

/**
 * Whether everyone who may work a queue with access `target` may also work one with `current`
 * (admins aside, who work every queue): routing a case from `current` into `target` then shows
 * it to nobody new. `roleOf` gives the role of a user `target` names (undefined: no such user).
 */
export function accessNoWider(target: QueueAccess, current: QueueAccess, roleOf: (userId: string) => Role | undefined): boolean {
  const everyone = (a: QueueAccess) => !a.users.length && !a.roles.length;
  if (everyone(current)) return true;
  if (everyone(target)) return false;
  const mayWorkCurrent = (role: Role) => hasRole(role, "admin") || current.roles.includes(role);
  if (!target.roles.every(mayWorkCurrent)) return false;
  return target.users.every((userId) => {
    const role = roleOf(userId);
    return current.users.includes(userId) || role === undefined || mayWorkCurrent(role);
  });
}

const memo = new WeakMap<Actor, Promise<CaseAccess>>();

/** The queues the caller may work (see the module's comment for who may work them all). */
export function caseAccess(ctx: AccessContext): Promise<CaseAccess> {
  const actor = ctx.actor;
  if (!actor || actor.type !== "user" || !actor.id || ctx.automation) return Promise.resolve(EVERY_QUEUE);
  let known = memo.get(actor);
  if (!known) {
    known = readAccess(ctx, actor.id);
    memo.set(actor, known);
  }
  return known;
}

async function readAccess(ctx: AccessContext, userId: string): Promise<CaseAccess> {
  const [[user], rows] = await Promise.all([
    ctx.db.select({ role: users.role }).from(users).where(and(eq(users.id, userId), eq(users.orgId, ctx.orgId))).limit(1),
    ctx.db.select({ id: queues.id, access: queues.access, isDefault: queues.isDefault }).from(queues).where(eq(queues.orgId, ctx.orgId)),
  ]);
  const role: Role = user && (ROLES as readonly string[]).includes(user.role) ? (user.role as Role) : "viewer";
  if (hasRole(role, "admin")) return EVERY_QUEUE;
  const workable = rows.filter((q) => mayWork(q, userId, role));
  if (workable.length === rows.length) return EVERY_QUEUE;
  return { all: false, queueIds: new Set(workable.map((q) => q.id)), defaultQueueId: rows.find((q) => q.isDefault === 1)?.id ?? null };
}

/** Whether user `userId` (of `role`) may work the queue a case is in (null: the default queue). */
export async function userMayWorkQueueOf(ctx: Pick<DomainContext, "db" | "orgId">, user: { id: string; role: string }, queueId: string | null): Promise<boolean> {
  const role: Role = (ROLES as readonly string[]).includes(user.role) ? (user.role as Role) : "viewer";
  const [q] = await ctx.db
    .select({ access: queues.access })
    .from(queues)
    .where(and(eq(queues.orgId, ctx.orgId), queueId === null ? eq(queues.isDefault, 1) : eq(queues.id, queueId)))
    .limit(1);
  // No default queue yet: it starts open to everyone.
  return !q || mayWork(q, user.id, role);
}

/** Whether a case in queue `queueId` (null: the default queue) is workable under `access`. */
export function mayWorkQueueOf(access: CaseAccess, queueId: string | null): boolean {
  if (access.all) return true;
  // No default queue yet: it will be made open to everyone, as every default queue starts.
  if (queueId === null) return access.defaultQueueId === null || access.queueIds.has(access.defaultQueueId);
  return access.queueIds.has(queueId);
}

/**
 * The one check of a case's things looked up by id: a 404 saying `what` is not found (the same
 * answer as for another organization's) when the caller may not work the case's queue.
 */
export async function assertMayWorkCase(ctx: AccessContext, c: { queueId: string | null }, what = "Case"): Promise<void> {
  if (!mayWorkQueueOf(await caseAccess(ctx), c.queueId)) throw notFound(`${what} not found`);
}

/** Whether the caller may work the case (assertMayWorkCase without the throw). */
export async function mayWorkCase(ctx: AccessContext, c: { queueId: string | null }): Promise<boolean> {
  return mayWorkQueueOf(await caseAccess(ctx), c.queueId);
}

/** The case (by id) of a thing looked up by id, checked: a thing of no case is everyone's. */
export async function assertMayWorkCaseId(ctx: AccessContext, caseId: string | null, what: string): Promise<void> {
  const access = await caseAccess(ctx);
  if (access.all || caseId === null) return;
  const [c] = await ctx.db.select({ queueId: cases.queueId }).from(cases).where(and(eq(cases.id, caseId), eq(cases.orgId, ctx.orgId))).limit(1);
  if (!c || !mayWorkQueueOf(access, c.queueId)) throw notFound(`${what} not found`);
}

/** The SQL condition on `cases` "in a queue of `queueIds`" (the default queue's also covers null). */
export function caseInQueues(queueIds: readonly string[], defaultQueueId: string | null): SQL {
  const named = queueIds.length ? inArray(cases.queueId, [...queueIds]) : sql`1 = 0`;
  return defaultQueueId === null || queueIds.includes(defaultQueueId) ? (or(isNull(cases.queueId), named) as SQL) : named;
}

/** The SQL condition on `cases` "the caller may work it" (undefined: every case). */
export async function workableCases(ctx: AccessContext): Promise<SQL | undefined> {
  const access = await caseAccess(ctx);
  if (access.all) return undefined;
  return caseInQueues([...access.queueIds], access.defaultQueueId);
}

/**
 * The cases the caller has taken a blind second review of and not submitted yet (docs/quality.md).
 * Until they submit, the case shows them only as the review does (blindCase): its case page is
 * refused, the audit log leaves out its events and the lists leave it out (listableCases), as
 * each would tell the first decision.
 */
export async function casesUnderBlindReview(ctx: AccessContext): Promise<string[]> {
  if (ctx.actor?.type !== "user" || !ctx.actor.id) return [];
  const rows = await ctx.db
    .select({ caseId: qualityReviews.caseId })
    .from(qualityReviews)
    .where(and(eq(qualityReviews.orgId, ctx.orgId), eq(qualityReviews.reviewerId, ctx.actor.id), isNull(qualityReviews.secondDecidedAt)));
  return rows.map((r) => r.caseId);
}

/**
 * The SQL condition on `cases` "the caller may see it in a list" (undefined: every case): a case
 * they may work (workableCases), but not one they are reviewing blind, whose status and decision
 * a list would show them.
 */
export async function listableCases(ctx: AccessContext): Promise<SQL | undefined> {
  const [workable, notBlind] = await Promise.all([workableCases(ctx), notReviewedBlind(ctx)]);
  return notBlind ? and(workable, notBlind) : workable;
}

/** The SQL condition on `cases` "not a case the caller is reviewing blind" (undefined: none is). */
export async function notReviewedBlind(ctx: AccessContext): Promise<SQL | undefined> {
  const blind = await casesUnderBlindReview(ctx);
  return blind.length ? notInArray(cases.id, blind) : undefined;
}

/**
 * How a thing held elsewhere leads to its case, one row per kind: `workable(caseId)` is the
 * condition that a case id names a case the caller may work. A thing with no case (an action
 * taken outside any case, an analysis of text sent on its own) is everyone's.
 */
type CaseLookup = (id: SQLWrapper, workable: (caseId: SQLWrapper) => SQL) => SQL;
const reportOfWorkableCase: CaseLookup = (id, workable) => sql`exists (select 1 from ${reports} where ${reports.id} = ${id} and ${workable(reports.caseId)})`;
const CASE_OF = {
  case: (id, workable) => workable(id),
  report: reportOfWorkableCase,
  appeal: (id, workable) => sql`exists (select 1 from ${appeals} where ${appeals.id} = ${id} and (${appeals.caseId} is null or ${workable(appeals.caseId)}))`,
  enforcement_action: (id, workable) =>
    sql`exists (select 1 from ${enforcementActions} where ${enforcementActions.id} = ${id} and (${enforcementActions.caseId} is null or ${workable(enforcementActions.caseId)}))`,
  content_analysis: (id, workable) =>
    sql`exists (select 1 from ${contentAnalyses} where ${contentAnalyses.id} = ${id} and (${contentAnalyses.reportId} is null or ${reportOfWorkableCase(contentAnalyses.reportId, workable)}))`,
} as const satisfies Record<string, CaseLookup>;
export type CaseBound = keyof typeof CASE_OF;

function workableCaseLookup(orgId: string, access: Extract<CaseAccess, { all: false }>): (caseId: SQLWrapper) => SQL {
  const inQueues = caseInQueues([...access.queueIds], access.defaultQueueId);
  return (caseId) => sql`exists (select 1 from ${cases} where ${cases.id} = ${caseId} and ${cases.orgId} = ${orgId} and ${inQueues})`;
}

/**
 * The SQL condition "`id` names a `kind` (a case, a report, an action…) of a case the caller may
 * work", as a correlated lookup of that one thing (undefined: every case). A null `id` (a row
 * about no such thing: an action of no report) is kept when `whenNull: "kept"`, left out
 * otherwise.
 */
export async function isOfWorkableCase(ctx: AccessContext, kind: CaseBound, id: SQLWrapper, opts: { whenNull: "kept" | "left out" }): Promise<SQL | undefined> {
  const access = await caseAccess(ctx);
  if (access.all) return undefined;
  const found = CASE_OF[kind](id, workableCaseLookup(ctx.orgId, access));
  return opts.whenNull === "kept" ? (or(sql`${id} is null`, found) as SQL) : found;
}

/**
 * An audit event's entity by type (a new type must say): one of the case-bound kinds above;
 * "no case" (settings, users, queues, rules: everyone may read their trail); or "spans cases"
 * (a bulk decision, a webhook delivery's payload: only for a caller who may work every queue).
 */
const CASE_OF_AUDITED_ENTITY = {
  case: "case",
  report: "report",
  appeal: "appeal",
  enforcement_action: "enforcement_action",
  content_analysis: "content_analysis",
  bulk_decision: "spans cases",
  webhook_delivery: "spans cases",
  url: "no case",
  project: "no case",
  category: "no case",
  user: "no case",
  webhook_endpoint: "no case",
  decision_template: "no case",
  identity: "no case",
  transparency_submission: "no case",
  queue: "no case",
  rule: "no case",
  // What their events record (names, versions, counts, the model) is about no case.
  eval_set: "no case",
  eval_run: "no case",
  oidc_config: "no case",
} as const satisfies Record<EntityType, CaseBound | "no case" | "spans cases">;

/** The SQL condition on `audit_events` "the caller may see this event" (undefined: every event). */
export async function auditEventIsWorkable(ctx: AccessContext): Promise<SQL | undefined> {
  const access = await caseAccess(ctx);
  if (access.all) return undefined;
  const free = AUDITED_ENTITIES.filter(([, how]) => how === "no case").map(([type]) => type);
  return or(inArray(auditEvents.entityType, free), ...auditEventOfCaseWhere(workableCaseLookup(ctx.orgId, access)));
}

/**
 * The SQL condition "the audit event is about one of `caseIds`" (the case, its reports, appeals,
 * actions and analyses, by CASE_OF): what a blind second reviewer may not read of the case they
 * review (src/domain/review/quality-review.ts).
 */
export function auditEventOfCases(caseIds: readonly string[]): SQL {
  const among = (caseId: SQLWrapper): SQL => sql`${caseId} in (${sql.join(caseIds.map((id) => sql`${id}`), sql`, `)})`;
  return or(...auditEventOfCaseWhere(among))!;
}

const AUDITED_ENTITIES = Object.entries(CASE_OF_AUDITED_ENTITY) as [EntityType, CaseBound | "no case" | "spans cases"][];

/** For each entity type bound to one case: "the event is of that type, about a thing of a case `lookup` holds". */
function auditEventOfCaseWhere(lookup: (caseId: SQLWrapper) => SQL): SQL[] {
  return AUDITED_ENTITIES.flatMap(([type, how]) =>
    how === "no case" || how === "spans cases" ? [] : [and(eq(auditEvents.entityType, type), CASE_OF[how](auditEvents.entityId, lookup))!],
  );
}

/** Organization-wide figures and logs that cannot be split by queue: a 403 for a caller bound to some queues. */
export async function requireEveryQueue(ctx: AccessContext): Promise<void> {
  if (!(await caseAccess(ctx)).all) throw forbidden("This needs access to every review queue");
}
