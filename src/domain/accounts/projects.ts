import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { statements } from "../../db/prepared.ts";
import { projects } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { seedDefaultCategories } from "../categories/categories.ts";
import { iso } from "../core/clock.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { notFound } from "../core/errors.ts";
import type { ProjectView } from "../views/project.ts";

export type { ProjectView } from "../views/project.ts";

export type Project = typeof projects.$inferSelect;

/** A new project of the context's organization, with the default report categories; audited. */
export async function createProject(ctx: DomainContext, input: { name: string }): Promise<Project> {
  const now = ctx.clock.now();
  const row: Project = {
    id: crypto.randomUUID(),
    orgId: ctx.orgId,
    name: input.name,
    aiEnabled: 0,
    aiThreshold: 70,
    aiPrecisionTarget: 0.9,
    scanLinks: 0,
    categoriesVersion: 0,
    dsaSettings: null,
    strikePolicy: null,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  await transaction(ctx, async () => {
    await ctx.db.insert(projects).values(row);
    await seedDefaultCategories(ctx, row.id);
    row.categoriesVersion++; // as seedDefaultCategories left it
    await recordAudit(ctx, { projectId: row.id, action: "PROJECT_CREATED", entityType: "project", entityId: row.id, after: toProjectView(row) });
  });
  return row;
}

/**
 * A project being deleted is gone for every caller at once, while its rows are deleted by slices
 * (project-deletion.ts): each lookup of projects adds this.
 */
export const liveProject = () => isNull(projects.deletedAt);

/**
 * The project a caller of organization `orgId` names. A project of another organization, or a
 * deleted one, is reported exactly like a missing one, so ids of other tenants cannot be probed.
 */
export async function requireProject(ctx: Pick<DomainContext, "db" | "orgId">, projectId: string): Promise<Project> {
  const [row] = await projectOfOrg(ctx.db).execute({ projectId, orgId: ctx.orgId });
  if (!row) throw notFound("Project not found");
  return row;
}

/**
 * Whether the project is live (the caller's organization's, not deleted): background work on a
 * project's things asks first, so that nothing is fetched, matched, enforced or announced for a
 * project being deleted while its rows go (project-deletion.ts).
 */
export async function isLiveProject(ctx: Pick<DomainContext, "db" | "orgId">, projectId: string): Promise<boolean> {
  return (await projectOfOrg(ctx.db).execute({ projectId, orgId: ctx.orgId })).length > 0;
}

/** Checked on every SDK call that names a project: kept prepared (src/db/prepared.ts). */
const projectOfOrg = statements((db) =>
  db
    .select()
    .from(projects)
    .where(and(eq(projects.id, sql.placeholder("projectId")), eq(projects.orgId, sql.placeholder("orgId")), liveProject()))
    .prepare(),
);

/** Every listing of reports names the organization's projects: kept prepared. */
const projectsOfOrg = statements((db) =>
  db.select().from(projects).where(and(eq(projects.orgId, sql.placeholder("orgId")), liveProject())).orderBy(asc(projects.createdAt)).prepare(),
);

export function listProjects(ctx: Pick<DomainContext, "db" | "orgId">): Promise<Project[]> {
  return projectsOfOrg(ctx.db).execute({ orgId: ctx.orgId });
}

export const toProjectView = (p: Project): ProjectView => ({
  id: p.id,
  name: p.name,
  createdAt: iso(p.createdAt),
  updatedAt: iso(p.updatedAt),
});

export function renameProject(ctx: DomainContext, input: { projectId: string; name: string }): Promise<Project> {
  return transaction(ctx, async () => {
    const before = await requireProject(ctx, input.projectId);
    const after = { ...before, name: input.name, updatedAt: ctx.clock.now() };
    await ctx.db.update(projects).set({ name: input.name, updatedAt: after.updatedAt }).where(eq(projects.id, before.id));
    await recordAudit(ctx, {
      projectId: before.id, action: "PROJECT_RENAMED", entityType: "project", entityId: before.id,
      before: { name: before.name }, after: { name: input.name },
    });
    return after;
  });
}
