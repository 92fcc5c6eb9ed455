/**
 * The sweep: once an account is suspended or banned, its other open cases have nothing left to
 * decide, so a moderator resolves them all with that one decision (Mastodon #29023 and #24740,
 * Coop's "clear other reports"). Two steps:
 *
 * - `previewSweep` lists what a sweep of an identity would take: its open cases the caller may
 *   work, and the ones it would skip, each named by id with why (a case in a queue the caller
 *   may not work: its id only, nothing of its content; a case whose open reports also name
 *   another account: a ban of this one decides nothing about the other). At most
 *   MAX_SWEEP_CASES, oldest first, with the total when there are more.
 * - `sweepCases` resolves the cases the moderator confirmed with ACCOUNT_LEVEL_ACTION, following
 *   one suspension or ban of that identity still in force: ONE bulk decision
 *   (src/domain/bulk.ts, `applyBulkDecision`), so each case moves through the workflow engine,
 *   the decision is audited as BULK_DECISION_MADE (with `sweep: { actionId, identityId, kind }`
 *   in its data) and undone like any other bulk decision (`undoBulkDecision`) within its window.
 *   Undoing the sweep reopens the cases; the suspension or ban itself stays (it is revoked on
 *   its own).
 *
 * A case is the identity's when the identity is its subject (`cases.subject_identity_id`) or an
 * open report of it names the identity as its subject.
 */
import { z } from "zod";
import { and, asc, count, eq, inArray, isNotNull, ne, or, type SQL } from "drizzle-orm";
import { cases, enforcementActions, identities, reports } from "../../db/schema.ts";
import { applyBulkDecision, type BulkOutcome, type OthersClaims } from "../review/bulk.ts";
import { toCaseView } from "../cases/cases.ts";
import { rowLockedTransaction, type DomainContext } from "../core/context.ts";
import { actionStatus, actionViews, requireAction, type ActionRow } from "./enforcement.ts";
import { badRequest, conflict, notFound } from "../core/errors.ts";
import { assertMaySeeSubject, blindScope, caseAccess, isOfWorkableCase, maySeeCaseOf, mayWorkCaseOf, type AccessContext } from "../access/queue-access.ts";
import { plainWords } from "../review/template-text.ts";
import { caseViewSchema } from "../views/case.ts";
import { isoDateTime } from "../views/common.ts";
import { enforcementActionViewSchema, kindSpec, resolutionCodeOf, type ActionKind } from "../views/enforcement.ts";
import { identityRefViewSchema } from "../views/identity.ts";
import { OPEN_STATUSES } from "../views/workflow.ts";

/** At most this many cases in one sweep, listed or decided. */
export const MAX_SWEEP_CASES = 500;

/** Whether an action of this kind sweeps (ACTION_KIND_SPECS.sweepsOpenCases: a suspension or a ban). */
export const sweepsOpenCases = (kind: ActionKind): boolean => kindSpec(kind).sweepsOpenCases;

/** Why a case is not swept (the dashboard shows these words). */
export const SWEEP_SKIP = {
  notWorkable: "in a queue you may not work",
  reviewingBlind: "you are reviewing it, or a case about its account, blind",
  otherSubject: "also about another account: decide it on its own",
  notOpen: "not an open case of this account",
} as const;

export const sweepSkipSchema = z.object({ caseId: z.string(), reason: z.string() });

export const sweepPreviewSchema = z.object({
  identity: identityRefViewSchema,
  /** The open cases the sweep would resolve, oldest first. */
  cases: z.array(caseViewSchema),
  /** The open cases it would leave, by id only, with why. */
  skipped: z.array(sweepSkipSchema),
  /** Every open case of the identity, listed or not (more than `cap`: only the first `cap` are listed). */
  total: z.number().int(),
  /** Whether `total` is over the cap: sweep these, then preview again for the rest. */
  capped: z.boolean(),
  cap: z.number().int(),
  /** The identity's suspensions and bans in force that a sweep can follow (the caller may see). */
  actions: z.array(enforcementActionViewSchema),
});
export type SweepPreview = z.infer<typeof sweepPreviewSchema>;

export const sweepOutcomeSchema = z.object({
  /** The bulk decision (undo it with its id); null when no case was resolved. */
  bulkId: z.string().nullable(),
  undoUntil: isoDateTime.nullable(),
  decided: z.array(z.string()),
  skipped: z.array(sweepSkipSchema),
  actionId: z.string(),
  identityId: z.string(),
});
export type SweepOutcome = z.infer<typeof sweepOutcomeSchema>;

