/**
 * Tags on cases (src/domain/views/tag.ts holds the rule of what a tag is): set as a whole list,
 * audited, read with the queue's rows, and the organization's tags in use for the filter.
 */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { param, statements } from "../../db/prepared.ts";
import { caseTags } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { requireCase, type CaseRow } from "./cases.ts";
import { rowLockedTransaction, type DomainContext } from "../core/context.ts";
import { badRequest } from "../core/errors.ts";
import { MAX_TAGS_PER_CASE, normaliseTag } from "../views/tag.ts";
import { isOfWorkableCase, type AccessContext } from "../access/queue-access.ts";

/**
 * A rule's tag effect runs inside report intake: its statements stay prepared (src/db/prepared.ts).
 * A case's tags are sorted here, not by the statement: with `order by tag` (the index's own
 * order) it cost 25 µs a run under load on SQLite, 3 µs without.
 */
const tagStatements = statements((db) => ({
  ofCase: db.select({ tag: caseTags.tag }).from(caseTags).where(eq(caseTags.caseId, sql.placeholder("caseId"))).prepare(),
  insert: db.insert(caseTags).values({ caseId: param("caseId"), orgId: param("orgId"), tag: param("tag"), createdAt: param("createdAt") }).prepare(),
}));

/** Replaces a case's tags with `tags` (normalised, without repeats); audited when they change. */
export async function setCaseTags(ctx: DomainContext, input: { caseId: string; tags: string[] }): Promise<string[]> {
  const tags = [...new Set(input.tags.map(normaliseTag).filter((t): t is string => t !== null))].sort();
  if (tags.length > MAX_TAGS_PER_CASE) throw badRequest(`tags: at most ${MAX_TAGS_PER_CASE} per case`);
  return rowLockedTransaction(ctx, async () => {
    const c = await requireCase(ctx, input.caseId, undefined, { lock: true });
    const before = (await tagsOfCases(ctx, { caseIds: [c.id] })).get(c.id) ?? [];
    if (before.join("\u0001") === tags.join("\u0001")) return tags;
    const now = ctx.clock.now();
    await ctx.db.delete(caseTags).where(eq(caseTags.caseId, c.id));
    if (tags.length) await ctx.db.insert(caseTags).values(tags.map((tag) => ({ caseId: c.id, orgId: ctx.orgId, tag, createdAt: now })));
    await recordAudit(ctx, { projectId: c.projectId, action: "CASE_TAGS_CHANGED", entityType: "case", entityId: c.id, before: { tags: before }, after: { tags } });
    return tags;
  });
}

/**
 * Adds one tag to a case (a rule's `tag` effect): the same rule as setCaseTags (normalised, at
 * most MAX_TAGS_PER_CASE, audited as CASE_TAGS_CHANGED), without reading the tags twice or
 * rewriting the ones already there. Call it inside a transaction (report intake's): every
 * refusal comes before the first write, so it takes no savepoint of its own. `caseRow` is the
 * case as a caller of the same organization holds it (intake has just written it): it is not read again.
 */
export async function addCaseTag(ctx: DomainContext, input: { caseId: string; tag: string; caseRow?: CaseRow }): Promise<string[]> {
  const tag = normaliseTag(input.tag);
  // A case intake holds is locked already; any other is locked here.
  const c = await requireCase(ctx, input.caseId, input.caseRow, { lock: true });
  const q = tagStatements(ctx.db);
  const before = (await q.ofCase.execute({ caseId: c.id })).map((r) => r.tag).sort();
  if (tag === null || before.includes(tag)) return before;
  const tags = [...before, tag].sort();
  if (tags.length > MAX_TAGS_PER_CASE) throw badRequest(`tags: at most ${MAX_TAGS_PER_CASE} per case`);
  await q.insert.execute({ caseId: c.id, orgId: ctx.orgId, tag, createdAt: ctx.clock.now() });
  await recordAudit(ctx, { projectId: c.projectId, action: "CASE_TAGS_CHANGED", entityType: "case", entityId: c.id, before: { tags: before }, after: { tags } });
  return tags;
}

/** The tags of each case, sorted. */
export async function tagsOfCases(ctx: Pick<DomainContext, "db">, input: { caseIds: string[] }): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (!input.caseIds.length) return out;
  const rows = await ctx.db.select({ caseId: caseTags.caseId, tag: caseTags.tag }).from(caseTags).where(inArray(caseTags.caseId, input.caseIds)).orderBy(asc(caseTags.tag));
  for (const r of rows) out.set(r.caseId, [...(out.get(r.caseId) ?? []), r.tag]);
  return out;
}

/** The organization's tags in use on the cases the caller may work, most used first (the queue's tag filter offers them). */
export async function tagsInUse(ctx: AccessContext, input: { limit?: number } = {}): Promise<{ tag: string; cases: number }[]> {
  const n = sql<number>`count(*)`;
  const rows = await ctx.db
    .select({ tag: caseTags.tag, cases: n })
    .from(caseTags)
    .where(and(eq(caseTags.orgId, ctx.orgId), await isOfWorkableCase(ctx, "case", caseTags.caseId, { whenNull: "left out" })))
    .groupBy(caseTags.tag)
    .orderBy(sql`count(*) desc`, asc(caseTags.tag))
    .limit(input.limit ?? 100);
  return rows.map((r) => ({ tag: r.tag, cases: Number(r.cases) }));
}
