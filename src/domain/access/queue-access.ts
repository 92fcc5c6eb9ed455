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
 * so no caller can forget it), lists and counts leave it out (`listableCases`, `workableCases`,
 * `isOfWorkableCase`), and organization-wide figures and logs that cannot be split by queue
 * (webhook deliveries, the transparency report) need access to every queue
 * (`requireEveryCase`). test/queue-access.test.ts calls every procedure of the router as such a
 * user and fails on any leak.
 *
 * The blind-review wall (docs/quality.md, "The blind-review wall") is the same check: while a
 * user holds a second review they have not submitted, its case and the accounts it is about
 * (`blindScope`) are walled off from them as a queue they may not work is, but with a 403 that
 * says why (they know the case: it is their task): lookups by id refuse them (`caseRefusal`, in
 * the same assertMayWorkCase/assertMayWorkCaseId every require* calls, and
 * `assertMaySeeSubject` for what is looked up by account), lists leave them out (the same
 * conditions: listableCases, isOfWorkableCase, auditEventIsWorkable) and whatever cannot be
 * split by case is refused (requireEveryCase). Figures that are no list count by queue access
 * alone (`workableCases`, `isCountedFor`), the case reviewed blind with the others, since a
 * figure that dropped it when the task is taken would tell its decision by the difference; but a
 * reporter's figures leave its walled reports out (`reportNotReviewedBlind`), as the blind view
 * names the reporter and a reporter's few reports would tell it.
 * test/blind-review.test.ts calls every procedure of the router as such a holder and fails on
 * any answer that carries the first decision.
 *
 * A project being deleted (src/domain/accounts/project-deletion.ts) is gone at once, but its rows
 * go a slice at a time: until they have, its cases are walled off from every caller (users and
 * API keys; not Flagstaff's own jobs) by the same checks, as a queue they may not work is (404s,
 * left out of lists and figures): `CaseAccess.projectsGone`.
 *
 * Each answer is read once per actor (a request's caller: one query for the user's role, one for
 * the organization's queues, one for the projects being deleted, one for their blind reviews)
 * and kept for that actor object, which lives as long as its request.
 */
import { and, eq, inArray, isNotNull, isNull, notInArray, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { appeals, auditEvents, cases, contentAnalyses, enforcementActions, projects, qualityReviews, queues, reports, users } from "../../db/schema.ts";
import type { DomainContext } from "../core/context.ts";
import { forbidden, notFound, type DomainError } from "../core/errors.ts";
import { parseStored } from "../plumbing/stored-json.ts";
import { queueAccessSchema, type QueueAccess } from "../views/queue.ts";
import { hasRole, ROLES, type Role } from "../views/user.ts";
import type { EntityType } from "../views/audit.ts";
import type { Actor } from "../views/common.ts";

/** What the access checks read: without an actor (an internal read) every queue is workable. */
export type AccessContext = Pick<DomainContext, "db" | "orgId"> & { actor?: Actor; automation?: DomainContext["automation"] };

/**
 * The queues a caller may work: every one (`all`), or these (and whether the default queue is
 * among them). And the organization's projects being deleted (`projectsGone`): marked deleted,
 * their rows still going a slice at a time (src/domain/accounts/project-deletion.ts). A case of
 * such a project is gone for every caller at once, as its project is, whatever its queue: a
 * lookup is a 404, a list or a figure leaves it out.
 */
export type CaseAccess = ({ all: true } | { all: false; queueIds: ReadonlySet<string>; defaultQueueId: string | null }) & { projectsGone: readonly string[] };

/** Every case: an internal read, Flagstaff's jobs (the deletion's slices among them) and rules while they act. */
const EVERY_CASE: CaseAccess = { all: true, projectsGone: [] };

/** Whether `access` leaves out no case at all (every queue, no project being deleted): the checks below then add nothing. */
const seesEveryCase = (access: CaseAccess): boolean => access.all && access.projectsGone.length === 0;

/** A stored access list read back (a malformed one reads as everyone, which the writers never store). */
export const accessOf = (q: { access: string }): QueueAccess => parseStored(q.access, queueAccessSchema, { users: [], roles: [] });

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

/**
 * The queues the caller may work (see the module's comment for who may work them all), and the
 * projects being deleted, for a request's caller: a user or an API key (a secret key reaches
 * every project of its organization). Flagstaff itself (jobs, rules while they act) sees every case.
 */
export function caseAccess(ctx: AccessContext): Promise<CaseAccess> {
  const actor = ctx.actor;
  if (!actor || actor.type === "system" || !actor.id || ctx.automation) return Promise.resolve(EVERY_CASE);
  let known = memo.get(actor);
  if (!known) {
    known = actor.type === "user" ? readAccess(ctx, actor.id) : readProjectsGone(ctx).then((projectsGone) => ({ all: true, projectsGone }));
    memo.set(actor, known);
  }
  return known;
}

async function readAccess(ctx: AccessContext, userId: string): Promise<CaseAccess> {
  const [[user], rows, projectsGone] = await Promise.all([
    ctx.db.select({ role: users.role }).from(users).where(and(eq(users.id, userId), eq(users.orgId, ctx.orgId))).limit(1),
    ctx.db.select({ id: queues.id, access: queues.access, isDefault: queues.isDefault }).from(queues).where(eq(queues.orgId, ctx.orgId)),
    readProjectsGone(ctx),
  ]);
  const role: Role = user && (ROLES as readonly string[]).includes(user.role) ? (user.role as Role) : "viewer";
  if (hasRole(role, "admin")) return { all: true, projectsGone };
  const workable = rows.filter((q) => mayWork(q, userId, role));
  if (workable.length === rows.length) return { all: true, projectsGone };
  return { all: false, queueIds: new Set(workable.map((q) => q.id)), defaultQueueId: rows.find((q) => q.isDefault === 1)?.id ?? null, projectsGone };
}

/** The organization's projects marked deleted whose rows are still going (a few at most, and most often none). */
async function readProjectsGone(ctx: AccessContext): Promise<string[]> {
  const rows = await ctx.db.select({ id: projects.id }).from(projects).where(and(eq(projects.orgId, ctx.orgId), isNotNull(projects.deletedAt)));
  return rows.map((r) => r.id);
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

/** Whether a case (its queue, null: the default queue; its project) is workable under `access`. */
export function mayWorkCaseOf(access: CaseAccess, c: { queueId: string | null; projectId: string }): boolean {
  return mayWorkQueueOf(access, c.queueId) && !access.projectsGone.includes(c.projectId);
}

/** Whether a case in queue `queueId` (null: the default queue) is workable under `access` by its queue alone (the queues a user may pick). */
export function mayWorkQueueOf(access: CaseAccess, queueId: string | null): boolean {
  if (access.all) return true;
  // No default queue yet: it will be made open to everyone, as every default queue starts.
  if (queueId === null) return access.defaultQueueId === null || access.queueIds.has(access.defaultQueueId);
  return access.queueIds.has(queueId);
}

/** A case as the checks read it: its queue and project, and what the blind-review wall reads. */
export type CaseRef = { id: string; queueId: string | null; projectId: string; subjectIdentityId: string | null };

/**
 * The one check of a case's things looked up by id, null when the caller may see it: a 404
 * saying `what` is not found (the same answer as for another organization's) when the caller may
 * not work the case's queue; a 403 saying why when they review it blind, or another case about an
 * account they review blind (the blind-review wall).
 */
export async function caseRefusal(ctx: AccessContext, c: CaseRef, what = "Case"): Promise<DomainError | null> {
  if (!mayWorkCaseOf(await caseAccess(ctx), c)) return notFound(`${what} not found`);
  return blindRefusal(await blindScope(ctx), c);
}

/** caseRefusal, thrown. */
export async function assertMayWorkCase(ctx: AccessContext, c: CaseRef, what = "Case"): Promise<void> {
  const refused = await caseRefusal(ctx, c, what);
  if (refused) throw refused;
}

/** Whether the caller may work the case (caseRefusal without the error). */
export async function mayWorkCase(ctx: AccessContext, c: CaseRef): Promise<boolean> {
  return (await caseRefusal(ctx, c)) === null;
}

/**
 * The case (by id) of a thing looked up by id, checked (assertMayWorkCase): a thing of no case is
 * everyone's. `subjectId`, the account the thing is about (an action's), is checked after it
 * (assertMaySeeSubject), so that an action taken outside any case is walled off too.
 */
export async function assertMayWorkCaseId(ctx: AccessContext, caseId: string | null, what: string, subjectId: string | null = null): Promise<void> {
  const [access, blind] = await Promise.all([caseAccess(ctx), blindScope(ctx)]);
  if (caseId !== null && !(seesEveryCase(access) && nothingBlind(blind))) {
    const [c] = await ctx.db
      .select({ id: cases.id, queueId: cases.queueId, projectId: cases.projectId, subjectIdentityId: cases.subjectIdentityId })
      .from(cases)
      .where(and(eq(cases.id, caseId), eq(cases.orgId, ctx.orgId)))
      .limit(1);
    if (!c) throw notFound(`${what} not found`);
    await assertMayWorkCase(ctx, c, what);
  }
  await assertMaySeeSubject(ctx, subjectId);
}

/**
 * assertMayWorkCaseId by queue access alone: for the caller's own second review, whose case they
 * review blind (src/domain/quality/quality-review.ts) and whose task is all they see of it.
 */
export async function assertMayWorkQueueOfCaseId(ctx: AccessContext, caseId: string, what: string): Promise<void> {
  const access = await caseAccess(ctx);
  if (seesEveryCase(access)) return;
  const [c] = await ctx.db.select({ queueId: cases.queueId, projectId: cases.projectId }).from(cases).where(and(eq(cases.id, caseId), eq(cases.orgId, ctx.orgId))).limit(1);
  if (!c || !mayWorkCaseOf(access, c)) throw notFound(`${what} not found`);
}

/** The SQL condition on `cases` "in a queue of `queueIds`" (the default queue's also covers null). */
export function caseInQueues(queueIds: readonly string[], defaultQueueId: string | null): SQL {
  const named = queueIds.length ? inArray(cases.queueId, [...queueIds]) : sql`1 = 0`;
  return defaultQueueId === null || queueIds.includes(defaultQueueId) ? (or(isNull(cases.queueId), named) as SQL) : named;
}

/**
 * The SQL condition on `cases` "in a queue the caller may work" (undefined: every case), by queue
 * access alone: for figures, which count a case reviewed blind with the others (see the module's
 * comment), and for the caller's own second reviews. A list of cases uses listableCases.
 */
export async function workableCases(ctx: AccessContext): Promise<SQL | undefined> {
  return workableWhere(await caseAccess(ctx));
}

/** The SQL condition on `cases` of workableCases, for `access` read already (undefined: every case). */
function workableWhere(access: CaseAccess): SQL | undefined {
  if (seesEveryCase(access)) return undefined;
  return and(access.all ? undefined : caseInQueues([...access.queueIds], access.defaultQueueId), notOfProjectsGone(access));
}

/** The SQL condition on `cases` "not of a project being deleted" (undefined: none is). */
function notOfProjectsGone(access: CaseAccess): SQL | undefined {
  return access.projectsGone.length ? notInArray(cases.projectId, [...access.projectsGone]) : undefined;
}

/**
 * The SQL condition on `cases` "not of a project being deleted" for the caller (undefined: none
 * is): for a list of one queue's cases, which asks the queue's access itself.
 */
export async function casesOfLiveProjects(ctx: AccessContext): Promise<SQL | undefined> {
  return notOfProjectsGone(await caseAccess(ctx));
}

/**
 * The SQL condition on `cases` "the caller may see it in a list" (undefined: every case): a case
 * they may work (workableCases), but not one the blind-review wall hides from them.
 */
export async function listableCases(ctx: AccessContext): Promise<SQL | undefined> {
  const [workable, notBlind] = await Promise.all([workableCases(ctx), notReviewedBlind(ctx)]);
  return notBlind ? and(workable, notBlind) : workable;
}

/** The SQL condition on `cases` "not hidden by the blind-review wall" (undefined: none is). */
export async function notReviewedBlind(ctx: AccessContext): Promise<SQL | undefined> {
  const blind = await blindScope(ctx);
  return nothingBlind(blind) ? undefined : notBlindCase(blind, cases.id, cases.subjectIdentityId);
}

/**
 * The SQL condition on `reports` "not hidden by the blind-review wall" (undefined: none is): not
 * of a case it hides, nor about an account reviewed blind. For what is counted per reporter
 * (their reports by status, their accuracy), whose figures would tell the decision of a report
 * they filed; queue access is not asked here (a reporter's figures count every queue).
 */
export async function reportNotReviewedBlind(ctx: AccessContext): Promise<SQL | undefined> {
  const blind = await blindScope(ctx);
  if (nothingBlind(blind)) return undefined;
  const hidden = sql`select ${cases.id} from ${cases} where ${cases.orgId} = ${ctx.orgId} and not (${notBlindCase(blind, cases.id, cases.subjectIdentityId)})`;
  return sql`(${reports.caseId} not in (${hidden}) and ${notBlindAccount(blind, reports.subjectIdentityId)})`;
}

// ---------------------------------------------------------------------------------------------
// The blind-review wall (docs/quality.md, "The blind-review wall").

/**
 * What the caller reviews blind: the cases of the second reviews they took and have not
 * submitted, and the accounts those cases are about (each case's subject and every subject its
 * reports name). Until they submit, the case shows them only as the review does (blindCase in
 * quality-review.ts); the case, its reports, actions, appeals, statements, strikes and audit
 * events, the accounts' other cases (a sweep resolved them with the decision's ban), their
 * enforcement, strikes and sweep, and their pages are walled off: each would tell the decision.
 */
export interface BlindScope {
  caseIds: readonly string[];
  subjectIds: readonly string[];
}
const NOTHING_BLIND: BlindScope = { caseIds: [], subjectIds: [] };
const nothingBlind = (blind: BlindScope): boolean => blind.caseIds.length === 0;

export const REVIEWING_CASE_BLIND = "You are reviewing this case blind: it opens once your second review is submitted";
export const REVIEWING_ACCOUNT_BLIND = "You are reviewing a case about this account blind: it opens once your second review is submitted";
const REVIEWING_BLIND = "You are reviewing a case blind: this opens once your second review is submitted";

const blindMemo = new WeakMap<Actor, Promise<BlindScope>>();

/** What the caller reviews blind (API keys, Flagstaff itself and rules review nothing). */
export function blindScope(ctx: AccessContext): Promise<BlindScope> {
  const actor = ctx.actor;
  if (!actor || actor.type !== "user" || !actor.id || ctx.automation) return Promise.resolve(NOTHING_BLIND);
  let known = blindMemo.get(actor);
  if (!known) {
    known = readBlindScope(ctx, actor.id);
    blindMemo.set(actor, known);
  }
  return known;
}

/** Forgets what the actor reviews blind as read (they took or submitted a task): the next check reads it again. */
export function forgetBlindScope(actor: Actor): void {
  blindMemo.delete(actor);
}

async function readBlindScope(ctx: AccessContext, userId: string): Promise<BlindScope> {
  const rows = await ctx.db
    .select({ caseId: qualityReviews.caseId })
    .from(qualityReviews)
    .where(and(eq(qualityReviews.orgId, ctx.orgId), eq(qualityReviews.reviewerId, userId), isNull(qualityReviews.secondDecidedAt)));
  if (!rows.length) return NOTHING_BLIND;
  const caseIds = [...new Set(rows.map((r) => r.caseId))];
  const [ofCases, ofReports] = await Promise.all([
    ctx.db.select({ id: cases.subjectIdentityId }).from(cases).where(and(eq(cases.orgId, ctx.orgId), inArray(cases.id, caseIds))),
    ctx.db.select({ id: reports.subjectIdentityId }).from(reports).where(and(eq(reports.orgId, ctx.orgId), inArray(reports.caseId, caseIds))),
  ]);
  const subjectIds = [...new Set([...ofCases, ...ofReports].map((r) => r.id).filter((id): id is string => id !== null))];
  return { caseIds, subjectIds };
}

/** The 403 of a case the caller reviews blind or one about an account they do (null: neither). */
function blindRefusal(blind: BlindScope, c: { id: string; subjectIdentityId: string | null }): DomainError | null {
  if (blind.caseIds.includes(c.id)) return forbidden(REVIEWING_CASE_BLIND);
  if (c.subjectIdentityId !== null && blind.subjectIds.includes(c.subjectIdentityId)) return forbidden(REVIEWING_ACCOUNT_BLIND);
  return null;
}

/** Whether the caller may see a case, on scopes read once (caseRefusal without its queries, for a batch of cases). */
export function maySeeCaseOf(access: CaseAccess, blind: BlindScope, c: CaseRef): boolean {
  return mayWorkCaseOf(access, c) && blindRefusal(blind, c) === null;
}

/**
 * The account (by identity id) of a thing looked up by account (its page, its enforcement, its
 * strikes, a sweep of its cases): a 403 when the caller reviews a case about it blind.
 */
export async function assertMaySeeSubject(ctx: AccessContext, identityId: string | null): Promise<void> {
  if (identityId !== null && (await blindScope(ctx)).subjectIds.includes(identityId)) throw forbidden(REVIEWING_ACCOUNT_BLIND);
}

/** The SQL condition "the case (by id and subject columns) is not hidden by the wall". */
function notBlindCase(blind: BlindScope, caseId: SQLWrapper, subjectId: SQLWrapper): SQL {
  return sql`(${caseId} not in (${idList(blind.caseIds)}) and ${notBlindAccount(blind, subjectId)})`;
}

/** The SQL condition "the account (an identity id column, null: none) is not one reviewed blind". */
function notBlindAccount(blind: BlindScope, identityId: SQLWrapper): SQL {
  return blind.subjectIds.length ? sql`(${identityId} is null or ${identityId} not in (${idList(blind.subjectIds)}))` : sql`1 = 1`;
}

const idList = (ids: readonly string[]): SQL => sql.join(ids.map((id) => sql`${id}`), sql`, `);

// ---------------------------------------------------------------------------------------------
// Conditions on things held elsewhere, through their case.

/**
 * How the conditions below reach a case and an account: `caseOf(caseId)` is the condition that a
 * case id names a case the caller may see, `account(identityId)` that an account is not one they
 * review blind.
 */
interface Sight {
  caseOf: (caseId: SQLWrapper) => SQL;
  account: (identityId: SQLWrapper) => SQL;
}

/**
 * How a thing held elsewhere leads to its case, one row per kind. A thing with no case (an
 * action taken outside any case, an analysis of text sent on its own) is everyone's but for the
 * account it is about.
 */
type CaseLookup = (id: SQLWrapper, see: Sight) => SQL;
const reportOfVisibleCase: CaseLookup = (id, see) =>
  sql`exists (select 1 from ${reports} where ${reports.id} = ${id} and ${see.caseOf(reports.caseId)} and ${see.account(reports.subjectIdentityId)})`;
const CASE_OF = {
  case: (id, see) => see.caseOf(id),
  report: reportOfVisibleCase,
  appeal: (id, see) =>
    sql`exists (select 1 from ${appeals} inner join ${enforcementActions} on ${enforcementActions.id} = ${appeals.actionId} where ${appeals.id} = ${id} and (${appeals.caseId} is null or ${see.caseOf(appeals.caseId)}) and ${see.account(enforcementActions.identityId)})`,
  enforcement_action: (id, see) =>
    sql`exists (select 1 from ${enforcementActions} where ${enforcementActions.id} = ${id} and (${enforcementActions.caseId} is null or ${see.caseOf(enforcementActions.caseId)}) and ${see.account(enforcementActions.identityId)})`,
  content_analysis: (id, see) =>
    sql`exists (select 1 from ${contentAnalyses} where ${contentAnalyses.id} = ${id} and (${contentAnalyses.reportId} is null or ${reportOfVisibleCase(contentAnalyses.reportId, see)}))`,
} as const satisfies Record<string, CaseLookup>;
export type CaseBound = keyof typeof CASE_OF;

/** The Sight of a caller bound to `access` and walled off from `blind`. */
function sightOf(orgId: string, access: CaseAccess, blind: BlindScope): Sight {
  const notBlind = nothingBlind(blind) ? undefined : notBlindCase(blind, cases.id, cases.subjectIdentityId);
  const where = and(sql`${cases.orgId} = ${orgId}`, workableWhere(access), notBlind);
  return {
    caseOf: (caseId) => sql`exists (select 1 from ${cases} where ${cases.id} = ${caseId} and ${where})`,
    account: (identityId) => notBlindAccount(blind, identityId),
  };
}

/** What `opts` of the conditions below say about a thing's case and account. */
interface CaseBoundOptions {
  /** A null `id` (a row about no such thing: an action of no case) is kept, or left out. */
  whenNull: "kept" | "left out";
  /** The account the thing is about (an action's, a strike's): left out when it is one the caller reviews blind. */
  account?: SQLWrapper;
}

function caseBoundWhere(orgId: string, access: CaseAccess, blind: BlindScope, kind: CaseBound, id: SQLWrapper, opts: CaseBoundOptions): SQL | undefined {
  if (seesEveryCase(access) && nothingBlind(blind)) return undefined;
  const see = sightOf(orgId, access, blind);
  const found = CASE_OF[kind](id, see);
  const kept = opts.whenNull === "kept" ? (or(sql`${id} is null`, found) as SQL) : found;
  return opts.account && !nothingBlind(blind) ? and(kept, see.account(opts.account)) : kept;
}

/**
 * The SQL condition "`id` names a `kind` (a case, a report, an action…) the caller may see": of
 * a case they may work and not walled off by a blind review, as a correlated lookup of that one
 * thing (undefined: every one). For lists; figures use isCountedFor.
 */
export async function isOfWorkableCase(ctx: AccessContext, kind: CaseBound, id: SQLWrapper, opts: CaseBoundOptions): Promise<SQL | undefined> {
  const [access, blind] = await Promise.all([caseAccess(ctx), blindScope(ctx)]);
  return caseBoundWhere(ctx.orgId, access, blind, kind, id, opts);
}

/**
 * isOfWorkableCase by queue access alone, for figures (counts, service levels): they count a case
 * the caller reviews blind with the others, as leaving it out would tell its decision by what
 * the figures lost when the task was taken (see the module's comment).
 */
export async function isCountedFor(ctx: AccessContext, kind: CaseBound, id: SQLWrapper, opts: CaseBoundOptions): Promise<SQL | undefined> {
  return caseBoundWhere(ctx.orgId, await caseAccess(ctx), NOTHING_BLIND, kind, id, opts);
}

/**
 * An audit event's entity by type (a new type must say): one of the case-bound kinds above;
 * "account" (an identity: its strikes, its reporter settings; everyone's but for an account the
 * caller reviews a case about blind); "no case" (settings, users, queues, rules: everyone may read
 * their trail); or "spans cases" (a bulk decision, a webhook delivery's payload: only for a caller
 * who may see every case).
 */
const CASE_OF_AUDITED_ENTITY = {
  case: "case",
  report: "report",
  appeal: "appeal",
  enforcement_action: "enforcement_action",
  content_analysis: "content_analysis",
  bulk_decision: "spans cases",
  webhook_delivery: "spans cases",
  identity: "account",
  url: "no case",
  project: "no case",
  category: "no case",
  user: "no case",
  webhook_endpoint: "no case",
  decision_template: "no case",
  transparency_submission: "no case",
  queue: "no case",
  rule: "no case",
  // What their events record (names, versions, counts, the model) is about no case.
  eval_set: "no case",
  eval_run: "no case",
  oidc_config: "no case",
  // The organization's settings (its viewing defaults).
  organization: "no case",
  // A media bank's settings and entries (hashes, their origin): a match's events are the case's.
  media_bank: "no case",
} as const satisfies Record<EntityType, CaseBound | "account" | "no case" | "spans cases">;

const AUDITED_ENTITIES = Object.entries(CASE_OF_AUDITED_ENTITY) as [EntityType, CaseBound | "account" | "no case" | "spans cases"][];

/** The SQL condition on `audit_events` "the caller may see this event" (undefined: every event). */
export async function auditEventIsWorkable(ctx: AccessContext): Promise<SQL | undefined> {
  const [access, blind] = await Promise.all([caseAccess(ctx), blindScope(ctx)]);
  if (seesEveryCase(access) && nothingBlind(blind)) return undefined;
  const see = sightOf(ctx.orgId, access, blind);
  const ofType = (how: string) => AUDITED_ENTITIES.filter(([, h]) => h === how).map(([type]) => type);
  return or(
    inArray(auditEvents.entityType, ofType("no case")),
    and(inArray(auditEvents.entityType, ofType("account")), see.account(auditEvents.entityId)),
    ...AUDITED_ENTITIES.flatMap(([type, how]) =>
      how === "no case" || how === "spans cases" || how === "account" ? [] : [and(eq(auditEvents.entityType, type), CASE_OF[how](auditEvents.entityId, see))!],
    ),
  );
}

/**
 * Organization-wide records that cannot be split by case (every report, webhook deliveries, the
 * statements export, evaluation items, the transparency report): a 403 for a caller bound to
 * some queues, and for one reviewing a case blind until they submit (their decision is among them).
 */
export async function requireEveryCase(ctx: AccessContext): Promise<void> {
  if (!(await caseAccess(ctx)).all) throw forbidden("This needs access to every review queue");
  if (!nothingBlind(await blindScope(ctx))) throw forbidden(REVIEWING_BLIND);
}
