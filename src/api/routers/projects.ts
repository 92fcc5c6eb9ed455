import { z } from "zod";
import { createProject, deleteProject, listProjects, renameProject, toProjectView } from "../../domain/projects.ts";
import { isoDateTime, okSchema } from "../schemas.ts";
import { organizationFor, router, secretProcedure } from "../trpc.ts";

const projectSchema = z
  .object({ id: z.string(), name: z.string(), createdAt: isoDateTime, updatedAt: isoDateTime })
  .meta({ id: "Project" });
const orgSlug = z.string().min(1).max(64);
const name = z.string().trim().min(1).max(100);
const tags = ["projects"];

export const projectsRouter = router({
  list: secretProcedure
    .meta({ family: "org", openapi: { method: "GET", path: "/organizations/{orgSlug}/projects", summary: "List projects", tags } })
    .input(z.object({ orgSlug }))
    .output(z.object({ projects: z.array(projectSchema) }))
    .query(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      return { projects: (await listProjects(ctx.domain)).map(toProjectView) };
    }),

  create: secretProcedure
    .meta({
      role: "admin",
      family: "org",
      successStatus: 201,
      openapi: { method: "POST", path: "/organizations/{orgSlug}/projects", summary: "Create a project (with the default report categories)", tags },
    })
    .input(z.object({ orgSlug, name }))
    .output(z.object({ project: projectSchema }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      return { project: toProjectView(await createProject(ctx.domain, { name: input.name })) };
    }),

  rename: secretProcedure
    .meta({ role: "admin", family: "org", openapi: { method: "PATCH", path: "/organizations/{orgSlug}/projects/{projectId}", summary: "Rename a project", tags } })
    .input(z.object({ orgSlug, projectId: z.string().min(1).max(64), name }))
    .output(z.object({ project: projectSchema }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      return { project: toProjectView(await renameProject(ctx.domain, { projectId: input.projectId, name: input.name })) };
    }),

  delete: secretProcedure
    .meta({
      role: "admin",
      family: "org",
      openapi: { method: "DELETE", path: "/organizations/{orgSlug}/projects/{projectId}", summary: "Delete a project and everything in it", tags },
    })
    .input(z.object({ orgSlug, projectId: z.string().min(1).max(64) }))
    .output(okSchema)
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      await deleteProject(ctx.domain, { projectId: input.projectId });
      return { ok: true as const };
    }),
});
