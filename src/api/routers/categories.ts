import { z } from "zod";
import { createCategory, deleteCategory, listCategories, toCategoryView, updateCategory } from "../../domain/categories.ts";
import { requireProject } from "../../domain/projects.ts";
import { SEVERITIES } from "../../domain/severity.ts";
import { projectIdSchema } from "../../domain/validation.ts";
import { isoDateTime, okSchema } from "../schemas.ts";
import { authedProcedure, organizationFor, projectFor, router, secretProcedure } from "../trpc.ts";

const categorySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    severityHint: z.enum(SEVERITIES),
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
  })
  .meta({ id: "ReportCategory" });

/** Category names are what SDK clients send as reasons: short, no spaces at the ends. */
const nameSchema = z
  .string()
  .trim()
  .min(1)
  .max(100)
  // Letters with their combining marks (\p{M}: Devanagari and Thai vowel signs, accents typed
  // decomposed), digits, spaces, '_', '-' and '.'; categoryKey compares names after NFKC.
  .regex(/^[\p{L}\p{M}\p{N}_\- .]+$/u, "may contain letters, digits, spaces, '_', '-' and '.'");
const descriptionSchema = z.string().max(1000).nullable();

const orgProject = { orgSlug: z.string().min(1).max(64), projectId: projectIdSchema };
const base = "/organizations/{orgSlug}/projects/{projectId}/categories";
const tags = ["categories"];

export const categoriesRouter = router({
  /** SDK: the reasons a client may offer its users (publishable keys allowed). */
  reportReasons: authedProcedure
    .meta({
      family: "sdk",
      publishable: true,
      openapi: {
        method: "GET",
        path: "/projects/{projectId}/report-reasons",
        summary: "List report reasons",
        description: "The project's report categories, the names to send as a report's `reason`. Allowed with a publishable key of the project.",
        tags: ["reports"],
        errorResponses: { 401: "Invalid or missing API key", 403: "Key of another project", 404: "Project not found" },
      },
    })
    .input(z.object({ projectId: projectIdSchema }))
    .output(
      z.object({
        reasons: z.array(
          z.object({ id: z.string(), name: z.string(), description: z.string().nullable(), severityHint: z.enum(SEVERITIES) }),
        ),
      }),
    )
    .query(async ({ ctx, input }) => {
      const project = await projectFor(ctx, input.projectId);
      return {
        reasons: (await listCategories(ctx.domain, project.id)).map((c) => ({ id: c.id, name: c.name, description: c.description, severityHint: c.severityHint })),
      };
    }),

  list: secretProcedure
    .meta({ family: "org", openapi: { method: "GET", path: base, summary: "List report categories", tags } })
    .input(z.object(orgProject))
    .output(z.object({ categories: z.array(categorySchema) }))
    .query(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const project = await requireProject(ctx.domain, input.projectId);
      return { categories: (await listCategories(ctx.domain, project.id)).map(toCategoryView) };
    }),

  create: secretProcedure
    .meta({ role: "admin", family: "org", successStatus: 201, openapi: { method: "POST", path: base, summary: "Create a report category", tags, errorResponses: { 409: "A category with this name already exists in the project" } } })
    .input(z.object({ ...orgProject, name: nameSchema, description: descriptionSchema.optional(), severityHint: z.enum(SEVERITIES).default("MEDIUM") }))
    .output(z.object({ category: categorySchema }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const project = await requireProject(ctx.domain, input.projectId);
      const { name, description, severityHint } = input;
      return { category: await createCategory(ctx.domain, { projectId: project.id, name, description, severityHint }) };
    }),

  update: secretProcedure
    .meta({ role: "admin", family: "org", openapi: { method: "PATCH", path: `${base}/{categoryId}`, summary: "Change a report category", tags, errorResponses: { 409: "A category with this name already exists in the project" } } })
    .input(
      z.object({
        ...orgProject,
        categoryId: z.string().min(1).max(64),
        name: nameSchema.optional(),
        description: descriptionSchema.optional(),
        severityHint: z.enum(SEVERITIES).optional(),
      }),
    )
    .output(z.object({ category: categorySchema }))
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const project = await requireProject(ctx.domain, input.projectId);
      const { name, description, severityHint } = input;
      return { category: await updateCategory(ctx.domain, { projectId: project.id, categoryId: input.categoryId, name, description, severityHint }) };
    }),

  delete: secretProcedure
    .meta({ role: "admin", family: "org", openapi: { method: "DELETE", path: `${base}/{categoryId}`, summary: "Delete a report category", tags } })
    .input(z.object({ ...orgProject, categoryId: z.string().min(1).max(64) }))
    .output(okSchema)
    .mutation(async ({ ctx, input }) => {
      await organizationFor(ctx, input.orgSlug);
      const project = await requireProject(ctx.domain, input.projectId);
      await deleteCategory(ctx.domain, { projectId: project.id, categoryId: input.categoryId });
      return { ok: true as const };
    }),
});
