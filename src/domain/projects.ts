import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { statements } from "../db/prepared.ts";
import { projects } from "../db/schema.ts";
import { recordAudit, type Actor } from "./audit.ts";
import { seedDefaultCategories } from "./categories.ts";
import { iso, type Clock } from "./clock.ts";
import { notFound } from "./errors.ts";

export type Project = typeof projects.$inferSelect;

export interface ProjectView {
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

/** A new project, with the default report categories. Call inside a transaction. */
export function createProject(db: Db, clock: Clock, input: { orgId: string; name: string }): Project {
  const now = clock.now();
  const row: Project = {
    id: crypto.randomUUID(),
    orgId: input.orgId,
    name: input.name,
    aiEnabled: 0,
    aiThreshold: 70,
    scanLinks: 0,
    createdAt: now,
    updatedAt: now,
  };
  db.insert(projects).values(row).run();
  seedDefaultCategories(db, clock, row.id);
  return row;
}

/**
 * The project a caller of organization `orgId` names. A project of another organization is
 * reported exactly like a missing one, so ids of other tenants cannot be probed.
 */
export function requireProject(db: Db, orgId: string, projectId: string): Project {
  const row = projectOfOrg(db).get({ projectId, orgId });
  if (!row) throw notFound("Project not found");
  return row;
}

/** Checked on every SDK call that names a project: kept prepared (src/db/prepared.ts). */
const projectOfOrg = statements((db) =>
  db
    .select()
    .from(projects)
    .where(and(eq(projects.id, sql.placeholder("projectId")), eq(projects.orgId, sql.placeholder("orgId"))))
    .prepare(),
);

export function listProjects(db: Db, orgId: string): Project[] {
  return db.select().from(projects).where(eq(projects.orgId, orgId)).orderBy(asc(projects.createdAt)).all();
}

export const toProjectView = (p: Project): ProjectView => ({
  id: p.id,
  name: p.name,
  createdAt: iso(p.createdAt),
  updatedAt: iso(p.updatedAt),
});

export function renameProject(db: Db, clock: Clock, actor: Actor, orgId: string, projectId: string, name: string): Project {
  const before = requireProject(db, orgId, projectId);
  const after = { ...before, name, updatedAt: clock.now() };
  db.update(projects).set({ name, updatedAt: after.updatedAt }).where(eq(projects.id, projectId)).run();
  recordAudit(db, clock, {
    orgId, projectId, actor, action: "PROJECT_RENAMED", entityType: "project", entityId: projectId,
    before: { name: before.name }, after: { name },
  });
  return after;
}

/** Deletes a project and, through the foreign keys, everything in it: reports, cases, keys, identities. */
export function deleteProject(db: Db, clock: Clock, actor: Actor, orgId: string, projectId: string): void {
  const before = requireProject(db, orgId, projectId);
  db.delete(projects).where(eq(projects.id, projectId)).run();
  recordAudit(db, clock, {
    orgId, projectId, actor, action: "PROJECT_DELETED", entityType: "project", entityId: projectId, before: toProjectView(before),
  });
}