type CaseRow = typeof cases.$inferSelect;

/** The identity's open cases (those of `onlyIds` when given), oldest first, at most `limit`. */
async function openCasesOf(ctx: DomainContext, input: { projectId: string; identityId: string; exceptCaseId?: string; onlyIds?: string[]; limit: number }): Promise<CaseRow[]> {
  return await ctx.db
    .select()
    .from(cases)
    .where(subjectCondition(ctx, input))
    .orderBy(asc(cases.createdAt), asc(cases.id))
    .limit(input.limit);
}

function subjectCondition(ctx: DomainContext, input: { projectId: string; identityId: string; exceptCaseId?: string; onlyIds?: string[] }): SQL {
  const named = ctx.db
    .select({ caseId: reports.caseId })
    .from(reports)
    .where(and(eq(reports.subjectIdentityId, input.identityId), eq(reports.projectId, input.projectId), inArray(reports.status, [...OPEN_STATUSES])));
  return and(
    eq(cases.orgId, ctx.orgId),
    eq(cases.projectId, input.projectId),
    eq(cases.isOpen, 1),
    or(eq(cases.subjectIdentityId, input.identityId), inArray(cases.id, named)),
    input.exceptCaseId ? ne(cases.id, input.exceptCaseId) : undefined,
    input.onlyIds ? inArray(cases.id, input.onlyIds) : undefined,
  )!;
}

/** Of these cases, the ones whose open reports (or whose subject) name another account too. */
async function aboutOthers(ctx: DomainContext, rows: CaseRow[], identityId: string): Promise<Set<string>> {
  const others = new Set(rows.filter((c) => c.subjectIdentityId !== null && c.subjectIdentityId !== identityId).map((c) => c.id));
  const ids = rows.map((c) => c.id).filter((id) => !others.has(id));
  if (!ids.length) return others;
  const named = await ctx.db
    .selectDistinct({ caseId: reports.caseId })
    .from(reports)
    .where(and(inArray(reports.caseId, ids), inArray(reports.status, [...OPEN_STATUSES]), isNotNull(reports.subjectIdentityId), ne(reports.subjectIdentityId, identityId)));
  for (const r of named) others.add(r.caseId);
  return others;
}

/** The cases split into those a sweep resolves and those it skips (with why). */
async function partition(ctx: DomainContext & AccessContext, rows: CaseRow[], identityId: string) {
  const [others, access, blind] = await Promise.all([aboutOthers(ctx, rows, identityId), caseAccess(ctx), blindScope(ctx)]);
  const sweep: CaseRow[] = [];
  const skipped: { caseId: string; reason: string }[] = [];
  for (const c of rows) {
    // Queue access and the blind-review wall first: of a case the caller may not see, only its id and why.
    if (!mayWorkCaseOf(access, c)) skipped.push({ caseId: c.id, reason: SWEEP_SKIP.notWorkable });
    else if (!maySeeCaseOf(access, blind, c)) skipped.push({ caseId: c.id, reason: SWEEP_SKIP.reviewingBlind });
    else if (others.has(c.id)) skipped.push({ caseId: c.id, reason: SWEEP_SKIP.otherSubject });
    else sweep.push(c);
  }
  return { sweep, skipped };
}

/** The identity keyed by project + type + external ID (of the context's organization), or a 404; a 403 for an account the caller reviews a case about blind. */
async function requireIdentity(ctx: DomainContext, key: { projectId: string; type: string; externalId: string }) {
  const [row] = await ctx.db
    .select({ id: identities.id, type: identities.type, externalId: identities.externalId })
    .from(identities)
    .where(and(eq(identities.projectId, key.projectId), eq(identities.type, key.type), eq(identities.externalId, key.externalId)))
    .limit(1);
  if (!row) throw notFound("Identity not found");
  await assertMaySeeSubject(ctx, row.id);
  return row;
}

