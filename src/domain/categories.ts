import { and, asc, eq, ne, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { statements } from "../db/prepared.ts";
import { reportCategories } from "../db/schema.ts";
import { recordAudit, type Actor } from "./audit.ts";
import { iso, type Clock } from "./clock.ts";
import { categoryKey } from "./category-key.ts";
import { badRequest, conflict, notFound } from "./errors.ts";
import { newId } from "./ids.ts";
import type { Severity } from "./severity.ts";

export type CategoryRow = typeof reportCategories.$inferSelect;

export interface CategoryView {
  id: string;
  name: string;
  description: string | null;
  severityHint: Severity;
  createdAt: string;
  updatedAt: string;
}

/** Every new project starts with these; descriptions also steer the AI classifier. */
export const DEFAULT_CATEGORIES: { name: string; description: string; severityHint: Severity }[] = [
  { name: "spam", description: "Unsolicited advertising, repetitive or bulk content, link farming.", severityHint: "LOW" },
  { name: "harassment", description: "Insults, bullying, targeted abuse or unwanted contact aimed at a person.", severityHint: "MEDIUM" },
  { name: "hate_speech", description: "Attacks or slurs against people for a protected characteristic such as race, religion, gender or sexuality.", severityHint: "HIGH" },
  { name: "threats", description: "Threats of violence or harm against a person or group.", severityHint: "HIGH" },
  { name: "fraud_or_scam", description: "Phishing, scams, fake giveaways, impersonation for money or account theft.", severityHint: "HIGH" },
  { name: "sexual_content", description: "Sexually explicit or suggestive content where it is not allowed.", severityHint: "MEDIUM" },
  { name: "child_safety", description: "Any sexualisation or endangerment of minors.", severityHint: "CRITICAL" },
  { name: "self_harm", description: "Content that encourages or describes intent of suicide or self-harm.", severityHint: "CRITICAL" },
  { name: "violence", description: "Graphic violence, glorification of violence or violent extremism.", severityHint: "HIGH" },
  { name: "impersonation", description: "Pretending to be another person, brand or staff member.", severityHint: "MEDIUM" },
  { name: "misinformation", description: "Demonstrably false claims likely to cause harm.", severityHint: "LOW" },
  { name: "other", description: "Anything else that breaks the platform's rules.", severityHint: "LOW" },
];

export function seedDefaultCategories(db: Db, clock: Clock, projectId: string): void {
  const now = clock.now();
  db.insert(reportCategories)
    .values(DEFAULT_CATEGORIES.map((c) => ({ id: newId(), projectId, ...c, nameKey: categoryKey(c.name), createdAt: now, updatedAt: now })))
    .run();
}

export function listCategories(db: Db, projectId: string): CategoryRow[] {
  return categoryStatements(db).all.all({ projectId });
}

/** What resolving a report's reasons needs of a category. */
export type ReasonCategory = Pick<CategoryRow, "id" | "name" | "nameKey" | "severityHint">;

/**
 * listCategories with only the columns resolveReasons and report creation use, in no particular
 * order: every report runs it, and reading the descriptions or sorting would cost more than the
 * rest of the query.
 */
export function reasonCategories(db: Db, projectId: string): ReasonCategory[] {
  return categoryStatements(db).reasons.all({ projectId });
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
}

/**
 * 409 when another category of the project has the same key (the unique index would refuse the
 * write anyway; this gives the readable answer). Answers the key to store.
 */
function assertNameFree(db: Db, projectId: string, name: string, exceptId?: string): string {
  const nameKey = categoryKey(name);
  const clash = db
    .select({ name: reportCategories.name })
    .from(reportCategories)
    .where(
      and(
        eq(reportCategories.projectId, projectId),
        eq(reportCategories.nameKey, nameKey),
        exceptId ? ne(reportCategories.id, exceptId) : undefined,
      ),
    )
    .get();
  if (clash) {
    const same = clash.name === name ? "" : ` ("${clash.name}" counts as the same name)`;
    throw conflict(`A category named "${name}" already exists in this project${same}`);
  }
  return nameKey;
}

export function createCategory(db: Db, clock: Clock, actor: Actor, orgId: string, projectId: string, input: CategoryInput): CategoryView {
  const nameKey = assertNameFree(db, projectId, input.name);
  const now = clock.now();
  const row: CategoryRow = {
    id: newId(),
    projectId,
    name: input.name,
    nameKey,
    description: input.description ?? null,
    severityHint: input.severityHint,
    createdAt: now,
    updatedAt: now,
  };
  db.insert(reportCategories).values(row).run();
  recordAudit(db, clock, { orgId, projectId, actor, action: "CATEGORY_CREATED", entityType: "category", entityId: row.id, after: toCategoryView(row) });
  return toCategoryView(row);
}

function requireCategory(db: Db, projectId: string, categoryId: string): CategoryRow {
  const row = db
    .select()
    .from(reportCategories)
    .where(and(eq(reportCategories.id, categoryId), eq(reportCategories.projectId, projectId)))
    .get();
  if (!row) throw notFound("Category not found");
  return row;
}

export function updateCategory(
  db: Db,
  clock: Clock,
  actor: Actor,
  orgId: string,
  projectId: string,
  categoryId: string,
  patch: Partial<CategoryInput>,
): CategoryView {
  const before = requireCategory(db, projectId, categoryId);
  const nameKey = patch.name === undefined ? before.nameKey : assertNameFree(db, projectId, patch.name, categoryId);
  const after: CategoryRow = {
    ...before,
    name: patch.name ?? before.name,
    nameKey,
    description: patch.description === undefined ? before.description : patch.description,
    severityHint: patch.severityHint ?? before.severityHint,
    updatedAt: clock.now(),
  };
  db.update(reportCategories).set(after).where(eq(reportCategories.id, categoryId)).run();
  recordAudit(db, clock, {
    orgId, projectId, actor, action: "CATEGORY_UPDATED", entityType: "category", entityId: categoryId,
    before: toCategoryView(before), after: toCategoryView(after),
  });
  return toCategoryView(after);
}

/** Deleting a category keeps existing reports as they are: they store reason names, not ids. */
export function deleteCategory(db: Db, clock: Clock, actor: Actor, orgId: string, projectId: string, categoryId: string): void {
  const before = requireCategory(db, projectId, categoryId);
  db.delete(reportCategories).where(eq(reportCategories.id, categoryId)).run();
  recordAudit(db, clock, { orgId, projectId, actor, action: "CATEGORY_DELETED", entityType: "category", entityId: categoryId, before: toCategoryView(before) });
}
