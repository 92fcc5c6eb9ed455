/**
 * Category policies (docs/ai.md, "Policies and shadow runs"): the longer text each report
 * category gives the AI classifier, in versions numbered per category whose text never changes
 * once written. A version's status is the only thing that changes, and only here:
 *
 * - `draft`: written, used by nothing (but an evaluation run that names it).
 * - `shadow`: tried on live reports beside the live analysis, never acting (./shadow.ts). At
 *   most one per category: making another the shadow one puts this one back to draft.
 * - `live`: what the classifier reads for the category, instead of its description. At most one
 *   per category: making another live retires this one.
 * - `retired`: was live. It may be made live again (a rollback) like any other version.
 *
 * Like a rule's mode (src/domain/rules/rules.ts), every change is audited with what it was and
 * what it became; the partial unique indexes of category_policies keep "at most one live, one
 * shadow" even against a write that would bypass this module.
 *
 * Here rather than in a folder of its own: a policy is what the classifier reads, and this folder
 * is the AI analysis (the classification, its shadow runs, the evaluation runs' classification).
 */
import { and, asc, desc, eq, inArray, max, ne } from "drizzle-orm";
import type { PromptCategory } from "../../ai/prompt.ts";
import { categoryPolicies, reportCategories } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { iso } from "../core/clock.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { badRequest, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { categoriesChanged, listCategories, type CategoryRow } from "../categories/categories.ts";
import { categoryKey } from "../categories/category-key.ts";
import type { CategoryPolicyView, PolicySelection, PolicyStatus, PolicyVersionView } from "../views/policy.ts";

export type { CategoryPolicyView, PolicySelection, PolicyStatus, PolicyVersionView } from "../views/policy.ts";

type PolicyRow = typeof categoryPolicies.$inferSelect;
type Reader = Pick<DomainContext, "db">;

const toVersionView = (row: PolicyRow, category: string): PolicyVersionView => ({
  categoryId: row.categoryId,
  category,
  version: row.version,
  text: row.text,
  status: row.status,
  createdBy: { type: row.createdByType as PolicyVersionView["createdBy"]["type"], id: row.createdById },
  createdAt: iso(row.createdAt),
  statusChangedAt: iso(row.statusChangedAt),
});

async function requireCategory(ctx: Reader, projectId: string, categoryId: string): Promise<CategoryRow> {
  const [row] = await ctx.db
    .select()
    .from(reportCategories)
    .where(and(eq(reportCategories.id, categoryId), eq(reportCategories.projectId, projectId)))
    .limit(1);
  if (!row) throw notFound("Category not found");
  return row;
}

/** Every category of the project with its live and shadow versions (the policies page). */
export async function listPolicies(ctx: Reader, input: { projectId: string }): Promise<CategoryPolicyView[]> {
  const categories = await listCategories(ctx, input.projectId);
  const acting = await ctx.db
    .select()
    .from(categoryPolicies)
    .where(and(eq(categoryPolicies.projectId, input.projectId), inArray(categoryPolicies.status, ["live", "shadow"])));
  const counts = await ctx.db
    .select({ categoryId: categoryPolicies.categoryId, n: max(categoryPolicies.version) })
    .from(categoryPolicies)
    .where(eq(categoryPolicies.projectId, input.projectId))
    .groupBy(categoryPolicies.categoryId);
  const versions = new Map(counts.map((c) => [c.categoryId, c.n ?? 0]));
  return categories.map((c) => {
    const of = (status: PolicyStatus) => {
      const row = acting.find((p) => p.categoryId === c.id && p.status === status);
      return row ? toVersionView(row, c.name) : null;
    };
    return { categoryId: c.id, category: c.name, description: c.description, live: of("live"), shadow: of("shadow"), versions: versions.get(c.id) ?? 0 };
  });
}

/** A category's versions, newest first. */
export async function listPolicyVersions(ctx: Reader, input: { projectId: string; categoryId: string }): Promise<PolicyVersionView[]> {
  const category = await requireCategory(ctx, input.projectId, input.categoryId);
  const rows = await ctx.db.select().from(categoryPolicies).where(eq(categoryPolicies.categoryId, category.id)).orderBy(desc(categoryPolicies.version));
  return rows.map((r) => toVersionView(r, category.name));
}

/**
 * Writes the category's next version (its number: the last one's + 1), as a draft unless
 * `status` says otherwise (then as setPolicyStatus would make it).
 */
export function createPolicyVersion(
  ctx: DomainContext,
  input: { projectId: string; categoryId: string; text: string; status?: PolicyStatus },
): Promise<PolicyVersionView> {
  return transaction(ctx, async () => {
    const category = await requireCategory(ctx, input.projectId, input.categoryId);
    const [last] = await ctx.db.select({ n: max(categoryPolicies.version) }).from(categoryPolicies).where(eq(categoryPolicies.categoryId, category.id));
    const now = ctx.clock.now();
    const row: PolicyRow = {
      id: newId(),
      orgId: ctx.orgId,
      projectId: input.projectId,
      categoryId: category.id,
      version: (last?.n ?? 0) + 1,
      text: input.text,
      status: "draft",
      createdByType: ctx.actor.type,
      createdById: ctx.actor.id,
      createdAt: now,
      statusChangedAt: now,
    };
    await ctx.db.insert(categoryPolicies).values(row);
    await recordAudit(ctx, {
      projectId: input.projectId,
      action: "POLICY_VERSION_CREATED",
      entityType: "category",
      entityId: category.id,
      after: { category: category.name, version: row.version, status: row.status, text: row.text },
    });
    if (!input.status || input.status === "draft") return toVersionView(row, category.name);
    return changeStatus(ctx, category, row, input.status);
  });
}

