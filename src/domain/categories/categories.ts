import { and, asc, count, eq, ne, sql } from "drizzle-orm";
import { statements } from "../../db/prepared.ts";
import type { Store } from "../../db/store.ts";
import { projects, reportCategories } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { iso } from "../core/clock.ts";
import { categoryKey } from "./category-key.ts";
import { transaction, type DomainContext, type ReadContext } from "../core/context.ts";
import { badRequest, conflict, notFound } from "../core/errors.ts";
import { requireRoomFor } from "../core/holding-limits.ts";
import { newId } from "../core/ids.ts";
import type { Severity } from "../views/severity.ts";
import type { CategoryView } from "../views/category.ts";

export type { CategoryView } from "../views/category.ts";

export type CategoryRow = typeof reportCategories.$inferSelect;

/**
 * Every new project starts with these; descriptions also steer the AI classifier. Violence and
 * sexual content are marked graphic (a warning screen before their cases); child safety and self
 * harm need no mark, their CRITICAL hint puts their cases in the emergency bucket, which warns too.
 */
export const DEFAULT_CATEGORIES: { name: string; description: string; severityHint: Severity; graphic?: 1 }[] = [
  { name: "spam", description: "Unsolicited advertising, repetitive or bulk content, link farming.", severityHint: "LOW" },
  { name: "harassment", description: "Insults, bullying, targeted abuse or unwanted contact aimed at a person.", severityHint: "MEDIUM" },
  { name: "hate_speech", description: "Attacks or slurs against people for a protected characteristic such as race, religion, gender or sexuality.", severityHint: "HIGH" },
  { name: "threats", description: "Threats of violence or harm against a person or group.", severityHint: "HIGH" },
  { name: "fraud_or_scam", description: "Phishing, scams, fake giveaways, impersonation for money or account theft.", severityHint: "HIGH" },
  { name: "sexual_content", description: "Sexually explicit or suggestive content where it is not allowed.", severityHint: "MEDIUM", graphic: 1 },
  { name: "child_safety", description: "Any sexualisation or endangerment of minors.", severityHint: "CRITICAL" },
  { name: "self_harm", description: "Content that encourages or describes intent of suicide or self-harm.", severityHint: "CRITICAL" },
  { name: "violence", description: "Graphic violence, glorification of violence or violent extremism.", severityHint: "HIGH", graphic: 1 },
  { name: "impersonation", description: "Pretending to be another person, brand or staff member.", severityHint: "MEDIUM" },
  { name: "misinformation", description: "Demonstrably false claims likely to cause harm.", severityHint: "LOW" },
  { name: "other", description: "Anything else that breaks the platform's rules.", severityHint: "LOW" },
];

/** The default categories of a new project (in the caller's transaction when there is one). */
export async function seedDefaultCategories(ctx: ReadContext, projectId: string): Promise<void> {
  const now = ctx.clock.now();
  await transaction(ctx, async () => {
    await ctx.db
      .insert(reportCategories)
      .values(DEFAULT_CATEGORIES.map((c) => ({ id: newId(), projectId, ...c, nameKey: categoryKey(c.name), createdAt: now, updatedAt: now })));
    await categoriesChanged(ctx, projectId);
  });
}

export function listCategories(ctx: Pick<DomainContext, "db">, projectId: string): Promise<CategoryRow[]> {
  return categoryStatements(ctx.db).all.execute({ projectId });
}

/** What resolving a report's reasons needs of a category. */
export type ReasonCategory = Pick<CategoryRow, "id" | "name" | "nameKey" | "severityHint">;

/**
 * listCategories with only the columns resolveReasons and report creation use, in no particular
 * order, read from the database.
 */
export function reasonCategories(ctx: Pick<DomainContext, "db">, projectId: string): Promise<ReasonCategory[]> {
  return categoryStatements(ctx.db).reasons.execute({ projectId });
}

