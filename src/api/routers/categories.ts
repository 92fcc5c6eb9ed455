import { z } from "zod";
import { createCategory, deleteCategory, listCategories, toCategoryView, updateCategory } from "../../domain/categories/categories.ts";
import { projectIdSchema } from "../../domain/views/validation.ts";
import { categoryViewSchema, reportReasonSchema } from "../../domain/views/category.ts";
import { SEVERITIES } from "../../domain/views/severity.ts";
import { okSchema } from "../schemas.ts";
import { projectProcedure, router } from "../trpc.ts";

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
/** Reviewers get a warning screen before a case naming a graphic category (docs/dashboard.md, "Protecting the reviewer"). */
const graphicSchema = z.boolean().describe("Mark the category graphic: the dashboard shows a warning screen before a case whose reports name it");

const orgProject = { orgSlug: z.string().min(1).max(64), projectId: projectIdSchema };
const base = "/organizations/{orgSlug}/projects/{projectId}/categories";
const tags = ["categories"];

export const categoriesRouter = router({
  /** SDK: the reasons a client may offer its users (publishable keys allowed). */
  reportReasons: projectProcedure(z.object({ projectId: projectIdSchema }))
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
    .output(
      z.object({ reasons: z.array(reportReasonSchema) }),
    )
    .query(async ({ ctx }) => ({
      reasons: (await listCategories(ctx.domain, ctx.project.id)).map((c) => ({ id: c.id, name: c.name, description: c.description, severityHint: c.severityHint })),
    })),

  list: projectProcedure(z.object(orgProject))
    .meta({ family: "org", openapi: { method: "GET", path: base, summary: "List report categories", tags } })
    .output(z.object({ categories: z.array(categoryViewSchema) }))
    .query(async ({ ctx }) => ({ categories: (await listCategories(ctx.domain, ctx.project.id)).map(toCategoryView) })),

  create: projectProcedure(
    z.object({ ...orgProject, name: nameSchema, description: descriptionSchema.optional(), severityHint: z.enum(SEVERITIES).default("MEDIUM"), graphic: graphicSchema.default(false) }),
  )
    .meta({ role: "admin", family: "org", successStatus: 201, openapi: { method: "POST", path: base, summary: "Create a report category", tags, errorResponses: { 409: "A category with this name already exists in the project, or the project holds as many as it may (FLAGSTAFF_MAX_CATEGORIES, default 200; the message says which)" } } })
    .output(z.object({ category: categoryViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const { name, description, severityHint, graphic } = input;
      return { category: await createCategory(ctx.domain, { projectId: ctx.project.id, name, description, severityHint, graphic }) };
    }),

  update: projectProcedure(
    z.object({
      ...orgProject,
      categoryId: z.string().min(1).max(64),
      name: nameSchema.optional(),
      description: descriptionSchema.optional(),
      severityHint: z.enum(SEVERITIES).optional(),
      graphic: graphicSchema.optional(),
    }),
  )
    .meta({ role: "admin", family: "org", openapi: { method: "PATCH", path: `${base}/{categoryId}`, summary: "Change a report category", tags, errorResponses: { 409: "A category with this name already exists in the project" } } })
    .output(z.object({ category: categoryViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const { name, description, severityHint, graphic } = input;
      return { category: await updateCategory(ctx.domain, { projectId: ctx.project.id, categoryId: input.categoryId, name, description, severityHint, graphic }) };
    }),

  delete: projectProcedure(z.object({ ...orgProject, categoryId: z.string().min(1).max(64) }))
    .meta({ role: "admin", family: "org", openapi: { method: "DELETE", path: `${base}/{categoryId}`, summary: "Delete a report category", tags } })
    .output(okSchema)
    .mutation(async ({ ctx, input }) => {
      await deleteCategory(ctx.domain, { projectId: ctx.project.id, categoryId: input.categoryId });
      return { ok: true as const };
    }),
});