/**
 * Sets a version's status. `live` retires the category's live version; `shadow` puts its shadow
 * version back to draft; `draft` and `retired` only move this one (a live version set so leaves
 * the category to its description). Promoting a shadow version is setting it live. Setting the
 * status it has changes nothing.
 */
export function setPolicyStatus(
  ctx: DomainContext,
  input: { projectId: string; categoryId: string; version: number; status: PolicyStatus },
): Promise<PolicyVersionView> {
  return transaction(ctx, async () => {
    const category = await requireCategory(ctx, input.projectId, input.categoryId);
    const [row] = await ctx.db
      .select()
      .from(categoryPolicies)
      .where(and(eq(categoryPolicies.categoryId, category.id), eq(categoryPolicies.version, input.version)))
      .limit(1);
    if (!row) throw notFound("Policy version not found");
    if (row.status === input.status) return toVersionView(row, category.name);
    return changeStatus(ctx, category, row, input.status);
  });
}

/** What a version's new status displaces: the other version that held it, and where it goes. */
const DISPLACED_TO: Partial<Record<PolicyStatus, PolicyStatus>> = { live: "retired", shadow: "draft" };

async function changeStatus(ctx: DomainContext, category: CategoryRow, row: PolicyRow, status: PolicyStatus): Promise<PolicyVersionView> {
  const now = ctx.clock.now();
  const displacedTo = DISPLACED_TO[status];
  let displaced: { version: number; from: PolicyStatus; to: PolicyStatus } | null = null;
  if (displacedTo) {
    // First, so that the partial unique index never sees two versions with the status.
    const moved = await ctx.db
      .update(categoryPolicies)
      .set({ status: displacedTo, statusChangedAt: now })
      .where(and(eq(categoryPolicies.categoryId, category.id), eq(categoryPolicies.status, status), ne(categoryPolicies.id, row.id)))
      .returning({ version: categoryPolicies.version });
    if (moved[0]) displaced = { version: moved[0].version, from: status, to: displacedTo };
  }
  await ctx.db.update(categoryPolicies).set({ status, statusChangedAt: now }).where(eq(categoryPolicies.id, row.id));
  // What the classifier reads of the project changed: enrichment reads its categories again, and
  // the next report of a content is a new analysis (its classifier key differs).
  await categoriesChanged(ctx, row.projectId);
  await recordAudit(ctx, {
    projectId: row.projectId,
    action: "POLICY_STATUS_CHANGED",
    entityType: "category",
    entityId: category.id,
    before: { category: category.name, version: row.version, status: row.status },
    after: { category: category.name, version: row.version, status },
    data: { displaced },
  });
  return toVersionView({ ...row, status, statusChangedAt: now }, category.name);
}

/** Whether any category of the project has a shadow version (then enrichment runs a shadow analysis). */
export async function hasShadowPolicies(ctx: Reader, projectId: string): Promise<boolean> {
  const [row] = await ctx.db
    .select({ id: categoryPolicies.id })
    .from(categoryPolicies)
    .where(and(eq(categoryPolicies.projectId, projectId), eq(categoryPolicies.status, "shadow")))
    .limit(1);
  return row !== undefined;
}

/** The categories as the classifier is sent them, and the policy version each one used. */
export interface ClassificationPolicies {
  /** Name, description and, when a version is used, its text (src/ai/prompt.ts). In name order. */
  categories: PromptCategory[];
  /** Category name → the policy version its text came from; a category reading its description is absent. */
  policyVersions: Record<string, number>;
}

/**
 * What the classifier is sent for a project's categories under a selection (PolicySelection):
 * the live analyses (`"live"`), the shadow ones (`"shadow"`), the descriptions alone, or named
 * versions (by category name, matched as report reasons are; the others as `"live"`), for an
 * evaluation run. A named category or version that does not exist is a 400.
 */
export async function policiesForClassification(
  ctx: Reader,
  input: { projectId: string; selection: PolicySelection },
): Promise<ClassificationPolicies> {
  const { selection } = input;
  const categories = await listCategories(ctx, input.projectId);
  if (selection === "descriptions") return { categories: categories.map((c) => ({ name: c.name, description: c.description, policy: null })), policyVersions: {} };
  const named = new Map<string, number>();
  if (typeof selection === "object") {
    const byKey = new Map(categories.map((c) => [c.nameKey, c]));
    for (const [name, version] of Object.entries(selection)) {
      const category = byKey.get(categoryKey(name));
      if (!category) throw badRequest(`policy selection: the project has no category named "${name}"`);
      named.set(category.id, version);
    }
  }
  const rows = categories.length
    ? await ctx.db
        .select()
        .from(categoryPolicies)
        .where(
          and(
            eq(categoryPolicies.projectId, input.projectId),
            inArray(categoryPolicies.categoryId, categories.map((c) => c.id)),
          ),
        )
        .orderBy(asc(categoryPolicies.version))
    : [];
  const policyVersions: Record<string, number> = {};
  const out = categories.map((c): PromptCategory => {
    const mine = rows.filter((r) => r.categoryId === c.id);
    const wanted = named.get(c.id);
    let used: PolicyRow | undefined;
    if (wanted !== undefined) {
      used = mine.find((r) => r.version === wanted);
      if (!used) throw badRequest(`policy selection: the category "${c.name}" has no policy version ${wanted}`);
    } else {
      const live = mine.find((r) => r.status === "live");
      used = selection === "shadow" ? (mine.find((r) => r.status === "shadow") ?? live) : live;
    }
    if (!used) return { name: c.name, description: c.description, policy: null };
    policyVersions[c.name] = used.version;
    return { name: c.name, description: c.description, policy: used.text };
  });
  return { categories: out, policyVersions };
}