/** What report creation keeps of a project's categories, per store. */
interface CachedCategories {
  version: number;
  categories: ReasonCategory[];
}
const cachedCategories = new WeakMap<Store, Map<string, CachedCategories>>();

/**
 * A project's report reasons resolved to its categories, as resolveReasons, for report creation
 * (every report runs it). The categories are kept in memory while `project.categoriesVersion`
 * (read with the project by the same request) is the version they were read at: every change
 * of a category bumps it in its own transaction (categoriesChanged), so a change made through
 * any instance is seen by the next report that reads the project.
 */
export async function resolveProjectReasons(
  ctx: Pick<DomainContext, "store" | "db">,
  project: { id: string; categoriesVersion: number },
  names: readonly string[],
): Promise<ReasonCategory[]> {
  let byProject = cachedCategories.get(ctx.store);
  if (!byProject) cachedCategories.set(ctx.store, (byProject = new Map()));
  let cached = byProject.get(project.id);
  if (cached?.version !== project.categoriesVersion) {
    cached = { version: project.categoriesVersion, categories: await reasonCategories(ctx, project.id) };
    byProject.set(project.id, cached);
  }
  return resolveReasons(cached.categories, names);
}

/**
 * Says that a project's categories changed (in the change's transaction): see
 * resolveProjectReasons. What the classifier reads of them too (a policy version's status:
 * src/domain/analysis/policies.ts), so that enrichment's cache of it (analysis/enrichment.ts)
 * is read again.
 */
export async function categoriesChanged(ctx: Pick<DomainContext, "db">, projectId: string): Promise<void> {
  await ctx.db
    .update(projects)
    .set({ categoriesVersion: sql`${projects.categoriesVersion} + 1` })
    .where(eq(projects.id, projectId));
}

const categoryStatements = statements((db) => {
  const ofProject = eq(reportCategories.projectId, sql.placeholder("projectId"));
  return {
    all: db.select().from(reportCategories).where(ofProject).orderBy(asc(reportCategories.name)).prepare(),
    reasons: db
      .select({ id: reportCategories.id, name: reportCategories.name, nameKey: reportCategories.nameKey, severityHint: reportCategories.severityHint })
      .from(reportCategories)
      .where(ofProject)
      .prepare(),
  };
});

