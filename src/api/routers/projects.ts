import { z } from "zod";
import { deleteProject } from "../../domain/accounts/project-deletion.ts";
import { createProject, listProjects, renameProject, toProjectView } from "../../domain/accounts/projects.ts";
import { projectViewSchema } from "../../domain/views/project.ts";
import { okSchema } from "../schemas.ts";
import { orgProcedure, router } from "../trpc.ts";

const orgSlug = z.string().min(1).max(64);
const name = z.string().trim().min(1).max(100);
const tags = ["projects"];

export const projectsRouter = router({
  list: orgProcedure(z.object({ orgSlug }))
    .meta({ family: "org", openapi: { method: "GET", path: "/organizations/{orgSlug}/projects", summary: "List projects", tags } })
    .output(z.object({ projects: z.array(projectViewSchema) }))
    .query(async ({ ctx }) => ({ projects: (await listProjects(ctx.domain)).map(toProjectView) })),

  create: orgProcedure(z.object({ orgSlug, name }))
    .meta({
      role: "admin",
      family: "org",
      successStatus: 201,
      openapi: { method: "POST", path: "/organizations/{orgSlug}/projects", summary: "Create a project (with the default report categories)", tags },
    })
    .output(z.object({ project: projectViewSchema }))
    .mutation(async ({ ctx, input }) => ({ project: toProjectView(await createProject(ctx.domain, { name: input.name })) })),

  rename: orgProcedure(z.object({ orgSlug, projectId: z.string().min(1).max(64), name }))
    .meta({ role: "admin", family: "org", openapi: { method: "PATCH", path: "/organizations/{orgSlug}/projects/{projectId}", summary: "Rename a project", tags } })
    .output(z.object({ project: projectViewSchema }))
    .mutation(async ({ ctx, input }) => ({ project: toProjectView(await renameProject(ctx.domain, { projectId: input.projectId, name: input.name })) })),

  delete: orgProcedure(z.object({ orgSlug, projectId: z.string().min(1).max(64) }))
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "DELETE",
        path: "/organizations/{orgSlug}/projects/{projectId}",
        summary: "Delete a project and everything in it",
        description:
          "Answers once the project is deleted for every caller: from then on it is a 404 everywhere and its API keys are refused. Its reports, cases, identities and media are deleted in the background, a paced slice at a time (docs/operations.md).",
        tags,
      },
    })
    .output(okSchema)
    .mutation(async ({ ctx, input }) => {
      await deleteProject(ctx.domain, { projectId: input.projectId });
      return { ok: true as const };
    }),
});