/** What a sweep of the identity would take and leave (see the module's comment). */
export async function previewSweep(
  ctx: DomainContext,
  input: { projectId: string; type: string; externalId: string; exceptCaseId?: string },
): Promise<SweepPreview> {
  const identity = await requireIdentity(ctx, input);
  const scope = { projectId: input.projectId, identityId: identity.id, exceptCaseId: input.exceptCaseId };
  const rows = await openCasesOf(ctx, { ...scope, limit: MAX_SWEEP_CASES + 1 });
  const capped = rows.length > MAX_SWEEP_CASES;
  const listed = rows.slice(0, MAX_SWEEP_CASES);
  const total = capped ? ((await ctx.db.select({ n: count() }).from(cases).where(subjectCondition(ctx, scope)))[0]?.n ?? listed.length) : listed.length;
  const { sweep, skipped } = await partition(ctx, listed, identity.id);
  const now = ctx.clock.now();
  // The suspensions and bans a sweep can follow: in force, and of a case the caller may work (or of none).
  const actionRows = await ctx.db
    .select()
    .from(enforcementActions)
    .where(
      and(
        eq(enforcementActions.identityId, identity.id),
        eq(enforcementActions.orgId, ctx.orgId),
        await isOfWorkableCase(ctx, "case", enforcementActions.caseId, { whenNull: "kept" }),
      ),
    )
    .orderBy(asc(enforcementActions.createdAt));
  const following = actionRows.filter((a) => sweepsOpenCases(a.kind) && actionStatus(a, now) === "active");
  return {
    identity,
    cases: sweep.map((c) => toCaseView(c, ctx.clock.now())),
    skipped,
    total: Number(total),
    capped,
    cap: MAX_SWEEP_CASES,
    actions: await actionViews(ctx, { rows: following, now }),
  };
}

/** Why an action cannot lead a sweep (null: it can). */
function whyNotSweeping(action: ActionRow, now: number): { kind: "bad_request" | "conflict"; message: string } | null {
  if (!sweepsOpenCases(action.kind)) {
    return { kind: "bad_request", message: `actionId: a ${plainWords(action.kind)} leaves the account working; only a suspension or a ban sweeps its other cases` };
  }
  const status = actionStatus(action, now);
  if (status !== "active") return { kind: "conflict", message: `The ${plainWords(action.kind)} is ${status}: a sweep follows an action in force` };
  return null;
}

/**
 * Resolves the confirmed cases (`caseIds`, from the preview) of the action's identity with
 * ACCOUNT_LEVEL_ACTION, as one bulk decision following the action (see the module's comment).
 * A case that is no longer an open case of the identity, one the caller may not work and one
 * also about another account are skipped and named; cases claimed by another moderator are
 * skipped unless `othersClaims` is "take_over". 404 for an action the caller cannot see, 400
 * for one that does not sweep (a warning, a mute, a content removal), 409 for one no longer in
 * force.
 */
export function sweepCases(
  ctx: DomainContext,
  input: { projectId: string; actionId: string; caseIds: string[]; note?: string | null; othersClaims: OthersClaims },
): Promise<SweepOutcome> {
  const caseIds = [...new Set(input.caseIds)];
  if (caseIds.length > MAX_SWEEP_CASES) return Promise.reject(badRequest(`caseIds: at most ${MAX_SWEEP_CASES} cases in one sweep`));
  return rowLockedTransaction(ctx, async () => {
    const action = await requireAction(ctx, { actionId: input.actionId, projectId: input.projectId });
    const why = whyNotSweeping(action, ctx.clock.now());
    if (why) throw why.kind === "conflict" ? conflict(why.message) : badRequest(why.message);
    const rows = await openCasesOf(ctx, { projectId: input.projectId, identityId: action.identityId, onlyIds: caseIds, limit: MAX_SWEEP_CASES });
    const { sweep, skipped } = await partition(ctx, rows, action.identityId);
    const found = new Set(rows.map((c) => c.id));
    for (const caseId of caseIds) if (!found.has(caseId)) skipped.push({ caseId, reason: SWEEP_SKIP.notOpen });
    const decided: BulkOutcome = sweep.length
      ? await applyBulkDecision(
          ctx,
          {
            caseIds: sweep.map((c) => c.id),
            decision: {
              action: "resolve",
              code: resolutionCodeOf(action.kind),
              note: input.note?.trim() || `Resolved with the account's ${plainWords(action.kind)} (enforcement action ${action.id})`,
              // The swept cases add no strikes: the decision that took the action struck already.
              followsActionId: action.id,
            },
            othersClaims: input.othersClaims,
          },
          { sweep: { actionId: action.id, identityId: action.identityId, kind: action.kind, skipped: skipped.length } },
        )
      : { bulkId: null, undoUntil: null, decided: [], skipped: [] };
    return { ...decided, skipped: [...skipped, ...decided.skipped], actionId: action.id, identityId: action.identityId };
  });
}