export const toCategoryView = (r: CategoryRow): CategoryView => ({
  id: r.id,
  name: r.name,
  description: r.description,
  severityHint: r.severityHint,
  graphic: r.graphic === 1,
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

/**
 * Maps reason names onto the project's categories by categoryKey (so `école` finds `ÉCOLE`), to
 * the stored spelling. An unknown name is a 400 that lists the valid names.
 */
export function resolveReasons<C extends ReasonCategory>(categories: readonly C[], names: readonly string[]): C[] {
  const byKey = new Map(categories.map((c) => [c.nameKey, c]));
  const found = new Map<string, C>();
  for (const name of names) {
    const category = byKey.get(categoryKey(name));
    if (!category) {
      // In name order (UTF-8 bytes, as SQLite's ORDER BY name): the list may come unordered.
      const valid = categories
        .map((c) => c.name)
        .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
        .join(", ");
      throw badRequest(
        categories.length
          ? `Unknown reason "${name}". Valid reasons for this project: ${valid}`
          : `Unknown reason "${name}": this project has no report categories`,
      );
    }
    found.set(category.id, category);
  }
  return [...found.values()];
}

interface CategoryInput {
  name: string;
  description?: string | null;
  severityHint: Severity;
  /** Marked graphic (a case naming it opens behind a warning screen: src/domain/categories/graphic.ts). */
  graphic?: boolean;
}

/**
 * 409 when another category of the project has the same key (the unique index would refuse the
 * write anyway; this gives the readable answer). Answers the key to store.
 */
async function assertNameFree(ctx: Pick<DomainContext, "db">, projectId: string, name: string, exceptId?: string): Promise<string> {
  const nameKey = categoryKey(name);
  const [clash] = await ctx.db
    .select({ name: reportCategories.name })
    .from(reportCategories)
    .where(
      and(
        eq(reportCategories.projectId, projectId),
        eq(reportCategories.nameKey, nameKey),
        exceptId ? ne(reportCategories.id, exceptId) : undefined,
      ),
    )
    .limit(1);
  if (clash) {
    const same = clash.name === name ? "" : ` ("${clash.name}" counts as the same name)`;
    throw conflict(`A category named "${name}" already exists in this project${same}`);
  }
  return nameKey;
}

/** A new category of a project (the caller checked that the project is theirs). */
export function createCategory(ctx: DomainContext, input: { projectId: string } & CategoryInput): Promise<CategoryView> {
  const { projectId } = input;
  return transaction(ctx, async () => {
    const [held] = await ctx.db.select({ n: count() }).from(reportCategories).where(eq(reportCategories.projectId, projectId));
    requireRoomFor(ctx, "categories", Number(held?.n ?? 0));
    const nameKey = await assertNameFree(ctx, projectId, input.name);
    const now = ctx.clock.now();
    const row: CategoryRow = {
      id: newId(),
      projectId,
      name: input.name,
      nameKey,
      description: input.description ?? null,
      severityHint: input.severityHint,
      graphic: input.graphic ? 1 : 0,
      createdAt: now,
      updatedAt: now,
    };
    await ctx.db.insert(reportCategories).values(row);
    await categoriesChanged(ctx, projectId);
    await recordAudit(ctx, { projectId, action: "CATEGORY_CREATED", entityType: "category", entityId: row.id, after: toCategoryView(row) });
    return toCategoryView(row);
  });
}

async function requireCategory(ctx: Pick<DomainContext, "db">, projectId: string, categoryId: string): Promise<CategoryRow> {
  const [row] = await ctx.db
    .select()
    .from(reportCategories)
    .where(and(eq(reportCategories.id, categoryId), eq(reportCategories.projectId, projectId)))
    .limit(1);
  if (!row) throw notFound("Category not found");
  return row;
}

/** Changes the fields given (a field left undefined keeps its value; a null description clears it). */
export function updateCategory(
  ctx: DomainContext,
  input: { projectId: string; categoryId: string } & Partial<CategoryInput>,
): Promise<CategoryView> {
  const { projectId, categoryId } = input;
  return transaction(ctx, async () => {
    const before = await requireCategory(ctx, projectId, categoryId);
    const nameKey = input.name === undefined ? before.nameKey : await assertNameFree(ctx, projectId, input.name, categoryId);
    const after: CategoryRow = {
      ...before,
      name: input.name ?? before.name,
      nameKey,
      description: input.description === undefined ? before.description : input.description,
      severityHint: input.severityHint ?? before.severityHint,
      graphic: input.graphic === undefined ? before.graphic : input.graphic ? 1 : 0,
      updatedAt: ctx.clock.now(),
    };
    await ctx.db.update(reportCategories).set(after).where(eq(reportCategories.id, categoryId));
    await categoriesChanged(ctx, projectId);
    await recordAudit(ctx, {
      projectId, action: "CATEGORY_UPDATED", entityType: "category", entityId: categoryId,
      before: toCategoryView(before), after: toCategoryView(after),
    });
    return toCategoryView(after);
  });
}

/** Deleting a category keeps existing reports as they are: they store reason names, not ids. */
export function deleteCategory(ctx: DomainContext, input: { projectId: string; categoryId: string }): Promise<void> {
  const { projectId, categoryId } = input;
  return transaction(ctx, async () => {
    const before = await requireCategory(ctx, projectId, categoryId);
    await ctx.db.delete(reportCategories).where(eq(reportCategories.id, categoryId));
    await categoriesChanged(ctx, projectId);
    await recordAudit(ctx, { projectId, action: "CATEGORY_DELETED", entityType: "category", entityId: categoryId, before: toCategoryView(before) });
  });
}
